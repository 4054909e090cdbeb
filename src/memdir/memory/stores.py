"""The note stores of one `Memory`: where machine-local state lives, the project and user
scopes, and looking notes up across them (project first, then user)."""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable
from pathlib import Path

from memdir.config import Settings
from memdir.core import Note, Scope, parse_scope, validate_id
from memdir.errors import NotFound, Refused
from memdir.results import Link
from memdir.store import AuditLog, Backups, History, NoteDirectory, ScopeStore, ensure_project_id
from memdir.store.atomic import atomic_write, ensure_private_dir

__all__ = ["Stores", "state_home"]

#: The order in which ids resolve and scopes are listed.
SCOPE_ORDER = (Scope.PROJECT, Scope.USER)


def state_home(settings: Settings, warn: Callable[[str], None]) -> Path:
    """Where history, backups and the audit log live: $MEMDIR_HOME when it is usable.

    When it cannot be created or written, a project keeps its notes fully usable (§1.2)
    by keeping that machine-local state in `<project>/.memdir/local/` (git-ignored).
    """
    home = settings.home
    root = settings.project_root
    try:
        home.mkdir(parents=True, exist_ok=True)
        usable = os.access(home, os.W_OK | os.X_OK)
        problem = "it is not writable"
    except OSError as exc:
        usable, problem = False, exc.strerror or str(exc)
    if usable or root is None:
        return home
    fallback = root / ".memdir" / "local"
    ensure_private_dir(fallback)
    ignore = fallback / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, b"# machine-local memdir state, written by memdir\n*\n")
    warn(
        f"cannot use {home} ({problem}): user notes are unavailable, and this project's "
        f"history, backups and audit log are kept in {fallback}"
    )
    return fallback


class Stores:
    """The open scopes' `ScopeStore`s, their shared backups and audit log, and lookup."""

    def __init__(self, settings: Settings, home: Path, warn: Callable[[str], None]) -> None:
        self.settings = settings
        self.home = home
        self._warn = warn
        self.backups = Backups(home / "memory-backups")
        self.audit = AuditLog(home / "audit", lock_timeout=settings.lock_timeout)
        self.by_scope: dict[Scope, ScopeStore] = {}
        if settings.memory_dir is not None and settings.project_root is not None:
            root = settings.project_root
            self.by_scope[Scope.PROJECT] = self._make(
                Scope.PROJECT,
                settings.memory_dir,
                lambda: History(home / "memory-history" / f"project-{ensure_project_id(root)}"),
            )
        user_dir = settings.user_dir
        try:
            user_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            warn(
                f"user notes are unavailable: cannot create {user_dir} ({exc.strerror}); "
                "project notes work as usual"
            )
        else:
            self.by_scope[Scope.USER] = self._make(
                Scope.USER, user_dir, lambda: History(home / "memory-history" / "user")
            )

    def _make(self, scope: Scope, path: Path, history: Callable[[], History]) -> ScopeStore:
        directory = NoteDirectory(
            scope, path, lock_timeout=self.settings.lock_timeout, max_notes=self.settings.max_notes
        )
        return ScopeStore(
            directory,
            history,
            self.backups,
            self.audit,
            max_note_bytes=self.settings.max_note_bytes,
        )

    @property
    def scopes(self) -> tuple[Scope, ...]:
        """The scopes available, project first."""
        return tuple(s for s in SCOPE_ORDER if s in self.by_scope)

    def store(self, scope: Scope) -> ScopeStore:
        """The store of `scope`; Refused when that scope is not open."""
        store = self.by_scope.get(scope)
        if store is None:
            why = (
                "no project is open"
                if scope is Scope.PROJECT
                else "the user directory is unavailable"
            )
            raise Refused(f"the {scope.value} scope cannot be used: {why}")
        return store

    def chosen(self, scope: Scope | str | None) -> tuple[ScopeStore, ...]:
        """The store of `scope`, or every open store (project first) for None."""
        parsed = parse_scope(scope)
        if parsed is None:
            return tuple(self.by_scope[s] for s in self.scopes)
        return (self.store(parsed),)

    def all_notes(self, scope: Scope | str | None = None) -> builtins.list[Note]:
        """Every loaded note of the chosen scopes (warns about notes above maxNotes)."""
        notes: builtins.list[Note] = []
        for store in self.chosen(scope):
            scan = store.scan()
            if scan.over_limit:
                self._warn(
                    f"the {store.scope.value} scope holds {scan.over_limit} notes above "
                    f"memory.maxNotes ({self.settings.max_notes}); the least recently changed "
                    "are not loaded"
                )
            notes.extend(scan.notes.values())
        return notes

    def find(self, note_id: str, scope: Scope | str | None = None) -> tuple[ScopeStore, Note]:
        """The store holding note `note_id` and the note (project first); NotFound otherwise."""
        validate_id(note_id)
        wanted = parse_scope(scope)
        for store in self.chosen(wanted):
            note = store.get(note_id)
            if note is not None:
                return store, note
        where = f" in the {wanted.value} scope" if wanted is not None else ""
        raise NotFound(f"no note {note_id}{where}")

    def exists(self, note_id: str) -> bool:
        """True when a file for `note_id` exists in an open scope."""
        return any(store.directory.file_for(note_id).is_file() for store in self.chosen(None))

    def taken_ids(self) -> set[str]:
        """Every id on disk in any scope, casefolded (a new id must differ from all)."""
        return {i.casefold() for s in self.by_scope.values() for i in s.directory.ids_on_disk()}

    @staticmethod
    def resolve_link(target: str, notes: dict[tuple[Scope | None, str], Note]) -> Link:
        """Where `[[target]]` points: project first, then user; scope None when dangling."""
        for scope in SCOPE_ORDER:
            note = notes.get((scope, target))
            if note is not None:
                return Link(target, scope, note.summary)
        return Link(target, None, None)
