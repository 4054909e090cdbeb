"""The write pipeline of one scope: guard, limits, case clashes, atomic write, history, audit.

Every note write in memdir goes through `ScopeStore.save` or `ScopeStore.remove`,
so the credential guard and the §1.5 limits hold on every write path.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir.core import Note, Scope, is_valid_id, parse_note
from memdir.core.frontmatter import is_canonical_form
from memdir.core.note import check_summary_written
from memdir.core.vocab import WriteEvent
from memdir.errors import (
    Busy,
    Conflict,
    InvalidInput,
    LimitExceeded,
    MemdirError,
    NotFound,
    ParseError,
    Remedy,
    SecretRefused,
    disk_error,
)
from memdir.files.atomic import fsync_dir
from memdir.files.lock import DirLock
from memdir.store.audit import AuditLog
from memdir.store.backups import BackupRecord, Backups
from memdir.store.history import History, Revision, revision_of
from memdir.store.notedir import NoteDirectory, Scan, stamp_of
from memdir.store.problems import FileProblem
from memdir.store.rollback import Rollback

__all__ = [
    "CurrentNote",
    "HistoryEntry",
    "Neighbour",
    "SaveOutcome",
    "ScopeStore",
    "SupersedeResult",
    "WriteResult",
    "check_secrets",
]

#: Longest wait for the directory lock before a version read from disk is recorded (a
#: write holds it for milliseconds; a thread of this process holding it meanwhile while
#: it waits for this one's index must not stall a read for the whole lock timeout).
_OBSERVE_WAIT_S = 0.5
#: After a wait in vain, reads of versions from disk stop waiting for so long.
_OBSERVE_SKIP_S = 10.0


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What `remember` did and what the store already holds near it.

    A write that raised left nothing; one that comes back is on disk. `nearest` (and
    so `likely_duplicate`) is advice looked up after the write: empty when it could not
    be looked up (the store locked right after the write, a damaged index), never a
    reason to report the write as failed.
    """

    note: Note
    created: bool
    changed: bool
    revision: str
    nearest: tuple[Neighbour, ...]
    likely_duplicate: bool
    dangling_links: tuple[str, ...]
    duplicate_of: str | None = None


@dataclass(frozen=True, slots=True)
class SupersedeResult:
    """What `supersede` did: `new` now lists `old` in its supersedes (`changed` False: it
    already did, and nothing was written); `revision` is that of `new`'s file."""

    old: Note
    new: Note
    changed: bool
    revision: str
    scope: Scope


