"""The approximate vector index: exact below the threshold or without usearch, content keys,
incremental updates, removed rows never returned, saved graphs checked before use, recall."""

from __future__ import annotations

import hashlib
import sys
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.index.ann import (
    ANN_THRESHOLD,
    AnnIndexes,
    AnnParams,
    ApproximateIndex,
    content_keys,
)
from memdir.index.vectors import MatrixIndex

# ONNX Runtime before usearch, as memdir.index.ann.library() loads them: the other order
# crashes the process when the embedder loads later.
pytest.importorskip("onnxruntime")
pytest.importorskip("usearch")

DIM = 32
NOW = AnnParams(threshold=0, background=False)


def _unit(m: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    out: npt.NDArray[np.float32] = (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)
    return out


def _clustered(seed: int, n: int, dim: int = DIM, clusters: int = 50) -> npt.NDArray[np.float32]:
    """Unit vectors around `clusters` fixed centres (the same for every seed)."""
    centres = np.random.default_rng(dim * 1000 + clusters).standard_normal((clusters, dim))
    centres = _unit(centres.astype(np.float32))
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((n, dim)).astype(np.float32) * np.float32(0.15)
    return _unit(centres[rng.integers(0, clusters, n)] + noise)


def _ids(n: int, start: int = 0) -> npt.NDArray[np.int64]:
    return np.arange(start, start + n, dtype=np.int64) * 7 + 5  # ids are not row numbers


def _approx(
    indexes: AnnIndexes,
    ids: npt.NDArray[np.int64],
    m: npt.NDArray[np.float32],
    embedder: str = "e5",
) -> ApproximateIndex:
    index = indexes.index(embedder, ids, m)
    assert isinstance(index, ApproximateIndex)
    return index


def _valid(
    index: MatrixIndex, hits: list[tuple[int, float]], query: npt.NDArray[np.float32]
) -> None:
    """Every hit is a row of `index` with its exact cosine, best first, no id twice."""
    ids = [cid for cid, _ in hits]
    assert len(set(ids)) == len(ids)
    assert set(ids) <= set(map(int, index.ids))
    exact = index.similarities(query, ids)
    assert [score for _, score in hits] == [exact[cid] for cid in ids]
    assert [score for _, score in hits] == sorted((score for _, score in hits), reverse=True)


# -- when the graph is used ---------------------------------------------------------------


def test_at_or_below_the_threshold_search_stays_exact(tmp_path: Path) -> None:
    m = _clustered(1, 100)
    indexes = AnnIndexes(tmp_path / "index.db", AnnParams(threshold=100))
    index = indexes.index("e5", _ids(100), m)
    assert type(index) is MatrixIndex
    assert indexes.stats("e5") is None
    assert ANN_THRESHOLD == 200_000
    assert list(tmp_path.iterdir()) == []


def test_without_usearch_search_is_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "usearch", None)  # import usearch raises ImportError
    monkeypatch.setitem(sys.modules, "usearch.index", None)
    m = _clustered(2, 300)
    index = AnnIndexes(None, NOW).index("e5", _ids(300), m)
    assert type(index) is MatrixIndex


def test_usearch_gone_after_the_index_was_handed_out_falls_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m = _clustered(3, 300)
    indexes = AnnIndexes(None, NOW)
    index = _approx(indexes, _ids(300), m)
    monkeypatch.setitem(sys.modules, "usearch", None)
    monkeypatch.setitem(sys.modules, "usearch.index", None)
    exact = MatrixIndex(_ids(300), m)
    assert index.search(m[0], 10) == exact.search(m[0], 10)
    assert not index.prepare()


# -- content keys -------------------------------------------------------------------------


def test_content_keys_are_stable_and_equal_for_equal_rows() -> None:
    m = np.asarray([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], dtype=np.float32)
    keys = content_keys(m)
    assert keys.dtype == np.uint64
    assert keys[0] == keys[2] != keys[1]
    assert int(keys.max()) < 2**63
    # Saved graphs are keyed by these: a change of the hash must be a new file format.
    assert [int(k) for k in content_keys(m[:2])] == [int(k) for k in keys[:2]]
    assert int(content_keys(np.zeros((1, 4), dtype=np.float32))[0]) == 0


@given(
    st.lists(st.lists(st.floats(-1, 1, width=32), min_size=4, max_size=4), min_size=2, max_size=30)
)
def test_rows_that_differ_get_different_keys(rows: list[list[float]]) -> None:
    m = np.asarray(rows, dtype=np.float32)
    keys = content_keys(m)
    by_bytes = {m[i].tobytes(): int(keys[i]) for i in range(len(rows))}
    assert len(set(by_bytes.values())) == len(by_bytes)


