"""Sync (§7) on the `Memory` facade: sign-in, the switch, passes, status and conflicts.

A mixin like `memdir.upkeep`: thin methods over `memdir.sync.service.SyncService`,
so the CLI, the MCP host, the web page and the scheduler all go through `Memory`.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from memdir.config import Settings
from memdir.core import Note, Scope, parse_scope
from memdir.errors import InvalidInput, SyncRefused
from memdir.store import ScopeStore
from memdir.sync.batch import BatchResult, write_batch
from memdir.sync.scheduler import SyncCoordinator
from memdir.sync.service import (
    ConflictView,
    Resolution,
    SyncRun,
    SyncService,
    SyncStatus,
)

__all__ = ["Syncing"]


class Syncing:
    """sync, sync_status, sync_login/logout, sync_switch, sync_conflicts/draft/resolve."""

    _sync: SyncService
    settings: Settings
    _stores: dict[Scope, ScopeStore]

    if TYPE_CHECKING:

        def _store(self, scope: Scope) -> ScopeStore: ...

        def _reopen(self) -> AbstractContextManager[Syncing]: ...

    def sync(
        self, scope: Scope | str | None = None, *, abort: threading.Event | None = None
    ) -> SyncRun:
        """One sync pass now (both scopes unless `scope`); `abort` stops it between requests."""
        chosen = parse_scope(scope) if scope is not None else None
        return self._sync.run((chosen,) if chosen is not None else None, abort=abort)

    def sync_status(self) -> SyncStatus:
        """Whether sync is on, the account, and each scope's state."""
        return self._sync.status()

    def sync_login(self, server: str, token: str) -> SyncStatus:
        """Check `token` with the server at `server` and store it (0600) for later passes."""
        return self._sync.login(server, token)

    def sync_logout(self) -> bool:
        """Remove the stored sign-in; False when there was none."""
        return self._sync.logout()

    def sync_switch(self, on: bool) -> SyncStatus:
        """Turn sync on or off for this user on this machine (persisted)."""
        return self._sync.set_enabled(on)

    def sync_conflicts(self) -> builtins.list[ConflictView]:
        """Every note held back by a sync conflict, with its three versions."""
        return self._sync.conflicts()

    def sync_draft(self, id: str, scope: Scope | str | None = None) -> str:
        """A merged draft of a conflicted note (conflict markers where the sides clash)."""
        return self._sync.draft(id, parse_scope(scope) if scope is not None else None)

    def sync_resolve(
        self,
        id: str,
        keep: str | None = None,
        *,
        text: str | None = None,
        scope: Scope | str | None = None,
    ) -> Resolution:
        """Settle a conflict: keep `local`, `server` or `both`, or write the edited `text`."""
        chosen = parse_scope(scope) if scope is not None else None
        return self._sync.resolve(id, keep=keep, text=text, scope=chosen)

    def commit_batch(
        self,
        writes: Mapping[str, Note | None],
        *,
        scope: Scope | str,
        reason: str = "consolidation",
    ) -> BatchResult:
        """Write a batch nobody reviews note by note (note id -> note, None: delete).

        With sync on for the scope, the batch goes to the server first, checked against
        the manifest version, and is written here only once accepted (§7.3); otherwise
        it is written here directly. Replaced and deleted versions are backed up.
        """
        chosen = parse_scope(scope) or Scope.PROJECT
        for note_id, note in writes.items():
            if note is not None and note.id != note_id:
                raise InvalidInput(f"batch entry {note_id} holds note {note.id}")
        synced = self._sync.commit_first(chosen, writes, reason)
        if synced is not None:
            return synced
        store = self._store(chosen)
        out = BatchResult(version=None)
        with store.lock():
            for note in writes.values():  # all checked before any is written
                if note is not None:
                    store.admit(note)
            write_batch(store, writes, reason, out)
        return out

    def background_sync(
        self, *, budget_per_minute: int = 8, debounce: float = 3.0
    ) -> SyncCoordinator:
        """A §7.2 coordinator for this process's scopes; the caller starts and stops it.

        Writes through this `Memory` schedule an upload about three seconds later; each
        pass runs on a `Memory` of its own in the coordinator's thread. The budget counts
        passes: a pass is one request when nothing changed and two or three otherwise,
        so eight passes keep the process near twenty requests a minute.
        """
        keys = self._sync.keys()
        account = self._sync.account

        def run_pass(key: str, abort: threading.Event) -> bool:
            scope = keys[key]
            with self._reopen() as memory:
                run = memory.sync(scope, abort=abort)
            if scope.value in run.paused:
                raise SyncRefused(run.paused[scope.value])
            return any(r.changed or r.conflicts for r in run.reports)

        coordinator = SyncCoordinator(
            run_pass,
            enabled=lambda: account.enabled and account.credentials() is not None,
            budget_per_minute=budget_per_minute,
            debounce=debounce,
        )
        for key, scope in keys.items():
            # This process works on its project for as long as it runs.
            coordinator.add(key, always=True)
            coordinator.used(key)

            def touched(note_id: str, event: str, key: str = key) -> None:
                if not event.startswith("sync"):  # a pull is not a local write to upload
                    coordinator.touch(key)

            self._stores[scope].on_change(touched)
        return coordinator
