"""Recall's terms as the index stores them, read without opening the index for writing.

A short-lived process (a hook's ``memdir recall``) would otherwise read and tokenise
every note file to score one message. The index keeps each searchable note's recall
terms (`put_recall_terms`, written with the note's chunks); `read_stored` hands back
those of the notes whose files are as they were indexed — the same stamp, indexed
more than the racy window after the file last changed, exactly the test a refresh
applies — and names the others, which the caller reads from their files. So nothing
stale is ever scored, and nothing is written.

This module imports neither numpy nor the rest of the index, to keep that path light.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memdir.core import Note, Scope, parse_note
from memdir.errors import ParseError
from memdir.index import rows
from memdir.index.rows import Stamp, changed_ns
from memdir.index.schema import SCHEMA_VERSION, index_file
from memdir.index.tokenize import note_recall_terms

__all__ = [
    "StoredTerms",
    "fill_recall_terms",
    "put_recall_terms",
    "read_stored",
    "stored_terms",
]


@dataclass(frozen=True, slots=True)
class StoredTerms:
    """What recall needs of one note, as the index holds it."""

    scope: Scope | None
    note_id: str
    note_hash: str
    updated_at: int
    supersedes: tuple[str, ...]
    head: frozenset[str]
    body: frozenset[str]


def put_recall_terms(conn: sqlite3.Connection, note: Note, rev: str) -> None:
    """Store a searchable note's recall terms at revision `rev` (inside the caller's
    transaction)."""
    head, body = note_recall_terms(note.summary, note.tags, note.body)
    conn.execute(
        "INSERT OR REPLACE INTO recall_terms(note_id, rev, head, body) VALUES (?,?,?,?)",
        (note.id, rev, "\n".join(sorted(head)), "\n".join(sorted(body))),
    )


def fill_recall_terms(conn: sqlite3.Connection, note_id: str, data: bytes, rev: str) -> None:
    """Store the recall terms of a searchable note at `rev` (its file's bytes: `data`)
    unless they are there: an older memdir indexed it without them."""
    row = conn.execute(
        "SELECT state, (SELECT rev FROM recall_terms r WHERE r.note_id = n.note_id) "
        "FROM notes n WHERE note_id=?",
        (note_id,),
    ).fetchone()
    if row is None or row[0] != "ok" or row[1] == rev:
        return
    try:
        note = parse_note(data, file_id=note_id)
    except ParseError:
        return
    put_recall_terms(conn, note, rev)


def _terms(text: str) -> frozenset[str]:
    return frozenset(text.split("\n")) - {""}


def stored_terms(
    home: Path, state_key: str, scope: Scope, stamps: Mapping[str, Stamp]
) -> tuple[list[StoredTerms], set[str]] | None:
    """`read_stored` from the search index of the scope whose state key is `state_key`
    under `home`: what a first recall in a short-lived process reads instead of every
    note file (a file changed within the racy window counts as changed)."""
    return read_stored(index_file(home, state_key), scope, stamps, racy_ns=rows.RACY_NS)


def read_stored(
    path: Path, scope: Scope, stamps: Mapping[str, Stamp], *, racy_ns: int
) -> tuple[list[StoredTerms], set[str]] | None:
    """(the stored terms of the notes of `stamps` whose files are as indexed, the ids
    of the others: to be read from their files); None when the index cannot say (none
    yet, another schema, damaged, busy): read every file then.

    Private and unparseable notes as indexed are in neither list: they recall nothing.
    """
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.5)
    except sqlite3.Error:
        return None
    try:
        version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if version is None or version[0] != SCHEMA_VERSION:
            return None
        rows = conn.execute(
            "SELECT n.note_id, n.size, n.mtime_ns, n.ino, coalesce(c.ctime_ns, 0), "
            "n.indexed_ns, n.state, n.note_hash, n.updated_at, n.supersedes, r.head, r.body, "
            "r.rev = n.rev FROM notes n "
            "LEFT JOIN note_ctimes c ON c.note_id = n.note_id "
            "LEFT JOIN recall_terms r ON r.note_id = n.note_id"
        ).fetchall()
    except sqlite3.Error:
        return None
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.close()
    indexed = {row[0]: row for row in rows}
    stored: list[StoredTerms] = []
    others: set[str] = set()
    for note_id, stamp in stamps.items():
        row = indexed.get(note_id)
        if row is None or (row[1], row[2], row[3], row[4]) != stamp:
            others.add(note_id)
            continue
        if row[5] - changed_ns(stamp) < racy_ns:
            others.add(note_id)  # indexed too soon after a write to trust the stamp
            continue
        state = row[6]
        if state != "ok":
            continue  # private or unparseable, as the file still is
        if row[10] is None or not row[12]:
            others.add(note_id)  # none stored at this revision (an older memdir wrote it)
            continue
        try:
            supersedes = tuple(str(s) for s in json.loads(row[9]))
        except (ValueError, TypeError):
            others.add(note_id)
            continue
        stored.append(
            StoredTerms(
                scope, note_id, row[7], int(row[8]), supersedes, _terms(row[10]), _terms(row[11])
            )
        )
    return stored, others
