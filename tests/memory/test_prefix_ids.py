"""Ids a person can type: a unique prefix names a note everywhere an id is taken (one
resolver, `Stores.find`), exact ids win, an ambiguous prefix lists the candidates, an
unknown id suggests the closest, and private notes are never offered by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir import Memory
from memdir.errors import InvalidInput, NotFound, Refused
from memdir.memory.stores import MAX_CANDIDATES


@pytest.fixture
def notes(memory: Memory) -> Memory:
    memory.remember("Deploys go out on Tuesdays", "Because of the freeze.", id="deploys-tuesday")
    memory.remember("Pricing cards use fills", "Not borders.", id="pricing-cards-fills")
    memory.remember("Pricing page layout", "Two columns.", id="pricing-layout")
    memory.remember("Terse answers", "No preamble.", id="terse-answers", type="user")
    return memory


def test_a_unique_prefix_names_the_note_in_every_reader(notes: Memory) -> None:
    assert notes.read("dep").id == "deploys-tuesday"
    assert notes.read("pricing-c").id == "pricing-cards-fills"
    assert notes.read("ters").id == "terse-answers"  # the user scope too
    assert notes.notes.read_current("dep").note.id == "deploys-tuesday"
    assert [e.event for e in notes.notes.history("dep")] == ["write"]
    assert notes.notes.links("pricing-l").note_id == "pricing-layout"
    rev = notes.notes.history("dep")[0].revision
    assert rev is not None and notes.read("dep", rev[:12]).id == "deploys-tuesday"
    notes.remember("Deploys go out on Tuesdays", "Freeze on Wednesdays.", id="deploys-tuesday")
    assert "Freeze on Wednesdays." in notes.notes.diff("dep")


def test_forget_supersede_and_restore_take_prefixes(notes: Memory) -> None:
    result = notes.notes.supersede("pricing-l", by="pricing-c")
    assert result.old.id == "pricing-layout" and result.new.id == "pricing-cards-fills"
    assert notes.read("pricing-cards-fills").supersedes == ("pricing-layout",)
    plan = notes.upkeep.plan_forget("dep")
    assert plan.note.id == "deploys-tuesday"
    gone = notes.forget("dep")
    assert gone.note_id == "deploys-tuesday" and gone.backup is not None
    assert not (notes.stores.directory("project") / "deploys-tuesday.md").exists()
    # The note is gone: its id (or a prefix of it) finds its latest backup.
    back = notes.backups.restore("deploys")
    assert back.note.id == "deploys-tuesday" and back.backup_id == gone.backup.id
    assert notes.read("deploys-tuesday").body == "Because of the freeze."


def test_remember_supersedes_takes_prefixes(notes: Memory) -> None:
    r = notes.remember("Pricing, all of it", "Fills, two columns.", supersedes=["pricing-l"])
    assert r.note.supersedes == ("pricing-layout",)


def test_an_exact_id_wins_over_a_prefix(memory: Memory) -> None:
    memory.remember("Short one", id="pnpm")
    memory.remember("Longer one", id="pnpm-workspaces")
    assert memory.read("pnpm").summary == "Short one"
    # Gone from disk, its history still answers to its exact id, not to pnpm-workspaces.
    memory.forget("pnpm")
    assert [e.event for e in memory.notes.history("pnpm")][-1] == "forget"
    purged = memory.forget("pnpm", purge=True)
    assert purged.note_id == "pnpm"
    assert memory.read("pnpm-workspaces").summary == "Longer one"


def test_an_ambiguous_prefix_lists_the_candidates(notes: Memory) -> None:
    with pytest.raises(InvalidInput) as caught:
        notes.read("pricing")
    message = str(caught.value)
    assert "2 note ids" in message
    assert "pricing-cards-fills  Pricing cards use fills" in message
    assert "pricing-layout  Pricing page layout" in message


def test_at_most_ten_candidates_are_listed(memory: Memory) -> None:
    for i in range(MAX_CANDIDATES + 3):
        memory.remember(f"Step {i}", id=f"step-{i:02d}")
    with pytest.raises(InvalidInput) as caught:
        memory.read("step")
    message = str(caught.value)
    assert message.count("\n  step-") == MAX_CANDIDATES and "… and 3 more" in message


def test_an_unknown_id_suggests_the_closest(notes: Memory) -> None:
    with pytest.raises(NotFound) as by_id:
        notes.read("pricing-cards-fils")
    assert "did you mean" in str(by_id.value) and "pricing-cards-fills" in str(by_id.value)
    with pytest.raises(NotFound) as by_words:
        notes.read("tuesdays-deploy")  # the summary's words in another order
    assert "deploys-tuesday" in str(by_words.value)
    with pytest.raises(NotFound, match=r"^no note zzz-nothing-like-it$"):
        notes.read("zzz-nothing-like-it")


def test_errors_keep_their_classes_for_exit_codes(notes: Memory) -> None:
    with pytest.raises(NotFound):
        notes.notes.history("nothing-here")
    with pytest.raises(NotFound):
        notes.forget("nothing-here")
    with pytest.raises(InvalidInput):
        notes.forget("pricing")  # ambiguous: nothing is removed
    assert len(notes.notes.list()) == 4
    with pytest.raises(InvalidInput, match="lower-case"):
        notes.read("Deploys")
    with pytest.raises(InvalidInput):
        notes.read("../deploys")


def test_a_reserved_name_is_a_usable_prefix(memory: Memory) -> None:
    memory.remember("Config lives in TOML", id="config-in-toml")
    assert memory.read("con").id == "config-in-toml"


def test_a_scope_limits_the_prefix(notes: Memory) -> None:
    assert notes.read("ters", scope="user").id == "terse-answers"
    with pytest.raises(NotFound, match="in the project scope"):
        notes.read("ters", scope="project")


def test_private_notes_are_never_offered_by_default(memory: Memory) -> None:
    memory.remember("Deploy keys rotate monthly", id="deploy-keys-rotation", private=True)
    memory.remember("Deploys go out on Tuesdays", id="deploys-tuesday")
    # The private note is no candidate: the prefix is unique among the visible notes.
    assert memory.read("deploy").id == "deploys-tuesday"
    with pytest.raises(NotFound) as caught:
        memory.read("deploy-keys-rotatio")
    assert "rotation " not in str(caught.value) and "monthly" not in str(caught.value)
    # Its exact id still finds it (an adapter decides whether to show it).
    assert memory.read("deploy-keys-rotation").private


def test_the_core_offers_private_notes_to_a_caller_that_may_see_them(memory: Memory) -> None:
    memory.remember("Deploy keys rotate monthly", id="deploy-keys-rotation", private=True)
    memory.remember("Deploys go out on Tuesdays", id="deploys-tuesday")
    with pytest.raises(InvalidInput, match="deploy-keys-rotation"):
        memory.notes.read("deploy", hide_private=False)
    assert memory.notes.read("deploy-k", hide_private=False).id == "deploy-keys-rotation"
    assert memory.notes.links("deploy-k").note_id == "deploy-keys-rotation"  # hide_private=False
    with pytest.raises(NotFound):
        memory.notes.links("deploy-k", hide_private=True)


def test_restore_a_backup_id_wins_over_a_note_id(memory: Memory) -> None:
    memory.remember("Version one", id="notes-a")
    first = memory.forget("notes-a").backup
    memory.remember("Version two", id="notes-a")
    second = memory.forget("notes-a").backup
    assert first is not None and second is not None
    # A backup id is tried first (backup ids hold upper-case letters, so no note id is
    # also one; a note-id lookup never shadows a backup).
    assert memory.backups.restore(first.id).note.summary == "Version one"
    memory.forget("notes-a")
    # By note id: that note's latest backup (the forget just now, of "Version one").
    assert memory.backups.restore("notes-a").note.summary == "Version one"
    with pytest.raises(NotFound, match="no backup nothing-like-it"):
        memory.backups.restore("nothing-like-it")


def test_restore_by_an_ambiguous_prefix_lists_the_notes(memory: Memory) -> None:
    for note_id in ("alpha-one", "alpha-two"):
        memory.remember("First", id=note_id)
        memory.forget(note_id)
    with pytest.raises(InvalidInput, match="alpha-one") as caught:
        memory.backups.restore("alpha")
    assert "alpha-two" in str(caught.value)
    assert memory.backups.restore("alpha-t").note.id == "alpha-two"


def test_restore_by_note_id_only_counts_this_memorys_notes(memory: Memory, home: Path) -> None:
    (home.parent / "other-project").mkdir()
    other = Memory.open(home.parent / "other-project", home=home)
    try:
        other.remember("Elsewhere", id="elsewhere")
        backup = other.forget("elsewhere").backup
    finally:
        other.close()
    assert backup is not None
    with pytest.raises(NotFound):  # by note id: only this memory's notes count
        memory.backups.restore("elsewhere")
    with pytest.raises(Refused):  # by backup id: as before
        memory.backups.restore(backup.id)
