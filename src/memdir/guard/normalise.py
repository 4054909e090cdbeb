"""Folding look-alike text (full-width forms, zero-width and bidi controls) before detection.

Detectors run on the normalised text; every position they report is mapped back to the
original, so line numbers and redaction apply to what the caller actually wrote.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["Normalised", "normalise"]

# Invisible characters that split a token for the eye of a scanner but not for a reader:
# zero-width space/joiners, word joiner, BOM, soft hyphen, Mongolian vowel separator and
# the bidirectional embedding, override and isolate controls.
_INVISIBLE = "\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")
_NON_ASCII_RUN_RE = re.compile(r"[^\x00-\x7f]+")


@dataclass(frozen=True, slots=True)
class Normalised:
    """Normalised text and the map from its offsets back to the original's.

    `norm_starts[k]` is where segment k begins in `text` and `orig_starts[k]` in the
    original; `widths[k]` is 0 for a copied run (offsets shift together) or the original
    length of a single replaced character (all of its output maps to that character).
    """

    text: str
    norm_starts: tuple[int, ...] = ()
    orig_starts: tuple[int, ...] = ()
    widths: tuple[int, ...] = ()

    def start(self, pos: int) -> int:
        """The original offset of the character at normalised offset `pos`."""
        if not self.norm_starts:
            return pos
        k = bisect.bisect_right(self.norm_starts, pos) - 1
        if k < 0:
            return pos
        if self.widths[k]:
            return self.orig_starts[k]
        return self.orig_starts[k] + pos - self.norm_starts[k]

    def end(self, pos: int) -> int:
        """The original offset just after the character before normalised offset `pos`."""
        if not self.norm_starts or pos == 0:
            return pos
        k = bisect.bisect_right(self.norm_starts, pos - 1) - 1
        if k < 0:
            return pos
        if self.widths[k]:
            return self.orig_starts[k] + self.widths[k]
        return self.orig_starts[k] + pos - self.norm_starts[k]


def _fold_char(ch: str) -> str:
    if _INVISIBLE_RE.match(ch):
        return ""
    return unicodedata.normalize("NFKC", ch)


def normalise(text: str) -> Normalised:
    """NFKC-fold each character and drop invisible controls, keeping an offset map.

    Characters are folded one at a time (no composition across characters), which is all
    detection needs and keeps every output character traceable to one input character.
    """
    if text.isascii() or (
        unicodedata.is_normalized("NFKC", text) and _INVISIBLE_RE.search(text) is None
    ):
        return Normalised(text)
    parts: list[str] = []
    norm_starts: list[int] = []
    orig_starts: list[int] = []
    widths: list[int] = []
    out = 0  # length of the normalised text so far
    copied = 0  # original offset up to which text has been copied or replaced

    def copy_to(pos: int) -> None:
        nonlocal out, copied
        if pos > copied:
            norm_starts.append(out)
            orig_starts.append(copied)
            widths.append(0)
            parts.append(text[copied:pos])
            out += pos - copied
            copied = pos

    for run in _NON_ASCII_RUN_RE.finditer(text):
        chunk = run.group()
        if unicodedata.is_normalized("NFKC", chunk) and _INVISIBLE_RE.search(chunk) is None:
            continue
        for i, ch in enumerate(chunk, run.start()):
            folded = _fold_char(ch)
            if folded == ch:
                continue
            copy_to(i)
            if folded:
                norm_starts.append(out)
                orig_starts.append(i)
                widths.append(1)
                parts.append(folded)
                out += len(folded)
            copied = i + 1
    copy_to(len(text))
    if len(norm_starts) <= 1 and out == len(text) and not any(widths):
        return Normalised(text)
    return Normalised("".join(parts), tuple(norm_starts), tuple(orig_starts), tuple(widths))
