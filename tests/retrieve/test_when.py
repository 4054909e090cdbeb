"""The date window and the time words in the rerank: `dated` (memdir.retrieve.ranking)
and `timed` (memdir.retrieve.hybrid)."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from memdir.index.tokenize import index_terms
from memdir.retrieve.dates import DateWindow
from memdir.retrieve.hybrid import TIME_STEMS, timed
from memdir.retrieve.ranking import dated


@dataclass
class _Row:
    updated_at: int


class _Index:
    def __init__(self, times: dict[int, int]) -> None:
        self.times = times

    def chunks(self, ids: object) -> dict[int, _Row]:
        return {cid: _Row(t) for cid, t in self.times.items()}


def test_dated_adds_the_weight_inside_the_window_only() -> None:
    window = DateWindow(1_000, 2_000, ())
    index = _Index({1: 999, 2: 1_000, 3: 1_999, 4: 2_000})
    scores = {1: 0.5, 2: 0.5, 3: 0.1, 4: 0.5, 5: 0.2}  # 5: no row (not indexed any more)
    out = dated(index, scores, window, 0.25)  # type: ignore[arg-type]
    assert out == {1: 0.5, 2: 0.75, 3: 0.35, 4: 0.5, 5: 0.2}
    assert dated(index, scores, window, 0.0) is scores  # type: ignore[arg-type]


def test_time_words_and_years_place_a_text_in_time() -> None:
    assert timed(set(index_terms("I went to the support group yesterday")))
    assert timed(set(index_terms("We moved there in 2019")))
    assert timed(set(index_terms("Letzte Woche war ich in Wien")))
    assert not timed(set(index_terms("I love painting sunsets")))
    assert not timed(set(index_terms("room 4711 and 2 cats")))


@given(st.sets(st.text(min_size=1, max_size=6), max_size=6))
def test_timed_is_a_time_stem_or_a_year(terms: set[str]) -> None:
    expected = bool(terms & TIME_STEMS) or any(
        len(t) == 4 and t.isdigit() and t[:2] in ("19", "20") for t in terms
    )
    assert timed(terms) is expected
