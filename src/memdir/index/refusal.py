"""When the disk refuses the index's writes: which errors say so, in plain words, and which
notes an index that could not be brought up to date is behind on.

A query must still be answered then (§3: the index is derived, the files are canonical):
the failed refresh has been rolled back, so the index holds what it held before, and
`behind` names the notes whose files it no longer matches — added, changed or removed
since — so the caller can leave them out rather than return a note that is gone or text
that is no longer the note's.
"""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Behind", "behind", "refusal"]

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


def refusal(exc: BaseException, path: Path) -> str | None:
    """Why the disk refused, in plain words, when `exc` (met writing the index at `path`)
    means it did — full, read-only, no access, an I/O error; None for any other error."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(exc, sqlite3.DatabaseError) and code is not None:
        said = _SQLITE_REFUSALS.get(code & 0xFF)
        if said is None:
            return None
        full = code & 0xFF == sqlite3.SQLITE_FULL
    elif isinstance(exc, OSError) and exc.errno in _OS_REFUSALS:
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

    @property
    def ids(self) -> frozenset[str]:
        """Every note whose indexed entry must not be returned."""
        return self.changed | self.removed


def behind(
    known: Mapping[str, tuple[int, int, int, int, str]],
    stamps: Mapping[str, tuple[int, int, int]],
    read_bytes: Callable[[str], bytes | None],
    *,
    racy_ns: int,
) -> Behind:
    """Which notes an index holding `known` (note id → size, mtime, inode, indexed-at,
    revision) is behind on, given the files' `stamps` now.

    A file whose stamp matches (and was indexed more than `racy_ns` after it was
    written) is taken as indexed; any other is read and compared by revision.
    """
    changed: set[str] = set()
    removed = {note_id for note_id in known if note_id not in stamps}
    for note_id, stamp in stamps.items():
        seen = known.get(note_id)
        if seen is None:
            changed.add(note_id)
            continue
        if seen[:3] == stamp and seen[3] - seen[1] >= racy_ns:
            continue
        data = read_bytes(note_id)
        if data is None:  # removed since the listing
            removed.add(note_id)
        elif hashlib.sha256(data).hexdigest() != seen[4]:
            changed.add(note_id)
    return Behind(frozenset(changed), frozenset(removed))
