"""The checks on a backup's rows before a restore: their shape and the no-credential guard.

The backup's database is attached to the live connection as ``restored``. Every table must
have this schema's columns, every row the types the store reads back (statuses, JSON fields,
times), ids must be unique and the audit sequence must run 1, 2, 3 … without a gap. Every
row that is not already in the live store, exactly as it is there, passes the same guard as
a write (`_guard`); a refusal names the table, the row and the field, never the value.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memdir.errors import IntegrityError, InvalidInput, SecretRefused
from memdir.guard import scan_fields

from ._db import SqliteDb
from ._guard import check_key, check_write
from ._rows import ItemStatus
from ._schema import SCHEMA_VERSION

__all__ = ["ALIAS", "COLUMNS", "check_rows"]

#: The schema name the backup's database is attached under.
ALIAS = "restored"

# column -> (SQLite type, nullable); the order is the INSERT's.
_ITEM: dict[str, tuple[str, bool]] = {
    "id": ("text", False),
    "title": ("text", False),
    "status": ("text", False),
    "priority": ("integer", False),
    "notes": ("text", False),
    "fields": ("text", False),
    "created_at": ("integer", False),
    "updated_at": ("integer", False),
    "closed_at": ("integer", True),
}
#: Each restored table's columns with their type, and its key column.
COLUMNS: dict[str, tuple[dict[str, tuple[str, bool]], str]] = {
    "state_goals": (_ITEM, "id"),
    "state_tasks": ({**_ITEM, "goal_id": ("text", True)}, "id"),
    "state_sessions": (
        {
            "id": ("text", False),
            "agent": ("text", False),
            "started_at": ("integer", False),
            "ended_at": ("integer", True),
            "summary": ("text", False),
            "fields": ("text", False),
        },
        "id",
    ),
    "state_meta": (
        {"key": ("text", False), "value": ("text", False), "updated_at": ("integer", False)},
        "key",
    ),
    "state_audit": (
        {
            "seq": ("integer", False),
            "ts": ("integer", False),
            "actor": ("text", False),
            "action": ("text", False),
            "object_id": ("text", False),
        },
        "seq",
    ),
}
_LABEL_CHARS = 60


def _damaged(directory: Path, why: str) -> IntegrityError:
    return IntegrityError(f"the backup in {directory} is damaged: {why}; nothing was changed")


def check_rows(db: SqliteDb, directory: Path) -> None:
    """Refuse the attached backup unless every row fits the schema and holds no credential."""
    versions = db.query(f"SELECT version FROM {ALIAS}.state_schema")
    if len(versions) != 1 or versions[0][0] != SCHEMA_VERSION:
        found = ", ".join(repr(v[0]) for v in versions) or "none"
        raise _damaged(
            directory, f"its schema version is {found}; this memdir restores {SCHEMA_VERSION}"
        )
    for table, (columns, key) in COLUMNS.items():
        names = [r[1] for r in db.query(f"PRAGMA {ALIAS}.table_info({table})")]
        if sorted(names) != sorted(columns):
            raise _damaged(directory, f"its table {table} does not have this schema's columns")
        _check_types(db, directory, table, columns, key)
    (count, low, high) = db.query(f"SELECT COUNT(*), MIN(seq), MAX(seq) FROM {ALIAS}.state_audit")[
        0
    ]
    if count and (low != 1 or high != count):
        raise _damaged(directory, "its audit table's sequence has gaps")
    for table, (columns, key) in COLUMNS.items():
        _guard_new_rows(db, directory, table, list(columns), key)


def _check_types(
    db: SqliteDb, directory: Path, table: str, columns: dict[str, tuple[str, bool]], key: str
) -> None:
    wrong = [
        f"({name} IS NOT NULL AND typeof({name}) != '{kind}')"
        if nullable
        else f"typeof({name}) != '{kind}'"
        for name, (kind, nullable) in columns.items()
    ]
    if "status" in columns:
        statuses = ", ".join(f"'{s.value}'" for s in ItemStatus)
        wrong.append(f"status NOT IN ({statuses})")
    sql = f"SELECT COUNT(*) FROM {ALIAS}.{table} WHERE " + " OR ".join(wrong)
    if db.query(sql)[0][0]:
        raise _damaged(directory, f"its table {table} holds values of the wrong type")
    total, distinct = db.query(f"SELECT COUNT(*), COUNT(DISTINCT {key}) FROM {ALIAS}.{table}")[0]
    if total != distinct:
        raise _damaged(directory, f"its table {table} holds the same {key} twice")


def _guard_new_rows(
    db: SqliteDb, directory: Path, table: str, columns: list[str], key: str
) -> None:
    """The guard over each row the live store does not hold exactly so already."""
    listed = ", ".join(columns)
    rows = db.query(
        f"SELECT {listed} FROM {ALIAS}.{table} EXCEPT SELECT {listed} FROM main.{table}"
    )
    for values in rows:
        row = dict(zip(columns, values, strict=True))
        label = _label(table, row[key])
        fields: dict[str, str] = {}
        if "fields" in row:
            fields = _fields(directory, table, label, row.pop("fields"))
        texts = {name: value for name, value in row.items() if isinstance(value, str)}
        _guarded(directory, table, label, texts, fields)


def _label(table: str, ident: object) -> str:
    """How a refusal names a row: by its id (or key, or seq), unless that is itself a secret."""
    what = "seq" if table == "state_audit" else "key" if table == "state_meta" else "id"
    if not isinstance(ident, str):
        return f"{what} {ident}"
    if scan_fields({"id": ident}):
        return f"a row whose {what} itself looks like a credential"
    return f"{what} {_short(ident)!r}"


def _short(text: str) -> str:
    return text if len(text) <= _LABEL_CHARS else text[:_LABEL_CHARS] + "…"


def _fields(directory: Path, table: str, label: str, raw: str) -> dict[str, str]:
    try:
        fields: Any = json.loads(raw)
    except (ValueError, RecursionError):
        fields = None
    if not isinstance(fields, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in fields.items()
    ):
        raise _damaged(
            directory, f"in {table}, {label} has fields that are not a JSON object of text"
        )
    return fields


def _guarded(
    directory: Path, table: str, label: str, values: dict[str, str], fields: dict[str, str]
) -> None:
    checks: list[tuple[str | None, Callable[[], None]]] = []
    if table == "state_meta":
        checks.append((None, lambda: check_key(values["key"], "meta key")))
    for name in fields:
        # A field's name is named in the refusal, unless it is itself a credential.
        shown = None if scan_fields({"name": name}) else f"field {_short(name)!r}"
        checks.append((shown, functools.partial(check_key, name, "field")))
    checks.append((None, lambda: check_write(values, fields)))
    for shown, check in checks:
        try:
            check()
        except SecretRefused as exc:
            kind, where, _ = exc.findings[0] if exc.findings else ("credential", "a value", 1)
            where = shown or where
            raise SecretRefused(
                f"refused: the backup in {directory} holds what looks like a credential "
                f"({kind}) in {table}, {label}, {where}; the state store never holds "
                "credentials, so nothing was changed",
                exc.findings,
            ) from None
        except InvalidInput:
            raise _damaged(directory, f"in {table}, {label} has an empty name") from None
