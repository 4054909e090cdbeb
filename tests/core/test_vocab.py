"""Tests for `core/vocab.py`: every closed vocabulary, its choices and its helpers."""

from __future__ import annotations

from enum import StrEnum

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.core import parse_scope, parse_type
from memdir.core.vocab import (
    AccessLevel,
    KeepSide,
    NoteType,
    Scope,
    SearchMethod,
    SearchMode,
    WriteEvent,
    choices,
)
from memdir.errors import InvalidInput

VOCABULARIES: dict[type[StrEnum], tuple[str, ...]] = {
    SearchMode: ("any", "all", "phrase"),
    SearchMethod: ("hybrid", "lexical", "vector"),
    KeepSide: ("local", "server", "both"),
    AccessLevel: ("read", "read_write", "read_write_delete"),
    WriteEvent: (
        "write",
        "observed",
        "restore",
        "forget",
        "purge",
        "resolve",
        "resolve-delete",
        "consolidate",
        "sync",
        "sync-delete",
    ),
    NoteType: ("user", "feedback", "project", "reference"),
    Scope: ("project", "user"),
}


@pytest.mark.parametrize("vocabulary", list(VOCABULARIES), ids=lambda v: v.__name__)
def test_choices_are_the_values_in_declaration_order(vocabulary: type[StrEnum]) -> None:
    assert choices(vocabulary) == VOCABULARIES[vocabulary]
    for value in VOCABULARIES[vocabulary]:
        member = vocabulary(value)
        assert member == value and str(member) == value


@pytest.mark.parametrize("vocabulary", list(VOCABULARIES), ids=lambda v: v.__name__)
def test_an_unknown_word_is_not_a_member(vocabulary: type[StrEnum]) -> None:
    with pytest.raises(ValueError):
        vocabulary("nonsense")


def test_access_levels_rank_weakest_first() -> None:
    assert [level.rank for level in AccessLevel] == [0, 1, 2]
    read, write, delete = AccessLevel
    assert delete.at_most(read) is read
    assert read.at_most(delete) is read
    assert write.at_most(delete) is write
    assert delete.at_most(delete) is delete


@given(st.sampled_from(list(AccessLevel)), st.sampled_from(list(AccessLevel)))
def test_at_most_is_the_weaker_and_symmetric(a: AccessLevel, b: AccessLevel) -> None:
    weaker = a.at_most(b)
    assert weaker is b.at_most(a)
    assert weaker.rank == min(a.rank, b.rank)


def test_only_sync_events_come_from_sync() -> None:
    assert {e for e in WriteEvent if e.from_sync} == {WriteEvent.SYNC, WriteEvent.SYNC_DELETE}


@given(st.text(max_size=20))
def test_parsing_a_scope_or_type_accepts_exactly_the_vocabulary(raw: str) -> None:
    if raw in choices(Scope):
        assert parse_scope(raw) is Scope(raw)
    else:
        with pytest.raises(InvalidInput):
            parse_scope(raw)
    if raw in choices(NoteType):
        assert parse_type(raw) is NoteType(raw)
    elif raw == "":
        assert parse_type(raw) is None
    else:
        with pytest.raises(InvalidInput):
            parse_type(raw)
