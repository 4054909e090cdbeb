"""MatrixIndex: exact cosine search, the `allowed` and `excluded` filters, reproducible ties,
similarities."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.index import vectors
from memdir.index.vectors import CompactRows, MatrixIndex, VectorIndex


def _unit(rows: list[list[float]]) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float32)
    out: np.ndarray = m / np.linalg.norm(m, axis=1, keepdims=True)
    return out


def _index(rows: list[list[float]], ids: list[int] | None = None) -> MatrixIndex:
    ids = ids if ids is not None else list(range(10, 10 + len(rows)))
    return MatrixIndex(np.asarray(ids, dtype=np.int64), _unit(rows))


def test_best_rows_first_with_their_cosines() -> None:
    index = _index([[1, 0], [0, 1], [1, 1], [-1, 0]])
    query = np.asarray([1, 0], dtype=np.float32)
    hits = index.search(query, 3)
    assert [cid for cid, _ in hits] == [10, 12, 11]
    assert hits[0][1] == pytest.approx(1.0)
    assert hits[1][1] == pytest.approx(2**-0.5)
    assert hits[2][1] == pytest.approx(0.0, abs=1e-7)


def test_k_larger_than_the_matrix_returns_every_row() -> None:
    index = _index([[1, 0], [0, 1]])
    assert len(index.search(np.asarray([1, 0], dtype=np.float32), 50)) == 2


@pytest.mark.parametrize("k", [0, -1])
def test_no_rows_for_k_below_one(k: int) -> None:
    assert _index([[1, 0]]).search(np.asarray([1, 0], dtype=np.float32), k) == []


def test_empty_index_and_wrong_dimension_give_nothing() -> None:
    empty = MatrixIndex(np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32))
    assert empty.search(np.asarray([1, 0], dtype=np.float32), 5) == []
    assert empty.similarities(np.asarray([1, 0], dtype=np.float32), [1]) == {}
    index = _index([[1, 0, 0]])
    # A query from another model (other size) is never compared.
    assert index.search(np.asarray([1, 0], dtype=np.float32), 5) == []
    assert index.similarities(np.asarray([1, 0], dtype=np.float32), [10]) == {}


def test_allowed_restricts_the_candidates() -> None:
    index = _index([[1, 0], [0.9, 0.1], [0, 1]])
    query = np.asarray([1, 0], dtype=np.float32)
    assert [cid for cid, _ in index.search(query, 3, allowed={11, 12})] == [11, 12]
    assert index.search(query, 3, allowed=set()) == []
    assert index.search(query, 3, allowed={999}) == []


def test_excluded_ids_never_take_part_even_when_allowed() -> None:
    index = _index([[1, 0], [0.9, 0.1], [0, 1]])
    query = np.asarray([1, 0], dtype=np.float32)
    assert [cid for cid, _ in index.search(query, 2, excluded={10})] == [11, 12]
    assert [cid for cid, _ in index.search(query, 3, allowed={10, 11}, excluded={10})] == [11]
    assert index.search(query, 3, excluded={10, 11, 12}) == []
    assert index.search(query, 3, excluded=set()) == index.search(query, 3)


def test_equal_scores_keep_row_order_also_across_the_cut() -> None:
    # Ten identical rows (the same text in ten notes): which ones make the top 3, and
    # in which order, must not depend on how argpartition happens to split them.
    rows = [[0.0, 1.0]] + [[1.0, 0.0]] * 10
    ids = [99, 57, 3, 41, 8, 77, 15, 62, 24, 90, 31]
    index = _index(rows, ids)
    query = np.asarray([1, 0], dtype=np.float32)
    assert [cid for cid, _ in index.search(query, 3)] == [57, 3, 41]
    assert [cid for cid, _ in index.search(query, 10)] == ids[1:]


def test_many_equal_rows() -> None:
    n = 10_000  # more than one block of exact re-scoring
    ids = np.arange(n, 0, -1, dtype=np.int64)
    matrix = np.tile(_unit([[3.0, 4.0]]), (n, 1))
    index = MatrixIndex(ids, matrix)
    hits = index.search(np.asarray([0.6, 0.8], dtype=np.float32), 3)
    assert [cid for cid, _ in hits] == [n, n - 1, n - 2]
    assert len({s for _, s in hits}) == 1
    allowed = {5, 17, 4000}
    assert [c for c, _ in index.search(np.asarray([1, 0], dtype=np.float32), 5, allowed)] == [
        4000,
        17,
        5,
    ]


def test_similarities_for_ids_in_any_order() -> None:
    index = _index([[1, 0], [0, 1], [1, 1]], ids=[30, 10, 20])
    query = np.asarray([0, 1], dtype=np.float32)
    sims = index.similarities(query, [20, 30, 10, 555])
    assert set(sims) == {10, 20, 30}
    assert sims[10] == pytest.approx(1.0)
    assert sims[30] == pytest.approx(0.0, abs=1e-7)
    assert sims[20] == pytest.approx(2**-0.5)
    assert index.similarities(query, []) == {}


def test_ids_and_rows_must_agree() -> None:
    with pytest.raises(ValueError):
        MatrixIndex(np.asarray([1, 2], dtype=np.int64), _unit([[1, 0]]))


def test_matrix_index_is_a_vector_index() -> None:
    index: VectorIndex = _index([[1, 0]])
    assert index.search(np.asarray([1, 0], dtype=np.float32), 1)[0][0] == 10


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(-3, 3), min_size=2, max_size=2).filter(any),
    st.lists(
        st.lists(st.integers(-3, 3), min_size=2, max_size=2).filter(any), min_size=1, max_size=30
    ),
    st.integers(1, 35),
    st.randoms(use_true_random=False),
)
def test_search_equals_a_full_sort(
    query: list[int], rows: list[list[int]], k: int, rnd: object
) -> None:
    """The top k are exactly the first k of a stable sort by (−cosine, row position),
    and equal rows score exactly alike wherever they sit."""
    ids = list(range(1000, 1000 + len(rows)))
    rnd.shuffle(ids)  # type: ignore[attr-defined]
    index = _index([[float(x) for x in r] for r in rows], ids)
    q = _unit([[float(x) for x in query]])[0]
    scores = (index.matrix.astype(np.float64) * q.astype(np.float64)).sum(axis=1)
    expected = sorted(range(len(rows)), key=lambda i: (-scores[i], i))[:k]
    got = index.search(q, k)
    assert [cid for cid, _ in got] == [ids[i] for i in expected]
    assert [s for _, s in got] == pytest.approx([float(scores[i]) for i in expected])
    by_row: dict[tuple[int, ...], set[float]] = {}
    for cid, score in got:
        by_row.setdefault(tuple(rows[ids.index(cid)]), set()).add(score)
    assert all(len(v) == 1 for v in by_row.values())


def _clustered(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Unit vectors as a text model gives them: a large common part, topics, then noise
    (cosines bunched near the top, where the rounding of compact rows matters most)."""
    common = rng.standard_normal(dim)
    topics = rng.standard_normal((8, dim))
    m = common + 0.6 * topics[rng.integers(0, 8, n)] + 0.3 * rng.standard_normal((n, dim))
    out: np.ndarray = (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60), st.sampled_from([3, 16, 384]))
