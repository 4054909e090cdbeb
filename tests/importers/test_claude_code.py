"""The claude-code reader: an auto-memory folder, one fact per file, MEMORY.md as the index."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.core import NoteType
from memdir.errors import InvalidInput
from memdir.importers import base, basic_memory, claude_code, codex
from memdir.importers.base import REF_PATTERN, Ref

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

PROJECT = FIXTURES / "claude-code" / "-home-ana-shop"
MEMORY = PROJECT / "memory"

FACTS = [
    "bevorzugte_sprache_ä.md",
    "bom_crlf.md",
    "dup_a.md",
    "feedback_testing.md",
    "nested/dup_b.md",
    "project_auth_rewrite.md",
    "reference_linear.md",
    "user_role.md",
    "中文笔记.md",
]


def test_a_titled_name_and_its_description_are_both_kept(tmp_path: Path) -> None:
    """Issue 25: `name: Testing approach` was stored nowhere; the summary reads as Claude
    Code's own index line does, "name: description"."""
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "testing.md").write_text(
        "---\nname: Testing approach\ndescription: Use pytest with real SQLite files\n"
        "type: feedback\n---\nWhy: mocks hid a migration bug.\n",
        encoding="utf-8",
    )
    (item,) = claude_code.read(folder).items
    assert item.summary == "Testing approach: Use pytest with real SQLite files"
    assert item.body == "Why: mocks hid a migration bug."


def test_kind_and_detection() -> None:
    assert claude_code.KIND == "claude-code"
    assert claude_code.detect(MEMORY)
    assert claude_code.detect(PROJECT)  # the project folder holding memory/
    assert not codex.detect(MEMORY)
    assert not basic_memory.detect(MEMORY)
    for other in ("markdown/vault", "basic-memory/project", "codex/codex-home"):
        assert not claude_code.detect(FIXTURES / other)


def test_detect_by_index_alone(tmp_path: Path) -> None:
    (tmp_path / "fact.md").write_text("no frontmatter\n", "utf-8")
    assert not claude_code.detect(tmp_path)
    (tmp_path / "MEMORY.md").write_text("- [Fact](fact.md) — a hook\n", "utf-8")
    assert claude_code.detect(tmp_path)
    assert not claude_code.detect(tmp_path / "fact.md")


def test_facts_are_read_from_the_memory_folder() -> None:
    reading = claude_code.read(PROJECT)
    assert reading.kind == "claude-code"
    assert reading.root == MEMORY
    assert sorted(by_key(reading)) == sorted([*FACTS, "MEMORY.md"])
    assert reasons(reading) == {
        "broken_frontmatter.md": "frontmatter line 3: a list without its closing ']';"
        " file not imported",
        "empty.md": "empty file; nothing to import",
        "latin1.md": "not UTF-8 text (byte 32); not read",
        "MEMORY.md": "links to gone.md, which does not exist",
    }
    for item in reading.items:
        storable(item)
        assert item.origin == item.key


def test_summary_is_the_description_and_types_map() -> None:
    items = by_key(claude_code.read(MEMORY))
    user = items["user_role.md"]
    assert user.summary == "Ana is a backend engineer (Go, Postgres) and new to React"
    assert user.type is NoteType.USER
    assert user.aliases == ("user-role", "user_role")
    assert items["feedback_testing.md"].type is NoteType.FEEDBACK
    assert items["reference_linear.md"].type is NoteType.REFERENCE
    assert (
        items["reference_linear.md"].summary
        == 'Pipeline bugs are tracked in Linear project "INGEST"'
    )
    # the nested `metadata: type:` form and a folded multi-line description
    auth = items["project_auth_rewrite.md"]
    assert auth.type is NoteType.PROJECT
    assert auth.summary == (
        "The auth middleware rewrite is driven by legal/compliance requirements around"
        " session token storage, not tech debt"
    )
    # a type that is not one of memdir's stays in the body
    decision = items["中文笔记.md"]
    assert decision.type is None
    assert decision.summary == "部署决定: 生产环境只在周四部署"  # a name that is a title is kept
    assert decision.body.endswith("\n\nType: decision")


def test_links_between_facts_become_refs() -> None:
    items = by_key(claude_code.read(MEMORY))
    testing = items["feedback_testing.md"]
    assert testing.refs == (
        Ref(target="project_auth_rewrite", text="project_auth_rewrite"),
        Ref(target="user-role", text="Ana"),
    )
    assert "see [[ref:0]] for the" in testing.body and "[[ref:1]] for who" in testing.body
    assert items["reference_linear.md"].refs == (
        Ref(target="feedback_testing.md", text="feedback"),
    )
    assert "Testing policy: [[ref:0]]." in items["reference_linear.md"].body
    # every ref target answers to an item key or alias
    names = {n.casefold() for i in items.values() for n in (i.key, *i.aliases)}
    for item in items.values():
        for ref in item.refs:
            assert ref.target.casefold() in names
        for match in REF_PATTERN.finditer(item.body):
            assert int(match.group(1)) < len(item.refs)


def test_memory_index_is_not_a_note_but_its_inline_lines_are() -> None:
    items = by_key(claude_code.read(MEMORY))
    notes = items["MEMORY.md"]
    assert notes.summary == "MEMORY.md notes"
    assert notes.body == (
        "## Quick facts\n"
        "- Staging deploys need the VPN on; the user asked twice.\n"
        "- The release train leaves on Thursdays 🚆"
    )


