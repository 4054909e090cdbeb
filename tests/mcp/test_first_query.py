"""A first `memory_search` on an unindexed project never waits for the embedder: the MCP
server fills vectors in the background, the search answers from the lexical index with
`method: lexical` and a warning saying how far the vectors are, and is hybrid once they
are in (in-process server, a gated fake embedder; ordering by events, not clocks)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import numpy.typing as npt

from mcp import Client
from memdir import Memory
from memdir.core import Note, render_note
from memdir.embed import EmbedderInfo
from memdir.mcp.access import Gate
from memdir.mcp.server import build_server

NOTES = 60


class Gated:
    """One dimension per word of a tiny vocabulary; document batches wait for `gate`."""

    info = EmbedderInfo("gated", "1", 4)
    words = ("staging", "deploy", "host", "other")

    def __init__(self, events: list[str]) -> None:
        self.gate = threading.Event()
        self.events = events

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        v = np.array([1.0 + text.count(w) for w in self.words], dtype=np.float32)
        return v / np.linalg.norm(v)

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        assert self.gate.wait(60), "the gate was never opened"
        self.events.append("embedded")
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._vector(text)


def test_the_first_search_is_lexical_and_a_later_one_hybrid(
    env: tuple[Path, Path], tmp_path: Path
) -> None:
    project, home = env
    (home / "config.toml").write_text('[embed]\nprovider = "local"\n')
    events: list[str] = []
    embedder = Gated(events)
    memory = Memory.open(project, home=home, embedder=embedder)
    directory = memory.stores.directory("project")
    directory.mkdir(parents=True, exist_ok=True)
    for i in range(NOTES):
        note = Note(
            id=f"fact-{i:03d}",
            summary=f"Fact {i} about host{i}",
            body="staging deploy" if i % 6 == 0 else "other",
            created_at=1_700_000_000_000 + i,
            updated_at=1_700_000_000_000 + i,
        )
        (directory / f"{note.id}.md").write_bytes(render_note(note))
    filler = memory.index.retriever.embed_in_background()  # as `serve` does
    assert filler is not None
    server = build_server(memory, Gate("read_write"))
    outs: list[dict[str, Any]] = []

    async def search() -> None:
        async with Client(server) as client:
            result = await client.call_tool("memory_search", {"query": "staging deploy"})
            assert not result.is_error and result.structured_content is not None
            outs.append(result.structured_content)

    try:
        anyio.run(search)
        events.append("first search answered")
        embedder.gate.set()
        assert filler.wait_idle(60)
        anyio.run(search)
    finally:
        embedder.gate.set()
        memory.close()
    first, later = outs
    assert events.index("first search answered") < events.index("embedded")
    assert first["method"] == "lexical"
    assert [h["match"] for h in first["hits"]] == ["words"] * (NOTES // 6)
    assert any(w.startswith("vectors are still being computed (0 of ") for w in first["warnings"])
    assert later["method"] == "hybrid" and later["warnings"] == []
    assert {h["id"] for h in first["hits"]} <= {h["id"] for h in later["hits"]}
    assert any(h["match"] == "both" for h in later["hits"])
