"""Benchmark: the memory page (`memdir ui`, issue 13) at 5,000 notes, through the real server.

Run as ``python bench/ui.py [--size 5000] [--views 50]``. A temporary project and
MEMDIR_HOME (removed afterwards) get `--size` notes written as files by bench/tidy.py's
builder (made-up words, ~400-character bodies, a few tags, links, long notes); the search
index is built once beforehand, as on a machine where memdir has run before. Then
`memdir ui --json --no-open --port 0` runs as a real process and, over loopback with one
keep-alive connection as a browser would use:

- the list page's first response: `GET /` and the first `GET /api/notes` (every note,
  newest first) — target < 200 ms each;
- search as you type: every prefix of a few queries, typed letter by letter, one
  `GET /api/search` per letter — target p95 < 100 ms;
- a note view (`GET /api/notes/ID`: the note, its rendered body, links and backlinks)
  for `--views` notes — target < 100 ms (p95);
- the change poll (`GET /api/changes`), which the page makes every 2 s.

``[embed] provider = "none"``: search is lexical, no model is involved.
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memdir import Memory
from tidy import build  # bench/tidy.py: the same notes as the tidy-up benchmark

LIST_TARGET_MS = 200.0
SEARCH_TARGET_MS = 100.0
VIEW_TARGET_MS = 100.0


def _ms(seconds: float) -> float:
    return seconds * 1000


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _timed(client: httpx.Client, path: str) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    answer = client.get(path)
    elapsed = time.perf_counter() - started
    if answer.status_code != 200:
        raise SystemExit(f"GET {path} answered {answer.status_code}: {answer.text[:300]}")
    return _ms(elapsed), answer


def _verdict(value: float, target: float) -> str:
    return f"target < {target:.0f} ms: {'met' if value < target else 'NOT MET'}"


def _queries(memory: Memory, rng: random.Random) -> list[str]:
    """A few queries a person might type: two words of real summaries, and one word."""
    notes = memory.notes.list()
    picked = rng.sample(notes, 3)
    words = [[w for w in n.summary.lower().split() if len(w) > 3] for n in picked]
    queries = [" ".join(w[:2]) for w in words if len(w) >= 2]
    return [*queries, "timeout seconds"]


def run(size: int, views: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="memdir-bench-ui-"))
    proc: subprocess.Popen[str] | None = None
    try:
        project, home = root / "project", root / "home"
        home.mkdir()
        (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
        build(project, size)
        rng = random.Random(13)
        started = time.perf_counter()
        with Memory.open(project, home=home) as memory:
            memory.index.reindex()
            queries = _queries(memory, rng)
            ids = [n.id for n in rng.sample(memory.notes.list(), views)]
        indexed = time.perf_counter() - started
        env = {**os.environ, "MEMDIR_HOME": str(home)}
        command = [sys.executable, "-c", "from memdir.cli.main import main; main()"]
        started = time.perf_counter()
        proc = subprocess.Popen(
            [*command, "--project", str(project), "ui", "--json", "--no-open", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"memdir ui did not start: {proc.communicate()[1]}")
        ready = time.perf_counter() - started
        base, token = json.loads(line)["url"].split("/#token=")
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            front_ms, _ = _timed(client, "/")
            list_ms, listed = _timed(client, "/api/notes")
            count = len(listed.json()["notes"])
            warm_list = [_timed(client, "/api/notes")[0] for _ in range(5)]
            first_search_ms, _ = _timed(client, "/api/search?q=warm")
            typed: list[float] = []
            for query in queries:
                for end in range(1, len(query) + 1):
                    prefix = query[:end]
                    if prefix.strip():
                        typed.append(_timed(client, f"/api/search?q={prefix}&limit=20")[0])
            view_ms = [_timed(client, f"/api/notes/{note_id}")[0] for note_id in ids]
            poll_ms = [_timed(client, "/api/changes")[0] for _ in range(20)]
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)

        print(f"\n{count:,} notes through `memdir ui` on loopback (search: lexical)")
        print(f"  index built beforehand:                 {indexed:.1f} s")
        print(f"  memdir ui start to its URL line:        {_ms(ready):.0f} ms")
        print(
            f"  GET / (the page), first:                {front_ms:.1f} ms "
            f"({_verdict(front_ms, LIST_TARGET_MS)})"
        )
        print(
            f"  GET /api/notes, first:                  {list_ms:.1f} ms "
            f"({_verdict(list_ms, LIST_TARGET_MS)})"
        )
        print(f"  GET /api/notes, again (median of 5):    {statistics.median(warm_list):.1f} ms")
        print(f"  first search after start:               {first_search_ms:.1f} ms")
        typed_p95 = _p95(typed)
        print(
            f"  search as you type: {len(typed)} requests over {len(queries)} queries {queries!r}"
        )
        print(
            f"    median {statistics.median(typed):.1f} ms, p95 {typed_p95:.1f} ms, "
            f"max {max(typed):.1f} ms ({_verdict(typed_p95, SEARCH_TARGET_MS)})"
        )
        view_p95 = _p95(view_ms)
        print(
            f"  note view, {views} notes: median {statistics.median(view_ms):.1f} ms, "
            f"p95 {view_p95:.1f} ms, max {max(view_ms):.1f} ms "
            f"({_verdict(view_p95, VIEW_TARGET_MS)})"
        )
        print(f"  change poll (GET /api/changes): median {statistics.median(poll_ms):.1f} ms")
        print(f"  memdir ui exit status after SIGTERM: {code}")
        met = (
            front_ms < LIST_TARGET_MS
            and list_ms < LIST_TARGET_MS
            and typed_p95 < SEARCH_TARGET_MS
            and view_p95 < VIEW_TARGET_MS
        )
        print(f"  all targets {'met' if met else 'NOT met'}")
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=5000, help="notes in the project scope")
    parser.add_argument("--views", type=int, default=50, help="note views to time")
    args = parser.parse_args()
    run(args.size, args.views)


if __name__ == "__main__":
    main()
