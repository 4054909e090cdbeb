"""memdir's closed vocabularies: every word a caller may choose, as one enum each.

Adapters derive their choices from these (click `Choice`, MCP input schemas), and the
layers below compare members, never loose strings. `NoteType` and `Scope` live with the
note model (`memdir.core.note`) and are re-exported here so this module lists them all.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

from memdir.core.note import NoteType, Scope
from memdir.errors import InvalidInput

__all__ = [
    "AccessLevel",
    "DraftKind",
    "ExportFormat",
    "FindingKind",
    "ImportKind",
    "ItemStatus",
    "KeepSide",
    "NoteType",
    "Scope",
    "SearchMethod",
    "SearchMode",
    "StorageBackend",
    "TeamRole",
    "WriteEvent",
    "choices",
    "parse_choice",
]

_E = TypeVar("_E", bound=StrEnum)


class FindingKind(StrEnum):
    """What a tidy-up finding is about (§6); CLI choices and MCP schemas derive from it."""

    SAME_TOPIC = "same_topic"
    BROKEN_LINK = "broken_link"
    MISSING_FILE = "missing_file"
    UNUSED = "unused"
    TOO_LONG = "too_long"
    CONTRADICTION = "contradiction"


class DraftKind(StrEnum):
    """How a merge's draft is made (§6): all originals concatenated, or by the `[llm]` model."""

    CONCAT = "concat"
    LLM = "llm"


class ImportKind(StrEnum):
    """The sources `memdir import` reads (§5), in the order detection tries them."""

    MEMDIR = "memdir"
    CLAUDE_CODE = "claude-code"
    BASIC_MEMORY = "basic-memory"
    MCP_MEMORY = "mcp-memory"
    MEM0 = "mem0"
    CODEX = "codex"
    MARKDOWN = "markdown"


class ExportFormat(StrEnum):
    """What `memdir export` writes (§5): an archive, or a plain folder."""

    TAR_GZ = "tar.gz"
    ZIP = "zip"
    MARKDOWN = "markdown"


class SearchMode(StrEnum):
    """How the words of a query must match: any word, every word, or the exact phrase."""

    ANY = "any"
    ALL = "all"
    PHRASE = "phrase"


class SearchMethod(StrEnum):
    """Which ranking a search uses: both fused (default), full-text only, or vectors only."""

    HYBRID = "hybrid"
    LEXICAL = "lexical"
    VECTOR = "vector"


class KeepSide(StrEnum):
    """Which side settles a sync conflict (§7.4)."""

    LOCAL = "local"
    SERVER = "server"
    BOTH = "both"


class ItemStatus(StrEnum):
    """Where a task or goal of the state store stands; ``done`` and ``dropped`` are closed."""

    OPEN = "open"
    ACTIVE = "active"
    BLOCKED = "blocked"
    DONE = "done"
    DROPPED = "dropped"

    @property
    def closed(self) -> bool:
        """True for the statuses `close` sets."""
        return self in (ItemStatus.DONE, ItemStatus.DROPPED)


class TeamRole(StrEnum):
    """A member's role in a team (§12): who may read, write and manage its members."""

    OWNER = "owner"
    ADMIN = "admin"
    EDITOR = "editor"
    READER = "reader"


class StorageBackend(StrEnum):
    """Where the sync server keeps its documents (§7.5)."""

    DIR = "dir"
    POSTGRES = "postgres"
    S3 = "s3"


class AccessLevel(StrEnum):
    """What an MCP caller may do (§4.4), weakest first: the order is the ranking."""

    READ = "read"
    READ_WRITE = "read_write"
    READ_WRITE_DELETE = "read_write_delete"

    @property
    def rank(self) -> int:
        """0 for read, up to 2 for read_write_delete."""
        return list(AccessLevel).index(self)

    def at_most(self, other: AccessLevel) -> AccessLevel:
        """The weaker of the two levels."""
        return self if self.rank <= other.rank else other


class WriteEvent(StrEnum):
    """Why a note file changed, as recorded in its history and told to change listeners."""

    WRITE = "write"
    OBSERVED = "observed"
    RESTORE = "restore"
    FORGET = "forget"
    PURGE = "purge"
    RESOLVE = "resolve"
    RESOLVE_DELETE = "resolve-delete"
    CONSOLIDATE = "consolidate"
    SYNC = "sync"
    SYNC_DELETE = "sync-delete"

    @property
    def from_sync(self) -> bool:
        """True for a change a sync pull made (not a local write to upload)."""
        return self in (WriteEvent.SYNC, WriteEvent.SYNC_DELETE)


def choices(vocabulary: type[StrEnum]) -> tuple[str, ...]:
    """The members' values in declaration order (for click choices and messages)."""
    return tuple(member.value for member in vocabulary)


def parse_choice(vocabulary: type[_E], value: object, what: str) -> _E:
    """The member of `vocabulary` named `value`; InvalidInput naming `what` and the choices."""
    if isinstance(value, vocabulary):
        return value
    if isinstance(value, str):
        try:
            return vocabulary(value)
        except ValueError:
            pass
    raise InvalidInput(f"{what} must be one of {', '.join(choices(vocabulary))}, got {value!r}")
