"""Regex searches that stay linear when labels come every few characters.

A label opens a short window; searching each window afresh would rescan the same text once
per label.  These helpers remember what they have searched and answer from it.
"""

from __future__ import annotations

import bisect
import re

__all__ = ["Next", "Positions"]

_GAP = 120  # a query this far past the searched span still extends it (a label's window)
_LONGEST_HINT = 24  # longer than any negating or "as" word
_READ_AHEAD = 512


class Positions:
    """Where a regex matches, searched only around labels and only once per character.

    Queries come in order of their label (each starts at most a left context before it), so
    the text already searched is one growing span; a query beyond it searches just the new
    part, overlapping by the longest match so nothing straddling the seam is lost.
    """

    __slots__ = ("_covered", "_regex", "_starts", "_text")

    def __init__(self, regex: re.Pattern[str], text: str) -> None:
        self._regex = regex
        self._text = text
        self._starts: list[int] = []
        self._covered = 0

    def within(self, lo: int, hi: int) -> bool:
        """Whether a match starts in [lo, hi)."""
        if hi > self._covered:
            # Small gaps (the label itself, a short word) are searched too, keeping the span
            # contiguous; a long gap is text no later query reaches back into.
            start = self._covered - _LONGEST_HINT if lo - self._covered <= _GAP else lo
            start = max(start, 0)
            # Read ahead: labels often come in runs, and one search per run is cheaper.
            upto = hi + _READ_AHEAD
            seen = self._starts[-1] if self._starts else -1
            for m in self._regex.finditer(self._text, start, upto + _LONGEST_HINT):
                if m.start() > seen and m.start() < upto:
                    self._starts.append(m.start())
            self._covered = upto
        i = bisect.bisect_left(self._starts, lo)
        return i < len(self._starts) and self._starts[i] < hi


class Next:
    """The next match of a regex at or after a position, remembered between nearby queries.

    Labels can come every few characters; searching each window afresh would rescan the
    same text, while a remembered next match keeps the whole scan linear.
    """

    __slots__ = ("_at", "_from", "_regex", "_text")

    def __init__(self, regex: re.Pattern[str], text: str) -> None:
        self._regex = regex
        self._text = text
        self._from = -1
        self._at = -1

    def find(self, pos: int) -> int:
        """Where the next match starts (len(text) if there is none)."""
        if not (self._from <= pos <= self._at):
            m = self._regex.search(self._text, pos)
            self._from, self._at = pos, (m.start() if m else len(self._text))
        return self._at
