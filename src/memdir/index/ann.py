"""Approximate nearest-neighbour search for large stores: a usearch HNSW graph that proposes
candidate rows to `MatrixIndex`, which scores them exactly.

Below `ANN_THRESHOLD` vectors, or without the ``ann`` extra (``usearch``) installed,
vector search stays exact: over 200,000 × 384 floats one query costs ~30 ms on one core,
and exact is exact. Above it `AnnIndexes.index` hands out an `ApproximateIndex`, a
`MatrixIndex` whose `search` asks the graph first. How it keeps the exact path's trust:

* Content-addressed keys. A graph node's key is a 63-bit hash of its vector's bytes
  (`content_keys`), not a chunk row id: copies of one text are one node, a row id that
  SQLite hands to another chunk can never point at a stale vector, and a note moved or
  re-chunked to the same texts costs the graph nothing. Keys the graph returns are
  mapped back through the current matrix's own keys, so a key that is no longer in the
  matrix (a removed or changed chunk) maps to no row and cannot come back; a collision
  only adds a candidate.
* Exact scores. The graph proposes k + max(k, 32) candidates (twice the depth asked
  for, at least k + 32), every row holding a proposed vector comes along (copies tie
  and keep row order as in exact search), and their cosines are computed from the
  float32 vectors as `MatrixIndex` computes them. Filters that would make the graph over-fetch (an
  `allowed` set of under half the rows, many `excluded` ids) go exact, and so does a
  query the graph gives fewer than k rows for.
* Built incrementally. When the matrix changes, the graph is brought to the new set of
  keys by removing those that went and adding those that came (usearch reuses the
  removed slots); it is given each vector as `CompactRows` approximates it (it keeps
  int8 scalars of its own anyway). A difference of at most `AnnParams.inline_limit`
  vectors is applied on the spot; a larger one (the first build) runs in a background
  thread, and queries are answered exactly until it is done. A thread is never killed
  half-way: `close` stops it between batches and saves what it built, so a short-lived
  process (one CLI command) leaves the next one a head start; at 1M vectors a full build
  takes ~3–4 minutes of two cores, which a long-lived process (the MCP server, the page)
  does once and saves.
* Persisted, checked before it is read. The graph (int8 scalars, cosine) is saved next
  to the index database as ``<db>.ann-<embedder tag>-<digest>.usearch``, written under
  a temporary name and renamed, the digest being the BLAKE2b of the file. A file whose
  digest, dimension or format does not match is deleted, never loaded, and the graph
  rebuilt; a file older than the matrix is only a head start (the difference is
  applied, as above). It is saved again once the graph has drifted from it by
  `AnnParams.save_fraction`. Any failure of the library leaves exact search in place.

Answers above the threshold are approximate in which rows are found, never in the ids
or scores returned: ``bench/ann.py`` measures recall@10 against exact search (at 1M
clustered vectors ~0.9 at the default beam width, more at wider ones).
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import logging
import math
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from memdir.index.vectors import CompactRows, Fetch, Held, MatrixIndex, content_keys

if TYPE_CHECKING:
    from usearch.index import Index

__all__ = [
    "ANN_THRESHOLD",
    "AnnIndexes",
    "AnnParams",
    "AnnStats",
    "ApproximateIndex",
    "content_keys",
]

_log = logging.getLogger(__name__)

#: Vector count above which search goes through the approximate graph.
ANN_THRESHOLD = 200_000


@dataclass(frozen=True, slots=True)
class AnnParams:
    """How the graph is built, searched, updated and saved."""

    threshold: int = ANN_THRESHOLD
    #: HNSW links per node, and the beam widths while adding and searching.
    connectivity: int = 16
    expansion_add: int = 48
    expansion_search: int = 128
    #: usearch scalar kind: one signed byte per dimension (a quarter of float32).
    dtype: str = "i8"
    #: Threads for adding vectors (a query always uses one).
    threads: int = 2
    #: Vectors added per call (a cancelled build stops between two).
    batch: int = 5_000
    #: Largest difference applied while a query waits; larger ones run in the background.
    inline_limit: int = 1_000
    #: Build and update in a thread (False: in the call that needs the graph).
    background: bool = True
    #: Save again once this fraction of the graph changed since the file was written.
    save_fraction: float = 0.01
    #: Candidates asked of the graph beyond k: max(k, extra) (then scored exactly).
    extra: int = 32
    #: Most candidates asked of the graph for one query (beyond: exact search).
    max_candidates: int = 4096


@dataclass(frozen=True, slots=True)
class AnnStats:
    """What one embedder's graph holds and what was done to it in this process."""

    vectors: int  # distinct vectors in the graph
    ready: bool  # in step with the matrix last searched, and no job running
    added: int  # vectors added (a build adds them all)
    removed: int
    loaded: bool  # started from a saved file
    saves: int