def test_compact_rows_give_exactly_the_float32_search(seed: int, k: int, dim: int) -> None:
    """Scores from the int8 codes only choose which rows are scored exactly: ids, order and
    scores are those of a full sort of the float32 vectors, near-ties and copies included,
    and each approximate score lies within its bound."""
    rng = np.random.default_rng(seed)
    m = _clustered(rng, int(rng.integers(1, 700)), dim)
    m[rng.integers(0, len(m), len(m) // 5)] = m[0]  # copies of one text
    ids = rng.permutation(np.arange(5000, 5000 + len(m))).astype(np.int64)
    q = _clustered(rng, 1, dim)[0]
    exact = (m.astype(np.float64) * q.astype(np.float64)).sum(axis=1)

    def expected(rows: list[int]) -> list[int]:
        return [int(ids[i]) for i in sorted(rows, key=lambda i: (-exact[i], i))[:k]]

    index = MatrixIndex(ids, m)
    got = index.search(q, k)
    assert [c for c, _ in got] == expected(list(range(len(m))))
    assert [s for _, s in got] == [float(exact[list(ids).index(c)]) for c, _ in got]
    approx, slack = index.compact.scores(q)
    assert np.all(np.abs(approx.astype(np.float64) - exact) <= slack)
    allowed = {int(i) for i in ids[rng.random(len(m)) < 0.5]}
    excluded = {int(i) for i in ids[rng.random(len(m)) < 0.2]}
    rows = [i for i in range(len(m)) if int(ids[i]) in allowed and int(ids[i]) not in excluded]
    assert [c for c, _ in index.search(q, k, allowed, excluded)] == expected(rows)


def test_compact_rows_are_a_quarter_of_the_floats_and_read_few_vectors() -> None:
    rng = np.random.default_rng(3)
    m = _clustered(rng, 20_000, 384)
    ids = np.arange(len(m), dtype=np.int64)
    reads: list[int] = []

    def fetch(chunk_ids: Sequence[int]) -> dict[int, bytes]:
        reads.append(len(chunk_ids))
        return {c: m[c].tobytes() for c in chunk_ids}

    index = MatrixIndex(ids, CompactRows.of(m), fetch)
    assert index.compact.codes.dtype == np.int8
    assert index.compact.codes.nbytes == m.nbytes // 4
    q = _clustered(rng, 1, 384)[0]
    hits = index.search(q, 100)
    exact = m.astype(np.float64) @ q.astype(np.float64)
    assert [c for c, _ in hits] == sorted(range(len(m)), key=lambda i: (-exact[i], i))[:100]
    assert sum(reads) < 1_000  # a few hundred candidates of 20,000 rows
    assert np.array_equal(index.matrix, m)


def test_rows_the_database_no_longer_holds_are_left_out_and_odd_rows_never_win() -> None:
    m = _unit([[1, 0], [0.9, 0.1], [0.8, 0.2], [0, 1]])
    m[3] = np.nan  # a vector that is not finite is never a hit
    held = {10: m[0], 12: m[2], 13: m[3]}  # 11 went away since the rows were made
    index = MatrixIndex(
        np.asarray([10, 11, 12, 13], dtype=np.int64),
        CompactRows.of(m),
        lambda chunk_ids: {c: held[c].tobytes() for c in chunk_ids if c in held},
    )
    query = np.asarray([1, 0], dtype=np.float32)
    assert [c for c, _ in index.search(query, 4)] == [10, 12]
    assert set(index.similarities(query, [10, 11, 12])) == {10, 12}
    with pytest.raises(ValueError):
        MatrixIndex(np.asarray([1], dtype=np.int64), CompactRows.of(m[:1]))  # no fetch


def test_a_row_that_is_not_finite_never_takes_a_place() -> None:
    m = np.asarray([[np.inf, 0], [1, 0], [0, 1]], dtype=np.float32)
    index = MatrixIndex(np.arange(3, dtype=np.int64), m)
    assert [c for c, _ in index.search(np.asarray([1, 0], dtype=np.float32), 2)] == [1, 2]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1e-6, 1.0, 1e3, 4e4]))
