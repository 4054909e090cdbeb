"""Tests for `memory/notes.py` through `Memory`: remember (create, update, refusals, the
credential guard), read, list, history, diff and links."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memdir import Conflict, InvalidInput, Memory, NoteType, NotFound, Scope, SecretRefused

from .helpers import frontmatter, note_file, snapshot


def test_remember_creates_note_with_id_from_summary_and_random_suffix(memory: Memory) -> None:
    r = memory.remember("Pricing cards use fills, not borders", "Cards are separated by fill.")
    assert r.created and r.changed
    assert re.fullmatch(r"pricing-cards-use-fills-not-[0-9a-f]{3}", r.note.id)
    path = note_file(memory, r.note.id)
    assert path.is_file()
    assert r.note.path == path
    assert r.note.scope is Scope.PROJECT
    doc = frontmatter(path)
    assert doc["id"] == r.note.id
    assert doc["summary"] == "Pricing cards use fills, not borders"
    assert doc["createdAt"] == doc["updatedAt"]
    assert path.read_text("utf-8").endswith("Cards are separated by fill.\n")


def test_same_summary_twice_gets_two_ids(memory: Memory) -> None:
    a = memory.remember("Deploy on Fridays is forbidden")
    b = memory.remember("Deploy on Fridays is forbidden")
    assert a.note.id != b.note.id
    assert {n.id for n in memory.notes.list()} == {a.note.id, b.note.id}


@pytest.mark.parametrize(
    ("note_type", "scope", "expected"),
    [
        ("user", None, Scope.USER),
        ("feedback", None, Scope.PROJECT),
        ("project", None, Scope.PROJECT),
        ("reference", None, Scope.PROJECT),
        (None, None, Scope.PROJECT),
        ("project", "user", Scope.USER),
        ("user", "project", Scope.PROJECT),
    ],
)
def test_default_scope_by_type_and_explicit_scope_wins(
    memory: Memory,
    home: Path,
    project: Path,
    note_type: str | None,
    scope: str | None,
    expected: Scope,
) -> None:
    r = memory.remember("Prefers short answers", "Code first.", type=note_type, scope=scope)
    assert r.note.scope is expected
    where = home / "memory" / "user" if expected is Scope.USER else project / "MEMORY"
    assert (where / f"{r.note.id}.md").is_file()
    other = project / "MEMORY" if expected is Scope.USER else home / "memory" / "user"
    assert not (other / f"{r.note.id}.md").exists()
    assert memory.read(r.note.id).scope is expected


def test_tags_are_trimmed_split_and_deduplicated(memory: Memory) -> None:
    r = memory.remember("Tagged note", tags=" design, ui  layout,design , UI")
    assert r.note.tags == ("design", "ui", "layout")
    assert frontmatter(note_file(memory, r.note.id))["tags"] == ["design", "ui", "layout"]
    r2 = memory.remember("Tagged list", tags=["a b", " c ", "a"])
    assert r2.note.tags == ("a", "b", "c")


def test_remember_returns_nearest_and_flags_a_near_copy(memory: Memory) -> None:
    first = memory.remember(
        "Pricing cards use fills, not borders",
        "Cards on the pricing page are separated by fill and whitespace.",
        tags="design, pricing",
    )
    memory.remember("Database backups run nightly", "Postgres dumps go to the backup bucket.")
    copy = memory.remember(
        "Pricing cards use fills instead of borders",
        "Cards on the pricing page are separated by fill and whitespace.",
        tags="design, pricing",
    )
    assert copy.likely_duplicate
    assert copy.duplicate_of == first.note.id
    assert copy.nearest[0].note_id == first.note.id
    assert all(n.note_id != copy.note.id for n in copy.nearest)
    unrelated = memory.remember("Release train leaves on Tuesdays", "Tag the release at noon.")
    assert not unrelated.likely_duplicate
    assert unrelated.duplicate_of is None


def test_remember_reports_dangling_links_and_keeps_them(memory: Memory) -> None:
    target = memory.remember("Layout grid", "Three columns.")
    r = memory.remember("Cards", f"See [[{target.note.id}]] and [[missing-id]] and [[missing-id]].")
    assert r.dangling_links == ("missing-id",)
    assert "[[missing-id]]" in note_file(memory, r.note.id).read_text("utf-8")


def test_update_keeps_created_at_and_unknown_keys_and_bumps_updated_at(memory: Memory) -> None:
    r = memory.remember("Cache policy", "Cache for an hour.", tags="perf")
    path = note_file(memory, r.note.id)
    doc = frontmatter(path)
    doc["x-custom"] = {"nested": [1, 2]}
    doc["zeta"] = "kept"
    text = path.read_text("utf-8").split("\n", 2)
    path.write_text(
        "---\n" + json.dumps(doc) + "\n" + text[2], encoding="utf-8"
    )  # a future version's keys
    updated = memory.remember("Cache policy", "Cache for a day.", id=r.note.id)
    assert not updated.created and updated.changed
    assert updated.note.id == r.note.id
    after = frontmatter(path)
    assert after["createdAt"] == r.note.created_at
    assert isinstance(after["updatedAt"], int) and after["updatedAt"] > r.note.updated_at
    assert after["x-custom"] == {"nested": [1, 2]}
    assert after["zeta"] == "kept"
    assert after["tags"] == ["perf"]
    assert memory.read(r.note.id).body == "Cache for a day."


def test_update_with_none_keeps_tags_body_and_type(memory: Memory) -> None:
    r = memory.remember("Lint rules", "Ruff with line length 100.", type="project", tags="lint")
    u = memory.remember("Lint rules are strict", id=r.note.id)
    assert u.changed
    note = memory.read(r.note.id)
    assert note.summary == "Lint rules are strict"
    assert note.body == "Ruff with line length 100."
    assert note.tags == ("lint",)
    assert note.type is NoteType.PROJECT
    cleared = memory.remember("Lint rules are strict", "", type="", tags=(), id=r.note.id)
    assert cleared.note.body == "" and cleared.note.tags == ()
    assert cleared.note.type is None
    assert "type" not in frontmatter(note_file(memory, r.note.id))


def test_supersedes_accepts_any_iterable(memory: Memory) -> None:
    old = memory.remember("Old decision", "we use tabs")
    gen = memory.remember("New decision", "spaces", supersedes=(i for i in [old.note.id]))
    assert gen.note.supersedes == (old.note.id,)
    assert frontmatter(note_file(memory, gen.note.id))["supersedes"] == [old.note.id]
    one = memory.remember("Newer decision", "two spaces", supersedes=old.note.id)
    assert one.note.supersedes == (old.note.id,)
    kept = memory.remember("Newer decision", "four spaces", id=one.note.id)
    assert kept.note.supersedes == (old.note.id,)


def test_unchanged_content_writes_nothing(memory: Memory) -> None:
    r = memory.remember("Stable note", "Same body.", tags="a, b")
    path = note_file(memory, r.note.id)
    before = path.read_bytes()
    versions = len(memory.notes.history(r.note.id))
    again = memory.remember("Stable note", "Same body.", tags="a,b", id=r.note.id)
    assert not again.changed and not again.created
    assert again.revision == r.revision
    assert path.read_bytes() == before
    assert len(memory.notes.history(r.note.id)) == versions


def test_update_in_the_note_s_own_scope(memory: Memory, home: Path) -> None:
    r = memory.remember("Likes tabs", type="user")
    u = memory.remember("Likes tabs over spaces", id=r.note.id)
    assert u.note.scope is Scope.USER
    assert (home / "memory" / "user" / f"{r.note.id}.md").is_file()
    assert not (memory.stores.directory("project") / f"{r.note.id}.md").exists()


def test_id_existing_in_other_scope_is_a_conflict(memory: Memory) -> None:
    r = memory.remember("User fact", type="user")
    with pytest.raises(Conflict):
        memory.remember("Project copy", id=r.note.id, scope="project")


def test_create_with_explicit_id(memory: Memory) -> None:
    r = memory.remember("Explicit", id="my-note-1")
    assert r.created and r.note.id == "my-note-1"
    assert note_file(memory, "my-note-1").is_file()


@pytest.mark.parametrize(
    "bad_id",
    ["../x", "a/b", "a\\b", "x\x00y", "/etc/passwd", "con", "a" * 81, "Note-A", "", "-lead", "x.y"],
)
def test_bad_ids_are_refused_and_nothing_is_written(
    seeded: Memory, project: Path, home: Path, bad_id: str
) -> None:
    before = snapshot(project, home)
    with pytest.raises(InvalidInput):
        seeded.remember("Some summary", "Body.", id=bad_id)
    assert snapshot(project, home) == before
    assert not (project / "x").exists() and not (project.parent / "x.md").exists()


# `con` is no id (a reserved file name) but may begin one, so readers take it as a prefix
# (tests/memory/test_prefix_ids.py); it is refused as an id to write, above.
@pytest.mark.parametrize("bad_id", ["../x", "a/b", "/etc/passwd", "Note-A"])
def test_bad_ids_are_refused_by_every_reader(seeded: Memory, bad_id: str) -> None:
    with pytest.raises(InvalidInput):
        seeded.read(bad_id)
    with pytest.raises(InvalidInput):
        seeded.notes.history(bad_id)
    with pytest.raises(InvalidInput):
        seeded.forget(bad_id)


def test_eighty_char_id_is_accepted(memory: Memory) -> None:
    r = memory.remember("Long id", id="a" * 80)
    assert r.note.id == "a" * 80


def test_case_only_clash_with_file_on_disk_is_a_conflict(
    seeded: Memory, project: Path, home: Path
) -> None:
    foo = project / "MEMORY" / "Foo.md"
    foo.write_bytes(b'---\n{"id":"Foo","summary":"hand made"}\n---\nbody\n')
    before = snapshot(project, home)
    with pytest.raises(Conflict, match="Foo"):
        seeded.remember("Lower-case twin", id="foo")
    assert snapshot(project, home) == before
    # an upper-case file name is not a valid note id: doctor reports it, untouched
    report = seeded.upkeep.doctor()
    assert foo in [p.path for p in report.problems]
    assert foo.read_bytes() == before[str(foo)]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"summary": ""}, InvalidInput),
        ({"summary": "   "}, InvalidInput),
        ({"summary": "two\nlines"}, InvalidInput),
        ({"summary": "two\rlines"}, InvalidInput),
        ({"summary": "x" * 301}, InvalidInput),
        ({"summary": "ok", "type": "opinion"}, InvalidInput),
        ({"summary": "ok", "scope": "global"}, InvalidInput),
        ({"summary": "ok", "body": "nul\x00inside"}, InvalidInput),
        ({"summary": "ok", "tags": ["bad\x01tag"]}, InvalidInput),
    ],
)
def test_bad_fields_are_refused_and_nothing_is_written(
    seeded: Memory, project: Path, home: Path, kwargs: dict[str, object], error: type
) -> None:
    before = snapshot(project, home)
    with pytest.raises(error):
        seeded.remember(**kwargs)  # type: ignore[arg-type]
    assert snapshot(project, home) == before


def test_refused_first_write_creates_no_directories(memory: Memory, project: Path) -> None:
    with pytest.raises(InvalidInput):
        memory.remember("two\nlines")
    assert not (project / "MEMORY").exists()


AWS_KEY = "AKIA" + "Q7W2E9R4T6Y8U1I3"


PASSWORD = "Zx9" + "!qLm#42vRtWp"


def _parts(secret: str, size: int = 5) -> list[str]:
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


def assert_no_part(text: str, secret: str) -> None:
    for part in _parts(secret):
        assert part not in text, f"{part!r} leaked"


def assert_no_part_on_disk(roots: list[Path], secret: str) -> None:
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file():
                data = path.read_bytes().decode("utf-8", "replace")
                for part in _parts(secret):
                    assert part not in data, f"{part!r} leaked into {path}"


@pytest.mark.parametrize(
    ("kwargs", "secret", "line"),
    [
        ({"body": f"line one\nline two\naws_key {AWS_KEY}\n"}, AWS_KEY, 3),
        ({"summary": f"key {AWS_KEY}"}, AWS_KEY, 1),
        ({"tags": f"infra {AWS_KEY}"}, AWS_KEY, 1),
        ({"body": f"intro\npassword = {PASSWORD}\n"}, PASSWORD, 2),
    ],
)
def test_secret_is_refused_without_leaking_it(
    seeded: Memory,
    project: Path,
    home: Path,
    kwargs: dict[str, str],
    secret: str,
    line: int,
) -> None:
    args: dict[str, str] = {"summary": "Deploy notes", "body": "ok"}
    args.update(kwargs)
    before = snapshot(project, home)
    with pytest.raises(SecretRefused) as info:
        seeded.remember(**args)  # type: ignore[arg-type]
    exc = info.value
    message = str(exc)
    assert f"line {line}" in message
    assert exc.findings and all(f[2] == line for f in exc.findings)
    assert all(f[0] and f[0] in message for f in exc.findings)  # names the kind
    assert_no_part(message, secret)
    assert_no_part(repr(exc), secret)
    assert_no_part(repr(exc.args), secret)
    assert snapshot(project, home) == before
    assert_no_part_on_disk([project, home], secret)


def test_secret_in_update_is_refused_and_old_version_kept(
    seeded: Memory, project: Path, home: Path
) -> None:

    path = note_file(seeded, "note-a")
    before = snapshot(project, home)
    with pytest.raises(SecretRefused):
        seeded.remember("Note a", f"now with {AWS_KEY}", id="note-a")
    assert snapshot(project, home) == before
    assert seeded.read("note-a").body == "Body a."
    assert_no_part_on_disk([project, home], AWS_KEY)
    assert path.is_file()


def test_links_resolve_project_first_then_user(memory: Memory, project: Path) -> None:
    user = memory.remember("Shared name user side", "user version", id="shared-x", scope="user")
    only_user = memory.remember("Only in user", "u", type="user")
    source = memory.remember(
        "Source", f"See [[shared-x]], [[{only_user.note.id}]] and [[nowhere-1]]."
    )
    report = memory.notes.links(source.note.id)
    resolved = {link.target: link.scope for link in report.outgoing}
    assert resolved == {"shared-x": Scope.USER, only_user.note.id: Scope.USER, "nowhere-1": None}
    assert report.dangling == ("nowhere-1",)
    # a project note of the same id (placed by hand, e.g. by git pull) wins
    (project / "MEMORY" / "shared-x.md").write_bytes(
        b'---\n{"id":"shared-x","summary":"Shared name project side"}\n---\nproject version\n'
    )
    report = memory.notes.links(source.note.id)
    first = report.outgoing[0]
    assert (first.target, first.scope, first.summary) == (
        "shared-x",
        Scope.PROJECT,
        "Shared name project side",
    )
    assert user.note.scope is Scope.USER


def test_backlinks(memory: Memory) -> None:
    target = memory.remember("Target", "t")
    a = memory.remember("Points at target", f"see [[{target.note.id}]]")
    b = memory.remember("Also points", f"[[{target.note.id}]]", type="user")
    memory.remember("Unrelated", "nothing")
    report = memory.notes.links(target.note.id)
    assert {(link.target, link.scope) for link in report.backlinks} == {
        (a.note.id, Scope.PROJECT),
        (b.note.id, Scope.USER),
    }
    assert report.outgoing == ()


def test_history_lists_versions_oldest_first_with_current_marked(memory: Memory) -> None:
    r1 = memory.remember("Versioned", "first body")
    r2 = memory.remember("Versioned", "second body", id=r1.note.id)
    r3 = memory.remember("Versioned", "third body", id=r1.note.id)
    entries = memory.notes.history(r1.note.id)
    revs = [e.revision for e in entries]
    assert revs == [r1.revision, r2.revision, r3.revision]
    assert [e.current for e in entries] == [False, False, True]
    assert [e.ts for e in entries] == sorted(e.ts for e in entries)
    assert memory.read(r1.note.id, revision=r1.revision).body == "first body"
    assert memory.read(r1.note.id, revision=r2.revision[:8]).body == "second body"
    assert memory.read(r1.note.id).body == "third body"


def test_read_unknown_revision(memory: Memory) -> None:
    r = memory.remember("Versioned", "first body")
    with pytest.raises(NotFound):
        memory.read(r.note.id, revision="0000000000")
    with pytest.raises(InvalidInput):
        memory.read(r.note.id, revision="xyz!")
    with pytest.raises(NotFound):
        memory.read("no-such-note")


def test_diff_shows_changed_lines(memory: Memory) -> None:
    r1 = memory.remember("Diffed", "keep this line\nold wording here\n")
    r2 = memory.remember("Diffed", "keep this line\nnew wording here\n", id=r1.note.id)
    text = memory.notes.diff(r1.note.id)
    assert "-old wording here" in text
    assert "+new wording here" in text
    assert "-keep this line" not in text
    explicit = memory.notes.diff(r1.note.id, r1.revision[:10], r2.revision[:10])
    assert explicit == text
    reverse = memory.notes.diff(r1.note.id, r2.revision, r1.revision)
    assert "-new wording here" in reverse and "+old wording here" in reverse


def test_diff_against_an_old_revision_compares_with_its_predecessor(memory: Memory) -> None:
    r1 = memory.remember("Three versions", "version one")
    r2 = memory.remember("Three versions", "version two", id=r1.note.id)
    memory.remember("Three versions", "version three", id=r1.note.id)
    text = memory.notes.diff(r1.note.id, b=r2.revision[:8])
    assert "-version one" in text and "+version two" in text
    assert "version three" not in text
    assert memory.notes.diff(r1.note.id, b=r1.revision) == ""


def test_diff_of_a_single_version_is_empty(memory: Memory) -> None:
    r = memory.remember("Only one", "body")
    assert memory.notes.diff(r.note.id) == ""


def test_external_edit_is_seen_at_once_and_recorded(memory: Memory) -> None:
    r = memory.remember("Edited by hand", "original text")
    assert [n.body for n in memory.notes.list()] == ["original text"]
    path = note_file(memory, r.note.id)
    doc = frontmatter(path)
    doc["updatedAt"] = r.note.updated_at + 5
    edited = ("---\n" + json.dumps(doc) + "\n---\nchanged in an editor, longer\n").encode()
    path.write_bytes(edited)
    assert [n.body for n in memory.notes.list()] == ["changed in an editor, longer"]
    assert memory.read(r.note.id).body == "changed in an editor, longer"
    entries = memory.notes.history(r.note.id)
    assert len(entries) == 2
    assert entries[-1].current and entries[-1].event == "observed"
    assert memory.read(r.note.id, revision=entries[0].revision).body == "original text"
    assert "+changed in an editor, longer" in memory.notes.diff(r.note.id)


def test_a_hand_edit_moves_the_note_first_in_list(memory: Memory, project: Path) -> None:
    """`list` says "most recently updated first": an edit in an editor (the frontmatter's
    updatedAt left as it was) counts as updated when memdir saw it, here and in a new
    process; a file seen for the first time (a clone) keeps its frontmatter time."""
    old = memory.remember("Older note", "first", id="older-note")
    newer = memory.remember("Newer note", "second", id="newer-note")
    cloned = project / "MEMORY" / "pulled-in.md"
    cloned.write_bytes(
        b'---\n{"id":"pulled-in","summary":"From a clone","updatedAt":1000}\n---\nx\n'
    )
    assert [n.id for n in memory.notes.list()] == ["newer-note", "older-note", "pulled-in"]
    path = note_file(memory, old.note.id)
    path.write_bytes(path.read_bytes().replace(b"first\n", b"first, edited by hand\n"))
    listed = memory.notes.list()
    assert [n.id for n in listed] == ["older-note", "newer-note", "pulled-in"]
    seen = memory.notes.history(old.note.id)[-1]
    assert seen.event == "observed" and listed[0].updated_at > newer.note.updated_at
    # `read` says the same time as `list`, here and in a new process
    assert memory.read(old.note.id).updated_at == listed[0].updated_at
    assert memory.notes.read_current(old.note.id).note.updated_at == listed[0].updated_at
    assert Memory.open(project, home=memory.home).read(old.note.id).updated_at == (
        listed[0].updated_at
    )
    again = Memory.open(project, home=memory.home)
    assert [n.id for n in again.notes.list()] == ["older-note", "newer-note", "pulled-in"]
    # the next write through memdir carries the time on
    again.remember("Newer note", "second, rewritten", id="newer-note")
    assert [n.id for n in again.notes.list()][:2] == ["newer-note", "older-note"]


def test_externally_added_and_removed_files(memory: Memory, project: Path) -> None:
    memory.remember("Exists", "x")
    added = project / "MEMORY" / "added-by-git.md"
    added.write_bytes(b'---\n{"id":"added-by-git","summary":"Pulled in"}\n---\npulled body\n')
    assert "added-by-git" in {n.id for n in memory.notes.list()}
    assert [h.note_id for h in memory.search("pulled", method="lexical")] == ["added-by-git"]
    assert memory.search("pulled")[0].note_id == "added-by-git"
    added.unlink()
    assert "added-by-git" not in {n.id for n in memory.notes.list()}
    with pytest.raises(NotFound):
        memory.read("added-by-git")


def test_list_filters_and_order(memory: Memory) -> None:
    a = memory.remember("Alpha", type="project", tags="x")
    b = memory.remember("Beta", type="user", tags="y, X")
    c = memory.remember("Gamma", type="feedback")
    assert [n.id for n in memory.notes.list()] == [c.note.id, b.note.id, a.note.id]
    assert [n.id for n in memory.notes.list(scope="user")] == [b.note.id]
    assert [n.id for n in memory.notes.list(type="feedback")] == [c.note.id]
    assert {n.id for n in memory.notes.list(tag="x")} == {a.note.id, b.note.id}
    assert memory.notes.list(scope="project", tag="y") == []
    with pytest.raises(InvalidInput):
        memory.notes.list(type="bogus")


def test_the_size_limit_is_checked_before_the_credential_guard(memory: Memory) -> None:
    """Issue 24: a huge body is refused for its size at once, not after the guard has read
    all of it (a 60 MiB file took 23 s): a body both too large and holding a credential is
    refused as too large, and nothing is written."""
    from memdir import LimitExceeded

    token = "ghp_Zq7abcdefghijklmnopqrstuvwxyz0123456"
    body = ("padding " * 40_000) + token  # 320 KB > the 128 KiB default
    with pytest.raises(LimitExceeded):
        memory.remember("Huge", body)
    with pytest.raises(LimitExceeded):
        memory.remember("Huge", body, id="huge-one")
    assert memory.list() == []
