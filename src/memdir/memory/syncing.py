"""Sync work that spans the store and the replica: batches written commit-first, and the
§7.2 background coordinator of a long-running process."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from memdir.core import Note, Scope
from memdir.core.vocab import WriteEvent
from memdir.errors import InvalidInput, SyncRefused
from memdir.memory.stores import Stores

if TYPE_CHECKING:
    from memdir.sync.batch import BatchResult
    from memdir.sync.replica import Replica, SyncRun
    from memdir.sync.scheduler import SyncCoordinator

__all__ = ["background_sync", "commit_batch"]


class _Syncs(Protocol):
    def sync(
        self, scope: Scope | str | None = None, *, abort: threading.Event | None = None
    ) -> SyncRun: ...


def commit_batch(
    replica: Replica,
    stores: Stores,
    writes: Mapping[str, Note | None],
    scope: Scope,
    reason: str,
) -> BatchResult:
    """Write a batch (id -> note, None: delete): through the server first when sync is on."""
    from memdir.sync.batch import BatchResult, write_batch

    for note_id, note in writes.items():
        if note is not None and note.id != note_id:
            raise InvalidInput(f"batch entry {note_id} holds note {note.id}")
    synced = replica.commit_first(scope, writes, reason)
    if synced is not None:
        return synced
    store = stores.store(scope)
    out = BatchResult(version=None)
    with store.lock():
        for note in writes.values():  # all checked before any is written
            if note is not None:
                store.admit(note)
        write_batch(store, writes, reason, out)
    return out


def background_sync(
    replica: Replica,
    stores: Stores,
    reopen: Callable[[], AbstractContextManager[_Syncs]],
    *,
    budget_per_minute: int,
    debounce: float,
) -> SyncCoordinator:
    """A coordinator whose passes each run on a fresh memory from `reopen` (its own thread)."""
    from memdir.sync.scheduler import SyncCoordinator

    keys = replica.keys()
    account = replica.account

    def run_pass(key: str, abort: threading.Event) -> bool:
        scope = keys[key]
        with reopen() as memory:
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

        def touched(note_id: str, event: WriteEvent, key: str = key) -> None:
            if not event.from_sync:  # a pull is not a local write to upload
                coordinator.touch(key)

        stores.store(scope).on_change(touched)
    return coordinator
