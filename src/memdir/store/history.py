"""Content-addressed history of every version a note has had on this machine.

Layout under ``$MEMDIR_HOME/memory-history/<scope-key>/``::

    objects/<rev[:2]>/<rev>.md     the exact file bytes; rev = SHA-256 of those bytes
    log/<note-id>.jsonl            one line per event: {"ts", "event", "rev", "hash"}

Objects are written once (same bytes, same name), so history deduplicates by
construction. Log lines are appended with one ``O_APPEND`` write; duplicate
lines from two observers of the same external edit are collapsed on read.
A revision is named by its full rev or any unique prefix of at least 4 hex digits.

In an encrypted scope each object is sealed (`memdir.store.sealing`, kind ``history
object``, bound to its revision): its name stays the revision, so deduplication works
as before, and opening it checks the revision too.

An object is checked against its name whenever it is read: one edited or damaged on
disk is refused with `IntegrityError` (naming the object, never quoting it) rather
than served as that version. `verify` checks every object (doctor --deep).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memdir.core.vocab import WriteEvent
from memdir.crypto.seal import Kind, is_sealed
from memdir.errors import IntegrityError, InvalidInput, NotFound, Remedy
from memdir.files.atomic import TEMP_MARKER, atomic_write, ensure_private_dir, remove_quietly
from memdir.store.rollback import Rollback
from memdir.store.sealing import Sealer

__all__ = ["History", "Revision", "revision_of"]

_MIN_PREFIX = 4
_REV = re.compile(r"[0-9a-f]{64}")


def revision_of(data: bytes) -> str:
    """The revision id of a file's bytes."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class Revision:
    """One event in a note's history. `rev` is None for a deletion."""

    ts: int
    event: str
    rev: str | None
    hash: str | None


def _take_back(log: Path, offset: int, entry: bytes) -> None:
    """Remove `entry`, appended at or after `offset`, from `log` (the undo of a record).

    Only those bytes go: a line a reader appended meanwhile stays. Truncating needs no free
    space, so an entry at the end of the log (or the part of it a short write left there) is
    cut off; one with lines after it is taken out by rewriting the log.
    """
    try:
        fd = _locked_log(log, create=False)
    except FileNotFoundError:
        return
    try:
        tail = os.pread(fd, max(0, os.fstat(fd).st_size - offset), offset)
        if not tail and offset == 0:  # made for this entry, which never got in
            log.unlink()
            return
        at = tail.find(entry)
        if at < 0:
            # A short write leaves a prefix of the entry at the end (readers skip it).
            cut = next((n for n in range(len(entry) - 1, 1, -1) if tail.endswith(entry[:n])), 0)
            at = len(tail) - cut if cut else -1
        if at >= 0 and at + min(len(entry), len(tail) - at) == len(tail):
            if offset + at == 0:  # the log was made for this entry: it goes too
                log.unlink()
                return
            os.ftruncate(fd, offset + at)
            os.fsync(fd)
            return
        if at < 0:
            return  # not there: nothing to take back
        head = os.pread(fd, offset, 0)
        # Still under the lock: a reader waiting for it finds the new file (see _locked_log).
        atomic_write(log, head + tail[:at] + tail[at + len(entry) :], mode=0o600)
    finally:
        os.close(fd)


