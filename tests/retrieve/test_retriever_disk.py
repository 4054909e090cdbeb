"""Searching when the disk refuses the index's writes: every method answers, leaving out the
notes the index is behind on, with one warning; writes (reindex, forget) still fail.

The disk is real: the machine-local state (where the index lives) is a small tmpfs that
the test fills or remounts read-only; the notes live elsewhere, as a project's do.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from disks import fill, needs_root, tmpfs
from memdir.config import EmbedSettings
from memdir.core import Note, Scope, render_note
from memdir.errors import DiskError
from memdir.retrieve import Retriever, SearchMethod
from memdir.store.notedir import NoteDirectory
from memdir.store.notes import ScopeStore
from memdir.store.usage import UsageStats

from .test_retriever import HashedWords

pytestmark = needs_root
METHODS = list(SearchMethod)


class Store:
    """What the Retriever reads of a scope's store: its directory, scope and state key."""

    def __init__(self, root: Path) -> None:
        self.scope = Scope.PROJECT
        self.state_key = "project"
        self.directory = NoteDirectory(self.scope, root, lock_timeout=5, max_notes=10_000)
        root.mkdir(parents=True)

    def write(self, note_id: str, summary: str, body: str) -> None:
        note = Note(id=note_id, summary=summary, body=body, created_at=1, updated_at=1)
        path = self.directory.path / f"{note_id}.md"
        path.write_bytes(render_note(note))
        at = time.time_ns() - 3600 * 1_000_000_000  # at rest: its stamp alone is trusted
        os.utime(path, ns=(at, at))
        time.sleep(2 * _RACY_S)  # setting the times changed the ctime: let it settle too

    def remove(self, note_id: str) -> None:
        (self.directory.path / f"{note_id}.md").unlink()

    def observe(self, note_id: str, data: bytes, note_hash: str) -> None:
        pass

    def get(self, note_id: str) -> Note | None:
        item = self.directory.read(note_id)
        return item if isinstance(item, Note) else None


@pytest.fixture
def state(tmp_path: Path) -> Iterator[Path]:
    """Machine-local state on a 4 MiB tmpfs of its own."""
    with tmpfs(tmp_path / "state") as mount:
        yield mount


def retriever(home: Path, warnings: list[str], embedder: HashedWords | None) -> Retriever:
    """A Retriever whose warnings are kept once each, as `Memory` keeps them."""

    def warn(message: str) -> None:
        if message not in warnings:
            warnings.append(message)

    r = Retriever(
        home,
        EmbedSettings(provider="none"),
        usage=UsageStats(home / "usage-elsewhere", lock_timeout=5),
        warn=warn,
    )
    r.use_embedder(embedder)
    return r


#: The racy window of the index here (the real one is 2 s, for FAT's clock).
_RACY_S = 0.02


@pytest.fixture(autouse=True)
def _quick_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memdir.index.rows.RACY_NS", int(_RACY_S * 1e9))


def _s(store: Store) -> ScopeStore:
    """The stand-in store where the Retriever wants a `ScopeStore`."""
    return cast(ScopeStore, store)


def _notes(store: Store) -> None:
    store.write("staging", "Deploys go through staging", "The staging cluster first.")
    store.write("rollbacks", "Rollbacks of deploys", "Ask the on-call person.")
    store.write("old", "Old deploy checklist", "Obsolete deploy steps.")


def _edit_by_hand(store: Store) -> None:
    store.write("rollbacks", "Rollbacks of deploys", "Ask the release manager.")
    store.remove("old")
    store.write("hand", "Deploys written by hand", "Edited in an editor.")


def _searched(r: Retriever, store: Store, method: SearchMethod) -> dict[str, str]:
    hits = r.search([_s(store)], "deploys", limit=10, mode="any", method=method)
    chunks = r.retrieve([_s(store)], "deploys", limit=10, mode="any", method=method)
    assert {c.note_id for c in chunks} == {h.note_id for h in hits}
    return {h.note_id: h.snippet for h in hits}


def _missed(warnings: list[str]) -> list[str]:
    return [w for w in warnings if "cannot be updated" in w]


