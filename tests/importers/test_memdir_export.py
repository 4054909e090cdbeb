"""The memdir reader: memdir's own export (folder, tar.gz, zip) back into notes, safely."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import tarfile
import time
import tracemalloc
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.core import Note, Scope
from memdir.errors import InvalidInput
from memdir.importers import memdir_export
from memdir.importers.base import Imported, Reading

FIXTURES = Path(__file__).parent / "fixtures" / "memdir" / "export"
INDEX = json.loads((FIXTURES / "index.json").read_text(encoding="utf-8"))


def members(folder: Path = FIXTURES) -> list[tuple[str, bytes]]:
    return sorted(
        (p.relative_to(folder).as_posix(), p.read_bytes()) for p in folder.rglob("*") if p.is_file()
    )


def make_tar(out: Path, files: list[tuple[str, bytes]], top: str = "export") -> Path:
    """A tar.gz laid out as memdir's exporter writes one (PAX, folder entries first)."""
    with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as archive:
        folders = {top} if top else set()
        folders |= {f"{top}/{p.split('/')[0]}".lstrip("/") for p, _ in files if "/" in p}
        for folder in sorted(folders):
            info = tarfile.TarInfo(folder)
            info.type = tarfile.DIRTYPE
            archive.addfile(info)
        for path, data in files:
            info = tarfile.TarInfo(f"{top}/{path}" if top else path)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out


def make_zip(out: Path, files: list[tuple[str, bytes]], top: str = "export") -> Path:
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, data in files:
            info = zipfile.ZipInfo(f"{top}/{path}" if top else path)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return out


def by_key(reading: Reading) -> dict[str, Imported]:
    return {item.key: item for item in reading.items}


def reasons(reading: Reading) -> dict[str, str]:
    return {p.origin: p.reason for p in reading.problems}


def without_origin(reading: Reading) -> list[Imported]:
    return [replace(i, origin="") for i in reading.items]


def copy_export(tmp_path: Path) -> Path:
    target = tmp_path / "export"
    shutil.copytree(FIXTURES, target)
    return target


def test_kind_name() -> None:
    assert memdir_export.KIND == "memdir"


def test_a_folder_export_reads_every_note_with_ids_and_hashes() -> None:
    reading = memdir_export.read(FIXTURES)
    assert reading.kind == "memdir" and reading.root == FIXTURES
    assert reading.problems == []
    items = by_key(reading)
    listed = {e["path"]: e for e in INDEX["notes"]}
    assert set(items) == {*listed, "user/unlisted-coffee-2aa.md"}
    for path, entry in listed.items():
        item = items[path]
        assert item.id == entry["id"]
        assert item.scope == Scope(entry["scope"])
        assert item.summary == entry["summary"]
        assert item.created_at == entry["createdAt"]
        assert item.updated_at == entry["updatedAt"]
        assert item.origin == path
        note = Note(
            id=item.id or "",
            summary=item.summary,
            body=item.body,
            type=item.type,
            tags=item.tags,
            supersedes=item.supersedes,
            private=item.private,
        )
        assert note.hash == entry["hash"], path


def test_fields_are_kept_exactly() -> None:
    items = by_key(memdir_export.read(FIXTURES))
    freeze = items["project/billing-freeze-5d1.md"]
    assert freeze.supersedes == ("pricing-layout-old-7c2",)
    assert freeze.body == ""
    private = items["user/ada-health-insurance-0f9.md"]
    assert private.private is True and private.scope is Scope.USER
    assert private.type is not None and private.type.value == "reference"
    untyped = items["project/preiskarten-rahmen-b10.md"]
    assert untyped.type is None
    assert untyped.tags == ("design", "übersetzung")
    assert untyped.summary == "Preiskarten ohne Rahmen — Flächen statt Linien"
    # a body is kept verbatim, even text that looks like a reader reference
    assert "[[ref:0]]" in untyped.body
    linked = items["project/pricing-borderless-3fa.md"]
    assert linked.body.endswith("See [[pricing-layout-a91]].")
    assert linked.aliases == () and linked.refs == ()


