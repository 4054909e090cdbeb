"""The index database's schema, its version, and opening it (a mismatch or damage rebuilds it).

Opening, checking and (re)creating happen under an exclusive lock on a side file,
so two processes opening a missing, stale or damaged index at once neither delete
each other's fresh database nor create the tables twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from memdir.index.tokenize import TOKENIZER_VERSION

__all__ = ["SCHEMA_VERSION", "open_index_db"]

#: Bump on any change to the DDL or to what is stored: older databases are rebuilt.
#: The tokenizer's version and the Unicode tables it uses are part of it, so a
#: tokenizer change or a Python upgrade rebuilds the index instead of mixing terms.
SCHEMA_VERSION = f"4/tokenizer-{TOKENIZER_VERSION}/unicode-{unicodedata.unidata_version}"

_DDL = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE notes(
    note_id TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    indexed_ns INTEGER NOT NULL,
    state TEXT NOT NULL,            -- 'ok', 'private' or 'bad' (unparseable: kept to skip re-reads)
    rev TEXT NOT NULL,
    note_hash TEXT NOT NULL,
    summary TEXT NOT NULL,
    type TEXT,
    tags TEXT NOT NULL,             -- JSON list
    supersedes TEXT NOT NULL,       -- JSON list
    updated_at INTEGER NOT NULL
);
CREATE TABLE chunks(
    id INTEGER PRIMARY KEY,
    note_id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    chunk_hash TEXT NOT NULL,
    embed_hash TEXT NOT NULL,       -- SHA-256 of the text given to the embedder
    start INTEGER NOT NULL,
    end_ INTEGER NOT NULL,
    text TEXT NOT NULL
);
-- A note's tags, case-folded, so a search can require tags inside its SQL.
CREATE TABLE note_tags(
    note_id TEXT NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY(note_id, tag)
) WITHOUT ROWID;
CREATE INDEX note_tags_by_tag ON note_tags(tag);
CREATE INDEX chunks_by_note ON chunks(note_id);
CREATE INDEX chunks_by_embed ON chunks(embed_hash);
CREATE VIRTUAL TABLE fts USING fts5(summary, body, meta, tokenize='unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE fts_vocab USING fts5vocab(fts, 'row');
-- A rowid table: a 1.5 KB vector fits in its leaf page, where a WITHOUT ROWID (index)
-- page would spill each one to an overflow page and triple the size on disk.
CREATE TABLE vectors(
    embedder TEXT NOT NULL,
    embed_hash TEXT NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY(embedder, embed_hash)
);
"""


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        # A rebuild writes large transactions; do not keep a log that size afterwards.
        conn.execute("PRAGMA journal_size_limit=33554432")
        # Deleted rows are overwritten, so a forgotten note's text does not linger in
        # free pages.
        conn.execute("PRAGMA secure_delete=ON")
    except BaseException:
        conn.close()  # a damaged file: the caller deletes it, so leave no handle open
        raise
    return conn


def _version(conn: sqlite3.Connection) -> str | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.DatabaseError:
        return None
    return str(row[0]) if row else None


def _create(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _version(conn) != SCHEMA_VERSION:  # another process may have created it meanwhile
            for statement in _DDL.split(";\n"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
            )
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()


@contextlib.contextmanager
def _opening(path: Path) -> Iterator[None]:
    """Hold the exclusive lock that serialises opening this index across processes."""
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def open_index_db(path: Path) -> tuple[sqlite3.Connection, bool]:
    """Open (or create) the index at `path`; returns (connection, rebuilt).

    The index is derived, so a database of another schema version, or one SQLite
    cannot read, is deleted and created empty; the caller then refills it.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with _opening(path):
        conn: sqlite3.Connection | None = None
        try:
            conn = _connect(path)
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            version = _version(conn) if "meta" in tables else None
            stale = bool(tables) and version != SCHEMA_VERSION
        except sqlite3.DatabaseError:
            if conn is not None:
                conn.close()
            conn, version, stale = None, None, True
        if version == SCHEMA_VERSION and conn is not None:
            return conn, False
        if stale:
            # Another schema or a damaged file: it is derived, so it is rebuilt from the notes.
            if conn is not None:
                conn.close()
            _remove(path)
            conn = None
        if conn is None:
            conn = _connect(path)
        try:
            _create(conn)  # an empty file: create the tables
        except BaseException:
            conn.close()
            raise
        return conn, stale
