"""Vector search over one contiguous float32 matrix, behind a narrow `VectorIndex` protocol.

Exact search is `matrix @ query` plus `argpartition`, with BLAS held to one
thread (threads cost more than they save at these sizes and the machine is
shared). An approximate backend (e.g. usearch) can implement the same protocol
for stores of a million chunks and more.
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
        self, query: npt.NDArray[np.float32], k: int, allowed: set[int] | None = None
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
        self, query: npt.NDArray[np.float32], k: int, allowed: set[int] | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the k best rows, best first; `allowed` filters ids."""
        if k <= 0 or not self._usable(query):
            return []
        ids, matrix = self.ids, self.matrix
        if allowed is not None:
            mask = np.isin(ids, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
            ids, matrix = ids[mask], matrix[mask]
            if ids.shape[0] == 0:
                return []
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            scores = matrix @ query.astype(np.float32, copy=False)
        k = min(k, scores.shape[0])
        top = np.argpartition(-scores, k - 1)[:k]
        if k < scores.shape[0]:
            # Rows tied with the k-th score: keep the first ones in row order, whatever
            # argpartition picked, so the cut is reproducible.
            edge = scores[top].min()
            top = np.concatenate((np.flatnonzero(scores > edge), np.flatnonzero(scores == edge)))
            top = top[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [(int(ids[i]), float(scores[i])) for i in top]

    def similarities(self, query: npt.NDArray[np.float32], ids: Iterable[int]) -> dict[int, float]:
        """Cosine of the query to each given chunk that has a vector."""
        wanted = np.fromiter(ids, dtype=np.int64)
        if wanted.size == 0 or not self._usable(query):
            return {}
        if self._sorted is None:
            order = np.argsort(self.ids, kind="stable")
            self._sorted = (order, self.ids[order])
        order, sorted_ids = self._sorted
        pos = np.minimum(np.searchsorted(sorted_ids, wanted), len(self) - 1)
        found = sorted_ids[pos] == wanted
        rows = self.matrix[order[pos[found]]]
        scores = rows @ query.astype(np.float32, copy=False)
        return {int(i): float(v) for i, v in zip(wanted[found], scores, strict=True)}