# -- answers ------------------------------------------------------------------------------


def test_recall_at_10_against_exact_on_a_clustered_set() -> None:
    m = _clustered(11, 5000, dim=64)
    queries = _clustered(12, 200, dim=64)
    ids = _ids(5000)
    index = _approx(AnnIndexes(None, NOW), ids, m)
    assert index.prepare()
    exact = MatrixIndex(ids, m)
    found = 0
    for q in queries:
        hits = index.search(q, 10)
        _valid(index, hits, q)
        found += len({c for c, _ in hits} & {c for c, _ in exact.search(q, 10)})
    assert found / (10 * len(queries)) >= 0.9


def test_copies_of_one_vector_all_come_back_in_row_order_as_in_exact_search() -> None:
    m = _clustered(4, 400)
    m[[30, 7, 250, 99]] = m[5]  # the same text in five notes
    ids = _ids(400)[::-1].copy()
    index = _approx(AnnIndexes(None, NOW), ids, m)
    assert index.prepare()
    exact = MatrixIndex(ids, m)
    assert index.search(m[5], 3) == exact.search(m[5], 3)
    assert index.search(m[5], 5) == exact.search(m[5], 5)


def test_filters_apply_and_small_allowed_sets_go_exact() -> None:
    m = _clustered(5, 600)
    ids = _ids(600)
    index = _approx(AnnIndexes(None, NOW), ids, m)
    assert index.prepare()
    exact = MatrixIndex(ids, m)
    q = m[10]
    most = {int(i) for i in ids[100:]}
    hits = index.search(q, 10, allowed=most)
    assert {c for c, _ in hits} <= most and len(hits) == 10
    few = {int(i) for i in ids[:20]}
    assert index.search(q, 10, allowed=few) == exact.search(q, 10, allowed=few)
    gone = {int(ids[10]), int(ids[11])}
    hits = index.search(q, 10, excluded=gone)
    assert not {c for c, _ in hits} & gone and len(hits) == 10
    assert index.search(q, 10, allowed=set()) == []
    assert index.search(q, 0) == []
    assert index.search(np.ones(DIM + 1, dtype=np.float32), 10) == []


# -- incremental updates ------------------------------------------------------------------


def test_update_adds_and_removes_only_the_difference(tmp_path: Path) -> None:
    m = _clustered(6, 1000)
    ids = _ids(1000)
    indexes = AnnIndexes(tmp_path / "index.db", NOW)
    assert _approx(indexes, ids, m).prepare()
    first = indexes.stats("e5")
    assert first is not None and first.added == 1000 and first.removed == 0 and first.ready

    keep = np.ones(1000, dtype=bool)
    keep[::10] = False  # 100 rows removed
    new = _clustered(7, 50)
    ids2 = np.concatenate((ids[keep], _ids(50, start=5000)))
    m2 = np.concatenate((m[keep], new))
    index = _approx(indexes, ids2, m2)
    assert index.prepare()
    after = indexes.stats("e5")
    assert after is not None
    assert (after.added, after.removed, after.vectors) == (1050, 100, 950)

    removed = {int(i) for i in ids[~keep]}
    for q in m[~keep]:  # the removed vectors themselves never find their rows
        hits = index.search(q, 20)
        _valid(index, hits, q)
        assert not {c for c, _ in hits} & removed
    for i, q in enumerate(new):  # each new vector finds its own row first
        assert index.search(q, 1)[0][0] == int(ids2[len(ids[keep]) + i])


def test_a_row_id_reused_for_another_vector_gives_the_new_vector() -> None:
    m = _clustered(8, 300)
    ids = _ids(300)
    indexes = AnnIndexes(None, NOW)
    assert _approx(indexes, ids, m).prepare()
    m2 = m.copy()
    m2[0] = _clustered(9, 1)[0]  # chunk ids[0] now holds another text
    index = _approx(indexes, ids, m2)
    hits = index.search(m2[0], 1)
    assert hits[0][0] == int(ids[0]) and hits[0][1] == pytest.approx(1.0, abs=1e-6)
    old = index.search(m[0], 5)  # the old text no longer finds the row with its own cosine
    _valid(index, old, m[0])
    assert (int(ids[0]), pytest.approx(1.0, abs=1e-6)) not in old


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sets(st.integers(0, 119), max_size=40), st.integers(0, 30)),
        min_size=1,
        max_size=4,
    ),
    st.integers(1, 15),
)
def test_after_any_sequence_of_updates_only_current_rows_come_back(
    steps: list[tuple[set[int], int]], k: int
) -> None:
    pool = _clustered(10, 200, dim=8, clusters=5)
    indexes = AnnIndexes(None, AnnParams(threshold=0, background=False, inline_limit=10))
    present = set(range(120))
    fresh = iter(range(120, 200))
    for drop, grow in steps:
        present -= drop
        present |= {next(fresh, 0) for _ in range(grow)}
        rows = np.asarray(sorted(present), dtype=np.intp)
        if rows.size == 0:
            continue
        index = _approx(indexes, rows.astype(np.int64), pool[rows])
        for q in pool[::37]:
            hits = index.search(q, k)
            _valid(index, hits, q)
            assert len(hits) == min(k, rows.size)


