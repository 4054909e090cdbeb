"""Fusion of lexical and vector rankings (Reciprocal Rank Fusion) and the light rerank.

Pure functions over candidate lists, no I/O. The recipe and its constants were
chosen by measurement on the LoCoMo development set with leave-one-conversation-
out checks (docs/retrieval.md; `python bench/locomo.py --ablation` prints them):

    score(d) = Σ_side w_side / (k + rank_side(d))          RRF, k = 60
             + coverage_weight · idf-weighted share of the query's terms in d
             + phrase_weight   · [two consecutive query terms are adjacent in d]
             + cosine_weight   · cosine(query, d)
             + date_weight     · [d's note was written in the date window the query names]
             + when_weight     · [the query asks "when" and d holds a time expression]
             + context_coverage_weight · how far the highest coverage among candidates of
                                         other notes written in d's session (`session_ms`)
                                         stands above the candidates' median coverage
             + context_cosine_weight   · the same for the cosine

The session context lets a chunk borrow from what was written beside it: in a
conversation the answer ("Yes, every Tuesday!") often follows the turn that holds
the question's words.

The cosine and coverage terms carry most of the order; the RRF terms mostly break
their ties and let a candidate strong on one side only stay in the running.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memdir.index.tokenize import query_words

__all__ = [
    "FLOOR_COSINE",
    "FLOOR_EMBEDDERS",
    "FLOOR_HELD_WEIGHT",
    "FLOOR_UNKNOWN_WEIGHT",
    "FLOOR_WORDS",
    "TIME_STEMS",
    "FusionParams",
    "coverage",
    "floor_fitted",
    "floor_offset",
    "fuse",
    "has_adjacent_pair",
    "held",
    "idf",
    "no_good_match",
    "session_context",
    "timed",
]

#: The relevance floor (`no_good_match`), fitted on the LoCoMo development set by asking
#: each conversation's notes the other conversations' questions (bench/economy.py): a
#: result is a good match when its closest hit's cosine, plus `FLOOR_HELD_WEIGHT` × the
#: most any hit holds of the query's terms, minus `FLOOR_UNKNOWN_WEIGHT` × the share of
#: the query the index never mentions, reaches `FLOOR_COSINE`…
FLOOR_COSINE = 0.835
FLOOR_HELD_WEIGHT = 0.1
FLOOR_UNKNOWN_WEIGHT = 0.05
#: …for vectors of these model families (cosines of other models are on other scales),
#: each with how far its cosines stand above the scale the constants were fitted on (the
#: 4-bit engine's): the int8 graph's were refitted the same way (0.8375 where the engine's
#: are 0.835: 8.8 % of foreign questions pass, for 1.0 point of R@5). Checked in order;
FLOOR_EMBEDDERS = {"int8-onnx": 0.0025, "e5-small": 0.0}
#: without them (lexical search, another model), when a hit holds this share of the terms.
FLOOR_WORDS = 0.35

_TIME_WORDS = """
    yesterday today tonight tomorrow ago last next week weekend weeks month months year years
    recently earlier later lately morning evening night weekday
    monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november december
    gestern heute morgen vorgestern übermorgen letzte letzten letztes nächste nächsten woche
    wochenende monat monate jahr jahre kürzlich neulich früher später abend nacht
    montag dienstag mittwoch donnerstag freitag samstag sonntag
    januar februar märz mai juni juli oktober dezember
