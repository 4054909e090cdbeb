"""Forgetting, backups and restore, and health checks: the upkeep half of `Memory`.

A mixin so the facade stays one class (`memdir.Memory`) while its modules stay
small; it relies only on the lookup helpers `Memory` defines.
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.config import Settings
from memdir.core import DEFAULT_SCOPE, Note, Scope, is_valid_id, parse_note
from memdir.errors import Busy, IntegrityError, InvalidInput, ParseError, Refused
from memdir.results import DoctorReport, ForgetPlan, ForgetResult, Link, RestoreResult
from memdir.retrieve import Retriever
from memdir.store import (
    AuditLog,
    AuditReport,
    BackupRecord,
    Backups,
    FileProblem,
    ScopeStore,
    load_project_id,
    revision_of,
)
from memdir.store.atomic import TEMP_MARKER
from memdir.sync.service import SyncService

__all__ = ["Upkeep"]


class Upkeep:
    """forget, backups, restore, doctor and audit verification."""

    settings: Settings
    warnings: builtins.list[str]
    _backups: Backups
    _audit: AuditLog
    _retriever: Retriever
    _stores: dict[Scope, ScopeStore]
    _sync: SyncService

    if TYPE_CHECKING:

        @property
        def scopes(self) -> tuple[Scope, ...]: ...

        def _store(self, scope: Scope) -> ScopeStore: ...

        def _find(
            self, note_id: str, scope: Scope | str | None = None
        ) -> tuple[ScopeStore, Note]: ...

        def _all_notes(self, scope: Scope | str | None = None) -> builtins.list[Note]: ...

        def _warn(self, message: str) -> None: ...

        def _resolve_link(
            self, target: str, notes: dict[tuple[Scope | None, str], Note]
        ) -> Link: ...

    # -- forgetting and restoring ---------------------------------------------------

    def plan_forget(
        self, id: str, purge: bool = False, *, scope: Scope | str | None = None
    ) -> ForgetPlan:
        """What `forget` would remove; show it to the user before confirming."""
        store, note = self._find(id, scope)
        versions = len({r.rev for r in store.history.revisions(id) if r.rev})
        backups = sum(
            1
            for b in self._backups.list(limit=None)
            if b.note_id == id and b.origin in (None, store.path)
        )
        return ForgetPlan(
            note, store.scope, store.directory.file_for(id), purge, not purge, versions, backups
        )

    def forget(
        self,
        id: str,
        purge: bool = False,
        *,
        scope: Scope | str | None = None,
        expect_hash: str | None = None,
    ) -> ForgetResult:
        """Remove a note (the API call is the confirmation) and verify it is gone.

        Without `purge` the removed version stays in the backups so a mistake can be
        undone; with `purge` its history and backups are scrubbed as well.
        """
        store, _ = self._find(id, scope)
        with store.lock():
            removed, backup = store.remove(
                id,
                backup_reason=None if purge else "forget",
                event="purge" if purge else "forget",
                expect_hash=expect_hash,
            )
            purged_versions = purged_backups = 0
            if purge:
                purged_versions = store.history.purge(id)
                purged_backups = self._backups.purge(id, store.path)
                self._sync.purge(store.scope, id)
            self._audit.append(
                "purge" if purge else "forget",
                scope=store.scope.value,
                note_id=id,
                note_hash=removed.hash,
                backup_id=backup.id if backup else None,
                count=purged_versions + purged_backups if purge else None,
            )
        self._retriever.forget(store, id, scrub=purge)
        checks = self._verify_forgotten(store, removed, purge)
        return ForgetResult(id, store.scope, backup, purged_versions, purged_backups, checks)

    def _verify_forgotten(self, store: ScopeStore, note: Note, purge: bool) -> tuple[str, ...]:
        failures: builtins.list[str] = []
        if store.directory.read_bytes(note.id) is not None:
            failures.append(f"the file {store.directory.file_for(note.id)} still exists")
        remaining = self._all_notes(store.scope)
        if any(n.id == note.id for n in remaining):
            failures.append("the note is still listed")
        failures.extend(self._retriever.traces(store, note))
        checks = [
            "file removed",
            "not listed",
            "not in the index or its vectors",
            "search for its distinctive terms does not return it",
        ]
        if purge:
            leftovers = store.history.leftovers(note.id)
            if leftovers:
                failures.append(f"{len(leftovers)} history objects still hold it")
            if any(
                b.note_id == note.id and b.origin in (None, store.path)
                for b in self._backups.list(None)
            ):
                failures.append("a backup still holds it")
            if self._sync.holds_copy(store.scope, note.id):
                failures.append("the sync baseline still holds it")
            checks += [
                "history scrubbed",
                "backups scrubbed",
                "sync copies on this machine scrubbed",
            ]
        if failures:
            raise IntegrityError(
                f"forget of {note.id} could not be verified: " + "; ".join(failures)
            )
        return tuple(checks)

    def backups(self, limit: int | None = 50) -> builtins.list[BackupRecord]:
        """The latest backups, newest first."""
        return self._backups.list(limit)

    def restore(self, backup_id: str) -> RestoreResult:
        """Put a backup back in the directory it came from, backing up a newer version first."""
        record, data = self._backups.get(backup_id)
        # A note file may leave its id to the file name; the backup's record keeps that id.
        file_id = record.note_id if is_valid_id(record.note_id) else None
        try:
            note = parse_note(data, file_id=file_id)
        except ParseError as exc:
            raise Refused(f"backup {backup_id} cannot be restored: {exc}") from None
        store = self._restore_target(record, note)
        located = note.located(store.scope, store.directory.file_for(note.id))
        with store.lock():
            current = store.directory.read_bytes(note.id)
            if current is not None and revision_of(current) == record.revision:
                return RestoreResult(located, backup_id, None)
            outcome = store.save(
                located,
                raw=data,
                event="restore",
                backup_reason="replaced by restore" if current is not None else None,
                expect_revision=revision_of(current) if current is not None else "",
            )
        replaced = None
        if current is not None:
            replaced = next((b for b in self._backups.list(5) if b.note_id == note.id), None)
        return RestoreResult(outcome.note, backup_id, replaced)

    def _restore_target(self, record: BackupRecord, note: Note) -> ScopeStore:
        if record.origin is None:
            return self._store(DEFAULT_SCOPE[note.type])
        for store in self._stores.values():
            if store.path.resolve() == record.origin.resolve():
                return store
        raise Refused(
            f"backup {record.id} came from {record.origin}, which is not a note directory of "
            "this project; run the restore from that project (memdir --project DIR backups restore)"
        )

    # -- health ---------------------------------------------------------------------

    def doctor(self) -> DoctorReport:
        """Unparseable files (never modified), dangling links, limits and warnings."""
        problems: builtins.list[FileProblem] = []
        counts: dict[str, int] = {}
        dirs: dict[str, str] = {}
        leftovers: builtins.list[Path] = []
        notes: builtins.list[Note] = []
        cleaned = 0
        if self.settings.project_root is not None:
            try:
                load_project_id(self.settings.project_root)
            except InvalidInput as exc:
                self._warn(str(exc))
        for scope in self.scopes:
            store = self._stores[scope]
            scan = store.scan()
            problems.extend(scan.problems)
            counts[scope.value] = len(scan.notes) + scan.over_limit
            dirs[scope.value] = str(store.path)
            notes.extend(scan.notes.values())
            if store.path.is_dir():
                try:
                    with store.lock():
                        cleaned += store.directory.clear_leftovers()
                except Busy:
                    pass  # a writer is active; its temp files are not leftovers yet
                leftovers.extend(p for p in store.path.iterdir() if TEMP_MARKER in p.name)
            if scan.over_limit:
                self._warn(
                    f"{scope.value} scope: {scan.over_limit} notes above memory.maxNotes "
                    f"({self.settings.max_notes}) are not loaded"
                )
        index = {(n.scope, n.id): n for n in notes}
        dangling = tuple(
            (n.id, t) for n in notes for t in n.links if self._resolve_link(t, index).scope is None
        )
        return DoctorReport(
            problems=tuple(problems),
            dangling=dangling,
            warnings=tuple(self.warnings),
            counts=counts,
            directories=dirs,
            leftovers=tuple(sorted(leftovers)),
            cleaned=cleaned,
        )

    def audit_verify(self) -> AuditReport:
        """Check the audit log's hash chain against its head."""
        return self._audit.verify()
