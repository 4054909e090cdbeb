"""Which retrieved chunks are evidence for a question, and whether there is any at all.

The gate reads the question's content words (stems, stop-words dropped: the search's own
analysis) and, for each retrieved chunk, how many of them its text holds. A question has
evidence when one chunk holds at least `min_words` of its words (all of them, for a
question of fewer words) and at least `min_share` of them. Scores are not used: a hybrid
score is mostly the cosine of two embeddings, which e5 keeps high for any pair of texts,
and a lexical score is only a rank, so neither says "nothing relevant" on its own. The
defaults were measured on the LoCoMo development set (`bench/ask.py`, docs/ask.md): 1.3 %
of answerable questions are gated, while 97 % of off-topic and 100 % of gibberish
questions are (questions about other people, sharing the store's topics, pass more often:
the model's cited answer is what rejects those). The chunks sent are the retrieved ones
holding at least one of the question's words, best first, at most `max_chunks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memdir.index.tokenize import index_terms
from memdir.retrieve import analyse
from memdir.retrieve.hits import Chunk

__all__ = ["EvidenceGate", "covered_words", "select_evidence"]


@dataclass(frozen=True, slots=True)
class EvidenceGate:
    """The evidence rule's constants (defaults: the measured ones)."""

    #: Chunks retrieved for a question.
    candidates: int = 10
    #: At most this many chunks are sent to the model.
    max_chunks: int = 8
    #: A chunk is evidence when it holds this many of the question's words …
    min_words: int = 2
    #: … and at least this share of them.
    min_share: float = 1 / 3


def covered_words(question: str, chunks: Sequence[Chunk]) -> tuple[int, tuple[int, ...]]:
    """How many content words `question` has, and how many of them each chunk holds."""
    groups = analyse(question).groups
    counts = []
    for chunk in chunks:
        terms = set(index_terms(chunk.text))
        counts.append(sum(1 for group in groups if not terms.isdisjoint(group)))
    return len(groups), tuple(counts)


def select_evidence(
    question: str, chunks: Sequence[Chunk], gate: EvidenceGate = EvidenceGate()
) -> tuple[Chunk, ...]:
    """The chunks to send for `question` (best first), or () when none is evidence."""
    total, counts = covered_words(question, chunks)
    if total == 0:
        return ()
    needed = min(gate.min_words, total)
    passing = [n >= needed and n / total >= gate.min_share for n in counts]
    if not any(passing):
        return ()
    relevant = [(c, ok) for c, n, ok in zip(chunks, counts, passing, strict=True) if n > 0]
    chosen = relevant[: gate.max_chunks]
    if not any(ok for _, ok in chosen):  # the evidence itself is always sent
        chosen[-1] = next(pair for pair in relevant if pair[1])
    return tuple(c for c, _ in chosen)
