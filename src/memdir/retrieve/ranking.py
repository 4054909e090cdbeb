"""Ranking one index's chunks for an analysed query: lexical (FTS5 BM25), vector, or hybrid.

Hybrid = Reciprocal Rank Fusion of the lexical and vector candidate lists, then a
light rerank of every candidate (query-term coverage, adjacent query terms, the
raw cosine, a "when" question's time words) and, when the query names a date
("on 9 November, 2022"; `memdir.retrieve.dates`), a bonus for the chunks of notes
written in it: see `hybrid`. The query mode (any / all / phrase) filters both
sides: for `all` and `phrase` a vector candidate must also satisfy the mode.
Chunks with equal raw scores on a side (copies of one text) share their rank
there, so they fuse to equal scores, which usage statistics may then order; what
remains equal is ordered by (note id, chunk ordinal), never by row id, so a
rebuilt index gives the same answers. A `SearchFilter` restricts both sides inside
the index (before BM25's cut and before the vector top-k), so filtered candidates are
never crowded out by notes the filter drops.

Among notes, a superseded note ranks right below the note that supersedes it when both
match (`superseding_first`): the current fact comes first, the old one stays findable.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from memdir.core import Note, Scope
from memdir.core.vocab import SearchMethod, SearchMode
from memdir.index.db import ChunkRow, SearchIndex
from memdir.index.query import AnalysedQuery, SearchFilter
from memdir.index.tokenize import index_terms
from memdir.index.vectors import MatrixIndex
from memdir.retrieve.dates import DateWindow, find_dates
from memdir.retrieve.hybrid import (
    FusionParams,
    coverage,
    floor_offset,
    fuse,
    has_adjacent_pair,
    held,
    idf,
    no_good_match,
    session_context,
    timed,
)

__all__ = [
    "DEFAULT_PARAMS",
    "FLOOR_DEPTH",
    "NO_FILTER",
    "RankedChunk",
    "dated",
    "distinctive_text",
    "match_label",
    "rank_chunks",
    "snippet",
    "superseding_first",
    "weak_result",
]

K = TypeVar("K", bound=Hashable)

DEFAULT_PARAMS = FusionParams()
#: Hits the relevance floor reads (the most evidence among them) at any `limit`: the depth
#: it was fitted at (bench/economy.py searches for 10).
FLOOR_DEPTH = 10
NO_FILTER = SearchFilter()
_SNIPPET = 200


@dataclass(frozen=True, slots=True)
class RankedChunk:
    """A chunk with its final score and its rank on each side (None: not a candidate there)."""

    row: ChunkRow
    score: float
    lexical_rank: int | None
    vector_rank: int | None
    #: Share (by idf weight) of the query's terms the chunk holds, a term found nowhere in
    #: the index counting in full (`memdir.retrieve.hybrid.held`).
    held: float = 0.0
    #: The chunk's cosine to the query on the relevance floor's scale (`floor_offset`; None:
    #: not compared, e.g. a lexical search, or by a model the floor was not fitted for).
    cosine: float | None = None
    #: Share of the query's term weight that the chunk's index holds nowhere.
    unknown: float = 0.0


def rank_chunks(
    index: SearchIndex,
    query: AnalysedQuery,
    *,
    limit: int = 10,
    method: SearchMethod = SearchMethod.HYBRID,
    query_vector: npt.NDArray[np.float32] | None = None,
    embedder_id: str | None = None,
    filter: SearchFilter = NO_FILTER,
    scope: Scope | None = None,
    params: FusionParams = DEFAULT_PARAMS,
) -> list[RankedChunk]:
    """The best `limit` chunks of `index` for `query`, best first.

    `filter` leaves notes out inside the index; `scope` is the scope of this index's
    notes, which `filter.exclude` names.
    """
    match = query.match
    lex_rank: dict[int, int] = {}
    if method is not SearchMethod.VECTOR and match is not None:
        lex_rank = _ranks(index.lexical(match, params.lexical_depth, filter, scope))
    vectors: MatrixIndex | None = None
    vec_rank: dict[int, int] = {}
    if method is not SearchMethod.LEXICAL and query_vector is not None and embedder_id is not None:
        allowed: set[int] | None = None
        excluded: set[int] | None = None
        if query.mode is not SearchMode.ANY:
            allowed = index.matching(match, filter, scope) if match is not None else set()
        elif filter.types is not None or filter.tags:
            allowed = index.filtered(filter, scope)
        elif filter.exclude:
            # Only a few notes held back: name those, not every other chunk.
            excluded = index.chunks_of(filter.excluded_ids(scope))
        vectors = index.vector_index(embedder_id)
        vec_rank = _ranks(vectors.search(query_vector, params.vector_depth, allowed, excluded))
    if method is SearchMethod.LEXICAL:
        scores = {cid: 1.0 / (params.k + r) for cid, r in lex_rank.items()}
    elif method is SearchMethod.VECTOR:
        scores = {cid: 1.0 / (params.k + r) for cid, r in vec_rank.items()}
    else:
        scores = fuse(lex_rank, vec_rank, params)
    signals = _Signals(index, query, vectors, query_vector)
    if method is SearchMethod.HYBRID:
        scores = signals.reranked(scores, params)
        when = find_dates(query.text) if params.date_weight > 0 else None
        if when is not None:
            scores = dated(index, scores, when, params.date_weight)
    keys = index.keys(scores)
    best = sorted(keys, key=lambda c: (-scores[c], keys[c]))[:limit]
    rows = index.chunks(best)
    held_share, cosines = signals.evidence(best)
    shift = floor_offset(embedder_id) if embedder_id is not None else None
    if shift is None:
        cosines = {}  # another model's cosines are on another scale: the floor reads words
    elif shift:
        cosines = {cid: value - shift for cid, value in cosines.items()}
    unknown = signals.unknown()
    return [
        RankedChunk(
            rows[cid],
            scores[cid],
            lex_rank.get(cid),
            vec_rank.get(cid),
            held_share.get(cid, 0.0),
            cosines.get(cid),
            unknown,
        )
        for cid in best
        if cid in rows
    ]


def weak_result(items: Sequence[RankedChunk]) -> bool:
    """True when a result is below the relevance floor (`memdir.retrieve.hybrid.no_good_match`):
    its best evidence, by words and by meaning, taken over every hit."""
    if not items:
        return False
    cosines = [i.cosine for i in items if i.cosine is not None]
    return no_good_match(
        max(i.held for i in items),
        max(cosines) if cosines else None,
        min(i.unknown for i in items),
    )


def _ranks(ranking: list[tuple[int, float]]) -> dict[int, int]:
    """Rank (from 1) of each id in a best-first list; equal scores share the better rank."""
    out: dict[int, int] = {}
    previous: float | None = None
    rank = 0
    for position, (cid, score) in enumerate(ranking, 1):
        if score != previous:
            rank, previous = position, score
        out[cid] = rank
    return out


class _Signals:
    """What the rerank and the relevance floor read of candidate chunks: the query's terms
    they hold and their cosine to the query, each looked up once."""

    def __init__(
        self,
        index: SearchIndex,
        query: AnalysedQuery,
        vectors: MatrixIndex | None,
        query_vector: npt.NDArray[np.float32] | None,
    ) -> None:
        self.index, self.query = index, query
        self.vectors = vectors if query_vector is not None else None
        self.query_vector = query_vector
        self._weights: tuple[dict[tuple[str, ...], float], dict[tuple[str, ...], float]] | None
        self._weights = None
        self._terms: dict[int, tuple[list[str], list[str], list[str]]] = {}
        self._cosines: dict[int, float] = {}

    def weights(self) -> tuple[dict[tuple[str, ...], float], dict[tuple[str, ...], float]]:
        """idf weight of each query term: of those the index holds (the rerank's coverage),
        and of every term, one found nowhere weighing as a term of one chunk would."""
        if self._weights is None:
            terms = self.query.groups
            df, total = self.index.doc_freq(a for t in terms for a in t)
            every = {t: idf(max(df.get(a, 0) for a in t), max(total, 1)) for t in terms}
            known = {t: w for t, w in every.items() if any(df.get(a) for a in t)}
            # When something happened is the note's time, rarely its words ("in May 2023"),
            # unless the query is nothing else ("2024", "Monday", "8080").
            untimed = {t: w for t, w in every.items() if not timed(set(t)) and not t[0].isdigit()}
            every = untimed or every
            self._weights = (known, every)
        return self._weights

    def _load(self, ids: list[int]) -> None:
        todo = [c for c in ids if c not in self._terms]
        if todo:
            found = self.index.stored_terms(todo)
            for cid in todo:
                self._terms[cid] = found.get(cid, ([], [], []))
        if self.vectors is not None and self.query_vector is not None:
            todo = [c for c in ids if c not in self._cosines]
            if todo:
                self._cosines.update(self.vectors.similarities(self.query_vector, todo))

    def reranked(self, scores: dict[int, float], params: FusionParams) -> dict[int, float]:
        """`scores` with the rerank's bonuses added (see `memdir.retrieve.hybrid`)."""
        if not scores:
            return scores
        candidates = sorted(scores)
        self._load(candidates)
        terms = self.query.groups
        known, _ = self.weights()
        covs = []
        for cid in candidates:
            summary, body, meta = self._terms[cid]
            covs.append(coverage(terms, {*summary, *body, *meta}, known))
        coss = [self._cosines.get(cid, 0.0) for cid in candidates]
        near_cov, near_cos = [0.0] * len(candidates), [0.0] * len(candidates)
        if params.context_coverage_weight > 0 or params.context_cosine_weight > 0:
            notes = self.index.note_times(candidates)
            near_cov, near_cos = session_context(
                [notes.get(c, (f"\0{c}", 0)) for c in candidates], (covs, coss), params.session_ms
            )
        out: dict[int, float] = {}
        for i, cid in enumerate(candidates):
            summary, body, _ = self._terms[cid]
            bonus = params.coverage_weight * covs[i] + params.cosine_weight * coss[i]
            bonus += params.context_coverage_weight * near_cov[i]
            bonus += params.context_cosine_weight * near_cos[i]
            if has_adjacent_pair(terms, (summary, body)):
                bonus += params.phrase_weight
            if self.query.asks_when and params.when_weight > 0 and timed({*summary, *body}):
                bonus += params.when_weight
            out[cid] = scores[cid] + bonus
        return out

    def unknown(self) -> float:
        """Share of the query's term weight (time words aside) that the index holds nowhere."""
        known, every = self.weights()
        total = sum(every.values())
        return 0.0 if total <= 0 else 1.0 - sum(w for t, w in every.items() if t in known) / total

    def evidence(self, ids: list[int]) -> tuple[dict[int, float], dict[int, float]]:
        """For the relevance floor: each chunk's share of the query's terms (every term
        counted) and its cosine to the query (chunks without a vector left out)."""
        self._load(ids)
        terms = self.query.groups
        _, every = self.weights()
        shares = {}
        for cid in ids:
            summary, body, meta = self._terms[cid]
            shares[cid] = held(terms, {*summary, *body, *meta}, every)
        return shares, {c: self._cosines[c] for c in ids if c in self._cosines}


def dated(
    index: SearchIndex, scores: dict[int, float], when: DateWindow, weight: float
) -> dict[int, float]:
    """`scores` with `weight` added to each chunk whose note's time lies in `when` (the
    note's last update, which for a note never edited is when it was written)."""
    if weight <= 0 or not scores:
        return scores
    rows = index.chunks(scores)
    return {
        cid: score + (weight if cid in rows and rows[cid].updated_at in when else 0.0)
        for cid, score in scores.items()
    }


def superseding_first(order: Sequence[K], superseded_by: Callable[[K], K | None]) -> list[K]:
    """`order` (best first) with each superseded entry moved to just below the entry that
    supersedes it, when that one is in `order` too; nothing else moves.

    A chain (c supersedes b supersedes a) ranks c, b, a; entries on a cycle (which only a
    hand-edited file can hold) keep their order.
    """
    present = set(order)
    placed: set[K] = set()
    waiting: dict[K, list[K]] = {}
    out: list[K] = []

    def place(first: K) -> None:
        stack = [first]
        while stack:
            key = stack.pop()
            if key in placed:
                continue
            placed.add(key)
            out.append(key)
            stack.extend(reversed(waiting.pop(key, [])))

    def on_cycle(key: K) -> bool:
        seen: set[K] = set()
        newer = superseded_by(key)
        while newer is not None and newer in present and newer not in seen:
            if newer == key:
                return True
            seen.add(newer)
            newer = superseded_by(newer)
        return False

    for key in order:
        newer = superseded_by(key)
        if newer is not None and newer in present and newer not in placed and not on_cycle(key):
            waiting.setdefault(newer, []).append(key)
        else:
            place(key)
    for key in order:  # nothing should be left waiting; never lose a hit if it were
        place(key)
    return out


def match_label(item: RankedChunk) -> str:
    """How a chunk was found: by its words, its meaning (vectors) or both."""
    if item.lexical_rank is not None and item.vector_rank is not None:
        return "both"
    return "words" if item.lexical_rank is not None else "meaning"


def snippet(row: ChunkRow, wanted: frozenset[str]) -> str:
    """The chunk line holding most of the query's stems (each line read as the index reads
    a note's text), shortened to `_SNIPPET` characters."""
    best, best_score = "", -1
    for line in row.text.splitlines():
        line = line.strip()
        if not line:
            continue
        score = len(wanted & set(index_terms(line)))
        if score > best_score:
            best, best_score = line, score
    best = best or row.summary
    return best if len(best) <= _SNIPPET else best[: _SNIPPET - 1] + "…"


def distinctive_text(note: Note) -> str:
    """What a search for notes like `note` looks for: its summary, tags and opening."""
    return " ".join((note.summary, *note.tags, note.body[:600]))
