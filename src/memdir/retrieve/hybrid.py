"""Fusion of lexical and vector rankings (Reciprocal Rank Fusion) and the light rerank.

Pure functions over candidate lists, no I/O. The recipe and its constants were
chosen by measurement on the LoCoMo development set with leave-one-conversation-
out checks (docs/retrieval.md):

    score(d) = Σ_side w_side / (k + rank_side(d))          RRF, k = 60
             + coverage_weight · idf-weighted share of the query's terms in d
             + phrase_weight   · [two consecutive query terms are adjacent in d]
             + cosine_weight   · cosine(query, d)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["FusionParams", "coverage", "fuse", "has_adjacent_pair", "idf"]


@dataclass(frozen=True, slots=True)
class FusionParams:
    """Constants of hybrid ranking (defaults: the measured recipe)."""

    k: int = 60
    lexical_weight: float = 1.0
    vector_weight: float = 1.0
    lexical_depth: int = 100
    vector_depth: int = 100
    coverage_weight: float = 0.05
    phrase_weight: float = 0.005
    cosine_weight: float = 0.10


def fuse(
    lexical: Sequence[int] | Mapping[int, int],
    vector: Sequence[int] | Mapping[int, int],
    params: FusionParams,
) -> dict[int, float]:
    """Weighted RRF: score = Σ weight / (k + rank); absent adds 0.

    A side is a best-first sequence (ranks 1, 2, …) or a mapping id → rank (from 1),
    in which equal scores may share a rank.
    """
    scores: dict[int, float] = {}
    for weight, side in ((params.lexical_weight, lexical), (params.vector_weight, vector)):
        if weight <= 0:
            continue
        ranks = (
            side.items() if isinstance(side, Mapping) else ((x, r) for r, x in enumerate(side, 1))
        )
        for item, rank in ranks:
            scores[item] = scores.get(item, 0.0) + weight / (params.k + rank)
    return scores


def idf(df: int, total: int) -> float:
    """BM25's inverse document frequency, never negative."""
    return math.log(1.0 + (total - df + 0.5) / (df + 0.5))


def coverage(
    terms: Sequence[tuple[str, ...]], present: set[str], weights: Mapping[tuple[str, ...], float]
) -> float:
    """Share of the query's terms (by idf weight) that a candidate contains.

    Each term is a tuple of alternative stems; terms that occur nowhere in the
    index have no weight, so a typo does not lower every candidate alike.
    """
    total = sum(weights.get(t, 0.0) for t in terms)
    if total <= 0:
        return 0.0
    hit = sum(weights.get(t, 0.0) for t in terms if any(a in present for a in t))
    return hit / total


def has_adjacent_pair(terms: Sequence[tuple[str, ...]], sequences: Sequence[Sequence[str]]) -> bool:
    """True when two consecutive query terms stand next to each other in a sequence."""
    if len(terms) < 2:
        return False
    pairs = {(a, b) for left, right in itertools.pairwise(terms) for a in left for b in right}
    return any(not pairs.isdisjoint(itertools.pairwise(seq)) for seq in sequences)
