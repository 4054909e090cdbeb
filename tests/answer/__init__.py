"""Grounded-answer tests: chunks made by hand and the model's answers written as JSON."""

from __future__ import annotations

import json
from typing import Any

from memdir.core import Scope
from memdir.retrieve.hits import Chunk


def chunk(note_id: str, text: str, *, revision: str = "a" * 64, start: int = 100) -> Chunk:
    """A retrieved chunk of note `note_id` at bytes `start`.. of its file."""
    end = start + len(text.encode("utf-8"))
    return Chunk(
        note_id=note_id,
        revision=revision,
        chunk_hash="c" * 64,
        start=start,
        end=end,
        score=0.5,
        source=f"project:{note_id}.md",
        scope=Scope.PROJECT,
        path=f"{note_id}.md",
        text=text,
        summary=text[:40],
    )


def cite(c: Chunk, **changes: Any) -> dict[str, Any]:
    """A citation of the whole of chunk `c`, with `changes` applied."""
    return {"note_id": c.note_id, "revision": c.revision, "start": c.start, "end": c.end, **changes}


def answered(*claims: tuple[str, list[dict[str, Any]]], **extra: Any) -> str:
    """The JSON text of an "answered" reply making `claims` (text, citations)."""
    items = [{"text": text, "citations": cites} for text, cites in claims]
    return json.dumps({"status": "answered", "claims": items, **extra})
