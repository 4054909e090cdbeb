"""The index database's schema, its version, and opening it (a mismatch or damage rebuilds it).

Opening, checking and (re)creating happen under an exclusive lock on a side file,
so two processes opening a missing, stale or damaged index at once neither delete
each other's fresh database nor create the tables twice. A database rebuilt because
it was damaged (not because its schema changed) says so in its `meta` table until the
next full reindex, so `doctor` reports it in a later process too.

Only damage deletes a file: an error that says the disk refused (full, read-only, no
access) is raised as it is, so a full disk never costs the index it still has. A
reader then opens a stand-in (`open_stand_in`): the existing file read-only when it is
sound, else an empty database in memory that the caller fills from the files.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import json
import os
import sqlite3
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memdir.files.atomic import open_lock_file
from memdir.index.tokenize import TOKENIZER_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "Opened",
    "damage_of",
    "damage_record",
    "index_file",
    "is_damage",
    "needs_care",
    "open_index",
    "open_index_db",
    "open_stand_in",
]

#: Bump on any change to the DDL or to what is stored: older databases are rebuilt.
#: The tokenizer's version and the Unicode tables it uses are part of it, so a
#: tokenizer change or a Python upgrade rebuilds the index instead of mixing terms.
_SUFFIX = f"/tokenizer-{TOKENIZER_VERSION}/unicode-{unicodedata.unidata_version}"
SCHEMA_VERSION = f"4{_SUFFIX}"
#: Tables added within this version: created when missing, never a reason to rebuild.
#: A memdir that predates them still reads and writes the rest as it did (a server
#: started before an upgrade keeps working); what it leaves out of them — a note's
#: ctime, its recall terms at its revision — reads as unknown and is filled in by the
#: next refresh that reads the file.
_ADDED = {
    "note_ctimes": (
        "CREATE TABLE IF NOT EXISTS note_ctimes("
        "note_id TEXT PRIMARY KEY, ctime_ns INTEGER NOT NULL) WITHOUT ROWID"
    ),
    "recall_terms": (
        "CREATE TABLE IF NOT EXISTS recall_terms("
        "note_id TEXT PRIMARY KEY, rev TEXT NOT NULL, head TEXT NOT NULL, body TEXT NOT NULL)"
    ),
}

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
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return str(row[0]) if row else None


def _short(reason: object) -> str:
    text = " ".join(str(reason).replace("*** in database main ***", "").split())
    return text if len(text) <= 160 else text[:159] + "…"


def damage_of(conn: sqlite3.Connection, *, full: bool = False) -> str | None:
    """What SQLite's own check finds wrong with the database (None: nothing).

    The quick check reads every page of every table but `vectors` (the largest, and
    read only by vector search, whose first query meets any damage there anyway):
    about 9 ms for 10,000 notes, cheap enough for every open. `full` runs
    `integrity_check` over everything and FTS5's check of the full-text index
    against its rows (doctor --deep).
    """
    try:
        if full:
            checks = ["PRAGMA integrity_check(1)"]
        else:
            tables = conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name != 'vectors' "
                "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name"
            ).fetchall()
            checks = [f"PRAGMA quick_check('{name}')" for (name,) in tables]
        for check in checks:
            found = [str(r[0]) for r in conn.execute(check)]
            if found != ["ok"]:
                return _short(found[0] if found else "the check returned nothing")
        if full:
            _fts_check(conn)
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise
        return _short(exc)
    return None


def _fts_check(conn: sqlite3.Connection) -> None:
    """FTS5's check of the full-text index against its rows (raises what it finds)."""
    try:
        conn.execute("INSERT INTO fts(fts) VALUES ('integrity-check')")
    except sqlite3.OperationalError as exc:
        # Asked as an INSERT, so SQLite refuses it on a read-only stand-in: not checked.
        if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF != sqlite3.SQLITE_READONLY:
            raise


