"""Absolute dates in a query become one time window (memdir.retrieve.dates)."""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.retrieve.dates import DAY_MS, MARGIN_MS, DateWindow, find_dates

_EN = [calendar.month_name[m] for m in range(1, 13)]
_DE = [
    "Januar", "Februar", "März", "April", "Mai", "Juni",
    "Juli", "August", "September", "Oktober", "November", "Dezember",
]  # fmt: skip


def _ms(y: int, m: int, d: int) -> int:
    return int(datetime(y, m, d, tzinfo=UTC).timestamp() * 1000)


def _day(y: int, m: int, d: int) -> tuple[int, int]:
    return _ms(y, m, d) - MARGIN_MS, _ms(y, m, d) + DAY_MS + MARGIN_MS


def _window(text: str) -> tuple[int, int]:
    found = find_dates(text)
    assert found is not None, text
    return found.start_ms, found.end_ms


@pytest.mark.parametrize(
    "text",
    [
        "What dish did Nate make on 9 November, 2022?",
        "What did he say on November 9, 2022?",
        "the book he finished on 9th November 2022",
        "Was hat er am 9. November 2022 gekocht?",
        "notes of 2022-11-09 please",
        "on Nov. 9, 2022",
        "on November 9,2022",
    ],
)
def test_a_day_in_any_spelling(text: str) -> None:
    assert _window(text) == _day(2022, 11, 9)


@pytest.mark.parametrize(
    "text", ["What did he start in May 2023?", "Was hat sie im Mai 2023 gemacht?", "2023-05"]
)
def test_a_month(text: str) -> None:
    assert _window(text) == (_ms(2023, 5, 1) - MARGIN_MS, _ms(2023, 6, 1) + MARGIN_MS)


def test_a_year_after_a_preposition() -> None:
    assert _window("Which races did he win in 2023?") == (
        _ms(2023, 1, 1) - MARGIN_MS,
        _ms(2024, 1, 1) + MARGIN_MS,
    )


def test_a_range_borrows_the_year_of_its_end() -> None:
    found = find_dates("Where was John between August 11 and August 15 2023?")
    assert found is not None
    assert (found.start_ms, found.end_ms) == (_day(2023, 8, 11)[0], _day(2023, 8, 15)[1])
    assert len(found.spans) == 2


@pytest.mark.parametrize(
    "text",
    [
        "What may happen next?",  # "may" the verb
        "Which country was Tim visiting in the second week of November?",  # no year
        "in May",  # no year: needs a "now"
        "last week",
        "version 2023.1 of the tool",
        "room 2023",  # a bare number is not a year
        "on 31 February 2023",  # no such day
        "2023-13-01",
        "",
    ],
)
def test_no_window(text: str) -> None:
    assert find_dates(text) is None


def test_spans_name_the_date_words() -> None:
    text = "What did Tim say on 16 November, 2023?"
    found = find_dates(text)
    assert found is not None
    assert [text[a:b] for a, b in found.spans] == ["16 November, 2023"]


def test_membership() -> None:
    window = DateWindow(10, 20, ())
    assert 10 in window and 19 in window
    assert 20 not in window and 9 not in window and "15" not in window
    assert window.days == 10 / DAY_MS


def _suffix(d: int) -> str:
    return "th" if 10 <= d % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")


_dates = st.dates(min_value=datetime(1990, 1, 1).date(), max_value=datetime(2099, 12, 31).date())


@given(_dates, st.sampled_from(["en-dmy", "en-mdy", "de", "iso", "ordinal"]), st.text(max_size=20))
def test_every_spelling_of_every_day(day: object, style: str, noise: str) -> None:
    assert hasattr(day, "year")
    y, m, d = day.year, day.month, day.day  # type: ignore[attr-defined]
    spelled = {
        "en-dmy": f"{d} {_EN[m - 1]}, {y}",
        "en-mdy": f"{_EN[m - 1]} {d}, {y}",
        "de": f"am {d}. {_DE[m - 1]} {y}",
        "iso": f"{y:04d}-{m:02d}-{d:02d}",
        "ordinal": f"{d}{_suffix(d)} {_EN[m - 1]} {y}",
    }[style]
    safe = "".join(c for c in noise if re.fullmatch(r"[^\w-]", c))  # punctuation, blanks
    found = find_dates(f"What happened{safe} {spelled}{safe}?")
    assert found is not None
    assert (found.start_ms, found.end_ms) == _day(y, m, d)


@given(st.text(max_size=200))
def test_any_text_gives_a_window_or_none(text: str) -> None:
    found = find_dates(text)
    if found is not None:
        assert found.start_ms < found.end_ms
        assert all(0 <= a < b <= len(text) for a, b in found.spans)
