"""The Embedder protocol, the identity stored beside every vector, and the embed errors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memdir.errors import ErrorKind, MemdirError

__all__ = [
    "Embedder",
    "EmbedderInfo",
    "EmbedderUnavailable",
    "EmbeddingFailed",
    "Matrix",
    "Vector",
    "check_texts",
    "normalise_rows",
]

#: One embedding per row, float32, L2-normalised rows.
Matrix = npt.NDArray[np.float32]
#: One embedding, float32, L2-normalised.
Vector = npt.NDArray[np.float32]


class EmbedderUnavailable(MemdirError):
    """Raised when an embedder cannot run: model missing or failing its hash check, bad endpoint."""

    kind = ErrorKind.UNAVAILABLE


class EmbeddingFailed(MemdirError):
    """Raised when a request fails after bounded retries or unusable vectors come back (no keys)."""

    kind = ErrorKind.UNAVAILABLE


@dataclass(frozen=True, slots=True)
class EmbedderInfo:
    """Which model made a vector: vectors with different ids are never compared."""

    name: str
    version: str
    dim: int

    @property
    def id(self) -> str:
        """The stable identity stored beside every vector, e.g. ``name@version/384``."""
        return f"{self.name}@{self.version}/{self.dim}"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors (cosine similarity = dot product)."""

    @property
    def info(self) -> EmbedderInfo:
        """The identity of the vectors this embedder makes."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        """One row per text, shape ``(len(texts), dim)``; ``[]`` gives shape ``(0, dim)``."""
        ...

    def embed_query(self, text: str) -> Vector:
        """One search query, shape ``(dim,)``."""
        ...


def check_texts(texts: Sequence[str]) -> list[str]:
    """The texts as a list, refusing a bare ``str`` (which would embed its characters)."""
    if isinstance(texts, str):
        raise TypeError("embed_documents takes a sequence of texts, not one str")
    items = list(texts)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"texts to embed must be str, not {type(item).__name__}")
    return items


def normalise_rows(matrix: npt.NDArray[np.floating], source: str) -> Matrix:
    """`matrix` with unit-length float32 rows; non-finite values or zero rows fail.

    The arithmetic runs in float64 so that rows an engine already normalised stay exact.
    """
    values = np.asarray(matrix, dtype=np.float64)
    if values.ndim != 2:
        raise EmbeddingFailed(f"{source} returned an array of shape {values.shape}, not a matrix")
    if not np.isfinite(values).all():
        raise EmbeddingFailed(f"{source} returned non-finite values (NaN or infinity)")
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    if values.shape[0] and not (norms > 0).all():
        raise EmbeddingFailed(f"{source} returned a zero vector")
    result: Matrix = (values / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return result
