"""The agent state store (§8.3): tasks, goals, sessions, an append-only audit table and meta
in a SQLite file (0600, WAL) or a PostgreSQL database, behind a no-credential guard, with
verified backups. `State` is the API; the CLI's `memdir state` is a thin layer over it.
"""

from __future__ import annotations

from ._backup import manifest_sum
from ._guard import key_is_secret
from ._rows import AuditEntry, BackupInfo, Goal, ItemStatus, MetaEntry, RestoreInfo, Session, Task
from ._store import State, default_state_path

__all__ = [
    "AuditEntry",
    "BackupInfo",
    "Goal",
    "ItemStatus",
    "MetaEntry",
    "RestoreInfo",
    "Session",
    "State",
    "Task",
    "default_state_path",
    "key_is_secret",
    "manifest_sum",
]
