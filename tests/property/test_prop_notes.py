"""Property tests for the §1.1 file format: round trips, parse robustness, ids and tags."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memdir.core import (
    KNOWN_KEYS,
    Note,
    NoteType,
    is_valid_id,
    make_id,
    normalize_tags,
    parse_note,
    render_note,
    validate_id,
)
from memdir.errors import InvalidInput, ParseError

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ids = st.from_regex(r"[a-z0-9][a-z0-9-]{0,79}", fullmatch=True).filter(is_valid_id)

# Single-line summaries: no control characters, no line or paragraph separators.
summary_chars = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"))
summaries = st.text(summary_chars, min_size=1, max_size=300).map(str.strip).filter(bool)

tricky_pieces = st.sampled_from(
    [
        "---",
        "\n---\n",
        "---\n",
        "\r\n",
        "\r",
        "\n",
        "\n\n",
        "  ",
        "\t",
        "🙂",
        "👩‍👩‍👧",
        "你好世界",
        "日本語のテキスト",
        "한국어",
        "e\u0301",
        "\u0308",
        "\ufeff",
        "\u2028",
        "\x85",
        '{"id":"x"}',
        "[[link-1]]",
        "```\ncode\n```",
        "\\",
        '"',
    ]
)
bodies = st.lists(
    st.one_of(
        st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")),
        tricky_pieces,
    ),
    max_size=12,
).map("".join)

tag_entries = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=64)
tag_lists = st.lists(tag_entries, max_size=6)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters(blacklist_categories=("Cs",))),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
    ),
    max_leaves=12,
)
extras = st.dictionaries(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=12).filter(
        lambda k: k not in KNOWN_KEYS
    ),
    json_values,
    max_size=4,
).map(lambda d: tuple(d.items()))
timestamps = st.integers(min_value=0, max_value=2**53)


@st.composite
def notes(draw: st.DrawFn) -> Note:
    return Note(
        id=draw(ids),
        summary=draw(summaries),
        body=draw(bodies),
        type=draw(st.sampled_from([None, *NoteType])),
        tags=tuple(normalize_tags(draw(tag_lists))),
        created_at=draw(timestamps),
        updated_at=draw(timestamps),
        supersedes=tuple(draw(st.lists(ids, max_size=3))),
        private=draw(st.booleans()),
        extra=draw(extras),
    )


@SETTINGS
@given(notes())
def test_parse_render_round_trip(note: Note) -> None:
    data = render_note(note)
    again = parse_note(data, file_id=note.id)
    assert again == note
    assert again.extra == note.extra
    assert again.hash == note.hash
    assert render_note(again) == data


@SETTINGS
@given(notes())
def test_crlf_copy_of_a_file_parses_to_the_same_note(note: Note) -> None:
    assume("\r" not in json.dumps(dict(note.extra), ensure_ascii=False))
    data = render_note(note).replace(b"\n", b"\r\n")
    again = parse_note(b"\xef\xbb\xbf" + data, file_id=note.id)
    assert again == note


@SETTINGS
@given(st.builds(lambda *parts: parts, summaries, bodies, tag_lists, st.randoms()))
def test_hash_does_not_depend_on_tag_order(parts: tuple[Any, ...]) -> None:
    summary, body, tags, rnd = parts
    tags = list(normalize_tags(tags))
    shuffled = tags[:]
    rnd.shuffle(shuffled)
    a = Note(id="n-1", summary=summary, body=body, tags=tuple(tags))
    b = Note(id="n-1", summary=summary, body=body, tags=tuple(shuffled))
    assert a.hash == b.hash


# --- parsing never fails with anything but ParseError ----------------------------------------

wild_values = st.one_of(
    json_values,
    st.floats(),  # NaN and ±Infinity: Python's json writes and reads them
    st.integers(),
    st.lists(st.text(max_size=5), max_size=3),
)
wild_heads = st.dictionaries(
    st.sampled_from([*KNOWN_KEYS, "x", "id", "summary"]),
    st.one_of(wild_values, ids, summaries),
    max_size=9,
).map(lambda d: json.dumps(d, ensure_ascii=False))


@SETTINGS
@given(wild_heads, bodies, st.sampled_from(["\n", "\r\n"]))
def test_parse_raises_only_parse_error_on_structured_junk(head: str, body: str, nl: str) -> None:
    data = f"---{nl}{head}{nl}---{nl}{body}".encode("utf-8", "surrogatepass")
    try:
        note = parse_note(data, file_id="x")
    except ParseError as exc:
        assert str(exc)
    else:
        assert note.id == "x"


@SETTINGS
@given(st.binary(max_size=300))
def test_parse_raises_only_parse_error_on_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        parse_note(b"---\n" + data, file_id="x")
    with contextlib.suppress(ParseError):
        parse_note(data)


# --- ids and tags ----------------------------------------------------------------------------

SAFE_ID = re.compile(r"[a-z0-9][a-z0-9-]*")


@SETTINGS
@given(st.text(), st.sets(ids, max_size=20))
def test_make_id_always_yields_a_valid_fresh_id(summary: str, taken: set[str]) -> None:
    shouted = {t.upper() for t in taken}
    new = make_id(summary, shouted)
    assert validate_id(new) == new
    assert new.casefold() not in {t.casefold() for t in shouted}


@SETTINGS
@given(st.text())
def test_make_id_avoids_its_own_choice(summary: str) -> None:
    first = make_id(summary)
    second = make_id(summary, {first.upper()}, token=lambda n: first[-3:] * n + "f00d"[: n * 2])
    assert second != first
    assert is_valid_id(second)


@SETTINGS
@given(st.text())
def test_valid_ids_are_safe_file_names(raw: str) -> None:
    if is_valid_id(raw):
        assert SAFE_ID.fullmatch(raw)
        assert len(raw) <= 80
        assert not {"/", "\\", "\x00", "."} & set(raw)
        assert raw == raw.lower()


@SETTINGS
@given(st.lists(st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=64)))
def test_tag_normalisation_is_idempotent_and_case_insensitively_unique(raw: list[str]) -> None:
    try:
        tags = normalize_tags(raw)
    except InvalidInput:
        return
    assert normalize_tags(tags) == tags
    assert len({t.casefold() for t in tags}) == len(tags)
    for tag in tags:
        assert tag and tag == tag.strip()
        assert "," not in tag
        assert not any(c.isspace() for c in tag)
