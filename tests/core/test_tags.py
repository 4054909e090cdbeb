"""§2 tag normalisation: trimmed, split on commas and whitespace, de-duplicated."""

from __future__ import annotations

import pytest

from memdir.core import Note, normalize_tags
from memdir.errors import InvalidInput


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, ()),
        ("", ()),
        ([], ()),
        ("design", ("design",)),
        ("  design  ", ("design",)),
        ("a,b", ("a", "b")),
        ("a, b ,c", ("a", "b", "c")),
        ("a b\tc\nd", ("a", "b", "c", "d")),
        ("a,,b,", ("a", "b")),
        (["a,b", " c ", "d e"], ("a", "b", "c", "d", "e")),
        (["Design", "design", "DESIGN", "api"], ("Design", "api")),
        (("Straße", "STRASSE"), ("Straße",)),
        (["b", "a", "b"], ("b", "a")),
        (["日本語", "タグ"], ("日本語", "タグ")),
        ("x\u00a0y", ("x", "y")),
    ],
)
def test_normalize_tags(raw: str | list[str] | None, expected: tuple[str, ...]) -> None:
    assert normalize_tags(raw) == expected


@pytest.mark.parametrize("char", ["\x01", "\x1b", "\x7f", "\x9b"])
def test_tags_with_control_characters_are_refused(char: str) -> None:
    with pytest.raises(InvalidInput, match="control"):
        normalize_tags([f"a{char}b"])


def test_overlong_tag_is_refused() -> None:
    with pytest.raises(InvalidInput, match="limit is 64"):
        normalize_tags(["t" * 65])
    assert normalize_tags(["t" * 64]) == ("t" * 64,)


def test_non_string_tag_is_refused() -> None:
    with pytest.raises(InvalidInput, match="strings"):
        normalize_tags([1])  # type: ignore[list-item]


def test_note_normalises_its_tags() -> None:
    note = Note(id="n-1", summary="s", tags=(" a,b ", "A", "c d"))
    assert note.tags == ("a", "b", "c", "d")
