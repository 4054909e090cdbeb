"""The rows one note file becomes in the index (notes, chunks, full text, tags, recall's
terms), written inside the caller's transaction; and their removal. Only
`memdir.index.db` calls these."""

from __future__ import annotations

import hashlib
import json
import sqlite3

from memdir.core import Note, parse_note
from memdir.errors import ParseError
from memdir.index.chunking import chunk_body
from memdir.index.rows import Stamp, embed_text
from memdir.index.stored import put_recall_terms
from memdir.index.tokenize import index_terms

__all__ = ["NOTE_COLUMNS", "delete_note", "index_note", "indexed_revision", "put_ctime", "sha"]

#: The notes table's columns in the order the INSERTs give them.
NOTE_COLUMNS = (
    "note_id, size, mtime_ns, ino, indexed_ns, state, rev, note_hash, summary, "
    "type, tags, supersedes, updated_at"
)


def put_ctime(conn: sqlite3.Connection, note_id: str, stamp: Stamp) -> None:
    """Store the ctime part of a file's stamp (kept beside the notes table, whose layout
    an older memdir still writes to)."""
    conn.execute(
        "INSERT OR REPLACE INTO note_ctimes(note_id, ctime_ns) VALUES (?,?)", (note_id, stamp[3])
    )


def indexed_revision(conn: sqlite3.Connection, note_id: str) -> str | None:
    """The revision (SHA-256 of the file bytes) the index holds of a note, None: none."""
    row = conn.execute("SELECT rev FROM notes WHERE note_id = ?", (note_id,)).fetchone()
    return None if row is None else str(row[0])


def sha(text: str) -> str:
    """The hex SHA-256 of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def index_note(
    conn: sqlite3.Connection, note_id: str, stamp: Stamp, data: bytes, rev: str, now: int
) -> Note | None:
    try:
        note = parse_note(data, file_id=note_id, mtime_ms=stamp[1] // 1_000_000)
        chunks = chunk_body(data)
    except ParseError:
        conn.execute(
            f"INSERT INTO notes({NOTE_COLUMNS}) VALUES (?,?,?,?,?,'bad',?,'','',NULL,'[]','[]',0)",
            (note_id, *stamp[:3], now, rev),
        )
        put_ctime(conn, note_id, stamp)
        return None
    state = "private" if note.private else "ok"
    conn.execute(
        f"INSERT INTO notes({NOTE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            note_id,
            *stamp[:3],
            now,
            state,
            rev,
            note.hash,
            note.summary,
            note.type.value if note.type else None,
            json.dumps(list(note.tags), ensure_ascii=False),
            json.dumps(list(note.supersedes)),
            note.updated_at,
        ),
    )
    put_ctime(conn, note_id, stamp)
    conn.executemany(
        "INSERT OR IGNORE INTO note_tags(note_id, tag) VALUES (?,?)",
        [(note_id, tag.casefold()) for tag in note.tags],
    )
    if note.private:
        return note
    put_recall_terms(conn, note, rev)
    summary_terms = " ".join(index_terms(note.summary))
    meta_terms = " ".join(index_terms(" ".join((*note.tags, note.type or ""))))
    # A note with an empty body still needs one row so its summary is searchable.
    spans = chunks or []
    rows = [
        (c.ord, c.hash, sha(embed_text(note.summary, c.text)), c.start, c.end, c.text)
        for c in spans
    ]
    if not rows:
        rows = [(0, sha(""), sha(note.summary), 0, 0, "")]
    for ordinal, chunk_hash, ehash, start, end, text in rows:
        cur = conn.execute(
            "INSERT INTO chunks(note_id, ord, chunk_hash, embed_hash, start, end_, text) "
            "VALUES (?,?,?,?,?,?,?)",
            (note_id, ordinal, chunk_hash, ehash, start, end, text),
        )
        conn.execute(
            "INSERT INTO fts(rowid, summary, body, meta) VALUES (?,?,?,?)",
            (cur.lastrowid, summary_terms, " ".join(index_terms(text)), meta_terms),
        )
    return note


def delete_note(conn: sqlite3.Connection, note_id: str) -> None:
    conn.execute(
        "DELETE FROM fts WHERE rowid IN (SELECT id FROM chunks WHERE note_id=?)", (note_id,)
    )
    conn.execute("DELETE FROM chunks WHERE note_id=?", (note_id,))
    conn.execute("DELETE FROM note_tags WHERE note_id=?", (note_id,))
    conn.execute("DELETE FROM recall_terms WHERE note_id=?", (note_id,))
    conn.execute("DELETE FROM note_ctimes WHERE note_id=?", (note_id,))
    conn.execute("DELETE FROM notes WHERE note_id=?", (note_id,))
