"""Tests for `guard/decode.py`: escaped, Markdown-mangled and base64-encoded tokens."""

from __future__ import annotations

import base64

import pytest

from memdir.guard import redact, scan_text
from memdir.guard.decode import base64_hits, unescaped_lines

from .corpus import ALNUM, B64, HEX, tok

GH = "ghp_" + tok("dec-ghp", ALNUM, 36)
STRIPE = "sk_live_" + tok("dec-stripe", ALNUM, 24)
GL = "glpat-" + tok("dec-glpat", ALNUM, 20)


def _b64(value: str) -> str:
    return base64.b64encode(value.encode()).decode()


@pytest.mark.parametrize(
    "encoded",
    [
        GH.replace("_", "%5F"),
        GH.replace("_", "&#95;"),
        GH.replace("_", "&#x5F;"),
        GH.replace("_", "&lowbar;"),
        GL.replace("-", "%2D"),
        GL.replace("-", "&#45;"),
        STRIPE.replace("_", "\\_"),
        STRIPE.replace("_", "*"),
        GH[:4] + "**" + GH[4:7] + "**" + GH[7:],
        GH[:4] + "`" + GH[4:7] + "`" + GH[7:],
        GH[:4] + "``" + GH[4:],
        GH[:4] + "*" + GH[4:7] + "*" + GH[7:],
        GH[:4] + "<b>" + GH[4:7] + "</b>" + GH[7:],
        GH[:10] + "&#8203;" + GH[10:],
        "sk-*live*" + tok("dec-sklive", ALNUM, 24),
        GH.replace("_", "\\u005f"),
        "".join(f"%{ord(c):02X}" for c in GH[:8]) + GH[8:],
        _b64(GH),
        _b64(STRIPE),
        base64.urlsafe_b64encode(GL.encode()).decode().rstrip("="),
    ],
)
def test_an_encoded_token_is_found_and_redacted_in_the_original(encoded: str) -> None:
    text = f"first line\nsee {encoded} here\n"
    assert [f.line for f in scan_text(text)] == [2]
    assert encoded not in redact(text)
    assert redact(text).startswith("first line\nsee [REDACTED:")


@pytest.mark.parametrize(
    "text",
    [
        "![x](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA" + tok("dec-png", B64, 80) + ")",
        "notes: " + _b64("Move the standup to 10am and review the quarterly roadmap."),
        "sha256 " + tok("dec-sha", HEX, 64),
        "https://example.com/files/report%5Ffinal%2D2024.pdf",
        "Tom &amp; Jerry &#95; episode&#95;12 &lowbar; final",
        "rename my\\_variable\\_name, compute 2*3*4, and read **this** `now`",
        "foo-*bar*-baz-qux-quux-corge-grault and release-**v2**-build-2024-03-11-final",
        "see sk-*live*demo, a<b>bold</b>word and x&#8203;y",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + tok("dec-pub", B64, 43) + " me@laptop",
    ],
)
def test_ordinary_encodings_pass(text: str) -> None:
    assert scan_text(text) == []


def test_only_lines_with_escapes_are_read_again() -> None:
    text = "plain line\nkey=" + GH.replace("_", "%5F") + "\nanother plain line"
    lines = list(unescaped_lines(text))
    assert len(lines) == 1
    start, plain = lines[0]
    assert text[start:].startswith("key=")
    assert plain.text == "key=" + GH


def test_base64_is_reported_only_for_a_token_shape() -> None:
    text = f"{_b64('just some words, nothing more to it')} {_b64(GH)}"
    hits = list(base64_hits(text))
    assert [text[h.start : h.end] for h in hits] == [_b64(GH)]
    assert hits[0].kind.endswith("(base64)")


def test_a_star_pair_after_a_letter_is_read_both_ways() -> None:
    variants = [plain.text for _, plain in unescaped_lines("sk*live*abc")]
    assert variants == ["skliveabc", "sk_live_abc"]
