"""Vector search over compact int8 rows with exact scores, behind a narrow `VectorIndex`
protocol.

The rows are held as `CompactRows`: one signed byte per dimension of (row − center), a
scale per row, and a bound on what that rounding loses (a quarter of a float32 matrix:
~40 MB instead of 154 at 100,000 chunks of 384 dimensions). A query scores every row from
the bytes, a block at a time as float32 with BLAS held to one thread (threads cost more
than they save at these sizes and the machine is shared), and with each approximate
score an upper bound of its error: the norm of the row's rounding residual (by
Cauchy–Schwarz) plus float32 rounding of the product. Every row whose best possible score
reaches the k-th best worst possible score may belong to the top k, and only those are
scored again, in float64 from their float32 vectors: the vectors the index database holds
(`Fetch`, a few hundred rows a query) or a float32 matrix kept in memory. So the ids,
their order and their scores are those of exact search over the float32 vectors.

Above `memdir.index.ann.ANN_THRESHOLD` vectors, `memdir.index.ann` puts an approximate
graph (usearch HNSW) in front: it only proposes candidate rows, which are then scored
here exactly as this search scores them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

__all__ = [
    "HOLD_BYTES",
    "CompactBuilder",
    "CompactRows",
    "Fetch",
    "Held",
    "MatrixIndex",
    "ReadRows",
    "VectorIndex",
    "content_keys",
    "read_rows",
]

#: (chunk ids) → {chunk id: its float32 vector's bytes} for the ids that still have one.
Fetch = Callable[[Sequence[int]], Mapping[int, bytes]]

#: A store whose float32 vectors take at most this keeps them in memory beside the codes
#: (~32,000 rows of 384 dimensions): candidates are then scored without a database read.
HOLD_BYTES = 48 * 2**20
#: Rows converted to float32 at once while scoring (a 6 MB block at 384 dimensions).
_BLOCK = 4096
#: Rows quantised at once (float64 temporaries of ~0.8 MB at 384 dimensions).
_SLICE = 256
#: Largest code: codes are symmetric, -127..127.
_LEVELS = 127
#: Float32 unit roundoff, doubled: bounds the rounding of a float32 dot product per term.
_ROUND = 2.0**-23
#: Float32 rounding of the scale, the center term and the subtraction (scores are ≤ ~1).
_NOISE = 1e-6


class VectorIndex(Protocol):
    """Nearest chunks to a query vector."""

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        allowed: set[int] | None = None,
        excluded: set[int] | None = None,
    ) -> list[tuple[int, float]]: ...


@dataclass(frozen=True, slots=True, eq=False)
class CompactRows:
    """int8 codes of (row − `center`), a scale per row, and `bounds[i]` ≥ the norm of what
    row i's codes miss; `keys` are content keys of the float32 rows when they were asked
    for (`memdir.index.ann`)."""

    codes: npt.NDArray[np.int8]
    scales: npt.NDArray[np.float32]
    bounds: npt.NDArray[np.float64]
    center: npt.NDArray[np.float32]
    keys: npt.NDArray[np.uint64] | None = None

    @classmethod
    def of(cls, matrix: npt.NDArray[np.float32], *, keys: bool = False) -> CompactRows:
        """The compact form of a float32 matrix (one row per vector)."""
        rows = np.asarray(matrix, dtype=np.float32)
        if rows.ndim != 2:
            raise ValueError(f"vectors must be a matrix, not of shape {rows.shape}")
        builder = CompactBuilder(rows.shape[0], rows.shape[1], keys=keys)
        for start in range(0, rows.shape[0], _BLOCK):
            builder.add(rows[start : start + _BLOCK])
        return builder.done()

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    @property
    def dim(self) -> int:
        return int(self.codes.shape[1])

    def rows(self, positions: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
        """The rows at `positions` as the codes give them (approximate)."""
        out = self.codes[positions].astype(np.float32)
        out *= self.scales[positions][:, np.newaxis]
        out += self.center
        return out

    def describes(
        self, positions: npt.NDArray[np.intp], vectors: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.bool_]:
        """Whether each of `vectors` is within its row's bound of what the row's codes
        give (the vector the row was made from; a row that is not finite: any)."""
        made = self.codes[positions].astype(np.float64)
        made *= self.scales[positions].astype(np.float64)[:, np.newaxis]
        made += self.center.astype(np.float64)
        off = np.linalg.norm(vectors.astype(np.float64) - made, axis=1)
        bounds = self.bounds[positions]
        same: npt.NDArray[np.bool_] = (off <= bounds * (1 + 1e-6) + 1e-12) | ~np.isfinite(bounds)
        return same

    def scores(
        self, query: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]:
        """(approximate score of every row, a bound on each one's error)."""
        from threadpoolctl import threadpool_limits

        q = np.ascontiguousarray(query, dtype=np.float32)
        q64 = q.astype(np.float64)
        out = np.empty(len(self), dtype=np.float32)
        with threadpool_limits(limits=1, user_api="blas"):
            for start in range(0, len(self), _BLOCK):
                out[start : start + _BLOCK] = (
                    self.codes[start : start + _BLOCK].astype(np.float32) @ q
                )
        out *= self.scales
        center = np.float32(self.center.astype(np.float64) @ q64)
        out += center
        rounding = float(np.abs(q64).sum()) * _LEVELS * (self.dim + 4) * _ROUND
        slack = self.bounds * float(np.linalg.norm(q64)) + self.scales * rounding + _NOISE
        # float32 rounding of the scaling and of the center's term, for scores of any size
        slack += (np.abs(out) + abs(float(center))) * (4 * _ROUND)
        return out, slack


# -- content keys -------------------------------------------------------------------------

_MASK = np.uint64(2**63 - 1)  # usearch reserves the all-ones key


def _mix(h: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64's finaliser, element-wise (uint64 arithmetic wraps)."""
    h = h ^ (h >> np.uint64(30))
    h = h * np.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> np.uint64(27))
    h = h * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


def _weights(width: int) -> npt.NDArray[np.uint64]:
    steps = np.arange(1, width + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return _mix(steps) | np.uint64(1)


def content_keys(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.uint64]:
    """A 63-bit key per row from the row's bytes: equal rows get equal keys, and rows that
    differ anywhere differ in their key but for a 2⁻⁶³-ish chance."""
    words = np.ascontiguousarray(matrix, dtype=np.float32).view(np.uint32)
    weights = _weights(words.shape[1])
    out = np.empty(words.shape[0], dtype=np.uint64)
    for start in range(0, words.shape[0], 8192):
        block = words[start : start + 8192].astype(np.uint64)
        block *= weights
        out[start : start + block.shape[0]] = block.sum(axis=1, dtype=np.uint64)
    return _mix(out) & _MASK


def _quantize(
    rows: npt.NDArray[np.float32], center: npt.NDArray[np.float32]
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32], npt.NDArray[np.float64]]:
    """(codes, scales, bounds) of `rows` around `center` (see `CompactRows`)."""
    centered = rows.astype(np.float64) - center.astype(np.float64)
    peak = np.abs(centered).max(axis=1)
    usable = np.isfinite(peak)
    scales = np.where(usable, peak / _LEVELS, 0.0).astype(np.float32)
    step = np.where(scales > 0, scales, np.float32(1)).astype(np.float64)[:, np.newaxis]
    codes = np.clip(np.rint(np.where(usable[:, np.newaxis], centered, 0.0) / step), -127, 127)
    residual = centered - codes * scales.astype(np.float64)[:, np.newaxis]
    # A row that is not finite can be anything: always a candidate, scored exactly.
    bounds = np.where(usable, np.linalg.norm(residual, axis=1) * (1 + 1e-9), np.inf)
    return codes.astype(np.int8), scales, bounds


class CompactBuilder:
    """Makes `CompactRows` of `count` rows from blocks of float32 rows, in order; the
    center is the mean of the first block (a few thousand rows say where the model's
    vectors sit)."""

    def __init__(self, count: int, dim: int, *, keys: bool = False) -> None:
        self._codes = np.zeros((count, dim), dtype=np.int8)
        self._scales = np.zeros(count, dtype=np.float32)
        self._bounds = np.zeros(count, dtype=np.float64)
        self._keys = np.zeros(count, dtype=np.uint64) if keys else None
        self._center: npt.NDArray[np.float32] | None = None
        self._n = 0

    def add(self, block: npt.NDArray[np.float32]) -> None:
        """Append `block`'s rows (float32, `dim` columns)."""
        rows = np.asarray(block, dtype=np.float32)
        if rows.shape[0] == 0:
            return
        if rows.ndim != 2 or rows.shape[1] != self._codes.shape[1]:
            raise ValueError(f"rows of shape {rows.shape} for {self._codes.shape[1]} columns")
        end = self._n + rows.shape[0]
        if end > self._codes.shape[0]:
            raise ValueError(f"more than the {self._codes.shape[0]} rows announced")
        if self._center is None:
            finite = rows[np.isfinite(rows).all(axis=1)]
            self._center = np.zeros(rows.shape[1], dtype=np.float32)
            if finite.shape[0]:
                self._center[:] = finite.astype(np.float64).mean(axis=0)
        for start in range(0, rows.shape[0], _SLICE):  # float64 work a slice at a time
            part = slice(self._n + start, min(self._n + start + _SLICE, end))
            codes, scales, bounds = _quantize(rows[start : start + _SLICE], self._center)
            self._codes[part], self._scales[part], self._bounds[part] = codes, scales, bounds
        if self._keys is not None:
            self._keys[self._n : end] = content_keys(rows)
        self._n = end

    def done(self) -> CompactRows:
        """The rows added so far."""
        n = self._n
        center = self._center
        if center is None:
            center = np.zeros(self._codes.shape[1], dtype=np.float32)
        return CompactRows(
            self._codes[:n],
            self._scales[:n],
            self._bounds[:n],
            center,
            None if self._keys is None else self._keys[:n],
        )


class MatrixIndex:
    """Exact cosine search over normalised rows; equal scores keep row order.

    The rows come as a float32 matrix (kept in memory for exact scores) or as
    `CompactRows` with a `fetch` that reads their float32 vectors by chunk id, and maybe
    the float32 matrix they were made from (`Held`: a small store reads nothing per query
    while the database is unchanged).
    """

    def __init__(
        self,
        ids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32] | CompactRows,
        fetch: Fetch | None = None,
        *,
        held: Held | None = None,
    ) -> None:
        self._current: Callable[[], bool] | None = None
        if isinstance(matrix, CompactRows):
            if fetch is None:
                raise ValueError("compact rows need a fetch for their exact vectors")
            self.compact, self._held = matrix, None
            if held is not None:
                if held.matrix.shape != (len(matrix), matrix.dim):
                    raise ValueError(f"a held matrix of {held.matrix.shape} for {len(matrix)} rows")
                self._held, self._current = held.matrix, held.current
        else:
            self._held = np.ascontiguousarray(matrix, dtype=np.float32)
            self.compact = CompactRows.of(self._held, keys=True)
        if ids.shape[0] != len(self.compact):
            raise ValueError(f"{ids.shape[0]} ids for {len(self.compact)} rows")
        self.ids = ids
        self._fetch = fetch
        self._sorted: tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]] | None = None

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @property
    def dim(self) -> int:
        return self.compact.dim

    @property
    def matrix(self) -> npt.NDArray[np.float32]:
        """Every row's float32 vector (read from the database for compact rows: rows it no
        longer holds, after a change elsewhere, are the codes' approximation)."""
        if self._held is not None and self._current is None:
            return self._held
        positions = np.arange(len(self), dtype=np.intp)
        kept, vectors = self.vectors(positions)
        out = self.compact.rows(positions)
        out[kept] = vectors
        return out

    def _usable(self, query: npt.NDArray[np.float32]) -> bool:
        return len(self) > 0 and query.ndim == 1 and self.dim == query.shape[0]

    def vectors(
        self, positions: npt.NDArray[np.intp]
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
        """(the positions that have one, their float32 vectors) for row `positions`.

        A vector read from the database that its row's codes do not describe (the chunk
        changed, or its id went to another chunk, since the rows were made) counts as
        gone: this index answers for the vectors it was made from, or leaves them out.
        """
        if self._held is not None and (self._current is None or self._current()):
            return positions, self._held[positions]
        assert self._fetch is not None
        found = self._fetch([int(i) for i in self.ids[positions]])
        width = self.dim * 4
        have = [
            (int(p), data)
            for p, cid in zip(positions, self.ids[positions], strict=True)
            if len(data := found.get(int(cid), b"")) == width
        ]
        kept = np.fromiter((p for p, _ in have), dtype=np.intp, count=len(have))
        out = np.empty((len(have), self.dim), dtype=np.float32)
        for i, (_, data) in enumerate(have):
            out[i] = np.frombuffer(data, dtype=np.float32)
        if kept.shape[0]:
            same = self.compact.describes(kept, out)
            kept, out = kept[same], out[same]
        return kept, out

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        allowed: set[int] | None = None,
        excluded: set[int] | None = None,
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the k best rows, best first; only `allowed` ids (None: all)
        and never `excluded` ones take part.

        Candidates are the rows whose score may reach the k-th best (see the module
        docstring); their cosines are computed in float64 from their float32 vectors,
        so equal rows get exactly equal scores wherever they sit, and equal scores keep
        row order, also across the cut at k.
        """
        if k <= 0 or not self._usable(query):
            return []
        approx, slack = self.compact.scores(query)
        keep = np.ones(len(self), dtype=bool)
        if allowed is not None:
            keep &= np.isin(self.ids, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
        if excluded:
            gone = np.fromiter(excluded, dtype=np.int64, count=len(excluded))
            keep &= ~np.isin(self.ids, gone)
        # Filter the scores, not the rows: no copy of the codes per query.
        rows = np.flatnonzero(keep)
        lowest, highest = (approx - slack)[rows], (approx + slack)[rows]
        while rows.shape[0]:
            want = min(k, rows.shape[0])
            kth = np.partition(lowest, rows.shape[0] - want)[rows.shape[0] - want]
            near = rows[highest >= kth]  # every row that may make the top k
            kept, exact = self._exact(near, query)
            if kept.shape[0] == near.shape[0]:
                return self._best(kept, exact, k)
            # Rows whose vector went since this index was made: choose again without them.
            alive = ~np.isin(rows, np.setdiff1d(near, kept))
            rows, lowest, highest = rows[alive], lowest[alive], highest[alive]
        return []

    def _best(
        self, rows: npt.NDArray[np.intp], exact: npt.NDArray[np.float64], k: int
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the k best of `rows` by their `exact` scores, ties in row
        order; a score that is not a number never takes a place."""
        finite = np.isfinite(exact)
        rows, exact = rows[finite], exact[finite]
        order = np.lexsort((rows, -exact))[:k]
        return [(int(self.ids[rows[i]]), float(exact[i])) for i in order]

    def _exact(
        self, rows: npt.NDArray[np.intp], query: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
        """(the rows that have a vector, their cosines in float64): each row summed alike
        wherever it sits (no BLAS blocking); in blocks, so that many tied rows never need
        a copy of every vector."""
        q = query.astype(np.float64)[np.newaxis, :]
        kept_parts: list[npt.NDArray[np.intp]] = []
        score_parts: list[npt.NDArray[np.float64]] = []
        for start in range(0, rows.shape[0], _BLOCK):
            kept, vectors = self.vectors(rows[start : start + _BLOCK])
            kept_parts.append(kept)
            score_parts.append((vectors.astype(np.float64) * q).sum(axis=1))
        if not kept_parts:
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float64)
        return np.concatenate(kept_parts), np.concatenate(score_parts)

    def similarities(self, query: npt.NDArray[np.float32], ids: Iterable[int]) -> dict[int, float]:
        """Cosine of the query to each given chunk that has a vector (as `search` gives it)."""
        wanted = np.fromiter(ids, dtype=np.int64)
        if wanted.size == 0 or not self._usable(query):
            return {}
        if self._sorted is None:
            order = np.argsort(self.ids, kind="stable")
            self._sorted = (order, self.ids[order])
        order, sorted_ids = self._sorted
        pos = np.minimum(np.searchsorted(sorted_ids, wanted), len(self) - 1)
        found = sorted_ids[pos] == wanted
        kept, scores = self._exact(order[pos[found]], query)
        return {int(self.ids[r]): float(v) for r, v in zip(kept, scores, strict=True)}


@dataclass(frozen=True)
class Held:
    """The float32 matrix compact rows were made from, kept in memory, and whether the
    database still holds exactly those vectors (while it does, they are used as they are;
    after a change they are read from it and checked, as without a held matrix)."""

    matrix: npt.NDArray[np.float32]
    current: Callable[[], bool]


@dataclass(frozen=True)
class ReadRows:
    """What `read_rows` read: chunk ids, their compact rows and, when asked to hold them,
    the float32 matrix the rows were made from (else None)."""

    ids: npt.NDArray[np.int64]
    rows: CompactRows
    held: Held | None


def read_rows(
    pairs: Iterable[tuple[int, bytes]],
    count: int,
    *,
    keys: bool = False,
    held_while: Callable[[], bool] | None = None,
) -> ReadRows:
    """The chunk ids and compact rows of (chunk id, float32 vector bytes) pairs, read a
    block at a time, or with `held_while` into one float32 matrix kept beside the rows
    when it takes at most `HOLD_BYTES` (`Held`: used while `held_while()`); at most `count`
    are read, and a vector of another width than the first ends the read (the database
    changed meanwhile: the caller reads again later)."""
    ids = np.empty(count, dtype=np.int64)
    builder = CompactBuilder(0, 0)
    matrix = np.zeros((0, 0), dtype=np.float32)  # the held matrix, or one block reused
    n = done = 0  # rows read, rows given to the builder
    held = False
    for cid, vec in pairs:
        if n == 0:
            dim = len(vec) // 4
            held = held_while is not None and count * dim * 4 <= HOLD_BYTES
            builder = CompactBuilder(count, dim, keys=keys)
            matrix = np.empty((count if held else min(count, _BLOCK), dim), dtype=np.float32)
        if n >= count or len(vec) != matrix.shape[1] * 4:
            break
        ids[n] = cid
        matrix[n if held else n - done] = np.frombuffer(vec, dtype=np.float32)
        n += 1
        if n - done == _BLOCK:
            builder.add(matrix[done:n] if held else matrix)
            done = n
    builder.add(matrix[done:n] if held else matrix[: n - done])
    kept = Held(matrix[:n], held_while) if held and held_while is not None and n else None
    return ReadRows(ids[:n], builder.done(), kept)
