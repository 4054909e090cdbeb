"""One vector per note, for comparing notes by meaning (the tidy-up list, §6).

A note's vector is the mean of its chunks' vectors from the configured embedder, made a
unit vector again. Chunks without a vector are embedded first (with `progress`), as
`memdir reindex` would; when the disk refuses to store them, or the embedder cannot run,
the notes that have vectors keep them and the others have none (their words still count).
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
        retriever.embed_pending(store, budget=None, progress=progress)
    except Exception as exc:  # the disk refusing is told apart by `refusal`
        reason = refusal(exc, retriever.index_path(store))
        if reason is None:
            raise
        warn(
            f"the search index of the {store.scope.value} notes cannot store vectors "
            f"({reason}): notes not embedded yet are compared by their words only"
        )
    usable = retriever.usable_embedder()
    if usable is None:
        return {}
    index = retriever.index(store)
    chunk_ids, matrix = index.matrix(usable[1])
    if not len(chunk_ids):
        return {}
    wanted = set(note_ids)
    rows: dict[str, list[int]] = {}
    position = {int(c): i for i, c in enumerate(chunk_ids)}
    for chunk, (note_id, _ordinal) in index.keys(position).items():
        if note_id in wanted:
            rows.setdefault(note_id, []).append(position[chunk])
    out: Vectors = {}
    for note_id, members in rows.items():
        mean = matrix[members].mean(axis=0)
        norm = float(np.linalg.norm(mean))
        if norm > 0:
            out[note_id] = (mean / norm).astype(np.float32)
    return out
