"""One vector per note, for comparing notes by meaning (the tidy-up list, §6).

A note's vector is the mean of its chunks' vectors from the configured embedder, made a
unit vector again. Chunks without a vector are embedded first (with `progress`), as
`memdir reindex` would, except in a long-lived host with a background filler (the MCP
server, the memory page), where the filler is woken and a request uses what is there.
Vectors only add to the words: when they cannot be made or read (a full disk, a damaged
index, an embedder that fails), a warning says so and notes are compared by words alone.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import numpy as np
import numpy.typing as npt

from memdir.index.refusal import refusal
from memdir.retrieve.retriever import Progress, Retriever
from memdir.store.notes import ScopeStore

__all__ = ["note_vectors"]

Vectors = dict[str, npt.NDArray[np.float32]]

#: Chunk vectors read from the index at once.
_BLOCK = 4096


def note_vectors(
    retriever: Retriever,
    store: ScopeStore,
    note_ids: Collection[str],
    *,
    progress: Progress | None = None,
    warn: Callable[[str], None] = lambda _message: None,
) -> Vectors:
    """Unit vectors of the notes `note_ids` that the index holds, by note id; empty when
    vectors are off (``embed.provider = "none"``) or the embedder cannot run."""
    if retriever.embed_settings.provider == "none" or not note_ids:
        return {}
    try:
        if retriever.filler is not None:
            # a long-lived host (MCP server, memory page): a request does not wait for the
            # model; the filler is woken for what has no vector yet, the rest is used now
            retriever.vectors_ready([store])
        else:
            retriever.embed_pending(store, budget=None, progress=progress)
        usable = retriever.usable_embedder()
        if usable is None:
            return {}
        index = retriever.index(store)
        vectors = index.vector_index(usable[1])
        position = {int(c): i for i, c in enumerate(vectors.ids)}
        keys = index.keys(position) if position else {}
        wanted = set(note_ids)
        owner = {position[c]: note_id for c, (note_id, _) in keys.items() if note_id in wanted}
        rows = np.fromiter(sorted(owner), dtype=np.intp, count=len(owner))
        sums: dict[str, npt.NDArray[np.float64]] = {}
        for start in range(0, rows.shape[0], _BLOCK):  # a block of float vectors at a time
            kept, block = vectors.vectors(rows[start : start + _BLOCK])
            for row, vector in zip(kept, block, strict=True):
                note_id = owner[int(row)]
                total = sums.get(note_id)
                sums[note_id] = vector.astype(np.float64) if total is None else total + vector
    except Exception as exc:  # vectors only add to the words: the list goes on without
        reason = refusal(exc, retriever.index_path(store)) or f"{type(exc).__name__}: {exc}"
        warn(
            f"the {store.scope.value} notes are compared by their words only this time: "
            f"their vectors could not be read or made ({reason})"
        )
        return {}
    out: Vectors = {}
    for note_id, total in sums.items():
        norm = float(np.linalg.norm(total))
        if np.isfinite(norm) and norm > 0:
            out[note_id] = (total / norm).astype(np.float32)
    return out
