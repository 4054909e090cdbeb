"""`State`: the agent state store's repository — tasks, goals, sessions, audit, meta.

The same code runs on SQLite (the default, a 0600 file in WAL mode) and PostgreSQL; only
the connection adapter (`_db`) differs. Every write runs in one transaction that passes
the no-credential guard first and appends one audit entry (time, actor, action, object
id — never a value). Backups and restores are SQLite's (`_backup`), signed by this
machine's key (`_trust`, the key of the audit log's head; in ``<home>/audit``).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from memdir.errors import InvalidInput, NotFound, Refused

from ._backup import DB_NAME, restore_into, take_backup, verify_backup
from ._db import Db, PostgresDb, SqliteDb, open_sqlite
from ._guard import check_key, check_write
from ._rows import AuditEntry, BackupInfo, Goal, ItemStatus, MetaEntry, RestoreInfo, Session, Task
from ._schema import create_schema
from ._trust import BackupKey, key_id

__all__ = ["State", "default_state_path"]

Clock = Callable[[], int]
_MAX_TEXT = 100_000
_ITEM_COLUMNS = "id, title, status, priority, notes, fields, created_at, updated_at, closed_at"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def default_state_path(home: Path | None = None) -> Path:
    """``<home>/state/state.sqlite3``; the home defaults to $MEMDIR_HOME or ~/.memdir."""
    if home is None:
        from memdir.config import default_home

        home = default_home()
    return Path(home) / "state" / "state.sqlite3"


def _status(value: ItemStatus | str) -> ItemStatus:
    try:
        return ItemStatus(value)
    except ValueError:
        choices = ", ".join(s.value for s in ItemStatus)
        raise InvalidInput(f"unknown status {value!r}; one of: {choices}") from None


def _text(name: str, value: str, *, empty_ok: bool = True) -> str:
    if not empty_ok and not value.strip():
        raise InvalidInput(f"the {name} cannot be empty")
    if len(value) > _MAX_TEXT:
        raise InvalidInput(f"the {name} is longer than {_MAX_TEXT} characters")
    return value


class State:
    """An agent's structured state; open with `State.open` or `State.open_postgres`.

    `backup_key` signs backups and authenticates restores (`State.open` passes this
    machine's key under ``<home>/audit``); without one, backups are refused.
    """

    def __init__(
        self,
        db: Db,
        *,
        actor: str = "memdir",
        clock: Clock = _now_ms,
        path: Path | None = None,
        backup_key: BackupKey | None = None,
    ) -> None:
        check_write({"actor": _text("actor", actor, empty_ok=False)})
        self._db = db
        self._actor = actor
        self._clock = clock
        self._backup_key = backup_key
        #: The SQLite file, or None on PostgreSQL.
        self.path = path
        create_schema(db)

    @classmethod
    def open(
        cls,
        path: Path | str | None = None,
        *,
        home: Path | None = None,
        actor: str = "memdir",
        clock: Clock = _now_ms,
    ) -> State:
        """Open (creating) the SQLite store at `path`, default ``<home>/state/state.sqlite3``.

        Backups are signed with this machine's key in ``<home>/audit`` (the home defaults to
        $MEMDIR_HOME or ~/.memdir), also for a store at another `path`."""
        if home is None:
            from memdir.config import default_home

            home = default_home()
        target = Path(path) if path is not None else default_state_path(home)
        key = BackupKey(Path(home) / "audit")
        return cls(open_sqlite(target), actor=actor, clock=clock, path=target, backup_key=key)

    @classmethod
    def open_postgres(cls, dsn: str, *, actor: str = "memdir", clock: Clock = _now_ms) -> State:
        """Open the store in the PostgreSQL database `dsn` (tables created when missing)."""
        return cls(PostgresDb(dsn), actor=actor, clock=clock)

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._db.dialect

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> State:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- the audit table (appended inside each write) -----------------------------------

    def _append_audit(self, action: str, object_id: str) -> None:
        (last,) = self._db.query("SELECT COALESCE(MAX(seq), 0) FROM state_audit")[0]
        self._db.query(
            "INSERT INTO state_audit (seq, ts, actor, action, object_id) VALUES (?, ?, ?, ?, ?)",
            (int(last) + 1, self._clock(), self._actor, action, object_id),
        )

    def audit(self, *, object_id: str | None = None, limit: int | None = None) -> list[AuditEntry]:
        """The audit entries, newest first (of one object when `object_id` is given)."""
        sql = "SELECT seq, ts, actor, action, object_id FROM state_audit"
        params: list[object] = []
        if object_id is not None:
            sql += " WHERE object_id = ?"
            params.append(object_id)
        sql += " ORDER BY seq DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(0, limit))
        return [
            AuditEntry(int(r[0]), int(r[1]), r[2], r[3], r[4]) for r in self._db.query(sql, params)
        ]

    # -- tasks and goals ----------------------------------------------------------------

    def add_task(
        self,
        title: str,
        *,
        notes: str = "",
        priority: int = 0,
        status: ItemStatus | str = ItemStatus.OPEN,
        goal_id: str | None = None,
        fields: Mapping[str, str] | None = None,
    ) -> Task:
        """Create a task (under goal `goal_id` when given); return it."""
        item = self._add("task", title, notes, priority, status, fields, goal_id)
        return self.get_task(item)

    def update_task(
        self,
        task_id: str,
        *,
        title: str | None = None,
        notes: str | None = None,
        priority: int | None = None,
        status: ItemStatus | str | None = None,
        goal_id: str | None = None,
        fields: Mapping[str, str] | None = None,
    ) -> Task:
        """Change the given parts of a task (fields are merged; an empty value removes one)."""
        self._update("task", task_id, title, notes, priority, status, fields, goal_id)
        return self.get_task(task_id)

    def close_task(self, task_id: str, *, status: ItemStatus | str = ItemStatus.DONE) -> Task:
        """Close a task as ``done`` (or ``dropped``)."""
        self._close("task", task_id, status)
        return self.get_task(task_id)

    def get_task(self, task_id: str) -> Task:
        """The task `task_id` (NotFound when there is none)."""
        rows = self._db.query(
            f"SELECT {_ITEM_COLUMNS}, goal_id FROM state_tasks WHERE id = ?", (task_id,)
        )
        if not rows:
            raise NotFound(f"no task {task_id!r} in the state store")
        return _task(rows[0])

    def list_tasks(
        self,
        *,
        status: ItemStatus | str | None = None,
        goal_id: str | None = None,
        include_closed: bool = False,
        limit: int | None = None,
    ) -> list[Task]:
        """Tasks, open ones by priority (highest first), then oldest first."""
        rows = self._list("task", status, include_closed, limit, goal_id)
        return [_task(r) for r in rows]

    def add_goal(
        self,
        title: str,
        *,
        notes: str = "",
        priority: int = 0,
        status: ItemStatus | str = ItemStatus.OPEN,
        fields: Mapping[str, str] | None = None,
    ) -> Goal:
        """Create a goal; return it."""
        return self.get_goal(self._add("goal", title, notes, priority, status, fields, None))

    def update_goal(
        self,
        goal_id: str,
        *,
        title: str | None = None,
        notes: str | None = None,
        priority: int | None = None,
        status: ItemStatus | str | None = None,
        fields: Mapping[str, str] | None = None,
    ) -> Goal:
        """Change the given parts of a goal (fields are merged; an empty value removes one)."""
        self._update("goal", goal_id, title, notes, priority, status, fields, None)
        return self.get_goal(goal_id)

    def close_goal(self, goal_id: str, *, status: ItemStatus | str = ItemStatus.DONE) -> Goal:
        """Close a goal as ``done`` (or ``dropped``)."""
        self._close("goal", goal_id, status)
        return self.get_goal(goal_id)

    def get_goal(self, goal_id: str) -> Goal:
        """The goal `goal_id` (NotFound when there is none)."""
        rows = self._db.query(f"SELECT {_ITEM_COLUMNS} FROM state_goals WHERE id = ?", (goal_id,))
        if not rows:
            raise NotFound(f"no goal {goal_id!r} in the state store")
        return _goal(rows[0])

    def list_goals(
        self,
        *,
        status: ItemStatus | str | None = None,
        include_closed: bool = False,
        limit: int | None = None,
    ) -> list[Goal]:
        """Goals, open ones by priority (highest first), then oldest first."""
        return [_goal(r) for r in self._list("goal", status, include_closed, limit, None)]

    def _add(
        self,
        kind: str,
        title: str,
        notes: str,
        priority: int,
        status: ItemStatus | str,
        fields: Mapping[str, str] | None,
        goal_id: str | None,
    ) -> str:
        state = _status(status)
        clean = dict(fields or {})
        check_write(
            {"title": _text("title", title, empty_ok=False), "notes": _text("notes", notes)}, clean
        )
        now = self._clock()
        closed = now if state.closed else None
        with self._db.write():
            item_id = self._new_id(f"state_{kind}s", kind[0])
            if goal_id is not None:
                self.get_goal(goal_id)
            columns = _ITEM_COLUMNS
            values: list[object] = [item_id, title, state.value, int(priority), notes]
            values += [_dump(clean), now, now, closed]
            if kind == "task":
                columns += ", goal_id"
                values.append(goal_id)
            marks = ", ".join("?" * len(values))
            self._db.query(f"INSERT INTO state_{kind}s ({columns}) VALUES ({marks})", values)
            self._append_audit(f"{kind}.add", item_id)
        return item_id

    def _new_id(self, table: str, prefix: str) -> str:
        """A new id for `table`, inside its write: 32 random bits collide within ~100k rows."""
        while True:
            item_id = f"{prefix}-{secrets.token_hex(4)}"
            if not self._db.query(f"SELECT 1 FROM {table} WHERE id = ?", (item_id,)):
                return item_id

    def _update(
        self,
        kind: str,
        item_id: str,
        title: str | None,
        notes: str | None,
        priority: int | None,
        status: ItemStatus | str | None,
        fields: Mapping[str, str] | None,
        goal_id: str | None,
    ) -> None:
        checked: dict[str, str] = {}
        if title is not None:
            checked["title"] = _text("title", title, empty_ok=False)
        if notes is not None:
            checked["notes"] = _text("notes", notes)
        changes = {k: v for k, v in (fields or {}).items() if v}
        check_write(checked, changes)
        for key in fields or {}:
            check_key(key, "field")
        state = None if status is None else _status(status)
        with self._db.write():
            rows = self._db.query(
                f"SELECT fields, closed_at FROM state_{kind}s WHERE id = ?", (item_id,)
            )
            if not rows:
                raise NotFound(f"no {kind} {item_id!r} in the state store")
            if goal_id is not None:
                self.get_goal(goal_id)
            merged = {**json.loads(rows[0][0]), **changes}
            for key, value in (fields or {}).items():
                if not value:
                    merged.pop(key, None)
            now = self._clock()
            sets: dict[str, Any] = {"fields": _dump(merged), "updated_at": now}
            if title is not None:
                sets["title"] = title
            if notes is not None:
                sets["notes"] = notes
            if priority is not None:
                sets["priority"] = int(priority)
            if state is not None:
                sets["status"] = state.value
                sets["closed_at"] = (rows[0][1] or now) if state.closed else None
            if goal_id is not None:
                sets["goal_id"] = goal_id
            assignments = ", ".join(f"{name} = ?" for name in sets)
            self._db.query(
                f"UPDATE state_{kind}s SET {assignments} WHERE id = ?", [*sets.values(), item_id]
            )
            self._append_audit(f"{kind}.update", item_id)

    def _close(self, kind: str, item_id: str, status: ItemStatus | str) -> None:
        state = _status(status)
        if not state.closed:
            raise InvalidInput(f"a {kind} closes as done or dropped, not {state.value}")
        with self._db.write():
            now = self._clock()
            rows = self._db.query(f"SELECT id FROM state_{kind}s WHERE id = ?", (item_id,))
            if not rows:
                raise NotFound(f"no {kind} {item_id!r} in the state store")
            self._db.query(
                f"UPDATE state_{kind}s SET status = ?, updated_at = ?, "
                "closed_at = COALESCE(closed_at, ?) WHERE id = ?",
                (state.value, now, now, item_id),
            )
            self._append_audit(f"{kind}.close", item_id)

    def _list(
        self,
        kind: str,
        status: ItemStatus | str | None,
        include_closed: bool,
        limit: int | None,
        goal_id: str | None,
    ) -> list[tuple[Any, ...]]:
        columns = _ITEM_COLUMNS + (", goal_id" if kind == "task" else "")
        where: list[str] = []
        params: list[object] = []
        if status is not None:
            where.append("status = ?")
            params.append(_status(status).value)
        elif not include_closed:
            where.append("closed_at IS NULL")
        if goal_id is not None:
            where.append("goal_id = ?")
            params.append(goal_id)
        sql = f"SELECT {columns} FROM state_{kind}s"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += (
            " ORDER BY CASE WHEN closed_at IS NULL THEN 0 ELSE 1 END, priority DESC, created_at, id"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(0, limit))
        return self._db.query(sql, params)

    # -- sessions -------------------------------------------------------------------------

    def record_session(
        self,
        agent: str,
        summary: str = "",
        *,
        started_at: int | None = None,
        ended_at: int | None = None,
        fields: Mapping[str, str] | None = None,
    ) -> Session:
        """Record one session of `agent` (started now unless `started_at` is given)."""
        clean = dict(fields or {})
        check_write(
            {"agent": _text("agent", agent, empty_ok=False), "summary": _text("summary", summary)},
            clean,
        )
        start = self._clock() if started_at is None else int(started_at)
        if ended_at is not None and ended_at < start:
            raise InvalidInput("a session cannot end before it starts")
        with self._db.write():
            session_id = self._new_id("state_sessions", "s")
            self._db.query(
                "INSERT INTO state_sessions (id, agent, started_at, ended_at, summary, fields) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, agent, start, ended_at, summary, _dump(clean)),
            )
            self._append_audit("session.record", session_id)
        return Session(session_id, agent, start, ended_at, summary, clean)

    def list_sessions(self, *, agent: str | None = None, limit: int | None = None) -> list[Session]:
        """Recorded sessions, most recent first."""
        sql = "SELECT id, agent, started_at, ended_at, summary, fields FROM state_sessions"
        params: list[object] = []
        if agent is not None:
            sql += " WHERE agent = ?"
            params.append(agent)
        sql += " ORDER BY started_at DESC, id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(0, limit))
        return [
            Session(
                r[0], r[1], int(r[2]), None if r[3] is None else int(r[3]), r[4], json.loads(r[5])
            )
            for r in self._db.query(sql, params)
        ]

    # -- meta -------------------------------------------------------------------------------

    def set_meta(self, key: str, value: str) -> MetaEntry:
        """Set meta `key` to `value` (both guarded); return the entry."""
        check_key(key, "meta key")
        check_write({f"meta {key}": _text("value", value)})
        now = self._clock()
        with self._db.write():
            self._db.query(
                "INSERT INTO state_meta (key, value, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value, "
                "updated_at = excluded.updated_at",
                (key, value, now),
            )
            self._append_audit("meta.set", key)
        return MetaEntry(key, value, now)

    def get_meta(self, key: str) -> MetaEntry:
        """The meta entry `key` (NotFound when unset)."""
        rows = self._db.query("SELECT key, value, updated_at FROM state_meta WHERE key = ?", (key,))
        if not rows:
            raise NotFound(f"no meta key {key!r} in the state store")
        return MetaEntry(rows[0][0], rows[0][1], int(rows[0][2]))

    def list_meta(self) -> list[MetaEntry]:
        """Every meta entry, by key."""
        rows = self._db.query("SELECT key, value, updated_at FROM state_meta ORDER BY key")
        return [MetaEntry(r[0], r[1], int(r[2])) for r in rows]

    # -- backups -----------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """How many rows each table holds."""
        names = ("tasks", "goals", "sessions", "audit", "meta")
        return {n: int(self._db.query(f"SELECT COUNT(*) FROM state_{n}")[0][0]) for n in names}

    def _sqlite(self) -> tuple[SqliteDb, Path, BackupKey]:
        if not isinstance(self._db, SqliteDb) or self.path is None:
            raise Refused(
                "backups use SQLite's online backup API; back a PostgreSQL state store up "
                "with the server's own tools (pg_dump)"
            )
        if self._backup_key is None:
            raise Refused(
                "this state store was opened without a machine key, so it cannot sign or "
                "authenticate backups; open it with State.open"
            )
        return self._db, self.path, self._backup_key

    def backup(self, directory: Path | str) -> BackupInfo:
        """Write a consistent backup (database + manifest signed by this machine's key) into a
        new directory."""
        db, _, key = self._sqlite()
        target = Path(directory)
        now = self._clock()
        manifest = take_backup(db.conn, target, created_at=now, rows=self.counts(), key=key)
        entry = manifest["files"][DB_NAME]
        with db.write():
            self._append_audit("state.backup", "state")
        return BackupInfo(
            target, entry["sha256"], int(entry["size"]), now, manifest["rows"], True,
            key_id(manifest["key"]),
        )  # fmt: skip

    def check_backup(self, directory: Path | str, *, accept_foreign: bool = False) -> BackupInfo:
        """Verify a backup's manifest, sums and signature without restoring it.

        IntegrityError when it is damaged, or not signed by this machine's key (unless
        `accept_foreign`: then `BackupInfo.authenticated` says how it stands)."""
        _, _, key = self._sqlite()
        target = Path(directory)
        manifest, trust = verify_backup(target, key.public_key(), accept_foreign=accept_foreign)
        entry = manifest["files"][DB_NAME]
        rows = {str(k): int(v) for k, v in dict(manifest.get("rows") or {}).items()}
        created = int(manifest.get("created_at") or 0)
        return BackupInfo(
            target, entry["sha256"], int(entry["size"]), created, rows, trust.authenticated,
            trust.key_id,
        )  # fmt: skip

    def restore(self, directory: Path | str, *, accept_foreign: bool = False) -> RestoreInfo:
        """Replace the tasks, goals, sessions and meta with a verified backup's, keeping a
        backup of the store as it was; the audit table keeps its past and is appended to.

        Refused before anything changes: a damaged backup, one whose signature does not
        verify or that is not signed by this machine's key (IntegrityError; a foreign one is
        accepted with `accept_foreign`, its audit entries are then not imported), and one
        holding a credential (SecretRefused, naming the table, row and field).
        """
        db, path, key = self._sqlite()
        source = Path(directory)
        now = self._clock()
        pre = path.parent / "pre-restore" / f"{now}-{secrets.token_hex(2)}"
        done = restore_into(
            db,
            path,
            source,
            pre,
            key=key,
            accept_foreign=accept_foreign,
            created_at=now,
            rows=self.counts(),
            record=lambda action: self._append_audit(action, "state"),
        )
        return RestoreInfo(
            source, pre, self.counts(), done.authenticated, done.audit_imported,
            done.audit_not_imported,
        )  # fmt: skip


def _dump(fields: Mapping[str, str]) -> str:
    for key, value in fields.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidInput("field names and values are text")
    return json.dumps(dict(fields), ensure_ascii=False, sort_keys=True)


def _task(r: tuple[Any, ...]) -> Task:
    closed = None if r[8] is None else int(r[8])
    return Task(
        r[0],
        r[1],
        ItemStatus(r[2]),
        int(r[3]),
        r[4],
        r[9],
        json.loads(r[5]),
        int(r[6]),
        int(r[7]),
        closed,
    )


def _goal(r: tuple[Any, ...]) -> Goal:
    closed = None if r[8] is None else int(r[8])
    return Goal(
        r[0],
        r[1],
        ItemStatus(r[2]),
        int(r[3]),
        r[4],
        json.loads(r[5]),
        int(r[6]),
        int(r[7]),
        closed,
    )
