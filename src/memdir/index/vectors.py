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
    """Exact cosine search over normalised rows."""

    def __init__(self, ids: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32]) -> None:
        self.ids = ids
        self.matrix = matrix

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def search(
        self, query: npt.NDArray[np.float32], k: int, allowed: set[int] | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the k best rows, best first; `allowed` filters ids."""
        if len(self) == 0 or k <= 0 or self.matrix.shape[1] != query.shape[0]:
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
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(ids[i]), float(scores[i])) for i in top]

    def similarities(self, query: npt.NDArray[np.float32], ids: Iterable[int]) -> dict[int, float]:
        """Cosine of the query to each given chunk that has a vector (ids sorted ascending)."""
        wanted = np.fromiter(ids, dtype=np.int64)
        if len(self) == 0 or wanted.size == 0 or self.matrix.shape[1] != query.shape[0]:
            return {}
        pos = np.searchsorted(self.ids, wanted)
        pos = np.minimum(pos, len(self) - 1)
        found = self.ids[pos] == wanted
        rows = self.matrix[pos[found]]
        scores = rows @ query.astype(np.float32, copy=False)
        return {int(i): float(v) for i, v in zip(wanted[found], scores, strict=True)}
