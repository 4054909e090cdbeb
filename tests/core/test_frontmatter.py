"""§1.1 note files: JSON frontmatter between `---` lines, parse errors, forward compatibility."""

from __future__ import annotations

import dataclasses
import json

import pytest

from memdir.core import Note, NoteType, parse_note, render_note
from memdir.errors import MemdirError, ParseError

HEAD = '{"id":"pricing-borderless-3fa","summary":"Pricing cards use fills","tags":["design"]}'


def note_file(head: str = HEAD, body: str = "Body text.\n") -> bytes:
    return f"---\n{head}\n---\n{body}".encode()


# --- rendering -------------------------------------------------------------------------------


def test_render_is_canonical_one_line_json_in_fixed_key_order() -> None:
    note = Note(
        id="pricing-borderless-3fa",
        summary="Pricing cards use fills, not borders",
        type=NoteType.FEEDBACK,
        tags=("design",),
        created_at=1789000000000,
        updated_at=1789000000001,
        body="Cards are separated by fill.\n\nSee [[pricing-layout-a91]].",
    )
    assert render_note(note) == (
        b"---\n"
        b'{"id":"pricing-borderless-3fa","summary":"Pricing cards use fills, not borders",'
        b'"type":"feedback","tags":["design"],"createdAt":1789000000000,'
        b'"updatedAt":1789000000001}\n'
        b"---\n"
        b"Cards are separated by fill.\n\nSee [[pricing-layout-a91]].\n"
    )


def test_render_omits_absent_optional_keys_and_keeps_non_ascii_readable() -> None:
    note = Note(id="n-1", summary="Grüße 你好 🙂")
    data = render_note(note)
    head = json.loads(data.split(b"\n")[1])
    assert list(head) == ["id", "summary", "tags", "createdAt", "updatedAt"]
    assert "Grüße 你好 🙂".encode() in data  # not \u-escaped
    assert data.endswith(b"---\n")  # no body, no blank line


def test_render_includes_supersedes_and_private_only_when_set() -> None:
    note = Note(id="n-2", summary="s", supersedes=("old-1",), private=True)
    head = json.loads(render_note(note).split(b"\n")[1])
    assert head["supersedes"] == ["old-1"]
    assert head["private"] is True
    assert list(head) == [
        "id",
        "summary",
        "tags",
        "supersedes",
        "private",
        "createdAt",
        "updatedAt",
    ]


# --- accepted variants -----------------------------------------------------------------------


def test_parse_reads_every_field() -> None:
    head = json.dumps(
        {
            "id": "a-1",
            "summary": "S",
            "type": "project",
            "tags": ["x", "y"],
            "supersedes": ["b-2"],
            "private": True,
            "createdAt": 5,
            "updatedAt": 7,
        }
    )
    note = parse_note(note_file(head, "line one\nline two\n"), file_id="a-1")
    assert note == Note(
        id="a-1",
        summary="S",
        type=NoteType.PROJECT,
        tags=("x", "y"),
        supersedes=("b-2",),
        private=True,
        created_at=5,
        updated_at=7,
        body="line one\nline two",
    )


def test_pretty_printed_multi_line_json_is_accepted() -> None:
    head = json.dumps({"id": "pretty-1", "summary": "Pretty", "tags": ["a", "b"]}, indent=4)
    assert "\n" in head
    note = parse_note(note_file(head, "body\n"), file_id="pretty-1")
    assert (note.id, note.summary, note.tags, note.body) == (
        "pretty-1",
        "Pretty",
        ("a", "b"),
        "body",
    )


def test_byte_order_mark_is_accepted() -> None:
    note = parse_note(b"\xef\xbb\xbf" + note_file(), file_id="pricing-borderless-3fa")
    assert note.summary == "Pricing cards use fills"
    assert note.body == "Body text."


def test_crlf_file_is_accepted_and_body_normalised_to_lf() -> None:
    data = note_file(body="one\ntwo\n\nthree\n").replace(b"\n", b"\r\n")
    assert data.count(b"\r\n") == data.count(b"\n") == 7
    note = parse_note(data, file_id="pricing-borderless-3fa")
    assert note.body == "one\ntwo\n\nthree"
    assert b"\r" not in render_note(note)


def test_body_with_fence_lines_and_leading_blank_lines_survives() -> None:
    body = '\n\n---\nnot frontmatter\n---\n{"id": "other"}\n---'
    note = Note(id="fence-1", summary="s", body=body)
    again = parse_note(render_note(note), file_id="fence-1")
    assert again == note
    assert again.body == body


def test_missing_id_comes_from_file_name_and_missing_timestamps_from_mtime() -> None:
    note = parse_note(note_file('{"summary":"no id"}'), file_id="from-name", mtime_ms=1234)
    assert note.id == "from-name"
    assert (note.created_at, note.updated_at) == (1234, 1234)


def test_closing_fence_at_end_of_file_without_newline_means_empty_body() -> None:
    note = parse_note(b'---\n{"id":"e-1","summary":"s"}\n---', file_id="e-1")
    assert note.body == ""


def test_single_string_tag_is_read_as_one_tag() -> None:
    note = parse_note(note_file('{"id":"t-1","summary":"s","tags":"solo"}'), file_id="t-1")
    assert note.tags == ("solo",)


# --- unknown keys ----------------------------------------------------------------------------


