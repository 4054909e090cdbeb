"""Supersede through `Memory` (§1.1, issue 11): `supersede(old, by=new)`, `remember(...,
supersedes=, private=)`, and what a superseded note is left out of."""

from __future__ import annotations

from pathlib import Path

import pytest

import memdir
from memdir import InvalidInput, Memory, NotFound, Refused, Scope, SupersedeResult

from .helpers import frontmatter, note_file, snapshot


@pytest.fixture
def pair(memory: Memory) -> tuple[str, str]:
    """(old, new): two project notes about one decision, the new one written later."""
    old = memory.remember("Deploys happen on Fridays", "Every Friday afternoon.", id="deploy-old")
    new = memory.remember("Deploys happen Monday to Thursday", "Never on Friday.", id="deploy-new")
    return old.note.id, new.note.id


def _everything(memory: Memory, home: Path) -> dict[str, bytes]:
    """The notes, history, backups and audit log (not the derived search index)."""
    kept = ("memory-history", "memory-backups", "audit")
    return snapshot(
        memory.stores.directory("project"),
        memory.stores.directory("user"),
        *(home / k for k in kept),
    )


def test_supersede_writes_the_new_note_once_with_backup_history_and_audit(
    memory: Memory, pair: tuple[str, str]
) -> None:
    old, new = pair
    old_bytes = note_file(memory, old).read_bytes()
    versions = len(memory.notes.history(new))
    audited = len(memory.stores.audit.entries())

    result = memory.notes.supersede(old, by=new)

    assert isinstance(result, SupersedeResult)
    assert memdir.SupersedeResult is SupersedeResult
    assert result.changed and result.scope is Scope.PROJECT
    assert (result.old.id, result.new.id) == (old, new)
    assert result.new.supersedes == (old,)
    assert frontmatter(note_file(memory, new))["supersedes"] == [old]
    assert memory.read(new).supersedes == (old,)
    # The old note stays as it was, on disk and in history.
    assert note_file(memory, old).read_bytes() == old_bytes
    assert memory.read(old).summary == "Deploys happen on Fridays"
    history = memory.notes.history(new)
    assert len(history) == versions + 1 and history[-1].current
    assert history[-1].revision == result.revision
    (backup,) = memory.backups()
    assert (backup.note_id, backup.reason) == (new, "supersede")
    entries = memory.stores.audit.entries()[audited:]
    assert [(e.action, e.fields["note_id"]) for e in entries] == [("backup", new), ("write", new)]
    assert result.new.updated_at > memory.read(old).updated_at


def test_a_second_supersede_changes_nothing(
    memory: Memory, home: Path, pair: tuple[str, str]
) -> None:
    old, new = pair
    first = memory.notes.supersede(old, by=new)
    before = _everything(memory, home)
    again = memory.notes.supersede(old, by=new)
    assert not again.changed
    assert again.revision == first.revision
    assert again.new.supersedes == (old,)
    assert _everything(memory, home) == before


def test_a_note_may_supersede_several_and_be_superseded_by_several(memory: Memory) -> None:
    a, b, c = (memory.remember(f"Fact {x}", id=f"fact-{x}").note.id for x in "abc")
    memory.notes.supersede(a, by=c)
    memory.notes.supersede(b, by=c)
    assert memory.read(c).supersedes == (a, b)
    d = memory.remember("Fact d", id="fact-d").note.id
    assert memory.notes.supersede(a, by=d).changed  # a third opinion on a: allowed


@pytest.mark.parametrize(
    ("old", "new", "error", "words"),
    [
        ("deploy-old", "deploy-old", InvalidInput, "itself"),
        ("deploy-old", "no-such-note", NotFound, "no-such-note"),
        ("no-such-note", "deploy-new", NotFound, "no-such-note"),
        ("Deploy-Old", "deploy-new", InvalidInput, "lower-case"),
        ("deploy-old", "../etc/passwd", InvalidInput, "must not contain"),
    ],
)
def test_bad_ids_are_refused_and_nothing_changes(
    memory: Memory,
    home: Path,
    pair: tuple[str, str],
    old: str,
    new: str,
    error: type[Exception],
    words: str,
) -> None:
    before = _everything(memory, home)
    with pytest.raises(error, match=words):
        memory.notes.supersede(old, by=new)
    assert _everything(memory, home) == before


def test_a_direct_cycle_is_refused(memory: Memory, home: Path, pair: tuple[str, str]) -> None:
    old, new = pair
    memory.notes.supersede(old, by=new)
    before = _everything(memory, home)
    with pytest.raises(Refused, match="cycle") as info:
        memory.notes.supersede(new, by=old)
    assert f"{new} already supersedes {old}" in str(info.value)
    assert _everything(memory, home) == before


def test_a_longer_cycle_is_refused_naming_only_the_two_notes(memory: Memory, home: Path) -> None:
    a, b, c = (memory.remember(f"Version {x}", id=f"version-{x}").note.id for x in "abc")
    hidden = memory.remember("Version h", id="version-h", private=True).note.id
    memory.notes.supersede(a, by=b)
    memory.notes.supersede(b, by=hidden)
    memory.notes.supersede(hidden, by=c)  # c → h → b → a
    before = _everything(memory, home)
    with pytest.raises(Refused, match="cycle") as info:
        memory.notes.supersede(c, by=a)
    assert hidden not in str(info.value)
    assert _everything(memory, home) == before


