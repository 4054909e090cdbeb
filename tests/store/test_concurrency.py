"""§2 one writer per directory: processes writing the same notes at once lose nothing."""

from __future__ import annotations

import multiprocessing
import traceback
from multiprocessing.synchronize import Barrier, Event
from pathlib import Path
from typing import Any

import pytest

from memdir import Memory
from memdir.core import Note, Scope, render_note
from memdir.project import load_project_id
from memdir.store import NoteDirectory

CTX = multiprocessing.get_context("fork")
WORKERS = 4
ROUNDS = 12
SHARED = "shared-log-1"
SHARED_SUMMARY = "Shared log that every worker appends to"


def worker(project: str, home: str, w: int, barrier: Barrier, out: Any) -> None:
    try:
        m = Memory.open(project, home=home)
        barrier.wait(30)
        m.notes.list()  # an agent run starts by reading: the project id may be created here
        created: list[str] = []
        store = m.stores.store(Scope.PROJECT)
        for i in range(ROUNDS):
            # Own notes: one with a fixed id, one with a generated id from a summary that
            # every worker uses, so generated ids are contended too.
            m.remember(f"Worker {w} fixed note {i}", body=f"w{w} i{i}", id=f"w{w}-fixed-{i}")
            created.append(f"w{w}-fixed-{i}")
            result = m.remember("Same summary from every worker", body=f"generated w{w} i{i}")
            created.append(result.note.id)
            # Read-modify-write of the shared note under the directory lock.
            with store.lock():
                body = m.read(SHARED).body
                m.remember(SHARED_SUMMARY, body=f"{body}\nworker {w} line {i}", id=SHARED)
        out.put(("ok", w, created))
    except BaseException:
        out.put(("error", w, traceback.format_exc()))


def reader(project: str, home: str, done: Event, out: Any) -> None:
    try:
        m = Memory.open(project, home=home)
        directory = NoteDirectory(
            Scope.PROJECT, Path(project) / "MEMORY", lock_timeout=1, max_notes=10_000
        )
        scans = 0
        while not done.is_set() or scans < 3:
            scan = directory.scan()
            assert scan.problems == (), scan.problems
            assert SHARED in scan.notes
            assert m.read(SHARED).summary == SHARED_SUMMARY
            scans += 1
        out.put(("ok", -1, scans))
    except BaseException:
        out.put(("error", -1, traceback.format_exc()))


@pytest.mark.slow
def test_concurrent_writers_lose_no_update_and_tear_no_file(project: Path, home: Path) -> None:
    # The shared note arrives by hand (no project id yet): the workers race to create it.
    notes_dir = project / "MEMORY"
    notes_dir.mkdir()
    (notes_dir / f"{SHARED}.md").write_bytes(
        render_note(Note(id=SHARED, summary=SHARED_SUMMARY, body="start"))
    )
    barrier = CTX.Barrier(WORKERS)
    done = CTX.Event()
    out = CTX.Queue()
    procs = [
        CTX.Process(target=worker, args=(str(project), str(home), w, barrier, out))
        for w in range(WORKERS)
    ]
    watcher = CTX.Process(target=reader, args=(str(project), str(home), done, out))
    watcher.start()
    for proc in procs:
        proc.start()
    results = [out.get(timeout=120) for _ in procs]
    done.set()
    results.append(out.get(timeout=60))
    for proc in [*procs, watcher]:
        proc.join(30)
    errors = [r for r in results if r[0] == "error"]
    assert not errors, "\n".join(str(e[2]) for e in errors)

    m = Memory.open(project, home=home)
    # No lost update: every line from every worker is in the shared body, exactly once.
    lines = m.read(SHARED).body.split("\n")
    expected = ["start"] + [f"worker {w} line {i}" for w in range(WORKERS) for i in range(ROUNDS)]
    assert sorted(lines) == sorted(expected)
    for w in range(WORKERS):  # each worker's lines in its own order
        own = [line for line in lines if line.startswith(f"worker {w} ")]
        assert own == [f"worker {w} line {i}" for i in range(ROUNDS)]

    # Every created note exists, ids are unique, nothing is torn or unparseable.
    created = [note_id for r in results if r[1] >= 0 for note_id in r[2]]
    assert len(created) == len(set(created)) == WORKERS * ROUNDS * 2
    listed = {n.id: n for n in m.notes.list(scope="project")}
    assert set(listed) == {*created, SHARED}
    assert m.upkeep.doctor().problems == ()
    assert m.upkeep.doctor().leftovers == ()
    generated = [n for n in listed.values() if n.summary == "Same summary from every worker"]
    assert sorted(n.body for n in generated) == sorted(
        f"generated w{w} i{i}" for w in range(WORKERS) for i in range(ROUNDS)
    )

    # One project id, one history, with every version of the shared note.
    histories = sorted(p.name for p in (home / "memory-history").glob("project-*"))
    assert histories == [f"project-{load_project_id(project)}"]
    entries = m.notes.history(SHARED)
    assert [e.event for e in entries].count("write") == WORKERS * ROUNDS
    assert entries[-1].current
    assert len({e.revision for e in entries}) == len(entries)

    # The audit log chained every write from every process.
    audit = m.audit.verify()
    assert audit.ok, audit.problems
    assert audit.entries == WORKERS * ROUNDS * 3
