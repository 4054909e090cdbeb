"""What a search asks of an index: the query analysed once, and the filter applied inside it.

`analyse` scans a query's text once (with the tokenizer that also indexes notes) into
an `AnalysedQuery`; lexical ranking, the rerank, snippets and the vector side's mode
check all read that object, and nothing below it tokenises the query again. The FTS5
MATCH expression is built here, from the analysed words: every term is double-quoted,
so nothing a user types acts as FTS5 syntax.

A `SearchFilter` (note types, tags, excluded notes) is applied by the index in SQL,
before ranking and before the vector top-k, so a filtered search returns as many hits
as an unfiltered one would over only the matching notes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memdir.core.note import NoteType, Scope
from memdir.core.vocab import SearchMode, parse_choice
from memdir.index.tokenize import QueryTerm, QueryWord, query_words

__all__ = ["AnalysedQuery", "SearchFilter", "analyse", "kept_sql", "match_expression"]


#: A question asking for a time: "when …", "what year …", "wann …", "in welchem Jahr …".
_ASKS_WHEN_RE = re.compile(
    r"^\W*(?:when|wann|seit wann|(?:what|which|in welchem|welche[nms]?)\s+"
    r"(?:year|month|day|date|time|jahr|monat|tag|datum)|how long ago|wie lange her)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class AnalysedQuery:
    """A query's text analysed once: its terms, the stems it looks for, its MATCH expression."""

    #: The query as the caller gave it.
    text: str
    mode: SearchMode
    #: Every word and CJK pair in order, stop-words flagged (not dropped).
    terms: tuple[QueryTerm, ...]
    #: The FTS5 MATCH expression for `mode`; None when the text holds no term at all.
    match: str | None
    #: The distinct terms searched for, each as its alternative stems, in order; stop-words
    #: only when the query has nothing else (the rerank's coverage and adjacency).
    groups: tuple[tuple[str, ...], ...]
    #: Distinct primary stems of the words that are not stop-words (snippet lines).
    stems: frozenset[str]
    #: True when the text asks for a time ("When did …", "What year …").
    asks_when: bool = False

    @property
    def words(self) -> tuple[str, ...]:
        """The query's words (not CJK pairs) as normalised, in order."""
        return tuple(t.surface for t in self.terms if not t.cjk)

    @property
    def cjk_pairs(self) -> tuple[str, ...]:
        """The query's CJK character pairs (and lone CJK characters), in order."""
        return tuple(t.surface for t in self.terms if t.cjk)


def analyse(text: str, mode: SearchMode | str = SearchMode.ANY) -> AnalysedQuery:
    """Analyse `text` once for a search in `mode` (raises InvalidInput for another mode)."""
    chosen = parse_choice(SearchMode, mode, "mode")
    words = query_words(text)
    terms = tuple(w.term for w in words)
    kept = [t for t in terms if not t.is_stop] or list(terms)
    return AnalysedQuery(
        text=text,
        mode=chosen,
        terms=terms,
        match=match_expression(words, chosen),
        groups=tuple(dict.fromkeys(t.alternatives for t in kept)),
        stems=frozenset(t.alternatives[0] for t in terms if not t.is_stop),
        asks_when=_ASKS_WHEN_RE.search(text) is not None,
    )


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


