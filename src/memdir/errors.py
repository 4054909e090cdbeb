"""memdir's one rooted exception tree and the single map from errors to CLI exit codes.

::

    MemdirError                 anything memdir raises on purpose        exit 1
    ├── InvalidInput            a malformed id, argument or value         exit 2
    │   └── ConfigError         a config file with an unknown key/value   exit 2
    ├── NotFound                no note, revision or backup by that name  exit 3
    ├── Refused                 the request is understood but not allowed exit 4
    │   ├── SecretRefused       the credential guard found a secret       exit 4
    │   ├── LimitExceeded       a §1.5 limit would be exceeded            exit 4
    │   ├── Locked              an encrypted store is locked (unlock it)  exit 4
    │   ├── WrongPassword       the password does not open the keyring    exit 4
    │   └── SyncRefused         sync cannot run: off, signed out, wrong   exit 4
    │       │                   account, erased account, bad token
    │       └── IncompatibleVersion  client and server protocols differ   exit 4
    ├── Conflict                the state changed under the request       exit 5
    ├── Busy                    another writer holds the directory lock   exit 6
    ├── ParseError              a note file on disk cannot be parsed      exit 1
    ├── IntegrityError          a verification (audit, forget) failed     exit 7
    ├── SyncFailed              the sync server is unreachable or failing exit 8
    │   └── RateLimited         the server said 429; retry after a while  exit 8
    ├── DiskError               the disk refused: full, I/O, read-only    exit 9
    ├── EmbedderUnavailable     no usable embedder (memdir.embed)         exit 1
    └── EmbeddingFailed         an embedding request failed (memdir.embed) exit 1

A lower layer says what happened in the message and, when the caller can do something
about it, attaches a `Remedy` as `hint`; each adapter renders the hint in its own terms
(a command for the CLI, a sentence naming the tool or the user's step for MCP). Messages
themselves never spell out CLI syntax.

Each class also has a `kind` (`ErrorKind`), the word the MCP tools and the web page's API
answer with (`kind_of`): ``invalid`` (InvalidInput), ``not_found``, ``refused`` (Refused
and below), ``conflict``, ``busy``, ``disk``, ``damaged`` (ParseError, IntegrityError),
``unavailable`` (SyncFailed, and the embedder's errors in memdir.embed); anything else is
``internal``.
"""

from __future__ import annotations

import errno
import sys
from enum import StrEnum

