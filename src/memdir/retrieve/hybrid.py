"""Fusion of lexical and vector rankings (weighted Reciprocal Rank Fusion) and a light rerank.

Pure functions over candidate lists: no I/O. The constants were chosen by
measurement on the development set (see bench/retrieval.py and docs/retrieval.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["FusionParams", "fuse", "rerank_bonus"]


@dataclass(frozen=True, slots=True)
class FusionParams:
    """Constants of hybrid ranking."""

    k: int = 60
    lexical_weight: float = 1.0
    vector_weight: float = 1.0
    lexical_depth: int = 100
    vector_depth: int = 100
    #: Bonus per unit of query-term coverage (fraction of distinct query stems present).
    coverage_weight: float = 0.0
    #: Bonus when the query, as a phrase of two or more words, occurs in the chunk.
    phrase_weight: float = 0.0


def fuse(lexical: Sequence[int], vector: Sequence[int], params: FusionParams) -> dict[int, float]:
    """Weighted RRF: score = Σ weight / (k + rank), ranks starting at 1."""
    scores: dict[int, float] = {}
    for weight, ranking in ((params.lexical_weight, lexical), (params.vector_weight, vector)):
        if weight <= 0:
            continue
        for rank, item in enumerate(ranking, 1):
            scores[item] = scores.get(item, 0.0) + weight / (params.k + rank)
    return scores


def rerank_bonus(
    coverage: Mapping[int, float], phrase_hits: set[int], params: FusionParams
) -> dict[int, float]:
    """Extra score per candidate for query-term coverage and exact phrase matches.

    Scaled to RRF's range (1 / (k + 1) is the score of a first rank), so a full
    coverage bonus moves a candidate by about `coverage_weight` first places.
    """
    unit = 1.0 / (params.k + 1)
    out: dict[int, float] = {}
    for item, frac in coverage.items():
        bonus = params.coverage_weight * frac * unit
        if item in phrase_hits:
            bonus += params.phrase_weight * unit
        out[item] = bonus
    return out
