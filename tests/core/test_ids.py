"""§1.1 note ids: validation against traversal and reserved names, generation from summaries."""

from __future__ import annotations

import pytest

from memdir.core import MAX_ID_LENGTH, is_valid_id, make_id, slugify, validate_id
from memdir.errors import InvalidInput

REFUSED = {
    "parent traversal": "../x",
    "double dot inside": "a..b",
    "slash": "a/b",
    "backslash": "a\\b",
    "nul": "a\x00b",
    "absolute": "/abs",
    "windows con": "con",
    "windows lpt1": "lpt1",
    "windows com9": "com9",
    "windows nul": "nul",
    "windows aux": "aux",
    "windows prn": "prn",
    "too long": "a" * (MAX_ID_LENGTH + 1),
    "upper-case": "Pricing-3fa",
    "all upper-case": "ABC",
    "empty": "",
    "leading dash": "-x",
    "dot": ".",
    "hidden": ".hidden",
    "extension": "note.md",
    "space": "a b",
    "trailing newline": "abc\n",
    "underscore": "a_b",
    "non-ascii": "café",
    "fullwidth digit": "１",
    "tilde": "~",
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unsafe_ids_are_refused(name: str) -> None:
    raw = REFUSED[name]
    with pytest.raises(InvalidInput):
        validate_id(raw)
    assert not is_valid_id(raw)


@pytest.mark.parametrize("raw", [None, 5, b"abc", ["a"]])
def test_non_string_ids_are_refused(raw: object) -> None:
    with pytest.raises(InvalidInput, match="must be a string"):
        validate_id(raw)


@pytest.mark.parametrize(
    "raw",
    ["a", "0", "a-b", "pricing-borderless-3fa", "a" * MAX_ID_LENGTH, "con-1", "lpt10", "a--b"],
)
def test_valid_ids_pass_unchanged(raw: str) -> None:
    assert validate_id(raw) == raw
    assert is_valid_id(raw)


def test_error_messages_say_why() -> None:
    with pytest.raises(InvalidInput, match="lower-case"):
        validate_id("Abc")
    with pytest.raises(InvalidInput, match="reserved"):
        validate_id("con")
    with pytest.raises(InvalidInput, match="limit is 80"):
        validate_id("a" * 81)
    with pytest.raises(InvalidInput, match="empty"):
        validate_id("")
    with pytest.raises(InvalidInput, match="NUL"):
        validate_id("\x00")


def test_slugify_takes_the_first_words_as_ascii() -> None:
    assert slugify("Pricing cards use fills, not borders") == "pricing-cards-use-fills-not"
    assert slugify("Café Ünïcode naïve") == "cafe-unicode-naive"
    assert slugify("你好 世界") == ""
    assert slugify("---") == ""
    assert len(slugify("x" * 200)) == 40


def test_make_id_uses_slug_and_short_suffix() -> None:
    new = make_id("Pricing cards use fills", token=lambda n: "abcd"[: n * 2])
    assert new == "pricing-cards-use-fills-abc"


def test_make_id_falls_back_to_note_and_avoids_reserved_names() -> None:
    assert make_id("你好", token=lambda n: "0" * n * 2) == "note-000"
    assert make_id("CON", token=lambda n: "1" * n * 2) == "con-note-111"
    assert is_valid_id(make_id("lpt1"))


def test_make_id_avoids_case_insensitive_collisions() -> None:
    tokens = iter(["abcd", "abcd", "ef01"])
    new = make_id("Hello", {"HELLO-ABC"}, token=lambda n: next(tokens))
    assert new == "hello-ef0"


def test_make_id_accepts_a_predicate_and_widens_the_suffix_when_crowded() -> None:
    calls: list[int] = []

    def token(n: int) -> str:
        calls.append(n)
        return "ab" * n

    new = make_id("x", lambda candidate: candidate == "x-aba", token=token)
    assert new == "x-abababab"
    assert calls[-1] == 4


def test_make_id_gives_up_with_invalid_input_when_everything_is_taken() -> None:
    with pytest.raises(InvalidInput, match="free id"):
        make_id("x", lambda candidate: True)
