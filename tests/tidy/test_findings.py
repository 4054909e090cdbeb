"""The tidy-up list through `Memory.tidy` and `Memory.dismiss` (issue 11, §6): every kind of
finding, stable ids, filters, and dismissals that come back once a note is edited."""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir import Finding, FindingKind, Memory, NotFound
from memdir.config import load_settings
from memdir.core import Scope
from memdir.errors import InvalidInput
from memdir.tidy.findings import DAY_MS, TOO_LONG_CHARS, finding_id, kind_of

ID = re.compile(r"^[a-z_]+-[0-9a-f]{12}$")


@pytest.fixture
def memory(project: Path, home: Path) -> Iterator[Memory]:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    m = Memory.open(project, home=home)
    try:
        yield m
    finally:
        m.close()


def _of(memory: Memory, kind: FindingKind, **kwargs: object) -> list[Finding]:
    found = memory.tidy.findings([kind], **kwargs)  # type: ignore[arg-type]
    assert all(f.kind is kind for f in found)
    return found


def _note(memory: Memory, summary: str, body: str = "", **kwargs: object) -> str:
    return memory.remember(summary, body, **kwargs).note.id  # type: ignore[arg-type]


# -- same topic ---------------------------------------------------------------------------


def test_notes_on_one_topic_are_one_finding(memory: Memory) -> None:
    ids = [
        _note(memory, "Use pnpm for package management", "pnpm only.", tags=["tooling"]),
        _note(memory, "Package management uses pnpm", "Not npm.", tags=["tooling"]),
        _note(memory, "pnpm is our package management tool", "Since 2024.", tags=["tooling"]),
    ]
    _note(memory, "Release notes go to the blog", "Every Friday.")
    _note(memory, "Staging database is read-only on weekends", "Backups run then.")
    (found,) = _of(memory, FindingKind.SAME_TOPIC)
    assert found.notes == tuple(sorted(ids))
    assert found.scope is Scope.PROJECT
    assert found.reason.startswith("3 notes on one topic: ")
    assert '"Use pnpm for package management"' in found.reason
    assert ID.match(found.id) and found.id.startswith("same_topic-")
    assert found.hashes == tuple(memory.read(i).hash for i in found.notes)


def test_a_topic_holds_at_most_six_notes(memory: Memory) -> None:
    for i in range(9):
        _note(memory, f"Deploy the api with helm charts, step {i}", tags=["deploy", "helm"])
    found = _of(memory, FindingKind.SAME_TOPIC)
    assert found and all(2 <= len(f.notes) <= 6 for f in found)
    assert max(len(f.notes) for f in found) == 6
    every = [n for f in found for n in f.notes]
    assert len(every) == len(set(every))  # a note is in one group only


def test_superseded_and_private_notes_are_not_on_a_topic(memory: Memory) -> None:
    old = _note(memory, "Lint the code with flake8 in CI", "flake8.")
    _note(memory, "Lint the code with ruff in CI", "ruff.", supersedes=[old])
    _note(memory, "Lint the code with pylint in CI", "mine.", private=True)
    assert _of(memory, FindingKind.SAME_TOPIC) == []
    assert _of(memory, FindingKind.CONTRADICTION) == []


def test_different_topics_are_no_finding(memory: Memory) -> None:
    _note(memory, "Pricing cards use fills, not borders", tags=["design"])
    _note(memory, "Deploys need two approvals", tags=["ops"])
    _note(memory, "The user prefers short answers", scope="user", type="user")
    assert _of(memory, FindingKind.SAME_TOPIC) == []


# -- contradiction ------------------------------------------------------------------------


def test_two_notes_stating_different_values_contradict(memory: Memory) -> None:
    a = _note(memory, "Deploy timeout is 30 seconds", "The deploy step times out after 30 s.")
    b = _note(memory, "Deploy timeout is 60 seconds", "The deploy step times out after 60 s.")
    (found,) = _of(memory, FindingKind.CONTRADICTION)
    assert set(found.notes) == {a, b}
    assert found.reason == '"Deploy timeout is 30 seconds" vs "Deploy timeout is 60 seconds"'
    # Resolving it is one supersede: the finding is gone.
    memory.notes.supersede(a, by=b)
    assert _of(memory, FindingKind.CONTRADICTION) == []


