"""`Memory.sync` (§7): this machine's sync state and passes, batches written commit-first,
and the §7.2 background coordinator of a long-running process.

The replica (the sync database and the HTTP client) is built on first use, so a command
that never syncs opens neither.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memdir.config import Settings
from memdir.core import Note, Scope, parse_scope
from memdir.core.vocab import KeepSide, WriteEvent
from memdir.errors import Conflict, InvalidInput, SyncRefused
from memdir.memory.stores import Stores
from memdir.store import revision_of

if TYPE_CHECKING:
    import httpx

    from memdir.sync.batch import BatchResult
    from memdir.sync.protocol import TeamAction, TeamDoc
    from memdir.sync.replica import ConflictView, Replica, Resolution, SyncRun, SyncStatus
    from memdir.sync.scheduler import SyncCoordinator

__all__ = ["Sync"]


class _Runs(Protocol):
    def run(
        self, scope: Scope | str | None = None, *, abort: threading.Event | None = None
    ) -> SyncRun: ...


class _Reopened(Protocol):
    @property
    def sync(self) -> _Runs: ...


class Sync:
    """Sync of the open scopes with the account's server (off until signed in)."""

    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        *,
        home: Path,
        clock: Callable[[], int],
        transport: httpx.BaseTransport | None,
        reopen: Callable[[], AbstractContextManager[_Reopened]],
    ) -> None:
        self.settings = settings
        self.stores = stores
        self._home = home
        self._clock = clock
        self._transport = transport
        self._reopen = reopen
        self._replica: Replica | None = None
        self._building = threading.Lock()

    @property
    def replica(self) -> Replica:
        """This machine's sync state for the open scopes (built on first use)."""
        with self._building:
            if self._replica is None:
                from memdir.sync.replica import Replica

                root = self.settings.project_root
                self._replica = Replica(
                    self._home / "memory-sync",
                    self.stores.by_scope,
                    self.stores.project_id if root is not None else None,
                    clock=self._clock,
                    lock_timeout=max(self.settings.lock_timeout, 30.0),
                    transport=self._transport,
                    peek_project_id=self.stores.peek_project_id,
                )
            return self._replica

    def close(self) -> None:
        if self._replica is not None:
            self._replica.close()

    def held(self) -> set[tuple[Scope, str]]:
        """The notes held back by a sync conflict, as (scope, id)."""
        if self._replica is None and not self._synced_before():
            # Never synced here: nothing is held, and the sync code (pydantic's models,
            # ~0.1 s) stays unloaded for a command that only reads.
            return set()
        return self.replica.held()

    def _synced_before(self) -> bool:
        """True when a scope open here has sync state (the file the replica would read)."""
        root = self._home / "memory-sync"
        return any((root / f"{s.state_key}.sqlite").exists() for s in self.stores.by_scope.values())

    def run(
        self, scope: Scope | str | None = None, *, abort: threading.Event | None = None
    ) -> SyncRun:
        """One sync pass now (both scopes unless `scope`); `abort` stops it between requests."""
        chosen = parse_scope(scope) if scope is not None else None
        return self.replica.run((chosen,) if chosen is not None else None, abort=abort)

    def status(self) -> SyncStatus:
        """Whether sync is on, the account, and each scope's state."""
        return self.replica.status()

    def login(self, server: str, token: str) -> SyncStatus:
        """Check `token` with the server at `server` and store it (0600) for later passes."""
        return self.replica.login(server, token)

    def logout(self) -> bool:
        """Remove the stored sign-in; False when there was none."""
        return self.replica.logout()

    def switch(self, on: bool) -> SyncStatus:
        """Turn sync on or off for this user on this machine (persisted)."""
        return self.replica.set_enabled(on)

    # -- teams (§12) -------------------------------------------------------------------

    def team_create(self, team: str, *, encrypted: bool = False) -> TeamDoc:
        """Create a team on the server this machine signs in to; you become its owner.
        `encrypted`: its notes are end-to-end encrypted (needs this home's keyring)."""
        return self.replica.create_team(team, encrypted=encrypted)

    def team_enrol(self, team: str) -> TeamDoc:
        """Make this home's member key yours in an end-to-end encrypted team, replacing the
        one enrolled (another member's next sync wraps the team's keys for it)."""
        return self.replica.enrol_team_key(team)

    def team(self, team: str) -> TeamDoc:
        """A team you belong to: members and roles, revocations, and its history (audit)."""
        return self.replica.team(team)

    def team_change(
        self, team: str, action: TeamAction | str, member: str, role: str | None = None
    ) -> TeamDoc:
        """Add, remove, set_role, transfer or revoke a member (the server checks your role)."""
        return self.replica.change_team(team, str(action), member, role)

    def team_link(self, team: str | None, *, move: bool = False) -> SyncStatus:
        """Sync this project's notes as the team's shared notes (None: as your own again)."""
        return self.replica.link_team(team, move=move)

    def conflicts(self) -> builtins.list[ConflictView]:
        """Every note held back by a sync conflict, with its three versions."""
        return self.replica.conflicts()

    def draft(self, id: str, scope: Scope | str | None = None) -> str:
        """A merged draft of a conflicted note (conflict markers where the sides clash)."""
        return self.replica.draft(id, parse_scope(scope) if scope is not None else None)

    def resolve(
        self,
        id: str,
        keep: KeepSide | str | None = None,
        *,
        text: str | None = None,
        scope: Scope | str | None = None,
    ) -> Resolution:
        """Settle a conflict: keep `local`, `server` or `both`, or write the edited `text`."""
        chosen = parse_scope(scope) if scope is not None else None
        return self.replica.resolve(id, keep=keep, text=text, scope=chosen)

    def commit_batch(
        self,
        writes: Mapping[str, Note | None],
        *,
        scope: Scope | str,
        reason: str = "consolidation",
        expected: Mapping[str, str] | None = None,
        audit: Sequence[tuple[str, Mapping[str, str | int | None]]] = (),
    ) -> BatchResult:
        """Write a batch nobody reviews note by note (note id -> note, None: delete). With
        sync on for the scope, the batch goes to the server first, checked against the
        manifest version, and is written here only once accepted (§7.3); otherwise it is
        written here directly, all or nothing, its `audit` entries with it in one durable
        step. Replaced and deleted versions are backed up.

        With `expected` (id -> the revision of its file when the batch was made; "" for no
        file), the batch is refused (Conflict, nothing written) when any of those files has
        changed since; through the server first, a note edited here after the check leaves
        the whole batch to the next sync pass (`skipped`).
        """
        from memdir.sync.batch import BatchResult, write_all

        chosen = parse_scope(scope) or Scope.PROJECT
        for note_id, note in writes.items():
            if note is not None and note.id != note_id:
                raise InvalidInput(f"batch entry {note_id} holds note {note.id}")
        synced = self.replica.commit_first(chosen, writes, reason, expected=expected, audit=audit)
        store = self.stores.store(chosen)
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

    def background(self, *, budget_per_minute: int = 8, debounce: float = 3.0) -> SyncCoordinator:
        """A §7.2 coordinator for this process's scopes; the caller starts and stops it.

        Writes through this memory schedule an upload about three seconds later; each
        pass runs on a memory of its own in the coordinator's thread. The budget counts
        passes: a pass is one request when nothing changed and two or three otherwise,
        so eight passes keep the process near twenty requests a minute.
        """
        from memdir.sync.scheduler import SyncCoordinator

        keys = self.replica.keys()
        account = self.replica.account

        def run_pass(key: str, abort: threading.Event) -> bool:
            scope = keys[key]
            with self._reopen() as memory:
                run = memory.sync.run(scope, abort=abort)
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

            self.stores.store(scope).on_change(touched)
        return coordinator