# -- saved graphs -------------------------------------------------------------------------


def _saved(tmp_path: Path) -> list[Path]:
    return sorted(tmp_path.glob("index.db.ann-*.usearch"))


def test_the_graph_is_saved_and_loaded_by_the_next_process(tmp_path: Path) -> None:
    m = _clustered(13, 800)
    ids = _ids(800)
    assert _approx(AnnIndexes(tmp_path / "index.db", NOW), ids, m).prepare()
    assert len(_saved(tmp_path)) == 1
    assert not list(tmp_path.glob(".*tmp"))
    later = AnnIndexes(tmp_path / "index.db", NOW)
    index = _approx(later, ids, m)
    assert index.prepare()
    stats = later.stats("e5")
    assert stats is not None and stats.loaded and stats.added == 0
    assert index.search(m[3], 1)[0][0] == int(ids[3])
    other = AnnIndexes(tmp_path / "index.db", NOW)  # another embedder: its own graph
    assert _approx(other, ids, m[:, ::-1].copy(), embedder="bge").prepare()
    assert len(_saved(tmp_path)) == 2
    assert other.stats("bge").loaded is False  # type: ignore[union-attr]


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "truncated":
        path.write_bytes(bytes(data[: len(data) // 2]))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "flipped":
        for i in range(64, len(data), 97):
            data[i] ^= 0xFF
        path.write_bytes(bytes(data))
    elif how == "garbage":
        path.write_bytes(b"not a graph" * 100)
    else:  # a file of another program under a name its digest matches: usearch must refuse it
        data = bytes(data[:64]) + b"\x00" * 4096
        digest = hashlib.blake2b(data, digest_size=8).hexdigest()
        path.unlink()
        path.with_name(path.name.rsplit("-", 1)[0] + f"-{digest}.usearch").write_bytes(data)


@pytest.mark.parametrize("how", ["truncated", "empty", "flipped", "garbage", "forged"])
def test_a_damaged_file_is_never_loaded_and_the_graph_is_rebuilt(tmp_path: Path, how: str) -> None:
    m = _clustered(14, 500)
    ids = _ids(500)
    assert _approx(AnnIndexes(tmp_path / "index.db", NOW), ids, m).prepare()
    (saved,) = _saved(tmp_path)
    _damage(saved, how)
    assert len(_saved(tmp_path)) == 1
    later = AnnIndexes(tmp_path / "index.db", NOW)
    index = _approx(later, ids, m)
    exact = MatrixIndex(ids, m)
    assert index.prepare()
    stats = later.stats("e5")
    assert stats is not None and not stats.loaded and stats.added == 500
    # The graph is built on several threads, so its near ties may differ run to run; what
    # it returns is exact all the same: the query's own row first, true cosines.
    got = index.search(m[7], 5)
    assert got[0] == exact.search(m[7], 1)[0]
    cosine = dict(exact.search(m[7], 500))
    assert all(abs(cosine[i] - score) < 1e-6 for i, score in got)
    (now,) = _saved(tmp_path)  # the damaged file went; a sound one is saved in its place
    digest = hashlib.blake2b(now.read_bytes(), digest_size=8).hexdigest()
    assert now.name.endswith(f"-{digest}.usearch")


def test_a_graph_of_another_dimension_is_not_loaded(tmp_path: Path) -> None:
    m = _clustered(15, 300)
    assert _approx(AnnIndexes(tmp_path / "index.db", NOW), _ids(300), m).prepare()
    wider = _clustered(15, 300, dim=DIM * 2)
    later = AnnIndexes(tmp_path / "index.db", NOW)
    index = _approx(later, _ids(300), wider)
    assert index.prepare()
    assert not later.stats("e5").loaded  # type: ignore[union-attr]
    assert index.search(wider[1], 1)[0][0] == int(_ids(300)[1])


def test_an_older_saved_graph_is_a_head_start(tmp_path: Path) -> None:
    m = _clustered(16, 600)
    ids = _ids(600)
    assert _approx(AnnIndexes(tmp_path / "index.db", NOW), ids, m).prepare()
    later = AnnIndexes(tmp_path / "index.db", NOW)
    index = _approx(later, ids[:-20], m[:-20])  # 20 rows were deleted since it was saved
    assert index.prepare()
    stats = later.stats("e5")
    assert stats is not None and stats.loaded and (stats.added, stats.removed) == (0, 20)
    gone = {int(i) for i in ids[-20:]}
    for q in m[-20:]:
        assert not {c for c, _ in index.search(q, 10)} & gone


def test_an_unwritable_directory_keeps_the_graph_in_memory(tmp_path: Path) -> None:
    m = _clustered(17, 300)
    indexes = AnnIndexes(tmp_path / "missing" / "index.db", NOW)
    index = _approx(indexes, _ids(300), m)
    assert index.prepare()
    assert index.search(m[2], 1)[0][0] == int(_ids(300)[2])


# -- background work and threads ----------------------------------------------------------


def test_a_background_build_answers_exactly_until_it_is_done(tmp_path: Path) -> None:
    m = _clustered(18, 2000)
    ids = _ids(2000)
    indexes = AnnIndexes(tmp_path / "index.db", AnnParams(threshold=0))
    index = _approx(indexes, ids, m)
    exact = MatrixIndex(ids, m)
    # The first query starts the build and is answered exactly; so is any query meanwhile.
    assert index.search(m[0], 10) == exact.search(m[0], 10)
    indexes.wait()
    stats = indexes.stats("e5")
    assert stats is not None and stats.ready and stats.added == 2000
    _valid(index, index.search(m[0], 10), m[0])
    indexes.close()


def test_concurrent_searches_during_updates_return_only_current_rows() -> None:
    m = _clustered(19, 3000)
    ids = _ids(3000)
    indexes = AnnIndexes(None, AnnParams(threshold=0, inline_limit=50))
    versions = [
        _approx(indexes, ids[lo:hi], m[lo:hi]) for lo, hi in [(0, 2000), (500, 2500), (0, 3000)]
    ]
    errors: list[BaseException] = []

    def run(worker: int) -> None:
        try:
            for i in range(60):
                index = versions[(worker + i) % len(versions)]
                q = m[(worker * 131 + i * 17) % 3000]
                hits = index.search(q, 10)
                _valid(index, hits, q)
                assert len(hits) == 10
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    indexes.wait()
    assert errors == []


def test_close_stops_a_build_and_leaves_exact_search(tmp_path: Path) -> None:
    m = _clustered(20, 20_000)
    ids = _ids(20_000)
    indexes = AnnIndexes(tmp_path / "index.db", AnnParams(threshold=0, batch=500))
    index = _approx(indexes, ids, m)
    index.search(m[0], 5)  # starts the build
    indexes.close()
    stats = indexes.stats("e5")
    assert stats is not None and not stats.ready
    assert index.search(m[0], 5) == MatrixIndex(ids, m).search(m[0], 5)
    # What was built before the stop is saved and loaded as a head start next time.
    later = AnnIndexes(tmp_path / "index.db", NOW)
    assert _approx(later, ids, m).prepare()
    after = later.stats("e5")
    assert after is not None and after.vectors == 20_000
    if _saved(tmp_path) and after.loaded:
        assert after.added == 20_000 - (stats.vectors)


def test_vectors_of_another_size_replace_the_graph_in_memory() -> None:
    indexes = AnnIndexes(None, NOW)
    m = _clustered(21, 300)
    assert _approx(indexes, _ids(300), m).prepare()
    wider = _clustered(21, 300, dim=DIM * 2)
    index = _approx(indexes, _ids(300), wider)
    assert index.prepare()
    assert index.search(wider[4], 1)[0][0] == int(_ids(300)[4])
    assert indexes.stats("e5").vectors == 300  # type: ignore[union-attr]


def test_the_embedder_loads_after_the_ann_library() -> None:
    """`import onnxruntime` after `import usearch` crashes the process; memdir loads them
    in the order that works, whichever part of it asks first."""
    import subprocess

    code = (
        "from memdir.index import ann\n"
        "assert ann.library() is not None\n"
        "from memdir.embed import OnnxE5Embedder\n"
        "print(OnnxE5Embedder(workers=1).embed_query('after usearch').shape)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "(384,)"
