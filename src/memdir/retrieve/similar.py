"""Local lexical similarity between two notes, for remember's duplicate flag.

A note's terms are the product's one definition of a word (`memdir.index.tokenize`):
normalised, stemmed words and CJK character pairs, so the comparison works without
spaces between words. Stop-words and one-letter words are left out. Summary and tag
terms weigh twice as much as body terms.
"""

from __future__ import annotations

import math
from collections import Counter

from memdir.core import Note
from memdir.index.tokenize import query_terms
from memdir.store.notes import Neighbour

__all__ = ["DUPLICATE_THRESHOLD", "NEAREST_FLOOR", "Neighbour", "similarity", "terms"]

#: Cosine similarity at which a new note is flagged as a likely duplicate.
DUPLICATE_THRESHOLD = 0.8
#: Below this a note is not "near" a new one at all: `remember` shows no such neighbour
#: (a neighbour at 0.00 or 0.05 shares a stray word, nothing a person would call related).
NEAREST_FLOOR = 0.2


def terms(text: str) -> Counter[str]:
    """Term counts of a text: primary stems of its words (not stop-words, not one letter
    long) and its CJK character pairs."""
    return Counter(
        t.alternatives[0]
        for t in query_terms(text)
        if t.cjk or (not t.is_stop and len(t.surface) > 1)
    )


_Vector = tuple[Counter[str], float]
_CACHE_LIMIT = 50_000
_cache: dict[tuple[str, tuple[str, ...], str], _Vector] = {}


def _weigh(counts: Counter[str]) -> _Vector:
    return counts, math.sqrt(sum(v * v for v in counts.values()))


def _vector(note: Note) -> _Vector:
    # Loaded notes are reused across scans, so their strings keep cached hashes:
    # the lookup is cheap and unchanged notes are never re-tokenised.
    key = (note.summary, note.tags, note.body)
    cached = _cache.get(key)
    if cached is not None:
        return cached
    vec = terms(note.body)
    head = terms(note.summary + " " + " ".join(note.tags))
    for term, count in head.items():
        vec[term] += 2 * count
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    result = _cache[key] = _weigh(vec)
    return result


def _cosine(a: _Vector, b: _Vector) -> float:
    (ca, na), (cb, nb) = a, b
    if not na or not nb:
        return 0.0
    if len(ca) > len(cb):
        ca, cb = cb, ca
    dot = sum(count * cb[term] for term, count in ca.items() if term in cb)
    return dot / (na * nb) if dot else 0.0


def similarity(a: Note, b: Note) -> float:
    """Cosine similarity of two notes' weighted term vectors (0 to 1)."""
    return _cosine(_vector(a), _vector(b))
