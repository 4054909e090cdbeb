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

A note's summary is evidence too (search ranks a note by it, and `remember` with a
summary alone writes no body): `with_summaries` adds it as a passage of its own, just
before the note's first chunk, whose byte range is the summary's text inside the
frontmatter of the file at that revision (`summary_passage`) — so it is gated, sent and
cited like any chunk. A summary whose every content word the note's retrieved chunks
already hold is not added (it would only repeat them), and one that cannot be found in the
file's bytes is not added at all (it could not be cited).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memdir.core.frontmatter import body_span
from memdir.errors import ParseError
from memdir.index.tokenize import index_terms
from memdir.retrieve import analyse
from memdir.retrieve.hits import Chunk

__all__ = [
    "EvidenceGate",
    "covered_words",
    "select_evidence",
    "summaries_wanted",
    "summary_passage",
    "with_summaries",
]

#: The `"summary": "…"` member of a frontmatter object; group 1 is the string's content.
_SUMMARY_MEMBER = re.compile(rb'"summary"\s*:\s*"((?:[^"\\\x00-\x1f]|\\.)*)"')


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


def summaries_wanted(chunks: Sequence[Chunk]) -> tuple[Chunk, ...]:
    """The first retrieved chunk of each note whose summary says more than its retrieved
    chunks: a content word of the summary that none of them holds (a summary made of the
    body's own words adds nothing but length). `with_summaries` adds these notes' summaries."""
    first: dict[tuple[str, str, str], Chunk] = {}
    terms: dict[tuple[str, str, str], set[str]] = {}
    for chunk in chunks:
        key = (chunk.scope.value, chunk.note_id, chunk.revision)
        first.setdefault(key, chunk)
        terms.setdefault(key, set()).update(index_terms(chunk.text))
    wanted = []
    for key, chunk in first.items():
        groups = analyse(chunk.summary).groups if chunk.summary.strip() else ()
        if any(terms[key].isdisjoint(group) for group in groups):
            wanted.append(chunk)
    return tuple(wanted)


def summary_passage(chunk: Chunk, data: bytes) -> Chunk | None:
    """The passage of `chunk`'s note summary: its text at its byte offsets in `data`, the
    file's bytes — None unless `data` is the file at `chunk.revision` holding the summary
    as the string of a `"summary"` member of its frontmatter."""
    if hashlib.sha256(data).hexdigest() != chunk.revision:
        return None
    try:
        head_end, _ = body_span(data)
    except ParseError:
        return None
    for found in _SUMMARY_MEMBER.finditer(data, 0, head_end):
        start, end = found.span(1)
        if start == end:
            continue
        try:
            text = json.loads(b'"' + found.group(1) + b'"')
        except ValueError:
            continue
        if text == chunk.summary:
            return dataclasses.replace(
                chunk,
                chunk_hash=hashlib.sha256(text.encode("utf-8")).hexdigest(),
                start=start,
                end=end,
                text=text,
            )
    return None


def with_summaries(chunks: Sequence[Chunk], passages: Iterable[Chunk]) -> tuple[Chunk, ...]:
    """`chunks` with each summary passage just before the first chunk of its note."""
    before = {(p.scope.value, p.note_id, p.revision): p for p in passages}
    out: list[Chunk] = []
    for chunk in chunks:
        passage = before.pop((chunk.scope.value, chunk.note_id, chunk.revision), None)
        if passage is not None:
            out.append(passage)
        out.append(chunk)
    return tuple(out)
