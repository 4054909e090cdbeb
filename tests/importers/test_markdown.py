"""The markdown reader (a folder or Obsidian vault) and the shared Markdown parsing: frontmatter,
titles, #tags and [[wikilinks]], with hypothesis over arbitrary text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.core import NoteType
from memdir.errors import InvalidInput
from memdir.importers import base, basic_memory, claude_code, codex, markdown
from memdir.importers import markdown_files as md
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

VAULT = FIXTURES / "markdown" / "vault"


def test_kind_and_detection() -> None:
    assert markdown.KIND == "markdown"
    assert markdown.detect(VAULT)
    assert markdown.detect(VAULT / "Welcome.md")
    assert not markdown.detect(VAULT / "README.txt")
    # the plain vault is no other kind (markdown is the fallback, detected last)
    assert not claude_code.detect(VAULT)
    assert not basic_memory.detect(VAULT)
    assert not codex.detect(VAULT)


@pytest.mark.parametrize(
    ("fixture", "kind"),
    [
        ("claude-code", "claude-code"),
        ("claude-code/-home-ana-shop", "claude-code"),
        ("claude-code/-home-ana-shop/memory", "claude-code"),
        ("codex/codex-home", "codex"),
        ("codex/codex-home/memories", "codex"),
        ("codex/legacy/memories", "codex"),
        ("basic-memory/project", "basic-memory"),
        ("markdown/vault", "markdown"),
    ],
)
def test_the_dispatcher_tells_each_folder_kind_apart(fixture: str, kind: str) -> None:
    from memdir.importers import detect

    assert detect(FIXTURES / fixture) == kind


def test_detect_is_false_without_markdown(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x", "utf-8")
    assert not markdown.detect(tmp_path)
    assert not markdown.detect(tmp_path / "missing")


def test_every_note_file_is_read_and_the_rest_skipped() -> None:
    reading = markdown.read(VAULT)
    assert reading.kind == "markdown"
    assert reading.root == VAULT
    assert sorted(by_key(reading)) == [
        "Café notes.md",
        "Meetings/2024-05-01.md",
        "Meetings/2024-05-08.md",
        "People/Ana Müller.md",
        "Projects/Alpha.md",
        "Welcome.md",
        "bom crlf.md",
        "horizontal rule.md",
        "no title here.md",
        "日本語/会議.md",
    ]
    assert reasons(reading) == {
        "bad frontmatter.md": "frontmatter line 2: a quoted value without its closing quote;"
        " file not imported",
        "empty.md": "empty file; nothing to import",
        "latin1.md": "not UTF-8 text (byte 5); not read",
    }
    for item in reading.items:
        assert item.origin == item.key
        storable(item)


def test_title_from_frontmatter_then_heading_then_file_name() -> None:
    items = by_key(markdown.read(VAULT))
    alpha = items["Projects/Alpha.md"]
    assert alpha.summary == "Project Alpha"
    assert not alpha.body.startswith("#")  # the heading repeating the title is dropped
    assert items["Welcome.md"].summary == "Welcome to the vault"
    assert items["no title here.md"].summary == "no title here"
    assert items["日本語/会議.md"].summary == "会議メモ 🎉"
    assert items["horizontal rule.md"].body.startswith("---\nA file")


def test_duplicate_titles_stay_two_items_with_distinct_keys() -> None:
    items = by_key(markdown.read(VAULT))
    first, second = items["Meetings/2024-05-01.md"], items["Meetings/2024-05-08.md"]
    assert first.summary == second.summary == "Meeting notes"
    assert first.body != second.body


def test_tags_from_frontmatter_and_prose_only() -> None:
    items = by_key(markdown.read(VAULT))
    assert items["Projects/Alpha.md"].tags == ("project", "active")
    assert items["Café notes.md"].tags == ("coffee", "morning")
    # not code, not the heading line, not a URL fragment, not an issue number
    assert items["Welcome.md"].tags == ("notes", "projects/alpha", "café-life", "vault")
    assert items["日本語/会議.md"].tags == ("会議",)


def test_wikilinks_become_refs_and_embeds_plain_names() -> None:
    items = by_key(markdown.read(VAULT))
    welcome = items["Welcome.md"]
    assert welcome.refs[:2] == (
        Ref(target="Projects/Alpha", text="the alpha project"),
        Ref(target="Café notes", text="Café notes"),
    )
    assert "[[ref:0]] or [[ref:1]]" in welcome.body
    assert "diagram.png" in welcome.body and "![[" not in welcome.body
    # a code block keeps its text; a hand-typed [[ref:0]] cannot be misread as a link
    assert 'tags = "#notatag"  # and [[NotALink]]' in welcome.body
    assert Ref(target="", text="[[ref:0]]") in welcome.refs
    for match in REF_PATTERN.finditer(welcome.body):
        assert int(match.group(1)) < len(welcome.refs)
    alpha = items["Projects/Alpha.md"]
    assert alpha.refs == (
        Ref(target="People/Ana Müller", text="People/Ana Müller"),
        Ref(target="Missing page", text="Missing page"),
    )


def test_markdown_links_to_files_of_the_folder_become_refs() -> None:
    ana = by_key(markdown.read(VAULT))["People/Ana Müller.md"]
    assert ana.refs == (
        Ref(target="Projects/Alpha.md", text="Alpha"),
        Ref(target="Café notes.md", text="Café notes"),
    )
    assert "Works on [[ref:0]],\nwrites [[ref:1]], and keeps [the site](https://" in ana.body
    assert "[a page outside](../../outside.md)" in ana.body


def test_aliases_answer_links_by_name_path_and_frontmatter() -> None:
    items = by_key(markdown.read(VAULT))
    assert items["Projects/Alpha.md"].aliases == ("Project Alpha", "Alpha", "Projects/Alpha", "α")
    assert "People/Ana Müller" in items["People/Ana Müller.md"].aliases
    assert "Café notes" in items["Café notes.md"].aliases


def test_types_and_times() -> None:
    items = by_key(markdown.read(VAULT))
    alpha = items["Projects/Alpha.md"]
    assert alpha.type is NoteType.PROJECT
    assert alpha.created_at == iso_ms("2024-01-15")
    assert alpha.updated_at == iso_ms("2024-02-01T09:30:00Z")
    cafe = items["Café notes.md"]
    assert cafe.type is None and cafe.body.endswith("Type: decision")
    assert cafe.created_at == iso_ms("2024-03-01")
    welcome = items["Welcome.md"]
    mtime = int((VAULT / "Welcome.md").stat().st_mtime * 1000)
    assert welcome.created_at is None and welcome.updated_at == mtime


def test_bom_and_crlf_are_read_as_plain_text() -> None:
    raw = (VAULT / "bom crlf.md").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw
    item = by_key(markdown.read(VAULT))["bom crlf.md"]
    assert item.summary == "Windows note"
    assert item.body == "Line one.\nLine two #crlf"
    assert item.tags == ("win", "crlf")


def test_one_file_path_reads_that_file() -> None:
    reading = markdown.read(VAULT / "Projects" / "Alpha.md")
    assert reading.root == VAULT / "Projects"
    assert [i.key for i in reading.items] == ["Alpha.md"]


def test_not_a_folder_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        markdown.read(tmp_path / "missing")
    (tmp_path / "file.txt").write_text("x", "utf-8")
    with pytest.raises(InvalidInput):
        markdown.read(tmp_path / "file.txt")


def test_reading_writes_nothing_and_is_stable(tmp_path: Path) -> None:
    root = copy_fixture("markdown/vault", tmp_path)
    before = tree(root)
    first, second = markdown.read(root), markdown.read(root)
    assert tree(root) == before
    assert first.items == second.items and first.problems == second.problems


def test_symlinks_leading_outside_are_not_followed(tmp_path: Path) -> None:
    root = copy_fixture("markdown/vault", tmp_path)
    link, folder = add_outside_symlinks(root, tmp_path)
    reading = markdown.read(root)
    keys = set(by_key(reading))
    assert link not in keys and not any(k.startswith(folder) for k in keys)
    assert reasons(reading)[link] == "a symlink leading outside the source; not followed"
    assert reasons(reading)[folder] == "a symlink leading outside the source; not followed"


def test_unreadable_file_is_a_problem(tmp_path: Path) -> None:
    root = copy_fixture("markdown/vault", tmp_path)
    make_unreadable(root / "Welcome.md")
    reading = markdown.read(root)
    assert reasons(reading)["Welcome.md"] == "cannot be read: permission denied"


def test_unreadable_file_is_a_problem_even_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_fixture("markdown/vault", tmp_path)
    deny_reads(monkeypatch, root / "Welcome.md")
    reading = markdown.read(root)
    assert reasons(reading)["Welcome.md"] == "cannot be read: permission denied"
    assert "Projects/Alpha.md" in by_key(reading)


def test_file_over_the_size_limit_is_reported_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(base, "MAX_SOURCE_BYTES", 200)
    root = copy_fixture("markdown/vault", tmp_path)
    (root / "huge.md").write_text("# Huge\n" + "x" * 500, "utf-8")
    reading = markdown.read(root)
    assert "huge.md" not in by_key(reading)
    assert reasons(reading)["huge.md"] == "507 bytes, over the 200-byte limit; not read"


# -- the shared parsing ---------------------------------------------------------------------


def test_frontmatter_subset() -> None:
    text = "\n".join(
        [
            "title: 'It''s'  # a comment",
            'quote: "a \\"b\\" \\u00e4"',
            "tags: [a, 'b, c', \"d\"]",
            "list:",
            "  - one",
            "  - 2",
            "metadata:",
            "  type: project",
            "desc: >-",
            "  folded",
            "  text",
            "lit: |",
            "  keep",
            "  lines",
            "empty:",
            "flag: true",
            "n: 12",
            "date created: 2024-01-01",
        ]
    )
    assert md.parse_frontmatter(text) == {
        "title": "It's",
        "quote": 'a "b" ä',
        "tags": ["a", "b, c", "d"],
        "list": ["one", 2],
        "metadata": {"type": "project"},
        "desc": "folded text",
        "lit": "keep\nlines\n",
        "empty": None,
        "flag": True,
        "n": 12,
        "date created": "2024-01-01",
    }


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("title: 'open", "frontmatter line 2: a quoted value without its closing quote"),
        ("tags: [a, b", "frontmatter line 2: a list without its closing ']'"),
        ("a: 1\na: 2", "frontmatter line 3: key 'a' appears twice"),
        ("just text", "frontmatter line 2: expected 'key: value'"),
        ("  indented: x", "frontmatter line 2: indented line without a key above it"),
        ("m: {a: 1}", "frontmatter line 2: flow mappings ({...}) are not read"),
        ("a: &anchor x", "frontmatter line 2: YAML feature '&' is not read"),
    ],
)
def test_frontmatter_errors_name_the_line(text: str, reason: str) -> None:
    with pytest.raises(md.FrontmatterError) as info:
        md.parse_frontmatter(text)
    assert str(info.value) == reason


def test_split_frontmatter_needs_a_closing_fence() -> None:
    assert md.split_frontmatter("---\na: 1\n---\nbody") == ("a: 1", "body", 4)
    assert md.split_frontmatter("---\nno close\n") == (None, "---\nno close\n", 1)
    assert md.split_frontmatter("body only") == (None, "body only", 1)


def test_wikilink_forms() -> None:
    refs = md.RefMaker()
    out = refs.wikilinks("[[A]] [[B|b]] [[C#h]] [[C#h|see]] ![[img.png]] [[A]] [[]] `[[D]]`")
    assert out == "[[ref:0]] [[ref:1]] [[ref:2]] [[ref:3]] img.png [[ref:0]] [[]] `[[D]]`"
    assert refs.refs == [Ref("A", "A"), Ref("B", "b"), Ref("C", "C"), Ref("C", "see")]


_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Z", "Cc"])
    | st.sampled_from(list("-:[]#|!`'\"\n \t>{}&*")),
    max_size=300,
)


_PIECES = st.sampled_from(
    [
        "key: ",
        "tags: [",
        "- ",
        "  ",
        "  - ",
        "meta:",
        "  sub: ",
        "'",
        '"',
        "\\u00e4",
        "\\x",
        ">-",
        "|",
        "#",
        ", ",
        "]",
        "{",
        "true",
        "12",
        "2024-01-01",
        "---",
        "\t",
    ]
)
_YAMLISH = st.lists(
    st.lists(_PIECES | st.text(max_size=8), max_size=6).map("".join), max_size=12
).map("\n".join)


@settings(max_examples=400, deadline=None)
@given(_TEXT | _YAMLISH)
def test_frontmatter_parser_only_raises_its_own_error(text: str) -> None:
    try:
        meta = md.parse_frontmatter(text)
    except md.FrontmatterError as exc:
        assert exc.line >= 2
        return
    assert isinstance(meta, dict)
    md.frontmatter_str(meta, *meta)
    for key in meta:
        md.frontmatter_list(meta, key)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_wikilinks_leave_only_valid_refs(text: str) -> None:
    refs = md.RefMaker()
    out = refs.wikilinks(text)
    for match in REF_PATTERN.finditer(out):
        assert int(match.group(1)) < len(refs.refs)
    assert len(set(refs.refs)) == len(refs.refs)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_tags_and_titles_are_always_storable(text: str) -> None:
    from memdir.core import normalize_tags

    tags = md.clean_tags(md.inline_tags(text))
    assert normalize_tags(tags) == tags
    summary = md.clean_summary(md.first_heading(text), text)
    assert summary and "\n" not in summary and len(summary) <= 300


@settings(max_examples=150, deadline=None)
@given(_TEXT | _YAMLISH.map(lambda t: f"---\n{t}\n---\n{t}"))
def test_any_file_text_reads_without_raising(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    root = tmp_path_factory.mktemp("any")
    # every file role a reader parses differently: a note, an index, Codex's handbook,
    # summary, rollout summary and skill
    for name in (
        "note.md",
        "MEMORY.md",
        "memory_summary.md",
        "rollout_summaries/r.md",
        "skills/s/SKILL.md",
        "extensions/ad_hoc/notes/n.md",
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, "utf-8", newline="")
    for reader in (markdown, basic_memory, claude_code, codex):
        reading = reader.read(root)
        for item in reading.items:
            storable(item)
            for match in REF_PATTERN.finditer(item.body):
                assert int(match.group(1)) < len(item.refs)
