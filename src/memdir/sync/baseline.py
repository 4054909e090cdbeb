"""The client's sync state of one scope: baseline copies, last-seen manifest, binding, conflicts.

One SQLite file per scope in `$MEMDIR_HOME/memory-sync/` (machine-local, never synced):

- `base`: for each note, the exact bytes both sides agreed on at the last sync — the
  common ancestor of the three-way merge (§7.4);
- `remote`: the server's manifest as of `meta.version` (live entries and tombstones),
  so a pass that finds the manifest unchanged needs no listing from the server;
- `conflicts`: notes held back, with the server's version as it was, for the conflict view;
- `meta`: the manifest version last seen and the account + origin the scope is bound to.

Every pass commits its updates in one transaction, so a crash leaves the previous state.

For an end-to-end encrypted scope (§8.2, `memdir.sync.wire`) two revisions of a note
differ: the plaintext's (`base.rev`, what the local store compares) and the sealed wire
text's on the server (`base.server_rev`; NULL: the same as `rev`, a plain scope or a
baseline written before encryption). `remote` and `conflicts.server_rev` hold server
revisions. The copies of note text (`base.data`, `conflicts.server_data`) are sealed with
kind STATE by the `sealing` a caller attaches while the directory is encrypted, and
opened on read; plain copies written before are read as they are. The `server_rev`
column is added to a baseline file that lacks it (no resync: NULL means plain).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from memdir.errors import IntegrityError, Remedy
from memdir.files.atomic import ensure_private_dir

__all__ = ["BaseCopy", "Baseline", "Binding", "HeldConflict", "RemoteEntry", "Sealing"]

_SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS base (
    id TEXT PRIMARY KEY, rev TEXT NOT NULL, data BLOB NOT NULL,
    server_rev TEXT  -- NULL: the server's revision is `rev` (a plain text)
);
CREATE TABLE IF NOT EXISTS remote (
    id TEXT PRIMARY KEY, rev TEXT NOT NULL, deleted_at INTEGER  -- NULL: live
);
CREATE TABLE IF NOT EXISTS conflicts (
    id TEXT PRIMARY KEY,
    server_rev TEXT,            -- NULL: deleted on the server
    server_data BLOB,
    local_rev TEXT,             -- NULL: deleted here
    reasons TEXT NOT NULL,      -- JSON list of strings
    found_at INTEGER NOT NULL   -- Unix ms
);
"""


class Sealing(Protocol):
    """Seals the note text copies of an encrypted scope's sync state (`wire.StateSeal`)."""

    def seal(self, context: str, data: bytes) -> bytes:
        """The bytes to store for `data` (sealed while the scope is encrypted)."""
        ...

    def open(self, context: str, data: bytes) -> bytes:
        """The plaintext of stored bytes (plain ones as they are)."""
        ...


@dataclass(frozen=True, slots=True)
class BaseCopy:
    """A note as both sides had it at the last sync."""

    rev: str
    data: bytes
    #: The server's revision of it (differs from `rev` for a sealed wire text).
    server_rev: str | None = None


@dataclass(frozen=True, slots=True)
class RemoteEntry:
    """One entry of the last-seen manifest: a live revision or a tombstone."""

    rev: str
    deleted_at: int | None = None

    @property
    def live(self) -> bool:
        """True for a live note, False for a tombstone."""
        return self.deleted_at is None


@dataclass(frozen=True, slots=True)
class Binding:
    """The account and server origin a scope synced with first (§7.1)."""

    user: str
    origin: str
    #: The team whose shared notes these are (§12), None for the account's own.
    team: str | None = None

    def describe(self) -> str:
        """`user at origin`, and `for team T` for a team's notes."""
        return f"{self.user} at {self.origin}" + (f" for team {self.team}" if self.team else "")


@dataclass(frozen=True, slots=True)
class HeldConflict:
    """A note held back by a conflict, with the server's version as last seen."""

    id: str
    server_rev: str | None
    server_data: bytes | None
    local_rev: str | None
    reasons: tuple[str, ...]
    found_at: int