@dataclass(frozen=True, slots=True, eq=False)
class _Layout:
    """The content keys of one matrix: which rows hold each key, and one row per key."""

    sorted_keys: npt.NDArray[np.uint64]
    sorted_rows: npt.NDArray[np.intp]
    unique: npt.NDArray[np.uint64]
    first: npt.NDArray[np.intp]

    @classmethod
    def of(cls, rows: CompactRows) -> _Layout:
        keys = rows.keys
        if keys is None:
            raise ValueError("the rows were made without their content keys")
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        return cls(ordered, order, ordered[starts], order[starts])

    def rows_of(self, keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.intp]:
        """Every row holding one of `keys` (keys no row holds give none)."""
        lo = np.searchsorted(self.sorted_keys, keys, side="left")
        hi = np.searchsorted(self.sorted_keys, keys, side="right")
        counts = hi - lo
        total = int(counts.sum())
        offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        rows: npt.NDArray[np.intp] = self.sorted_rows[np.repeat(lo, counts) + offsets]
        return rows

    def rows_for_new(self, keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.intp]:
        """One row for each of `keys`, all of which this layout holds."""
        rows: npt.NDArray[np.intp] = self.first[np.searchsorted(self.unique, keys)]
        return rows


# -- the graph ----------------------------------------------------------------------------

_NO_KEYS = np.zeros(0, dtype=np.uint64)


def library() -> type[Index] | None:
    """usearch's `Index`, or None without the ``ann`` extra (imported only when needed).

    ONNX Runtime (the local embedder) is imported first when it is installed: usearch's
    extension brings its own C++ runtime, and once it is loaded `import onnxruntime`
    crashes the process (a segfault in its module initialisation, onnxruntime 1.32 and
    usearch 2.26); loaded the other way round, both work."""
    with contextlib.suppress(ImportError):
        import onnxruntime  # type: ignore[import-untyped]  # noqa: F401
    try:
        from usearch.index import Index
    except ImportError:
        return None
    return Index


def _digest(path: Path) -> str:
    h = hashlib.blake2b(digest_size=8)
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


