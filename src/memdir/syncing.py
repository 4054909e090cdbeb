"""Sync (§7) on the `Memory` facade: sign-in, the switch, passes, status and conflicts.

A mixin like `memdir.upkeep`: thin methods over `memdir.sync.service.SyncService`,
so the CLI, the MCP host, the web page and the scheduler all go through `Memory`.
"""

from __future__ import annotations

import builtins
import threading

from memdir.core import Scope, parse_scope
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
