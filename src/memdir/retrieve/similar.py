"""Local lexical similarity between two notes, for remember's duplicate flag.

Words are lower-cased, very common English and German words are dropped, and
CJK runs become overlapping character pairs, so the comparison works without
spaces between words. Summary and tag terms weigh twice as much as body terms.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from memdir.core import Note, Scope

__all__ = ["DUPLICATE_THRESHOLD", "Neighbour", "nearest_notes", "similarity", "terms"]

#: Cosine similarity at which a new note is flagged as a likely duplicate.
DUPLICATE_THRESHOLD = 0.8
_MIN_SCORE = 0.15
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "we",
        "you",
        "i",
        "not",
        "but",
        "can",
        "do",
        "does",
        "use",
        "used",
        "uses",
        "der",
        "die",
        "das",
        "und",
        "ist",
        "ein",
        "eine",
        "nicht",
        "mit",
        "von",
        "zu",
        "den",
        "dem",
        "des",
        "im",
        "auf",
        "für",
        "es",
        "wir",
        "sie",
        "ich",
    ]
)


def _word_terms(word: str) -> Iterable[str]:
    if _CJK.search(word):
        chars = list(word)
        if len(chars) == 1:
            yield chars[0]
        for a, b in itertools.pairwise(chars):
            yield a + b
        return
    if len(word) > 1 and word not in _STOP:
        yield word


def terms(text: str) -> Counter[str]:
    """Term counts of a text (lower-cased words, CJK character pairs, no stop words)."""
    counts: Counter[str] = Counter()
    for word in _WORD.findall(text.lower()):
        counts.update(_word_terms(word))
    return counts


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


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An existing note close to a given one."""

    note_id: str
    summary: str
    scope: Scope | None
    score: float


def similarity(a: Note, b: Note) -> float:
    """Cosine similarity of two notes' weighted term vectors (0 to 1)."""
    return _cosine(_vector(a), _vector(b))


def nearest_notes(note: Note, candidates: Iterable[Note], limit: int = 3) -> list[Neighbour]:
    """The `limit` candidates most similar to `note` (itself excluded), best first."""
    target = _vector(note)
    scored = []
    for other in candidates:
        if other.id == note.id and other.scope == note.scope:
            continue
        score = _cosine(target, _vector(other))
        if score >= _MIN_SCORE:
            scored.append(Neighbour(other.id, other.summary, other.scope, round(score, 4)))
    scored.sort(key=lambda n: (-n.score, n.note_id))
    return scored[:limit]
