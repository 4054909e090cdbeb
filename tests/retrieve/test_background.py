"""Vectors filled in the background (`Retriever.embed_in_background`, as the MCP server
runs it): a first search on an unindexed project answers from the lexical index at once
while the embedder is still busy, says so, and is hybrid once the vectors arrived;
writes never wait; nothing is lost or embedded twice. Ordering is asserted with events,
never with wall-clock times."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from memdir import Memory
from memdir.core import Note, render_note
from memdir.core.vocab import SearchMethod
from memdir.embed import EmbedderInfo, EmbeddingFailed
from memdir.retrieve.background import VectorFiller
from memdir.retrieve.report import observing

NOTES = 120
#: Long enough for anything to happen, short enough that a broken test ends.
PATIENCE = 60.0


class GatedEmbedder:
    """A deterministic embedder whose document batches wait for `gate` (a slow model):
    every batch is logged in `events`, and counted per text in `embedded`."""

    info = EmbedderInfo("gated-words", "1", 32)

    def __init__(self, events: list[str]) -> None:
        self.gate = threading.Event()
        self.events = events
        self.embedded: dict[str, int] = {}
        self.fail = False
        self._lock = threading.Lock()

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        v = np.zeros(32, dtype=np.float64)
        for word in re.findall(r"\w+", text.casefold()):
            v[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % 32] += 1.0
        if not v.any():
            v[0] = 1.0
        return (v / np.linalg.norm(v)).astype(np.float32)

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.events.append("embedding")
        if not self.gate.wait(PATIENCE):
            raise AssertionError("the gate was never opened")
        if self.fail:
            raise EmbeddingFailed("the embedding endpoint answered 503")
        with self._lock:
            for text in texts:
                self.embedded[text] = self.embedded.get(text, 0) + 1
        self.events.append("embedded")
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._vector(text)


def _plant(directory: Path, count: int) -> list[str]:
    """`count` note files written straight to disk: a project no index has seen yet."""
    directory.mkdir(parents=True, exist_ok=True)
    ids = []
    for i in range(count):
        note_id = f"fact-{i:03d}"
        topic = "deploy pipeline" if i % 10 == 0 else f"topic{i}"
        note = Note(
            id=note_id,
            summary=f"Fact {i} about the {topic}",
            body=f"The {topic} runs on host{i}.",
            created_at=1_700_000_000_000 + i,
            updated_at=1_700_000_000_000 + i,
        )
        (directory / f"{note_id}.md").write_bytes(render_note(note))
        ids.append(note_id)
    return ids


@pytest.fixture
def events() -> list[str]:
    return []


@pytest.fixture
def embedder(events: list[str]) -> Iterator[GatedEmbedder]:
    gated = GatedEmbedder(events)
    yield gated
    gated.gate.set()  # never leave the worker waiting


@pytest.fixture
def served(project: Path, home: Path, embedder: GatedEmbedder) -> Iterator[Memory]:
    """A Memory with the gated embedder, vectors filled in the background."""
    (home / "config.toml").write_text('[embed]\nprovider = "local"\n')
    m = Memory.open(project, home=home, embedder=embedder)
    _plant(m.stores.directory("project"), NOTES)
    assert m.index.retriever.embed_in_background() is not None
    try:
        yield m
    finally:
        m.close()


def _filler(memory: Memory) -> VectorFiller[str]:
    filler = memory.index.retriever.embed_in_background()
    assert filler is not None
    return filler


def _search(memory: Memory, query: str = "deploy pipeline") -> tuple[list[str], SearchMethod]:
    with observing() as report:
        hits = memory.search(query, limit=20)
    assert report.method is not None
    return [h.note_id for h in hits], report.method


def test_a_first_search_answers_lexically_while_the_embedder_works(
    served: Memory, embedder: GatedEmbedder, events: list[str]
) -> None:
    before = len(served.warnings)
    with observing() as report:
        hits = served.search("deploy pipeline", limit=20)
    events.append("search answered")
    assert report.method is SearchMethod.LEXICAL
    assert report.vectors is not None and report.vectors[1] >= NOTES
    assert [h.match for h in hits] == ["words"] * len(hits)
    assert sorted(h.note_id for h in hits) == [f"fact-{i:03d}" for i in range(0, NOTES, 10)]
    said = served.warnings[before:]
    assert any(
        w.startswith(f"vectors are still being computed (0 of {report.vectors[1]} chunks)")
        for w in said
    ), said
    # The search answered while the embedder was still held at its gate.
    assert not embedder.gate.is_set()
    assert "embedded" not in events
    embedder.gate.set()
    assert _filler(served).wait_idle(PATIENCE)
    assert events.index("search answered") < events.index("embedded")

    ids, method = _search(served)
    assert method is SearchMethod.HYBRID
    assert len(ids) == len(set(ids)) == 20  # by meaning too: more than the 12 word matches
    assert set(ids) >= {f"fact-{i:03d}" for i in range(0, NOTES, 10)}


def test_once_the_vectors_are_in_nothing_is_lost_or_embedded_twice(
    served: Memory, embedder: GatedEmbedder
) -> None:
    _search(served)
    embedder.gate.set()
    assert _filler(served).wait_idle(PATIENCE)
    store = served.stores.store("project")
    index = served.index.retriever.index(store)
    done, total = index.vector_progress(embedder.info.id)
    assert done == total == index.counts()["chunks"] >= NOTES
    assert sorted(embedder.embedded.values()) == [1] * total  # each text once
    assert _search(served)[1] is SearchMethod.HYBRID
    assert served.search("host7", method="vector", limit=1)  # every note has its vector


def test_writes_never_wait_for_the_embedder(
    served: Memory, embedder: GatedEmbedder, events: list[str]
) -> None:
    _search(served)  # the first index; the filler is now held at the gate
    result = served.remember("Deploy pipeline rule: canary first", "Always canary.")
    events.append("written")
    assert result.created and not embedder.gate.is_set()
    ids, method = _search(served)
    assert method is SearchMethod.LEXICAL and result.note.id in ids
    embedder.gate.set()
    assert _filler(served).wait_idle(PATIENCE)
    assert events.index("written") < events.index("embedded")
    ids, method = _search(served)
    assert method is SearchMethod.HYBRID and result.note.id in ids


def test_a_failing_embedder_is_said_by_the_next_search(
    served: Memory, embedder: GatedEmbedder
) -> None:
    _search(served)
    embedder.fail = True
    embedder.gate.set()
    assert _filler(served).wait_idle(PATIENCE)
    before = len(served.warnings)
    ids, method = _search(served)
    assert method is SearchMethod.LEXICAL and ids  # still answered, by words
    said = served.warnings[before:]
    assert any("embedding failed" in w and "503" in w for w in said), said


def test_without_vectors_configured_there_is_no_background_work(project: Path, home: Path) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    with Memory.open(project, home=home) as m:
        assert m.index.retriever.embed_in_background() is None
        m.remember("Deploy pipeline fact", "body")
        ids, method = _search(m)
        assert method is SearchMethod.LEXICAL and ids
        assert not any("still being computed" in w for w in m.warnings)


def test_close_stops_the_worker(served: Memory, embedder: GatedEmbedder) -> None:
    _search(served)
    filler = _filler(served)
    embedder.gate.set()
    served.close()
    assert filler.thread is not None and not filler.thread.is_alive()


def test_a_short_lived_process_keeps_embedding_a_few_chunks_per_query(
    project: Path, home: Path, events: list[str]
) -> None:
    """Without the background filler (the CLI) a query embeds up to QUERY_EMBED_BUDGET
    chunks itself and ranks hybrid over the vectors there are (docs/retrieval.md)."""
    embedder = GatedEmbedder(events)
    embedder.gate.set()
    (home / "config.toml").write_text('[embed]\nprovider = "local"\n')
    with Memory.open(project, home=home, embedder=embedder) as m:
        _plant(m.stores.directory("project"), 10)
        ids, method = _search(m)
        assert method is SearchMethod.HYBRID and ids
        assert "embedded" in events


class _SlowEmbedder(GatedEmbedder):
    """A model that takes a quarter of a second per batch, whatever its size."""

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        threading.Event().wait(0.25)
        self.gate.set()
        return super().embed_documents(texts)


def test_a_query_of_a_short_lived_process_begins_no_batch_after_its_deadline(
    project: Path, home: Path, events: list[str]
) -> None:
    """With a slow model and a backlog, a query does not embed QUERY_EMBED_BUDGET chunks:
    it begins no new batch after QUERY_EMBED_SECONDS (here one batch takes longer than
    that), answers, and the rest waits for the next query."""
    from memdir.retrieve.retriever import QUERY_BATCH, QUERY_EMBED_BUDGET, QUERY_EMBED_SECONDS

    assert QUERY_EMBED_SECONDS < 0.25
    embedder = _SlowEmbedder(events)
    (home / "config.toml").write_text('[embed]\nprovider = "local"\n')
    with Memory.open(project, home=home, embedder=embedder) as m:
        _plant(m.stores.directory("project"), QUERY_EMBED_BUDGET)
        ids, _ = _search(m)
        assert ids
        assert events.count("embedded") == 1
        assert len(embedder.embedded) == QUERY_BATCH
        _search(m)
        assert len(embedder.embedded) == 2 * QUERY_BATCH  # the next query goes on