class _Graph:
    """One embedder's graph: built, updated and saved by one job at a time, searched by
    any number of threads while no job runs."""

    def __init__(self, files: tuple[Path, str] | None, params: AnnParams) -> None:
        self._files = files  # (index database path, embedder tag); None: not saved
        self._params = params
        self._cond = threading.Condition()
        self._index: Index | None = None
        self._have = _NO_KEYS  # sorted keys in `_index`
        self._synced: _Layout | None = None  # the layout `_index` holds exactly
        self._failed: _Layout | None = None  # a layout whose sync failed (not retried)
        self._busy = False
        self._readers = 0
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._unsaved = 0
        self._tried_disk = False
        self._newest: _Layout | None = None
        self._added = self._removed = self._saves = 0
        self._loaded = False

    @contextlib.contextmanager
    def reading(self, layout: _Layout, rows: CompactRows) -> Iterator[Index | None]:
        """The graph, in step with `layout`, for searching (None: search exactly)."""
        with self._cond:
            self._newest = layout
            index = self._ready(layout, rows)
            if index is not None:
                self._readers += 1
        try:
            yield index
        finally:
            if index is not None:
                with self._cond:
                    self._readers -= 1
                    self._cond.notify_all()

    def _ready(self, layout: _Layout, rows: CompactRows) -> Index | None:
        if self._busy or self._cancel.is_set() or self._failed is layout:
            return None
        if (
            self._synced is not layout
            and self._index is not None
            and np.array_equal(self._have, layout.unique)
        ):
            self._synced = layout
        if self._synced is layout:
            return self._index
        small = self._index is not None and _difference(self._have, layout.unique) <= (
            self._params.inline_limit
        )
        self._busy = True
        if not self._params.background or (small and self._readers == 0):
            self._sync(layout, rows)
            return self._index if self._synced is layout else None
        self._thread = threading.Thread(
            target=self._sync, args=(layout, rows), name="memdir-ann", daemon=False
        )
        self._thread.start()
        return None

    def stats(self) -> AnnStats:
        with self._cond:
            ready = not self._busy and self._synced is not None and self._synced is self._newest
            return AnnStats(
                int(self._have.size), ready, self._added, self._removed, self._loaded, self._saves
            )

    def wait(self) -> None:
        """Until no job runs."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def close(self) -> None:
        """Stop a running job between two batches (it saves what it built) and wait for it."""
        self._cancel.set()
        self.wait()

    def _sync(self, layout: _Layout, rows: CompactRows) -> None:
        """Bring the graph to `layout`'s keys (the caller set `_busy`)."""
        try:
            with self._cond:
                while self._readers:
                    self._cond.wait()
            index, have, fresh = self._index, self._have, False
            if index is not None and index.ndim != rows.dim:
                index, have = None, _NO_KEYS  # another model's vectors: start over
            if index is None:
                index, have = self._load(rows.dim) or (None, _NO_KEYS)
            if index is None:
                index, fresh = self._new(rows.dim), True
            gone = np.setdiff1d(have, layout.unique, assume_unique=True)
            new = np.setdiff1d(layout.unique, have, assume_unique=True)
            if gone.size:
                index.remove(gone)
                have = np.setdiff1d(have, gone, assume_unique=True)
            added, batch = 0, self._params.batch
            while added < new.size and not self._cancel.is_set():
                keys = new[added : added + batch]
                vectors = rows.rows(layout.rows_for_new(keys))
                index.add(keys, vectors, threads=self._params.threads)
                added += keys.size
            if added:
                have = np.union1d(have, new[:added])
            self._unsaved += int(gone.size) + added
            self._added += added
            self._removed += int(gone.size)
            with self._cond:
                self._index, self._have = index, have
                self._synced = layout if added == new.size else None
            if self._unsaved and (
                fresh
                or self._cancel.is_set()
                or self._unsaved >= self._params.save_fraction * max(len(have), 1)
            ):
                self._save(index)
        except Exception as exc:  # whatever the library raises, exact search answers
            _log.warning("approximate vector search is off, searching exactly: %s", exc)
            with self._cond:
                self._index, self._have, self._synced, self._failed = None, _NO_KEYS, None, layout
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def _new(self, ndim: int) -> Index:
        usearch = library()
        if usearch is None:
            raise RuntimeError("usearch is not installed")
        p = self._params
        return usearch(
            ndim=ndim,
            metric="cos",
            dtype=p.dtype,
            connectivity=p.connectivity,
            expansion_add=p.expansion_add,
            expansion_search=p.expansion_search,
        )

    def _saved(self) -> list[Path]:
        if self._files is None:
            return []
        db, tag = self._files
        pattern = f"{glob.escape(db.name)}.ann-{tag}-*.usearch"
        return sorted(db.parent.glob(pattern))

    def _load(self, ndim: int) -> tuple[Index, npt.NDArray[np.uint64]] | None:
        """The newest saved graph whose digest and format check out; others are deleted."""
        usearch = library()
        if self._tried_disk or usearch is None:
            return None
        self._tried_disk = True
        found: list[tuple[int, Path]] = []
        for path in self._saved():
            with contextlib.suppress(OSError):
                found.append((path.stat().st_mtime_ns, path))
        for _, path in sorted(found, reverse=True):
            try:
                if _digest(path) != path.name.rsplit("-", 1)[-1].removesuffix(".usearch"):
                    raise ValueError("its digest does not match")
                meta = usearch.metadata(str(path))
                if (
                    meta is None
                    or meta.get("dimensions") != ndim
                    or str(meta.get("kind_scalar")).rsplit(".", 1)[-1].lower()
                    != f"{self._params.dtype.lower()}"
                    or str(meta.get("kind_metric")).rsplit(".", 1)[-1].lower() != "cos"
                ):
                    raise ValueError(f"it holds another kind of graph ({meta})")
                index = usearch.restore(str(path))
                if index is None:
                    raise ValueError("it could not be read")
                # usearch's setters come after another property, so mypy misses them.
                index.expansion_add = self._params.expansion_add  # type: ignore[misc]
                index.expansion_search = self._params.expansion_search  # type: ignore[misc]
                have = np.unique(np.asarray(index.keys, dtype=np.uint64))
                self._loaded = True
                return index, have
            except Exception as exc:  # a file usearch cannot read is rebuilt, whatever it raised
                _log.info("ignoring the saved vector graph %s: %s", path, exc)
                with contextlib.suppress(OSError):
                    path.unlink()
        return None

    def _save(self, index: Index) -> None:
        """Write the graph under a temporary name, then rename it to its digest."""
        if self._files is None:
            return
        db, tag = self._files
        tmp = db.parent / f".{db.name}.ann-{tag}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            index.save(str(tmp))
            final = db.parent / f"{db.name}.ann-{tag}-{_digest(tmp)}.usearch"
            tmp.replace(final)
        except (OSError, RuntimeError, ValueError) as exc:
            _log.info("could not save the vector graph next to %s: %s", db, exc)
            with contextlib.suppress(OSError):
                tmp.unlink()
            return
        self._unsaved = 0
        self._saves += 1
        for old in self._saved():
            if old != final:
                with contextlib.suppress(OSError):
                    old.unlink()


