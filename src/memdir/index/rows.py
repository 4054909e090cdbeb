"""What the search index takes and gives, as plain values: the note source it reads,
the stats of a refresh, a chunk row, and the text a chunk is embedded as. The SQL that
makes them lives in `memdir.index.db` alone."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from memdir.core import Note, NoteType

__all__ = [
    "RACY_NS",
    "ChunkRow",
    "KnownStamps",
    "NoteSource",
    "RefreshStats",
    "Stamp",
    "changed_ns",
    "embed_text",
]

#: (size, mtime_ns, inode, ctime_ns) of a note file. The inode-change time is part of it
#: because no user can set it: an edit that puts the old size and mtime back (``touch -r``,
#: ``os.utime``, a tool preserving times) still changes it.
Stamp = tuple[int, int, int, int]


#: Coarsest file system timestamp granularity allowed for (FAT: 2 s): a file indexed
#: sooner than this after it changed is read again, not trusted by its stamp.
RACY_NS = 2_000_000_000


def changed_ns(stamp: Stamp) -> int:
    """When the file last changed, as far as its stamp tells (mtime or ctime, the later)."""
    return max(stamp[1], stamp[3])


class NoteSource(Protocol):
    """What the index needs from a note directory (the store provides it)."""

    def stamps(self) -> tuple[dict[str, Stamp], int]: ...

    def stamps_of(self, note_ids: Iterable[str]) -> dict[str, Stamp]: ...

    def read_bytes(self, note_id: str) -> bytes | None: ...


@dataclass(frozen=True, slots=True)
class RefreshStats:
    """What a refresh did."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    over_limit: int = 0
    #: (note id, file bytes, parsed note) of every note read because it changed
    #: (empty when the caller took them one batch at a time through `observe`).
    read: tuple[tuple[str, bytes, Note], ...] = field(default=(), repr=False)
    #: Notes whose files could not be read: left out of the index (and so of results).
    unreadable: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """One indexed chunk with what search results report about it."""

    chunk_id: int
    note_id: str
    ord: int
    chunk_hash: str
    start: int
    end: int
    text: str
    rev: str
    summary: str
    updated_at: int
    #: The note's type and tags (as written), so a hit can show them without a file read.
    type: NoteType | None = None
    tags: tuple[str, ...] = ()


@dataclass
class KnownStamps:
    """What is indexed, kept in memory: each note's stamp (one tuple a note: at 100,000
    notes this is the largest thing a refresh keeps), and the notes indexed too soon
    after a write to trust their stamps alone (every refresh reads those again)."""

    stamps: dict[str, Stamp]
    racy: set[str]

    def put(self, note_id: str, stamp: Stamp, indexed_ns: int) -> None:
        self.stamps[note_id] = stamp
        if indexed_ns - changed_ns(stamp) < RACY_NS:
            self.racy.add(note_id)
        else:
            self.racy.discard(note_id)

    def drop(self, note_id: str) -> None:
        self.stamps.pop(note_id, None)
        self.racy.discard(note_id)


def embed_text(summary: str, text: str) -> str:
    """What the embedder sees for a chunk: the note's summary gives every chunk its topic,
    unless the chunk already holds it (repeating it skews the vector toward it)."""
    return text if summary in text else f"{summary}\n{text}"
