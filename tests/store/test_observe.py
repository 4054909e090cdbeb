"""Versions read from disk go to history once: never a version a write logs itself, never
again a version a later write replaced, and never lost when only the read saw it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from memdir import Memory
from memdir.core import Note, Scope, render_note
from memdir.core.vocab import WriteEvent
from memdir.store import revision_of


def _events(memory: Memory, note_id: str) -> list[tuple[str, str]]:
    return [(e.event, e.revision) for e in memory.notes.history(note_id)]


def test_a_read_older_than_the_writes_since_adds_nothing(memory: Memory) -> None:
    store = memory.stores.store(Scope.PROJECT)
    memory.remember("A note that changes", body="one", id="changing-a")
    path = store.directory.file_for("changing-a")
    first = path.read_bytes()
    memory.remember("A note that changes", body="two", id="changing-a")
    before = _events(memory, "changing-a")
    store.observe("changing-a", first, memory.read("changing-a").hash)  # a read from before
    assert _events(memory, "changing-a") == before


def test_an_edit_by_hand_is_recorded_once_even_when_the_file_moved_on(memory: Memory) -> None:
    store = memory.stores.store(Scope.PROJECT)
    memory.remember("Edited by hand", body="one", id="by-hand-a")
    path = store.directory.file_for("by-hand-a")
    edited = path.read_bytes().replace(b"one", b"two by hand")
    path.write_bytes(edited)
    note_hash = memory.read("by-hand-a").hash
    store.observe("by-hand-a", edited, note_hash)
    store.observe("by-hand-a", edited, note_hash)
    assert _events(memory, "by-hand-a")[-1] == ("observed", revision_of(edited))
    assert [rev for _, rev in _events(memory, "by-hand-a")].count(revision_of(edited)) == 1
    # Read once, then overwritten by hand again before it was recorded: still kept.
    other = edited.replace(b"two by hand", b"three by hand")
    path.write_bytes(other.replace(b"three", b"four"))
    store.observe("by-hand-a", other, note_hash)
    assert revision_of(other) in [rev for _, rev in _events(memory, "by-hand-a")]


def test_a_version_read_between_a_writes_file_and_its_history_is_logged_once(
    memory: Memory,
) -> None:
    """A writer holds the directory lock from its file to its history line: a reader of
    the new file asks history again once the writer is through."""
    store = memory.stores.store(Scope.PROJECT)
    memory.remember("Written while read", body="one", id="mid-write-a")
    path = store.directory.file_for("mid-write-a")
    new = path.read_bytes().replace(b"one", b"two")
    note_hash = memory.read("mid-write-a").hash
    with store.lock():
        path.write_bytes(new)  # the file is in place, its history line not yet
        reader = threading.Thread(target=store.observe, args=("mid-write-a", new, note_hash))
        reader.start()
        time.sleep(0.3)  # the reader now waits for the lock: it logged nothing yet
        assert revision_of(new) not in [r.rev for r in store.history.revisions("mid-write-a")]
        store.history.record("mid-write-a", new, WriteEvent.WRITE, note_hash)
    reader.join(30)
    assert [rev for _, rev in _events(memory, "mid-write-a")].count(revision_of(new)) == 1
    assert _events(memory, "mid-write-a")[-1] == ("write", revision_of(new))


def test_a_read_writes_nothing_into_the_project(project: Path, home: Path) -> None:
    """A note directory memdir never wrote in (a fresh clone): a version read from it is
    recorded in history, and the directory gets no lock file or anything else."""
    directory = project / "MEMORY"
    directory.mkdir()
    (directory / "cloned-a.md").write_bytes(
        render_note(Note(id="cloned-a", summary="Cloned", body="from the remote"))
    )
    memory = Memory.open(project, home=home)
    assert [n.id for n in memory.notes.list(scope="project")] == ["cloned-a"]
    assert sorted(p.name for p in directory.iterdir()) == ["cloned-a.md"]
    assert [e.event for e in memory.notes.history("cloned-a")] == ["observed"]


def test_versions_read_while_another_thread_holds_the_lock_are_recorded(
    memory: Memory,
) -> None:
    store = memory.stores.store(Scope.PROJECT)
    edited: dict[str, bytes] = {}
    for i in range(3):
        memory.remember(f"Edited by hand {i}", body="one", id=f"held-{i}")
        path = store.directory.file_for(f"held-{i}")
        edited[f"held-{i}"] = data = path.read_bytes().replace(b"one", b"two")
        path.write_bytes(data)
    hashes = {note_id: memory.read(note_id).hash for note_id in edited}
    taken, release = threading.Event(), threading.Event()

    def holder() -> None:
        with store.lock():
            taken.set()
            release.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    taken.wait(30)
    try:
        for note_id, data in edited.items():
            store.observe(note_id, data, hashes[note_id])
            assert store.history.latest(note_id) == revision_of(data)
    finally:
        release.set()
        thread.join(30)
