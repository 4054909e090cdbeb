"""Benchmark: start-up time of `memdir` commands, each run as a fresh process.

Run as ``python bench/startup.py [--runs 11] [--notes 1000]``. Every figure is the median
wall time of `--runs` fresh processes (after one untimed warm-up run, so byte-code caches
and the page cache are warm), printed beside a bare ``python -c pass`` measured in the
same run, so a slow machine shows as a slow baseline rather than a slow memdir:

- ``memdir --help``
- ``memdir list``, ``read``, ``search`` (lexical) and ``remember`` in a project of ten
  notes (start-up, not table rendering)
- ``memdir recall MESSAGE`` in a project of one note and of `--notes` notes
- ``memdir mcp serve``: from spawn until the JSON-RPC ``initialize`` response arrives
  over stdio (answered before the MCP SDK loads), and until the first ``tools/list``
  is answered (the whole server loaded)

Everything runs in a temporary project and MEMDIR_HOME that are removed afterwards.
No assertions: the figures are printed beside their targets for people to read.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from memdir.core import Note, render_note

_VOCABULARY = (
    "pricing layout cards borders fills grid column release deploy database backup cache "
    "token schema migration review feedback design colour spacing typography latency queue "
    "worker index search recall summary invoice customer account report chart export import"
)
_WORDS = _VOCABULARY.split()

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench-startup", "version": "0"},
    },
}


def _write_notes(directory: Path, count: int, rng: random.Random) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    base = 1_780_000_000_000
    past = time.time() - 86_400
    for i in range(count):
        words = rng.sample(_WORDS, 12)
        note = Note(
            id=f"n{i}",
            summary=f"{' '.join(words[:4]).capitalize()} ({i})",
            body=" ".join(words[4:]) + ".",
            tags=tuple(words[:2]),
            created_at=base + i,
            updated_at=base + i * 1000,
        )
        path = directory / f"{note.id}.md"
        path.write_bytes(render_note(note))
        # An existing store: files old enough for their timestamps to be trusted.
        os.utime(path, (past, past))


def _memdir() -> list[str]:
    script = Path(sys.executable).parent / "memdir"
    return [str(script)] if script.exists() else [sys.executable, "-m", "memdir"]


def _run(argv: Sequence[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000


def _mcp(argv: Sequence[str], env: dict[str, str], *, tools: bool) -> float:
    """Spawn → `initialize` answered (or, with `tools`, → the first `tools/list` answered:
    the whole server loaded)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(_INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if tools and b'"result"' in line:
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
        proc.stdin.flush()
        line = proc.stdout.readline()
    elapsed = (time.perf_counter() - start) * 1000
    proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if b'"result"' not in line:
        raise SystemExit(f"mcp serve did not answer: {line[:200]!r}")
    return elapsed


def _median(measure: Callable[[], float], runs: int) -> tuple[float, float, float]:
    measure()  # warm-up: byte-code caches, page cache, the index built on first use
    samples = [measure() for _ in range(runs)]
    return statistics.median(samples), min(samples), max(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="timed processes per figure")
    parser.add_argument("--notes", type=int, default=1000, help="notes in the recall project")
    args = parser.parse_args()

    rng = random.Random(3)
    base = Path(tempfile.mkdtemp(prefix="memdir-bench-startup-"))
    try:
        small, large, home = base / "small", base / "large", base / "home"
        one = base / "one"
        _write_notes(one / "MEMORY", 1, rng)
        _write_notes(small / "MEMORY", 10, rng)
        _write_notes(large / "MEMORY", args.notes, rng)
        home.mkdir()
        env = {**os.environ, "MEMDIR_HOME": str(home), "COLUMNS": "120"}
        # As on a user's machine, byte code is cached: without it every start compiles
        # memdir's modules again (~60 ms here), which says nothing about memdir.
        if env.pop("PYTHONDONTWRITEBYTECODE", None):
            print("(PYTHONDONTWRITEBYTECODE is set here: unset for the timed processes)")
        memdir = _memdir()
        # As in use: some search (or the MCP server) has built the lexical index, which a
        # fresh `recall` reads recall's terms from instead of every note file.
        _run([*memdir, "--project", str(large), "search", "--method", "lexical", "x"], env)
        time.sleep(2.5)  # past the index's racy window, as a store at rest
        _run([*memdir, "--project", str(large), "search", "--method", "lexical", "x"], env)
        message = "how do we separate the pricing cards in the layout grid?"
        counter = iter(range(1_000_000))
        in_small = [*memdir, "--project", str(small)]
        in_one = [*memdir, "--project", str(one)]
        rows: list[tuple[str, Callable[[], float], float | None]] = [
            ("python -c pass", lambda: _run([sys.executable, "-c", "pass"], env), None),
            ("memdir --help", lambda: _run([*memdir, "--help"], env), 250),
            ("memdir list (10 notes)", lambda: _run([*in_small, "list"], env), 150),
            ("memdir read ID", lambda: _run([*in_small, "read", "n3"], env), 150),
            (
                "memdir search --method lexical",
                lambda: _run([*in_small, "search", "--method", "lexical", "pricing"], env),
                None,
            ),
            (
                "memdir remember",
                lambda: _run([*in_one, "remember", f"Bench fact {next(counter)}"], env),
                None,
            ),
            (
                "memdir recall MESSAGE (1 note)",
                lambda: _run([*in_one, "recall", message], env),
                250,
            ),
            (
                f"memdir recall MESSAGE ({args.notes:,} notes)",
                lambda: _run([*memdir, "--project", str(large), "recall", message], env),
                350,
            ),
            (
                "memdir mcp serve → initialize",
                lambda: _mcp([*in_small, "mcp", "serve"], env, tools=False),
                300,
            ),
            (
                "memdir mcp serve → tools/list",
                lambda: _mcp([*in_small, "mcp", "serve"], env, tools=True),
                None,
            ),
        ]
        print(f"{args.runs} fresh processes per row (median; min–max)")
        print(f"{'command':<36} {'median':>9} {'min':>7} {'max':>7} {'target':>8}")
        for label, measure, target in rows:
            median, low, high = _median(measure, args.runs)
            goal = f"≤ {target} ms" if target is not None else ""
            verdict = "" if target is None else ("  ok" if median <= target else "  over")
            print(f"{label:<36} {median:6.0f} ms {low:7.0f} {high:7.0f} {goal:>8}{verdict}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
