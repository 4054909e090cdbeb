"""Ranking notes against text: lexical, vector and hybrid search, recall, nearest notes.

The layer above imports only from here, never from retrieve's modules.
"""

from memdir.core.vocab import SearchMethod, SearchMode
from memdir.index.query import AnalysedQuery, SearchFilter, analyse
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
    Chunk,
    Hit,
    Progress,
    ReindexStats,
    Retriever,
    usage_bonus,
)
from memdir.retrieve.similar import DUPLICATE_THRESHOLD, Neighbour

#: Deprecated: the values of `SearchMode` (kept until every caller uses the enum).
MODES: tuple[str, ...] = tuple(m.value for m in SearchMode)
#: Deprecated: the values of `SearchMethod` (kept until every caller uses the enum).
METHODS: tuple[str, ...] = tuple(m.value for m in SearchMethod)

__all__ = [
    "DUPLICATE_THRESHOLD",
    "METHODS",
    "MODES",
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
