"""Tests for `guard/normalise.py`: folding look-alikes while reporting against the original."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memdir.guard import Finding, redact, scan_text
from memdir.guard.normalise import normalise

from .corpus import ALNUM, tok

AWS_ID = "AKIA" + tok("norm-aws", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
GH = "ghp_" + tok("norm-ghp", ALNUM, 36)
PW = "Qm" + "7v!" + "Lr2" + "zX9"


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def test_ascii_and_normal_text_are_returned_as_is() -> None:
    for text in ("plain ascii", "Grüße aus Köln", "密码长度至少8位"):
        norm = normalise(text)
        assert norm.text is text
        assert norm.start(3) == 3
        assert norm.end(3) == 3


def test_full_width_and_invisibles_fold_and_map_back() -> None:
    text = "x " + _fullwidth("AB") + "\u200bC"
    norm = normalise(text)
    assert norm.text == "x ABC"
    assert norm.start(2) == 2
    assert norm.end(4) == 4  # "B" ends where its full-width original ends
    assert norm.start(4) == 5  # "C" starts after the dropped zero-width space
    assert norm.end(5) == len(text)


@given(st.text())
def test_offsets_stay_in_order_and_in_range(text: str) -> None:
    norm = normalise(text)
    previous = 0
    for pos in range(len(norm.text) + 1):
        start = norm.start(pos) if pos < len(norm.text) else len(text)
        assert previous <= start <= len(text)
        assert norm.end(pos) <= len(text)
        previous = start


def test_zero_width_split_token_is_found_on_its_original_line() -> None:
    text = "first line\nkey id " + AWS_ID[:4] + "\u200b" + AWS_ID[4:] + "\nlast"
    assert scan_text(text) == [Finding("AWS access key id", 2)]
    assert redact(text) == "first line\nkey id [REDACTED:AWS access key id]\nlast"


def test_full_width_token_and_label_are_found_and_redacted_in_the_original() -> None:
    text = "note\n" + _fullwidth(GH) + " and " + _fullwidth("password:") + " " + PW
    found = scan_text(text)
    assert [f.line for f in found] == [2, 2]
    redacted = redact(text)
    assert _fullwidth(GH) not in redacted
    assert PW not in redacted
    assert redacted.startswith("note\n[REDACTED:GitHub token] and ")


def test_bidi_controls_do_not_hide_a_value() -> None:
    text = "password=\u2066" + PW + "\u2069"
    assert scan_text(text) == [Finding("password assignment", 1)]
    assert PW not in redact(text)


def test_homoglyphs_in_a_mixed_word_are_read_as_latin_and_russian_stays_russian() -> None:
    text = "p\u0430ssword and gh\u0440_x and \u041f\u0430\u0440\u043e\u043b\u044c"
    norm = normalise(text)
    assert norm.text == "password and ghp_x and \u041f\u0430\u0440\u043e\u043b\u044c"
    assert len(norm.text) == len(text)
    # a Russian word typed with a Latin "a" and "o" is read as Russian
    assert normalise("\u043fa\u0440o\u043b\u044c").text == "\u043f\u0430\u0440\u043e\u043b\u044c"


def test_a_homoglyph_label_and_token_are_found() -> None:
    text = "p\u0430ssw\u043erd: " + PW + "\n" + GH.replace("p", "\u0440", 1)
    assert [f.line for f in scan_text(text)] == [1, 2]


def test_half_width_kana_and_sound_mark_compose() -> None:
    text = "\uff8a\uff9f\uff7d\uff9c\uff70\uff84\uff9e\uff1a" + PW
    norm = normalise(text)
    assert norm.text.startswith("パスワード:")
    assert norm.start(0) == 0
    assert norm.end(1) == 2  # "パ" spans the kana and its mark
    assert scan_text(text) == [Finding("password", 1)]
