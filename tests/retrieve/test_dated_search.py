"""Hybrid search through `Memory` reads the dates a question names and asks for:
a note written on the day the question names ranks first among notes alike, and a
"When …" question prefers the note that places the event in time."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from memdir import Memory
from memdir.core import Note, render_note
from memdir.embed import EmbedderInfo
from memdir.retrieve.ranking import DEFAULT_PARAMS


class Hashed:
    """A deterministic embedder: words hashed into 32 dimensions."""

    @property
    def info(self) -> EmbedderInfo:
        return EmbedderInfo("hashed-words", "1", 32)

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(32, dtype=np.float64)
        for word in re.findall(r"\w+", text.casefold()):
            v[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % 32] += 1.0
        v[0] += 1e-3
        out: np.ndarray = (v / np.linalg.norm(v)).astype(np.float32)
        return out

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts]).reshape(len(texts), 32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


def _ms(y: int, m: int, d: int) -> int:
    return int(datetime(y, m, d, 15, tzinfo=UTC).timestamp() * 1000)


def _write(directory: Path, note_id: str, body: str, at: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    note = Note(id=note_id, summary=body.split(".")[0], body=body, created_at=at, updated_at=at)
    (directory / f"{note_id}.md").write_bytes(render_note(note))


def _open(project: Path, home: Path) -> Memory:
    memory = Memory.open(project, home=home)
    memory.index.retriever.use_embedder(Hashed())
    memory.index.reindex()
    return memory


def test_the_steps_are_on_by_default() -> None:
    assert DEFAULT_PARAMS.date_weight > 0 and DEFAULT_PARAMS.when_weight > 0


def test_a_named_day_ranks_the_note_written_that_day_first(project: Path, home: Path) -> None:
    notes = project / "MEMORY"
    for i, day in enumerate((3, 9, 15, 21)):
        _write(
            notes, f"cook-{i}", "Nate: I cooked a coconut curry for friends.", _ms(2022, 11, day)
        )
    # Written that day, but hours after cook-1: not of its session (which would lend it
    # cook-1's match, `test_session_context`).
    _write(notes, "other", "Nate: The match went well.", _ms(2022, 11, 9) + 2 * 3_600_000)
    with _open(project, home) as memory:
        for day, expected in ((9, "cook-1"), (21, "cook-3"), (3, "cook-0")):
            hits = memory.search(f"What did Nate cook on {day} November, 2022?", method="hybrid")
            assert hits[0].note_id == expected
        # Without a date, equal notes keep their usual order (by id).
        hits = memory.search("What did Nate cook?", method="hybrid")
        assert [h.note_id for h in hits[:4]] == ["cook-0", "cook-1", "cook-2", "cook-3"]


def test_a_named_date_never_drops_a_better_match(project: Path, home: Path) -> None:
    notes = project / "MEMORY"
    _write(notes, "curry", "Nate: I cooked a coconut curry.", _ms(2022, 11, 3))
    _write(notes, "walk", "Nate: We walked along the river.", _ms(2022, 11, 9))
    with _open(project, home) as memory:
        hits = memory.search("What did Nate cook on 9 November, 2022?", method="hybrid")
        assert {h.note_id for h in hits} >= {"curry"}  # still found, out of the window


def test_a_when_question_prefers_the_note_that_places_it_in_time(project: Path, home: Path) -> None:
    notes = project / "MEMORY"
    at = _ms(2023, 5, 8)
    _write(notes, "a", "Caroline: The support group was so powerful.", at)
    _write(notes, "b", "Caroline: The support group was so powerful yesterday.", at)
    with _open(project, home) as memory:
        asked = memory.search("When did Caroline go to the support group?", method="hybrid")
        assert asked[0].note_id == "b"
        told = memory.search("Caroline support group", method="hybrid")
        assert told[0].note_id == "a"  # no time asked for: the shorter match stays first