_COLUMN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def match_expression(
    words: Sequence[QueryWord],
    mode: SearchMode | str = SearchMode.ANY,
    *,
    columns: Sequence[str] | None = None,
) -> str | None:
    """A safe FTS5 MATCH expression for analysed query words; None when nothing is left.

    ``any``: ``("a1" OR "a2") OR ("b1")``; ``all``: the same groups joined by AND —
    stop-words are dropped unless the query has nothing else. ``phrase``: every word in
    order as one FTS5 phrase over the primary stems, OR-ed with the all-English and
    all-German variants when they differ. `columns` restricts the match to those columns.
    """
    chosen = parse_choice(SearchMode, mode, "mode")
    if chosen is SearchMode.PHRASE:
        variants = (
            [w.term.alternatives[0] for w in words],
            [w.english for w in words],
            [w.german for w in words],
        )
        phrases = list(dict.fromkeys(" ".join(v) for v in variants if v))
        expr = " OR ".join(_quote(p) for p in phrases)
    else:
        kept = [w for w in words if not w.term.is_stop] or list(words)
        groups = dict.fromkeys(w.term.alternatives for w in kept)
        joiner = " OR " if chosen is SearchMode.ANY else " AND "
        expr = joiner.join("(" + " OR ".join(_quote(a) for a in g) + ")" for g in groups)
    if not expr:
        return None
    if columns is not None:
        names = list(columns)
        if not names or not all(_COLUMN_RE.fullmatch(c) for c in names):
            raise ValueError(f"invalid FTS5 column names: {names!r}")
        expr = "{" + " ".join(names) + "} : (" + expr + ")"
    return expr


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """Which notes a search may return; applied inside the search, before ranking.

    `types`: only notes of one of these types (None: any type, also none). `tags`: only
    notes carrying every one of these tags, compared case-folded. `exclude`: never these
    (scope, note id) keys (e.g. notes held back by a sync conflict).
    """

    types: frozenset[NoteType] | None = None
    tags: frozenset[str] = frozenset()
    exclude: frozenset[tuple[Scope, str]] = frozenset()

    def __post_init__(self) -> None:
        # Accept any iterables and plain strings at the boundary; keep members inside.
        if self.types is not None:
            object.__setattr__(self, "types", frozenset(_note_types(self.types)))
        object.__setattr__(self, "tags", frozenset(self.tags))
        object.__setattr__(self, "exclude", frozenset((Scope(s), i) for s, i in self.exclude))

    @property
    def restricts(self) -> bool:
        """True when the filter can leave a note out."""
        return self.types is not None or bool(self.tags) or bool(self.exclude)

    def wanted_tags(self) -> frozenset[str]:
        """The required tags as the index stores them (case-folded)."""
        return frozenset(t.casefold() for t in self.tags)

    def excluded_ids(self, scope: Scope | None) -> frozenset[str]:
        """The ids excluded in `scope` (the scope of one index's notes)."""
        return frozenset(note_id for s, note_id in self.exclude if s == scope)


def _note_types(types: Iterable[NoteType | str]) -> Iterable[NoteType]:
    for t in types:
        yield parse_choice(NoteType, t, "type")


def kept_sql(
    filter: SearchFilter | None, scope: Scope | None, column: str
) -> tuple[str, list[object]]:
    """SQL conditions (and their parameters) on a chunk id `column` of the index for the
    notes `filter` keeps ("" when it keeps every note); `scope` is the scope of the
    index's notes (for `exclude`)."""
    if filter is None or not filter.restricts:
        return "", []
    clauses: list[str] = []
    params: list[object] = []
    if filter.types is not None:
        clauses.append(
            f"{column} IN (SELECT c.id FROM chunks c JOIN notes n USING(note_id) "
            "WHERE n.type IN (SELECT value FROM json_each(?)))"
        )
        params.append(json.dumps(sorted(t.value for t in filter.types)))
    tags = filter.wanted_tags()
    if tags:
        clauses.append(
            f"{column} IN (SELECT id FROM chunks WHERE note_id IN (SELECT note_id "
            "FROM note_tags WHERE tag IN (SELECT value FROM json_each(?)) "
            "GROUP BY note_id HAVING count(*) = ?))"
        )
        params += [json.dumps(sorted(tags), ensure_ascii=False), len(tags)]
    excluded = filter.excluded_ids(scope)
    if excluded:
        clauses.append(
            f"{column} NOT IN (SELECT id FROM chunks "
            "WHERE note_id IN (SELECT value FROM json_each(?)))"
        )
        params.append(json.dumps(sorted(excluded), ensure_ascii=False))
    return " AND ".join(clauses), params
