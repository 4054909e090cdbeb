"""Tests for `memory/exporting.py` through `Memory.export`, and the round trip through
`Memory.import_from(..., "memdir")` (§5 import and export): the archive and folder layouts,
the index, the refusals (an existing or unplaceable OUT, unparseable notes), and that an
export imported into a fresh store gives back the same ids, hashes, timestamps, scopes,
private flags, supersedes, unknown frontmatter keys and links."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from files import snapshot
from memdir import Memory
from memdir.core import Note, NoteType, Scope, render_note
from memdir.errors import InvalidInput

FORMATS = {"tar.gz": "out.tar.gz", "zip": "out.zip", "markdown": "out"}
T0 = 1_789_000_000_000


def _write(memory: Memory, note: Note, scope: Scope) -> None:
    folder = memory.stores.directory(scope)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{note.id}.md").write_bytes(render_note(note))


def build_store(memory: Memory) -> dict[str, Scope]:
    """A store with project and user notes of every kind; the scope of each id."""
    notes = [
        (
            Note(
                id="pricing-borders-1a2",
                summary="Pricing cards use borders",
                body="Outlined cards.",
                type=NoteType.PROJECT,
                tags=("design",),
                created_at=T0,
                updated_at=T0 + 5,
            ),
            Scope.PROJECT,
        ),
        (
            Note(
                id="pricing-fills-3fa",
                summary="Pricing cards use fills, not borders",
                body=(
                    "Cards are separated by fill.\n\n**Why:** outlines were loud.\n\n"
                    "See [[pricing-layout-a91]] and [[user-terse-77c]]; "
                    "also [[nobody-wrote-this-0]]."
                ),
                type=NoteType.FEEDBACK,
                tags=("design", "pricing"),
                created_at=T0 + 1000,
                updated_at=T0 + 2000,
                supersedes=("pricing-borders-1a2",),
            ),
            Scope.PROJECT,
        ),
        (
            Note(
                id="pricing-layout-a91",
                summary="Pricing layout lives in docs/pricing.md",
                body="Grid of three.",
                type=NoteType.REFERENCE,
                created_at=T0 + 3000,
                updated_at=T0 + 3000,
                extra=(("x-color", "blue"), ("x-meta", {"a": [1, 2], "ü": "ß"})),
            ),
            Scope.PROJECT,
        ),
        (
            Note(
                id="preiskarten-rahmen-b07",
                summary="Preiskarten: Rahmen durchsichtig — „Größe“ 東京オフィス ✓",
                body="Über den Rahmen: 透明. Ünïcödé bleibt.",
                type=NoteType.PROJECT,
                tags=("größe", "東京"),
                created_at=T0 + 4000,
                updated_at=T0 + 9000,
                private=True,
            ),
            Scope.PROJECT,
        ),
        (
            Note(
                id="legacy-untyped-c11",
                summary="A note from before types existed",
                body="",
                created_at=T0 + 5000,
                updated_at=T0 + 5000,
            ),
            Scope.PROJECT,
        ),
        (
            Note(
                id="user-terse-77c",
                summary="Prefers terse answers — kurz und bündig",
                body="No preamble. Links back to [[pricing-fills-3fa]].",
                type=NoteType.USER,
                tags=("style",),
                created_at=T0 + 6000,
                updated_at=T0 + 7000,
            ),
            Scope.USER,
        ),
        (
            Note(
                id="user-private-d22",
                summary="Works late on Thursdays",
                type=NoteType.USER,
                created_at=T0 + 8000,
                updated_at=T0 + 8000,
                private=True,
                extra=(("x-origin", "hand-written"),),
            ),
            Scope.USER,
        ),
    ]
    for note, scope in notes:
        _write(memory, note, scope)
    written = memory.remember("Deploys go out on Tuesdays", "Via the release train.", id="deploys")
    out = {n.id: s for n, s in notes}
    out[written.note.id] = Scope.PROJECT
    return out


def fingerprint(memory: Memory) -> dict[tuple[str, str], tuple[object, ...]]:
    """What a round trip must keep, per (scope, id)."""
    out: dict[tuple[str, str], tuple[object, ...]] = {}
    for scope in memory.scopes:
        for note in memory.notes.list(scope=scope):
            out[(scope.value, note.id)] = (
                note.hash,
                note.summary,
                note.body,
                note.type,
                note.tags,
                note.created_at,
                note.updated_at,
                note.supersedes,
                note.private,
                note.extra,
            )
    return out


@pytest.fixture
def store(memory: Memory, home: Path) -> dict[str, Scope]:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    return build_store(memory)


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Memory]:
    """A second, empty store: another project and another home."""
    (tmp_path / "project2").mkdir()
    (tmp_path / "home2").mkdir()
    (tmp_path / "home2" / "config.toml").write_text('[embed]\nprovider = "none"\n', "utf-8")
    m = Memory.open(tmp_path / "project2", home=tmp_path / "home2")
    try:
        yield m
    finally:
        m.close()


def _members(out: Path, fmt: str) -> dict[str, bytes]:
    """The export's files by path below its top folder, in archive order."""
    if fmt == "markdown":
        return {
            str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()
        }
    if fmt == "zip":
        with zipfile.ZipFile(out) as archive:
            return {
                i.filename.split("/", 1)[1]: archive.read(i)
                for i in archive.infolist()
                if not i.is_dir()
            }
    with tarfile.open(out, "r:gz") as archive:
        got = {}
        for member in archive.getmembers():
            if member.isfile():
                handle = archive.extractfile(member)
                assert handle is not None
                got[member.name.split("/", 1)[1]] = handle.read()
        return got


