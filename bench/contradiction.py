"""Benchmark the model-free contradiction detector: precision and recall, and pairs per second.

Figures on the labelled pairs of tests/tidy/pairs.py: per batch (tuning; held and late, both
held aside and never tuned on), per language and per kind, then throughput over all pairs.

Run from the repository root:  PYTHONPATH=src python bench/contradiction.py
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.tidy.pairs import ALL, LANGUAGES, Pair

from memdir.tidy import contradiction
from memdir.tidy.contradiction import find_contradiction


def _text(note: tuple[str, str]) -> str:
    return f"{note[0]}\n{note[1]}"


def _counts(pairs: Iterable[Pair]) -> tuple[int, int, int, int]:
    """(true positives, false positives, false negatives, true negatives)."""
    tp = fp = fn = tn = 0
    for pair in pairs:
        found = find_contradiction(_text(pair.a), _text(pair.b)) is not None
        if found and pair.contradicts:
            tp += 1
        elif found:
            fp += 1
        elif pair.contradicts:
            fn += 1
        else:
            tn += 1
    return tp, fp, fn, tn


def _line(label: str, pairs: list[Pair]) -> str:
    tp, fp, fn, tn = _counts(pairs)
    precision = f"{tp / (tp + fp):.2f}" if tp + fp else "  – "
    recall = f"{tp / (tp + fn):.2f}" if tp + fn else "  – "
    return (
        f"  {label:<22} pairs {len(pairs):>3}  precision {precision}  recall {recall}"
        f"  (tp {tp}, fp {fp}, fn {fn}, tn {tn})"
    )


def _misses(pairs: list[Pair]) -> list[str]:
    out = []
    for pair in pairs:
        found = find_contradiction(_text(pair.a), _text(pair.b))
        if (found is not None) != pair.contradicts:
            what = "false positive" if found else "missed"
            detail = f": {found.reason}" if found else ""
            out.append(f"    {what} {pair.id} ({pair.kind}){detail}")
    return out


def main() -> None:
    batches = {
        "tuning": [p for p in ALL if not p.held],
        "held aside (all)": [p for p in ALL if p.held],
        "held": [p for p in ALL if p.batch == "held"],
        "late": [p for p in ALL if p.batch == "late"],
    }
    for name, pairs in batches.items():
        print(f"{name}:")
        print(_line("all", pairs))
        for lang in LANGUAGES:
            print(_line(lang, [p for p in pairs if p.lang == lang]))
        if name in ("tuning", "held aside (all)"):
            for kind in sorted({p.kind for p in pairs}):
                print(_line(f"kind {kind}", [p for p in pairs if p.kind == kind]))
            print("\n".join(_misses(pairs)))
        print()

    rounds = 20
    texts = [(_text(p.a), _text(p.b)) for p in ALL]
    contradiction.read_statement.cache_clear()
    start = time.perf_counter()
    for a, b in texts:
        find_contradiction(a, b)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(rounds):
        for a, b in texts:
            find_contradiction(a, b)
    warm = (time.perf_counter() - start) / rounds
    print(f"throughput over {len(texts)} pairs:")
    print(f"  cold (statements analysed): {len(texts) / cold:,.0f} pairs/s")
    print(f"  warm (statements cached):   {len(texts) / warm:,.0f} pairs/s")


if __name__ == "__main__":
    main()
