"""Folding look-alike text (full-width forms, zero-width and bidi controls, homoglyphs).

Detectors run on the normalised text; every position they report is mapped back to the
original, so line numbers and redaction apply to what the caller actually wrote.  Besides
NFKC, a half-width kana and its sound mark fold into one letter ("ﾊﾟ" → "パ"), and a word
that mixes Latin with Cyrillic or Greek look-alikes ("pаssword" with a Cyrillic "а",
"ghр_…") is written in one script; a Greek word made only of Latin look-alikes ("ΤΟΚΕΝ")
is read as Latin.  Russian words keep their letters: only mixed words are touched.
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
# Half-width and combining sound marks that compose with the kana before them.
_SOUND_MARKS = "\uff9e\uff9f\u3099\u309a"
# Cyrillic and Greek letters that look like a Latin one, and Latin letters that look like
# a Cyrillic one (for a Russian word typed with a Latin "o" or "p" in it).
_TO_LATIN = dict(
    zip(
        "аеорсухіјѕԁһӏԛԝкАВЕКМНОРСТХУІЈЅΑΒΕΖΗΙΚΜΝΟΡΤΥΧοινκραυ",
        "aeopcyxijsdhlqwkABEKMHOPCTXYIJSABEZHIKMNOPTYXoivkpau",
        strict=True,
    )
)
_TO_CYRILLIC = dict(zip("aeopcyxkABEKMHOPCTXY", "аеорсухкАВЕКМНОРСТХУ", strict=True))
_LATIN_TABLE = str.maketrans(_TO_LATIN)
_CYRILLIC_TABLE = str.maketrans(_TO_CYRILLIC)
_FOREIGN_RE = re.compile("[\u0370-\u03ff\u0400-\u04ff\u0500-\u052f]")
_LATIN_RE = re.compile("[A-Za-z\u00c0-\u024f]")
# A word (letters and digits; "_" splits it) with a Cyrillic or Greek letter in it.  Starting
# only where no letter precedes keeps the scan linear however long a word is.
_FOREIGN_WORD_RE = re.compile(
    "(?<![^\\W_])[^\\W_]{0,128}?[\u0370-\u03ff\u0400-\u052f][^\\W_]{0,128}"
)
_GREEK_RE = re.compile("[\u0370-\u03ff]+")


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


def _homoglyphs(text: str) -> str:
    """The text with the look-alike letters of mixed-script words swapped; same length."""
    pieces: list[str] = []
    copied = 0
    for m in _FOREIGN_WORD_RE.finditer(text):
        word = m.group()
        if _LATIN_RE.search(word) is None:
            # Russian stays Russian; a Greek word of Latin look-alikes ("ΤΟΚΕΝ") is read
            # as Latin, Greek being no language the lexicon knows.
            if _GREEK_RE.fullmatch(word) is None:
                continue
            swapped = word.translate(_LATIN_TABLE)
            if _FOREIGN_RE.search(swapped) is not None:
                continue
        else:
            swapped = word.translate(_LATIN_TABLE)
            if _FOREIGN_RE.search(swapped) is not None:
                swapped = word.translate(_CYRILLIC_TABLE)
                if _LATIN_RE.search(swapped) is not None:
                    continue  # a real mix ("iPhoneа"): leave it
        pieces.append(text[copied : m.start()])
        pieces.append(swapped)
        copied = m.end()
    if not pieces:
        return text
    pieces.append(text[copied:])
    return "".join(pieces)


def normalise(text: str) -> Normalised:
    """NFKC-fold each character and drop invisible controls, keeping an offset map.

    Characters are folded one at a time (no composition across characters, but for a kana
    and its sound mark), which is all detection needs and keeps every output character
    traceable to its input; look-alike letters of mixed-script words are swapped too.
    """
    if text.isascii():
        return Normalised(text)
    # Swapping keeps every offset, so the map built below serves the original text too.
    text = _homoglyphs(text)
    if unicodedata.is_normalized("NFKC", text) and _INVISIBLE_RE.search(text) is None:
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
        i, end = run.span()
        while i < end:
            ch = text[i]
            width = 1
            if i + 1 < end and text[i + 1] in _SOUND_MARKS:
                pair = unicodedata.normalize("NFKC", text[i : i + 2])
                width = 2 if len(pair) == 1 else 1
                folded = pair if width == 2 else _fold_char(ch)
            else:
                folded = _fold_char(ch)
            if folded == ch:
                i += 1
                continue
            copy_to(i)
            if folded:
                norm_starts.append(out)
                orig_starts.append(i)
                widths.append(width)
                parts.append(folded)
                out += len(folded)
            copied = i + width
            i += width
    copy_to(len(text))
    if len(norm_starts) <= 1 and out == len(text) and not any(widths):
        return Normalised(text)
    return Normalised("".join(parts), tuple(norm_starts), tuple(orig_starts), tuple(widths))
