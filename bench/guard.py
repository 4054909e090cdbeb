"""Benchmark the credential guard: recall, false-positive rate and scan throughput.

Run from the repository root:  PYTHONPATH=src python bench/guard.py
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.guard.corpus import NEGATIVES, POSITIVES

from memdir.guard import redact, scan_text

BODY_BYTES = 128 * 1024


def _body_from(texts: list[str]) -> str:
    """About BODY_BYTES of UTF-8 made by cycling through the given texts."""
    parts: list[str] = []
    size = 0
    i = 0
    while size < BODY_BYTES:
        chunk = texts[i % len(texts)] + "\n\n"
        parts.append(chunk)
        size += len(chunk.encode("utf-8"))
        i += 1
    return "".join(parts)


def _repeat(unit: str) -> str:
    """About BODY_BYTES of UTF-8 made of one repeated unit."""
    return unit * (BODY_BYTES // len(unit.encode("utf-8")) + 1)


def _throughput(text: str, fn: Callable[[str], object], rounds: int = 5) -> tuple[float, float]:
    """Best-of-rounds seconds per call and MB/s for fn(text)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - start)
    return best, len(text.encode("utf-8")) / best / 1e6


def main() -> int:
    found = 0
    missed: list[str] = []
    for case in POSITIVES:
        kinds = [f.kind.lower() for f in scan_text(case.text) if f.line == case.line]
        if any(case.kind.lower() in k for k in kinds):
            found += 1
        else:
            missed.append(case.id)
    flagged = [case.id for case in NEGATIVES if scan_text(case.text)]

    print(f"positives: {len(POSITIVES)}  negatives: {len(NEGATIVES)}")
    print(f"recall:              {found / len(POSITIVES):7.2%}  missed: {missed or 'none'}")
    print(
        f"false-positive rate: {len(flagged) / len(NEGATIVES):7.2%}  flagged: {flagged or 'none'}"
    )

    bodies = {
        "clean notes (negatives)": _body_from([c.text for c in NEGATIVES]),
        "notes with secrets (all)": _body_from(
            [c.text for c in NEGATIVES] + [c.text for c in POSITIVES]
        ),
        "adversarial 'password='": _repeat("password="),
        "adversarial 'a'": _repeat("a"),
        "adversarial '密码是'": _repeat("密码是"),
        "adversarial 'Bearer '": _repeat("Bearer "),
    }
    print(f"\nthroughput on {BODY_BYTES // 1024} KiB bodies (best of 5):")
    for name, body in bodies.items():
        seconds, mbps = _throughput(body, scan_text)
        print(f"  scan_text  {name:28s} {seconds * 1000:8.1f} ms  {mbps:6.2f} MB/s")
    name = "notes with secrets (all)"
    seconds, mbps = _throughput(bodies[name], redact)
    print(f"  redact     {name:28s} {seconds * 1000:8.1f} ms  {mbps:6.2f} MB/s")
    return 0 if not missed and not flagged else 1


if __name__ == "__main__":
    raise SystemExit(main())
