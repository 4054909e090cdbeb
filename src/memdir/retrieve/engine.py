"""Ranking one index's chunks for a query: lexical (FTS5 BM25), vector, or hybrid.

Hybrid = weighted Reciprocal Rank Fusion of the two rankings, then a light
rerank within the fused candidates that rewards query-term coverage and an
exact phrase match. The query mode (any / all / phrase) filters both sides:
`all` and `phrase` keep only chunks whose text satisfies the mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from memdir.index.db import ChunkRow, SearchIndex
from memdir.index.tokenize import fts_query, index_terms, stem_set
from memdir.index.vectors import MatrixIndex
from memdir.retrieve.hybrid import FusionParams, fuse, rerank_bonus

__all__ = ["DEFAULT_PARAMS", "METHODS", "RankedChunk", "rank_chunks"]

Method = Literal["hybrid", "lexical", "vector"]
METHODS: tuple[str, ...] = ("hybrid", "lexical", "vector")
DEFAULT_PARAMS = FusionParams()
#: Fused candidates the rerank looks at (it reads their text).
_RERANK_DEPTH = 50


@dataclass(frozen=True, slots=True)
class RankedChunk:
    """A chunk with its final score and its rank on each side (None: not a candidate there)."""

    row: ChunkRow
    score: float
    lexical_rank: int | None
    vector_rank: int | None


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def rank_chunks(
    index: SearchIndex,
    query: str,
    *,
    mode: str = "any",
    limit: int = 10,
    method: Method = "hybrid",
    query_vector: npt.NDArray[np.float32] | None = None,
    embedder_id: str | None = None,
    params: FusionParams = DEFAULT_PARAMS,
) -> list[RankedChunk]:
    """The best `limit` chunks of `index` for `query`, best first."""
    match = fts_query(query, mode)  # type: ignore[arg-type]
    lexical: list[int] = []
    if method != "vector" and match is not None:
        lexical = [cid for cid, _ in index.lexical(match, params.lexical_depth)]
    vector: list[int] = []
    if method != "lexical" and query_vector is not None and embedder_id is not None:
        allowed = None
        if mode != "any":
            allowed = index.matching(match) if match is not None else set()
        ids, matrix = index.matrix(embedder_id)
        hits = MatrixIndex(ids, matrix).search(query_vector, params.vector_depth, allowed)
        vector = [cid for cid, _ in hits]
    if method == "lexical":
        order = lexical
        scores = {cid: 1.0 / (params.k + r) for r, cid in enumerate(lexical, 1)}
    elif method == "vector":
        order = vector
        scores = {cid: 1.0 / (params.k + r) for r, cid in enumerate(vector, 1)}
    else:
        scores = fuse(lexical, vector, params)
        order = sorted(scores, key=lambda c: (-scores[c], c))
    candidates = order[: max(limit, _RERANK_DEPTH)]
    rows = index.chunks(candidates)
    if method == "hybrid" and (params.coverage_weight or params.phrase_weight):
        scores = _reranked(query, candidates, rows, scores, params)
    lex_rank = {cid: r for r, cid in enumerate(lexical, 1)}
    vec_rank = {cid: r for r, cid in enumerate(vector, 1)}
    ranked = [
        RankedChunk(rows[cid], scores[cid], lex_rank.get(cid), vec_rank.get(cid))
        for cid in candidates
        if cid in rows
    ]
    ranked.sort(key=lambda c: (-c.score, c.row.chunk_id))
    return ranked[:limit]


def _reranked(
    query: str,
    candidates: Sequence[int],
    rows: dict[int, ChunkRow],
    scores: dict[int, float],
    params: FusionParams,
) -> dict[int, float]:
    wanted = stem_set(query)
    phrase = _normal(query)
    multiword = len(phrase.split()) > 1
    coverage: dict[int, float] = {}
    phrase_hits: set[int] = set()
    for cid in candidates:
        row = rows.get(cid)
        if row is None:
            continue
        text = f"{row.summary}\n{row.text}"
        if wanted:
            present = set(index_terms(text))
            coverage[cid] = len(wanted & present) / len(wanted)
        if multiword and phrase in _normal(text):
            phrase_hits.add(cid)
    bonus = rerank_bonus(coverage, phrase_hits, params)
    return {cid: scores[cid] + bonus.get(cid, 0.0) for cid in scores}
