"""The pure parts of hybrid ranking: Reciprocal Rank Fusion, idf, coverage, adjacency."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.retrieve.hybrid import FusionParams, coverage, fuse, has_adjacent_pair, idf


def test_rrf_with_k_60_sums_both_sides() -> None:
    params = FusionParams()
    assert params.k == 60
    scores = fuse([1, 2, 3], [3, 4], params)
    assert scores[1] == pytest.approx(1 / 61)
    assert scores[2] == pytest.approx(1 / 62)
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)
    assert scores[4] == pytest.approx(1 / 62)
    assert set(scores) == {1, 2, 3, 4}


def test_side_weights_scale_and_zero_weight_drops_a_side() -> None:
    scores = fuse([1], [2], FusionParams(lexical_weight=2.0, vector_weight=0.5))
    assert scores == {1: pytest.approx(2 / 61), 2: pytest.approx(0.5 / 61)}
    assert fuse([1], [2], FusionParams(vector_weight=0.0)) == {1: pytest.approx(1 / 61)}


def test_a_side_may_give_ranks_where_ties_share_one() -> None:
    scores = fuse({1: 1, 2: 1, 3: 3}, [3], FusionParams())
    assert scores[1] == scores[2] == pytest.approx(1 / 61)
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)


def test_empty_rankings_fuse_to_nothing() -> None:
    assert fuse([], [], FusionParams()) == {}


@given(
    st.lists(st.integers(0, 40), unique=True, max_size=25),
    st.lists(st.integers(0, 40), unique=True, max_size=25),
)
def test_fusion_properties(lexical: list[int], vector: list[int]) -> None:
    params = FusionParams()
    scores = fuse(lexical, vector, params)
    assert set(scores) == set(lexical) | set(vector)
    # Found by one side only: a better rank scores higher.
    only_lexical = [x for x in lexical if x not in vector]
    for a, b in itertools.pairwise(only_lexical):
        assert scores[a] > scores[b]
    # Being found by both sides beats being found by one at the same rank.
    for item in set(lexical) & set(vector):
        alone = 1 / (params.k + lexical.index(item) + 1)
        assert scores[item] > alone


def test_idf_is_positive_and_falls_with_document_frequency() -> None:
    values = [idf(df, 100) for df in (0, 1, 10, 50, 100)]
    assert all(v > 0 for v in values)
    assert values == sorted(values, reverse=True)
    assert idf(0, 0) == pytest.approx(math.log(2.0))


def test_coverage_is_the_idf_weighted_share_of_terms_present() -> None:
    rare, common = ("quokka",), ("note",)
    weights = {rare: 3.0, common: 1.0}
    terms = [rare, common]
    assert coverage(terms, {"quokka", "note"}, weights) == pytest.approx(1.0)
    assert coverage(terms, {"quokka"}, weights) == pytest.approx(0.75)
    assert coverage(terms, {"note"}, weights) == pytest.approx(0.25)
    assert coverage(terms, set(), weights) == 0.0


def test_coverage_ignores_terms_that_occur_nowhere_and_accepts_alternatives() -> None:
    # A typo has no weight: it does not lower every candidate alike.
    terms = [("haus", "hous"), ("tpyo",)]
    weights = {("haus", "hous"): 2.0}
    assert coverage(terms, {"hous"}, weights) == pytest.approx(1.0)
    assert coverage([("tpyo",)], {"x"}, {}) == 0.0


def test_adjacent_query_terms() -> None:
    terms = [("appl", "apple"), ("pie",)]
    assert has_adjacent_pair(terms, [["red", "apple", "pie"]])
    assert has_adjacent_pair(terms, [["x"], ["appl", "pie"]])
    assert not has_adjacent_pair(terms, [["pie", "apple"]])
    assert not has_adjacent_pair(terms, [["apple", "tart", "pie"]])
    assert not has_adjacent_pair([("pie",)], [["pie", "pie"]])
    assert not has_adjacent_pair([], [[]])
