"""Benchmark: what an agent client waits for on every message, `memdir hook`, as fresh processes.

Run as ``python bench/hooks.py [--notes 5000] [--runs 30] [--small]``. Builds a project of
`--notes` notes (bench/recall.py's generator), reindexes it once, then times fresh
processes (median, p95 and max of `--runs`, after one untimed warm-up), each row beside a
bare ``python -c pass`` measured in the same run:

- ``memdir hook --client claude-code UserPromptSubmit`` answered by the warm server (the
  normal path: the first hook of a home starts it; the bench waits until its socket answers);
- the same with ``MEMDIR_HOOK_WARM=0`` (answered in-process: a cold Memory every time);
- ``SessionStart`` through the warm server (the prompt index);
- the first call of a home with no warm server running (it answers in-process and starts
  the server; the bench stops that server before each run).

Prompts vary (bench/recall.py's messages and some small talk; about half recall a note),
each in a session of its own. Also printed: how many prompts recalled something and the
warm server's resident memory (VmRSS). The bar: p95 ≤ 150 ms on the warm path at 5,000
notes. `--small` repeats everything for a 500-note project, quickly (fewer runs).

Embeddings play no part in a hook (recall is lexical), so the user config says
``embed.provider = "none"`` to keep the reindex short. Everything runs in temporary folders
that are removed afterwards, and the warm server this bench started is stopped at the end.
No assertions: the figures are printed for people to read.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from recall import messages, write_notes

#: The bar for the warm path (p95 at 5,000 notes).
WARM_P95_MS = 150.0
_SMALL_TALK = (
    "Thanks, looks good.",
    "Please refactor this loop.",
    "Write a short poem about the sea.",
    "ok, go on",
    "Can you run the tests again?",
)


def _memdir() -> list[str]:
    script = Path(sys.executable).parent / "memdir"
    return [str(script)] if script.exists() else [sys.executable, "-m", "memdir"]


def _p95(samples: Sequence[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, int(len(ordered) * 0.95 + 0.5) - 1)]


@dataclass
class Bench:
    """One project, its memdir home, and how to run a hook against it."""

    base: Path
    project: Path
    home: Path
    env: dict[str, str]
    memdir: list[str]
    prompts: list[str]
    _next: int = 0

    def payload(self, event: str) -> bytes:
        self._next += 1
        body: dict[str, object] = {
            "session_id": f"bench-{self._next}",
            "transcript_path": "",
            "cwd": str(self.project),
            "hook_event_name": event,
        }
        if event == "SessionStart":
            body["source"] = "startup"
        else:
            body["prompt"] = self.prompts[self._next % len(self.prompts)]
        return json.dumps(body).encode()

    def hook(self, event: str, *, warm: bool = True) -> tuple[float, bytes]:
        """One `memdir hook` process: (milliseconds, its output)."""
        env = self.env if warm else {**self.env, "MEMDIR_HOOK_WARM": "0"}
        data = self.payload(event)
        start = time.perf_counter()
        done = subprocess.run(
            [*self.memdir, "hook", "--client", "claude-code", event],
            input=data,
            env=env,
            cwd=self.project,
            capture_output=True,
            check=True,
        )
        return (time.perf_counter() - start) * 1000, done.stdout

    # -- the warm server ---------------------------------------------------------------------

    def servers(self) -> list[int]:
        """The warm servers of this home (by their command line)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                words = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"memdir.hooks.warm" in words and str(self.home).encode() in words:
                found.append(int(entry.name))
        return found

    def answers(self) -> bool:
        """Whether the warm server's socket answers a hook."""
        from memdir.hooks.warm import ask, socket_for

        path = socket_for(self.home, self.env)
        return (
            ask(path, "claude-code", "SessionStart", self.payload("SessionStart"), {}, 5.0)
            is not None
        )

    def start_server(self) -> int:
        """Make sure the warm server runs and answers; its pid."""
        deadline = time.monotonic() + 60
        self.hook("SessionStart")
        while not (self.servers() and self.answers()):
            if time.monotonic() > deadline:
                raise SystemExit("the warm hook server did not start within 60 s")
            time.sleep(0.05)
        return self.servers()[0]

    def stop_servers(self) -> None:
        """Stop every warm server of this home and wait until they are gone."""
        for pid in self.servers():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while self.servers() and time.monotonic() < deadline:
            time.sleep(0.02)

    def rss_kib(self) -> int | None:
        for pid in self.servers():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
            except OSError:
                continue
        return None