# -- layout ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_export_holds_an_index_a_readme_and_the_files_as_on_disk(
    memory: Memory, store: dict[str, Scope], tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / FORMATS[fmt]
    report = memory.exporter.run(out, format=fmt)
    assert report.format == fmt
    assert report.notes == len(store)
    assert report.by_scope == {"project": 6, "user": 2}
    assert report.skipped == ()
    members = _members(out, fmt)
    if fmt != "markdown":
        assert next(iter(members)) == "index.json"  # a reader finds it first
    index = json.loads(members["index.json"])
    assert index["format"] == "memdir-export"
    assert index["version"] == 1
    listed = {e["id"]: e for e in index["notes"]}
    assert set(listed) == set(store)
    for note_id, scope in store.items():
        on_disk = (memory.stores.directory(scope) / f"{note_id}.md").read_bytes()
        assert members[f"{scope.value}/{note_id}.md"] == on_disk
        entry = listed[note_id]
        assert entry["scope"] == scope.value
        assert entry["hash"] == memory.read(note_id).hash
    readme = members["README.md"].decode("utf-8")
    assert "--from memdir" in readme
    assert "Preiskarten: Rahmen durchsichtig" in readme  # non-ASCII summaries readable


def test_export_of_one_scope_holds_only_it(
    memory: Memory, store: dict[str, Scope], tmp_path: Path
) -> None:
    report = memory.exporter.run(tmp_path / "user.zip", scope="user")
    assert report.by_scope == {"user": 2}
    members = _members(tmp_path / "user.zip", "zip")
    assert sorted(m for m in members if m.endswith(".md") and m != "README.md") == [
        "user/user-private-d22.md",
        "user/user-terse-77c.md",
    ]


def test_format_comes_from_the_name(
    memory: Memory, store: dict[str, Scope], tmp_path: Path
) -> None:
    assert memory.exporter.run(tmp_path / "a.tgz").format == "tar.gz"
    assert memory.exporter.run(tmp_path / "b.ZIP").format == "zip"
    assert memory.exporter.run(tmp_path / "plainfolder").format == "markdown"
    assert (tmp_path / "plainfolder" / "index.json").is_file()


