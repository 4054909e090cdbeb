"""Same-topic candidates (`memdir.tidy.topics`): pairs through shared rare terms, scored
by weighted overlap, grouped into clusters of at most six; finding ids."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from memdir.core.vocab import FindingKind
from memdir.tidy.findings import finding_id, kind_of
from memdir.tidy.topics import MAX_CLUSTER, MAX_TERM_NOTES, Pair, candidate_pairs, clusters


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


def test_identical_sets_score_one_and_unrelated_are_not_paired() -> None:
    terms = [_set("pnpm packag manag"), _set("pnpm packag manag"), _set("friday releas blog")]
    assert candidate_pairs(terms, min_score=0.1) == [Pair(0, 1, 1.0)]


def test_skipped_pairs_are_not_reported() -> None:
    terms = [_set("lint ruff ci"), _set("lint ruff ci")]
    assert candidate_pairs(terms, min_score=0.1, skip=frozenset({(0, 1)})) == []


def test_a_term_held_by_too_many_notes_makes_no_pair_alone() -> None:
    common = [_set(f"deploy unique{i}") for i in range(MAX_TERM_NOTES + 1)]
    assert candidate_pairs(common, min_score=0.0) == []
    few = [_set(f"deploy unique{i}") for i in range(3)]
    assert len(candidate_pairs(few, min_score=0.0)) == 3


def test_clusters_join_best_pairs_first_and_stay_small() -> None:
    n = 9
    pairs = [Pair(i, j, 0.9) for i in range(n) for j in range(i + 1, n)]
    groups = clusters(pairs, {i: f"n{i}" for i in range(n)})
    assert [len(g) for g in groups] == [MAX_CLUSTER, n - MAX_CLUSTER]
    assert clusters([Pair(0, 1, 0.7), Pair(2, 3, 0.8)], {0: "d", 1: "c", 2: "b", 3: "a"}) == [
        (3, 2),
        (1, 0),
    ]


@given(
    st.lists(
        st.tuples(st.integers(0, 14), st.integers(0, 14), st.floats(0.6, 1.0)),
        max_size=60,
    )
)
def test_clusters_are_small_disjoint_and_made_of_given_pairs(
    raw: list[tuple[int, int, float]],
) -> None:
    pairs = sorted(
        {Pair(min(a, b), max(a, b), round(s, 4)) for a, b, s in raw if a != b},
        key=lambda p: (-p.score, p.first, p.second),
    )
    groups = clusters(pairs, {i: f"n{i:02d}" for i in range(15)})
    members = [i for g in groups for i in g]
    assert len(members) == len(set(members))
    assert all(2 <= len(g) <= MAX_CLUSTER for g in groups)
    paired = {i for p in pairs for i in (p.first, p.second)}
    assert set(members) <= paired


@given(st.lists(st.sampled_from("abcdef"), min_size=1, max_size=6), st.randoms())
def test_a_finding_id_does_not_depend_on_the_notes_order(
    hashes: list[str], rng: random.Random
) -> None:
    shuffled = hashes[:]
    rng.shuffle(shuffled)
    for kind in FindingKind:
        assert finding_id(kind, hashes) == finding_id(kind, shuffled)
        assert kind_of(finding_id(kind, hashes)) is kind
    assert finding_id(FindingKind.UNUSED, hashes) != finding_id(FindingKind.TOO_LONG, hashes)