def _build(base: Path, notes: int, seed: int) -> Bench:
    rng = random.Random(seed)
    project, home, user_home, runtime = (base / n for n in ("project", "mh", "home", "run"))
    write_notes(project / "MEMORY", notes, rng)
    (project / ".git").mkdir()
    home.mkdir()
    user_home.mkdir()
    runtime.mkdir(mode=0o700)
    runtime.chmod(0o700)
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMDIR_", "CLAUDE_", "GEMINI_", "CURSOR_"))
    }
    env.update(
        HOME=str(user_home),
        MEMDIR_HOME=str(home),
        XDG_RUNTIME_DIR=str(runtime),
        MEMDIR_HOOK_IDLE="900",
    )
    # Three topical messages (about two in three recall a note) to one of small talk.
    topical = messages(90, rng)
    prompts = []
    for i, text in enumerate(topical):
        prompts.append(text)
        if i % 3 == 2:
            prompts.append(_SMALL_TALK[i % len(_SMALL_TALK)])
    bench = Bench(base, project, home, env, _memdir(), prompts)
    memdir = bench.memdir
    subprocess.run(
        [*memdir, "--project", str(project), "reindex"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    time.sleep(2.5)  # past the index's racy window, as a store at rest
    subprocess.run(
        [*memdir, "--project", str(project), "search", "--method", "lexical", "x"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return bench


def _stats(measure: Callable[[], float], runs: int) -> tuple[float, float, float]:
    measure()  # warm-up: byte-code caches, page cache
    samples = [measure() for _ in range(runs)]
    return statistics.median(samples), _p95(samples), max(samples)


def _bare(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return (time.perf_counter() - start) * 1000


def _suite(notes: int, runs: int) -> None:
    base = Path(tempfile.mkdtemp(prefix="memdir-bench-hooks-"))
    bench: Bench | None = None
    try:
        started = time.perf_counter()
        bench = _build(base, notes, seed=7)
        built = time.perf_counter() - started
        b = bench
        recalled: list[bool] = []

        def warm_prompt() -> float:
            ms, out = b.hook("UserPromptSubmit")
            recalled.append(b"<recalled-memory>" in out)
            return ms

        def cold_first() -> float:
            b.stop_servers()
            ms, _ = b.hook("UserPromptSubmit")
            return ms

        print(f"\n{notes:,} notes (project built and reindexed in {built:.1f} s), {runs} runs")
        print(f"{'hook process':<46} {'p50':>7} {'p95':>7} {'max':>7}   target")
        rows: list[tuple[str, Callable[[], float], Callable[[], object] | None, str]] = [
            ("python -c pass", lambda: _bare(b.env), None, ""),
            ("UserPromptSubmit, warm server", warm_prompt, b.start_server, "p95 ≤ 150 ms"),
            (
                "UserPromptSubmit, MEMDIR_HOOK_WARM=0",
                lambda: b.hook("UserPromptSubmit", warm=False)[0],
                None,
                "",
            ),
            ("SessionStart, warm server", lambda: b.hook("SessionStart")[0], b.start_server, ""),
            ("first call, no server (cold start)", cold_first, None, ""),
        ]
        warm_p95: float | None = None
        for label, measure, before, target in rows:
            if before is not None:
                before()
            p50, p95, high = _stats(measure, runs)
            verdict = ""
            if target:
                warm_p95 = p95
                verdict = "  ok" if p95 <= WARM_P95_MS else "  over"
            print(f"{label:<46} {p50:6.0f}  {p95:6.0f}  {high:6.0f}   {target}{verdict}")
        b.start_server()
        rss = b.rss_kib()
        hits = sum(recalled)
        print(f"prompts that recalled a note (warm rows): {hits}/{len(recalled)}")
        print(
            "warm server resident memory (VmRSS): "
            + (f"{rss / 1024:.1f} MiB" if rss is not None else "unknown")
        )
        if warm_p95 is not None:
            print(f"warm path p95 {warm_p95:.0f} ms against the bar of {WARM_P95_MS:.0f} ms")
    finally:
        if bench is not None:
            bench.stop_servers()
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=5000, help="notes in the project")
    parser.add_argument("--runs", type=int, default=30, help="timed processes per row")
    parser.add_argument(
        "--small", action="store_true", help="also measure a 500-note project (10 runs a row)"
    )
    args = parser.parse_args()
    _suite(args.notes, args.runs)
    if args.small:
        _suite(500, min(args.runs, 10))


if __name__ == "__main__":
    main()