# -- round trip --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("named", [True, False], ids=["from-memdir", "detected"])
def test_round_trip_gives_back_the_same_notes(
    memory: Memory,
    store: dict[str, Scope],
    fresh: Memory,
    tmp_path: Path,
    fmt: str,
    named: bool,
) -> None:
    before = fingerprint(memory)
    assert len(before) == len(store)
    out = tmp_path / FORMATS[fmt]
    memory.exporter.run(out, format=fmt)

    report = fresh.importer.run(out, "memdir" if named else None)
    assert report.kind == "memdir"
    assert (report.imported, report.updated, report.unchanged) == (len(store), 0, 0)
    assert report.refused == ()
    assert report.problems == ()
    assert sorted(report.notes) == sorted(store)
    assert fingerprint(fresh) == before
    for note_id, scope in store.items():
        # no source pointer is added: the files come back as they were
        copied = (fresh.stores.directory(scope) / f"{note_id}.md").read_bytes()
        assert copied == (memory.stores.directory(scope) / f"{note_id}.md").read_bytes()
    links = {link.target: link.scope for link in fresh.notes.links("pricing-fills-3fa").outgoing}
    assert links == {
        "pricing-layout-a91": Scope.PROJECT,
        "user-terse-77c": Scope.USER,
        "nobody-wrote-this-0": None,
    }

    copy = snapshot(fresh.stores.directory("project"), fresh.stores.directory("user"))
    again = fresh.importer.run(out, "memdir" if named else None)
    assert (again.imported, again.updated, again.unchanged) == (0, 0, len(store))
    assert again.backup_ids == ()
    assert snapshot(fresh.stores.directory("project"), fresh.stores.directory("user")) == copy


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_importing_an_export_into_its_own_store_changes_nothing(
    memory: Memory, store: dict[str, Scope], tmp_path: Path, home: Path, fmt: str
) -> None:
    out = tmp_path / FORMATS[fmt]
    memory.exporter.run(out, format=fmt)
    folders = (memory.stores.directory("project"), memory.stores.directory("user"))
    before = snapshot(*folders)
    backups = len(memory.backups(limit=None))
    report = memory.importer.run(out, "memdir")
    assert (report.imported, report.updated, report.unchanged) == (0, 0, len(store))
    assert report.refused == () and report.problems == ()
    assert snapshot(*folders) == before
    assert len(memory.backups(limit=None)) == backups