@dataclass(frozen=True, slots=True)
class CurrentNote:
    """A note as it is on disk now, with the scope it is in and the revision of those bytes."""

    note: Note
    scope: Scope
    revision: str


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One version (or deletion) in a note's history on this machine."""

    revision: str | None
    ts: int
    event: str
    hash: str | None
    current: bool


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An existing note close to a given one."""

    note_id: str
    summary: str
    scope: Scope | None
    score: float


def check_secrets(note: Note) -> None:
    """Raise SecretRefused when any field of `note` looks like a credential."""
    # The guard's lexicons take a while to compile: only commands that write pay for them.
    from memdir.guard import describe, scan_fields

    fields = {"summary": note.summary, "body": note.body, "tags": " ".join(note.tags)}
    for key, value in note.extra:
        fields[f"frontmatter {key}"] = value if isinstance(value, str) else repr(value)
    found = scan_fields(fields)
    if found:
        triples = tuple((f.kind, name, f.line) for name, f in found)
        raise SecretRefused(describe(found), triples)


def _recorded(history: History, note_id: str, rev: str) -> bool:
    """Whether history says the note is at `rev` now: the version stored and the newest the
    log names. A file put back to an older version (a restore killed before its log line, a
    revert by hand) is recorded again, so history never calls a note on disk deleted."""
    return history.has(rev) and history.latest(note_id) == rev


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    """What a save did: the note as written, its revision and the version it replaced."""

    note: Note
    revision: str
    previous: Note | None


class ScopeStore:
    """One scope's note directory with its history, sharing backups and the audit log."""

    def __init__(
        self,
        directory: NoteDirectory,
        history: Callable[[], History],
        backups: Backups,
        audit: AuditLog,
        *,
        max_note_bytes: int,
    ) -> None:
        self.directory = directory
        self._history_factory = history
        self._history: History | None = None
        #: Until then (monotonic s) versions read from disk are recorded without the lock.
        self._observe_unlocked_until = 0.0
        self.backups = backups
        self.audit = audit
        self.max_note_bytes = max_note_bytes
        self._listeners: list[Callable[[str, WriteEvent], None]] = []
        #: note id -> (size, mtime_ns, inode) of unloaded files already observed (see scan)
        self._unloaded_seen: dict[str, tuple[int, int, int, int]] = {}
        #: Notes whose version on disk was edited outside memdir: (that rev, when seen).
        self._edited_at: dict[str, tuple[str, int]] = {}

    def on_change(self, listener: Callable[[str, WriteEvent], None]) -> None:
        """Call `listener(note_id, event)` after every write or removal (e.g. to schedule sync)."""
        self._listeners.append(listener)

    def _changed(self, note_id: str, event: WriteEvent) -> None:
        for listener in self._listeners:
            try:
                listener(note_id, event)
            except Exception:  # a listener never fails a write that already happened
                logging.getLogger("memdir.store").exception("change listener failed")

    @property
    def scope(self) -> Scope:
        """The scope this store holds."""
        return self.directory.scope

    @property
    def path(self) -> Path:
        """The note directory."""
        return self.directory.path

    @property
    def history(self) -> History:
        """This scope's history (created on first use: the project id may be written then)."""
        if self._history is None:
            history = self._history_factory()
            # An encrypted scope's history objects are sealed as its notes are.
            history.sealing = self.directory.sealer_for_writes
            history.opener = lambda: self.directory.sealer
            self._history = history
        return self._history

    @property
    def state_key(self) -> str:
        """Name of this scope's machine-local state (history, index): `user` or `project-<id>`.

        With a damaged project file the id is unknown; derived state (the index) then
        goes under a name made from the directory's path, so reading goes on.
        """
        try:
            return self.history.root.name
        except InvalidInput:
            return "dir-" + hashlib.sha256(str(self.path).encode()).hexdigest()[:16]

    def observe(self, note_id: str, data: bytes, note_hash: str) -> None:
        """Record a version read from disk (an external edit) in history, once."""
        try:
            history = self.history
        except InvalidInput:
            return  # a damaged project file: the next write records it once fixed
        if not _recorded(history, note_id, revision_of(data)):
            self._record_read(history, note_id, data, note_hash)

    def _record_read(self, history: History, note_id: str, data: bytes, note_hash: str) -> None:
        """Record a version read from disk that history does not hold as the newest.

        A write (of this process or another) holds the directory lock from its file to its
        history line, so history is asked again under that lock, waited for at most
        `_OBSERVE_WAIT_S` and never created here (a read writes nothing into the project);
        after a wait in vain the next reads of `_OBSERVE_SKIP_S` do not wait, and without
        the lock the check is made as it is. A version the file no longer holds (the read
        was older than a write since) is recorded only when history never had it: a
        version too many, never one lost.
        """
        if time.monotonic() >= self._observe_unlocked_until:
            try:
                lock = self.directory.lock_if_present(_OBSERVE_WAIT_S)
                if lock is not None:
                    with lock:
                        self._record_if_new(history, note_id, data, note_hash)
                        return
            except Busy:
                self._observe_unlocked_until = time.monotonic() + _OBSERVE_SKIP_S
            except (MemdirError, OSError):
                pass  # a directory that cannot be locked (read-only, a planted link)
        self._record_if_new(history, note_id, data, note_hash)

    def _record_if_new(self, history: History, note_id: str, data: bytes, note_hash: str) -> None:
        rev = revision_of(data)
        try:
            now = self.directory.read_bytes(note_id)
        except (OSError, MemdirError):
            now = data  # cannot be read again: taken as still there
        held = now is not None and revision_of(now) == rev
        if not (_recorded(history, note_id, rev) if held else history.has(rev)):
            self._record_observed(history, note_id, data, note_hash)

    @staticmethod
    def _record_observed(history: History, note_id: str, data: bytes, note_hash: str) -> None:
        # Reading must go on when the disk refuses (full, read-only): the version stays
        # unrecorded and the next read or write records it.
        try:
            history.record(note_id, data, WriteEvent.OBSERVED, note_hash)
        except OSError as exc:
            logging.getLogger("memdir.store").warning(
                "cannot record the version of %s read from disk: %s", note_id, exc.strerror
            )

    def lock(self) -> DirLock:
        """The directory's write lock."""
        return self.directory.lock()

    def scan(self) -> Scan:
        """The directory's notes now; versions edited on disk are recorded in history.

        Above maxNotes the files left out are not loaded, but their versions are recorded
        too: a user above a limit can always read, delete and see the history (§1.5).
        """
        scan = self.directory.scan()
        if scan.over_limit:
            self._observe_unloaded(scan)
        if not scan.changed:
            return self._with_edit_times(scan)
        try:
            history = self.history
        except InvalidInput:
            # A damaged project file: reading goes on, writing refuses (see save), and
            # the version on disk is recorded by the next write once it is fixed.
            return scan
        edited = self._edited_at
        for note_id in scan.changed:
            rev = scan.revisions.get(note_id)
            if rev is None:
                continue
            last = history.last_events(note_id)
            if not (history.has(rev) and last and last[-1].rev == rev):
                data = self.directory.read_bytes(note_id)
                if data is not None and revision_of(data) == rev:
                    self._record_read(history, note_id, data, scan.notes[note_id].hash)
                    last = history.last_events(note_id)  # with the time it was logged at
            seen = self._edit_seen_at(history, rev, last, scan.notes[note_id])
            if seen is not None:
                edited[note_id] = (rev, seen)
            else:
                edited.pop(note_id, None)
        return self._with_edit_times(scan)

    def _edit_seen_at(
        self, history: History, rev: str, last: Sequence[Revision], note: Note
    ) -> int | None:
        """When memdir first saw `rev` as an edit made outside it, or None when it is none.

        A version edited outside memdir (an earlier one is logged) counts as updated when
        memdir first saw it, so `list` shows it first — unless the edit set updatedAt
        itself; a file seen for the first time (a clone, an import by hand) keeps the time
        its frontmatter gives, and two readers logging one version is no edit."""
        if (
            len(last) == 2
            and last[-1].rev == rev
            and last[0].rev != rev
            and last[-1].event == WriteEvent.OBSERVED
            and self._kept_time(history, last[0].rev, note)
        ):
            return last[-1].ts
        return None

    def with_edit_time(self, note: Note, data: bytes) -> Note:
        """`note` (parsed from `data`, its file now) updated when memdir saw it edited
        outside memdir, as `scan` gives it: `read` and `list` say the same time."""
        try:
            history = self.history
            seen = self._edit_seen_at(
                history, revision_of(data), history.last_events(note.id), note
            )
        except (InvalidInput, OSError):
            return note
        if seen is None or seen <= note.updated_at:
            return note
        return dataclasses.replace(note, updated_at=seen)

    @staticmethod
    def _kept_time(history: History, previous: str | None, note: Note) -> bool:
        """Whether an edit left the frontmatter's updatedAt as the version before had it."""
        if previous is None:
            return True  # the file came back after a deletion: a new version
        try:
            before = parse_note(history.read(previous), file_id=note.id)
        except (MemdirError, OSError):
            return False
        return before.updated_at == note.updated_at

    def _with_edit_times(self, scan: Scan) -> Scan:
        """`scan` with each note edited outside memdir updated at the time it was seen."""
        later = {
            note_id: ts
            for note_id, (rev, ts) in list(self._edited_at.items())
            if scan.revisions.get(note_id) == rev and ts > scan.notes[note_id].updated_at
        }
        if not later:
            return scan
        notes = dict(scan.notes)
        for note_id, ts in later.items():
            notes[note_id] = dataclasses.replace(notes[note_id], updated_at=ts)
        return dataclasses.replace(scan, notes=notes)

    def _observe_unloaded(self, scan: Scan) -> None:
        """Record the versions of the note files a scan left out above maxNotes, each read
        and parsed once per change of its file (size, mtime, inode)."""
        loaded = scan.notes.keys() | {p.path.stem for p in scan.problems}
        seen = self._unloaded_seen
        for note_id in sorted(self.directory.ids_on_disk() - loaded):
            if not is_valid_id(note_id):
                continue
            try:
                st = self.directory.file_for(note_id).lstat()
            except OSError:
                continue
            stamp = stamp_of(st)
            if seen.get(note_id) == stamp:
                continue
            data = self.directory.read_bytes(note_id)
            if data is None:
                continue
            seen[note_id] = stamp
            try:
                note = parse_note(data, file_id=note_id)
            except MemdirError:
                continue  # not a note: doctor reports it
            self.observe(note_id, data, note.hash)

    def get(self, note_id: str) -> Note | None:
        """A note by id (read directly, so notes beyond maxNotes stay readable)."""
        item = self.directory.read(note_id)
        if isinstance(item, FileProblem):
            raise ParseError(f"{item.path} cannot be parsed: {item.reason}", hint=Remedy.DOCTOR)
        return item

    def _current(self, note_id: str) -> tuple[bytes | None, Note | None]:
        data = self.directory.read_bytes(note_id)
        if data is None:
            return None, None
        try:
            note = parse_note(data, file_id=note_id).located(
                self.scope, self.directory.file_for(note_id)
            )
        except ParseError as exc:
            raise ParseError(
                f"{self.directory.file_for(note_id)} cannot be parsed ({exc}); memdir will not "
                "overwrite it — fix or move it by hand",
                hint=Remedy.DOCTOR,
            ) from None
        return data, note

    def _check_case(self, note_id: str, folded_ids: Mapping[str, str] | None = None) -> None:
        """Refuse an id differing only in case from a file on disk (folded_ids: casefold -> id)."""
        folded = note_id.casefold()
        if folded_ids is None:
            folded_ids = {i.casefold(): i for i in self.directory.ids_on_disk() if i != note_id}
        existing = folded_ids.get(folded)
        if existing is not None and existing != note_id:
            raise Conflict(
                f"note id {note_id!r} differs only in case from the existing file "
                f"{existing}.md; case-insensitive file systems would merge them"
            )

    def check_size(self, note: Note, previous: Note | None) -> None:
        """Refuse a body over `memory.maxNoteBytes` (one already over it may shrink). Cheap:
        callers run it before the credential guard, which is slow on a huge body."""
        size = note.body_bytes
        if size > self.max_note_bytes and (previous is None or size > previous.body_bytes):
            raise LimitExceeded(
                f"note body is {size} bytes; the limit (memory.maxNoteBytes) is "
                f"{self.max_note_bytes} bytes. Split it into several linked notes."
            )

    def _size_first(self, note: Note) -> None:
        """`check_size` before the guard, reading the previous version only when needed."""
        if note.body_bytes > self.max_note_bytes:
            self.check_size(note, self._current(note.id)[1])

    def _check_content(self, note: Note) -> None:
        """The checks of what a written note holds: its size and the credential guard."""
        self._size_first(note)
        check_secrets(note)

    @staticmethod
    def _check_new_summary(note: Note, previous: Note | None) -> None:
        """A summary memdir writes anew holds no bidirectional formatting character; one
        the note already had (a body edit, a restore, a sync pull) is kept as it is."""
        if previous is None or previous.summary != note.summary:
            check_summary_written(note.summary)

    def _check_limits(
        self, note: Note, previous: Note | None, max_notes: int, count: int | None = None
    ) -> None:
        self.check_size(note, previous)
        if previous is None:
            if count is None:
                count = len(self.directory.ids_on_disk())
            if count >= max_notes:
                raise LimitExceeded(
                    f"the {self.scope.value} scope holds {count} notes; the limit "
                    f"(memory.maxNotes) is {max_notes}. Remove some before adding new ones."
                )

    def admit(self, note: Note) -> None:
        """Every check `save` makes, without writing: a batch checks all before writing any."""
        self._check_content(note)
        _, previous = self._current(note.id)
        self._check_new_summary(note, previous)
        if previous is None:
            self._check_case(note.id)
        self._check_limits(note, previous, self.directory.max_notes)

    def save(
        self,
        note: Note,
        *,
        event: WriteEvent = WriteEvent.WRITE,
        raw: bytes | None = None,
        expect_revision: str | None = None,
        backup_reason: str | None = None,
    ) -> SaveOutcome:
        """Write `note` (or its exact bytes `raw`) after every check; nothing is written on refusal.

        `expect_revision` ("" for 'must not exist') refuses the write when the file
        changed since the caller looked. `backup_reason` backs up the replaced version.
        """
        self._check_content(note)
        with self.lock():
            # Open the history first: it can refuse (a damaged project file), and then
            # nothing may have been written yet.
            history = self.history
            old_bytes, previous = self._current(note.id)
            if expect_revision is not None:
                current = revision_of(old_bytes) if old_bytes is not None else ""
                if current != expect_revision:
                    raise Conflict(f"note {note.id} changed since it was read; nothing was written")
            if (
                raw is None
            ):  # exact bytes (a restore, a resolved conflict) are put back as they were
                self._check_new_summary(note, previous)
            if previous is None:
                self._check_case(note.id)
            self._check_limits(note, previous, self.directory.max_notes)
            if (
                old_bytes is not None
                and previous is not None
                and not history.is_latest(note.id, old_bytes)
            ):
                history.record(note.id, old_bytes, WriteEvent.OBSERVED, previous.hash)
            if old_bytes is not None and backup_reason is None and not is_canonical_form(old_bytes):
                # A note written by hand (YAML frontmatter, plain Markdown) is rewritten
                # in memdir's form: the file as the person wrote it is kept.
                backup_reason = "rewritten from the form written by hand"
            with self.undoable([(note.id, old_bytes, previous)]) as rollback:
                if old_bytes is not None and backup_reason is not None:
                    self.backup(note.id, old_bytes, backup_reason, rollback)
                if raw is None:
                    data = self.directory.write(note, rollback)
                else:
                    self.directory.write_bytes(note.id, raw, rollback=rollback)
                    data = raw
                rev = history.record(note.id, data, event, note.hash, rollback=rollback)
                rev = rev or revision_of(data)
                fields = {
                    "scope": self.scope.value,
                    "note_id": note.id,
                    "revision": rev,
                    "note_hash": note.hash,
                }
                action = "restore" if event is WriteEvent.RESTORE else "write"
                self.audit.append_many([*rollback.audit, (action, fields)], rollback=rollback)
        written = note.located(self.scope, self.directory.file_for(note.id))
        self._changed(note.id, event)
        return SaveOutcome(written, rev, previous)

    def save_many(
        self,
        items: Sequence[tuple[Note, bytes, str]],
        *,
        event: WriteEvent,
        backup_reason: str,
        removals: Sequence[tuple[str, str]] = (),
        all_or_nothing: bool = False,
        audit: Sequence[tuple[str, Mapping[str, str | int | None]]] = (),
        backups: list[BackupRecord] | None = None,
    ) -> dict[str, SaveOutcome | MemdirError]:
        """Write many notes as exact bytes under one lock (a sync pull); each checked as in `save`.

        Each item is (note, its file bytes, the revision expected on disk now — "" for
        none). A refused item (guard, limits, case clash, changed meanwhile) is reported
        as its error and skipped; the others are written, replaced versions backed up
        with `backup_reason`. Every file is fsynced before its rename; the directories'
        fsyncs and the audit entries are batched, and all are durable on return. A disk
        that fails part-way undoes the whole batch: every note is as it was before.

        `removals` (id, revision expected on disk) are deleted in the same batch, each
        backed up first, once every put is durable. With `all_or_nothing` a refused item
        raises its error and nothing of the batch is written (a merge). `audit` entries
        are recorded with the batch's own, in the same durable write; `backups` receives
        the backups made.
        """
        out: dict[str, SaveOutcome | MemdirError] = {}
        with self.lock():
            history = self.history
            on_disk = self.directory.ids_on_disk()
            folded = {i.casefold(): i for i in on_disk}
            dirs: set[Path] = set()
            replaced: list[tuple[str, bytes | None, Note | None]] = []
            with self.undoable(replaced) as rollback:
                for note, raw, expected in items:
                    try:
                        self._check_content(note)
                        old_bytes, previous = self._current(note.id)
                        if (revision_of(old_bytes) if old_bytes is not None else "") != expected:
                            raise Conflict(
                                f"note {note.id} changed since it was read; nothing was written"
                            )
                        if event is not WriteEvent.SYNC:  # another machine's note as it is
                            self._check_new_summary(note, previous)
                        if previous is None:
                            self._check_case(note.id, folded)
                        count = len(on_disk)
                        self._check_limits(note, previous, self.directory.max_notes, count=count)
                    except MemdirError as exc:
                        if all_or_nothing:
                            raise
                        out[note.id] = exc
                        continue
                    if old_bytes is not None and previous is not None:
                        if not history.is_latest(note.id, old_bytes):
                            history.record(note.id, old_bytes, WriteEvent.OBSERVED, previous.hash)
                        record = self.backup(note.id, old_bytes, backup_reason, rollback)
                        if backups is not None:
                            backups.append(record)
                    replaced.append((note.id, old_bytes, previous))
                    self.directory.write_bytes(note.id, raw, sync_dir=False, rollback=rollback)
                    rev = history.record(
                        note.id, raw, event, note.hash, defer_dirs=dirs, rollback=rollback
                    )
                    rev = rev or revision_of(raw)
                    on_disk.add(note.id)
                    folded.setdefault(note.id.casefold(), note.id)
                    fields: dict[str, str | int | None] = {
                        "scope": self.scope.value,
                        "note_id": note.id,
                        "revision": rev,
                        "note_hash": note.hash,
                    }
                    rollback.audit.append(("write", fields))
                    located = note.located(self.scope, self.directory.file_for(note.id))
                    out[note.id] = SaveOutcome(located, rev, previous)
                if removals:
                    # Every put is durable before anything is removed: a crash in between
                    # leaves a note twice (the merged one and an original), never none.
                    fsync_dir(self.path)
                    for directory in dirs:
                        fsync_dir(directory)
                    for note_id, expected in removals:
                        old_bytes, previous = self._current(note_id)
                        if (
                            old_bytes is None
                            or previous is None
                            or revision_of(old_bytes) != expected
                        ):
                            raise Conflict(
                                f"note {note_id} changed since it was read; nothing was written"
                            )
                        replaced.append((note_id, old_bytes, previous))
                        if not history.is_latest(note_id, old_bytes):
                            history.record(note_id, old_bytes, WriteEvent.OBSERVED, previous.hash)
                        removed = self._remove_file(
                            note_id, old_bytes, event, backup_reason, rollback
                        )
                        if backups is not None and removed is not None:
                            backups.append(removed)
                        rollback.on_commit(functools.partial(self._changed, note_id, event))
                        on_disk.discard(note_id)
                if rollback.audit or audit:
                    fsync_dir(self.path)
                    for directory in dirs:
                        fsync_dir(directory)
                    self.audit.append_many([*rollback.audit, *audit], rollback=rollback)
        for note_id, outcome in out.items():
            if isinstance(outcome, SaveOutcome):
                self._changed(note_id, event)
        return out

    def backup(
        self, note_id: str, data: bytes, reason: str, rollback: Rollback | None = None
    ) -> BackupRecord:
        """Copy a version into the backups and log it.

        With `rollback`, the copy is removed if the write it belongs to is undone, and its
        audit entry waits in `rollback.audit` for the write's own.
        """
        record = self.backups.add(
            note_id,
            data,
            reason=reason,
            scope=self.scope.value,
            origin=self.path,
            rollback=rollback,
        )
        fields: dict[str, str | int | None] = {
            "scope": self.scope.value,
            "note_id": note_id,
            "revision": record.revision,
            "backup_id": record.id,
            "reason": reason,
        }
        if rollback is not None:
            rollback.audit.append(("backup", fields))
        else:
            self.audit.append("backup", **fields)
        return record

    def remove(
        self,
        note_id: str,
        *,
        backup_reason: str | None,
        event: WriteEvent,
        expect_hash: str | None = None,
        rollback: Rollback | None = None,
    ) -> tuple[Note, BackupRecord | None]:
        """Delete a note's file, backing it up first when `backup_reason` is given.

        With `rollback`, the removal stays undoable until the caller commits it (after its
        own audit entry); otherwise it is undone here if its history line cannot be written.
        """
        with self.lock():
            history = self.history  # may refuse: before anything is removed
            old_bytes, previous = self._current(note_id)
            if old_bytes is None or previous is None:
                raise NotFound(f"no note {note_id} in the {self.scope.value} scope")
            if expect_hash is not None and previous.hash != expect_hash:
                raise Conflict(
                    f"note {note_id} changed since the plan was made; nothing was removed"
                )
            if not history.is_latest(note_id, old_bytes):
                history.record(note_id, old_bytes, WriteEvent.OBSERVED, previous.hash)
            if rollback is not None:
                record = self._remove_file(note_id, old_bytes, event, backup_reason, rollback)
                # Done only when the caller's rollback commits (after its audit entry).
                rollback.on_commit(lambda: self._changed(note_id, event))
                return previous, record
            with self.undoable(()) as own:
                record = self._remove_file(note_id, old_bytes, event, backup_reason, own)
                self.audit.append_many(own.audit, rollback=own)
        self._changed(note_id, event)
        return previous, record

    def _remove_file(
        self,
        note_id: str,
        old_bytes: bytes,
        event: WriteEvent,
        backup_reason: str | None,
        rollback: Rollback,
    ) -> BackupRecord | None:
        record = None
        if backup_reason is not None:
            record = self.backup(note_id, old_bytes, backup_reason, rollback)
        self.directory.remove(note_id, rollback)
        self.history.record(note_id, None, event, rollback=rollback)
        return record

    @contextlib.contextmanager
    def undoable(
        self, notes: Sequence[tuple[str, bytes | None, Note | None]]
    ) -> Iterator[Rollback]:
        """A rollback for the writes in the block: when the block raises, they are undone and a
        disk error says whether that left everything as it was. `notes` lists (id, bytes,
        note) of the versions the block replaces (filled in as it goes, for a batch)."""
        rollback = Rollback()
        try:
            yield rollback
        except BaseException as exc:
            if rollback.sealed:  # recorded in the audit log: done, whatever came after
                rollback.commit()
                raise
            failed = rollback.undo()
            for note_id, old_bytes, previous in notes:
                # A reader may have logged the new version while it was on disk.
                with contextlib.suppress(OSError):
                    if old_bytes is not None and previous is not None:
                        if not self.history.is_latest(note_id, old_bytes):
                            self.history.record(
                                note_id, old_bytes, WriteEvent.OBSERVED, previous.hash
                            )
                    elif self.history.latest(note_id) is not None:
                        self.history.record(note_id, None, WriteEvent.OBSERVED)
            outcome = (
                f"it could not be undone ({'; '.join(failed)}): see `memdir doctor`"
                if failed
                else "nothing was changed"
            )
            mapped = disk_error(exc, outcome)
            if mapped is not None:
                raise mapped from exc
            raise
        rollback.commit()
