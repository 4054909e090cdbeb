"""rank_chunks over a real SearchIndex: methods, modes on both sides, fusion, stable ties."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pytest

from memdir.core import Note, Scope, render_note
from memdir.core.vocab import SearchMethod
from memdir.index.db import SearchIndex
from memdir.index.query import SearchFilter, analyse
from memdir.retrieve.hybrid import FusionParams
from memdir.retrieve.ranking import RankedChunk, rank_chunks, superseding_first

EMBEDDER = "hand@1/3"
Stamp = tuple[int, int, int, int]

#: note id → (summary, body, vector of its one chunk).
NOTES: dict[str, tuple[str, str, tuple[float, float, float]]] = {
    "apple-pie": ("Apple pie recipe", "Bake the apple pie for an hour.", (1, 0, 0)),
    "pie-apple": ("Dessert notes", "A pie with apple slices, not a classic.", (0.6, 0.8, 0)),
    "fruit-tart": ("Fruit dessert ideas", "Tarts and crumbles for autumn.", (1, 0.05, 0)),
    "pie-chart": ("Sales pie chart", "The chart shows sales by region.", (0, 0, 1)),
    "garden": ("Garden", "The apple tree needs pruning in winter.", (0, 1, 0)),
    # Three copies of one note: equal scores on both sides.
    "twin-b": ("Pie twin", "Apple pie chart twin.", (0.5, 0.5, 0.5)),
    "twin-a": ("Pie twin", "Apple pie chart twin.", (0.5, 0.5, 0.5)),
    "twin-c": ("Pie twin", "Apple pie chart twin.", (0.5, 0.5, 0.5)),
}


class Source:
    def __init__(self, order: list[str]) -> None:
        self.data = {
            nid: render_note(Note(id=nid, summary=s, body=b, created_at=1, updated_at=2))
            for nid, (s, b, _) in ((n, NOTES[n]) for n in order)
        }

    def stamps(self) -> tuple[dict[str, Stamp], int]:
        return {n: (len(d), 1, i, 1) for i, (n, d) in enumerate(self.data.items())}, 0

    def stamps_of(self, note_ids: Iterable[str]) -> dict[str, Stamp]:
        now = self.stamps()[0]
        return {i: now[i] for i in note_ids if i in now}

    def read_bytes(self, note_id: str) -> bytes | None:
        return self.data.get(note_id)


def _build(path: Path, order: list[str]) -> SearchIndex:
    index = SearchIndex(path)
    index.refresh(Source(order))
    by_text = {f"{s}\n{b}": v for s, b, v in NOTES.values()}
    pending = index.pending(EMBEDDER)
    matrix = np.asarray([by_text[text] for _, text in pending], dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    index.put_vectors(EMBEDDER, [h for h, _ in pending], matrix)
    return index


@pytest.fixture
def index(tmp_path: Path) -> Iterator[SearchIndex]:
    idx = _build(tmp_path / "engine.sqlite3", list(NOTES))
    yield idx
    idx.close()


def _q(*v: float) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    out: np.ndarray = a / np.linalg.norm(a)
    return out


def _rank(
    index: SearchIndex, query: str, *, mode: str = "any", method: str = "hybrid", **kw: object
) -> list[RankedChunk]:
    kw.setdefault("embedder_id", EMBEDDER)
    analysed = analyse(query, mode)
    return rank_chunks(index, analysed, method=SearchMethod(method), **kw)  # type: ignore[arg-type]


def _ids(ranked: list[RankedChunk]) -> list[str]:
    return [r.row.note_id for r in ranked]


def test_lexical_ranks_by_bm25_with_the_summary_weighted_higher(index: SearchIndex) -> None:
    ranked = _rank(index, "recipe", method="lexical")
    assert _ids(ranked) == ["apple-pie"]
    assert _ids(_rank(index, "apple", method="lexical"))[0] == "apple-pie"
    assert all(r.vector_rank is None and r.lexical_rank is not None for r in ranked)


def test_modes_on_the_lexical_side(index: SearchIndex) -> None:
    twins = {"twin-a", "twin-b", "twin-c"}
    any_ = set(_ids(_rank(index, "apple pie", method="lexical", limit=10)))
    assert any_ == {"apple-pie", "pie-apple", "pie-chart", "garden"} | twins
    all_ = set(_ids(_rank(index, "apple pie", method="lexical", mode="all", limit=10)))
    assert all_ == {"apple-pie", "pie-apple"} | twins
    phrase = set(_ids(_rank(index, "apple pie", method="lexical", mode="phrase", limit=10)))
    assert phrase == {"apple-pie"} | twins


@pytest.mark.parametrize("method", ["vector", "hybrid"])
def test_modes_filter_vector_candidates_too(index: SearchIndex, method: str) -> None:
    query = _q(1, 0, 0)  # nearest: apple-pie, then fruit-tart (which lacks the words)
    any_ = _ids(_rank(index, "apple pie", method=method, query_vector=query, limit=10))
    assert "fruit-tart" in any_
    twins = {"twin-a", "twin-b", "twin-c"}
    for mode, allowed in (("all", {"apple-pie", "pie-apple"}), ("phrase", {"apple-pie"})):
        got = _ids(_rank(index, "apple pie", method=method, mode=mode, query_vector=query))
        assert set(got) == allowed | twins, mode


def test_vector_method_orders_by_cosine(index: SearchIndex) -> None:
    ranked = _rank(index, "anything at all", method="vector", query_vector=_q(0, 0, 1))
    assert _ids(ranked)[0] == "pie-chart"
    assert ranked[0].vector_rank == 1 and ranked[0].lexical_rank is None


def test_hybrid_rewards_agreement_of_both_sides(index: SearchIndex) -> None:
    # "apple pie": lexical and vector both put apple-pie first.
    ranked = _rank(index, "apple pie", method="hybrid", query_vector=_q(1, 0, 0), limit=10)
    assert _ids(ranked)[0] == "apple-pie"
    top = ranked[0]
    assert top.lexical_rank == 1 and top.vector_rank == 1
    meaning_only = next(r for r in ranked if r.row.note_id == "fruit-tart")
    assert meaning_only.lexical_rank is None and meaning_only.vector_rank is not None
    words_only = next(r for r in ranked if r.row.note_id == "pie-chart")
    assert top.score > meaning_only.score and top.score > words_only.score


def test_hybrid_without_a_query_vector_is_lexical_plus_rerank(index: SearchIndex) -> None:
    ranked = _rank(index, "apple pie", method="hybrid", embedder_id=None, limit=10)
    assert _ids(ranked)[:2] == ["apple-pie", "twin-a"]  # the adjacent pair counts
    assert set(_ids(ranked)) == {"apple-pie", "pie-apple", "pie-chart", "garden"} | {
        "twin-a",
        "twin-b",
        "twin-c",
    }
    assert all(r.vector_rank is None for r in ranked)


def test_rerank_weights_change_hybrid_scores_only(index: SearchIndex) -> None:
    alone = {"context_coverage_weight": 0, "context_cosine_weight": 0}  # see below
    plain = FusionParams(coverage_weight=0, phrase_weight=0, cosine_weight=0, **alone)
    ranked = _rank(index, "apple pie", query_vector=_q(1, 0, 0), params=plain, limit=10)
    top = ranked[0]
    assert top.score == pytest.approx(2 / 61)
    d = FusionParams(**alone)
    default = _rank(index, "apple pie", query_vector=_q(1, 0, 0), params=d, limit=10)[0]
    # Full coverage, the adjacent pair and a cosine of 1 add their weights (no date is
    # named and no time asked for, so those two add nothing).
    expected = 2 / 61 + d.coverage_weight + d.phrase_weight + d.cosine_weight
    assert default.score == pytest.approx(expected, rel=1e-4)
    # The fixture's notes are written together: each also borrows the best coverage and
    # cosine among the other notes' candidates (`test_session_context`).
    full = _rank(index, "apple pie", query_vector=_q(1, 0, 0), limit=10)
    assert full[0].row.note_id == default.row.note_id
    assert full[0].score > default.score


def test_a_query_with_no_terms(index: SearchIndex) -> None:
    assert _rank(index, "?!  ", method="lexical") == []
    assert _rank(index, "?!", method="hybrid", mode="all", query_vector=_q(0, 0, 1)) == []
    # In `any` mode meaning alone can still answer.
    assert _ids(_rank(index, "?!", method="vector", query_vector=_q(0, 0, 1)))[0] == "pie-chart"


def test_limit_and_equal_scores_in_note_order(index: SearchIndex) -> None:
    assert len(_rank(index, "apple pie", method="lexical", limit=2)) == 2
    twins = [r for r in _rank(index, "twin", method="lexical", limit=10)]
    assert _ids(twins) == ["twin-a", "twin-b", "twin-c"]
    assert [r.lexical_rank for r in twins] == [1, 1, 1]  # equal scores share a rank
    assert len({r.score for r in twins}) == 1
    cut = _rank(index, "twin", method="vector", query_vector=_q(1, 1, 1), limit=2)
    assert _ids(cut) == ["twin-a", "twin-b"]


@pytest.mark.parametrize("method", ["lexical", "vector", "hybrid"])
@pytest.mark.parametrize("mode", ["any", "all", "phrase"])
def test_answers_do_not_depend_on_row_ids(tmp_path: Path, method: str, mode: str) -> None:
    """The same notes indexed in another order (other row ids) rank identically."""
    a = _build(tmp_path / "a.sqlite3", list(NOTES))
    b = _build(tmp_path / "b.sqlite3", list(reversed(NOTES)))
    try:
        for query, vec in (
            ("apple pie", _q(1, 1, 0)),
            ("pie", _q(1, 0, 1)),
            ("chart", _q(0, 1, 1)),
        ):
            ra = _rank(a, query, method=method, mode=mode, query_vector=vec, limit=10)
            rb = _rank(b, query, method=method, mode=mode, query_vector=vec, limit=10)
            key = [(r.row.note_id, r.row.ord, r.score, r.lexical_rank, r.vector_rank) for r in ra]
            assert key == [
                (r.row.note_id, r.row.ord, r.score, r.lexical_rank, r.vector_rank) for r in rb
            ]
    finally:
        a.close()
        b.close()


def test_rerank_groups_drop_stop_words_unless_nothing_else_is_left() -> None:
    assert analyse("the apple and the pie").groups == (("appl",), ("pie",))
    assert analyse("the and").groups == (("the",), ("and",))
    assert analyse("apple apple").groups == (("appl",),)


# --- filters ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["lexical", "vector", "hybrid"])
@pytest.mark.parametrize("mode", ["any", "all", "phrase"])
def test_a_filter_applies_before_each_sides_cut(index: SearchIndex, method: str, mode: str) -> None:
    shallow = FusionParams(lexical_depth=2, vector_depth=2)
    gone = {"apple-pie", "twin-a"}
    f = SearchFilter(exclude=frozenset((Scope.PROJECT, n) for n in gone))
    vec = _q(1, 0.2, 0.3)
    every = _rank(index, "apple pie", mode=mode, method=method, query_vector=vec, limit=10)
    left = [r for r in every if r.row.note_id not in gone]
    assert left  # something passes the filter in every combination
    got = _rank(
        index,
        "apple pie",
        mode=mode,
        method=method,
        query_vector=vec,
        limit=2,
        filter=f,
        scope=Scope.PROJECT,
        params=shallow,
    )
    assert not gone & set(_ids(got))
    assert len(got) == min(2, len(left))  # a post-filter of the shallow cut would lose them
    # The exclusion names project notes: an index of user notes is not filtered.
    kw: dict[str, object] = {"query_vector": vec, "limit": 2, "params": shallow}
    plain = _rank(index, "apple pie", mode=mode, method=method, **kw)
    other = _rank(index, "apple pie", mode=mode, method=method, filter=f, scope=Scope.USER, **kw)
    assert _ids(other) == _ids(plain)


def test_filtered_lexical_ranking_keeps_the_unfiltered_order(index: SearchIndex) -> None:
    f = SearchFilter(exclude=frozenset({(Scope.PROJECT, "apple-pie")}))
    every = _ids(_rank(index, "apple pie", method="lexical", limit=10))
    kept = _ids(
        _rank(index, "apple pie", method="lexical", limit=10, filter=f, scope=Scope.PROJECT)
    )
    assert kept == [n for n in every if n != "apple-pie"]


# --- superseding_first ---------------------------------------------------------------------


def _first(order: str, by: dict[str, str]) -> str:
    return "".join(superseding_first(list(order), by.get))


@pytest.mark.parametrize(
    ("order", "by", "expected"),
    [
        ("abc", {}, "abc"),
        ("abc", {"a": "c"}, "bca"),  # a waits for c, then comes right after it
        ("cba", {"a": "c"}, "cba"),  # already below: nothing moves
        ("abc", {"a": "z"}, "abc"),  # its successor did not match
        ("abcd", {"a": "b", "b": "d"}, "cdba"),  # a chain: d, b, a
        ("abcd", {"a": "d", "b": "d"}, "cdab"),  # two old notes keep their order
        ("abc", {"a": "b", "b": "a"}, "abc"),  # a cycle keeps its order
        ("abc", {"a": "a"}, "abc"),
    ],
)
def test_superseding_first(order: str, by: dict[str, str], expected: str) -> None:
    assert _first(order, by) == expected
    assert sorted(expected) == sorted(order)
