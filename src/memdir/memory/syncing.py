"""Sync work that spans the store and the replica: batches written commit-first, and the
§7.2 background coordinator of a long-running process."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from memdir.core import Note, Scope
from memdir.core.vocab import WriteEvent
from memdir.errors import Conflict, InvalidInput, SyncRefused
from memdir.memory.stores import Stores
from memdir.store import revision_of

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
    *,
    expected: Mapping[str, str] | None = None,
    audit: Sequence[tuple[str, Mapping[str, str | int | None]]] = (),
) -> BatchResult:
    """Write a batch (id -> note, None: delete): through the server first when sync is on.

    With `expected` (id -> the revision of its file when the batch was made; "" for no
    file), the batch is refused (Conflict, nothing written) when any of those files has
    changed since. Here the batch is written all or nothing, its `audit` entries with it
    in one durable step; through the server first, a note edited here after the check
    leaves the whole batch to the next sync pass (`skipped`).
    """
    from memdir.sync.batch import BatchResult, write_all

    for note_id, note in writes.items():
        if note is not None and note.id != note_id:
            raise InvalidInput(f"batch entry {note_id} holds note {note.id}")
    synced = replica.commit_first(scope, writes, reason, expected=expected, audit=audit)
    store = stores.store(scope)
    if synced is not None:
        return synced
    out = BatchResult(version=None)
    with store.lock():
        here = {i: store.directory.read_bytes(i) for i in writes}
        revs = {i: revision_of(d) if d is not None else "" for i, d in here.items()}
        for note_id, rev in (expected or {}).items():
            if revs.get(note_id, rev) != rev:
                raise Conflict(
                    f"note {note_id} changed since the batch was made; nothing was written"
                )
        for note in writes.values():  # all checked before any is written
            if note is not None:
                store.admit(note)
        saved, made = write_all(store, writes, reason, revs, audit=audit)
    out.written.extend(saved)
    out.deleted.extend(i for i, n in sorted(writes.items()) if n is None)
    out.backup_ids.extend(r.id for r in made)
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
