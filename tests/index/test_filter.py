"""A `SearchFilter` applied inside the index's SQL: types, tags (case-folded), excluded notes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from memdir.core import Note, NoteType, Scope, render_note
from memdir.index.db import SearchIndex
from memdir.index.query import SearchFilter, analyse

Stamp = tuple[int, int, int, int]

NOTES = [
    Note(
        id="a-deploy", summary="Deploy", body="Deploy steps.", type=NoteType.PROJECT, tags=("Ops",)
    ),
    Note(
        id="b-deploy",
        summary="Deploy again",
        body="More deploy steps.",
        type=NoteType.REFERENCE,
        tags=("ops", "Straße"),
    ),
    Note(id="c-deploy", summary="Deploy notes", body="Deploy.", type=None, tags=("OPS", "api")),
    Note(id="d-deploy", summary="Deploy user", body="Deploy.", type=NoteType.USER),
]


class Source:
    def __init__(self, notes: list[Note]) -> None:
        self.data = {n.id: render_note(n) for n in notes}
        self.tick = 1

    def stamps(self) -> tuple[dict[str, Stamp], int]:
        return {
            n: (len(d), self.tick, i, self.tick) for i, (n, d) in enumerate(self.data.items())
        }, 0

    def stamps_of(self, note_ids: Iterable[str]) -> dict[str, Stamp]:
        now = self.stamps()[0]
        return {i: now[i] for i in note_ids if i in now}

    def read_bytes(self, note_id: str) -> bytes | None:
        return self.data.get(note_id)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[SearchIndex]:
    idx = SearchIndex(tmp_path / "filter.sqlite3")
    idx.refresh(Source(NOTES))
    yield idx
    idx.close()


def _found(index: SearchIndex, f: SearchFilter, scope: Scope | None = Scope.PROJECT) -> list[str]:
    match = analyse("deploy").match
    assert match is not None
    hits = index.lexical(match, 50, f, scope)
    keys = index.keys(cid for cid, _ in hits)
    by_lexical = sorted(keys[cid][0] for cid, _ in hits)
    by_matching = sorted(keys[cid][0] for cid in index.matching(match, f, scope))
    assert by_lexical == by_matching
    kept = index.filtered(f, scope)  # the vector side's restriction
    if kept is not None:
        assert set(by_lexical) == {k[0] for k in index.keys(kept).values()}
    return by_lexical


ALL = ["a-deploy", "b-deploy", "c-deploy", "d-deploy"]


def test_no_filter_keeps_every_note(index: SearchIndex) -> None:
    assert _found(index, SearchFilter()) == ALL
    assert index.filtered(SearchFilter()) is None


def test_types(index: SearchIndex) -> None:
    assert _found(index, SearchFilter(types=frozenset({NoteType.PROJECT}))) == ["a-deploy"]
    both = SearchFilter(types=frozenset({NoteType.PROJECT, NoteType.USER}))
    assert _found(index, both) == ["a-deploy", "d-deploy"]
    assert _found(index, SearchFilter(types=frozenset())) == []  # no type at all is allowed


def test_tags_must_all_be_present_compared_case_folded(index: SearchIndex) -> None:
    assert _found(index, SearchFilter(tags=frozenset({"ops"}))) == [
        "a-deploy",
        "b-deploy",
        "c-deploy",
    ]
    assert _found(index, SearchFilter(tags=frozenset({"OPS", "API"}))) == ["c-deploy"]
    assert _found(index, SearchFilter(tags=frozenset({"STRASSE"}))) == ["b-deploy"]
    assert _found(index, SearchFilter(tags=frozenset({"ops", "missing"}))) == []


def test_exclude_names_notes_of_one_scope(index: SearchIndex) -> None:
    f = SearchFilter(exclude=frozenset({(Scope.PROJECT, "a-deploy"), (Scope.USER, "b-deploy")}))
    assert _found(index, f, Scope.PROJECT) == ["b-deploy", "c-deploy", "d-deploy"]
    assert _found(index, f, Scope.USER) == ["a-deploy", "c-deploy", "d-deploy"]
    assert index.filtered(f, None) is None  # nothing of this index is excluded
    assert {index.keys([c])[c][0] for c in index.chunks_of(["a-deploy", "nope"])} == {"a-deploy"}
    assert index.chunks_of([]) == set()


def test_filters_combine(index: SearchIndex) -> None:
    f = SearchFilter(
        types=frozenset({NoteType.PROJECT, NoteType.REFERENCE}),
        tags=frozenset({"Ops"}),
        exclude=frozenset({(Scope.PROJECT, "a-deploy")}),
    )
    assert _found(index, f) == ["b-deploy"]


def test_the_filter_follows_edits_and_removals(tmp_path: Path) -> None:
    source = Source(NOTES)
    index = SearchIndex(tmp_path / "edits.sqlite3")
    try:
        index.refresh(source)
        retagged = Note(id="a-deploy", summary="Deploy", body="Deploy steps.", tags=("api",))
        source.data["a-deploy"] = render_note(retagged)
        del source.data["c-deploy"]
        source.tick = 2
        index.refresh(source)
        assert _found(index, SearchFilter(tags=frozenset({"api"}))) == ["a-deploy"]
        assert _found(index, SearchFilter(tags=frozenset({"ops"}))) == ["b-deploy"]
        index.clear()
        assert index.counts()["notes"] == 0
        index.refresh(source)
        assert _found(index, SearchFilter(tags=frozenset({"api"}))) == ["a-deploy"]
    finally:
        index.close()


def test_a_filtered_cut_fills_up_with_notes_the_filter_keeps(tmp_path: Path) -> None:
    """The BM25 cut happens after the filter: a weak match that passes still makes the top."""
    strong = [
        Note(id=f"s{i:02}", summary="Deploy deploy", body="deploy " * 20, type=NoteType.PROJECT)
        for i in range(30)
    ]
    weak = [
        Note(id=f"w{i:02}", summary="Other", body="once deploy " + "filler " * 50, tags=("x",))
        for i in range(5)
    ]
    index = SearchIndex(tmp_path / "cut.sqlite3")
    try:
        index.refresh(Source(strong + weak))
        match = analyse("deploy").match
        assert match is not None
        top = index.keys(c for c, _ in index.lexical(match, 5))
        assert all(k[0].startswith("s") for k in top.values())
        kept = index.lexical(match, 5, SearchFilter(tags=frozenset({"X"})), Scope.PROJECT)
        assert sorted(k[0] for k in index.keys(c for c, _ in kept).values()) == [
            f"w{i:02}" for i in range(5)
        ]
    finally:
        index.close()