def test_an_export_edited_afterwards_is_refused_for_that_note_only(
    memory: Memory, store: dict[str, Scope], fresh: Memory, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    memory.exporter.run(out, format="markdown")
    edited = out / "project" / "legacy-untyped-c11.md"
    edited.write_bytes(edited.read_bytes() + b"changed by hand\n")
    report = fresh.importer.run(out, "memdir")
    assert report.imported == len(store) - 1
    assert [p.source for p in report.problems] == ["project/legacy-untyped-c11.md"]
    assert "hash" in report.problems[0].reason


def test_export_of_a_scope_round_trips_into_that_scope_only(
    memory: Memory, store: dict[str, Scope], fresh: Memory, tmp_path: Path
) -> None:
    memory.exporter.run(tmp_path / "user.tar.gz", scope="user")
    report = fresh.importer.run(tmp_path / "user.tar.gz")
    assert report.by_scope == {"user": 2}
    assert {n.id for n in fresh.notes.list(scope="user")} == {"user-terse-77c", "user-private-d22"}
    assert fresh.notes.list(scope="project") == []


# -- refusals ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_an_existing_out_is_never_overwritten(
    memory: Memory, store: dict[str, Scope], tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / FORMATS[fmt]
    if fmt == "markdown":
        out.mkdir()
        (out / "mine.txt").write_text("keep me", "utf-8")
    else:
        out.write_bytes(b"keep me")
    before = snapshot(tmp_path / FORMATS[fmt]) if fmt == "markdown" else out.read_bytes()
    with pytest.raises(InvalidInput, match="exists already"):
        memory.exporter.run(out, format=fmt)
    after = snapshot(tmp_path / FORMATS[fmt]) if fmt == "markdown" else out.read_bytes()
    assert after == before


def test_a_symlink_out_is_refused(memory: Memory, store: dict[str, Scope], tmp_path: Path) -> None:
    target = tmp_path / "target.zip"
    (tmp_path / "link.zip").symlink_to(target)
    with pytest.raises(InvalidInput, match="exists already"):
        memory.exporter.run(tmp_path / "link.zip")
    assert not target.exists()


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_missing_folder_for_out_is_a_clear_error(
    memory: Memory, store: dict[str, Scope], tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / "no" / "such" / FORMATS[fmt]
    with pytest.raises(InvalidInput, match="no folder"):
        memory.exporter.run(out, format=fmt)
    assert not (tmp_path / "no").exists()


def test_an_unknown_format_is_refused(
    memory: Memory, store: dict[str, Scope], tmp_path: Path
) -> None:
    with pytest.raises(InvalidInput, match="format"):
        memory.exporter.run(tmp_path / "out.rar", format="rar")
    assert not (tmp_path / "out.rar").exists()


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_unparseable_notes_are_skipped_named_and_left_alone(
    memory: Memory, store: dict[str, Scope], fresh: Memory, tmp_path: Path, fmt: str
) -> None:
    folder = memory.stores.directory("project")
    bad = {
        "broken-json.md": b'---\n{"id":"broken-json","summary":\n---\nbody\n',
        "no-frontmatter.md": b"---\n\n***\n",  # no frontmatter and no text: no note
        "bad-yaml.md": b"---\ntitle: [unclosed\n---\nbody\n",
        "bad-utf8.md": b'---\n{"id":"bad-utf8","summary":"x"}\n---\n\xff\xfe\n',
    }
    for name, data in bad.items():
        (folder / name).write_bytes(data)
    out = tmp_path / FORMATS[fmt]
    report = memory.exporter.run(out, format=fmt)
    assert sorted(report.skipped) == sorted(f"project/{name}" for name in bad)
    assert report.notes == len(store)
    for name, data in bad.items():
        assert (folder / name).read_bytes() == data
        assert f"project/{name}" not in _members(out, fmt)
    imported = fresh.importer.run(out)
    assert imported.imported == len(store)
    assert imported.problems == ()


def test_an_empty_store_exports_and_imports_nothing(
    memory: Memory, fresh: Memory, tmp_path: Path
) -> None:
    report = memory.exporter.run(tmp_path / "empty.zip")
    assert report.notes == 0
    back = fresh.importer.run(tmp_path / "empty.zip")
    assert (back.imported, back.updated, back.unchanged) == (0, 0, 0)


def test_export_writes_nothing_into_the_store(
    memory: Memory, store: dict[str, Scope], tmp_path: Path
) -> None:
    folders = (memory.stores.directory("project"), memory.stores.directory("user"))
    before = snapshot(*folders)
    memory.exporter.run(tmp_path / "x.tar.gz")
    memory.exporter.run(tmp_path / "x.zip")
    memory.exporter.run(tmp_path / "x")
    assert snapshot(*folders) == before


def test_a_tar_export_is_readable_by_a_plain_tar_reader(
    memory: Memory, store: dict[str, Scope], tmp_path: Path
) -> None:
    memory.exporter.run(tmp_path / "out.tar.gz")
    data = (tmp_path / "out.tar.gz").read_bytes()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        names = archive.getnames()
    assert all(n == "out" or n.startswith("out/") for n in names)
    assert "out/index.json" in names
    assert "out/user/user-terse-77c.md" in names


# -- importing an export over notes that exist ------------------------------------------------


def test_an_older_export_keeps_the_changed_note_unless_overwrite(
    memory: Memory, store: dict[str, Scope], tmp_path: Path
) -> None:
    out = tmp_path / "out.zip"
    memory.exporter.run(out)
    exported = memory.read("deploys")
    changed = memory.remember("Deploys go out on Tuesdays", "Now on Wednesdays.", id="deploys")
    # the export holds a version older than the local edit: the local note is kept
    report = memory.importer.run(out, "memdir")
    assert (report.imported, report.updated, report.unchanged) == (0, 0, len(store) - 1)
    assert report.kept_local == 1 and report.backup_ids == ()
    assert memory.read("deploys").hash == changed.note.hash
    # --overwrite lets the export win, with a backup of the local note
    report = memory.importer.run(out, "memdir", overwrite=True)
    assert report.overwritten == 1
    assert memory.read("deploys").hash == exported.hash
    (backup_id,) = report.backup_ids
    memory.backups.restore(backup_id)
    assert memory.read("deploys").hash == changed.note.hash


def test_an_id_taken_in_the_other_scope_is_listed_and_not_imported(
    memory: Memory, store: dict[str, Scope], fresh: Memory, tmp_path: Path
) -> None:
    out = tmp_path / "out.tar.gz"
    memory.exporter.run(out)
    fresh.remember("Someone else's layout note", type="user", id="pricing-layout-a91")
    report = fresh.importer.run(out)
    assert report.imported == len(store) - 1
    (problem,) = report.problems
    assert problem.source.endswith("project/pricing-layout-a91.md")
    assert "another scope" in problem.reason
    assert fresh.read("pricing-layout-a91").summary == "Someone else's layout note"


def test_an_imported_note_keeps_its_source_pointer_through_an_export(
    memory: Memory, fresh: Memory, tmp_path: Path
) -> None:
    source = tmp_path / "memory.jsonl"
    source.write_text(
        '{"type":"entity","name":"Ada","entityType":"person","observations":["Writes Rust"]}\n'
        '{"type":"entity","name":"Acme","entityType":"org","observations":["In Berlin"]}\n'
        '{"type":"relation","from":"Ada","to":"Acme","relationType":"works_at"}\n',
        "utf-8",
    )
    first = memory.importer.run(source, "mcp-memory")
    memory.exporter.run(tmp_path / "out")
    assert fresh.importer.run(tmp_path / "out").imported == 2
    again = fresh.importer.run(source, "mcp-memory")  # the pointer travelled with the notes
    assert (again.imported, again.updated, again.unchanged) == (0, 0, 2)
    assert sorted(n.id for n in fresh.notes.list()) == sorted(first.notes)


def test_an_export_imported_with_scope_user_goes_to_the_user_scope(
    memory: Memory, fresh: Memory, tmp_path: Path
) -> None:
    memory.remember("Project fact one", id="fact-one")
    memory.remember("Project fact two", "See [[fact-one]].", id="fact-two")
    memory.exporter.run(tmp_path / "out.zip")
    report = fresh.importer.run(tmp_path / "out.zip", scope="user")
    assert report.by_scope == {"user": 2}
    assert {n.id for n in fresh.notes.list(scope="user")} == {"fact-one", "fact-two"}
    assert [link.scope for link in fresh.notes.links("fact-two").outgoing] == [Scope.USER]


def test_a_secret_in_an_export_is_refused_by_file_and_kind_the_rest_imported(
    memory: Memory, store: dict[str, Scope], fresh: Memory, tmp_path: Path
) -> None:
    secret = "AKIAQ3ZB7XK2LMN4TRV5"
    _write(
        memory,
        Note(id="leaked-key", summary="Deploy notes", body=f"line one\nkey {secret}\n"),
        Scope.PROJECT,
    )
    out = tmp_path / "out.tar.gz"
    memory.exporter.run(out)  # the user's own copy holds what the folder holds
    report = fresh.importer.run(out)
    assert report.imported == len(store)
    (refusal,) = report.refused
    assert refusal.source.endswith("project/leaked-key.md")
    assert "AWS access key id" in refusal.reason and "line 2" in refusal.reason
    assert secret not in refusal.reason
    assert "leaked-key" not in {n.id for n in fresh.notes.list()}
