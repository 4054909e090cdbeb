"""Typed results returned by `memdir.Memory` (frozen, slotted dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memdir.core import Note, Scope
from memdir.retrieve import Neighbour
from memdir.store.backups import BackupRecord
from memdir.store.notedir import FileProblem

__all__ = [
    "DoctorReport",
    "ForgetPlan",
    "ForgetResult",
    "HistoryEntry",
    "Link",
    "LinkReport",
    "RestoreResult",
    "WriteResult",
]


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What `remember` did and what the store already holds near it."""

    note: Note
    created: bool
    changed: bool
    revision: str
    nearest: tuple[Neighbour, ...]
    likely_duplicate: bool
    dangling_links: tuple[str, ...]
    duplicate_of: str | None = None


@dataclass(frozen=True, slots=True)
class Link:
    """A `[[target]]` link and the scope it resolves in (None when dangling)."""

    target: str
    scope: Scope | None
    summary: str | None


@dataclass(frozen=True, slots=True)
class LinkReport:
    """A note's outgoing links, backlinks and dangling links."""

    note_id: str
    outgoing: tuple[Link, ...]
    backlinks: tuple[Link, ...]

    @property
    def dangling(self) -> tuple[str, ...]:
        """Targets that name no note."""
        return tuple(link.target for link in self.outgoing if link.scope is None)


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One version (or deletion) in a note's history on this machine."""

    revision: str | None
    ts: int
    event: str
    hash: str | None
    current: bool


@dataclass(frozen=True, slots=True)
class ForgetPlan:
    """What `forget` will remove, for the confirm step."""

    note: Note
    scope: Scope
    path: Path
    purge: bool
    keeps_backup: bool
    history_versions: int
    backups: int


@dataclass(frozen=True, slots=True)
class ForgetResult:
    """What `forget` removed and the checks that verified it."""

    note_id: str
    scope: Scope
    backup: BackupRecord | None
    purged_versions: int
    purged_backups: int
    checks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """A restored note and the backup of the version it replaced, if any."""

    note: Note
    backup_id: str
    replaced_backup: BackupRecord | None


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """Health of the note directories: unparseable files, dangling links, limits, warnings."""

    problems: tuple[FileProblem, ...]
    dangling: tuple[tuple[str, str], ...]
    warnings: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)
    directories: dict[str, str] = field(default_factory=dict)
    leftovers: tuple[Path, ...] = ()
    #: Temp files of interrupted writes that doctor removed.
    cleaned: int = 0

    @property
    def ok(self) -> bool:
        """True when nothing needs attention."""
        return not (self.problems or self.dangling or self.warnings or self.leftovers)
