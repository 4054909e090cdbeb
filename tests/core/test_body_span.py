"""body_span: the UTF-8 byte offsets of a note's body in its file, as parse_note splits it."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.core import Note, body_span, normalize_body, parse_note, render_note
from memdir.errors import ParseError

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HEAD = '{"id":"n-1","summary":"s"}'


def body_of(data: bytes) -> bytes:
    start, end = body_span(data)
    return data[start:end]


def test_body_after_the_closing_fence() -> None:
    data = f"---\n{HEAD}\n---\nFirst line.\n\nSecond — ünïcode 🙂.\n".encode()
    start, end = body_span(data)
    assert data[:start] == f"---\n{HEAD}\n---\n".encode()
    assert data[start:end] == "First line.\n\nSecond — ünïcode 🙂.".encode()
    assert end == len(data) - 1


def test_trailing_line_breaks_are_left_out_but_spaces_kept() -> None:
    assert body_of(f"---\n{HEAD}\n---\ntext  \n\n\n".encode()) == b"text  "
    assert body_of(f"---\n{HEAD}\n---\ntext\r\n\r\n\r".encode()) == b"text"
    assert body_of(f"---\n{HEAD}\n---\n\ntext".encode()) == b"\ntext"  # leading kept


def test_empty_bodies() -> None:
    for data in (f"---\n{HEAD}\n---".encode(), f"---\n{HEAD}\n---\n".encode()):
        start, end = body_span(data)
        assert start == end == len(data)
    data = f"---\n{HEAD}\n---\n\n\r\n".encode()
    start, end = body_span(data)
    assert start == end == len(f"---\n{HEAD}\n---\n")


def test_bom_crlf_and_padded_fences() -> None:
    data = f"\ufeff---  \r\n{HEAD}\r\n--- \t\r\nLine one\r\nLine two\r\n".encode()
    assert body_of(data) == b"Line one\r\nLine two"
    assert parse_note(data).body == "Line one\nLine two"


def test_pretty_printed_frontmatter_and_fences_in_the_body() -> None:
    data = b'---\n{\n  "id": "n-1",\n  "summary": "s"\n}\n---\nbody\n---\nmore\n'
    assert body_of(data) == b"body\n---\nmore"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty file"),
        (b" \n\t", "empty file"),
        (b"---\n{}\n---\n\x00", "NUL"),
        (b"---\n{}\n---\n\xff", "UTF-8"),
        (b"---", "no frontmatter"),
        (b"---\n\n***\n", "no line of text"),
        (b'---\n{"id":"x"}\nbody', "not closed"),
    ],
)
def test_unparseable_files_raise_like_parse_note(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message) as spanned:
        body_span(data)
    with pytest.raises(ParseError) as parsed:
        parse_note(data, file_id="x")
    assert str(spanned.value) == str(parsed.value)


# --- properties ------------------------------------------------------------------------------

chars = st.characters(codec="utf-8", exclude_characters="\x00")
pieces = st.sampled_from(
    ["---", "\n---\n", "---\n", "\r\n", "\r", "\n", "\n\n", " ", "🙂", "e\u0301", "\ufeff", "你好"]
)
bodies = st.lists(st.one_of(st.text(chars), pieces), max_size=12).map("".join)


@SETTINGS
@given(bodies)
def test_span_of_a_rendered_note_is_its_body(body: str) -> None:
    note = Note(id="n-1", summary="s", body=body)
    data = render_note(note)
    assert body_of(data).decode("utf-8") == note.body


@SETTINGS
@given(
    bodies,
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
    st.sampled_from(["---", "--- ", "---\t"]),
)
def test_span_agrees_with_parse_note(body: str, newline: str, bom: bool, fence: str) -> None:
    text = ("\ufeff" if bom else "") + f"{fence}{newline}{HEAD}{newline}{fence}{newline}{body}"
    data = text.encode("utf-8")
    note = parse_note(data)
    assert normalize_body(body_of(data).decode("utf-8")) == note.body


@SETTINGS
@given(st.binary(max_size=64) | bodies.map(lambda b: ("---\n" + b).encode("utf-8")))
def test_span_fails_only_where_parse_note_fails(data: bytes) -> None:
    try:
        start, end = body_span(data)
    except ParseError:
        with pytest.raises(ParseError):
            parse_note(data, file_id="x")
        return
    assert 0 <= start <= end <= len(data)
    data[start:end].decode("utf-8")
    with contextlib.suppress(ParseError):  # the frontmatter JSON may still be bad
        assert normalize_body(data[start:end].decode("utf-8")) == parse_note(data).body
