"""Undoing the encodings a pasted secret arrives in: escapes, Markdown marks and base64.

Writers paste tokens out of URLs ("ghp%5F…"), HTML ("sk&#95;live&#95;…"), Markdown that a
converter mangled ("sk\\_live\\_…", "sk*live*…", "ghp_**abc**…") and Kubernetes Secrets
(base64).  `unescaped_lines` gives the lines that hold such escapes with them undone, for a
second reading by every detector; `base64_hits` decodes base64 runs and reports one only
when the decoded bytes hold a known token or key shape, so images, hashes, ids and public
keys stay quiet.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import itertools
import re
from collections.abc import Iterator

from .hit import PRIO_SHAPE, PRIO_VENDOR, Hit
from .normalise import Normalised
from .shapes import shape_hits
from .values import looks_random
from .vendors import vendor_hits

__all__ = ["base64_hits", "prefixed_token_hits", "unescaped", "unescaped_lines"]

_NAMED = {
    "lowbar": "_",
    "quot": '"',
    "amp": "&",
    "apos": "'",
    "hyphen": "-",
    "dash": "-",
    "equals": "=",
    "colon": ":",
    "period": ".",
    "commat": "@",
    "sol": "/",
    "num": "#",
    "excl": "!",
    "plus": "+",
    "shy": "",
}
# Characters that split a token for the eye of a scanner but not for a reader (`normalise`
# drops them as characters; here they come as references: "&#8203;", "&#xAD;").
_INVISIBLE_CODES = frozenset((0xAD, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF))
# Percent escapes and "\u005f", "\x5f" escapes of printable ASCII; character references
# (decimal, hex, named) of printable ASCII or of invisible characters; a backslash before a
# Markdown mark; Markdown emphasis, a code mark or an inline HTML tag inside a word
# ("ghp_**abc**def", "sk-*live*…", "sk*live*…", "ghp_<b>abc</b>def").
_ESCAPE_RE = re.compile(
    r"%(?P<pct>[2-7][0-9a-fA-F])|\\(?:u00|x)(?P<uni>[2-7][0-9a-fA-F])"
    r"|&(?:#(?P<dec>\d{2,5})|#[xX](?P<hex>[0-9a-fA-F]{2,4})|(?P<name>" + "|".join(_NAMED) + r"));"
    r"|\\(?P<esc>[_*`\-])"
    r"|(?<=[\w-])\*(?P<em>[A-Za-z0-9]{1,40})\*(?=[\w-])"
    r"|(?<=[\w-])(?P<mark>\*\*|__|``?|\*)(?=[\w-])"
    r"|(?<=[\w-])(?P<tag></?(?:b|i|u|s|em|strong|code|span|mark|kbd|tt|wbr)(?:\s[^<>]{0,60})?/?>)"
    r"(?=[\w<-])"
)


_ESCAPE_MARKS = ("%", "&", "\\", "*", "`", "__", "<")
_ESCAPE_START_RE = re.compile(r"[%&\\*`<]|__")
_LINE_REACH = 2048  # a long line is read this far either side of its escape


def unescaped_lines(text: str) -> Iterator[tuple[int, Normalised]]:
    """Each line that holds an escape, undone: (where the line starts, the undone line).

    Only those lines are read again, so a long note with one escape costs one line more.
    """
    if not any(mark in text for mark in _ESCAPE_MARKS):
        return
    done = 0
    for m in _escapes(text):
        if m.start() < done:
            continue
        lo = max(text.rfind("\n", 0, m.start()) + 1, m.start() - _LINE_REACH, done)
        hi = text.find("\n", m.end(), m.end() + _LINE_REACH)
        hi = min(len(text), m.end() + _LINE_REACH) if hi < 0 else hi
        done = hi
        plain = unescaped(text[lo:hi])
        if plain is not None:
            yield lo, plain
            # "sk*live*…" is "sk_live_…" mangled into emphasis or "sk" + emphasised "live":
            # when a line has such a pair, it is read both ways.
            mangled = unescaped(text[lo:hi], stars="_")
            if mangled is not None and mangled.text != plain.text:
                yield lo, mangled


def _escapes(text: str) -> Iterator[re.Match[str]]:
    """Matches of `_ESCAPE_RE`, tried only where an escape can start (much faster than a
    search, which tries every branch and lookbehind at every character)."""
    pos = 0
    for start in _ESCAPE_START_RE.finditer(text):
        if start.start() < pos:
            continue
        m = _ESCAPE_RE.match(text, start.start())
        if m is not None:
            pos = m.end()
            yield m


def unescaped(text: str, *, stars: str = "") -> Normalised | None:
    """The text with escapes undone and its offset map, or None if it has none.

    `stars` replaces a "*…*" pair inside a word that follows a letter or digit: "" reads it
    as emphasis, "_" as underscores a Markdown converter turned into emphasis.
    """
    parts: list[str] = []
    norm_starts: list[int] = []
    orig_starts: list[int] = []
    widths: list[int] = []
    out = 0
    copied = 0
    for m in _escapes(text):
        repl = _replacement(m, stars)
        if repl is None:
            continue
        if m.start() > copied:
            norm_starts.append(out)
            orig_starts.append(copied)
            widths.append(0)
            parts.append(text[copied : m.start()])
            out += m.start() - copied
        if repl:
            norm_starts.append(out)
            orig_starts.append(m.start())
            widths.append(m.end() - m.start())
            parts.append(repl)
            out += len(repl)
        copied = m.end()
    if copied == 0:
        return None
    if copied < len(text):
        norm_starts.append(out)
        orig_starts.append(copied)
        widths.append(0)
        parts.append(text[copied:])
    return Normalised("".join(parts), tuple(norm_starts), tuple(orig_starts), tuple(widths))


def _replacement(m: re.Match[str], stars: str) -> str | None:
    code = m.group("pct") or m.group("uni")
    if code is not None:
        value = int(code, 16)
        return chr(value) if value < 127 else None
    code = m.group("dec") or m.group("hex")
    if code is not None:
        value = int(code, 10 if m.group("dec") else 16)
        if value in _INVISIBLE_CODES:
            return ""
        return chr(value) if 32 <= value < 127 else None
    if m.group("em") is not None:
        glued = m.string[m.start() - 1].isalnum()  # "sk*live*…", not "sk-*live*…"
        return f"{stars}{m.group('em')}{stars}" if glued else m.group("em")
    if m.group("tag") is not None:
        return ""
    if m.group("name") is not None:
        return _NAMED[m.group("name")]
    if m.group("esc") is not None:
        return m.group("esc")
    # A lone "*" inside a word is an underscore a Markdown converter turned into emphasis.
    return "_" if m.group("mark") == "*" else ""


# A token with a vendor-style prefix ("sk-live…", "abc_test_…") that the writer split with
# Markdown or escaped: read whole, its random tail makes it a token even with no known shape.
_PREFIXED_RE = re.compile(
    r"(?<![\w-])[A-Za-z]{2,8}[_-](?:[A-Za-z]{2,8}[_-])?(?P<tail>[A-Za-z0-9_-]{16,200})(?![\w-])"
)


def prefixed_token_hits(plain: Normalised) -> Iterator[Hit]:
    """Prefixed random tokens in an undone line that the escapes or marks had split."""
    for m in _PREFIXED_RE.finditer(plain.text):
        if plain.end(m.end()) - plain.start(m.start()) == m.end() - m.start():
            continue  # nothing was undone inside it: the first reading judged it already
        tail = m.group("tail")
        words = tail.count("-") + tail.count("_")
        if words <= 2 and any(ch.isdigit() for ch in tail) and looks_random(tail):
            yield Hit(m.start(), m.end(), "token", PRIO_SHAPE)  # not "foo-*bar*-baz-qux-…"


# A base64 or base64url run long enough to hold a token; longer runs are read in part.
_B64_RUN_RE = re.compile(r"(?<![A-Za-z0-9+/=_.-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")
_MAX_DECODE = 8192
_PRINTABLE = frozenset(range(32, 127)) | {9, 10, 13}


def base64_hits(text: str) -> Iterator[Hit]:
    """Base64 runs whose decoded text is a vendor token, a private key or another shape."""
    runs: list[tuple[int, int]] = []
    decoded: list[str] = []
    for m in _B64_RUN_RE.finditer(text):
        run = m.group().rstrip("=")
        if run.isalpha() or run.isdigit() or run.islower():
            continue  # a word, a number or a lower-case slug: not a token's encoding
        plain = _decode(run[:_MAX_DECODE])
        if plain is not None:
            runs.append(m.span())
            decoded.append(plain)
    if not decoded:
        return
    # One reading of all decoded runs, a blank line apart, instead of one per run.
    joined = "\n\n".join(decoded)
    starts = list(itertools.accumulate((len(d) + 2 for d in decoded[:-1]), initial=0))
    reported: set[int] = set()
    for found in itertools.chain(vendor_hits(joined), shape_hits(joined)):
        k = bisect.bisect_right(starts, found.start) - 1
        if k not in reported:
            reported.add(k)
            yield Hit(runs[k][0], runs[k][1], f"{found.kind} (base64)", PRIO_VENDOR)


def _decode(run: str) -> str | None:
    run = run[: len(run) - len(run) % 4] if len(run) % 4 == 1 else run
    padded = run + "=" * (-len(run) % 4)
    try:
        if "-" in run or "_" in run:
            raw = base64.urlsafe_b64decode(padded)
        else:
            raw = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) < 12 or not _PRINTABLE.issuperset(raw):
        return None
    return raw.decode("ascii")
