"""What extraction needs from its host (a `memdir.Memory`): a narrow Protocol, so this
package depends on no facade and the facade may depend on it."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from memdir.config import Settings
from memdir.core import Note, NoteType, Scope
from memdir.store import SaveOutcome
from memdir.store.notes import CurrentNote, WriteResult

if TYPE_CHECKING:
    from memdir.retrieve import Hit

__all__ = ["ExtractHost", "ExtractNotes"]


class ExtractNotes(Protocol):
    """The note operations an extraction pass uses (`Memory.notes`)."""

    def remember(
        self,
        summary: str,
        body: str | None = None,
        type: NoteType | str | None = None,
        tags: str | Iterable[str] | None = None,
        scope: Scope | str | None = None,
        id: str | None = None,
        *,
        supersedes: Iterable[str] | None = None,
        private: bool | None = None,
    ) -> WriteResult:
        """Create a note, or update note `id`."""
        ...

    def list(self) -> builtins.list[Note]:
        """Every note, most recently updated first."""
        ...

    def read_current(self, id: str, scope: Scope | str | None = None) -> CurrentNote:
        """Note `id` with the revision of the bytes it was parsed from."""
        ...

    def save_over(
        self, note: Note, *, scope: Scope, revision: str, backup_reason: str
    ) -> SaveOutcome:
        """Replace a note only if its file is still at `revision`, backing up the old one."""
        ...


class ExtractHost(Protocol):
    """What an extraction pass uses of its memory: the settings, notes and search."""

    @property
    def settings(self) -> Settings:
        """The settings in force (limits, `memory.autoExtract`, the `[llm]` endpoint)."""
        ...

    @property
    def notes(self) -> ExtractNotes:
        """The notes."""
        ...

    def search(self, query: str, limit: int = 10, *, method: str = "hybrid") -> builtins.list[Hit]:
        """Notes best matching `query`."""
        ...
