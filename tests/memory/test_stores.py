"""Tests for `memory/stores.py`: the open scopes, where machine-local state lives (the
state home and its in-project fallback) and the configured note directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir import Memory, Refused, Scope

from .helpers import write_project_config


def test_unusable_home_keeps_project_notes_working(tmp_path: Path, project: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    memory = Memory.open(project, home=blocker / "home")
    assert any("user notes" in w for w in memory.warnings)
    assert memory.scopes == (Scope.PROJECT,)
    r = memory.remember("Project note", "works")
    assert memory.read(r.note.id).body == "works"
    assert [n.id for n in memory.notes.list()] == [r.note.id]
    assert [h.note_id for h in memory.search("works")] == [r.note.id]
    memory.remember("Project note", "works again", id=r.note.id)
    assert len(memory.notes.history(r.note.id)) == 2
    assert "+works again" in memory.notes.diff(r.note.id)
    with pytest.raises(Refused, match="user"):
        memory.remember("A user fact", type="user")
    assert any("user notes" in w for w in memory.upkeep.doctor().warnings)
    backup = memory.forget(r.note.id).backup
    assert memory.notes.list() == []
    assert backup is not None
    memory.backups.restore(backup.id)
    assert memory.read(r.note.id).body == "works again"
    assert memory.audit.verify().ok
    # machine-local state went to a git-ignored folder inside the project
    local = project / ".memdir" / "local"
    assert (local / ".gitignore").read_text().splitlines()[-1] == "*"
    assert any(str(local) in w for w in memory.warnings)
    assert blocker.read_text() == "not a directory"


def test_unusable_user_dir_under_a_usable_home(home: Path, project: Path) -> None:
    (home / "memory").write_text("a file where the user notes directory should be")
    memory = Memory.open(project, home=home)
    assert memory.scopes == (Scope.PROJECT,)
    assert any("user notes" in w for w in memory.warnings)
    r = memory.remember("Project note", "works")
    memory.remember("Project note", "works again", id=r.note.id)
    assert len(memory.notes.history(r.note.id)) == 2
    assert (home / "memory-history").is_dir()
    assert not (project / ".memdir" / "local").exists()


def test_memory_dir_config(project: Path, home: Path) -> None:
    write_project_config(project, '[memory]\ndir = "docs/memory"\n')
    memory = Memory.open(project, home=home)
    r = memory.remember("Elsewhere", "body")
    assert (project / "docs" / "memory" / f"{r.note.id}.md").is_file()
    assert not (project / "MEMORY").exists()


def test_user_only_memory(home: Path) -> None:
    memory = Memory.open(None, home=home)
    assert memory.scopes == (Scope.USER,)
    r = memory.remember("A user fact", type="user")
    assert memory.read(r.note.id).scope is Scope.USER
    with pytest.raises(Refused):
        memory.remember("A project fact", type="project")


def test_new_home_and_user_notes_are_private(tmp_path: Path) -> None:
    """Under umask 022 a home memdir creates is 0700 (as are `memory/` and `memory/user/`),
    so other users cannot reach user notes; the note files keep the umask's 0644."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        home = tmp_path / "fresh" / "home"
        memory = Memory.open(None, home=home)
        r = memory.remember("A user fact", "body", type="user")
    finally:
        os.umask(old)
    for folder in (tmp_path / "fresh", home, home / "memory", home / "memory" / "user"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    note = home / "memory" / "user" / f"{r.note.id}.md"
    assert stat.S_IMODE(note.stat().st_mode) == 0o644


def test_existing_home_keeps_its_mode(home: Path) -> None:
    import stat

    home.chmod(0o755)
    Memory.open(None, home=home).remember("A user fact", type="user")
    assert stat.S_IMODE(home.stat().st_mode) == 0o755
    assert stat.S_IMODE((home / "memory" / "user").stat().st_mode) == 0o700
