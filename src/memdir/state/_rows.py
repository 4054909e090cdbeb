"""The state store's rows: frozen dataclasses the API returns and the CLI prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memdir.core.vocab import ItemStatus

__all__ = [
    "AuditEntry",
    "BackupInfo",
    "Goal",
    "ItemStatus",
    "MetaEntry",
    "RestoreInfo",
    "Session",
    "Task",
]


@dataclass(frozen=True, slots=True)
class Task:
    """One task: a title, a status, a priority, free-text notes and named string fields."""

    id: str
    title: str
    status: ItemStatus
    priority: int
    notes: str
    goal_id: str | None
    fields: dict[str, str] = field(default_factory=dict)
    created_at: int = 0
    updated_at: int = 0
    closed_at: int | None = None


@dataclass(frozen=True, slots=True)
class Goal:
    """One goal: the same shape as a task, without a parent goal."""

    id: str
    title: str
    status: ItemStatus
    priority: int
    notes: str
    fields: dict[str, str] = field(default_factory=dict)
    created_at: int = 0
    updated_at: int = 0
    closed_at: int | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """One recorded agent session: who, when, and a summary of what it did."""

    id: str
    agent: str
    started_at: int
    ended_at: int | None
    summary: str
    fields: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One write: when, by whom, what kind, on which object; never the values written."""

    seq: int
    ts: int
    actor: str
    action: str
    object_id: str


@dataclass(frozen=True, slots=True)
class MetaEntry:
    """One meta key and its value."""

    key: str
    value: str
    updated_at: int


@dataclass(frozen=True, slots=True)
class BackupInfo:
    """A backup written or checked: its directory, the database file's SHA-256, the row
    counts, whether this machine's key signed it and the short id of the key that did."""

    directory: Path
    sha256: str
    size: int
    created_at: int
    rows: dict[str, int]
    authenticated: bool = False
    key_id: str | None = None


@dataclass(frozen=True, slots=True)
class RestoreInfo:
    """A restore done: what was restored, where the store as it was before now lies, whether
    the backup was authenticated, and how many of its audit entries were appended to the
    audit table or left out (the table's own past is never replaced)."""

    source: Path
    pre_restore: Path
    rows: dict[str, int]
    authenticated: bool = True
    audit_imported: int = 0
    audit_not_imported: int = 0