def test_the_error_bound_holds_for_vectors_of_any_length(seed: int, size: float) -> None:
    rng = np.random.default_rng(seed)
    m = (_clustered(rng, 300, 24) * size).astype(np.float32)
    q = (_clustered(rng, 1, 24)[0] * size).astype(np.float32)
    index = MatrixIndex(np.arange(300, dtype=np.int64), m)
    exact = (m.astype(np.float64) * q.astype(np.float64)).sum(axis=1)
    approx, slack = index.compact.scores(q)
    assert np.all(np.abs(approx.astype(np.float64) - exact) <= slack)
    expected = sorted(range(300), key=lambda i: (-exact[i], i))[:10]
    assert [c for c, _ in index.search(q, 10)] == expected


def _pairs(m: np.ndarray, ids: np.ndarray) -> list[tuple[int, bytes]]:
    return [(int(c), row.tobytes()) for c, row in zip(ids, m, strict=True)]


@pytest.mark.parametrize("count", [1, 300, 9000])
def test_a_small_store_holds_its_vectors_while_the_database_is_unchanged(count: int) -> None:
    """Read with `held_while`, the float32 vectors stay beside the codes: the same rows
    and answers as read without, no database read per query while unchanged, and after a
    change the vectors are read and checked as without a held matrix."""
    rng = np.random.default_rng(count)
    m = _clustered(rng, count, 24)
    ids = np.arange(100, 100 + count, dtype=np.int64)
    unchanged = [True]
    got = vectors.read_rows(_pairs(m, ids), count, held_while=lambda: unchanged[0])
    plain = vectors.read_rows(_pairs(m, ids), count)
    assert plain.held is None and got.held is not None
    assert np.array_equal(got.held.matrix, m) and np.array_equal(got.ids, ids)
    assert np.array_equal(got.rows.codes, plain.rows.codes)
    in_db = {int(c): row for c, row in zip(ids, m, strict=True)}
    reads: list[int] = []

    def fetch(chunk_ids: Sequence[int]) -> dict[int, bytes]:
        reads.append(len(chunk_ids))
        return {c: in_db[c].tobytes() for c in chunk_ids if c in in_db}

    index = MatrixIndex(got.ids, got.rows, fetch, held=got.held)
    q = _clustered(rng, 1, 24)[0]
    expected = MatrixIndex(ids, m).search(q, 10)
    assert index.search(q, 10) == expected
    assert reads == []
    best = expected[0][0]
    del in_db[best]  # forgotten since the rows were read
    unchanged[0] = False
    assert best not in {c for c, _ in index.search(q, 10)}
    assert reads


def test_a_held_matrix_must_match_its_rows_and_large_stores_hold_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m = _unit([[1, 0], [0, 1], [1, 1]])
    ids = np.arange(3, dtype=np.int64)

    def fetch(chunk_ids: Sequence[int]) -> dict[int, bytes]:
        return {}

    with pytest.raises(ValueError):
        MatrixIndex(ids, CompactRows.of(m), fetch, held=vectors.Held(m[:2], lambda: True))
    monkeypatch.setattr(vectors, "HOLD_BYTES", m.nbytes - 1)
    assert vectors.read_rows(_pairs(m, ids), 3, held_while=lambda: True).held is None
    monkeypatch.setattr(vectors, "HOLD_BYTES", m.nbytes)
    assert vectors.read_rows(_pairs(m, ids), 3, held_while=lambda: True).held is not None
