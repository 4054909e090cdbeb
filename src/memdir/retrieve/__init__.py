"""Ranking notes against text: lexical, vector and hybrid search, recall, nearest notes.

The layer above imports only from here, never from retrieve's modules. The names are
imported on first use (PEP 562): recall and the prompt index need neither numpy nor
the embedder, so `memdir recall` does not pay for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdir._lazy import lazy_names

if TYPE_CHECKING:
    from memdir.core.vocab import SearchMethod, SearchMode
    from memdir.index.query import AnalysedQuery, SearchFilter, analyse
    from memdir.retrieve.arguments import usage_bonus
    from memdir.retrieve.hits import Chunk, Hit, ReindexStats
    from memdir.retrieve.recall import (
        Recall,
        Recaller,
        prompt_index,
        recalled_ids,
        render_recall,
        superseded_ids,
    )
    from memdir.retrieve.retriever import (
        QUERY_EMBED_BUDGET,
        Progress,
        Retriever,
    )
    from memdir.retrieve.similar import DUPLICATE_THRESHOLD
    from memdir.store.notes import Neighbour

__all__ = [
    "DUPLICATE_THRESHOLD",
    "QUERY_EMBED_BUDGET",
    "AnalysedQuery",
    "Chunk",
    "Hit",
    "Neighbour",
    "Progress",
    "Recall",
    "Recaller",
    "ReindexStats",
    "Retriever",
    "SearchFilter",
    "SearchMethod",
    "SearchMode",
    "analyse",
    "prompt_index",
    "recalled_ids",
    "render_recall",
    "superseded_ids",
    "usage_bonus",
]

#: Where each name is defined.
_EXPORTS: dict[str, str] = {
    "DUPLICATE_THRESHOLD": "memdir.retrieve.similar",
    "QUERY_EMBED_BUDGET": "memdir.retrieve.retriever",
    "AnalysedQuery": "memdir.index.query",
    "Chunk": "memdir.retrieve.hits",
    "Hit": "memdir.retrieve.hits",
    "Neighbour": "memdir.store.notes",
    "Progress": "memdir.retrieve.retriever",
    "Recall": "memdir.retrieve.recall",
    "Recaller": "memdir.retrieve.recall",
    "ReindexStats": "memdir.retrieve.hits",
    "Retriever": "memdir.retrieve.retriever",
    "SearchFilter": "memdir.index.query",
    "SearchMethod": "memdir.core.vocab",
    "SearchMode": "memdir.core.vocab",
    "analyse": "memdir.index.query",
    "prompt_index": "memdir.retrieve.recall",
    "recalled_ids": "memdir.retrieve.recall",
    "render_recall": "memdir.retrieve.recall",
    "superseded_ids": "memdir.retrieve.recall",
    "usage_bonus": "memdir.retrieve.arguments",
}


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__)
