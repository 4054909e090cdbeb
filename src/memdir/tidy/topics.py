"""Which notes of one scope are on the same topic: candidate pairs by shared rare terms,
scored by the overlap of their summary and tag terms, grouped into small clusters.

Not all pairs: each term names the notes that hold it (an inverted list, like the search
index's), and only notes sharing a term that at most `MAX_TERM_NOTES` notes hold are
compared, so 5,000 notes cost a few tens of thousands of comparisons, not 12.5 million.
Terms held by more notes than that ("deploy" in a deploy-heavy project) say little about
a topic; two notes that share nothing rarer are not on one topic.

The score is the cosine of the two notes' term sets, each term weighted by its inverse
document frequency in the scope: 1.0 for the same words, about 0.5 when half the weight
is shared.

Notes that say one thing in other words share few terms ("Staging deploys need a green
pipeline" / "Nothing reaches staging without passing CI"), so notes are paired by meaning
too (`meaning_pairs`): by the cosine of their vectors once the scope's mean vector is taken
out of each. Every note of a project is about that project, so raw cosines of a small
embedding model sit near 0.85 for any two of them; what is left after the mean is what
sets one note apart. Two notes pair when that centred cosine is high *and* each is among
the other's nearest note, which keeps a crowd of loosely related notes from pairing.
Scopes with fewer than `MEANING_MIN_NOTES` vectors are compared by their terms alone: a
mean of a handful of notes says nothing about what is usual.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "CONTRADICTION_MIN_MEANING",
    "CONTRADICTION_MIN_SCORE",
    "MAX_CLUSTER",
    "MAX_TERM_NOTES",
    "MEANING_MIN_NOTES",
    "SAME_TOPIC_MIN_MEANING",
    "SAME_TOPIC_MIN_SCORE",
    "Pair",
    "candidate_pairs",
    "clusters",
    "meaning_pairs",
]

#: A term held by more notes than this does not make two notes candidates.
MAX_TERM_NOTES = 60
#: Overlap from which two notes are on the same topic ("largely overlap", §6).
SAME_TOPIC_MIN_SCORE = 0.6
#: Overlap from which two notes are compared for contradicting statements: notes that
#: disagree on a value share their subject, not their values, so less is needed.
CONTRADICTION_MIN_SCORE = 0.35
#: At most this many notes form one same-topic finding (§6: 2–6).
MAX_CLUSTER = 6
#: Fewer vectors than this in a scope: notes are compared by their terms alone.
MEANING_MIN_NOTES = 20
#: Centred cosine from which two notes that are each other's nearest are on one topic.
SAME_TOPIC_MIN_MEANING = 0.45
#: Centred cosine from which two notes that are each other's nearest are compared for
#: clashing values even when their words differ (`find_contradiction(related=True)`).
CONTRADICTION_MIN_MEANING = 0.20
_BLOCK = 1024  # rows of the similarity matrix computed at once
_TIE = 0.02  # neighbours this close to a note's nearest count as nearest too
_NO_DIRECTION = 1e-3  # a centred vector shorter than this is the mean itself


@dataclass(frozen=True, slots=True, order=True)
class Pair:
    """Two notes (indexes into the list given, `first` < `second`) and their overlap."""

    first: int
    second: int
    score: float


def candidate_pairs(
    terms: Sequence[frozenset[str]],
    *,
    min_score: float,
    skip: frozenset[tuple[int, int]] = frozenset(),
) -> list[Pair]:
    """Pairs of term sets (by index) whose weighted overlap reaches `min_score`, best first.

    `skip` holds index pairs (lower first) never to report, e.g. a note and the note it
    supersedes.
    """
    holders: dict[str, list[int]] = defaultdict(list)
    for i, words in enumerate(terms):
        for word in words:
            holders[word].append(i)
    total = len(terms)
    weight = {w: math.log1p(total / len(held)) ** 2 for w, held in holders.items()}
    norms = [math.sqrt(sum(weight[w] for w in words)) for words in terms]
    # Terms too frequent to pair notes still count in the score of a pair found otherwise.
    frequent = [frozenset(w for w in words if len(holders[w]) > MAX_TERM_NOTES) for words in terms]
    frequent_weight = [sum(weight[w] for w in words) for words in frequent]
    shared: dict[tuple[int, int], float] = defaultdict(float)
    for word, held in holders.items():
        if len(held) < 2 or len(held) > MAX_TERM_NOTES:
            continue
        w = weight[word]
        for x, i in enumerate(held):
            for j in held[x + 1 :]:
                shared[(i, j)] += w
    out: list[Pair] = []
    for (i, j), rare in shared.items():
        if (i, j) in skip or not norms[i] or not norms[j]:
            continue
        bound = norms[i] * norms[j] * min_score
        if rare + min(frequent_weight[i], frequent_weight[j]) < bound:
            continue  # even sharing every frequent term would not reach `min_score`
        common = rare + sum(weight[w] for w in frequent[i] & frequent[j])
        score = common / (norms[i] * norms[j])
        if score >= min_score:
            out.append(Pair(i, j, round(min(score, 1.0), 4)))
    out.sort(key=lambda p: (-p.score, p.first, p.second))
    return out


def clusters(pairs: Sequence[Pair], order: Mapping[int, str]) -> list[tuple[int, ...]]:
    """Same-topic groups of 2 to `MAX_CLUSTER` notes: pairs joined best first, a pair that
    would make a group larger than that left out. Each group is sorted by `order` (the
    notes' ids); groups come out sorted by their first member."""
    group_of: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    for pair in pairs:
        a, b = group_of.get(pair.first), group_of.get(pair.second)
        if a is not None and a == b:
            continue
        size_a = len(members[a]) if a is not None else 1
        size_b = len(members[b]) if b is not None else 1
        if size_a + size_b > MAX_CLUSTER:
            continue
        if a is None:
            a = pair.first
            members[a] = [pair.first]
            group_of[pair.first] = a
        if b is None:
            members[a].append(pair.second)
            group_of[pair.second] = a
        else:
            for member in members.pop(b):
                members[a].append(member)
                group_of[member] = a
    groups = [tuple(sorted(m, key=lambda i: order[i])) for m in members.values()]
    groups.sort(key=lambda g: order[g[0]])
    return groups


def meaning_pairs(
    vectors: Sequence[npt.NDArray[np.float32] | None],
    *,
    min_score: float,
    skip: frozenset[tuple[int, int]] = frozenset(),
) -> list[Pair]:
    """Pairs of notes (by index; None: a note without a vector) whose centred cosine
    reaches `min_score` and that are each other's nearest note (ties within `_TIE` of the
    best count as nearest, so three copies of one note pair up); best first. Empty when
    fewer than `MEANING_MIN_NOTES` notes have vectors."""
    held = [i for i, v in enumerate(vectors) if v is not None]
    if len(held) < MEANING_MIN_NOTES:
        return []
    matrix = np.stack([vectors[i] for i in held]).astype(np.float32)  # type: ignore[misc]
    matrix -= matrix.mean(axis=0)
    norms = np.linalg.norm(matrix, axis=1)
    # a note no different from the mean (all notes alike) has no direction of its own
    alive = norms > _NO_DIRECTION
    matrix = np.where(alive[:, None], matrix / np.maximum(norms, _NO_DIRECTION)[:, None], 0.0)
    nearest: list[set[int]] = []
    scores: dict[tuple[int, int], float] = {}
    for start in range(0, len(held), _BLOCK):
        block = matrix[start : start + _BLOCK] @ matrix.T
        np.fill_diagonal(block[:, start:], -np.inf)  # a note is not its own neighbour
        block[:, ~alive] = -np.inf
        best = np.where(alive[start : start + _BLOCK], block.max(axis=1), -np.inf)
        for row, cols in enumerate(block >= (best - _TIE)[:, None]):
            i = start + row
            near = {int(c) for c in np.flatnonzero(cols)} if best[row] >= min_score else set()
            nearest.append(near)
            for c in near:
                scores[(min(i, c), max(i, c))] = float(block[row, c])
    out: list[Pair] = []
    for (x, y), score in scores.items():
        if score >= min_score and y in nearest[x] and x in nearest[y]:
            i, j = held[x], held[y]
            if (i, j) not in skip:
                out.append(Pair(i, j, round(min(score, 1.0), 4)))
    out.sort(key=lambda p: (-p.score, p.first, p.second))
    return out
