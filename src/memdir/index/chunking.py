"""Splitting a note body into overlapping chunks with stable hashes and file byte offsets (§3).

A chunk is at most `max_chars` characters. Its end is the last paragraph break in the
second half of the window, else the last sentence end, else the last whitespace, else
the last character boundary that does not split a user-perceived character. The next
chunk starts at a sentence or word boundary about `overlap` characters before that
end (between `overlap` and `overlap + overlap // 2` when the text allows it), so
consecutive chunks share context and together cover the body without gaps.

Chunk text is the raw body as it is in the file (line endings untouched), so
``data[chunk.start:chunk.end].decode()`` gives it back exactly.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

from memdir.core.frontmatter import body_span

__all__ = ["DEFAULT_MAX_CHARS", "DEFAULT_OVERLAP", "ChunkSpan", "chunk_body", "split_points"]

DEFAULT_MAX_CHARS = 768
DEFAULT_OVERLAP = 128

#: Two or more line breaks with only blanks between them (a blank line), plus indentation.
_PARAGRAPH_RE = re.compile(r"(?:[ \t]*(?:\r\n|\r|\n)){2,}[ \t]*")
#: A sentence end: . ! ? … then closing quotes/brackets and whitespace; CJK stops need none.
_SENTENCE_RE = re.compile(r"[.!?…]+[\"'”’»)\]]*\s+|[。！？]+[」』”’）)]*\s*")
_SPACE_RE = re.compile(r"\s+")

_ZWJ = "\u200d"
_ZWNJ = "\u200c"


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    """One chunk: its position in the note, its exact text, file byte offsets and hash."""

    ord: int
    #: Exactly ``data[start:end].decode("utf-8")``.
    text: str
    start: int
    end: int
    #: SHA-256 hex of the text: the same text always has the same hash.
    hash: str


def _is_regional(ch: str) -> bool:
    return "\U0001f1e6" <= ch <= "\U0001f1ff"


def _is_safe(text: str, pos: int) -> bool:
    """True when a chunk may end (or start) at `pos` without splitting a character.

    An approximation of Unicode grapheme clusters that covers what notes contain:
    CRLF, combining marks, joiners and variation selectors, emoji modifiers and tags,
    flag pairs and conjoining Hangul Jamo.
    """
    if pos <= 0 or pos >= len(text):
        return True
    before, after = text[pos - 1], text[pos]
    if before == "\r":
        return after != "\n"
    if before == _ZWJ or after in (_ZWJ, _ZWNJ):
        return False
    if unicodedata.category(after)[0] == "M":  # combining marks, variation selectors
        return False
    code = ord(after)
    if 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F:  # skin tones, tag chars
        return False
    if 0x1160 <= code <= 0x11FF or 0xD7B0 <= code <= 0xD7FF:  # Jamo vowels and finals
        return False
    if (0x1100 <= ord(before) <= 0x115F or 0xA960 <= ord(before) <= 0xA97F) and (
        0x1100 <= code <= 0x115F or 0xA960 <= code <= 0xA97F or 0xAC00 <= code <= 0xD7A3
    ):
        return False  # a leading Jamo binds to what follows
    if _is_regional(before) and _is_regional(after):
        run = 0
        while pos - 1 - run >= 0 and _is_regional(text[pos - 1 - run]):
            run += 1
        return run % 2 == 0  # flags are pairs: split only between them
    return True


def _last(text: str, points: list[int], low: int, high: int) -> int | None:
    """The largest safe position of `points` in [low, high]."""
    i = bisect_right(points, high) - 1
    while i >= 0 and points[i] >= low:
        if _is_safe(text, points[i]):
            return points[i]
        i -= 1
    return None


def _last_char(text: str, low: int, high: int) -> int | None:
    for pos in range(high, low - 1, -1):
        if _is_safe(text, pos):
            return pos
    return None


def _first_char(text: str, low: int, high: int) -> int | None:
    for pos in range(low, high + 1):
        if _is_safe(text, pos):
            return pos
    return None


def split_points(text: str, max_chars: int, overlap: int) -> list[tuple[int, int]]:
    """(start, end) character offsets of the chunks of `text` (see the module docstring)."""
    if max_chars < 2 or overlap < 0 or 2 * overlap >= max_chars:
        raise ValueError(
            f"need max_chars >= 2 and 0 <= overlap < max_chars / 2 (got {max_chars}, {overlap})"
        )
    size = len(text)
    if size <= max_chars:
        return [(0, size)] if size else []
    paragraphs = [m.end() for m in _PARAGRAPH_RE.finditer(text)]
    sentences = [m.end() for m in _SENTENCE_RE.finditer(text)]
    spaces = [m.end() for m in _SPACE_RE.finditer(text)]
    slack = overlap // 2
    spans: list[tuple[int, int]] = []
    start = prev_end = 0
    while size - start > max_chars:
        limit = start + max_chars
        low = max(prev_end + 1, start + max_chars // 2)
        end = _last(text, paragraphs, low, limit)
        if end is None:
            end = _last(text, sentences, low, limit)
        if end is None:
            end = _last(text, spaces, low, limit)
        if end is None:
            end = _last_char(text, max(prev_end + 1, start + 1), limit)
        if end is None:  # one "character" longer than a chunk: it has to be cut
            end = limit
        spans.append((start, end))
        prev_end = end
        if overlap == 0:
            start = end
            continue
        high = end - overlap
        low = max(start + 1, high - slack)
        nxt = None
        if high >= low:
            nxt = _last(text, sentences, low, high)
            if nxt is None:
                nxt = _last(text, spaces, low, high)
            if nxt is None:
                nxt = _last_char(text, low, high)
        if nxt is None:  # less overlap rather than a split character
            nxt = _first_char(text, max(high + 1, start + 1), end)
        start = end if nxt is None else nxt
    spans.append((start, size))
    return spans


def _byte_offsets(text: str, positions: list[int]) -> dict[int, int]:
    """UTF-8 byte offset of each character position, encoding each stretch once."""
    if text.isascii():
        return {p: p for p in positions}
    offsets: dict[int, int] = {}
    done = done_bytes = 0
    for pos in sorted(set(positions)):
        done_bytes += len(text[done:pos].encode("utf-8"))
        done = pos
        offsets[pos] = done_bytes
    return offsets


def chunk_body(
    data: bytes, *, max_chars: int = DEFAULT_MAX_CHARS, overlap: int = DEFAULT_OVERLAP
) -> list[ChunkSpan]:
    """The chunks of a note file's body with byte offsets into `data` ([] for an empty body).

    Raises ParseError (from body_span) when the file's body cannot be located.
    """
    first, last = body_span(data)
    text = data[first:last].decode("utf-8")
    spans = split_points(text, max_chars, overlap)
    offsets = _byte_offsets(text, [p for span in spans for p in span])
    chunks: list[ChunkSpan] = []
    for number, (start, end) in enumerate(spans):
        piece = text[start:end]
        chunks.append(
            ChunkSpan(
                ord=number,
                text=piece,
                start=first + offsets[start],
                end=first + offsets[end],
                hash=hashlib.sha256(piece.encode("utf-8")).hexdigest(),
            )
        )
    return chunks