def test_index_of_only_links_gives_no_note(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "---\nname: a\ndescription: A fact\ntype: user\n---\nx\n", "utf-8"
    )
    (tmp_path / "MEMORY.md").write_text("# Memory Index\n\n- [A](a.md) — hook\n", "utf-8")
    reading = claude_code.read(tmp_path)
    assert [i.key for i in reading.items] == ["a.md"]
    assert reading.problems == []


def test_duplicate_descriptions_stay_two_items() -> None:
    items = by_key(claude_code.read(MEMORY))
    assert items["dup_a.md"].summary == items["nested/dup_b.md"].summary == "Use pnpm, not npm"
    assert items["dup_a.md"].body != items["nested/dup_b.md"].body


def test_non_ascii_bom_crlf_and_times() -> None:
    items = by_key(claude_code.read(MEMORY))
    german = items["bevorzugte_sprache_ä.md"]
    assert german.summary == "Antworten auf Deutsch, Code-Kommentare auf Englisch 🇩🇪"
    assert (MEMORY / "bom_crlf.md").read_bytes().startswith(b"\xef\xbb\xbf---\r\n")
    windows = items["bom_crlf.md"]
    assert windows.summary == "The user edits memory files on Windows"
    assert windows.body == "Files saved from Notepad start with a BOM and use CRLF.\nSecond line."
    assert windows.created_at is None
    assert windows.updated_at == int((MEMORY / "bom_crlf.md").stat().st_mtime * 1000)


def test_not_a_folder_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        claude_code.read(tmp_path / "missing")
    with pytest.raises(InvalidInput):
        claude_code.read(MEMORY / "user_role.md")


def test_reading_writes_nothing_and_is_stable(tmp_path: Path) -> None:
    root = copy_fixture("claude-code", tmp_path)
    before = tree(root)
    first, second = (
        claude_code.read(root / "-home-ana-shop"),
        claude_code.read(root / "-home-ana-shop"),
    )
    assert tree(root) == before
    assert first.items == second.items


def test_symlinks_outside_are_not_followed(tmp_path: Path) -> None:
    memory = copy_fixture("claude-code", tmp_path) / "-home-ana-shop" / "memory"
    link, folder = add_outside_symlinks(memory, tmp_path)
    reading = claude_code.read(memory)
    assert link not in by_key(reading)
    assert reasons(reading)[link] == "a symlink leading outside the source; not followed"
    assert reasons(reading)[folder] == "a symlink leading outside the source; not followed"


def test_symlinked_index_is_not_followed(tmp_path: Path) -> None:
    memory = copy_fixture("claude-code", tmp_path) / "-home-ana-shop" / "memory"
    (tmp_path / "elsewhere.md").write_text("- a fact from outside\n", "utf-8")
    (memory / "MEMORY.md").unlink()
    (memory / "MEMORY.md").symlink_to(tmp_path / "elsewhere.md")
    reading = claude_code.read(memory)
    assert "MEMORY.md" not in by_key(reading)
    assert reasons(reading)["MEMORY.md"] == "a symlink leading outside the source; not followed"


def test_unreadable_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = copy_fixture("claude-code", tmp_path) / "-home-ana-shop" / "memory"
    deny_reads(monkeypatch, memory / "user_role.md")
    reading = claude_code.read(memory)
    assert reasons(reading)["user_role.md"] == "cannot be read: permission denied"
    assert "feedback_testing.md" in by_key(reading)


def test_chmod_000(tmp_path: Path) -> None:
    memory = copy_fixture("claude-code", tmp_path) / "-home-ana-shop" / "memory"
    make_unreadable(memory / "user_role.md")
    assert reasons(claude_code.read(memory))["user_role.md"] == "cannot be read: permission denied"


def test_huge_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "MAX_SOURCE_BYTES", 300)
    memory = copy_fixture("claude-code", tmp_path) / "-home-ana-shop" / "memory"
    big = "---\nname: big\ndescription: Big\ntype: user\n---\n" + "y" * 400
    (memory / "big.md").write_text(big, "utf-8")
    reading = claude_code.read(memory)
    assert "big.md" not in by_key(reading)
    assert reasons(reading)["big.md"] == f"{len(big)} bytes, over the 300-byte limit; not read"
    assert "user_role.md" in by_key(reading)


def test_a_folder_of_projects_reads_each_memory_folder(tmp_path: Path) -> None:
    projects = copy_fixture("claude-code", tmp_path)
    other = projects / "-home-ana-blog" / "memory"
    other.mkdir(parents=True)
    (other / "tone.md").write_text(
        "---\nname: tone\ndescription: Blog posts are informal\ntype: feedback\n---\nx\n", "utf-8"
    )
    (other / "MEMORY.md").write_text("- [Tone](tone.md)\n- Posts go out on Sundays\n", "utf-8")
    assert claude_code.detect(projects)
    items = by_key(claude_code.read(projects))
    assert "-home-ana-blog/memory/tone.md" in items
    assert "-home-ana-shop/memory/user_role.md" in items
    blog = items["-home-ana-blog/memory/MEMORY.md"]
    assert blog.summary == "MEMORY.md notes (-home-ana-blog/memory)"
    assert blog.body == "- Posts go out on Sundays"
