"""Benchmark: `Memory.remember` of a new note and `Memory.read` of one note in a 1,000-note store.

Run as ``python bench/store.py [--notes N] [--iterations N]``; prints median and p95 in
milliseconds. Everything happens in a temporary project and MEMDIR_HOME that are removed
afterwards. No assertions: the figures are for people and for spotting regressions.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memdir import Memory

_VOCABULARY = (
    "pricing layout cards borders fills grid column release deploy database backup cache "
    "token schema migration review feedback design colour spacing typography latency queue "
    "worker index search recall summary invoice customer account report chart export import"
)
_WORDS = _VOCABULARY.split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _measure(label: str, action: Callable[[int], object], iterations: int) -> None:
    samples = []
    for i in range(iterations):
        start = time.perf_counter()
        action(i)
        samples.append((time.perf_counter() - start) * 1000)
    median, p95 = statistics.median(samples), _percentile(samples, 0.95)
    print(f"{label:<34} median {median:8.2f} ms   p95 {p95:8.2f} ms   ({iterations} runs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=1000, help="notes in the store first")
    parser.add_argument("--iterations", type=int, default=200, help="timed calls per figure")
    args = parser.parse_args()

    rng = random.Random(1)
    base = Path(tempfile.mkdtemp(prefix="memdir-bench-"))
    try:
        (base / "project").mkdir()
        memory = Memory.open(base / "project", home=base / "home")
        fill_start = time.perf_counter()
        ids = []
        for i in range(args.notes):
            summary = f"{_text(rng, 6)} {i}"
            ids.append(memory.remember(summary, _text(rng, 80), tags=_text(rng, 2)).note.id)
        fill = time.perf_counter() - fill_start
        print(f"store pre-filled with {args.notes} notes in {fill:.1f} s")

        def remember_new(i: int) -> object:
            return memory.remember(f"bench note {i} {_text(rng, 5)}", _text(rng, 80))

        def read_one(i: int) -> object:
            return memory.read(ids[rng.randrange(len(ids))])

        _measure("remember (new note)", remember_new, args.iterations)
        _measure("read (one note)", read_one, args.iterations)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
