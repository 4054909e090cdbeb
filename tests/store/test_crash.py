"""§2 crash safety: a writer SIGKILLed at random moments never leaves a torn note.

A forked child updates five notes in a loop; the parent kills it 1-30 ms (one in
twenty: 50-300 ms) after it starts, 300 times. Every body is derived from a counter, so
the parent can check that each file on disk (and each version in history) is one the
child wrote.
"""

from __future__ import annotations

import os
import random
import re
import signal
import time
import traceback
from pathlib import Path

import pytest

from memdir import Memory
from memdir.core import Scope, normalize_body, parse_note
from memdir.store import NoteDirectory

IDS = tuple(f"crash-{i}" for i in range(5))
KILLS = 300
TEMP_NAME = re.compile(r"\..+\.tmp-[0-9a-f]{8}")
VERSION = re.compile(r"version (\d+)")


def summary_for(k: int) -> str:
    return f"Crash test note number {k % len(IDS)}"


def body_for(k: int) -> str:
    return f"version {k}\n" + "x" * (k % 500)


def check_version(note_id: str, data: bytes) -> int:
    """Assert `data` is a complete version the child wrote for `note_id`; return its counter."""
    note = parse_note(data, file_id=note_id)
    match = VERSION.match(note.body)
    assert match, f"{note_id}: unexpected body {note.body[:40]!r}"
    k = int(match.group(1))
    assert note_id == IDS[k % len(IDS)]
    assert note.summary == summary_for(k)
    assert note.body == normalize_body(body_for(k))
    return k


def writer(project: Path, home: Path, start: int, error_file: Path) -> None:
    """Runs in the forked child until it is killed."""
    try:
        m = Memory.open(project, home=home)
        k = start
        while True:
            m.remember(summary_for(k), body=body_for(k), id=IDS[k % len(IDS)])
            k += 1
    except BaseException:
        error_file.write_text(traceback.format_exc())
        os._exit(3)


@pytest.mark.slow
def test_sigkilled_writers_never_leave_torn_notes(
    project: Path, home: Path, tmp_path: Path
) -> None:
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    error_file = tmp_path / "child-error.txt"
    kills = 0
    for round_ in range(KILLS):
        pid = os.fork()
        if pid == 0:  # child: never returns into pytest
            try:
                writer(project, home, round_ * 100_001, error_file)
            finally:
                os._exit(4)
        # Mostly 1-30 ms; every 20th child gets longer, so that writes happen (and get
        # killed mid-way) even when a loaded machine starts children slowly.
        time.sleep(rng.uniform(0.050, 0.300) if round_ % 20 == 0 else rng.uniform(0.001, 0.030))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            kills += 1
        else:
            detail = error_file.read_text() if error_file.exists() else ""
            pytest.fail(f"writer exited by itself (status {status}, seed {seed}):\n{detail}")
    assert kills >= KILLS

    notes_dir = project / "MEMORY"
    # Only notes, the lock, the .gitignore and recognisable temp files are left.
    counters: dict[str, int] = {}
    for path in notes_dir.iterdir():
        name = path.name
        if name in {".gitignore", ".memdir.lock"} or TEMP_NAME.fullmatch(name):
            continue
        assert name.endswith(".md") and name[:-3] in IDS, f"unexpected file {name} (seed {seed})"
        counters[name[:-3]] = check_version(name[:-3], path.read_bytes())
    assert counters, f"no note was ever written in {KILLS} runs (seed {seed})"

    # A scan sees exactly those notes and ignores temp files.
    scan = NoteDirectory(Scope.PROJECT, notes_dir, lock_timeout=1, max_notes=100).scan()
    assert scan.problems == ()
    assert sorted(scan.notes) == sorted(counters)

    m = Memory.open(project, home=home)
    assert sorted(n.id for n in m.notes.list(scope="project")) == sorted(counters)
    report = m.upkeep.doctor()
    assert report.problems == ()
    assert all(TEMP_NAME.fullmatch(p.name) for p in report.leftovers)

    # History works and every logged version is complete.
    store = m.stores.store(Scope.PROJECT)
    for note_id in counters:
        entries = m.notes.history(note_id)
        assert entries[-1].current, f"{note_id}: the file on disk is not the newest revision"
        for entry in entries:
            assert entry.revision is not None
            check_version(note_id, store.history.read(entry.revision))
        first = entries[0].revision
        assert first is not None
        assert m.read(note_id, revision=first[:8]).id == note_id

    # The audit log recovers from a torn tail on the next append.
    for k, note_id in enumerate(IDS):
        m.remember(summary_for(k), body=f"final {note_id}", id=note_id)
    audit = m.audit.verify()
    assert audit.ok, f"audit problems after recovery (seed {seed}): {audit.problems}"
    assert audit.entries >= len(IDS)
    for note_id in IDS:
        assert m.read(note_id).body == f"final {note_id}"
        assert m.notes.history(note_id)[-1].current
