"""The SQL that reads chunk vectors for vector search (`memdir.index.db.SearchIndex` runs
it on its connection, under its lock)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence

__all__ = ["by_id", "searchable"]

_SEARCHABLE = (
    "FROM chunks c JOIN vectors v ON v.embed_hash=c.embed_hash "
    "JOIN notes n ON n.note_id=c.note_id WHERE v.embedder=? AND n.state='ok'"
)
#: Chunks first (by id), then each one's note and vector by key: without the CROSS JOINs
#: SQLite may start from the vectors table and walk every vector of the embedder.
_BY_ID = (
    "SELECT c.id, v.vec FROM chunks c CROSS JOIN notes n ON n.note_id=c.note_id "
    "CROSS JOIN vectors v ON v.embedder=? AND v.embed_hash=c.embed_hash "
    "WHERE n.state='ok' AND c.id IN ({})"
)
#: Ids asked for in one statement (well under SQLite's limit on parameters).
_PART = 500


def searchable(conn: sqlite3.Connection, embedder: str) -> tuple[int, Iterator[tuple[int, bytes]]]:
    """How many searchable chunks have a vector of `embedder`, and (chunk id, vector bytes)
    for each, in (note id, chunk ordinal) order."""
    count = int(conn.execute(f"SELECT count(*) {_SEARCHABLE}", (embedder,)).fetchone()[0])
    rows = conn.execute(f"SELECT c.id, v.vec {_SEARCHABLE} ORDER BY c.note_id, c.ord", (embedder,))
    return count, rows


def by_id(conn: sqlite3.Connection, embedder: str, ids: Sequence[int]) -> dict[int, bytes]:
    """The `embedder` vector bytes of the searchable chunks among `ids`, by chunk id."""
    found: dict[int, bytes] = {}
    for start in range(0, len(ids), _PART):
        part = ids[start : start + _PART]
        found.update(conn.execute(_BY_ID.format(",".join("?" * len(part))), (embedder, *part)))
    return found
