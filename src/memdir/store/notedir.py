"""One note directory on disk: listing and parsing `<id>.md` files, writing them atomically.

Scans are cheap when nothing changed: parsed notes are cached by (size, mtime,
inode), so files edited by a person or `git pull` are re-read on the next scan
and nothing else is. A file that cannot be parsed is reported, never touched.

File systems store coarse timestamps (a clock tick, a second, two on FAT), so an
edit made just after a file was read can leave its stamp unchanged. As git does
with "racily clean" files, a stamp is trusted only once the file's mtime is
older than the scan by more than that granularity; until then the bytes are
re-read and compared by revision (cheap: no parse when they are the same).

Note files must be regular files. A symbolic link named like a note (wherever it
points, inside the directory or out of it) is never followed: scans skip it and
report it, reads do not open it (``O_NOFOLLOW``), and writes refuse to replace it.
The directory itself may be a link (the user's choice); only its entries are checked.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memdir.core import Note, Scope, is_valid_id, parse_note, render_note
from memdir.crypto.seal import Kind, is_sealed
from memdir.errors import IntegrityError, Locked, ParseError, Refused, Remedy
from memdir.files.atomic import (
    TEMP_MARKER,
    atomic_write,
    fsync_dir,
    remove_durably,
    remove_quietly,
)
from memdir.files.lock import DirLock
from memdir.store.history import revision_of
from memdir.store.problems import FileProblem
from memdir.store.rollback import Rollback
from memdir.store.sealing import Marker, Sealer, read_marker
from memdir.store.watch import DirectoryWatch

__all__ = ["NoteDirectory", "Scan"]


LOCK_NAME = ".memdir.lock"
_GITIGNORE = (
    "# written by memdir: its write lock and interrupted temp files\n.memdir.lock\n.*.tmp-*\n"
)


@dataclass(frozen=True, slots=True)
class Scan:
    """What a directory holds right now."""

    notes: dict[str, Note]
    problems: tuple[FileProblem, ...]
    #: Notes not loaded because the directory holds more than `maxNotes` files.
    over_limit: int = 0
    #: Revision (SHA-256 of the file bytes) of every loaded note.
    revisions: dict[str, str] = field(default_factory=dict)
    #: Ids whose files were (re-)read by this scan: new or edited since the last one.
    changed: tuple[str, ...] = ()


#: (size, mtime_ns, inode, ctime_ns): the inode-change time catches an edit that puts
#: the old size and mtime back, since no user can set it.
_Stamp = tuple[int, int, int, int]


def stamp_of(st: os.stat_result) -> _Stamp:
    """The stamp of a file from its stat."""
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


def _changed_at(stamp: _Stamp) -> int:
    return max(stamp[1], stamp[3])


_Parsed = tuple[Note, str] | FileProblem
#: (stamp, parsed, revision of the bytes read or None, stamp trusted)
_Cached = tuple[_Stamp, _Parsed, str | None, bool]
#: Coarsest file system timestamp granularity allowed for (FAT: 2 s).
_RACY_NS = 2_000_000_000
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_LINK = "is a symbolic link; note files must be regular files, so memdir does not follow it"


#: What os.link raises when the disk refuses: the write fails then, nothing written yet. Any
#: other error means no hard links here (FAT, FUSE mounts: EPERM, ENOSYS, EOPNOTSUPP…).
_DISK_REFUSED = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})


def _current_bytes(path: Path) -> bytes | None:
    """The bytes at `path` now (None when there is no file); a link there reads as changed."""
    try:
        return _read_file(path)
    except FileNotFoundError:
        return None
    except _Link:
        return b""


def _changed_meanwhile(path: Path) -> OSError:
    return OSError(
        errno.EBUSY, f"{path} was changed by someone else meanwhile, so it is left as it is"
    )


class _Link(Exception):
    """Raised by `_read_file` when the note file is a symbolic link."""


def _read_file(path: Path) -> bytes:
    """The bytes of `path` unless it is a symbolic link (`_Link`); never follows one."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Link from None
        raise
    with os.fdopen(fd, "rb") as f:
        if not _NOFOLLOW and path.is_symlink():  # no O_NOFOLLOW on this platform
            raise _Link
        return f.read()