def _difference(have: npt.NDArray[np.uint64], want: npt.NDArray[np.uint64]) -> int:
    """How many keys a sync from `have` to `want` removes or adds."""
    common = np.intersect1d(have, want, assume_unique=True).size
    return int(have.size + want.size - 2 * common)


# -- the index ----------------------------------------------------------------------------


class ApproximateIndex(MatrixIndex):
    """A `MatrixIndex` whose `search` takes its candidates from the graph when it can."""

    def __init__(
        self,
        ids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32] | CompactRows,
        graph: _Graph,
        params: AnnParams,
        fetch: Fetch | None = None,
        *,
        held: Held | None = None,
    ) -> None:
        super().__init__(ids, matrix, fetch, held=held)
        self._graph = graph
        self._params = params
        self._layout: _Layout | None = None
        self._layout_lock = threading.Lock()

    def _keys(self) -> _Layout:
        with self._layout_lock:
            if self._layout is None:
                self._layout = _Layout.of(self.compact)
            return self._layout

    def prepare(self) -> bool:
        """Bring the graph in step with this matrix now, waiting for a background job;
        True when searches will use it."""
        layout = self._keys()
        with self._graph.reading(layout, self.compact) as index:
            if index is not None:
                return True
        self._graph.wait()
        with self._graph.reading(layout, self.compact) as index:
            return index is not None

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        allowed: set[int] | None = None,
        excluded: set[int] | None = None,
    ) -> list[tuple[int, float]]:
        """As `MatrixIndex.search`, with candidates from the graph when it is ready."""
        if k <= 0 or not self._usable(query):
            return []
        count = self._wanted(k, allowed, excluded)
        if count is None:
            return super().search(query, k, allowed, excluded)
        layout = self._keys()
        with self._graph.reading(layout, self.compact) as index:
            if index is None:
                return super().search(query, k, allowed, excluded)
            try:
                found = index.search(query.astype(np.float32, copy=False), count, threads=1)
                keys = np.asarray(found.keys, dtype=np.uint64).ravel()
            except Exception as exc:  # whatever the library raises, exact search answers
                _log.warning("approximate vector search failed, searching exactly: %s", exc)
                return super().search(query, k, allowed, excluded)
        rows = layout.rows_of(keys)
        if allowed is not None or excluded:
            keep = np.ones(rows.shape[0], dtype=bool)
            if allowed is not None:
                keep &= np.isin(self.ids[rows], np.fromiter(allowed, np.int64, len(allowed)))
            if excluded:
                keep &= ~np.isin(self.ids[rows], np.fromiter(excluded, np.int64, len(excluded)))
            rows = rows[keep]
        if rows.shape[0] < k:
            return super().search(query, k, allowed, excluded)
        kept, exact = self._exact(rows, query)
        if kept.shape[0] < rows.shape[0]:  # vectors that went since: choose exactly
            return super().search(query, k, allowed, excluded)
        return self._best(kept, exact, k)

    def _wanted(self, k: int, allowed: set[int] | None, excluded: set[int] | None) -> int | None:
        """Candidates to ask the graph for (None: search exactly)."""
        share = 1.0
        if allowed is not None:
            share = len(allowed) / len(self)
            if share < 0.5:
                return None
        count = math.ceil((k + max(k, self._params.extra)) / min(share, 1.0)) + len(excluded or ())
        return count if count <= self._params.max_candidates else None