class Baseline:
    """The sync state of one scope, in its own SQLite file."""

    def __init__(self, path: Path) -> None:
        ensure_private_dir(path.parent)
        self.path = path
        # Opened in one thread and used in another by hosts that run each call in a worker
        # thread, one call at a time (the MCP server); never used by two at once.
        self._db = sqlite3.connect(
            path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        # Forgetting a note must not leave its text in free pages (forget --purge).
        self._db.execute("PRAGMA secure_delete=ON")
        #: Seals the text copies while the scope is encrypted (None: stored as they are).
        self.sealing: Sealing | None = None
        with self.transaction():
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            columns = {str(r[1]) for r in self._db.execute("PRAGMA table_info(base)")}
            if "server_rev" not in columns:  # a baseline of before end-to-end encryption
                self._db.execute("ALTER TABLE base ADD COLUMN server_rev TEXT")
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self._set("schema", str(_SCHEMA_VERSION))
            elif int(row[0]) > _SCHEMA_VERSION:
                raise IntegrityError(
                    f"{path} was written by a newer memdir (sync state schema {row[0]}); "
                    "this scope cannot sync until memdir is upgraded",
                    hint=Remedy.UPGRADE,
                )

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def reset(self) -> None:
        """Forget everything (binding, copies, manifest, conflicts): the next pass is a
        first sync. Done in place, so another connection to this file sees it too."""
        with self.transaction():
            for table in ("base", "remote", "conflicts"):
                self._db.execute(f"DELETE FROM {table}")
            self._db.execute("DELETE FROM meta WHERE key <> 'schema'")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic unit of updates (nests: inner blocks join the outer one)."""
        if self._db.in_transaction:
            yield
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- meta --------------------------------------------------------------------

    def _get(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set(self, key: str, value: str | None) -> None:
        if value is None:
            self._db.execute("DELETE FROM meta WHERE key=?", (key,))
        else:
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    @property
    def version(self) -> int | None:
        """The manifest version `remote` describes (None: never synced)."""
        raw = self._get("version")
        return None if raw is None else int(raw)

    def set_version(self, version: int | None) -> None:
        """Record the manifest version `remote` now describes (None: unknown)."""
        self._set("version", None if version is None else str(version))

    @property
    def binding(self) -> Binding | None:
        """The account and origin this scope is bound to, None before its first sync."""
        raw = self._get("binding")
        if raw is None:
            return None
        doc = json.loads(raw)
        team = doc.get("team")
        return Binding(
            str(doc["user"]), str(doc["origin"]), team if isinstance(team, str) else None
        )

    def bind(self, binding: Binding) -> None:
        """Bind the scope (done once, at its first successful sync)."""
        doc = {"user": binding.user, "origin": binding.origin}
        if binding.team is not None:
            doc["team"] = binding.team
        self._set("binding", json.dumps(doc))

    @property
    def last_sync(self) -> int | None:
        """Unix ms of the last completed pass."""
        raw = self._get("last_sync")
        return None if raw is None else int(raw)

    def mark_synced(self, when_ms: int) -> None:
        """Record a completed pass."""
        self._set("last_sync", str(when_ms))

    # -- baseline copies ------------------------------------------------------------

    def bases(self) -> dict[str, str]:
        """Revision of every baseline copy, by note id."""
        return {str(i): str(r) for i, r in self._db.execute("SELECT id, rev FROM base")}

    def server_revs(self) -> dict[str, str]:
        """The server's revision of every baseline copy, by note id."""
        rows = self._db.execute("SELECT id, coalesce(server_rev, rev) FROM base")
        return {str(i): str(r) for i, r in rows}

    def has_plain_wire(self) -> bool:
        """Whether a baseline copy was synced as a plain text (the server may hold it so)."""
        row = self._db.execute(
            "SELECT 1 FROM base WHERE server_rev IS NULL AND length(data) > 0 LIMIT 1"
        ).fetchone()
        return row is not None

    def _seal(self, context: str, data: bytes) -> bytes:
        return data if self.sealing is None else self.sealing.seal(context, data)

    def _open(self, context: str, data: bytes) -> bytes:
        if self.sealing is None:
            return data
        return self.sealing.open(context, data)

    def _base_context(self, note_id: str) -> str:
        return f"base/{self.path.stem}/{note_id}"

    def _conflict_context(self, note_id: str) -> str:
        return f"conflict/{self.path.stem}/{note_id}"

    def base(self, note_id: str) -> BaseCopy | None:
        """The baseline copy of a note."""
        row = self._db.execute(
            "SELECT rev, data, server_rev FROM base WHERE id=?", (note_id,)
        ).fetchone()
        if row is None:
            return None
        data = self._open(self._base_context(note_id), bytes(row[1]))
        return BaseCopy(str(row[0]), data, None if row[2] is None else str(row[2]))

    def text_of(self, rev: str) -> bytes | None:
        """The bytes of a revision held as any note's baseline copy."""
        row = self._db.execute(
            "SELECT id, data FROM base WHERE rev=? AND length(data) > 0 LIMIT 1", (rev,)
        ).fetchone()
        return None if row is None else self._open(self._base_context(str(row[0])), bytes(row[1]))

    def set_base(
        self, note_id: str, rev: str, data: bytes, *, server_rev: str | None = None
    ) -> None:
        """Record the version both sides now agree on (`server_rev`: the server's revision
        of it when that is not `rev`, a sealed wire text)."""
        stored = self._seal(self._base_context(note_id), data)
        wire = None if server_rev == rev else server_rev
        self._db.execute(
            "INSERT OR REPLACE INTO base (id, rev, data, server_rev) VALUES (?, ?, ?, ?)",
            (note_id, rev, stored, wire),
        )

    def drop_base(self, note_id: str) -> None:
        """Forget a note's baseline (deleted on both sides, or purged)."""
        self._db.execute("DELETE FROM base WHERE id=?", (note_id,))

    # -- last-seen manifest --------------------------------------------------------

    def remote(self) -> dict[str, RemoteEntry]:
        """The last-seen manifest, by note id."""
        rows = self._db.execute("SELECT id, rev, deleted_at FROM remote")
        return {str(i): RemoteEntry(str(r), None if d is None else int(d)) for i, r, d in rows}

    def replace_remote(self, entries: dict[str, RemoteEntry]) -> None:
        """Replace the whole last-seen manifest."""
        self._db.execute("DELETE FROM remote")
        self._db.executemany(
            "INSERT INTO remote (id, rev, deleted_at) VALUES (?, ?, ?)",
            [(i, e.rev, e.deleted_at) for i, e in entries.items()],
        )

    def set_remote(self, note_id: str, entry: RemoteEntry | None) -> None:
        """Update one entry of the last-seen manifest (None: gone)."""
        if entry is None:
            self._db.execute("DELETE FROM remote WHERE id=?", (note_id,))
        else:
            self._db.execute(
                "INSERT OR REPLACE INTO remote (id, rev, deleted_at) VALUES (?, ?, ?)",
                (note_id, entry.rev, entry.deleted_at),
            )

    # -- conflicts -----------------------------------------------------------------

    def conflicts(self, note_id: str | None = None) -> list[HeldConflict]:
        """Every note held back by a conflict, oldest first (or only `note_id`'s)."""
        sql = "SELECT id, server_rev, server_data, local_rev, reasons, found_at FROM conflicts"
        rows = (
            self._db.execute(sql + " WHERE id=?", (note_id,))
            if note_id is not None
            else self._db.execute(sql + " ORDER BY found_at, id")
        )
        return [
            HeldConflict(
                str(i),
                None if sr is None else str(sr),
                None if sd is None else self._open(self._conflict_context(str(i)), bytes(sd)),
                None if lr is None else str(lr),
                tuple(json.loads(rs)),
                int(at),
            )
            for i, sr, sd, lr, rs, at in rows
        ]

    def conflict(self, note_id: str) -> HeldConflict | None:
        """The conflict holding back a note, if any."""
        found = self.conflicts(note_id)
        return found[0] if found else None

    def hold(
        self,
        note_id: str,
        *,
        server_rev: str | None,
        server_data: bytes | None,
        local_rev: str | None,
        reasons: tuple[str, ...],
    ) -> None:
        """Record (or refresh) a conflict; keeps the first time it was found."""
        row = self._db.execute("SELECT found_at FROM conflicts WHERE id=?", (note_id,)).fetchone()
        at = int(row[0]) if row is not None else int(time.time() * 1000)
        if server_data is not None:
            server_data = self._seal(self._conflict_context(note_id), server_data)
        self._db.execute(
            "INSERT OR REPLACE INTO conflicts "
            "(id, server_rev, server_data, local_rev, reasons, found_at) VALUES (?,?,?,?,?,?)",
            (note_id, server_rev, server_data, local_rev, json.dumps(list(reasons)), at),
        )

    def release(self, note_id: str) -> None:
        """Drop a note's conflict (resolved, or merged cleanly after all)."""
        self._db.execute("DELETE FROM conflicts WHERE id=?", (note_id,))

    def purge(self, note_id: str) -> None:
        """Remove every copy of a note's text kept here (forget --purge).

        The baseline revision stays (without its text) so the next pass still uploads
        the deletion instead of pulling the note back.
        """
        with self.transaction():
            self._db.execute("UPDATE base SET data = x'' WHERE id=?", (note_id,))
            self.release(note_id)
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