def test_a_pair_the_value_reader_fails_on_costs_that_pair_only(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A defect of the value reader on one text leaves the rest of the list standing."""
    import memdir.tidy.findings as findings_module

    a = _note(memory, "Deploy timeout is 30 seconds", "The deploy step times out after 30 s.")
    b = _note(memory, "Deploy timeout is 60 seconds", "The deploy step times out after 60 s.")
    _note(memory, "Backups run nightly at 2:00", "The backup job starts at 02:00.")
    _note(memory, "Backups run nightly at 3:00", "The backup job starts at 03:00.")
    real = findings_module.find_contradiction
    raised: list[str] = []

    def failing(x: object, y: object, **kwargs: bool) -> object:
        if "Backups" in getattr(x, "summary", ""):
            raised.append(getattr(x, "summary", ""))
            raise ValueError("a text the reader cannot take")
        return real(x, y, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(findings_module, "find_contradiction", failing)
    (found,) = _of(memory, FindingKind.CONTRADICTION)
    assert set(found.notes) == {a, b}
    assert raised  # the backup pair was compared, and failed


def test_compatible_notes_on_one_topic_do_not_contradict(memory: Memory) -> None:
    _note(memory, "Deploy timeout is 30 seconds", "The deploy step times out after 30 s.")
    _note(memory, "Deploy timeout is half a minute", "Set in deploy.toml.")
    assert _of(memory, FindingKind.CONTRADICTION) == []


# -- broken link, missing file, too long --------------------------------------------------


def test_a_link_to_no_note_is_broken_until_the_note_exists(memory: Memory) -> None:
    src = _note(memory, "Pricing page layout", "See [[pricing-grid-a91]] and [[gone-b22]].")
    _note(memory, "User note", "x", scope="user", id="user-target")
    _note(memory, "Links across scopes", "See [[user-target]].")
    (found,) = _of(memory, FindingKind.BROKEN_LINK)
    assert found.notes == (src,)
    assert found.reason == "links to [[pricing-grid-a91]], [[gone-b22]], which name no note"
    _note(memory, "Pricing grid", id="pricing-grid-a91")
    (found,) = _of(memory, FindingKind.BROKEN_LINK)
    assert found.reason == "links to [[gone-b22]], which names no note"


def test_a_project_note_naming_a_missing_path(memory: Memory, project: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("")
    body = (
        "Entry point `src/app.py`, config in `pyproject.toml`, run ./deploy.sh, see "
        "src/lib/util.py. Docs at https://example.com/a/b.py, e.g. and/or read/write."
    )
    note = _note(memory, "Where the code lives", body)
    _note(memory, "User-scope paths are not checked", "`src/nothing.py`", scope="user")
    (found,) = _of(memory, FindingKind.MISSING_FILE)
    assert found.notes == (note,)
    assert found.reason == (
        "names pyproject.toml, ./deploy.sh, src/lib/util.py, which do not exist in the project"
    )
    for name in ("pyproject.toml", "deploy.sh"):
        (project / name).write_text("")
    (project / "src" / "lib").mkdir()
    (project / "src" / "lib" / "util.py").write_text("")
    assert _of(memory, FindingKind.MISSING_FILE) == []


def test_a_body_over_eight_thousand_characters_is_too_long(memory: Memory) -> None:
    _note(memory, "Just at the limit", "x" * TOO_LONG_CHARS)
    long = _note(memory, "Over the limit", "ü" * (TOO_LONG_CHARS + 1))
    (found,) = _of(memory, FindingKind.TOO_LONG)
    assert found.notes == (long,)
    assert "8,001 characters" in found.reason


# -- unused -------------------------------------------------------------------------------


def test_a_note_neither_recalled_nor_edited_for_unused_days(
    memory: Memory, project: Path, home: Path
) -> None:
    now = int(time.time() * 1000)
    old = now - 120 * DAY_MS
    settings = load_settings(home=home, project_root=project)
    with Memory(settings, clock=lambda: old) as past:
        stale = _note(past, "Old decision nobody reads", "x")
        recalled = _note(past, "Old decision still recalled", "y")
    for note_id in (stale, recalled):
        path = memory.stores.directory("project") / f"{note_id}.md"
        os.utime(path, (old / 1000, old / 1000))
    _note(memory, "A fresh note", "z")
    store = memory.stores.store(Scope.PROJECT)
    memory.usage.record(store.state_key, [recalled])
    (found,) = _of(memory, FindingKind.UNUSED)
    assert found.notes == (stale,)
    assert found.reason.startswith("neither recalled nor edited for 120 days")
    # Edited: no longer unused.
    memory.remember("Old decision nobody reads", "edited", id=stale)
    assert _of(memory, FindingKind.UNUSED) == []


def test_unused_days_comes_from_the_config(project: Path, home: Path) -> None:
    (home / "config.toml").write_text(
        '[embed]\nprovider = "none"\n[memory.consolidate]\nunusedDays = 5\n'
    )
    now = int(time.time() * 1000)
    settings = load_settings(home=home, project_root=project)
    with Memory(settings, clock=lambda: now - 6 * DAY_MS) as past:
        note = _note(past, "Six days old", "x")
    os.utime(past.stores.directory("project") / f"{note}.md", ((now - 6 * DAY_MS) / 1000,) * 2)
    with Memory(settings) as memory:
        assert [f.notes for f in _of(memory, FindingKind.UNUSED)] == [(note,)]


# -- ids, filters ---------------------------------------------------------------------------


def test_ids_are_stable_and_follow_the_notes_hashes(memory: Memory, project: Path) -> None:
    note = _note(memory, "Pricing page layout", "See [[missing-note-a1]].")
    first = memory.tidy.findings()
    assert [f.kind for f in first] == [FindingKind.BROKEN_LINK]
    with Memory.open(project, home=memory.settings.home) as again:
        assert again.tidy.findings() == first
    (found,) = first
    assert found.id == finding_id(FindingKind.BROKEN_LINK, [memory.read(note).hash])
    assert kind_of(found.id) is FindingKind.BROKEN_LINK
    memory.remember("Pricing page layout", "Still see [[missing-note-a1]].", id=note)
    (edited,) = memory.tidy.findings()
    assert edited.id != found.id and edited.notes == found.notes


def test_kind_and_scope_filters(memory: Memory) -> None:
    _note(memory, "Project link", "[[nowhere-a1]]")
    _note(memory, "User link", "[[nowhere-b2]]", scope="user")
    _note(memory, "Long", "x" * (TOO_LONG_CHARS + 1))
    everything = memory.tidy.findings()
    assert {f.kind for f in everything} == {FindingKind.BROKEN_LINK, FindingKind.TOO_LONG}
    assert [f.scope for f in everything if f.kind is FindingKind.BROKEN_LINK] == [
        Scope.PROJECT,
        Scope.USER,
    ]
    assert [f.kind for f in memory.tidy.findings("too_long")] == [FindingKind.TOO_LONG]
    assert [f.scope for f in memory.tidy.findings(["broken_link"], scope="user")] == [Scope.USER]
    assert memory.tidy.findings(["too_long", "broken_link"]) == everything
    with pytest.raises(InvalidInput, match="finding kind must be one of same_topic"):
        memory.tidy.findings(["duplicates"])


def test_private_notes_can_be_hidden(memory: Memory) -> None:
    _note(memory, "Mine", "[[nowhere-a1]]", private=True)
    assert len(memory.tidy.findings()) == 1
    assert memory.tidy.findings(hide_private=True) == []


# -- dismissals ---------------------------------------------------------------------------


def test_a_dismissal_holds_until_a_note_is_edited(memory: Memory, home: Path) -> None:
    note = _note(memory, "Pricing page layout", "See [[missing-note-a1]].")
    _note(memory, "Long", "x" * (TOO_LONG_CHARS + 1))
    broken = memory.tidy.findings("broken_link")[0]
    result = memory.tidy.dismiss(broken.id)
    assert result.changed and result.finding == broken
    assert [f.kind for f in memory.tidy.findings()] == [FindingKind.TOO_LONG]
    assert not memory.tidy.dismiss(broken.id).changed  # a repeat changes nothing
    path = home / "tidy" / "dismissed.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # Edited: the finding is back, under a new id.
    memory.remember("Pricing page layout", "See [[missing-note-a1]] again.", id=note)
    (back,) = memory.tidy.findings("broken_link")
    assert back.id != broken.id and back.notes == (note,)


def test_dismissing_an_unknown_finding_is_not_found(memory: Memory, home: Path) -> None:
    _note(memory, "Pricing page layout", "See [[missing-note-a1]].")
    for bad in ("broken_link-000000000000", "nonsense", "", "too_long-xyz"):
        with pytest.raises(NotFound, match="no finding"):
            memory.tidy.dismiss(bad)
    assert not (home / "tidy" / "dismissed.json").exists()


def test_the_same_findings_after_the_index_is_deleted(memory: Memory, project: Path) -> None:
    _note(memory, "Use pnpm for package management", "pnpm only. `src/gone.py`")
    _note(memory, "Package management uses pnpm", "Not npm. [[nowhere-a1]]")
    _note(memory, "Deploy timeout is 30 seconds", "It times out after 30 s.")
    _note(memory, "Deploy timeout is 60 seconds", "It times out after 60 s.")
    before = memory.tidy.findings()
    assert {f.kind for f in before} == {
        FindingKind.SAME_TOPIC,
        FindingKind.CONTRADICTION,
        FindingKind.BROKEN_LINK,
        FindingKind.MISSING_FILE,
    }
    memory.close()
    index = memory.settings.home / "index"
    assert index.is_dir()
    for path in index.iterdir():
        path.unlink()
    with Memory.open(project, home=memory.settings.home) as fresh:
        assert fresh.tidy.findings() == before