def test_an_unlisted_hand_edited_note_is_read() -> None:
    coffee = by_key(memdir_export.read(FIXTURES))["user/unlisted-coffee-2aa.md"]
    assert coffee.id == "unlisted-coffee-2aa" and coffee.scope is Scope.USER
    assert coffee.summary == "Ada drinks her coffee black"
    assert coffee.body == "No sugar either."
    assert coffee.created_at == 1788800000000


@pytest.mark.parametrize("top", ["export", "memdir-export-2026-09-21", ""])
@pytest.mark.parametrize("maker", [make_tar, make_zip])
def test_archives_read_like_the_folder(tmp_path: Path, top: str, maker: object) -> None:
    suffix = ".tar.gz" if maker is make_tar else ".zip"
    out = maker(tmp_path / f"out{suffix}", members(), top)  # type: ignore[operator]
    reading = memdir_export.read(out)
    assert reading.problems == []
    assert reading.root == out
    assert without_origin(reading) == without_origin(memdir_export.read(FIXTURES))
    prefix = f"{top}/" if top else ""
    assert {i.origin for i in reading.items} == {prefix + i.key for i in reading.items}
    assert memdir_export.detect(out)


def test_a_tgz_made_with_tar_dot(tmp_path: Path) -> None:
    out = tmp_path / "export.tgz"
    with tarfile.open(out, "w:gz") as archive:
        archive.add(FIXTURES, arcname=".")
    reading = memdir_export.read(out)
    assert reading.problems == [] and len(reading.items) == 8
    assert memdir_export.detect(out)


def test_a_folder_holding_the_extracted_top_folder(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "outer" / "memdir-export")
    reading = memdir_export.read(tmp_path / "outer")
    assert reading.problems == [] and len(reading.items) == 8
    assert {i.origin for i in reading.items} == {f"memdir-export/{i.key}" for i in reading.items}
    assert memdir_export.detect(tmp_path / "outer")


def test_missing_changed_and_broken_files_are_problems(tmp_path: Path) -> None:
    export = copy_export(tmp_path)
    (export / "project" / "pricing-layout-a91.md").unlink()
    changed = export / "project" / "pricing-borderless-3fa.md"
    changed.write_bytes(changed.read_bytes().replace(b"whitespace", b"white space"))
    (export / "user" / "ada-prefers-written-reviews-e44.md").write_bytes(b"---\n{broken\n---\n")
    (export / "user" / "stray-9zz.md").write_bytes(b"---\n\n***\n")  # no frontmatter, no text
    (export / "project" / "wrong-name-111.md").write_bytes(
        (FIXTURES / "project" / "pricing-layout-old-7c2.md").read_bytes()
    )
    reading = memdir_export.read(export)
    problems = reasons(reading)
    assert set(problems) == {
        "project/pricing-layout-a91.md",
        "project/pricing-borderless-3fa.md",
        "user/ada-prefers-written-reviews-e44.md",
        "user/stray-9zz.md",
        "project/wrong-name-111.md",
    }
    assert problems["project/pricing-layout-a91.md"] == (
        "listed in index.json but not in the export"
    )
    assert "differs from the hash" in problems["project/pricing-borderless-3fa.md"]
    assert problems["user/ada-prefers-written-reviews-e44.md"].startswith("cannot be parsed")
    assert "does not match the file name" in problems["project/wrong-name-111.md"]
    assert not set(problems) & set(by_key(reading))
    assert len(reading.items) == 5


def test_bad_index_entries_are_problems(tmp_path: Path) -> None:
    export = copy_export(tmp_path)
    index = json.loads((export / "index.json").read_text(encoding="utf-8"))
    first = index["notes"][0]
    index["notes"] += [
        "not an entry",
        {"id": "x"},
        {**first, "path": "../../etc/passwd.md"},
        {**first, "path": "notes/elsewhere.md"},
        {**first, "scope": "team"},
        dict(first),
        {**index["notes"][1], "id": "someone-else-123"},
    ]
    (export / "index.json").write_text(json.dumps(index), encoding="utf-8")
    reading = memdir_export.read(export)
    problems = reasons(reading)
    n = len(INDEX["notes"])
    assert problems[f"index.json: notes[{n}]"] == "not a JSON object"
    assert problems[f"index.json: notes[{n + 1}]"] == "needs a text id and path"
    assert "is not project/<id>.md" in problems[f"index.json: notes[{n + 2}]"]
    assert "is not project/<id>.md" in problems[f"index.json: notes[{n + 3}]"]
    assert "scope" in problems[f"index.json: notes[{n + 4}]"]
    assert "a second time" in problems[f"index.json: notes[{n + 5}]"]
    assert "a second time" in problems[f"index.json: notes[{n + 6}]"]
    assert len(reading.items) == 8