class AnnIndexes:
    """The approximate graphs of one index database, one per embedder."""

    def __init__(self, path: Path | None, params: AnnParams | None = None) -> None:
        """Graphs saved next to the database at `path` (None: kept in memory only)."""
        self._path = path
        self.params = params or AnnParams()
        self._graphs: dict[str, _Graph] = {}
        self._lock = threading.Lock()

    def index(
        self,
        embedder: str,
        ids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32] | CompactRows,
        fetch: Fetch | None = None,
        *,
        held: Held | None = None,
    ) -> MatrixIndex:
        """The search over `embedder`'s (ids, rows): exact up to the threshold or without
        usearch, approximate above it (compact rows need their content keys then:
        `wants_keys`); `held` as `MatrixIndex` takes it."""
        if not self.wants_keys(ids.shape[0]):
            return MatrixIndex(ids, matrix, fetch, held=held)
        with self._lock:
            graph = self._graphs.get(embedder)
            if graph is None:
                tag = hashlib.blake2b(embedder.encode("utf-8"), digest_size=6).hexdigest()
                files = None if self._path is None else (self._path, tag)
                graph = self._graphs[embedder] = _Graph(files, self.params)
        return ApproximateIndex(ids, matrix, graph, self.params, fetch, held=held)

    def wants_keys(self, rows: int) -> bool:
        """Whether an index of `rows` vectors goes through the graph (its compact rows then
        carry the content keys of their float32 vectors)."""
        return rows > self.params.threshold and library() is not None

    def stats(self, embedder: str) -> AnnStats | None:
        """The graph of `embedder` (None: none was needed yet)."""
        with self._lock:
            graph = self._graphs.get(embedder)
        return None if graph is None else graph.stats()

    def wait(self) -> None:
        """Until no graph is being built or updated."""
        with self._lock:
            graphs = list(self._graphs.values())
        for graph in graphs:
            graph.wait()

    def close(self) -> None:
        """Stop building (what was built is saved); searches are exact from now on."""
        with self._lock:
            graphs = list(self._graphs.values())
        for graph in graphs:
            graph.close()