__all__ = [
    "EXIT_BUSY",
    "EXIT_CONFLICT",
    "EXIT_DISK",
    "EXIT_ERROR",
    "EXIT_INTEGRITY",
    "EXIT_NOT_FOUND",
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_SYNC",
    "EXIT_USAGE",
    "Busy",
    "ConfigError",
    "Conflict",
    "DiskError",
    "ErrorKind",
    "IncompatibleVersion",
    "IntegrityError",
    "InvalidInput",
    "LimitExceeded",
    "Locked",
    "MemdirError",
    "NotFound",
    "ParseError",
    "RateLimited",
    "Refused",
    "Remedy",
    "SecretRefused",
    "SyncFailed",
    "SyncRefused",
    "WrongPassword",
    "describe",
    "disk_error",
    "exit_code_for",
    "kind_of",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_REFUSED = 4
EXIT_CONFLICT = 5
EXIT_BUSY = 6
EXIT_INTEGRITY = 7
EXIT_SYNC = 8
EXIT_DISK = 9


class ErrorKind(StrEnum):
    """What kind of failure an error is, as the MCP tools and the web API name it."""

    #: An argument is malformed (a wrong type, an id that cannot be one, a bad value).
    INVALID = "invalid"
    #: No note, revision or backup by that name (or one this caller may not see).
    NOT_FOUND = "not_found"
    #: Understood but not allowed: access, the credential guard, a limit, sync refusing.
    REFUSED = "refused"
    #: The state changed under the request: read again, then retry.
    CONFLICT = "conflict"
    #: Another process holds the note directory's lock: retry in a moment.
    BUSY = "busy"
    #: The disk refused: full, read-only, an I/O error.
    DISK = "disk"
    #: A file memdir keeps cannot be read as one: a damaged note, index or log.
    DAMAGED = "damaged"
    #: A service memdir needs is not answering: the sync server or the embedder.
    UNAVAILABLE = "unavailable"
    #: A failure memdir did not expect (a bug): the log has the details.
    INTERNAL = "internal"


class Remedy(StrEnum):
    """What the caller can do next about an error; adapters render it in their own terms."""

    #: Sign in to a sync server.
    SYNC_LOGIN = "sync-login"
    #: Turn sync on.
    SYNC_ON = "sync-on"
    #: Run a sync pass, then try again.
    SYNC_NOW = "sync-now"
    #: Look at the files memdir cannot parse.
    DOCTOR = "doctor"
    #: List the backups to find the right id.
    BACKUPS = "backups"
    #: Verify the audit log.
    AUDIT_VERIFY = "audit-verify"
    #: Ask the user for a new MCP grant.
    MCP_GRANT = "mcp-grant"
    #: Run the same request from the project the thing belongs to.
    OTHER_PROJECT = "other-project"
    #: Upgrade memdir.
    UPGRADE = "upgrade"
    #: Unlock the encrypted store (the user enters the password).
    UNLOCK = "unlock"


#: Each remedy in plain words, for where an error becomes text no adapter renders (a
#: status line, an extraction result); adapters say it in their own terms instead.
_PLAIN: dict[Remedy, str] = {
    Remedy.SYNC_LOGIN: "sign in to a sync server first",
    Remedy.SYNC_ON: "turn sync on first",
    Remedy.SYNC_NOW: "sync first, then try again",
    Remedy.DOCTOR: "the health check (doctor) lists such files",
    Remedy.BACKUPS: "the list of backups has the ids",
    Remedy.AUDIT_VERIFY: "verify the audit log",
    Remedy.MCP_GRANT: "a new MCP grant is needed",
    Remedy.OTHER_PROJECT: "do it from the project it belongs to",
    Remedy.UPGRADE: "a newer memdir is needed",
    Remedy.UNLOCK: "the store must be unlocked first (by its password)",
}


class MemdirError(Exception):
    """Raised for any failure memdir reports on purpose; the root of the tree."""

    exit_code: int = EXIT_ERROR
    #: What kind of failure it is (`kind_of`); subclasses that memdir raises set their own.
    kind: ErrorKind = ErrorKind.INTERNAL
    #: What the caller can do next (set by `__init__`; the class default is "nothing").
    hint: Remedy | None = None

    def __init__(self, message: str = "", *, hint: Remedy | None = None) -> None:
        super().__init__(message)
        #: What the caller can do next, rendered by each adapter (None: nothing to suggest).
        self.hint = hint


class InvalidInput(MemdirError):
    """Raised when an id, argument or value is malformed (traversal ids, bad types, …)."""

    exit_code = EXIT_USAGE
    kind = ErrorKind.INVALID


class ConfigError(InvalidInput):
    """Raised when a config file has an unknown key or an invalid value; names the key."""


class NotFound(MemdirError):
    """Raised when no note, revision or backup matches the name given."""

    exit_code = EXIT_NOT_FOUND
    kind = ErrorKind.NOT_FOUND


class Refused(MemdirError):
    """Raised when a request is understood but not allowed; nothing was written."""

    exit_code = EXIT_REFUSED
    kind = ErrorKind.REFUSED


class SecretRefused(Refused):
    """Raised when the credential guard finds something that looks like a secret.

    The message names the kind of secret and where it is (field and line), never the value.
    """

    def __init__(self, message: str, findings: tuple[tuple[str, str, int], ...] = ()) -> None:
        super().__init__(message)
        #: (kind, field, line) triples, without the secret values.
        self.findings = findings


class LimitExceeded(Refused):
    """Raised when a write would exceed a §1.5 limit (note count, note size)."""


class Locked(Refused):
    """Raised when an encrypted store is locked (no unlock agent holds its key); nothing
    was read or written."""


class WrongPassword(Refused):
    """Raised when a password or recovery key does not open the store's keyring."""


class Conflict(MemdirError):
    """Raised when the state changed under a request (a stale plan, a case-only id clash)."""

    exit_code = EXIT_CONFLICT
    kind = ErrorKind.CONFLICT


class Busy(MemdirError):
    """Raised when another process holds a note directory's write lock past the timeout."""

    exit_code = EXIT_BUSY
    kind = ErrorKind.BUSY


class ParseError(MemdirError):
    """Raised when a note file cannot be parsed (bad JSON, no frontmatter, invalid UTF-8)."""

    kind = ErrorKind.DAMAGED


class IntegrityError(MemdirError):
    """Raised when a verification fails: a broken audit chain, a forget that left traces."""

    exit_code = EXIT_INTEGRITY
    kind = ErrorKind.DAMAGED


class SyncFailed(MemdirError):
    """Raised when the sync server cannot be reached or fails (5xx, timeouts); notes stay safe."""

    exit_code = EXIT_SYNC
    kind = ErrorKind.UNAVAILABLE

    def __init__(
        self, message: str, *, retry_after: float | None = None, hint: Remedy | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.retry_after = retry_after


class DiskError(MemdirError):
    """Raised when the disk refuses a read or write: full, read-only, an I/O error, no access."""

    exit_code = EXIT_DISK
    kind = ErrorKind.DISK


#: The errno values that mean "the disk (or its permissions) refused", in plain words.
_DISK_ERRNOS: dict[int, str] = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EIO: "the disk reported an I/O error",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}


#: What SQLite says when the disk refuses (it raises OperationalError, not OSError).
_SQLITE_DISK = {
    "database or disk is full": "the disk is full",
    "disk i/o error": "the disk reported an I/O error",
    "attempt to write a readonly database": "the file system is read-only",
    # SQLite's word for any refused open: a full or read-only disk, or no permission.
    "unable to open database file": "a database file cannot be opened or created (the disk "
    "may be full or read-only)",
}


def disk_error(
    exc: BaseException, outcome: str = "what was being written may be incomplete"
) -> DiskError | None:
    """A clear `DiskError` for an error that means the disk refused; None for others.

    `outcome` says what the failure left, as a write that undid its steps knows.
    """
    reason: str | None = None
    where = ""
    if isinstance(exc, OSError):
        reason = _DISK_ERRNOS.get(exc.errno or 0)
        where = f" ({exc.filename})" if exc.filename else ""
    sqlite = sys.modules.get("sqlite3")  # never imported here: only raised once loaded
    if sqlite is not None and isinstance(exc, sqlite.OperationalError):
        reason = _SQLITE_DISK.get(str(exc).strip().lower())
    if reason is None:
        return None
    return DiskError(f"{reason}{where}; {outcome}", hint=Remedy.DOCTOR)


class RateLimited(SyncFailed):
    """Raised when the sync server answers 429; `retry_after` holds its Retry-After seconds."""


class SyncRefused(Refused):
    """Raised when sync cannot run as asked: switched off, signed out, rebinding, bad token."""


class IncompatibleVersion(SyncRefused):
    """Raised when the client and the sync server speak no common protocol version."""


def describe(error: BaseException) -> str:
    """An error as one line of plain text: its message and, if it has one, its remedy."""
    text = str(error) or type(error).__name__
    hint = error.hint if isinstance(error, MemdirError) else None
    return f"{text} ({_PLAIN[hint]})" if hint is not None else text


def kind_of(error: BaseException) -> ErrorKind:
    """The kind of a failure (`internal` for anything memdir did not raise on purpose)."""
    return error.kind if isinstance(error, MemdirError) else ErrorKind.INTERNAL


def exit_code_for(error: BaseException) -> int:
    """Map any exception to the CLI exit code (1 for errors memdir did not raise on purpose)."""
    if isinstance(error, MemdirError):
        return error.exit_code
    return EXIT_ERROR