def test_an_index_entry_naming_another_id(tmp_path: Path) -> None:
    export = copy_export(tmp_path)
    index = json.loads((export / "index.json").read_text(encoding="utf-8"))
    index["notes"][0]["id"] = "someone-else-123"
    (export / "index.json").write_text(json.dumps(index), encoding="utf-8")
    reading = memdir_export.read(export)
    path = index["notes"][0]["path"]
    assert "index.json lists someone-else-123" in reasons(reading)[path]


def test_an_unreadable_index_leaves_the_notes_unchecked(tmp_path: Path) -> None:
    export = copy_export(tmp_path)
    (export / "index.json").write_text('{"format": "memdir-export", "notes": [', encoding="utf-8")
    reading = memdir_export.read(export)
    assert list(reasons(reading)) == ["index.json"]
    assert len(reading.items) == 8


@pytest.mark.parametrize(
    ("index", "message"),
    [
        ({"format": "something-else", "version": 1, "notes": []}, "not a memdir export"),
        ({"format": "memdir-export", "version": 2, "notes": []}, "version 2"),
        ([1, 2, 3], "not a memdir export"),
    ],
)
def test_not_a_memdir_index(tmp_path: Path, index: object, message: str) -> None:
    export = copy_export(tmp_path)
    (export / "index.json").write_text(json.dumps(index), encoding="utf-8")
    with pytest.raises(InvalidInput, match=message):
        memdir_export.read(export)
    assert not memdir_export.detect(export) or index != [1, 2, 3]


