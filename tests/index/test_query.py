"""The analysed query (one scan of a query's text) and the search filter's own rules."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.core import NoteType, Scope
from memdir.core.vocab import SearchMode
from memdir.errors import InvalidInput
from memdir.index.query import AnalysedQuery, SearchFilter, analyse, match_expression
from memdir.index.tokenize import FTS5_TOKENIZE, index_terms, query_terms, query_words

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Pieces of FTS5 query syntax, mixed into generated queries.
SYNTAX = st.sampled_from(
    [
        *('"', '""', "*", "NEAR", "NEAR(", "AND", "OR", "NOT", "-", ":", "^", "(", ")", "{", "}"),
        *("+", "'", "summary:", "{summary body}", "body : x", "a*", '"a b"', "NEAR/2", ",", "\\"),
        *("rowid", "fts", "MATCH", "bm25(", "'; DROP TABLE fts; --", "\x00", "\n"),
        *("机器学习", "Häuser", "don't", "the", "und", "🙂", "e\u0301", "_", "ß", "İ", "数据库"),
    ]
)
QUERIES = st.lists(
    st.one_of(st.text(st.characters(codec="utf-8"), max_size=12), SYNTAX), max_size=10
).map(" ".join)
MODES = st.sampled_from(list(SearchMode))


def _table() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute(
        f"CREATE VIRTUAL TABLE fts USING fts5(summary, body, meta, tokenize='{FTS5_TOKENIZE}')"
    )
    for text in ("alpha beta", "机器学习 使用Python编程", "Die Häuser werden gebaut", "the and"):
        terms = " ".join(index_terms(text))
        db.execute("INSERT INTO fts VALUES (?, ?, ?)", (terms, terms, "design"))
    return db


_DB = _table()


@SETTINGS
@given(QUERIES, MODES)
def test_fts_syntax_in_a_query_never_breaks_the_match_expression(
    text: str, mode: SearchMode
) -> None:
    query = analyse(text, mode)
    if query.match is None:
        assert query.terms == ()
        return
    _DB.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (query.match,)).fetchall()


@SETTINGS
@given(QUERIES, MODES)
def test_a_query_matches_a_note_holding_its_own_text(text: str, mode: SearchMode) -> None:
    query = analyse(text, mode)
    if query.match is None:
        return
    db = _table()
    try:
        terms = " ".join(index_terms(text))
        row = db.execute("INSERT INTO fts VALUES ('', ?, '')", (terms,)).lastrowid
        found = {
            r[0] for r in db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (query.match,))
        }
        assert row in found
    finally:
        db.close()


@SETTINGS
@given(QUERIES, MODES)
def test_words_and_stems_agree_with_index_terms(text: str, mode: SearchMode) -> None:
    query = analyse(text, mode)
    stored = index_terms(text)
    assert [t.alternatives[0] for t in query.terms] == stored
    assert query.stems <= set(stored)
    assert query.stems == {t.alternatives[0] for t in query.terms if not t.is_stop}
    assert {g[0] for g in query.groups} <= set(stored)
    assert len(query.groups) == len(set(query.groups))
    assert len(query.words) + len(query.cjk_pairs) == len(query.terms)
    assert list(query.terms) == query_terms(text)
    assert query.match == match_expression(query_words(text), mode)
    assert (query.match is None) == (not query.terms)


def test_the_query_object_holds_everything_a_search_reads() -> None:
    query = analyse("The deploy pipelines 机器学习", "all")
    assert isinstance(query, AnalysedQuery)
    assert query.text == "The deploy pipelines 机器学习"
    assert query.mode is SearchMode.ALL
    assert query.words == ("the", "deploy", "pipelines")
    assert query.cjk_pairs == ("机器", "器学", "学习")
    assert query.stems == {"deploy", "pipelin", "机器", "器学", "学习"}
    assert query.groups == (("deploy",), ("pipelin",), ("机器",), ("器学",), ("学习",))
    assert query.match == '("deploy") AND ("pipelin") AND ("机器") AND ("器学") AND ("学习")'
    assert [t.cjk for t in query.terms] == [False] * 3 + [True] * 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        query.text = "other"  # type: ignore[misc]
    assert not hasattr(query, "__dict__")  # slotted


def test_mode_accepts_the_enum_or_its_value_and_nothing_else() -> None:
    assert analyse("a b", "phrase") == analyse("a b", SearchMode.PHRASE)
    assert analyse("apple").mode is SearchMode.ANY
    with pytest.raises(InvalidInput, match="mode must be one of any, all, phrase"):
        analyse("x", "ANY")


# --- the filter ------------------------------------------------------------------------------


def test_an_empty_filter_restricts_nothing() -> None:
    empty = SearchFilter()
    assert not empty.restricts
    assert empty.types is None and empty.tags == frozenset() and empty.exclude == frozenset()


def test_filter_takes_plain_values_at_the_boundary_and_keeps_members() -> None:
    f = SearchFilter(
        types=frozenset({"project", NoteType.USER}),  # type: ignore[arg-type]
        tags=frozenset({"Deploy"}),
        exclude=frozenset({("user", "n1")}),  # type: ignore[arg-type]
    )
    assert f.types == {NoteType.PROJECT, NoteType.USER}
    assert all(isinstance(t, NoteType) for t in f.types)
    assert f.exclude == {(Scope.USER, "n1")}
    assert f.restricts
    assert f.wanted_tags() == {"deploy"}
    assert f.excluded_ids(Scope.USER) == {"n1"}
    assert f.excluded_ids(Scope.PROJECT) == frozenset()
    with pytest.raises(InvalidInput, match="type must be one of"):
        SearchFilter(types=frozenset({"memo"}))  # type: ignore[arg-type]


def test_tags_compare_case_folded() -> None:
    assert SearchFilter(tags=frozenset({"Straße", "API"})).wanted_tags() == {"strasse", "api"}


def test_filters_are_frozen_values() -> None:
    a = SearchFilter(types=frozenset({NoteType.USER}), tags=frozenset({"x"}))
    b = SearchFilter(types=frozenset({NoteType.USER}), tags=frozenset({"x"}))
    assert a == b and hash(a) == hash(b)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.tags = frozenset()  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("When did Melanie paint a sunrise?", True),
        ("What year did John move?", True),
        ("In welchem Jahr zog Anna um?", True),
        ("Wann war das?", True),
        ("What did Melanie paint?", False),
        ("whenever", False),
    ],
)
def test_a_question_asking_for_a_time(text: str, expected: bool) -> None:
    assert analyse(text).asks_when is expected
