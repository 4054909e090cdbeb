"""`Retriever.search` and `retrieve` with a `SearchFilter`: filtered inside the search, so a
filtered search returns exactly `limit` hits whenever that many notes pass, in every method."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import cast

import numpy as np
import numpy.typing as npt
import pytest

from memdir.config import EmbedSettings
from memdir.core import Note, NoteType, Scope, render_note
from memdir.embed import EmbedderInfo
from memdir.retrieve import Retriever, SearchFilter, SearchMethod, SearchMode
from memdir.retrieve.hybrid import FusionParams
from memdir.store.notedir import NoteDirectory
from memdir.store.notes import ScopeStore
from memdir.store.usage import UsageStats

METHODS = list(SearchMethod)
QUERY = "deploy pipeline"


class HashedWords:
    """A deterministic embedder: each word hashed into 32 dimensions, counted, normalised."""

    info = EmbedderInfo("hashed-words", "1", 32)

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        v = np.zeros(32, dtype=np.float64)
        for word in re.findall(r"\w+", text.casefold()):
            v[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % 32] += 1.0
        if not v.any():
            v[0] = 1.0
        return (v / np.linalg.norm(v)).astype(np.float32)

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._vector(text)


class Store:
    """What the Retriever reads of a scope's store: its directory, scope and state key."""

    def __init__(self, root: Path, scope: Scope) -> None:
        self.scope = scope
        self.state_key = scope.value
        self.directory = NoteDirectory(scope, root / scope.value, lock_timeout=5, max_notes=10_000)
        self.directory.path.mkdir(parents=True)

    def add(self, note: Note) -> None:
        (self.directory.path / f"{note.id}.md").write_bytes(render_note(note))

    def observe(self, note_id: str, data: bytes, note_hash: str) -> None:
        pass

    def get(self, note_id: str) -> Note | None:
        item = self.directory.read(note_id)
        return item if isinstance(item, Note) else None


def _strong(i: int) -> Note:
    return Note(
        id=f"strong-{i:02}",
        summary=f"Deploy pipeline {i}",
        body="The deploy pipeline runs the deploy pipeline. " * 3,
        type=NoteType.PROJECT,
        tags=("ops",),
        created_at=1,
        updated_at=1,
    )


def _weak(i: int) -> Note:
    return Note(
        id=f"weak-{i:02}",
        summary=f"Reference {i}",
        body=f"Item {i}: a long page about gardens, once naming the deploy pipeline. "
        + "Roses and tulips grow in spring. " * 8,
        type=NoteType.REFERENCE,
        tags=("Garden", "Docs") if i % 2 else ("garden",),
        created_at=1,
        updated_at=1,
    )


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Retriever, Store, Store]]:
    project, user = Store(tmp_path, Scope.PROJECT), Store(tmp_path, Scope.USER)
    for i in range(12):
        project.add(_strong(i))
    for i in range(8):
        project.add(_weak(i))
        user.add(_weak(i))  # the same ids in the other scope
    # Shallow candidate lists (6 chunks a side): without the filter inside the search,
    # the strong notes would fill both cuts and a post-filter would find no weak note.
    retriever = Retriever(
        tmp_path / "home",
        EmbedSettings(provider="none"),
        usage=UsageStats(tmp_path / "usage"),
        warn=lambda message: None,
        params=FusionParams(lexical_depth=6, vector_depth=6),
    )
    retriever.use_embedder(HashedWords())
    try:
        yield retriever, project, user
    finally:
        retriever.close()


def _stores(*stores: Store) -> list[ScopeStore]:
    return [cast(ScopeStore, s) for s in stores]


@pytest.mark.parametrize("method", METHODS)
def test_without_a_filter_the_strong_notes_fill_the_cut(
    setup: tuple[Retriever, Store, Store], method: SearchMethod
) -> None:
    retriever, project, _ = setup
    hits = retriever.search(_stores(project), QUERY, limit=5, mode="any", method=method)
    assert len(hits) == 5 and all(h.note_id.startswith("strong-") for h in hits)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("mode", [SearchMode.ANY, SearchMode.ALL])
def test_type_filter_returns_exactly_limit_hits(
    setup: tuple[Retriever, Store, Store], method: SearchMethod, mode: SearchMode
) -> None:
    retriever, project, _ = setup
    only = SearchFilter(types=frozenset({NoteType.REFERENCE}))
    hits = retriever.search(_stores(project), QUERY, limit=5, mode=mode, method=method, filter=only)
    assert len(hits) == 5
    assert all(h.note_id.startswith("weak-") for h in hits)
    chunks = retriever.retrieve(
        _stores(project), QUERY, limit=5, mode=mode, method=method, filter=only
    )
    assert len(chunks) == 5 and all(c.note_id.startswith("weak-") for c in chunks)


