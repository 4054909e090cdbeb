"""Absolute dates named in a query ("on 9 November, 2022", "in May 2023", "2023-05-20",
"im Mai 2023") as one time window, so ranking can prefer notes written in it.

Pure functions, no clock: only dates a query spells out with their year count (a day,
a month or a year), because "last week" or "in May" need a "now" that a stored note's
reader does not share. English and German month names (full or three-letter, with or
without a trailing dot), ordinal days (``8th``, ``9.``), ``Month D, YYYY``,
``D Month YYYY``, ``Month YYYY``, ISO ``YYYY-MM-DD`` and ``YYYY-MM``, and a bare year
after "in"/"im"/"during"/"of". Several dates in one query give the window spanning them
all ("between August 11 and August 15 2023": a date without a year takes the year of
the next date that has one). Windows are in UTC, each widened by `MARGIN_MS` on both
sides, because a note's time is stored in UTC while its writer's day is local.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["MARGIN_MS", "DateWindow", "find_dates"]

DAY_MS = 86_400_000
#: How far a window reaches past the days it names (time zones, a late-night note).
MARGIN_MS = DAY_MS

_MONTHS: dict[str, int] = {}
for _number, _names in enumerate(
    (
        "january jan januar jänner jän",
        "february feb februar",
        "march mar märz maerz mär",
        "april apr",
        "may mai",
        "june jun juni",
        "july jul juli",
        "august aug",
        "september sep sept",
        "october oct oktober okt",
        "november nov",
        "december dec dezember dez",
    ),
    1,
):
    for _name in _names.split():
        _MONTHS[_name] = _number

_MONTH = "(?P<{}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{}>[0-3]?\d)(?:st|nd|rd|th|\.)?"
_YEAR = r"(?P<{}>(?:19|20)\d\d)"
# Each alternative names its groups with a suffix so that one regex holds them all.
_PATTERNS = [
    rf"{_YEAR.format('y1')}-(?P<m1>[01]\d)(?:-(?P<d1>[0-3]\d))?(?!\d)",
    rf"{_DAY.format('d2')}\s*(?:of\s+)?{_MONTH.format('m2')}(?:,?\s*{_YEAR.format('y2')})?",
    rf"{_MONTH.format('m3')}\s*{_DAY.format('d3')}(?!\d)(?:\s*,?\s*{_YEAR.format('y3')})?",
    rf"{_MONTH.format('m4')}\s*,?\s*{_YEAR.format('y4')}",
    rf"(?:in|im|during|of|since|jahr)\s+{_YEAR.format('y5')}",
]
_DATE_RE = re.compile(
    r"(?<![\w-])(?:" + "|".join(f"(?:{p})" for p in _PATTERNS) + r")(?![\w-])",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class DateWindow:
    """A span of time a query names: [start_ms, end_ms) in UTC milliseconds, margins
    included, and the character spans of the query's text that named it."""

    start_ms: int
    end_ms: int
    spans: tuple[tuple[int, int], ...]

    def __contains__(self, ms: object) -> bool:
        return isinstance(ms, int) and self.start_ms <= ms < self.end_ms

    @property
    def days(self) -> float:
        """How many days the window spans (margins included)."""
        return (self.end_ms - self.start_ms) / DAY_MS


def _ms(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, tzinfo=UTC).timestamp() * 1000)


def _span(year: int, month: int | None, day: int | None) -> tuple[int, int] | None:
    """[start, end) of a day, a month or a year, without margins; None when no such date."""
    try:
        if month is None:
            return _ms(year, 1, 1), _ms(year + 1, 1, 1)
        if day is None:
            last = calendar.monthrange(year, month)[1]
            return _ms(year, month, 1), _ms(year, month, last) + DAY_MS
        start = _ms(year, month, day)
    except ValueError:
        return None
    return start, start + DAY_MS


def find_dates(text: str) -> DateWindow | None:
    """The window spanning every absolute date `text` names, or None when it names none."""
    found: list[tuple[int | None, int | None, int | None, tuple[int, int]]] = []
    for m in _DATE_RE.finditer(text):
        g = m.groupdict()
        for suffix in "12345":
            if g.get(f"y{suffix}") or g.get(f"m{suffix}"):
                break
        year_s, month_s, day_s = g.get(f"y{suffix}"), g.get(f"m{suffix}"), g.get(f"d{suffix}")
        month: int | None = None
        if month_s is not None:
            month = int(month_s) if month_s.isdigit() else _MONTHS[month_s.casefold()]
            if not 1 <= month <= 12:
                continue
        found.append(
            (
                int(year_s) if year_s else None,
                month,
                int(day_s) if day_s else None,
                m.span(),
            )
        )
    windows: list[tuple[int, int]] = []
    spans: list[tuple[int, int]] = []
    next_year: int | None = None
    for year, month, day, span in reversed(found):  # a yearless date borrows the next year
        if year is None:
            if next_year is None or month is None:
                continue
            year = next_year
        next_year = year
        window = _span(year, month, day)
        if window is not None:
            windows.append(window)
            spans.append(span)
    if not windows:
        return None
    start = min(w[0] for w in windows) - MARGIN_MS
    end = max(w[1] for w in windows) + MARGIN_MS
    return DateWindow(start, end, tuple(sorted(spans)))