def is_damage(exc: sqlite3.DatabaseError) -> bool:
    """True when `exc` says the database file is damaged (not busy, not a bad statement)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:  # raised by the sqlite3 module itself, not by SQLite
        return type(exc) is sqlite3.DatabaseError
    return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def _create(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        # Another process may have created it meanwhile.
        if "meta" not in tables or _version(conn) != SCHEMA_VERSION:
            for statement in _DDL.split(";\n"):
                if statement.strip():
                    conn.execute(statement)
            for ddl in _ADDED.values():
                conn.execute(ddl)
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
            )
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise


def _add_missing(conn: sqlite3.Connection) -> None:
    """Create the tables of `_ADDED` a database of this version lacks (no write when it
    has them all)."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    missing = [ddl for name, ddl in _ADDED.items() if name not in tables]
    if not missing:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for ddl in missing:
            conn.execute(ddl)
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()


def remove_index(path: Path) -> None:
    """Remove the index at `path` with its journal files and approximate graphs (an
    encrypted scope's plaintext must not stay on disk; it is rebuilt in memory)."""
    _remove(path)
    with contextlib.suppress(OSError):
        for extra in path.parent.glob(f"{glob.escape(path.name)}.ann-*"):
            with contextlib.suppress(FileNotFoundError):
                extra.unlink()


@contextlib.contextmanager
def _opening(path: Path, *, required: bool = True) -> Iterator[None]:
    """Hold the exclusive lock that serialises opening this index across processes
    (unless not `required` and the disk refuses the lock file: nobody can write then)."""
    try:
        fd = open_lock_file(f"{path}.lock")
    except OSError:
        if required:
            raise
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


@dataclass(frozen=True, slots=True)
class Opened:
    """An open index database and how opening it went."""

    conn: sqlite3.Connection
    #: An existing file was replaced by an empty database (another schema, or damage).
    rebuilt: bool
    #: What was wrong with the file replaced because it was damaged (None: it was not).
    damage: str | None
    #: The inode of the file opened: a later repair replaces it only if it is still there.
    inode: int
    #: How this database stands in for one the disk would not let be written: "read-only"
    #: (the existing file, opened read-only) or "memory" (empty, in memory); None: it does not.
    stand_in: str | None = None


def _inode(path: Path) -> int:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return -1


def _record(conn: sqlite3.Connection, damage: str) -> None:
    """Remember in the new database that the old one was damaged (doctor reports it)."""
    doc = json.dumps({"at": int(time.time() * 1000), "reason": damage}, ensure_ascii=False)
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('damaged', ?)", (doc,))


def damage_record(conn: sqlite3.Connection) -> str | None:
    """When and why this database replaced a damaged one, for people (None: it did not)."""
    row = conn.execute("SELECT value FROM meta WHERE key='damaged'").fetchone()
    if row is None:
        return None
    try:
        doc = json.loads(row[0])
        at = datetime.fromtimestamp(int(doc["at"]) / 1000, UTC)
        return f"{at:%Y-%m-%d %H:%M} UTC ({doc['reason']})"
    except (ValueError, KeyError, TypeError, OverflowError, OSError):
        return "an unknown date"


