"""Vector search over one contiguous float32 matrix, behind a narrow `VectorIndex` protocol.

Exact search is `matrix @ query` plus a partial sort, with BLAS held to one
thread (threads cost more than they save at these sizes and the machine is
shared). Above `memdir.index.ann.ANN_THRESHOLD` vectors, `memdir.index.ann` puts an
approximate graph (usearch HNSW) in front of the same matrix: it only proposes
candidate rows, which are then scored here exactly as this search scores them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np
import numpy.typing as npt

__all__ = ["MatrixIndex", "VectorIndex"]


class VectorIndex(Protocol):
    """Nearest chunks to a query vector."""

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        allowed: set[int] | None = None,
        excluded: set[int] | None = None,
    ) -> list[tuple[int, float]]: ...


class MatrixIndex:
    """Exact cosine search over normalised rows; equal scores keep row order."""

    def __init__(self, ids: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32]) -> None:
        if ids.shape[0] != matrix.shape[0]:
            raise ValueError(f"{ids.shape[0]} ids for {matrix.shape[0]} rows")
        self.ids = ids
        self.matrix = matrix
        self._sorted: tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]] | None = None

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def _usable(self, query: npt.NDArray[np.float32]) -> bool:
        return len(self) > 0 and query.ndim == 1 and self.matrix.shape[1] == query.shape[0]

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        allowed: set[int] | None = None,
        excluded: set[int] | None = None,
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the k best rows, best first; only `allowed` ids (None: all)
        and never `excluded` ones take part.

        The matrix product (float32 BLAS) picks the candidates; their cosines are then
        computed again row by row in float64, so equal rows get exactly equal scores
        wherever they sit, and equal scores keep row order, also across the cut at k.
        """
        if k <= 0 or not self._usable(query):
            return []
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            scores = self.matrix @ query.astype(np.float32, copy=False)
        rows: npt.NDArray[np.intp] | None = None
        if allowed is not None or excluded:
            # Filter the scores, not the matrix: no copy of the matrix per query.
            keep = np.ones(len(self), dtype=bool)
            if allowed is not None:
                keep &= np.isin(self.ids, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
            if excluded:
                gone = np.fromiter(excluded, dtype=np.int64, count=len(excluded))
                keep &= ~np.isin(self.ids, gone)
            rows = np.flatnonzero(keep)
            if rows.shape[0] == 0:
                return []
            scores = scores[rows]
        k = min(k, scores.shape[0])
        kth = np.partition(scores, scores.shape[0] - k)[scores.shape[0] - k]
        near = np.flatnonzero(scores >= kth - _NOISE)  # every row that may make the top k
        if rows is not None:
            near = rows[near]
        return self._best(near, query, k)

    def _best(
        self, rows: npt.NDArray[np.intp], query: npt.NDArray[np.float32], k: int
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the k best of `rows`, scored in float64, ties in row order."""
        exact = _dots(self.matrix, rows, query)
        order = np.lexsort((rows, -exact))[:k]
        return [(int(self.ids[rows[i]]), float(exact[i])) for i in order]

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
        scores = _dots(self.matrix, order[pos[found]], query)
        return {int(i): float(v) for i, v in zip(wanted[found], scores, strict=True)}


#: Bound on float32 rounding in a unit-vector dot product (rows that may tie the k-th).
_NOISE = 1e-5


def _dots(
    matrix: npt.NDArray[np.float32], rows: npt.NDArray[np.intp], query: npt.NDArray[np.float32]
) -> npt.NDArray[np.float64]:
    """matrix[rows] · query in float64, each row summed alike wherever it sits (no BLAS
    blocking); in blocks, so that many tied rows never need a copy of the whole matrix."""
    q = query.astype(np.float64)[np.newaxis, :]
    out = np.empty(rows.shape[0], dtype=np.float64)
    for start in range(0, rows.shape[0], 4096):
        block = matrix[rows[start : start + 4096]].astype(np.float64)
        out[start : start + block.shape[0]] = (block * q).sum(axis=1)
    return out