"""
#: Stems (English and German) of words that place an event in time.
TIME_STEMS = frozenset(a for w in query_words(_TIME_WORDS) for a in w.term.alternatives)


@dataclass(frozen=True, slots=True)
class FusionParams:
    """Constants of hybrid ranking (defaults: the measured recipe)."""

    k: int = 60
    lexical_weight: float = 1.0
    vector_weight: float = 1.0
    lexical_depth: int = 100
    vector_depth: int = 100
    coverage_weight: float = 0.15
    phrase_weight: float = 0.005
    cosine_weight: float = 0.8
    #: Added to a candidate whose note was written inside the date window the query
    #: names ("on 9 November, 2022"; `memdir.retrieve.dates`); 0 turns it off.
    date_weight: float = 0.1
    #: Added to a candidate holding a time expression ("yesterday", "last week", a month,
    #: a year) when the query asks for a time ("When did …").
    when_weight: float = 0.04
    #: Added × how far the best coverage / cosine among the candidates of other notes
    #: written within `session_ms` of this one's stands above the candidates' median
    #: (`session_context`); 0 turns it off.
    context_coverage_weight: float = 0.2
    context_cosine_weight: float = 0.8
    #: What counts as one working session: notes written at most this far apart (30
    #: minutes; not fitted, as the benchmark's turns all carry their session's time).
    session_ms: int = 30 * 60 * 1000


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


def held(
    terms: Sequence[tuple[str, ...]], present: set[str], weights: Mapping[tuple[str, ...], float]
) -> float:
    """Share of the query's terms (by idf weight) a candidate holds, every term counted:
    one the index holds nowhere weighs most, so a question about something the store
    never mentions holds little of it anywhere (`coverage` leaves such terms out)."""
    total = sum(weights.get(t, 0.0) for t in terms)
    if total <= 0:
        return 0.0
    return sum(weights.get(t, 0.0) for t in terms if any(a in present for a in t)) / total


def no_good_match(held: float, cosine: float | None, unknown: float) -> bool:
    """True when a result is below the relevance floor: the store likely does not hold
    what was asked for. `held`: the most any hit holds of the query's terms (`held`);
    `cosine`: the closest hit's cosine to the query (None: not compared by meaning, or by
    a model the floor was not fitted for: words alone decide); `unknown`: the share of
    the query's term weight that the index holds nowhere."""
    if cosine is None:
        return held < FLOOR_WORDS
    return cosine + FLOOR_HELD_WEIGHT * held - FLOOR_UNKNOWN_WEIGHT * unknown < FLOOR_COSINE


def floor_fitted(embedder_id: str) -> bool:
    """Whether the floor's cosine constants were fitted for this embedder's vectors."""
    return floor_offset(embedder_id) is not None


def floor_offset(embedder_id: str) -> float | None:
    """What to take from this embedder's cosines to put them on the floor's scale (None:
    the floor was not fitted for its vectors)."""
    name = embedder_id.lower()
    return next((shift for family, shift in FLOOR_EMBEDDERS.items() if family in name), None)


def session_context(
    notes: Sequence[tuple[str, int]], values: Sequence[Sequence[float]], window_ms: int
) -> list[list[float]]:
    """For each signal in `values` (one value per candidate) and each candidate, what the
    candidates of *other* notes written within `window_ms` of its own lend it: how far
    the highest of their values stands above the median of all candidates, times how far
    the candidate itself stands above that median, relative to the best candidate (its
    best signal; 0 to 1). What was written in the same session says about the query
    beyond what the median candidate says, and only to a candidate that is itself about
    the query: a burst of notes written together (an import, a clone) never lifts its
    unrelated members because one of them matches.

    `notes` gives each candidate's (note id, note time in ms); a note's own chunks lend
    nothing, as they would lift a long note by its second-best part."""
    n = len(notes)
    if n < 2 or not values:
        return [[0.0] * n for _ in values]
    t = np.asarray([at for _, at in notes], dtype=np.int64)
    ids = {note_id: i for i, note_id in enumerate(dict.fromkeys(nid for nid, _ in notes))}
    g = np.asarray([ids[nid] for nid, _ in notes], dtype=np.int64)
    near = (np.abs(t[:, None] - t[None, :]) <= window_ms) & (g[:, None] != g[None, :])
    lent, standing = [], np.zeros(n)
    for signal in values:
        v = np.asarray(signal, dtype=np.float64)
        # (np.median would import numpy.ma on first use: sorted halves need nothing more)
        ordered = np.sort(v)
        above = np.maximum(v - (ordered[(n - 1) // 2] + ordered[n // 2]) / 2, 0.0)
        top = float(above.max())
        if top > 0:
            standing = np.maximum(standing, above / top)
        best = np.where(near, above[None, :], -np.inf).max(axis=1)
        lent.append(np.where(np.isfinite(best), best, 0.0))
    return [(x * standing).tolist() for x in lent]


def has_adjacent_pair(terms: Sequence[tuple[str, ...]], sequences: Sequence[Sequence[str]]) -> bool:
    """True when two consecutive query terms stand next to each other in a sequence."""
    if len(terms) < 2:
        return False
    pairs = {(a, b) for left, right in itertools.pairwise(terms) for a in left for b in right}
    return any(not pairs.isdisjoint(itertools.pairwise(seq)) for seq in sequences)


def timed(terms: set[str]) -> bool:
    """True when a text's terms place something in time: a time word or a year."""
    if not TIME_STEMS.isdisjoint(terms):
        return True
    return any(len(t) == 4 and t.isdigit() and t[:2] in ("19", "20") for t in terms)
