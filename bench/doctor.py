"""Benchmark: `doctor` and `doctor --deep` on a 10,000-note home, and the open-time index check.

Run as ``python bench/doctor.py [--notes 10000] [--vectors]``. Builds, in a temporary
project and MEMDIR_HOME removed afterwards: the notes (written as files with
`render_note`, then scanned so each has its history object), a second version of
every tenth note (edited on disk, scanned again), a few forgotten notes (backups),
and the search index (one lexical search). With ``--vectors`` every chunk also gets
a random 384-d vector, so the index is the size it has with an embedder.
``[embed] provider = "none"``; ``memory.maxNotes`` is raised above the note count.

Then it times, each on a freshly opened `Memory`: plain `doctor`, `doctor --deep`
(every history object and backup hashed, the audit chain, SQLite's full check and
the index compared with every file), and `PRAGMA quick_check` — what every index
open now costs on top of opening. No assertions: the figures are printed.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from memdir import Memory
from memdir.core import Note, Scope, render_note
from memdir.index.schema import damage_of

_WORDS = [
    "".join(random.Random(i).choice("aeioubcdfghklmnprstvz") for _ in range(3 + i % 6))
    for i in range(4000)
]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def build(project: Path, home: Path, notes: int, *, vectors: bool) -> None:
    rng = random.Random(7)
    memory_dir = project / "MEMORY"
    memory_dir.mkdir(parents=True)
    (home / "config.toml").write_text(
        f'[embed]\nprovider = "none"\n\n[memory]\nmaxNotes = {notes * 2}\n', encoding="utf-8"
    )

    def write(i: int) -> None:
        note = Note(id=f"note-{i:05d}", summary=_text(rng, 6), body=_text(rng, 50))
        (memory_dir / f"{note.id}.md").write_bytes(render_note(note))

    for i in range(notes):
        write(i)
    with Memory.open(project, home=home) as memory:
        memory.notes.list()  # the scan records every version in history
        for i in range(0, notes, 10):
            write(i)  # edited on disk: a second version each
        memory.notes.list()
        for i in range(1, 6):
            memory.forget(f"note-{i:05d}")  # each leaves a backup
        memory.search(_text(rng, 2), method="lexical")
        if vectors:
            store = memory.stores.store(Scope.PROJECT)
            index = memory.index.retriever.index(store)
            pending = index.pending("bench-random-384")
            matrix = np.random.default_rng(1).standard_normal((len(pending), 384))
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            index.put_vectors("bench-random-384", [h for h, _ in pending], matrix)


def timed(project: Path, home: Path, deep: bool, runs: int) -> tuple[float, bool]:
    times, ok = [], True
    for _ in range(runs):
        with Memory.open(project, home=home) as memory:
            started = time.perf_counter()
            report = memory.upkeep.doctor(deep=deep)
            times.append(time.perf_counter() - started)
            ok = ok and report.ok
            if not report.ok:
                print("  not ok:", report.index[:3], report.integrity[:3], report.warnings[:3])
    return statistics.median(times), ok


def quick_check_ms(home: Path, runs: int = 20) -> tuple[float, float, int]:
    [path] = (home / "index").glob("project-*.sqlite3")
    checks, opens = [], []
    for _ in range(runs):
        started = time.perf_counter()
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        opens.append(time.perf_counter() - started)
        started = time.perf_counter()
        assert damage_of(conn) is None
        checks.append(time.perf_counter() - started)
        conn.close()
    return statistics.median(opens) * 1000, statistics.median(checks) * 1000, path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--vectors", action="store_true", help="give every chunk a vector")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="memdir-bench-doctor-"))
    try:
        project, home = root / "project", root / "home"
        home.mkdir()
        started = time.perf_counter()
        build(project, home, args.notes, vectors=args.vectors)
        print(f"built {args.notes} notes in {time.perf_counter() - started:.1f} s")
        objects = sum(1 for _ in (home / "memory-history").rglob("objects/*/*.md"))
        backups = sum(1 for _ in (home / "memory-backups").glob("*.md"))
        print(f"  {objects} history objects, {backups} backups")
        plain, plain_ok = timed(project, home, False, args.runs)
        deep, deep_ok = timed(project, home, True, args.runs)
        open_ms, check_ms, size = quick_check_ms(home)
        print(f"doctor          {plain * 1000:8.0f} ms  (median of {args.runs}, ok={plain_ok})")
        print(f"doctor --deep   {deep * 1000:8.0f} ms  (median of {args.runs}, ok={deep_ok})")
        print(
            f"index open {open_ms:.2f} ms + quick_check {check_ms:.2f} ms "
            f"on a {size / 1e6:.1f} MB index (added to every index open)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