def test_not_an_export_at_all(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        memdir_export.read(tmp_path)  # empty folder
    plain = tmp_path / "notes.zip"
    with zipfile.ZipFile(plain, "w") as archive:
        archive.writestr("project/a.md", "---\n{}\n---\n")
    with pytest.raises(InvalidInput, match=r"no index\.json"):
        memdir_export.read(plain)
    text = tmp_path / "export.tar.gz"
    text.write_text("not an archive", encoding="utf-8")
    with pytest.raises(InvalidInput):
        memdir_export.read(text)
    fake_gzip = tmp_path / "fake.tgz"
    fake_gzip.write_bytes(b"\x1f\x8b\x08\x00garbage garbage")
    with pytest.raises(InvalidInput):
        memdir_export.read(fake_gzip)
    fake_zip = tmp_path / "fake.zip"
    fake_zip.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    with pytest.raises(InvalidInput):
        memdir_export.read(fake_zip)
    with pytest.raises(InvalidInput):
        memdir_export.read(tmp_path / "missing.zip")


def test_a_truncated_archive_reads_what_it_can(tmp_path: Path) -> None:
    big = [(f"project/note-{i:04}-abc.md", b"x" * 2000 + bytes([i % 251])) for i in range(300)]
    index = json.dumps({"format": "memdir-export", "version": 1, "notes": []}).encode()
    whole = make_tar(tmp_path / "whole.tar.gz", [("index.json", index), *big]).read_bytes()
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    reading = memdir_export.read(cut)
    assert any("damaged" in p.reason for p in reading.problems)
    assert all(
        p.reason.startswith("cannot be parsed") or "damaged" in p.reason for p in reading.problems
    )


def evil_tar(out: Path) -> Path:
    good = members()
    with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as archive:
        for path, data in good:
            info = tarfile.TarInfo(f"export/{path}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name in ("../evil.md", "/tmp/absolute.md", "export/project/../../up.md"):
            info = tarfile.TarInfo(name)
            info.size = 3
            archive.addfile(info, io.BytesIO(b"bad"))
        for name, kind in (
            ("export/project/link-aaa.md", tarfile.SYMTYPE),
            ("export/project/hard-bbb.md", tarfile.LNKTYPE),
            ("export/project/dev-ccc.md", tarfile.CHRTYPE),
            ("export/project/fifo-ddd.md", tarfile.FIFOTYPE),
        ):
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = "/etc/passwd"
            archive.addfile(info)
    return out


def test_unsafe_tar_members_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    archive = evil_tar(tmp_path / "evil.tar.gz")
    before = sorted(p for p in tmp_path.parent.rglob("*") if "evil" not in p.name)
    reading = memdir_export.read(archive)
    after = sorted(p for p in tmp_path.parent.rglob("*") if "evil" not in p.name)
    assert before == after
    problems = reasons(reading)
    for name in ("../evil.md", "/tmp/absolute.md", "export/project/../../up.md"):
        assert "leaving the export" in problems[name]
    for name in ("link-aaa", "hard-bbb", "dev-ccc", "fifo-ddd"):
        assert "a link or device" in problems[f"export/project/{name}.md"]
    assert len(reading.items) == 8


def test_unsafe_zip_members_are_refused(tmp_path: Path) -> None:
    out = make_zip(tmp_path / "evil.zip", members())
    with zipfile.ZipFile(out, "a") as archive:
        for name in ("../evil.md", "/abs.md", "C:/windows.md", "export\\project\\back.md"):
            archive.writestr(name, "bad")
        link = zipfile.ZipInfo("export/project/link-aaa.md")
        link.external_attr = (0o120777) << 16
        archive.writestr(link, "/etc/passwd")
    reading = memdir_export.read(out)
    problems = reasons(reading)
    for name in ("../evil.md", "/abs.md", "C:/windows.md", "export\\project\\back.md"):
        assert "leaving the export" in problems[name]
    assert "a link or device" in problems["export/project/link-aaa.md"]
    assert len(reading.items) == 8


def test_a_member_over_the_source_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memdir_export, "MAX_SOURCE_BYTES", 100_000)
    big = ("project/big-note-1aa.md", b"\n" * 300_000)
    for maker in (make_tar, make_zip):
        out = maker(tmp_path / f"big{maker.__name__}", [*members(), big])
        reading = memdir_export.read(out)
        assert "over the 100000" in reasons(reading)["export/project/big-note-1aa.md"]
        assert len(reading.items) == 8


def test_a_header_claiming_a_huge_member(tmp_path: Path) -> None:
    """A tiny archive whose member claims 8 GiB: refused from its header, not read."""
    out = tmp_path / "claims.tar.gz"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path, data in members():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    raw = bytearray(buffer.getvalue().rstrip(b"\x00"))
    raw += b"\x00" * (-len(raw) % 512)
    header = tarfile.TarInfo("project/huge-1aa.md")
    header.size = 8 << 30
    raw += header.tobuf(format=tarfile.PAX_FORMAT) + b"x" * 4096
    out.write_bytes(gzip.compress(bytes(raw)))
    started = time.process_time()  # CPU time: a busy machine does not fail the bound
    reading = memdir_export.read(out)
    assert time.process_time() - started < 5
    problems = reasons(reading)
    assert "over the" in problems["project/huge-1aa.md"]
    assert len(reading.items) == 8


def test_a_gzip_bomb_stops_at_the_archive_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Members that expand past the cap stop the reading; memory stays near the cap."""
    monkeypatch.setattr(memdir_export, "MAX_ARCHIVE_BYTES", 2_000_000)
    padding = [(f"project/pad-{i:03}-aaa.md", b"\n" * 900_000) for i in range(40)]
    out = make_tar(tmp_path / "bomb.tar.gz", [*members(), *padding])
    assert out.stat().st_size < 200_000  # 36 MB of newlines, compressed
    tracemalloc.start()
    try:
        reading = memdir_export.read(out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12_000_000
    assert any("uncompressed; the rest is not read" in p.reason for p in reading.problems)


def test_a_long_name_bomb_stops_at_the_archive_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A GNU long-name header tarfile would read whole into memory: capped too."""
    monkeypatch.setattr(memdir_export, "MAX_ARCHIVE_BYTES", 1_000_000)
    out = tmp_path / "longname.tar.gz"
    with tarfile.open(out, "w:gz", format=tarfile.GNU_FORMAT) as archive:
        index = json.dumps({"format": "memdir-export", "version": 1, "notes": []}).encode()
        info = tarfile.TarInfo("export/index.json")
        info.size = len(index)
        archive.addfile(info, io.BytesIO(index))
        info = tarfile.TarInfo("export/project/" + "a" * 20_000_000 + ".md")
        archive.addfile(info, io.BytesIO(b""))
    tracemalloc.start()
    try:
        reading = memdir_export.read(out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000  # the name alone is 20 MB
    assert reading.items == []
    assert "uncompressed; the rest is not read" in reasons(reading)["longname.tar.gz"]
    assert memdir_export.detect(out)  # the index comes first; detect stops there


def test_a_zip_bomb_stops_at_the_archive_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memdir_export, "MAX_ARCHIVE_BYTES", 2_000_000)
    padding = [(f"project/pad-{i:03}-aaa.md", b"\n" * 900_000) for i in range(40)]
    out = make_zip(tmp_path / "bomb.zip", [*members(), *padding])
    tracemalloc.start()
    try:
        reading = memdir_export.read(out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12_000_000
    assert any("uncompressed; the rest is not read" in p.reason for p in reading.problems)


def test_symlinks_in_a_folder_export_are_not_followed(tmp_path: Path) -> None:
    export = copy_export(tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_bytes((FIXTURES / "project" / "pricing-layout-a91.md").read_bytes())
    (export / "project" / "linked-note-1aa.md").symlink_to(secret)
    reading = memdir_export.read(export)
    assert "a link or device" in reasons(reading)["project/linked-note-1aa.md"]
    assert len(reading.items) == 8


def test_detect(tmp_path: Path) -> None:
    assert memdir_export.detect(FIXTURES)
    assert not memdir_export.detect(FIXTURES.parent.parent / "mem0" / "oss_get_all.json")
    assert not memdir_export.detect(FIXTURES.parent.parent / "mcp-memory")
    assert not memdir_export.detect(FIXTURES / "index.json")
    assert not memdir_export.detect(tmp_path)
    assert not memdir_export.detect(tmp_path / "missing")
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(plain, "w") as archive:
        archive.writestr("index.json", '{"format": "other"}')
    assert not memdir_export.detect(plain)
    plain_tar = make_tar(tmp_path / "plain.tar.gz", [("index.json", b'{"format": "other"}')])
    assert not memdir_export.detect(plain_tar)


frontmatter = st.fixed_dictionaries(
    {"id": st.just("fuzzed-note-1aa")},
    optional={
        "summary": st.text(max_size=40) | st.integers(),
        "type": st.sampled_from(["user", "feedback", "nope", ""]) | st.none(),
        "tags": st.lists(st.text(max_size=10), max_size=3) | st.text(max_size=10),
        "createdAt": st.integers() | st.floats() | st.text(max_size=5),
        "supersedes": st.lists(st.text(max_size=12), max_size=2),
        "private": st.booleans() | st.integers(),
    },
)
note_bytes = st.binary(max_size=200) | st.builds(
    lambda head, body: (
        b"---\n" + json.dumps(head).encode() + b"\n---\n" + body.encode("utf-8", "surrogatepass")
    ),
    frontmatter,
    st.text(max_size=60),
)
index_docs = st.fixed_dictionaries(
    {"format": st.just("memdir-export"), "version": st.just(1)},
    optional={
        "notes": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "id": st.just("fuzzed-note-1aa") | st.text(max_size=8),
                    "scope": st.sampled_from(["project", "user", "x"]),
                    "path": st.sampled_from(["project/fuzzed-note-1aa.md", "../x.md", "a"]),
                    "hash": st.text(max_size=8),
                    "createdAt": st.integers() | st.text(max_size=5),
                },
            ),
            max_size=3,
        )
    },
)