@pytest.mark.parametrize("reopen", [False, True], ids=["same-process", "new-process"])
def test_a_full_disk_answers_every_method_without_the_notes_changed_since(
    state: Path, tmp_path: Path, reopen: bool
) -> None:
    store = Store(tmp_path / "notes")
    _notes(store)
    warnings: list[str] = []
    r = retriever(state, warnings, HashedWords())
    assert set(_searched(r, store, SearchMethod.HYBRID)) == {"staging", "rollbacks", "old"}
    _edit_by_hand(store)
    filler = fill(state)
    if reopen:  # a new process: the index cannot even be opened for writing
        r.close()
        r = retriever(state, warnings, HashedWords())

    for method in METHODS:
        found = _searched(r, store, method)
        # Never a note that is gone, never a note's old text served as current.
        assert set(found) == {"staging"}, method
    assert _missed(warnings) == [
        "the search index of the project notes cannot be updated (the disk is full): results "
        "may miss 2 notes added or changed since it was last updated"
    ]
    assert r.nearest([_s(store)], Note(id="x", summary="deploys", body="")) != []

    with pytest.raises(sqlite3.OperationalError, match="disk"):
        r.reindex([_s(store)])  # a write still fails
    filler.unlink()
    warnings.clear()
    for method in METHODS:
        found = _searched(r, store, method)
        assert set(found) == {"staging", "rollbacks", "hand"}, method
        assert found["rollbacks"] == "Ask the release manager."
    assert warnings == []
    assert r.index_findings(_s(store), deep=True) == []
    r.close()


def test_with_no_index_and_a_full_disk_a_memory_index_answers(state: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "notes")
    _notes(store)
    _edit_by_hand(store)
    filler = fill(state)
    warnings: list[str] = []
    r = retriever(state, warnings, HashedWords())
    for method in METHODS:
        assert set(_searched(r, store, method)) == {"staging", "rollbacks", "hand"}, method
    assert warnings == [
        "the search index of the project notes cannot be written (the disk is full): "
        "searching a temporary index built in memory from the note files"
    ]
    with pytest.raises(DiskError, match="the disk is full: the search index"):
        r.forget(_s(store), "staging")  # a write goes to the index file, or fails
    filler.unlink()
    r.close()


def test_a_read_only_state_directory_is_searched_and_reindex_fails(
    state: Path, tmp_path: Path
) -> None:
    store = Store(tmp_path / "notes")
    _notes(store)
    warnings: list[str] = []
    r = retriever(state, warnings, None)
    assert set(_searched(r, store, SearchMethod.LEXICAL)) == {"staging", "rollbacks", "old"}
    r.close()
    _edit_by_hand(store)
    subprocess.run(["mount", "-o", "remount,ro", str(state)], check=True)
    r = retriever(state, warnings, None)
    try:
        assert set(_searched(r, store, SearchMethod.HYBRID)) == {"staging"}
        assert _missed(warnings) == [
            "the search index of the project notes cannot be updated (the file system is "
            "read-only): results may miss 2 notes added or changed since it was last updated"
        ]
        findings = r.index_findings(_s(store), deep=True)
        assert any("cannot be updated (the file system is read-only)" in f for f in findings)
        with pytest.raises(DiskError, match="the file system is read-only: the search index"):
            r.reindex([_s(store)])
    finally:
        r.close()
        subprocess.run(["mount", "-o", "remount,rw", str(state)], check=True)


def test_vectors_the_full_disk_refuses_leave_the_search_to_words(
    state: Path, tmp_path: Path
) -> None:
    store = Store(tmp_path / "notes")
    _notes(store)
    warnings: list[str] = []
    r = retriever(state, warnings, None)
    assert set(_searched(r, store, SearchMethod.LEXICAL)) == {"staging", "rollbacks", "old"}
    filler = fill(state)
    r.use_embedder(HashedWords())  # chunks now await vectors the disk cannot take
    assert set(_searched(r, store, SearchMethod.HYBRID)) == {"staging", "rollbacks", "old"}
    assert warnings == [
        "the search index of the project notes cannot store vectors (the disk is full): "
        "notes not embedded yet are found by their words only"
    ]
    filler.unlink()
    r.close()


def test_a_stand_in_gives_way_to_the_index_file_once_the_disk_has_room(
    state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memdir.retrieve.retriever as retriever_module

    store = Store(tmp_path / "notes")
    _notes(store)
    filler = fill(state)
    warnings: list[str] = []
    r = retriever(state, warnings, None)
    assert set(_searched(r, store, SearchMethod.LEXICAL)) == {"staging", "rollbacks", "old"}
    assert r.index(_s(store)).stand_in == "memory"
    filler.unlink()
    monkeypatch.setattr(retriever_module, "STAND_IN_SECONDS", 0.0)  # a long-running host
    _edit_by_hand(store)
    assert set(_searched(r, store, SearchMethod.LEXICAL)) == {"staging", "rollbacks", "hand"}
    assert r.index(_s(store)).stand_in is None
    assert r.index(_s(store)).note_ids() == {"staging", "rollbacks", "hand"}
    r.close()