def test_unknown_keys_are_preserved_in_order_through_a_rewrite() -> None:
    head = (
        '{"zeta":1,"id":"fwd-1","summary":"old","alpha":{"nested":[1,2,{"k":null}]},'
        '"tags":[],"createdAt":1,"updatedAt":2,"middle":"text","flag":false}'
    )
    note = parse_note(note_file(head, "body\n"), file_id="fwd-1")
    assert note.extra == (
        ("zeta", 1),
        ("alpha", {"nested": [1, 2, {"k": None}]}),
        ("middle", "text"),
        ("flag", False),
    )
    changed = dataclasses.replace(note, summary="new", body="new body", updated_at=3)
    data = render_note(changed)
    doc = json.loads(data.split(b"\n")[1])
    assert list(doc)[-4:] == ["zeta", "alpha", "middle", "flag"]
    assert doc["alpha"] == {"nested": [1, 2, {"k": None}]}
    again = parse_note(data, file_id="fwd-1")
    assert again.extra == note.extra
    assert (again.summary, again.body) == ("new", "new body")


def test_notes_without_type_keep_working() -> None:
    note = parse_note(note_file('{"id":"old-1","summary":"from before types"}'), file_id="old-1")
    assert note.type is None
    assert b'"type"' not in render_note(note)


# --- errors ----------------------------------------------------------------------------------

BAD_FILES = {
    "empty": (b"", "empty file"),
    "whitespace only": (b"  \n\n", "empty file"),
    "fence not on first line": (b"\n---\n{}\n---\n", "no frontmatter"),
    "fence only": (b"---", "no frontmatter"),
    "rules only": (b"---\n\n***\n", "no line of text"),
    "yaml not flat": (b"---\ntitle: a\n  nested: [x\n---\nbody\n", "neither"),
    "yaml id mismatch": (b"---\nid: other\n---\nbody\n", "does not match the file name"),
    "yaml private not bool": (b"---\nprivate: maybe\n---\nbody\n", "private"),
    "unclosed": (b'---\n{"id":"x","summary":"s"}\nbody\n', "not closed"),
    "bad json": (b'---\n{"id":"x","summary":}\n---\n', "not valid JSON"),
    "json array": (b'---\n["id","x"]\n---\n', "must be a JSON object"),
    "json string": (b'---\n"x"\n---\n', "must be a JSON object"),
    "duplicate keys": (b'---\n{"id":"x","summary":"a","summary":"b"}\n---\n', "repeats the key"),
    "nested duplicate keys": (
        b'---\n{"id":"x","summary":"a","meta":{"k":1,"k":2}}\n---\n',
        "repeats the key",
    ),
    "invalid utf-8": (b'---\n{"id":"x","summary":"caf\xe9"}\n---\n', "not valid UTF-8"),
    "binary": (b'---\n{"id":"x","summary":"s"}\n---\n\x00\x01\x02', "binary"),
    "id mismatch": (b'---\n{"id":"other","summary":"s"}\n---\n', "does not match the file name"),
    "bad type": (b'---\n{"id":"x","summary":"s","type":"opinion"}\n---\n', "type must be one of"),
    "type not a string": (b'---\n{"id":"x","summary":"s","type":3}\n---\n', "type must be one of"),
    "no summary": (b'---\n{"id":"x"}\n---\n', "summary"),
    "blank summary": (b'---\n{"id":"x","summary":"  "}\n---\n', "summary"),
    "multi-line summary": (b'---\n{"id":"x","summary":"a\\nb"}\n---\n', "single line"),
    "summary not a string": (b'---\n{"id":"x","summary":5}\n---\n', "summary"),
    "id not a string": (b'---\n{"id":5,"summary":"s"}\n---\n', "id"),
    "tags not strings": (b'---\n{"id":"x","summary":"s","tags":[1]}\n---\n', "tags"),
    "tags an object": (b'---\n{"id":"x","summary":"s","tags":{"a":1}}\n---\n', "tags"),
    "negative time": (b'---\n{"id":"x","summary":"s","createdAt":-1}\n---\n', "createdAt"),
    "bool time": (b'---\n{"id":"x","summary":"s","updatedAt":true}\n---\n', "updatedAt"),
    "string time": (b'---\n{"id":"x","summary":"s","createdAt":"2024"}\n---\n', "createdAt"),
    "infinite time": (b'---\n{"id":"x","summary":"s","createdAt":Infinity}\n---\n', "createdAt"),
    "huge float time": (b'---\n{"id":"x","summary":"s","updatedAt":1e400}\n---\n', "updatedAt"),
    "nan time": (b'---\n{"id":"x","summary":"s","createdAt":NaN}\n---\n', "createdAt"),
    "private not bool": (b'---\n{"id":"x","summary":"s","private":"yes"}\n---\n', "private"),
    "bad supersedes": (
        b'---\n{"id":"x","summary":"s","supersedes":["../etc"]}\n---\n',
        "invalid note",
    ),
    "deeply nested": (
        b'---\n{"id":"x","summary":"s","deep":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n---\n",
        "frontmatter",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_malformed_files_raise_parse_error_saying_what_is_wrong(name: str) -> None:
    data, expected = BAD_FILES[name]
    with pytest.raises(ParseError) as info:
        parse_note(data, file_id="x")
    assert expected in str(info.value)
    assert isinstance(info.value, MemdirError)


def test_parse_error_for_bad_json_names_the_file_line() -> None:
    data = b'---\n{\n  "id": "x",\n  "summary": oops\n}\n---\n'
    with pytest.raises(ParseError, match=r"line 4"):
        parse_note(data, file_id="x")


def test_parse_error_for_invalid_utf8_names_the_byte_offset() -> None:
    data = b'---\n{"id":"x","summary":"\xff"}\n---\n'
    with pytest.raises(ParseError, match=r"byte 25"):
        parse_note(data, file_id="x")


def test_invalid_file_name_id_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        parse_note(note_file('{"summary":"s"}'), file_id="Upper-Case")
