"""What a search returns: hits (one per note), chunks (with byte offsets) and reindex figures."""

from __future__ import annotations

from dataclasses import dataclass

from memdir.core import NoteType, Scope

__all__ = ["Chunk", "Hit", "ReindexStats"]


@dataclass(frozen=True, slots=True)
class Hit:
    """A note found by `search`: its best chunk decides the score and the snippet."""

    note_id: str
    score: float
    snippet: str
    scope: Scope
    path: str
    summary: str
    revision: str
    superseded_by: str | None = None
    #: How the note matched: "words" (full-text), "meaning" (vectors) or "both".
    match: str = "words"
    #: True when the result as a whole is below the relevance floor: the store likely
    #: holds no good match (`memdir.retrieve.hybrid.no_good_match`); every hit says so.
    weak: bool = False
    type: NoteType | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Chunk:
    """A chunk found by `retrieve`, with where it lives in its file."""

    note_id: str
    revision: str
    chunk_hash: str
    start: int
    end: int
    score: float
    source: str
    scope: Scope
    path: str
    text: str
    summary: str
    match: str = "words"
    #: True when the result as a whole is below the relevance floor (as `Hit.weak`).
    weak: bool = False


@dataclass(frozen=True, slots=True)
class ReindexStats:
    """What `reindex` did."""

    notes: int
    chunks: int
    embedded: int
    embedder: str | None
    seconds: float
