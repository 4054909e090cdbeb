"""The note model: validation on construction and the §1.1 content hash."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from memdir.core import (
    DEFAULT_SCOPE,
    Note,
    NoteType,
    Scope,
    content_hash,
    normalize_body,
    parse_note,
    parse_scope,
    parse_type,
    render_note,
)
from memdir.errors import InvalidInput, ParseError


def expected_hash(doc: dict[str, object]) -> str:
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_hash_of_an_untyped_note_is_computed_as_if_type_never_existed() -> None:
    note = Note(id="old-1", summary="Grüße", tags=("b", "a"), body="line\n\nmore 🙂")
    by_hand = hashlib.sha256(
        '{"body":"line\\n\\nmore 🙂","summary":"Grüße","tags":["a","b"]}'.encode()
    ).hexdigest()
    assert note.hash == by_hand


def test_hash_includes_type_and_supersedes_only_when_present() -> None:
    base = Note(id="n-1", summary="s", tags=("t",), body="b")
    typed = dataclasses.replace(base, type=NoteType.PROJECT)
    superseding = dataclasses.replace(base, supersedes=("z-2", "y-1"))
    assert base.hash == expected_hash({"body": "b", "summary": "s", "tags": ["t"]})
    assert typed.hash == expected_hash(
        {"body": "b", "summary": "s", "tags": ["t"], "type": "project"}
    )
    assert superseding.hash == expected_hash(
        {"body": "b", "summary": "s", "supersedes": ["y-1", "z-2"], "tags": ["t"]}
    )
    assert len({base.hash, typed.hash, superseding.hash}) == 3


def test_tag_order_does_not_change_the_hash() -> None:
    a = Note(id="n-1", summary="s", tags=("x", "y", "z"))
    b = Note(id="n-1", summary="s", tags=("z", "x", "y"))
    assert a.tags != b.tags
    assert a.hash == b.hash
    assert content_hash("s", ("b", "a"), "") == content_hash("s", ("a", "b"), "")


def test_hash_ignores_id_timestamps_private_and_unknown_keys() -> None:
    a = Note(id="n-1", summary="s", body="b", created_at=1, updated_at=2)
    b = Note(
        id="n-2", summary="s", body="b", created_at=9, updated_at=9, private=True, extra=(("x", 1),)
    )
    assert a.hash == b.hash


def test_hash_changes_with_summary_body_and_tags() -> None:
    base = Note(id="n-1", summary="s", body="b", tags=("t",))
    hashes = {
        base.hash,
        dataclasses.replace(base, summary="s2").hash,
        dataclasses.replace(base, body="b2").hash,
        dataclasses.replace(base, tags=("t", "u")).hash,
    }
    assert len(hashes) == 4


def test_hash_survives_a_round_trip_through_the_file() -> None:
    note = Note(id="n-1", summary="s", body="x\r\ny", type=NoteType.USER, tags=("a",))
    assert parse_note(render_note(note), file_id="n-1").hash == note.hash


def test_body_normalisation() -> None:
    assert normalize_body("a\r\nb\rc\n\n\n") == "a\nb\nc"
    assert normalize_body("\n\nlead") == "\n\nlead"
    assert normalize_body("trailing spaces  ") == "trailing spaces  "
    assert Note(id="n-1", summary="s", body="a\r\n").body == "a"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("summary", "", "required"),
        ("summary", "   ", "required"),
        ("summary", "two\nlines", "single line"),
        ("summary", "tab\there", "control"),
        ("summary", "para\u2029sep", "single line"),
        ("summary", "x" * 301, "limit is 300"),
        ("summary", 5, "string"),
        ("body", "nul\x00", "NUL"),
        ("body", 5, "string"),
        ("type", "opinion", "type must be one of"),
        ("created_at", -1, "non-negative"),
        ("updated_at", True, "non-negative"),
        ("id", "../x", "must not contain"),
        ("supersedes", ("Bad",), "lower-case"),
    ],
)
def test_invalid_notes_are_refused(field: str, value: object, message: str) -> None:
    kwargs: dict[str, object] = {"id": "n-1", "summary": "s", field: value}
    with pytest.raises(InvalidInput, match=message):
        Note(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["summary", "body", "tags"])
def test_text_that_cannot_be_stored_as_utf8_is_refused(field: str) -> None:
    value: object = ("lone \ud800 surrogate",) if field == "tags" else "lone \ud800 surrogate"
    kwargs: dict[str, object] = {"id": "n-1", "summary": "s", field: value}
    with pytest.raises(InvalidInput, match="UTF-8"):
        Note(**kwargs)  # type: ignore[arg-type]


def test_summary_is_trimmed() -> None:
    assert Note(id="n-1", summary="  padded  ").summary == "padded"


def test_supersedes_are_deduplicated_in_order() -> None:
    assert Note(id="n-1", summary="s", supersedes=("b", "a", "b")).supersedes == ("b", "a")


def test_links_and_body_bytes() -> None:
    note = Note(id="n-1", summary="s", body="[[b-1]] and [[a-2]] then [[b-1]], [[Bad]] é")
    assert note.links == ("b-1", "a-2")
    assert note.body_bytes == len(note.body.encode())


def test_types_scopes_and_defaults() -> None:
    assert parse_type(None) is None
    assert parse_type("") is None
    assert parse_type("feedback") is NoteType.FEEDBACK
    assert parse_scope("user") is Scope.USER
    assert parse_scope(None) is None
    with pytest.raises(InvalidInput):
        parse_scope("global")
    assert DEFAULT_SCOPE[NoteType.USER] is Scope.USER
    assert {DEFAULT_SCOPE[t] for t in (None, *list(NoteType)) if t is not NoteType.USER} == {
        Scope.PROJECT
    }


def test_scope_and_path_do_not_affect_equality(tmp_path: object) -> None:
    from pathlib import Path

    note = Note(id="n-1", summary="s")
    assert note.located(Scope.USER, Path("/x/n-1.md")) == note


def test_same_content_ignores_timestamps_only() -> None:
    a = Note(id="n-1", summary="s", tags=("a", "b"), created_at=1, updated_at=1)
    assert a.same_content(dataclasses.replace(a, updated_at=5))
    assert not a.same_content(dataclasses.replace(a, tags=("b", "a")))
    assert not a.same_content(dataclasses.replace(a, private=True))
    assert not a.same_content(dataclasses.replace(a, extra=(("k", 1),)))


def test_parse_error_is_not_invalid_input() -> None:
    # A broken file on disk is a different failure from a bad argument (exit codes differ).
    assert not issubclass(ParseError, InvalidInput)


@pytest.mark.parametrize(
    "extra",
    [
        (("id", "other"),),  # would rename the note inside its file
        (("summary", "shadow"),),
        (("k", 1), ("k", 2)),
        ((5, "x"),),
        (("k", {1, 2}),),
        (("k", object()),),
        (("k", "lone \ud800"),),
        ("not pairs",),
    ],
)
def test_extra_keys_must_be_unknown_unique_and_json(extra: object) -> None:
    with pytest.raises(InvalidInput, match="extra"):
        Note(id="n-1", summary="s", extra=extra)  # type: ignore[arg-type]


def test_extra_given_as_a_list_is_kept_as_pairs() -> None:
    note = Note(id="n-1", summary="s", extra=[["k", [1, "two"]]])  # type: ignore[arg-type]
    assert note.extra == (("k", [1, "two"]),)
    assert parse_note(render_note(note), file_id="n-1") == note
