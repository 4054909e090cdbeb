"""Undo for a write whose later steps fail: the outcome a write reports is the truth.

A note write has several steps — the note file, its history line and object, the audit
entry — and a full disk or an I/O error can stop it after the first has landed. Each
step that changes something registers how to undo it; when a later step raises, the
steps are undone newest first, so the caller can report "nothing was written" and mean
it. When every step succeeded, `commit` runs the clean-ups that were waiting for that
(removing the old file kept aside for the undo).

Undo steps need no free space: the old note file is kept aside as a hard link (or a
rename, for a removal), so putting it back is a rename; a history line is taken off by
truncating its log. A step that still fails is logged and reported by `undo`; the next
open finds what it left (temp files, a logged version that is not on disk) as a crash
would have left it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Rollback"]

_log = logging.getLogger("memdir.store")


class Rollback:
    """The undo steps and pending clean-ups of one write (or one batch of writes)."""

    def __init__(self) -> None:
        self._undo: list[tuple[str, Callable[[], Any]]] = []
        self._cleanup: list[Callable[[], Any]] = []
        #: Audit entries of the steps so far (a backup taken), written in one append with
        #: the write's own entry: an entry is never written for a step that is then undone.
        self.audit: list[tuple[str, Mapping[str, str | int | None]]] = []
        #: Set once the write's audit entry is durable: from then on it is done, and is kept
        #: whatever is raised after (an interrupt while the audit head is being signed).
        self.sealed = False

    def seal(self) -> None:
        """Mark the write as done (its audit entry is durable): `undo` does nothing now."""
        self.sealed = True

    def on_undo(self, what: str, step: Callable[[], Any]) -> None:
        """Register how to undo a change just made (`what` names it in a failure report)."""
        self._undo.append((what, step))

    def on_commit(self, step: Callable[[], Any]) -> None:
        """Register a clean-up that may only run once every step has succeeded."""
        self._cleanup.append(step)

    def undo(self) -> list[str]:
        """Undo every registered change, newest first; return those that could not be undone.

        The pending clean-ups are dropped: what they would remove is what the undo put back.
        Once sealed, nothing is undone: the clean-ups run as on `commit`.
        """
        if self.sealed:
            self.commit()
            return []
        failed: list[str] = []
        for what, step in reversed(self._undo):
            try:
                step()
            except OSError as exc:
                _log.warning("could not undo %s: %s", what, exc.strerror or exc)
                failed.append(what)
        self._undo.clear()
        self._cleanup.clear()
        self.audit.clear()
        return failed

    def commit(self) -> None:
        """Forget the undo steps and run the clean-ups (best effort: a leftover is a temp file
        that the next write under the directory lock removes)."""
        self._undo.clear()
        for step in self._cleanup:
            try:
                step()
            except OSError as exc:
                _log.warning("could not clean up after a write: %s", exc.strerror or exc)
        self._cleanup.clear()