@pytest.mark.parametrize("method", METHODS)
def test_tag_filter_requires_every_tag_case_folded(
    setup: tuple[Retriever, Store, Store], method: SearchMethod
) -> None:
    retriever, project, _ = setup
    both = SearchFilter(tags=frozenset({"GARDEN", "docs"}))
    hits = retriever.search(
        _stores(project), QUERY, limit=10, mode="any", method=method, filter=both
    )
    assert sorted(h.note_id for h in hits) == [f"weak-{i:02}" for i in (1, 3, 5, 7)]
    one = SearchFilter(tags=frozenset({"Garden"}))
    assert (
        len(
            retriever.search(
                _stores(project), QUERY, limit=6, mode="any", method=method, filter=one
            )
        )
        == 6
    )
    nothing = SearchFilter(tags=frozenset({"garden", "ops"}))
    assert (
        retriever.search(
            _stores(project), QUERY, limit=5, mode="any", method=method, filter=nothing
        )
        == []
    )


@pytest.mark.parametrize("method", METHODS)
def test_exclude_holds_back_notes_of_one_scope_only(
    setup: tuple[Retriever, Store, Store], method: SearchMethod
) -> None:
    retriever, project, user = setup
    stores = _stores(project, user)
    held = frozenset({(Scope.PROJECT, f"strong-{i:02}") for i in range(12)})
    held |= {(Scope.USER, "weak-00")}
    hits = retriever.search(
        stores, QUERY, limit=10, mode="any", method=method, filter=SearchFilter(exclude=held)
    )
    keys = {(h.scope, h.note_id) for h in hits}
    assert len(hits) == 10
    assert not keys & held
    # The same id in the other scope is not held back.
    other = SearchFilter(exclude=frozenset({(Scope.PROJECT, f"weak-{i:02}") for i in range(8)}))
    plain = retriever.search(_stores(user), QUERY, limit=5, mode="any", method=method)
    assert (
        retriever.search(_stores(user), QUERY, limit=5, mode="any", method=method, filter=other)
        == plain
    )
    assert len(plain) == 5


@pytest.mark.parametrize("method", METHODS)
def test_filters_combine(setup: tuple[Retriever, Store, Store], method: SearchMethod) -> None:
    retriever, project, user = setup
    f = SearchFilter(
        types=frozenset({NoteType.REFERENCE, NoteType.USER}),
        tags=frozenset({"docs"}),
        exclude=frozenset({(Scope.PROJECT, "weak-01"), (Scope.USER, "weak-03")}),
    )
    hits = retriever.search(
        _stores(project, user), QUERY, limit=20, mode="any", method=method, filter=f
    )
    got = sorted((h.scope.value, h.note_id) for h in hits)
    expected = sorted(
        [("project", f"weak-{i:02}") for i in (3, 5, 7)]
        + [("user", f"weak-{i:02}") for i in (1, 5, 7)]
    )
    assert got == expected


def test_a_filtered_lexical_search_keeps_the_unfiltered_order(
    setup: tuple[Retriever, Store, Store],
) -> None:
    retriever, project, _ = setup
    retriever.params = FusionParams()  # deep enough to see every candidate
    every = retriever.search(_stores(project), QUERY, limit=20, mode="any", method="lexical")
    only = SearchFilter(types=frozenset({NoteType.REFERENCE}))
    kept = retriever.search(
        _stores(project), QUERY, limit=20, mode="any", method="lexical", filter=only
    )
    assert [h.note_id for h in kept] == [h.note_id for h in every if h.note_id.startswith("weak-")]


def test_plain_strings_are_accepted_at_the_boundary(setup: tuple[Retriever, Store, Store]) -> None:
    retriever, project, _ = setup
    a = retriever.search(_stores(project), QUERY, limit=3, mode="all", method="lexical")
    b = retriever.search(
        _stores(project), QUERY, limit=3, mode=SearchMode.ALL, method=SearchMethod.LEXICAL
    )
    assert a == b


def test_hits_carry_the_notes_type_and_tags(setup: tuple[Retriever, Store, Store]) -> None:
    retriever, project, _ = setup
    retriever.params = FusionParams()  # deep enough to see every candidate
    hits = retriever.search(_stores(project), QUERY, limit=20, mode="any", method="lexical")
    by_id = {h.note_id: h for h in hits}
    assert by_id["strong-00"].type is NoteType.PROJECT and by_id["strong-00"].tags == ("ops",)
    assert by_id["weak-01"].type is NoteType.REFERENCE
    assert by_id["weak-01"].tags == ("Garden", "Docs")  # as written, not case-folded
