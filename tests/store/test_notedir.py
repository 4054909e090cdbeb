"""One note directory: scanning, skipping and reporting bad files, the scan cache, maxNotes."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from memdir import LimitExceeded, Memory, ParseError, Refused
from memdir.core import Note, Scope, render_note
from memdir.core.vocab import WriteEvent
from memdir.errors import Remedy
from memdir.store import FileProblem, NoteDirectory, SaveOutcome


def make_dir(path: Path, max_notes: int = 100) -> NoteDirectory:
    return NoteDirectory(Scope.PROJECT, path, lock_timeout=1, max_notes=max_notes)


def put(directory: Path, note_id: str, summary: str = "a summary", body: str = "body") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{note_id}.md"
    path.write_bytes(render_note(Note(id=note_id, summary=summary, body=body)))
    return path


def age(path: Path, seconds: float) -> None:
    """Set a file's mtime `seconds` into the past."""
    when = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(when, when))


BAD_FILES: dict[str, bytes] = {
    "bad-json.md": b'---\n{"id":"bad-json","summary":}\n---\nbody\n',
    "bad-utf8.md": b'---\n{"id":"bad-utf8","summary":"caf\xe9"}\n---\n',
    "binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "empty.md": b"",
    "no-front.md": b"---\n\n***\n",
    "bad-yaml.md": b"---\ntitle: [unclosed\n---\nSome text.\n",
    "unclosed.md": b'---\n{"id":"unclosed","summary":"s"}\nbody\n',
    "mismatch.md": b'---\n{"id":"something-else","summary":"s"}\n---\n',
    "bad-type.md": b'---\n{"id":"bad-type","summary":"s","type":"opinion"}\n---\n',
    "Upper-Case.md": b'---\n{"id":"upper-case","summary":"s"}\n---\n',
    "with space.md": b'---\n{"summary":"s"}\n---\n',
    "con.md": b'---\n{"summary":"s"}\n---\n',
}
IGNORED_FILES: dict[str, bytes] = {
    ".hidden.md": b"whatever",
    ".good-1.md.tmp-1a2b3c4d": b"half a note",
    "readme.txt": b"not a note",
    "notes.md.bak": b"backup",
}


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.name: (p.read_bytes(), p.stat().st_mtime_ns)
        for p in directory.iterdir()
        if p.name in BAD_FILES or p.name in IGNORED_FILES
    }


@pytest.fixture
def messy(project: Path) -> Path:
    """The project's MEMORY/ with two good notes, every kind of bad file and ignored files."""
    notes = project / "MEMORY"
    put(notes, "good-1", "First good note")
    put(notes, "good-2", "Second good note")
    for name, data in {**BAD_FILES, **IGNORED_FILES}.items():
        (notes / name).write_bytes(data)
        age(notes / name, 3600)
    (notes / "folder.md").mkdir()
    return notes


