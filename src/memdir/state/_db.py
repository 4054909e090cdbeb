"""A thin connection adapter so the same repository SQL runs on SQLite and PostgreSQL.

The repository writes ``?`` placeholders and the common subset of both dialects; the
adapter translates the parameter style, opens serialised write transactions (SQLite's
``BEGIN IMMEDIATE``; on PostgreSQL a lock on the audit table, which every write appends
to) and turns driver errors into memdir's errors.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from memdir.errors import Busy, DiskError, MemdirError, disk_error
from memdir.files.atomic import ensure_private_dir

__all__ = ["Db", "PostgresDb", "SqliteDb", "open_sqlite", "sqlite_error"]

Row = tuple[Any, ...]

#: How long a writer waits for another process's write transaction before `Busy`.
BUSY_TIMEOUT_S = 10.0


class Db(Protocol):
    """What the repository needs of a database connection."""

    dialect: str

    def query(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        """Run one statement; return its rows (none for a statement without results)."""
        ...

    def write(self) -> contextlib.AbstractContextManager[None]:
        """A write transaction, serialised against every other writer; rolled back on error."""
        ...

    def close(self) -> None:
        """Close the connection."""
        ...


def sqlite_error(exc: sqlite3.Error, outcome: str = "nothing was written") -> MemdirError:
    """The memdir error for a SQLite failure: busy, the disk refusing, or anything else."""
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return Busy("another process is writing the state store; try again in a moment")
    disk = disk_error(exc, outcome)
    if disk is not None:
        return disk
    return MemdirError(f"the state store's database failed: {exc}; {outcome}")


class SqliteDb:
    """A SQLite connection in WAL mode, in autocommit mode with explicit transactions."""

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._depth = 0

    def query(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        try:
            return self.conn.execute(sql, tuple(params)).fetchall()
        except sqlite3.Error as exc:
            raise sqlite_error(exc) from None

    @contextlib.contextmanager
    def write(self) -> Iterator[None]:
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self.query("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            raise
        self._depth = 0
        try:
            self.conn.execute("COMMIT")
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            raise sqlite_error(exc) from None

    def close(self) -> None:
        self.conn.close()


def open_sqlite(path: Path) -> SqliteDb:
    """Open (creating, mode 0600) the SQLite file at `path` in WAL mode."""
    try:
        ensure_private_dir(path.parent)
        # Create the file 0600 before SQLite does, so it is never readable by others.
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
        path.chmod(0o600)
    except OSError as exc:
        raise (disk_error(exc, "nothing was written") or DiskError(str(exc))) from None
    try:
        conn = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.DatabaseError as exc:
        raise sqlite_error(exc) from None
    _private_sidecars(path)
    return SqliteDb(conn)


def _private_sidecars(path: Path) -> None:
    # The -wal and -shm files hold the same data as the database: keep them 0600 too.
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(OSError):
            Path(f"{path}{suffix}").chmod(0o600)


class PostgresDb:
    """A psycopg connection (autocommit, explicit transactions); ``?`` becomes ``%s``."""

    dialect = "postgresql"

    def __init__(self, dsn: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise MemdirError(
                "the PostgreSQL state store needs psycopg: pip install 'memdir[postgres]'"
            ) from None
        self._psycopg = psycopg
        try:
            self.conn: Any = psycopg.connect(dsn, autocommit=True)
        except psycopg.Error as exc:
            # The DSN may carry a password: say what failed, not the DSN.
            raise MemdirError(
                f"cannot connect to the PostgreSQL state store: {type(exc).__name__}"
            ) from None

    def query(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        try:
            cursor = self.conn.execute(sql.replace("?", "%s"), tuple(params))
            return list(cursor.fetchall()) if cursor.description else []
        except self._psycopg.Error as exc:
            raise MemdirError(f"the PostgreSQL state store failed: {type(exc).__name__}") from None

    @contextlib.contextmanager
    def write(self) -> Iterator[None]:
        try:
            with self.conn.transaction():
                self.query("LOCK TABLE state_audit IN SHARE ROW EXCLUSIVE MODE")
                yield
        except self._psycopg.Error as exc:
            raise MemdirError(f"the PostgreSQL state store failed: {type(exc).__name__}") from None

    def close(self) -> None:
        self.conn.close()
