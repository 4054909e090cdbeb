"""When the disk refuses the index's writes: which errors say so, in plain words, and which
notes an index that could not be brought up to date is behind on (and, for doctor, where
an index does not hold what the files hold).

A query must still be answered then (§3: the index is derived, the files are canonical):
the failed refresh has been rolled back, so the index holds what it held before, and
`behind` names the notes whose files it no longer matches — added, changed or removed
since — so the caller can leave them out rather than return a note that is gone or text
that is no longer the note's.

Only the index's own errors are refusals: SQLite's, and the operating system's on the
index's files (the database, its log, shared memory and lock, the folders holding them).
A note file that cannot be read (another user's file, an I/O error) is a problem of that
file: the index leaves the note out, and `doctor` reports the file ("cannot read").
"""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import IntegrityError
from memdir.index.rows import Stamp, changed_ns

__all__ = ["Behind", "behind", "mismatches", "refusal"]

#: SQLite's primary result codes that mean the disk (or its permissions) refused.
_SQLITE_REFUSALS = {
    sqlite3.SQLITE_FULL: "the disk is full",
    sqlite3.SQLITE_READONLY: "the index file is read-only",
    sqlite3.SQLITE_CANTOPEN: "the index file cannot be opened",
    sqlite3.SQLITE_IOERR: "the disk reported an I/O error",
    sqlite3.SQLITE_PERM: "permission denied",
}

_OS_REFUSALS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EIO: "the disk reported an I/O error",
}

#: Free space below which an unspecific error (an I/O error, a file that cannot be
#: opened) is put down to a full disk: SQLite needs room for its log and shared memory.
_NEARLY_FULL = 1 << 20


def _disk_state(path: Path) -> str | None:
    """What the file system holding `path` says about itself: read-only, full, or not ours."""
    where = path
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        st = os.statvfs(where)
    except OSError:
        return None
    if st.f_flag & os.ST_RDONLY:
        return "the file system is read-only"
    if st.f_bavail * st.f_frsize < _NEARLY_FULL:
        return "the disk is full"
    if not os.access(where, os.W_OK):
        return "permission denied"
    return None


def _of_index(exc: OSError, path: Path) -> bool:
    """Whether `exc` was met on the index at `path`: on its database, log, shared memory or
    lock file, or on a folder it is created in (an error naming no file counts too)."""
    names = [n for n in (exc.filename, exc.filename2) if n is not None]
    if not names:
        return True
    own = path.resolve()
    for name in names:
        if not isinstance(name, str | bytes | os.PathLike):
            return True  # a file descriptor: not a note file's (those are read by path)
        where = Path(os.fsdecode(name)).resolve()
        # The database or a file named after it (-wal, -shm, -journal, .lock), or a folder.
        if str(where).startswith(str(own)) or where in own.parents:
            return True
    return False


def refusal(exc: BaseException, path: Path) -> str | None:
    """Why the disk refused, in plain words, when `exc` (met writing the index at `path`)
    means it did — full, read-only, no access, an I/O error; None for any other error,
    and for an operating system error on a file that is not the index's (a note file)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(exc, sqlite3.DatabaseError) and code is not None:
        said = _SQLITE_REFUSALS.get(code & 0xFF)
        if said is None:
            return None
        full = code & 0xFF == sqlite3.SQLITE_FULL
    elif isinstance(exc, OSError) and exc.errno in _OS_REFUSALS and _of_index(exc, path):
        said = _OS_REFUSALS[exc.errno]
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
    else:
        return None
    return said if full else _disk_state(path) or said


@dataclass(frozen=True, slots=True)
class Behind:
    """The notes whose files an index does not hold as they are now."""

    #: Notes added or changed since the index was last updated (it holds an older
    #: version of them, or none).
    changed: frozenset[str] = frozenset()
    #: Notes the index still holds whose files are gone.
    removed: frozenset[str] = frozenset()
    #: Notes the index holds whose files cannot be read now: what it holds of them cannot
    #: be checked, so it is not returned (`doctor` reports the files).
    unreadable: frozenset[str] = frozenset()

    @property
    def ids(self) -> frozenset[str]:
        """Every note whose indexed entry must not be returned."""
        return self.changed | self.removed | self.unreadable


def behind(
    known: Mapping[str, tuple[Stamp, int, str]],
    stamps: Mapping[str, Stamp],
    read_bytes: Callable[[str], bytes | None],
    *,
    racy_ns: int,
) -> Behind:
    """Which notes an index holding `known` (note id → stamp, indexed-at, revision) is
    behind on, given the files' `stamps` now.

    A file whose stamp matches (and was indexed more than `racy_ns` after it was
    written) is taken as indexed; any other is read and compared by revision (a file
    `read_bytes` cannot read, raising OSError, is `unreadable`).
    """
    changed: set[str] = set()
    unreadable: set[str] = set()
    removed = {note_id for note_id in known if note_id not in stamps}
    for note_id, stamp in stamps.items():
        seen = known.get(note_id)
        if seen is None:
            changed.add(note_id)
            continue
        if seen[0] == stamp and seen[1] - changed_ns(stamp) >= racy_ns:
            continue
        try:
            data = read_bytes(note_id)
        except (OSError, IntegrityError):  # the note file's problem, not the index's
            unreadable.add(note_id)
            continue
        if data is None:  # removed since the listing
            removed.add(note_id)
        elif hashlib.sha256(data).hexdigest() != seen[2]:
            changed.add(note_id)
    return Behind(frozenset(changed), frozenset(removed), frozenset(unreadable))


def mismatches(
    indexed: Mapping[str, str],
    stamps: Mapping[str, Stamp],
    read_bytes: Callable[[str], bytes | None],
) -> list[str]:
    """Where an index holding `indexed` (note id → revision) does not hold what the files
    (listed in `stamps`) hold now, in plain words; every file is read.

    A file that cannot be read is not reported (doctor reports the file) unless the
    index still holds its note: it must not, since what it holds cannot be checked.
    """
    out: list[str] = []
    for note_id in sorted(stamps):
        try:
            data = read_bytes(note_id)
        except (OSError, IntegrityError):  # unreadable, or a sealed file that does not open
            if note_id in indexed:
                out.append(f"the index holds note {note_id}, whose file cannot be read")
            continue
        if data is None:
            continue  # removed since the listing
        rev, held = hashlib.sha256(data).hexdigest(), indexed.get(note_id)
        if held is None:
            out.append(f"note {note_id} is not in the index")
        elif held != rev:
            out.append(
                f"the index holds note {note_id} at revision {held[:12]}, its file is at {rev[:12]}"
            )
    out += [
        f"the index holds note {i}, which has no file" for i in sorted(set(indexed) - set(stamps))
    ]
    return out