def test_notes_of_different_scopes_are_refused(memory: Memory, home: Path) -> None:
    project = memory.remember("Editor is vim", id="editor-vim", scope="project").note.id
    user = memory.remember("Editor is helix", id="editor-helix", type="user").note.id
    before = _everything(memory, home)
    with pytest.raises(Refused, match="own scope") as info:
        memory.notes.supersede(project, by=user)
    assert "project scope" in str(info.value) and "user scope" in str(info.value)
    with pytest.raises(Refused, match="own scope"):
        memory.notes.supersede(user, by=project)
    assert _everything(memory, home) == before


def test_scope_chooses_where_the_new_note_is_looked_up(memory: Memory) -> None:
    memory.remember("Theme is dark", id="theme-dark", type="user")
    memory.remember("Theme is light", id="theme-light", type="user")
    with pytest.raises(NotFound):
        memory.notes.supersede("theme-dark", by="theme-light", scope="project")
    assert memory.notes.supersede("theme-dark", by="theme-light", scope="user").scope is Scope.USER


def test_superseded_notes_leave_recall_and_the_prompt_index(memory: Memory) -> None:
    memory.remember("Production database is PostgreSQL 14", tags=["postgres"], id="pg14")
    memory.remember("Production database is PostgreSQL 16", tags=["postgres"], id="pg16")
    before = memory.recall("Which postgres version is production on?")
    assert {"pg14", "pg16"} <= set(before.note_ids)
    memory.notes.supersede("pg14", by="pg16")
    after = memory.recall("Which postgres version is production on?")
    assert "pg14" not in after.note_ids and "pg16" in after.note_ids
    index = memory.agent.prompt_index()
    assert "[[pg16]]" in index and "[[pg14]]" not in index
    assert memory.read("pg14").id == "pg14"  # still on disk
    assert [n.id for n in memory.notes.list()].count("pg14") == 1


# --- remember(..., supersedes=, private=) -----------------------------------------------------


def test_remember_supersedes_on_create(memory: Memory, pair: tuple[str, str]) -> None:
    old, _ = pair
    r = memory.remember("Deploys happen any weekday", supersedes=[old])
    assert r.note.supersedes == (old,)
    assert frontmatter(note_file(memory, r.note.id))["supersedes"] == [old]


def test_a_superseded_note_is_not_reported_as_the_duplicate(memory: Memory) -> None:
    old = memory.remember("Staging deploys need a ticket", "Open a ticket for staging deploys.")
    copy = memory.remember("Staging deploys need a ticket", "Open a ticket for staging deploys.")
    assert copy.likely_duplicate and copy.duplicate_of == old.note.id
    newer = memory.remember(
        "Staging deploys need a ticket",
        "Open a ticket for staging deploys.",
        supersedes=[old.note.id, copy.note.id],
    )
    assert not newer.likely_duplicate and newer.duplicate_of is None


@pytest.mark.parametrize(
    ("supersedes", "error", "words"),
    [
        (["no-such-note"], NotFound, "no note no-such-note in the project scope"),
        (["Bad"], InvalidInput, "lower-case"),
        (["editor-helix"], Refused, "own scope"),
    ],
)
def test_remember_refuses_bad_supersedes_and_writes_nothing(
    memory: Memory, home: Path, supersedes: list[str], error: type[Exception], words: str
) -> None:
    memory.remember("Editor is helix", id="editor-helix", type="user")
    before = _everything(memory, home)
    with pytest.raises(error, match=words):
        memory.remember("Editor is vim", type="project", supersedes=supersedes)
    assert _everything(memory, home) == before
    assert not memory.stores.directory("project").exists()  # not even an empty MEMORY/


def test_remember_refuses_superseding_itself_or_a_cycle(
    memory: Memory, home: Path, pair: tuple[str, str]
) -> None:
    old, new = pair
    memory.notes.supersede(old, by=new)
    before = _everything(memory, home)
    with pytest.raises(InvalidInput, match="itself"):
        memory.remember("Deploys happen Monday to Thursday", id=new, supersedes=[old, new])
    with pytest.raises(Refused, match="cycle"):
        memory.remember("Deploys happen on Fridays", id=old, supersedes=[new])
    assert _everything(memory, home) == before


def test_ids_already_listed_are_kept_unchecked(memory: Memory, pair: tuple[str, str]) -> None:
    old, new = pair
    memory.notes.supersede(old, by=new)
    memory.forget(old)
    # The list still names the removed note; restating it with an edit is no error.
    r = memory.remember("Deploys happen Monday to Thursday", "Edited.", id=new, supersedes=[old])
    assert r.changed and r.note.supersedes == (old,)
    with pytest.raises(NotFound):
        memory.remember("Deploys happen Monday to Thursday", id=new, supersedes=[old, "gone-too"])


def test_remember_update_keeps_or_clears_supersedes_and_private(
    memory: Memory, pair: tuple[str, str]
) -> None:
    old, new = pair
    memory.remember("Deploys happen Monday to Thursday", id=new, supersedes=[old], private=True)
    kept = memory.remember("Deploys happen Monday to Thursday", "New body.", id=new)
    assert kept.note.supersedes == (old,) and kept.note.private
    cleared = memory.remember("Deploys happen Monday to Thursday", id=new, supersedes=())
    assert cleared.note.supersedes == () and cleared.note.private
    public = memory.remember("Deploys happen Monday to Thursday", id=new, private=False)
    assert not public.note.private
    assert "private" not in frontmatter(note_file(memory, new))
