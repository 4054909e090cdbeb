"""Benchmark: what the automatic consolidation pass (§6, issue 11) does in a running MCP server.

Run as ``python bench/auto_merge.py [--size 500] [--minutes 5] [--max-merges 20]
[--embed none|local]``. A temporary project and MEMDIR_HOME (removed afterwards) get the
notes of bench/tidy.py's generator — random notes with planted duplicate groups (same
topic), contradicting pairs (which are same-topic too and must be left alone), broken
links, missing files, long and unused notes — and a user config switching the pass on
(``memory.consolidate.auto = true``, ``maxMergesPerPass`` from ``--max-merges``). Then a
real ``memdir mcp serve`` runs over stdio for ``--minutes`` while a client calls
``memory_search`` every few seconds, as an agent would.

Printed: when the pass ran and how long it took (from the audit log's merge entries),
how many planted duplicate groups it merged whole, partly or not at all, whether it
touched a contradicting pair (it must not) or any other note (a false merge), the notes
left, the backups it made (reason ``auto-merge``), and the search latency the client saw
before, during and after the pass. Loopback only; no model is called.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp.client.stdio import stdio_client

from mcp import ClientSession, StdioServerParameters
from tidy import build  # bench/tidy.py: the same generated store

SEARCH_EVERY_S = 3.0


def _memdir() -> list[str]:
    script = Path(sys.executable).with_name("memdir")
    return [str(script)] if script.exists() else [sys.executable, "-m", "memdir"]


def _merges(home: Path) -> list[dict[str, object]]:
    """The audit log's merge entries so far."""
    path = home / "audit" / "audit.jsonl"
    out: list[dict[str, object]] = []
    if not path.exists():
        return out
    for line in path.read_text("utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("action") == "merge":
            out.append(entry)
    return out


async def _session(project: Path, home: Path, minutes: float) -> list[tuple[float, float]]:
    """Run the server for `minutes`; return (seconds since start, search latency ms)."""
    cmd = _memdir()
    params = StdioServerParameters(
        command=cmd[0],
        args=[*cmd[1:], "--project", str(project), "--home", str(home), "mcp", "serve"],
        env={"MEMDIR_HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    latencies: list[tuple[float, float]] = []
    start = time.monotonic()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        while (elapsed := time.monotonic() - start) < minutes * 60:
            t0 = time.perf_counter()
            await session.call_tool("memory_search", {"query": "timeout seconds", "limit": 5})
            latencies.append((elapsed, (time.perf_counter() - t0) * 1000))
            await asyncio.sleep(SEARCH_EVERY_S)
    return latencies


def _p(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(size: int, minutes: float, max_merges: int, embed: str) -> None:
    root = Path(tempfile.mkdtemp(prefix="memdir-bench-auto-"))
    try:
        project, home = root / "project", root / "home"
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        planted, labelled = build(project, size)
        home.mkdir()
        (home / "config.toml").write_text(
            f'[embed]\nprovider = "{embed}"\n\n[memory.consolidate]\nauto = true\n'
            f"maxMergesPerPass = {max_merges}\n"
        )
        before = {p.stem for p in (project / "MEMORY").glob("*.md")}
        started = time.time() * 1000
        latencies = asyncio.run(_session(project, home, minutes))
        after = {p.stem for p in (project / "MEMORY").glob("*.md")}
        merges = _merges(home)
        _report(
            planted, labelled, before, after, merges, latencies, started, size, minutes, max_merges
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _report(
    planted: dict[str, list[list[str]]],
    labelled: list[tuple[str, bool, list[str]]],
    before: set[str],
    after: set[str],
    merges: list[dict[str, object]],
    latencies: list[tuple[float, float]],
    started: float,
    size: int,
    minutes: float,
    max_merges: int,
) -> None:
    kept = [e for e in merges if "count" in e["fields"]]  # type: ignore[operator]
    gone = before - after
    contradicting = [set(p) for p in planted["contradiction"]]
    duplicates = [set(g) for g in planted["same_topic"] if set(g) not in contradicting]
    whole = sum(1 for g in duplicates if len(g & gone) == len(g) - 1)
    partly = sum(1 for g in duplicates if 0 < len(g & gone) < len(g) - 1)
    untouched = len(duplicates) - whole - partly
    touched_clash = sum(1 for p in contradicting if p & gone)
    # The labelled pairs of tests/tidy/pairs.py share a topic by construction: merging a
    # compatible one is what the pass is for; merging a contradicting one means the
    # detector missed it (the pass leaves pairs it finds contradicting).
    compatible = [set(ids) for _, clash, ids in labelled if not clash]
    clashing = [set(ids) for _, clash, ids in labelled if clash]
    merged_ok = sum(1 for p in compatible if p & gone)
    merged_clash = sum(1 for p in clashing if p & gone)
    known = set().union(*duplicates, *compatible, *clashing, *contradicting)
    false = sorted(gone - known)
    stamps = sorted(int(e["ts"]) for e in merges)  # type: ignore[call-overload]
    print(f"store: {size} notes; pass on, maxMergesPerPass {max_merges}; ran {minutes:g} minutes")
    if stamps:
        print(
            f"merges: {len(kept)} (first {(stamps[0] - started) / 1000:.1f} s after start, "
            f"last {(stamps[-1] - started) / 1000:.1f} s; {len(gone)} notes deleted)"
        )
    else:
        print("merges: none")
    print(
        f"planted duplicate groups: {len(duplicates)} — merged whole {whole}, partly {partly}, "
        f"untouched {untouched}"
    )
    print(f"contradicting pairs (must be left): {len(contradicting)} — touched {touched_clash}")
    print(
        f"labelled same-topic pairs (tests/tidy/pairs.py): compatible {len(compatible)} — "
        f"merged {merged_ok}; contradicting {len(clashing)} — merged {merged_clash} "
        "(a contradiction the detector missed)"
    )
    print(f"false merges (random notes): {len(false)} {false[:5]}")
    print(f"notes: {len(before)} before, {len(after)} after")
    if stamps:
        first, last = (stamps[0] - started) / 1000, (stamps[-1] - started) / 1000
        spans = {
            "before the pass": [ms for t, ms in latencies if t < first - 1],
            "during the pass": [ms for t, ms in latencies if first - 1 <= t <= last + 1],
            "after the pass": [ms for t, ms in latencies if t > last + 1],
        }
    else:
        spans = {"whole run": [ms for _, ms in latencies]}
    for name, values in spans.items():
        if values:
            print(
                f"memory_search {name}: n={len(values)} median {statistics.median(values):.0f} ms, "
                f"p95 {_p(values, 0.95):.0f} ms, max {max(values):.0f} ms"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=500)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--max-merges", type=int, default=20)
    parser.add_argument("--embed", choices=["none", "local"], default="none")
    args = parser.parse_args()
    run(args.size, args.minutes, args.max_merges, args.embed)


if __name__ == "__main__":
    main()
