"""The state store's DDL, in the subset of SQL that SQLite and PostgreSQL both run."""

from __future__ import annotations

from ._db import Db

__all__ = ["SCHEMA_VERSION", "TABLES", "create_schema"]

SCHEMA_VERSION = 1

_ITEM_COLUMNS = """
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    status TEXT NOT NULL,
    priority INTEGER NOT NULL,
    notes TEXT NOT NULL,
    {extra}
    fields TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    closed_at BIGINT
"""

#: Each table's DDL; names are prefixed so a shared PostgreSQL database stays readable.
TABLES: dict[str, str] = {
    "state_schema": "CREATE TABLE IF NOT EXISTS state_schema (version INTEGER NOT NULL)",
    "state_goals": "CREATE TABLE IF NOT EXISTS state_goals ("
    + _ITEM_COLUMNS.format(extra="")
    + ")",
    "state_tasks": "CREATE TABLE IF NOT EXISTS state_tasks ("
    + _ITEM_COLUMNS.format(extra="goal_id TEXT,")
    + ")",
    "state_sessions": """CREATE TABLE IF NOT EXISTS state_sessions (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        started_at BIGINT NOT NULL,
        ended_at BIGINT,
        summary TEXT NOT NULL,
        fields TEXT NOT NULL
    )""",
    # Append-only: the repository has no UPDATE or DELETE of it (a test reads the source).
    "state_audit": """CREATE TABLE IF NOT EXISTS state_audit (
        seq BIGINT PRIMARY KEY,
        ts BIGINT NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        object_id TEXT NOT NULL
    )""",
    "state_meta": """CREATE TABLE IF NOT EXISTS state_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at BIGINT NOT NULL
    )""",
}

_INDEXES = (
    "CREATE INDEX IF NOT EXISTS state_tasks_status ON state_tasks (status)",
    "CREATE INDEX IF NOT EXISTS state_tasks_goal ON state_tasks (goal_id)",
    "CREATE INDEX IF NOT EXISTS state_sessions_started ON state_sessions (started_at)",
    "CREATE INDEX IF NOT EXISTS state_audit_object ON state_audit (object_id)",
)


def create_schema(db: Db) -> int:
    """Create missing tables; return the stored schema version (a newer one is refused)."""
    for ddl in (*TABLES.values(), *_INDEXES):
        db.query(ddl)
    with db.write():
        rows = db.query("SELECT version FROM state_schema")
        if not rows:
            db.query("INSERT INTO state_schema (version) VALUES (?)", (SCHEMA_VERSION,))
            return SCHEMA_VERSION
    version = int(rows[0][0])
    if version > SCHEMA_VERSION:
        from memdir.errors import Refused, Remedy

        raise Refused(
            f"the state store has schema version {version}; this memdir reads up to "
            f"{SCHEMA_VERSION}",
            hint=Remedy.UPGRADE,
        )
    return version