@settings(max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(note_bytes, index_docs | st.binary(max_size=50))
def test_any_note_and_index_read_without_raising(
    tmp_path: Path, note: bytes, index: object
) -> None:
    export = tmp_path / "fuzz"
    shutil.rmtree(export, ignore_errors=True)
    (export / "project").mkdir(parents=True)
    (export / "project" / "fuzzed-note-1aa.md").write_bytes(note)
    data = index if isinstance(index, bytes) else json.dumps(index).encode()
    (export / "index.json").write_bytes(data)
    try:
        reading = memdir_export.read(export)
    except InvalidInput:
        return
    for item in reading.items:
        Note(
            id=item.id or "",
            summary=item.summary,
            body=item.body,
            type=item.type,
            tags=item.tags,
            supersedes=item.supersedes,
        )
        assert item.scope in (Scope.PROJECT, Scope.USER)


# -- a plain note folder (a project's MEMORY/, no index.json) ---------------------------------


def _note_folder(root: Path) -> Path:
    """A project whose MEMORY/ holds memdir notes, hand-written notes and files that are not."""
    folder = root / "MEMORY"
    folder.mkdir(parents=True)
    shutil.copyfile(
        FIXTURES / "project" / "pricing-layout-a91.md", folder / "pricing-layout-a91.md"
    )
    shutil.copyfile(FIXTURES / "user" / "unlisted-coffee-2aa.md", folder / "unlisted-coffee-2aa.md")
    (folder / "staging-rule.md").write_text(
        "---\nname: Staging rule\ndescription: CI must pass first\n---\n"
        "Nothing reaches staging without a green pipeline.\n",
        encoding="utf-8",
    )
    (folder / "coffee.md").write_text("# Coffee\n\nThe team drinks oat milk.\n", "utf-8")
    (folder / "README.md").write_text("# What this folder is\n", encoding="utf-8")
    (folder / "merge.md").write_text("<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n", "utf-8")
    (folder / "sealed.md").write_bytes(b"memdir-sealed 1 xchacha20poly1305\n\x00\x01")
    (folder / "notes.txt").write_text("not a note file", encoding="utf-8")
    return folder


def test_a_plain_note_folder_is_read_with_its_ids(tmp_path: Path) -> None:
    folder = _note_folder(tmp_path / "other-project")
    for path in (folder, folder.parent):  # MEMORY/ itself, or the project holding it
        reading = memdir_export.read(path)
        by_id = {i.id: i for i in reading.items}
        assert sorted(by_id) == [
            "coffee",
            "pricing-layout-a91",
            "staging-rule",
            "unlisted-coffee-2aa",
        ]
        assert all(i.scope is None for i in reading.items)  # by type or --scope
        assert by_id["coffee"].summary == "Coffee"
        assert "green pipeline" in by_id["staging-rule"].body
        original = memdir_export.read(FIXTURES)
        exported = {i.id: i for i in original.items}["pricing-layout-a91"]
        assert by_id["pricing-layout-a91"].body == exported.body
        assert by_id["pricing-layout-a91"].created_at == exported.created_at
        assert by_id["coffee"].created_at  # a hand-written note: the file's time
        why = {p.origin.rsplit("/", 1)[-1]: p.reason for p in reading.problems}
        assert set(why) == {"README.md", "merge.md", "sealed.md"}
        assert "not a note id" in why["README.md"]
        assert "conflict" in why["merge.md"]
        assert "encrypted" in why["sealed.md"]


def test_a_folder_of_other_markdown_is_not_a_note_folder(tmp_path: Path) -> None:
    vault = FIXTURES.parent.parent / "markdown" / "vault"
    with pytest.raises(InvalidInput, match=r"no index\.json and none of its \.md files"):
        memdir_export.read(vault)
    (tmp_path / "a").mkdir()
    with pytest.raises(InvalidInput, match=r"no <id>\.md note files"):
        memdir_export.read(tmp_path / "a")
    assert not memdir_export.detect(_note_folder(tmp_path / "p"))  # only when asked for


def test_links_in_a_plain_note_folder_are_not_followed(tmp_path: Path) -> None:
    folder = _note_folder(tmp_path / "p")
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nnot to be imported\n", encoding="utf-8")
    (folder / "linked.md").symlink_to(secret)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("# X\n", encoding="utf-8")
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "MEMORY").symlink_to(outside)  # a MEMORY/ that is a link: not read
    reading = memdir_export.read(folder)
    assert "linked" not in {i.id for i in reading.items}
    assert any("a link or device" in p.reason for p in reading.problems)
    with pytest.raises(InvalidInput):
        memdir_export.read(tmp_path / "q")
