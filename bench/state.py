"""Benchmark: the agent state store's backup and restore of 100k rows on SQLite.

Run as ``python bench/state.py [--rows 100000]``. The store is filled through the public
API (`State.add_task`, each write guarded and audited, so the audit table holds as many
rows again), then timed:

* backup: SQLite's online backup API into a new directory plus the signed manifest;
* verify: reading the manifest, summing the file and checking the signature (what restore
  does first);
* restore: verify, a private copy checked again, SQLite's integrity check, the rows' checks
  (the guard runs over rows the live store does not already hold), the pre-restore backup
  of the live store, and the replacement of the rows in one transaction.

No assertions beyond the restored row counts: the figures are printed for people to read.
Timings are wall-clock on a shared machine; compare rows of one run, not runs.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from memdir.state import State


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="tasks to write")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # The home holds the machine key that signs the backup (kept out of ~/.memdir).
        with State.open(root / "state" / "state.sqlite3", home=root, actor="bench") as state:
            start = time.perf_counter()
            for i in range(args.rows):
                state.add_task(
                    f"task {i}: follow up on the deployment checklist",
                    notes="what was tried, what is left " * 3,
                    priority=i % 5,
                    fields={"area": f"area-{i % 40}", "owner": "agent"},
                )
            fill = time.perf_counter() - start
            counts = state.counts()
            total = sum(counts.values())
            print(f"rows: {counts} ({total:,} in all)")
            print(f"fill through the API: {fill:.1f} s ({fill / args.rows * 1e3:.3f} ms a write)")

            start = time.perf_counter()
            info = state.backup(root / "backup")
            backup = time.perf_counter() - start
            print(f"backup: {backup * 1e3:.0f} ms, {info.size / 1e6:.1f} MB")

            start = time.perf_counter()
            state.check_backup(root / "backup")
            verify = time.perf_counter() - start
            print(f"verify (manifest + SHA-256): {verify * 1e3:.0f} ms")

            state.add_task("written after the backup")
            start = time.perf_counter()
            restored = state.restore(root / "backup")
            restore = time.perf_counter() - start
            print(f"restore (verify, check, pre-restore copy, replace): {restore * 1e3:.0f} ms")
            assert restored.rows["tasks"] == args.rows, restored.rows


if __name__ == "__main__":
    main()
