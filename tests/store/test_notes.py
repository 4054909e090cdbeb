"""Tests for `store/notes.py`'s §1.5 limits: maxNoteBytes and maxNotes block growth, never
reading or deleting."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from files import snapshot, write_project_config
from memdir import LimitExceeded, Memory, NotFound, Refused
from memdir.core import Note, render_note


def test_body_over_max_note_bytes_is_refused(project: Path, home: Path) -> None:
    write_project_config(project, "[memory]\nmaxNoteBytes = 100\n")
    memory = Memory.open(project, home=home)
    memory.remember("Small", "x" * 100)
    before = snapshot(project, home)
    with pytest.raises(Refused) as info:
        memory.remember("Too big", "é" * 51)  # 102 bytes, 51 characters
    assert isinstance(info.value, LimitExceeded)
    assert "100" in str(info.value)
    assert snapshot(project, home) == before


def test_max_notes_blocks_new_notes_only(project: Path, home: Path) -> None:
    write_project_config(project, "[memory]\nmaxNotes = 3\n")
    memory = Memory.open(project, home=home)
    ids = [memory.remember(f"Note number {i}", f"body {i}").note.id for i in range(3)]
    before = snapshot(project, home)
    with pytest.raises(Refused) as info:
        memory.remember("One too many", "body")
    assert isinstance(info.value, LimitExceeded)
    assert "3" in str(info.value)
    assert snapshot(project, home) == before
    # update, read, list and forget still work
    assert memory.remember("Note number 0 (edited)", id=ids[0]).changed
    assert memory.read(ids[1]).body == "body 1"
    assert len(memory.notes.list()) == 3
    memory.forget(ids[2])
    assert memory.remember("Room again", "body").created


def test_lowered_max_notes_still_allows_read_update_and_delete(project: Path, home: Path) -> None:
    memory = Memory.open(project, home=home)
    ids = [memory.remember(f"Topic {i} alpha", f"body {i}").note.id for i in range(5)]
    write_project_config(project, "[memory]\nmaxNotes = 2\n")
    lowered = Memory.open(project, home=home)
    for i, note_id in enumerate(ids):
        assert lowered.read(note_id).body == f"body {i}"
    listed = lowered.notes.list()
    assert len(listed) == 2
    assert any("maxNotes" in w for w in lowered.warnings)
    with pytest.raises(Refused):
        lowered.remember("Yet another", "body")
    assert lowered.remember("Topic 0 alpha edited", id=ids[0]).changed
    for note_id in ids:
        lowered.forget(note_id)
        with pytest.raises(NotFound):
            lowered.read(note_id)
    assert lowered.notes.list() == []
    assert lowered.remember("Fresh start", "body").created


def _unloaded_by_hand(project: Path, memory: Memory) -> str:
    """A note file written by hand (never seen by memdir), older than every other file."""
    path = memory.stores.directory("project") / "made-by-hand.md"
    path.write_bytes(render_note(Note(id="made-by-hand", summary="Hand-made fact", body="old")))
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    return "made-by-hand"


def test_a_note_file_beyond_a_lowered_max_notes_is_read_shown_and_forgotten(
    project: Path, home: Path
) -> None:
    memory = Memory.open(project, home=home)
    ids = [memory.remember(f"Topic {i} alpha", f"body {i}").note.id for i in range(3)]
    memory.close()
    write_project_config(project, "[memory]\nmaxNotes = 2\n")
    lowered = Memory.open(project, home=home)
    hand = _unloaded_by_hand(project, lowered)
    listed = {n.id for n in lowered.notes.list()}
    assert hand not in listed and len(listed) == 2
    assert lowered.read(hand).body == "old"
    history = lowered.notes.history(hand)
    assert len(history) == 1 and history[0].current and history[0].event == "observed"
    assert lowered.read(hand, history[0].revision).body == "old"
    assert lowered.notes.diff(hand) == ""
    assert lowered.upkeep.plan_forget(hand).history_versions == 1
    result = lowered.forget(hand)
    assert result.backup is not None
    with pytest.raises(NotFound):
        lowered.read(hand)
    for note_id in ids:  # the older ones, too, until none is left
        lowered.forget(note_id)
    assert lowered.notes.list() == []
    lowered.close()


def test_body_exactly_at_the_limit_is_accepted(project: Path, home: Path) -> None:
    write_project_config(project, "[memory]\nmaxNoteBytes = 100\n")
    memory = Memory.open(project, home=home)
    assert memory.remember("At limit", "é" * 50).created  # 100 bytes
    with pytest.raises(LimitExceeded, match="maxNoteBytes"):
        memory.remember("Over", "x" * 101)


def test_default_max_note_bytes(memory: Memory) -> None:
    memory.remember("Big but allowed", "x" * 131072)
    with pytest.raises(LimitExceeded, match="131072"):
        memory.remember("Too big", "x" * 131073)


def test_oversized_note_after_lowering_may_shrink_but_not_grow(project: Path, home: Path) -> None:
    memory = Memory.open(project, home=home)
    r = memory.remember("Long note", "x" * 200)
    write_project_config(project, "[memory]\nmaxNoteBytes = 100\n")
    lowered = Memory.open(project, home=home)
    assert lowered.read(r.note.id).body == "x" * 200
    with pytest.raises(LimitExceeded):
        lowered.remember("Long note", "x" * 250, id=r.note.id)
    assert lowered.read(r.note.id).body == "x" * 200
    assert lowered.remember("Long note", "x" * 150, id=r.note.id).changed
    assert lowered.remember("Long note, renamed", id=r.note.id).changed
    lowered.forget(r.note.id)
    with pytest.raises(NotFound):
        lowered.read(r.note.id)


def test_max_notes_counts_each_scope_separately(project: Path, home: Path) -> None:
    write_project_config(project, "[memory]\nmaxNotes = 1\n")
    memory = Memory.open(project, home=home)
    memory.remember("Project one", "p")
    memory.remember("User one", "u", type="user")
    with pytest.raises(LimitExceeded, match="project"):
        memory.remember("Project two", "p")
    with pytest.raises(LimitExceeded, match="user"):
        memory.remember("User two", "u", type="user")