def _locked_log(log: Path, *, create: bool) -> int:
    """`log` opened for appending under an exclusive flock, held until the fd is closed.

    Writers of a log serialise on it (readers recording what they saw hold no directory
    lock), so an undo that cuts a line off or rewrites the log never loses another's line.
    A log replaced or removed while this waited is opened again.
    """
    flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | (os.O_CREAT if create else 0)
    while True:
        fd = os.open(log, flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if log.stat().st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            if not create:
                os.close(fd)
                raise
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _unstore(obj: Path) -> None:
    """Remove an object stored for an undone record, and its fan-out folder once empty."""
    remove_quietly(obj)
    with contextlib.suppress(OSError):  # not empty: other objects live there
        obj.parent.rmdir()


class History:
    """History of one note directory (scope)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        #: The sealer when new objects are sealed (the scope is encrypted), else None.
        self.sealing: Callable[[], Sealer | None] = lambda: None
        #: The sealer that opens sealed objects (None: this home has no keyring).
        self.opener: Callable[[], Sealer | None] = lambda: None

    def _open(self, rev: str, raw: bytes, path: Path) -> bytes:
        """The plaintext of an object's bytes (plain ones as they are)."""
        if not is_sealed(raw):
            return raw
        sealer = self.opener()
        if sealer is None:
            raise IntegrityError(
                f"history object {path} is sealed, but this memdir home has no keyring to open it"
            )
        return sealer.open(Kind.OBJECT, rev, raw, where=f"history object {path}", revision=rev)

    def convert(self, rev: str) -> bool:
        """Seal (or open) one stored object in place as the scope says; False when it is
        already in that form or gone."""
        path = self._object(rev)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return False
        sealer = self.sealing()
        if (sealer is not None) == is_sealed(raw):
            return False
        plain = self._open(rev, raw, path)  # a damaged sealed one raises: left as it is
        # A plain object damaged on disk is sealed as it is: it holds note text all the
        # same, and sealed it is still refused when read (it does not hold `rev`).
        data = sealer.seal(Kind.OBJECT, rev, plain) if sealer is not None else plain
        atomic_write(path, data, mode=0o600)
        return True

    def stored(self) -> list[str]:
        """The revisions of every stored object."""
        objects = self.root / "objects"
        if not objects.is_dir():
            return []
        return sorted(p.name[:-3] for p in objects.rglob("*.md") if _REV.fullmatch(p.name[:-3]))

    def _object(self, rev: str) -> Path:
        return self.root / "objects" / rev[:2] / f"{rev}.md"

    def _log(self, note_id: str) -> Path:
        return self.root / "log" / f"{note_id}.jsonl"

    def has(self, rev: str) -> bool:
        """True when the bytes of `rev` are stored."""
        return self._object(rev).exists()

    def record(
        self,
        note_id: str,
        data: bytes | None,
        event: WriteEvent,
        note_hash: str | None = None,
        *,
        defer_dirs: set[Path] | None = None,
        rollback: Rollback | None = None,
    ) -> str | None:
        """Log the event and store `data` (None for a deletion); return its rev.

        The log line goes first, then the object: an object on disk therefore always has
        its log line, so `has` alone says whether a version seen on disk is recorded. A
        writer stopped between the two leaves a line without its object; `revisions`
        leaves such a line out, and the version is stored when it is next seen on disk.

        With `defer_dirs`, directories whose fsync is still due are added to it instead
        of being synced here (a batch syncs each once; see `sync_dirs`). With `rollback`,
        undoing takes the line off the log again and removes an object this call stored.
        """
        rev = revision_of(data) if data is not None else None
        line = {"ts": int(time.time() * 1000), "event": event, "rev": rev, "hash": note_hash}
        log = self._log(note_id)
        ensure_private_dir(log.parent)
        if defer_dirs is not None and not log.exists():
            defer_dirs.add(log.parent)
        entry = (json.dumps(line, separators=(",", ":")) + "\n").encode()
        fd = _locked_log(log, create=True)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                # A crash tore the last line: start on a fresh line so this one stays readable.
                entry = b"\n" + entry
            if rollback is not None:
                rollback.on_undo(f"logging {log}", lambda: _take_back(log, size, entry))
            if (written := os.write(fd, entry)) != len(entry):
                raise OSError(errno.ENOSPC, f"short write to {log} ({written} of {len(entry)})")
            os.fsync(fd)
        finally:
            os.close(fd)
        if data is not None and rev is not None:
            obj = self._object(rev)
            if not obj.exists():
                ensure_private_dir(obj.parent)
                sealer = self.sealing()
                if sealer is not None:
                    data = sealer.seal(Kind.OBJECT, rev, data)
                if rollback is not None:
                    rollback.on_undo(f"storing {obj}", lambda: _unstore(obj))
                atomic_write(obj, data, mode=0o600, sync_dir=defer_dirs is None)
                if defer_dirs is not None:
                    defer_dirs.add(obj.parent)
        return rev

    def latest(self, note_id: str) -> str | None:
        """The rev of the note's last logged event (None: a deletion, or nothing logged).

        Unlike `has`, this tells a version that is the note's newest from an older one
        the file went back to. Only the tail of the log is read.
        """
        last = self.last_events(note_id)
        return last[-1].rev if last else None

    def last_events(self, note_id: str) -> list[Revision]:
        """The note's last two logged events, oldest first, read from the log's tail (a
        rev that is no valid revision reads as None); empty when nothing is logged."""
        try:
            with self._log(note_id).open("rb") as f:
                size = f.seek(0, os.SEEK_END)
                f.seek(max(0, size - 4096))
                tail = f.read().decode("utf-8", errors="replace")
        except FileNotFoundError:
            return []
        out: list[Revision] = []
        for line in reversed(tail.splitlines()):
            try:
                doc = json.loads(line)
                rev = doc.get("rev")
                item = Revision(int(doc.get("ts", 0)), str(doc.get("event")), None, None)
            except (ValueError, AttributeError, TypeError, RecursionError):
                continue  # a torn or partial line
            if rev is not None and _REV.fullmatch(str(rev)):
                item = Revision(item.ts, item.event, str(rev), None)
            out.insert(0, item)
            if len(out) == 2:
                break
        return out

    def is_latest(self, note_id: str, data: bytes) -> bool:
        """True when `data` is the version the note's log ends with."""
        return self.latest(note_id) == revision_of(data)

    def observe(self, note_id: str, data: bytes, note_hash: str) -> None:
        """Record a version seen on disk (an external edit) unless it is already stored."""
        if not self.has(revision_of(data)):
            self.record(note_id, data, WriteEvent.OBSERVED, note_hash)

    def revisions(self, note_id: str) -> list[Revision]:
        """Events for a note, oldest first; torn or unreadable lines are skipped."""
        try:
            raw = self._log(note_id).read_text("utf-8", errors="replace")
        except FileNotFoundError:
            return []
        out: list[Revision] = []
        for line in raw.splitlines():
            try:
                doc = json.loads(line)
                item = Revision(int(doc["ts"]), str(doc["event"]), doc.get("rev"), doc.get("hash"))
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                continue
            if item.rev is not None and not _REV.fullmatch(str(item.rev)):
                continue  # not a revision this module wrote: never used as a path
            if item.rev is not None and not self.has(item.rev):
                continue  # logged by a writer stopped before it stored the bytes
            if out and out[-1].rev == item.rev:
                if item.event == WriteEvent.OBSERVED:
                    continue  # seen again on disk: the same version
                if out[-1].event == WriteEvent.OBSERVED:
                    # A reader saw the file between its writer's rename and log line:
                    # the writer's own entry says what the version was.
                    out[-1] = item
                    continue
            out.append(item)
        return out

    def resolve(self, note_id: str, prefix: str) -> str:
        """The full rev of this note matching `prefix`; NotFound or InvalidInput when ambiguous."""
        wanted = prefix.strip().lower()
        if len(wanted) < _MIN_PREFIX or any(c not in "0123456789abcdef" for c in wanted):
            raise InvalidInput(
                f"revision must be at least {_MIN_PREFIX} hex digits, got {prefix!r}"
            )
        matches = sorted(
            {r.rev for r in self.revisions(note_id) if r.rev and r.rev.startswith(wanted)}
        )
        if not matches:
            raise NotFound(f"note {note_id} has no revision {prefix}")
        if len(matches) > 1:
            raise InvalidInput(
                f"revision {prefix} is ambiguous for note {note_id}; give more digits"
            )
        return matches[0]

    def read(self, rev: str) -> bytes:
        """The bytes of a stored revision; IntegrityError when they no longer hash to it."""
        path = self._object(rev)
        try:
            data = self._open(rev, path.read_bytes(), path)
        except FileNotFoundError:
            raise NotFound(f"revision {rev[:12]} is not stored on this machine") from None
        if revision_of(data) != rev:
            raise IntegrityError(
                f"history object {path} does not match its name (edited or damaged on "
                f"disk), so revision {rev[:12]} is not served",
                hint=Remedy.DOCTOR,
            )
        return data

    def verify(self) -> list[str]:
        """Every stored object whose bytes do not hash to its name (or that is misnamed)."""
        objects = self.root / "objects"
        if not objects.is_dir():
            return []
        problems: list[str] = []
        for path in sorted(objects.rglob("*")):
            if path.is_dir():
                continue
            rev = path.name[:-3] if path.name.endswith(".md") else ""
            if path.name.startswith(".") and TEMP_MARKER in path.name:
                continue  # an interrupted write
            if not _REV.fullmatch(rev) or path.parent != self._object(rev).parent:
                problems.append(f"history object {path} is not named after a revision")
                continue
            try:
                data = self._open(rev, path.read_bytes(), path)
            except OSError as exc:
                problems.append(f"history object {path} cannot be read: {exc.strerror}")
                continue
            except IntegrityError as exc:
                problems.append(str(exc))
                continue
            if revision_of(data) != rev:
                problems.append(
                    f"history object {path} does not match its name (edited or damaged on disk)"
                )
        return problems

    def purge(self, note_id: str) -> int:
        """Remove a note's log and every object it names; return the number of objects removed."""
        removed = 0
        failed: OSError | None = None
        for rev in {r.rev for r in self.revisions(note_id) if r.rev}:
            try:
                self._object(rev).unlink()
                removed += 1
            except FileNotFoundError:
                pass
            except OSError as exc:  # the others still go; the first failure is raised after
                failed = failed or exc
        # Objects that hold the note but lost their log line (an undo racing a reader, before
        # logs were locked) are found by content.
        for path in self.leftovers(note_id):
            if path != self._log(note_id):
                try:
                    path.unlink()
                    removed += 1
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    failed = failed or exc
        if failed is None:  # the log names the objects left: it stays while any is left
            with contextlib.suppress(FileNotFoundError):
                self._log(note_id).unlink()
        if failed is not None:
            raise failed
        return removed

    def leftovers(self, note_id: str) -> list[Path]:
        """Stored objects whose bytes still carry this note's id (for purge verification)."""
        needle = re.compile(rb'"id"\s*:\s*"' + re.escape(note_id.encode()) + rb'"')
        found = [p for p in [self._log(note_id)] if p.exists()]
        objects = self.root / "objects"
        if objects.is_dir():
            for path in objects.rglob("*.md"):
                with contextlib.suppress(OSError, IntegrityError):
                    raw = path.read_bytes()
                    if is_sealed(raw):
                        raw = self._open(path.name[:-3], raw, path)
                    if needle.search(raw[:4096]):
                        found.append(path)
        return found