def test_scan_loads_good_notes_with_scope_path_and_revision(tmp_path: Path) -> None:
    path = put(tmp_path, "n-1", "One", "text")
    scan = make_dir(tmp_path).scan()
    assert list(scan.notes) == ["n-1"]
    note = scan.notes["n-1"]
    assert (note.summary, note.body, note.scope, note.path) == ("One", "text", Scope.PROJECT, path)
    assert scan.revisions["n-1"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert scan.problems == ()
    assert scan.changed == ("n-1",)


def test_missing_directory_scans_empty(tmp_path: Path) -> None:
    scan = make_dir(tmp_path / "nope").scan()
    assert (scan.notes, scan.problems, scan.over_limit) == ({}, (), 0)


def test_bad_files_are_reported_and_skipped(messy: Path) -> None:
    scan = make_dir(messy).scan()
    assert sorted(scan.notes) == ["good-1", "good-2"]
    reasons = {p.path.name: p.reason for p in scan.problems}
    assert sorted(reasons) == sorted(BAD_FILES)
    assert all(p.scope is Scope.PROJECT for p in scan.problems)
    assert "not valid JSON" in reasons["bad-json.md"]
    assert "UTF-8" in reasons["bad-utf8.md"]
    assert "binary" in reasons["binary.md"]
    assert "empty" in reasons["empty.md"]
    assert "no frontmatter" in reasons["no-front.md"]
    assert "neither memdir's JSON nor the YAML" in reasons["bad-yaml.md"]
    assert "not closed" in reasons["unclosed.md"]
    assert "does not match the file name" in reasons["mismatch.md"]
    assert "type must be one of" in reasons["bad-type.md"]
    for name in ("Upper-Case.md", "with space.md", "con.md"):
        assert reasons[name] == "file name is not a valid note id"


def test_bad_files_are_never_modified_by_scans_doctor_or_writes(
    messy: Path, memory: Memory
) -> None:
    before = snapshot(messy)
    assert len(before) == len(BAD_FILES) + len(IGNORED_FILES)
    make_dir(messy).scan()
    report = memory.upkeep.doctor()
    # doctor removes memdir's own temp files of interrupted writes (under the lock);
    # every other file stays byte-identical.
    leftover = ".good-1.md.tmp-1a2b3c4d"
    assert report.cleaned == 1 and not (messy / leftover).exists()
    del before[leftover]
    assert {p.path.name for p in report.problems} == set(BAD_FILES)
    assert not report.ok
    memory.remember("A third note about caching", body="new")
    memory.remember("First good note", body="updated body", id="good-1")
    memory.notes.list()
    memory.search("note")
    memory.forget("good-2")
    memory.upkeep.doctor()
    assert snapshot(messy) == before
    for name in BAD_FILES:
        assert (messy / name).exists()


def test_a_write_never_replaces_an_unparseable_file(messy: Path, memory: Memory) -> None:
    before = snapshot(messy)
    with pytest.raises(ParseError, match=r"bad-json\.md cannot be parsed"):
        memory.remember("Replace it", body="x", id="bad-json")
    store = memory.stores.store(Scope.PROJECT)
    with pytest.raises(ParseError, match="will not overwrite"):
        store.save(Note(id="bad-json", summary="Replace it"))
    with pytest.raises(ParseError, match="will not overwrite"):
        store.remove("empty", backup_reason="forget", event="forget")
    with pytest.raises(ParseError):
        memory.forget("bad-json")
    with pytest.raises(ParseError, match="cannot be parsed") as info:
        memory.read("bad-json")
    assert info.value.hint is Remedy.DOCTOR  # the CLI says "see `memdir doctor`"
    assert snapshot(messy) == before


def test_ids_on_disk_include_unparseable_files(messy: Path) -> None:
    ids = make_dir(messy).ids_on_disk()
    assert {"good-1", "bad-json", "Upper-Case", "empty"} <= ids
    assert ".hidden" not in ids and "folder" not in ids


def test_scan_picks_up_an_external_edit(tmp_path: Path) -> None:
    directory = make_dir(tmp_path)
    path = put(tmp_path, "n-1", "Original", "old body")
    assert directory.scan().notes["n-1"].body == "old body"
    path.write_bytes(
        render_note(Note(id="n-1", summary="Edited by hand", body="a longer new body"))
    )
    scan = directory.scan()
    assert scan.notes["n-1"].summary == "Edited by hand"
    assert scan.notes["n-1"].body == "a longer new body"
    assert scan.changed == ("n-1",)
    assert scan.revisions["n-1"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_scan_picks_up_an_edit_that_keeps_size_mtime_and_inode(tmp_path: Path) -> None:
    # A coarse file system clock can give an in-place edit right after a scan the same mtime.
    directory = make_dir(tmp_path)
    path = put(tmp_path, "n-1", "Same size", "version A")
    st = path.stat()
    assert directory.scan().notes["n-1"].body == "version A"
    with path.open("r+b") as f:
        f.write(render_note(Note(id="n-1", summary="Same size", body="version B")))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    st2 = path.stat()
    assert (st2.st_size, st2.st_mtime_ns, st2.st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    scan = directory.scan()
    assert scan.notes["n-1"].body == "version B"
    assert scan.changed == ("n-1",)


def test_scan_picks_up_new_files_removals_and_files_turning_bad(tmp_path: Path) -> None:
    directory = make_dir(tmp_path)
    put(tmp_path, "a-1")
    put(tmp_path, "b-1")
    assert sorted(directory.scan().notes) == ["a-1", "b-1"]
    (tmp_path / "a-1.md").unlink()
    put(tmp_path, "c-1")
    (tmp_path / "b-1.md").write_bytes(b"garbage \xff")
    scan = directory.scan()
    assert sorted(scan.notes) == ["c-1"]
    assert [p.path.name for p in scan.problems] == ["b-1.md"]
    put(tmp_path, "b-1", "fixed")
    assert directory.scan().notes["b-1"].summary == "fixed"


def test_unchanged_old_files_are_not_re_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = make_dir(tmp_path)
    for i in range(3):
        age(put(tmp_path, f"n-{i}"), 3600)
    assert len(directory.scan().changed) == 3
    reads: list[Path] = []
    real = Path.read_bytes

    def counting(self: Path) -> bytes:
        reads.append(self)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    scan = directory.scan()
    assert len(scan.notes) == 3
    assert scan.changed == ()
    # The encryption marker is looked for (absent here); no note file is read again.
    assert [p for p in reads if p.name != ".memdir-encrypted"] == []


def test_recent_unchanged_files_are_not_reported_as_changed(tmp_path: Path) -> None:
    directory = make_dir(tmp_path)
    put(tmp_path, "n-1")
    assert directory.scan().changed == ("n-1",)
    assert directory.scan().changed == ()
    assert directory.scan().changed == ()


def test_a_file_removed_while_scanning_is_not_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = make_dir(tmp_path)
    put(tmp_path, "stays")
    gone = put(tmp_path, "goes")
    real = os.open

    def vanishing(path: str | os.PathLike[str], flags: int, *args: int, **kwargs: object) -> int:
        if Path(path) == gone:
            gone.unlink(missing_ok=True)
        return real(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", vanishing)
    scan = directory.scan()
    assert list(scan.notes) == ["stays"]
    assert scan.problems == ()


def test_over_the_limit_the_most_recent_notes_load_and_the_rest_are_counted(
    tmp_path: Path,
) -> None:
    for i in range(6):
        age(put(tmp_path, f"n-{i}"), 1000 * (6 - i))  # n-5 is the most recent
    scan = make_dir(tmp_path, max_notes=4).scan()
    assert sorted(scan.notes) == ["n-2", "n-3", "n-4", "n-5"]
    assert scan.over_limit == 2
    full = make_dir(tmp_path, max_notes=6).scan()
    assert (len(full.notes), full.over_limit) == (6, 0)


def test_memory_over_max_notes_warns_refuses_new_notes_but_reads_updates_and_deletes(
    project: Path, home: Path
) -> None:
    (home / "config.toml").write_text("[memory]\nmaxNotes = 3\n")
    notes = project / "MEMORY"
    for i in range(5):
        age(put(notes, f"n-{i}", f"Note number {i}"), 1000 * (5 - i))
    m = Memory.open(project, home=home)
    assert len(m.notes.list(scope="project")) == 3
    assert any("2 notes above memory.maxNotes" in w for w in m.warnings)
    report = m.upkeep.doctor()
    assert report.counts["project"] == 5
    assert m.read("n-0").summary == "Note number 0"  # not loaded, still readable
    with pytest.raises(LimitExceeded, match="maxNotes"):
        m.remember("One more", scope="project")
    m.remember("Note number 0", body="changed", id="n-0")
    m.forget("n-1")
    assert m.read("n-0").body == "changed"


def test_write_read_and_remove(tmp_path: Path) -> None:
    directory = make_dir(tmp_path / "notes")
    note = Note(id="w-1", summary="written", body="b")
    data = directory.write(note)
    assert data == render_note(note)
    assert directory.read_bytes("w-1") == data
    assert directory.read("w-1") == note
    assert directory.read("missing") is None
    assert directory.read_bytes("missing") is None
    directory.write_bytes("w-2", b"---\n{}\n---\n")
    assert directory.remove("w-1") is True
    assert directory.remove("w-1") is False
    names = sorted(p.name for p in (tmp_path / "notes").iterdir())
    assert names == [".gitignore", "w-2.md"]


# --- symbolic links: note files must be regular files ---------------------------------------

SECRET_WORD = "zanzibarquokka"


def _outside_note(tmp_path: Path, note_id: str) -> Path:
    outside = tmp_path / "outside.md"
    outside.write_bytes(
        render_note(Note(id=note_id, summary=f"Leaked {SECRET_WORD}", body=f"{SECRET_WORD} body"))
    )
    return outside


def test_a_note_symlink_out_of_the_directory_is_never_followed(
    memory: Memory, project: Path, tmp_path: Path
) -> None:
    memory.remember("Real note", "A real body.", id="real")
    outside = _outside_note(tmp_path, "leak")
    before = outside.read_bytes()
    link = project / "MEMORY" / "leak.md"
    link.symlink_to(outside)
    assert [n.id for n in memory.notes.list()] == ["real"]
    assert memory.search(SECRET_WORD, method="lexical") == []
    assert memory.index.retrieve(SECRET_WORD, method="lexical") == []
    with pytest.raises(ParseError, match="symbolic link") as refused:
        memory.read("leak")
    assert SECRET_WORD not in str(refused.value)
    with pytest.raises(ParseError, match="symbolic link"):
        memory.remember("Overwrite it", "New body.", id="leak")
    assert link.is_symlink() and outside.read_bytes() == before
    report = memory.upkeep.doctor()
    assert not report.ok
    assert [(p.path, "symbolic link" in p.reason) for p in report.problems] == [(link, True)]
    assert memory.stores.directory("project") == link.parent
    directory = memory.stores.store(Scope.PROJECT).directory
    with pytest.raises(Refused, match="symbolic link") as unread:
        directory.read_bytes("leak")
    assert SECRET_WORD not in str(unread.value)
    with pytest.raises(ParseError, match="symbolic link"):
        memory.forget("leak")
    assert link.is_symlink()
    assert SECRET_WORD.encode() not in b"".join(directory.read_all().values())
    with memory.stores.store(Scope.PROJECT).lock(), pytest.raises(Refused, match="symbolic link"):
        directory.write_bytes("leak", b"overwritten")
    assert link.is_symlink() and outside.read_bytes() == before


def test_a_note_symlink_inside_the_directory_is_skipped_and_reported_too(
    memory: Memory, project: Path
) -> None:
    memory.remember("Other note", "Other body.", id="other")
    # A note that leaves its id to its file name, so a link to it would parse as a note
    # of the link's own name.
    target = project / "MEMORY" / "target.md"
    target.write_bytes(b'---\n{"summary":"Target about %s"}\n---\nBody.\n' % SECRET_WORD.encode())
    alias = project / "MEMORY" / "alias.md"
    alias.symlink_to("target.md")  # relative, to a note in the same directory
    assert sorted(n.id for n in memory.notes.list()) == ["other", "target"]
    assert [h.note_id for h in memory.search(SECRET_WORD, method="lexical")] == ["target"]
    [problem] = memory.upkeep.doctor().problems
    assert problem.path == alias and "symbolic link" in problem.reason
    with pytest.raises(ParseError, match="symbolic link"):
        memory.read("alias")
    alias.unlink()
    assert memory.upkeep.doctor().ok


def test_a_symlink_appearing_later_is_reported_by_the_next_scan(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    put(notes, "n-1")
    directory = make_dir(notes)
    assert directory.scan().problems == ()
    outside = _outside_note(tmp_path, "n-2")
    (notes / "n-2.md").symlink_to(outside)
    scan = directory.scan()
    assert list(scan.notes) == ["n-1"]
    assert [p.path.name for p in scan.problems] == ["n-2.md"]
    assert "n-2" not in directory.stamps()[0] and "n-2" not in directory.ids_on_disk()
    assert isinstance(directory.read("n-2"), FileProblem)
    (notes / "n-2.md").unlink()
    assert directory.scan().problems == ()


def test_a_note_directory_that_is_itself_a_symlink_is_used(tmp_path: Path, home: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    put(elsewhere, "kept-elsewhere", summary=f"Kept {SECRET_WORD}")
    project = tmp_path / "linked-project"
    project.mkdir()
    (project / "MEMORY").symlink_to(elsewhere, target_is_directory=True)
    with Memory.open(project, home=home) as memory:
        assert [n.id for n in memory.notes.list()] == ["kept-elsewhere"]
        assert [h.note_id for h in memory.search(SECRET_WORD, method="lexical")] == [
            "kept-elsewhere"
        ]
        memory.remember("Written through the link", "Body.", id="written")
        assert memory.upkeep.doctor().ok
    assert (elsewhere / "written.md").is_file()


def test_a_batch_write_refuses_only_the_symlinked_note(
    memory: Memory, project: Path, tmp_path: Path
) -> None:
    """A sync pull writes many notes under one lock: the one whose file is a link is
    refused as that item's error, the others are written."""
    memory.remember("Real note", "A real body.", id="real")
    outside = _outside_note(tmp_path, "leak")
    before = outside.read_bytes()
    (project / "MEMORY" / "leak.md").symlink_to(outside)
    store = memory.stores.store(Scope.PROJECT)
    over = Note(id="leak", summary="From the server", body="Pulled.")
    fresh = Note(id="fresh", summary="Also from the server", body="Pulled too.")
    out = store.save_many(
        [(over, render_note(over), ""), (fresh, render_note(fresh), "")],
        event=WriteEvent.SYNC,
        backup_reason="sync pull",
    )
    assert isinstance(out["leak"], Refused)
    assert isinstance(out["fresh"], SaveOutcome)
    assert outside.read_bytes() == before
    assert (project / "MEMORY" / "leak.md").is_symlink()
    assert sorted(n.id for n in memory.notes.list()) == ["fresh", "real"]


def test_reading_one_note_the_disk_will_not_read_is_a_disk_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno as errno_

    directory = NoteDirectory(Scope.PROJECT, tmp_path, lock_timeout=1, max_notes=10)
    (tmp_path / "deploys.md").write_text('---\n{"summary": "Deploys"}\n---\nbody\n', "utf-8")
    real_open = os.open

    def failing(path: object, *args: object, **kwargs: object) -> int:
        if str(path).endswith("deploys.md"):
            raise OSError(errno_.EIO, "Input/output error", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", failing)
    with pytest.raises(OSError) as info:
        directory.read("deploys")
    assert info.value.errno == errno_.EIO
    # A scan goes on and reports the file instead.
    assert [p.reason for p in directory.scan().problems] == ["cannot read: Input/output error"]