class NoteDirectory:
    """The `.md` files of one scope; the only code that reads or writes note files."""

    def __init__(self, scope: Scope, path: Path, *, lock_timeout: float, max_notes: int) -> None:
        self.scope = scope
        self.path = path
        self.lock_timeout = lock_timeout
        self.max_notes = max_notes
        self._cache: dict[str, _Cached] = {}
        self._cache_lock = threading.Lock()
        #: (listing, result, when) of the last scan, reused while nothing changed.
        self._last: tuple[dict[str, _Stamp], Scan, int] | None = None
        self._watch: DirectoryWatch | None = None
        self._scan_lock = threading.Lock()
        #: Opens and seals the files of an encrypted directory (the home's; None: the home
        #: has no keyring, so a sealed file here is a problem, not a note).
        self._sealer: Sealer | None = None
        #: Asked for the home's sealer when there is none yet (a keyring made by another
        #: process since this one started: `memdir encrypt` beside a running server).
        self.find_sealer: Callable[[], Sealer | None] = lambda: None

    @property
    def sealer(self) -> Sealer | None:
        """The home's sealer (None: the home has no keyring)."""
        if self._sealer is None:
            self._sealer = self.find_sealer()
        return self._sealer

    @sealer.setter
    def sealer(self, value: Sealer | None) -> None:
        self._sealer = value

    def forget_cache(self) -> None:
        """Drop every note parsed and kept in memory (an encrypted store was locked)."""
        with self._cache_lock:
            self._cache.clear()
            self._last = None

    def marker(self) -> Marker | None:
        """The directory's encryption marker (None: a plain directory)."""
        return read_marker(self.path)

    def encrypted(self) -> bool:
        """Whether this directory is (being) encrypted: its index then lives in memory."""
        try:
            return self.marker() is not None
        except IntegrityError:
            return True  # a damaged marker: treated as sealed, never indexed to disk

    def sealer_for_writes(self) -> Sealer | None:
        """The sealer when writes here are sealed; Refused/IntegrityError when they must be
        but cannot be (no keyring in this home, another key)."""
        marker = self.marker()
        if marker is None or not marker.seals:
            return None
        sealer = self.sealer
        if sealer is None:
            raise Locked(
                f"{self.path} is encrypted, but this memdir home has no keyring to seal "
                "notes with (it was encrypted on another machine)",
                hint=Remedy.UNLOCK,
            )
        sealer.check(marker, self.path)
        return sealer

    def _context(self, note_id: str) -> str:
        """What a sealed note file is bound to: its scope and its id (a file moved to
        another note, or between the project and the user notes, does not open)."""
        return f"{self.scope.value}/{note_id}"

    def unseal(self, note_id: str, data: bytes, path: Path | None = None) -> bytes:
        """The plaintext of a note file's bytes (plain bytes as they are). `Locked` when
        the store is locked; IntegrityError when a sealed file does not open."""
        if not is_sealed(data):
            return data
        where = str(path or self.file_for(note_id))
        sealer = self.sealer
        if sealer is None:
            raise IntegrityError(
                f"{where} is sealed (encrypted), but this memdir home has no keyring to open it"
            )
        return sealer.open(Kind.NOTE, self._context(note_id), data, where=where)

    def convert(self, note_id: str) -> bool:
        """Seal (or, while decrypting, open) one note file in place as the marker says;
        the caller holds the lock. False when the file is already in that form or gone."""
        path = self._replaceable(note_id)
        try:
            raw = _read_file(path)
        except FileNotFoundError:
            return False
        except _Link:
            raise Refused(f"{path} {_LINK}; it is left as it is", hint=Remedy.DOCTOR) from None
        sealer = self.sealer_for_writes()
        if (sealer is not None) == is_sealed(raw):
            return False
        plain = self.unseal(note_id, raw, path)
        sealed = sealer.seal(Kind.NOTE, self._context(note_id), plain) if sealer else plain
        atomic_write(path, sealed)
        return True

    def file_for(self, note_id: str) -> Path:
        """The path of a note's file (the id must already be validated)."""
        return self.path / f"{note_id}.md"

    def exists(self) -> bool:
        """True when the directory exists."""
        return self.path.is_dir()

    def ensure(self) -> None:
        """Create the directory, with a .gitignore for the lock and temp files."""
        self.path.mkdir(parents=True, exist_ok=True)
        ignore = self.path / ".gitignore"
        if not ignore.exists():
            atomic_write(ignore, _GITIGNORE.encode())

    def lock(self) -> DirLock:
        """The directory's exclusive write lock (creates the directory)."""
        self.ensure()
        return DirLock(
            self.path / LOCK_NAME, timeout=self.lock_timeout, label=f"the {self.scope.value} notes"
        )

    def lock_if_present(self, timeout: float) -> DirLock | None:
        """The write lock as `lock` takes it (waiting at most `timeout`), without creating
        anything: None when the directory has no lock file (no memdir write was made here)."""
        path = self.path / LOCK_NAME
        if not path.is_file():
            return None
        return DirLock(path, timeout=timeout, label=f"the {self.scope.value} notes")

    @staticmethod
    def _is_note_name(name: str) -> bool:
        return not name.startswith(".") and name.endswith(".md") and TEMP_MARKER not in name

    def _entries(
        self, links: list[tuple[str, os.stat_result]] | None = None
    ) -> Iterator[tuple[str, os.stat_result]]:
        """Regular files named like notes, with their stat, one at a time (a stat result
        takes ~0.5 kB: 100,000 of them at once would be 50 MB); symbolic links named like
        notes go to `links` (with their own lstat), never followed."""
        try:
            iterator = os.scandir(self.path)
        except FileNotFoundError:
            return
        with iterator:
            for entry in iterator:
                name = entry.name
                if not self._is_note_name(name):
                    continue
                try:
                    if entry.is_symlink():
                        if links is not None:
                            links.append((name, entry.stat(follow_symlinks=False)))
                        continue
                    if not entry.is_file(follow_symlinks=False):
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                yield name, st

    def _parse(
        self,
        name: str,
        path: Path,
        st: os.stat_result,
        known: _Cached | None = None,
        *,
        raise_os: bool = False,
    ) -> tuple[_Parsed, str | None] | None:
        """(parsed note or problem, revision of the bytes read); None when the file is gone.

        When `known` holds the same revision, its parse is reused. A file the disk will not
        read is a problem of the scan, or with `raise_os` the OSError itself (a disk error).
        """
        stem = name[:-3]
        if not is_valid_id(stem):
            return FileProblem(self.scope, path, "file name is not a valid note id"), None
        try:
            data = _read_file(path)
        except _Link:
            return FileProblem(self.scope, path, _LINK), None
        except FileNotFoundError:
            return None  # removed since it was listed: not a problem
        except OSError as exc:
            if raise_os:
                raise
            return FileProblem(self.scope, path, f"cannot read: {exc.strerror}"), None
        try:
            data = self.unseal(stem, data, path)  # a locked store raises Locked: no scan
        except IntegrityError as exc:
            return FileProblem(self.scope, path, str(exc)), None
        rev = revision_of(data)
        if known is not None and known[2] == rev:
            return known[1], rev
        try:
            note = parse_note(data, file_id=stem, mtime_ms=st.st_mtime_ns // 1_000_000)
        except ParseError as exc:
            return FileProblem(self.scope, path, str(exc)), rev
        return (note.located(self.scope, path), rev), rev

    def scan(self) -> Scan:
        """Parse every note file, re-reading only files whose stamp changed; in a watched
        directory, looking only at the files the watch says changed since the last scan.
        An encrypted directory's notes are served only while it is unlocked (`Locked`),
        even those parsed before and unchanged since."""
        if self.encrypted():
            sealer = self.sealer
            if sealer is None:
                raise Locked(
                    f"the notes in {self.path} are encrypted and this memdir home has no "
                    "keyring for them: unlocking with their password or recovery key takes "
                    "up the keyring the folder carries",
                    hint=Remedy.UNLOCK,
                )
            sealer.keys()
        watch = self._watch
        if watch is None:
            return self._full_scan()
        with self._scan_lock:  # taking the changes and applying them is one step
            names = watch.changes("scan")
            try:
                if names is not None:
                    quick = self._rescan(names)
                    if quick is not None:
                        return quick
                return self._full_scan()
            except BaseException:
                watch.reset("scan")  # what it took was not taken in: the next looks at all
                raise

    def _rescan(self, names: set[str]) -> Scan | None:
        """The last scan with the files `names` looked at again (None: a full scan is
        needed: there was none yet, or some notes are left out above `max_notes`)."""
        with self._cache_lock:
            last = self._last
            if last is None or last[1].over_limit:
                return None
            if not names:
                return last[1]  # nothing changed: nothing copied either
            cache = dict(self._cache)
        listing, result = dict(last[0]), last[1]
        notes, revisions = dict(result.notes), dict(result.revisions)
        problems = {p.path.name: p for p in result.problems}
        changed: list[str] = []
        now = time.time_ns()
        for name in sorted(names):
            stem, path = name[:-3], self.path / name
            known = cache.get(name)
            for held in (listing, problems, cache):
                held.pop(name, None)
            notes.pop(stem, None)
            revisions.pop(stem, None)
            try:
                st = path.lstat()
            except OSError:
                continue  # gone (a file the disk will not even stat is not listed either)
            if stat.S_ISLNK(st.st_mode):
                listing[name] = (-1, *stamp_of(st)[1:])
                problems[name] = FileProblem(self.scope, path, _LINK)
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            previous = last[0].get(name)
            stamp = stamp_of(st)
            if known is not None and known[0] != stamp:
                known = None  # parsed again: a note without times takes them from the file
            parsed = self._parse(name, path, st, known)
            if parsed is None:
                continue
            item, data_rev = parsed
            listing[name] = stamp
            cache[name] = (stamp, item, data_rev, now - _changed_at(stamp) > _RACY_NS)
            if isinstance(item, FileProblem):
                problems[name] = item
                continue
            note, rev = item
            notes[note.id], revisions[note.id] = note, rev
            if previous is None or known is None or known[2] != data_rev:
                changed.append(note.id)
        if len(listing) > self.max_notes:
            return None
        fresh = Scan(
            notes=notes,
            problems=tuple(sorted(problems.values(), key=lambda p: p.path.name)),
            revisions=revisions,
        )
        with self._cache_lock:
            self._cache = cache
            self._last = (listing, fresh, now)
        return dataclasses.replace(fresh, changed=tuple(changed))

    def _full_scan(self) -> Scan:
        links: list[tuple[str, os.stat_result]] = []
        entries = list(self._entries(links))
        listing = {name: stamp_of(st) for name, st in entries}
        # A link added or removed changes the listing too (size -1: it is never read).
        listing.update({name: (-1, *stamp_of(st)[1:]) for name, st in links})
        with self._cache_lock:
            last = self._last
        if (
            last is not None
            and last[0] == listing
            and last[2] - max(map(_changed_at, listing.values()), default=0) > _RACY_NS
        ):
            # Nothing changed since the last scan, and every file was older than the
            # racy window then: the previous result stands (nothing was re-read).
            return last[1]
        scanned_at = time.time_ns()
        result = self._scan(entries)
        if links:
            linked = (FileProblem(self.scope, self.path / name, _LINK) for name, _ in links)
            problems = sorted((*result.problems, *linked), key=lambda p: p.path.name)
            result = dataclasses.replace(result, problems=tuple(problems))
        with self._cache_lock:
            self._last = (listing, dataclasses.replace(result, changed=()), scanned_at)
        return result

    def _scan(self, entries: list[tuple[str, os.stat_result]]) -> Scan:
        over = 0
        if len(entries) > self.max_notes:
            # Keep the most recently changed files; the rest is counted, not loaded.
            entries.sort(key=lambda e: e[1].st_mtime_ns, reverse=True)
            over = len(entries) - self.max_notes
            entries = entries[: self.max_notes]
        notes: dict[str, Note] = {}
        problems: list[FileProblem] = []
        revisions: dict[str, str] = {}
        changed: list[str] = []
        fresh: dict[str, _Cached] = {}
        with self._cache_lock:
            cache = dict(self._cache)
        now = time.time_ns()
        for name, st in entries:
            stamp = stamp_of(st)
            cached = cache.get(name)
            if cached is not None and cached[0] != stamp:
                cached = None
            if cached is not None and cached[3]:
                item, data_rev, reread = cached[1], cached[2], False
            else:
                parsed = self._parse(name, self.path / name, st, cached)
                if parsed is None:
                    continue
                item, data_rev = parsed
                reread = cached is None or cached[2] is None or cached[2] != data_rev
            fresh[name] = (stamp, item, data_rev, now - _changed_at(stamp) > _RACY_NS)
            if isinstance(item, FileProblem):
                problems.append(item)
                continue
            note, rev = item
            notes[note.id] = note
            revisions[note.id] = rev
            if reread:
                changed.append(note.id)
        with self._cache_lock:
            self._cache = fresh
        problems.sort(key=lambda p: p.path.name)
        return Scan(
            notes=notes,
            problems=tuple(problems),
            over_limit=over,
            revisions=revisions,
            changed=tuple(changed),
        )

    def stamps(self) -> tuple[dict[str, _Stamp], int]:
        """The stamp of every file named like a note, by id, without reading any file; and
        how many were left out above `max_notes` (least recently changed)."""
        stamps = {name[:-3]: stamp_of(st) for name, st in self._entries() if is_valid_id(name[:-3])}
        over = max(0, len(stamps) - self.max_notes)
        if over:  # the most recently changed files, as a scan keeps them
            newest = sorted(stamps, key=lambda i: stamps[i][1], reverse=True)[: self.max_notes]
            stamps = {i: stamps[i] for i in newest}
        return stamps, over

    def stamps_of(self, note_ids: Iterable[str]) -> dict[str, _Stamp]:
        """The stamps of those of `note_ids` whose files are regular files now (as
        `stamps` gives them, for these notes alone)."""
        out: dict[str, _Stamp] = {}
        for note_id in note_ids:
            if not is_valid_id(note_id):
                continue
            try:
                st = self.file_for(note_id).lstat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out[note_id] = stamp_of(st)
        return out

    def watch(self) -> None:
        """Watch the directory from now on (see `memdir.store.watch`); idempotent."""
        with self._cache_lock:
            if self._watch is None:
                self._watch = DirectoryWatch(self.path, self._is_note_name)

    def unwatch(self) -> None:
        """Stop watching."""
        with self._cache_lock:
            watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()

    @property
    def watched(self) -> bool:
        """True when watching was asked for (`watch`), whether or not it works here."""
        return self._watch is not None

    @property
    def watch_reason(self) -> str | None:
        """Why the directory is not watched (None: it is, or watching was not asked for)."""
        watch = self._watch
        return None if watch is None else watch.reason

    def forget_changes(self) -> None:
        """Make the index's next `changes()` say None: what it gave was not taken in."""
        watch = self._watch
        if watch is not None:
            watch.reset()

    def changes(self) -> set[str] | None:
        """Ids of notes whose files changed since the search index last asked (created,
        written, removed, renamed, their mode or times set); None when unknown: not
        watched, or the watch cannot vouch for this stretch, so every file must be
        looked at."""
        watch = self._watch
        if watch is None:
            return None
        names = watch.changes("index")
        if names is None:
            return None
        return {name[:-3] for name in names if is_valid_id(name[:-3])}

    def clear_leftovers(self) -> int:
        """Remove temp files of interrupted writes; the caller holds the lock, so no
        writer can still own them. Returns how many were removed."""
        removed = 0
        try:
            iterator = os.scandir(self.path)
        except FileNotFoundError:
            return 0
        with iterator:
            for entry in iterator:
                if entry.name.startswith(".") and TEMP_MARKER in entry.name and entry.is_file():
                    with contextlib.suppress(FileNotFoundError):
                        Path(entry.path).unlink()
                        removed += 1
        return removed

    def ids_on_disk(self) -> set[str]:
        """File stems of every `.md` file, parseable or not (for case-collision checks)."""
        try:
            iterator = os.scandir(self.path)
        except FileNotFoundError:
            return set()
        with iterator:
            # is_file() uses the directory entry's type: no stat per file. Links are not notes.
            return {
                e.name[:-3]
                for e in iterator
                if self._is_note_name(e.name) and e.is_file(follow_symlinks=False)
            }

    def linked_ids(self) -> set[str]:
        """File stems of note-named symbolic links: never read as notes, never deletions."""
        try:
            iterator = os.scandir(self.path)
        except FileNotFoundError:
            return set()
        with iterator:
            return {e.name[:-3] for e in iterator if self._is_note_name(e.name) and e.is_symlink()}

    def read_all(self) -> dict[str, bytes]:
        """The bytes of every `.md` file by stem, unparsed (a file that vanishes is left out)."""
        out: dict[str, bytes] = {}
        for name in self.ids_on_disk():
            with contextlib.suppress(Refused):  # replaced by a link since the listing
                data = self.read_bytes(name)
                if data is not None:
                    out[name] = data
        return out

    def read_bytes(self, note_id: str) -> bytes | None:
        """The current bytes of a note's file, or None when it does not exist.

        A symbolic link there is not followed: Refused, so that a writer that reads first
        (every write does) refuses before writing anything.
        """
        path = self.file_for(note_id)
        try:
            return self.unseal(note_id, _read_file(path), path)
        except FileNotFoundError:
            return None
        except _Link:
            raise Refused(f"{path} {_LINK}; it is left as it is", hint=Remedy.DOCTOR) from None

    def read(self, note_id: str) -> Note | FileProblem | None:
        """Parse one note file without scanning the directory; a disk that will not read it
        raises its OSError (a disk error, not a damaged note)."""
        path = self.file_for(note_id)
        try:
            st = path.lstat()
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(st.st_mode):
            return FileProblem(self.scope, path, _LINK)
        parsed = self._parse(path.name, path, st, raise_os=True)
        if parsed is None:
            return None
        item = parsed[0]
        return item if isinstance(item, FileProblem) else item[0]

    def write(self, note: Note, rollback: Rollback | None = None) -> bytes:
        """Atomically write a note's file; the caller holds the lock. Returns the bytes."""
        data = render_note(note)
        self.write_bytes(note.id, data, rollback=rollback)
        return data

    def write_bytes(
        self,
        note_id: str,
        data: bytes,
        *,
        sync_dir: bool = True,
        rollback: Rollback | None = None,
    ) -> None:
        """Atomically write exact bytes (a backup, a sync pull); the caller holds the lock.

        `sync_dir=False`: the caller fsyncs the directory once after a batch of writes.
        With `rollback`, the file it replaces is kept aside (a hard link, no new space) until
        the rollback commits, and undoing puts it back (or removes a file that was new).
        """
        self.ensure()
        path = self._replaceable(note_id)
        sealer = self.sealer_for_writes()
        if sealer is not None:
            data = sealer.seal(Kind.NOTE, self._context(note_id), data)
        if rollback is not None:
            self._keep_for_undo(path, data, rollback)
        atomic_write(path, data, sync_dir=sync_dir)

    def _aside(self, path: Path) -> Path:
        return path.with_name(f".{path.name}{TEMP_MARKER}{secrets.token_hex(4)}")

    def _keep_for_undo(self, path: Path, data: bytes, rollback: Rollback) -> None:
        """Register how to undo replacing (or creating) `path` with `data`; registered before
        the write, so a write that fails after its rename (the directory fsync) is undone too.

        An undo only ever takes back memdir's own bytes: a file someone saved there meanwhile
        (an editor) is left as it is, and the undo says so (`_changed_meanwhile`).
        """
        aside = self._aside(path)
        try:
            os.link(path, aside, follow_symlinks=False)
        except FileNotFoundError:  # a new note: undoing removes it

            def drop() -> None:
                current = _current_bytes(path)
                if current is None:
                    return
                if current != data:
                    raise _changed_meanwhile(path)
                path.unlink()
                fsync_dir(path.parent)

            rollback.on_undo(f"writing {path}", drop)
            return
        except OSError as exc:
            if exc.errno in _DISK_REFUSED:
                raise  # a full disk, say: nothing was written yet
            # No hard links on this file system: keep the old bytes in memory instead.
            old = _read_file(path)

            def rewrite() -> None:
                current = _current_bytes(path)
                if current == old:
                    return  # the write did not get as far as its rename
                if current != data:
                    raise _changed_meanwhile(path)
                atomic_write(path, old)

            rollback.on_undo(f"writing {path}", rewrite)
            return

        def put_back() -> None:
            try:
                unchanged = path.samefile(aside)
            except FileNotFoundError:
                unchanged = False
            if unchanged:  # failed before its rename (which would do nothing here)
                aside.unlink()
                return
            if _current_bytes(path) != data:
                aside.unlink()  # the old version is in history; the new file is someone's
                raise _changed_meanwhile(path)
            aside.replace(path)
            fsync_dir(path.parent)

        rollback.on_undo(f"writing {path}", put_back)
        rollback.on_commit(lambda: remove_quietly(aside))

    def _replaceable(self, note_id: str) -> Path:
        """A note's path, unless it is a symbolic link (Refused): a rename would replace
        the link, not what it points to, but a link there is the user's, so it stays."""
        path = self.file_for(note_id)
        if path.is_symlink():  # checked under the lock, as every write runs
            raise Refused(f"{path} {_LINK}; it is left as it is", hint=Remedy.DOCTOR)
        return path

    def remove(self, note_id: str, rollback: Rollback | None = None) -> bool:
        """Remove a note's file durably; the caller holds the lock. False when it was gone.

        With `rollback`, the file is renamed aside instead and only unlinked when the
        rollback commits; undoing renames it back.
        """
        path = self.file_for(note_id)
        if rollback is None:
            return remove_durably(path)
        aside = self._aside(path)
        try:
            path.rename(aside)
        except FileNotFoundError:
            return False
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            # No room for the longer name: unlink (which needs none), bytes kept in memory.
            return self._remove_keeping_bytes(path, rollback)

        def put_back() -> None:
            try:
                os.link(aside, path, follow_symlinks=False)
            except FileExistsError:  # created meanwhile: that file is someone's
                aside.unlink()
                raise _changed_meanwhile(path) from None
            aside.unlink()
            fsync_dir(path.parent)

        rollback.on_undo(f"removing {path}", put_back)
        fsync_dir(path.parent)
        rollback.on_commit(lambda: remove_durably(aside))
        return True

    @staticmethod
    def _remove_keeping_bytes(path: Path, rollback: Rollback) -> bool:
        old = _read_file(path)
        path.unlink()

        def rewrite() -> None:
            if _current_bytes(path) is not None:
                raise _changed_meanwhile(path)
            atomic_write(path, old)

        rollback.on_undo(f"removing {path}", rewrite)
        fsync_dir(path.parent)
        return True
