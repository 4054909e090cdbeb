"""The basic-memory reader: a project folder of notes with observations and relations."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.core import NoteType
from memdir.errors import InvalidInput
from memdir.importers import base, basic_memory, claude_code, codex
from memdir.importers.base import REF_PATTERN, Ref, iso_ms

from . import (
    FIXTURES,
    add_outside_symlinks,
    by_key,
    copy_fixture,
    deny_reads,
    make_unreadable,
    reasons,
    storable,
    tree,
)

PROJECT = FIXTURES / "basic-memory" / "project"


def test_kind_and_detection(tmp_path: Path) -> None:
    assert basic_memory.KIND == "basic-memory"
    assert basic_memory.detect(PROJECT)
    assert not claude_code.detect(PROJECT)
    assert not codex.detect(PROJECT)
    for other in ("markdown/vault", "claude-code/-home-ana-shop/memory", "codex/codex-home"):
        assert not basic_memory.detect(FIXTURES / other)
    (tmp_path / "n.md").write_text("# N\n\n## Observations\n- [fact] it works\n", "utf-8")
    assert basic_memory.detect(tmp_path)  # observations alone, no frontmatter
    assert not basic_memory.detect(tmp_path / "n.md")


def test_every_note_is_read() -> None:
    reading = basic_memory.read(PROJECT)
    assert reading.kind == "basic-memory" and reading.root == PROJECT
    assert sorted(by_key(reading)) == [
        "bom-crlf.md",
        "coffee/coffee-bean-origins.md",
        "coffee/coffee-brewing-methods.md",
        "decisions/auth-rewrite.md",
        "people/ana-müller.md",
        "standup/monday.md",
        "standup/tuesday.md",
        "中文/笔记.md",
    ]
    assert reasons(reading) == {
        "empty.md": "empty file; nothing to import",
        "latin1.md": "not UTF-8 text (byte 14); not read",
        "malformed.md": "frontmatter line 3: indented line without a key above it;"
        " file not imported",
    }
    for item in reading.items:
        storable(item)


def test_observations_stay_in_the_body_and_give_tags() -> None:
    items = by_key(basic_memory.read(PROJECT))
    coffee = items["coffee/coffee-brewing-methods.md"]
    assert coffee.summary == "Coffee Brewing Methods"
    assert coffee.body.startswith("Notes from a month")  # the repeated title heading dropped
    assert "- [method] Pour over gives more clarity than a French press #brewing" in coffee.body
    assert "- [unclosed category that never closes" in coffee.body  # a malformed line is text
    assert coffee.tags == ("coffee", "brewing", "temperature")
    assert items["coffee/coffee-bean-origins.md"].tags == ("coffee", "origins", "history")


def test_relations_become_refs_to_titles_and_permalinks() -> None:
    items = by_key(basic_memory.read(PROJECT))
    coffee = items["coffee/coffee-brewing-methods.md"]
    assert coffee.refs == (
        Ref(target="Coffee Bean Origins", text="Coffee Bean Origins"),
        Ref(target="Proper Grinding Technique", text="Proper Grinding Technique"),
        Ref(target="Ana Müller", text="Ana Müller"),
    )
    assert "- relates_to [[ref:0]]\n- requires [[ref:1]]\n- tasted_by [[ref:2]]" in coffee.body
    origins = items["coffee/coffee-bean-origins.md"]
    assert origins.refs == (
        Ref(target="coffee/coffee-brewing-methods", text="coffee/coffee-brewing-methods"),
    )
    auth = items["decisions/auth-rewrite.md"]
    assert Ref(target="memory://specs/security", text="memory://specs/security") in auth.refs
    names = {n.casefold() for i in items.values() for n in (i.key, *i.aliases)}
    assert "ana müller" in names and "coffee/coffee-brewing-methods" in names
    assert "proper grinding technique" not in names  # dangling: its text is kept
    for item in items.values():
        for match in REF_PATTERN.finditer(item.body):
            assert int(match.group(1)) < len(item.refs)


def test_aliases_are_title_permalink_and_path() -> None:
    items = by_key(basic_memory.read(PROJECT))
    assert items["people/ana-müller.md"].aliases == (
        "Ana Müller",
        "people/ana-muller",
        "ana-müller",
        "people/ana-müller",
        "memory://people/ana-muller",
    )


def test_types_and_times() -> None:
    items = by_key(basic_memory.read(PROJECT))
    assert items["coffee/coffee-brewing-methods.md"].type is None
    assert "Type:" not in items["coffee/coffee-brewing-methods.md"].body  # the default "note"
    person = items["people/ana-müller.md"]
    assert person.type is None and person.body.endswith("\n\nType: Person")
    auth = items["decisions/auth-rewrite.md"]
    assert auth.type is NoteType.PROJECT
    assert auth.created_at == iso_ms("2024-04-02T10:00:00Z")
    assert auth.updated_at == iso_ms("2024-04-20T14:45:00Z")
    chinese = items["中文/笔记.md"]
    assert chinese.type is NoteType.REFERENCE
    assert chinese.summary == "周会记录 📝" and chinese.tags == ("会议",)
    assert chinese.updated_at == int((PROJECT / "中文" / "笔记.md").stat().st_mtime * 1000)


def test_duplicate_titles_are_two_items() -> None:
    items = by_key(basic_memory.read(PROJECT))
    monday, tuesday = items["standup/monday.md"], items["standup/tuesday.md"]
    assert monday.summary == tuesday.summary == "Standup"
    assert monday.key != tuesday.key and monday.body != tuesday.body


def test_bom_and_crlf() -> None:
    assert b"\r\n" in (PROJECT / "bom-crlf.md").read_bytes()
    item = by_key(basic_memory.read(PROJECT))["bom-crlf.md"]
    assert item.summary == "Windows Entry"
    assert item.body == "## Observations\n- [os] Written on Windows #windows"
    assert item.tags == ("windows",)


def test_not_a_folder_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        basic_memory.read(tmp_path / "missing")


def test_reading_writes_nothing(tmp_path: Path) -> None:
    root = copy_fixture("basic-memory/project", tmp_path)
    before = tree(root)
    assert basic_memory.read(root).items == basic_memory.read(root).items
    assert tree(root) == before


def test_symlinks_outside_are_not_followed(tmp_path: Path) -> None:
    root = copy_fixture("basic-memory/project", tmp_path)
    link, folder = add_outside_symlinks(root / "coffee", tmp_path)
    reading = basic_memory.read(root)
    assert f"coffee/{link}" not in by_key(reading)
    assert reasons(reading)[f"coffee/{link}"].startswith("a symlink leading outside")
    assert reasons(reading)[f"coffee/{folder}"].startswith("a symlink leading outside")


def test_unreadable_and_huge_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_fixture("basic-memory/project", tmp_path)
    deny_reads(monkeypatch, root / "standup" / "monday.md")
    monkeypatch.setattr(base, "MAX_SOURCE_BYTES", 400)
    (root / "huge.md").write_text("---\ntitle: Huge\n---\n" + "- [x] y\n" * 100, "utf-8")
    reading = basic_memory.read(root)
    problems = reasons(reading)
    assert problems["standup/monday.md"] == "cannot be read: permission denied"
    assert problems["huge.md"].endswith("over the 400-byte limit; not read")
    assert "standup/tuesday.md" in by_key(reading)


def test_chmod_000(tmp_path: Path) -> None:
    root = copy_fixture("basic-memory/project", tmp_path)
    make_unreadable(root / "standup" / "monday.md")
    assert reasons(basic_memory.read(root))["standup/monday.md"] == (
        "cannot be read: permission denied"
    )