def open_index(path: Path, *, discard: tuple[int, str] | None = None) -> Opened:
    """Open (or create) the index at `path`, checking it.

    The index is derived, so a database of another schema version, one SQLite cannot
    read, or one `PRAGMA quick_check` finds damaged is deleted and created empty; the
    caller then refills it. `discard` = (inode, what was wrong): a query found the
    database of that inode damaged, so it is replaced — unless another process has
    replaced it already, in which case its new database is opened.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with _opening(path):
        damage: str | None = None
        if discard is not None and _inode(path) == discard[0]:
            _remove(path)
            damage = discard[1]
        conn: sqlite3.Connection | None = None
        stale, version = False, None
        try:
            conn = _connect(path)
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            version = _version(conn) if "meta" in tables else None
            stale = bool(tables) and version != SCHEMA_VERSION
            if version == SCHEMA_VERSION:
                damage = damage_of(conn)
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):  # the disk refused (full, read-only…): keep the file
                if conn is not None:
                    conn.close()
                raise
            damage = _short(exc)
        if damage is None and not stale and conn is not None:
            try:
                if version != SCHEMA_VERSION:
                    _create(conn)  # an empty file: create the tables
                else:
                    _add_missing(conn)
            except BaseException:
                conn.close()
                raise
            return Opened(conn, False, None, _inode(path))
        # Another schema or a damaged file: it is derived, so it is rebuilt from the notes.
        if conn is not None:
            conn.close()
        _remove(path)
        conn = _connect(path)
        try:
            _create(conn)
            if damage is not None:
                _record(conn, damage)
        except BaseException:
            conn.close()
            raise
        return Opened(conn, True, damage, _inode(path))


def index_file(home: Path, state_key: str) -> Path:
    """Where the index of the scope whose machine-local state is `state_key` lives."""
    return home / "index" / f"{state_key}.sqlite3"


def needs_care(path: Path) -> bool:
    """True when the index at `path` is damaged now or replaced a damaged one earlier
    (doctor then asks the retriever, which repairs and words it); changes nothing.

    Cheap, and light to import (no numpy): plain `doctor` calls it for every scope.
    """
    if not path.exists():
        return False
    with _opening(path, required=False):
        try:
            conn = _connect(path)
        except sqlite3.DatabaseError as exc:
            return is_damage(exc)  # else the disk refused: nothing found damaged
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if "meta" not in tables or _version(conn) != SCHEMA_VERSION:
                return False  # another schema (or empty): rebuilt on open, nothing to report
            return damage_of(conn) is not None or damage_record(conn) is not None
        except sqlite3.DatabaseError as exc:
            return is_damage(exc)
        finally:
            conn.close()


def open_index_db(path: Path) -> tuple[sqlite3.Connection, bool]:
    """Open (or create) the index at `path`; returns (connection, rebuilt). See `open_index`."""
    opened = open_index(path)
    return opened.conn, opened.rebuilt


def _read_only(path: Path) -> sqlite3.Connection | None:
    """The index at `path` opened read-only, when it exists, is of this schema and is sound.

    A WAL database opened read-only still needs its shared-memory file, which a full or
    read-only disk may not let SQLite create; then it is opened immutable (no other
    process can be writing to such a disk either).
    """
    try:
        if not path.is_file():
            return None
    except OSError:  # not even its folder can be read
        return None
    uri = path.absolute().as_uri()
    for options in ("?mode=ro", "?mode=ro&immutable=1"):
        try:
            conn = sqlite3.connect(
                uri + options, uri=True, timeout=30, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error:
            continue
        try:
            conn.execute("PRAGMA busy_timeout=30000")
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if "meta" in tables and _version(conn) == SCHEMA_VERSION and damage_of(conn) is None:
                return conn
        except sqlite3.DatabaseError as exc:
            conn.close()
            if is_damage(exc):
                return None
            continue
        conn.close()
        return None  # another schema, or damaged: of no use until it can be rebuilt
    return None


def open_memory(image: bytes | None = None) -> Opened:
    """An index held in memory only (an encrypted store's: nothing of it touches the disk,
    temp tables included): empty, or from the `image` an earlier one serialized. An image
    of another schema or a damaged one is dropped for an empty index (rebuilt: True)."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA temp_store=MEMORY")
    if image is not None:
        try:
            conn.deserialize(image)
            conn.execute("PRAGMA temp_store=MEMORY")
            if _version(conn) == SCHEMA_VERSION and damage_of(conn) is None:
                _add_missing(conn)
                return Opened(conn, False, None, -1)
        except sqlite3.DatabaseError:
            pass
        conn.close()
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA temp_store=MEMORY")
        _create(conn)
        return Opened(conn, True, None, -1)
    _create(conn)
    return Opened(conn, False, None, -1)


def open_stand_in(path: Path, *, in_memory: bool = False) -> Opened:
    """A stand-in for the index at `path` when the disk refuses to write it: the file
    opened read-only if it is sound and of this schema (unless `in_memory`), else an
    empty database in memory that the caller fills from the files. Writes to a
    read-only stand-in fail."""
    conn = None if in_memory else _read_only(path)
    if conn is not None:
        return Opened(conn, False, None, _inode(path), "read-only")
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    _create(conn)
    return Opened(conn, False, None, -1, "memory")
