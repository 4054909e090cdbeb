"""The state one sync comparison works on: both sides, the plan it makes, and its report."""

from __future__ import annotations

from dataclasses import dataclass, field

from memdir.core import Note, parse_note
from memdir.errors import MemdirError
from memdir.store import ScopeStore
from memdir.sync.baseline import RemoteEntry
from memdir.sync.protocol import Change

__all__ = [
    "LocalFiles",
    "PassReport",
    "Plan",
    "ServerView",
    "Sides",
]


@dataclass(slots=True)
class PassReport:
    """What one pass of one scope did."""

    scope: str
    version: int | None = None
    unchanged: bool = False
    pulled: list[str] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    deleted_here: list[str] = field(default_factory=list)
    deleted_there: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    held: dict[str, str] = field(default_factory=dict)
    requests: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0

    @property
    def changed(self) -> bool:
        """True when anything moved in either direction."""
        return bool(
            self.pulled or self.pushed or self.merged or self.deleted_here or self.deleted_there
        )


@dataclass(slots=True)
class ServerView:
    """The server's side as one snapshot (plus fetched texts) shows it."""

    version: int
    #: note id -> revision (of the plaintext, for an encrypted scope: `memdir.sync.wire`)
    live: dict[str, str]
    tombstones: dict[str, str]
    #: revision -> text (plaintext, for an encrypted scope)
    texts: dict[str, bytes]
    #: the manifest as the server lists it (server revisions)
    remote: dict[str, RemoteEntry]
    #: note id -> the server's revision of each live note (`live` for a plain scope)
    wire: dict[str, str] = field(default_factory=dict)
    #: live notes whose server text is plain (its `hash` is no stand-in for the rev)
    plain: set[str] = field(default_factory=set)
    #: note id -> why its server text cannot be opened here (an encrypted team's: held)
    unreadable: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Plan:
    """What one comparison decided: local writes now, uploads, and writes after uploads."""

    pulls: list[tuple[str, bytes]] = field(default_factory=list)
    local_deletes: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    #: note id -> bytes to write here once the server accepted the upload (merges)
    after: dict[str, bytes] = field(default_factory=dict)
    #: note id -> the revision both sides hold (None: deleted on both)
    agreed: dict[str, str | None] = field(default_factory=dict)
    merged: list[str] = field(default_factory=list)
    #: notes held by a conflict before this pass
    held: set[str] = field(default_factory=set)


class LocalFiles:
    """This machine's note files: bytes and revisions, each parsed on first use."""

    def __init__(self, store: ScopeStore, data: dict[str, bytes], revs: dict[str, str]) -> None:
        self._store = store
        self.data = data
        self.revs = revs
        self.unknown: set[str] = set()
        self._notes: dict[str, Note] = {}

    def note(self, note_id: str) -> Note | None:
        """The parsed note (None: no such file, or it cannot be parsed — then `unknown`)."""
        found = self._notes.get(note_id)
        if found is not None or note_id not in self.data or note_id in self.unknown:
            return found
        try:
            found = parse_note(self.data[note_id], file_id=note_id)
        except MemdirError:
            self.unknown.add(note_id)
            return None
        found = found.located(self._store.scope, self._store.directory.file_for(note_id))
        self._notes[note_id] = found
        return found


@dataclass(slots=True)
class Sides:
    """Both sides of one comparison: this machine's files, the baselines, the server."""

    local: LocalFiles
    bases: dict[str, str]
    server: ServerView

    @property
    def revs(self) -> dict[str, str]:
        """Revision of every local note file."""
        return self.local.revs
