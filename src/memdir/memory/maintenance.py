"""`Memory.upkeep`: forgetting with verification, and health checks (doctor)."""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memdir.config import Settings
from memdir.core import Note, Scope, is_valid_id, parse_note, parse_scope
from memdir.core.vocab import WriteEvent
from memdir.errors import (
    Busy,
    Conflict,
    DiskError,
    IntegrityError,
    InvalidInput,
    MemdirError,
    Remedy,
    disk_error,
)
from memdir.files.atomic import TEMP_MARKER
from memdir.memory.stores import Stores
from memdir.project import load_project_id
from memdir.store import BackupRecord, FileProblem, ScopeStore
from memdir.store.problems import is_skipped_message
from memdir.store.sealing import MARKER

if TYPE_CHECKING:
    from memdir.retrieve import Retriever
    from memdir.sync.replica import Replica

__all__ = [
    "DoctorReport",
    "ForgetPlan",
    "ForgetResult",
    "Maintenance",
]


@dataclass(frozen=True, slots=True)
class ForgetPlan:
    """What `forget` will remove, for the confirm step."""

    note: Note
    scope: Scope
    path: Path
    purge: bool
    keeps_backup: bool
    history_versions: int
    backups: int


@dataclass(frozen=True, slots=True)
class ForgetResult:
    """What `forget` removed and the checks that verified it."""

    note_id: str
    scope: Scope
    backup: BackupRecord | None
    purged_versions: int
    purged_backups: int
    checks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """Health of the note directories: unparseable files, dangling links, limits, warnings."""

    problems: tuple[FileProblem, ...]
    dangling: tuple[tuple[str, str], ...]
    warnings: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)
    directories: dict[str, str] = field(default_factory=dict)
    leftovers: tuple[Path, ...] = ()
    #: Temp files of interrupted writes that doctor removed.
    cleaned: int = 0
    #: The search indexes: damage found now or earlier (each was rebuilt from the files),
    #: and with `deep`, where an index disagrees with the files.
    index: tuple[str, ...] = ()
    #: With `deep`: history objects, backups and audit log entries that fail verification.
    integrity: tuple[str, ...] = ()
    #: Whether the slow checks ran (doctor --deep).
    deep: bool = False

    @property
    def ok(self) -> bool:
        """True when nothing needs attention."""
        return not (
            self.problems
            or self.dangling
            or self.warnings
            or self.leftovers
            or self.index
            or self.integrity
        )


class Maintenance:
    """forget (planned, verified) and doctor over `Stores`.

    The retriever and the sync replica are reached through getters: both are built on
    first use, so a command that never forgets a note never loads them.
    """

    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        *,
        retriever: Callable[[], Retriever],
        replica: Callable[[], Replica],
        warn: Callable[[str], None],
        warnings: Sequence[str],
    ) -> None:
        self.settings = settings
        self.stores = stores
        self._retriever = retriever
        self._replica = replica
        self._warn = warn
        #: The memory's warnings so far (a doctor report lists them).
        self._warnings = warnings

    # -- forgetting and restoring -------------------------------------------------------

    def plan_forget(
        self, id: str, purge: bool = False, *, scope: Scope | str | None = None
    ) -> ForgetPlan:
        """What `forget` would remove; show it to the user before confirming.

        With `purge`, a note already forgotten whose copies remain (a purge the disk cut
        short, a plain forget) is planned from its last stored version.
        """
        store, note = self._find_or_left(id, scope, purge)
        id = note.id
        versions, backups = self._kept_copies(store, id)
        return ForgetPlan(
            note, store.scope, store.directory.file_for(id), purge, not purge, versions, backups
        )

    def forget(
        self,
        id: str,
        purge: bool = False,
        *,
        scope: Scope | str | None = None,
        expect_hash: str | None = None,
    ) -> ForgetResult:
        """Remove a note (the API call is the confirmation) and verify it is gone. Without
        `purge` the removed version stays in the backups so a mistake can be undone; with
        `purge` its history and backups are scrubbed as well, and what a note already
        forgotten left behind (see `plan_forget`)."""
        store, found = self._find_or_left(id, scope, purge)
        id = found.id
        if purge and store.directory.read_bytes(id) is None:
            return self._purge_left(store, found)
        event = WriteEvent.PURGE if purge else WriteEvent.FORGET
        with store.lock():
            # The removal stays undoable until its audit entry is written: a disk that fails
            # before then leaves the note where it was. Purging comes after, since copies
            # that are gone cannot be put back.
            with store.undoable(()) as rollback:
                removed, backup = store.remove(
                    id,
                    backup_reason=None if purge else "forget",
                    event=event,
                    expect_hash=expect_hash,
                    rollback=rollback,
                )
                fields: dict[str, str | int | None] = {
                    "scope": store.scope.value,
                    "note_id": id,
                    "note_hash": removed.hash,
                    "backup_id": backup.id if backup else None,
                    "count": sum(self._kept_copies(store, id)) if purge else None,
                }
                self.stores.audit.append_many(
                    [*rollback.audit, (event.value, fields)], rollback=rollback
                )
            # From here the note is forgotten, and said so in the audit log: a step that the
            # disk refuses is reported with what it left, the others still run.
            refused: builtins.list[str] = []
            versions: int | None = 0
            backups: int | None = 0
            if purge:
                versions = _or_refused(refused, "scrubbing its history", store.history.purge, id)
                backups = _or_refused(
                    refused, "scrubbing its backups", self.stores.backups.purge, id, store.path
                )
                _or_refused(
                    refused, "scrubbing its sync copies", self._replica().purge, store.scope, id
                )
                # A temp copy (the removal's, if its unlink failed; a crashed write's) goes too.
                _or_refused(refused, "removing temp copies", store.directory.clear_leftovers)
        _or_refused(refused, "updating the index", self._retriever().forget, store, id, scrub=purge)
        checks = self._verify_forgotten(store, removed, purge, refused)
        return ForgetResult(id, store.scope, backup, versions or 0, backups or 0, checks)

    def _find_or_left(
        self, id: str, scope: Scope | str | None, purge: bool
    ) -> tuple[ScopeStore, Note]:
        """The note (`Stores.find`: an id or a unique prefix), or with `purge` the last
        stored version of one already forgotten whose history or backups remain; NotFound
        when there is neither. An exact id wins: purging a note forgotten before never
        turns into purging another note whose id begins with it."""
        chosen = self.stores.chosen(parse_scope(scope))
        if purge and is_valid_id(id) and all(store.get(id) is None for store in chosen):
            for store in chosen:
                kept = [r.rev for r in store.history.revisions(id) if r.rev]
                if kept or self._kept_copies(store, id)[1]:
                    note = self._last_version(store, id, kept)
                    if note is not None:
                        return store, note
        return self.stores.find(id, scope)

    def _last_version(self, store: ScopeStore, id: str, revs: Sequence[str]) -> Note | None:
        for rev in reversed(revs):
            with contextlib.suppress(MemdirError):
                return parse_note(store.history.read(rev), file_id=id)
        for record in self.stores.backups.list(limit=None):
            if record.note_id == id and record.origin in (None, store.path):
                with contextlib.suppress(MemdirError):
                    return parse_note(self.stores.backups.get(record.id)[1], file_id=id)
        return None

    def _purge_left(self, store: ScopeStore, note: Note) -> ForgetResult:
        """Scrub what a forgotten note left (history, backups, sync copies, index)."""
        refused: builtins.list[str] = []
        with store.lock():
            if store.directory.read_bytes(note.id) is not None:  # written again meanwhile
                raise Conflict(f"note {note.id} exists again; nothing was purged")
            count = sum(self._kept_copies(store, note.id))
            self.stores.audit.append(
                WriteEvent.PURGE.value, scope=store.scope.value, note_id=note.id, count=count
            )
            versions = _or_refused(refused, "scrubbing its history", store.history.purge, note.id)
            backups = _or_refused(
                refused, "scrubbing its backups", self.stores.backups.purge, note.id, store.path
            )
            replica = self._replica()
            _or_refused(refused, "scrubbing its sync copies", replica.purge, store.scope, note.id)
            _or_refused(refused, "removing temp copies", store.directory.clear_leftovers)
        retriever = self._retriever()
        _or_refused(refused, "updating the index", retriever.forget, store, note.id, scrub=True)
        checks = self._verify_forgotten(store, note, True, refused)
        return ForgetResult(note.id, store.scope, None, versions or 0, backups or 0, checks)

    def _kept_copies(self, store: ScopeStore, id: str) -> tuple[int, int]:
        """(versions in history, backups) of a note: what purging it removes."""
        versions = len({r.rev for r in store.history.revisions(id) if r.rev})
        backups = sum(
            1
            for b in self.stores.backups.list(limit=None)
            if b.note_id == id and b.origin in (None, store.path)
        )
        return versions, backups

    def _verify_forgotten(
        self, store: ScopeStore, note: Note, purge: bool, refused: Sequence[str] = ()
    ) -> tuple[str, ...]:
        failures: builtins.list[str] = []
        if store.directory.read_bytes(note.id) is not None:
            failures.append(f"the file {store.directory.file_for(note.id)} still exists")
        remaining = self.stores.all_notes(store.scope)
        if any(n.id == note.id for n in remaining):
            failures.append("the note is still listed")
        refused = [*refused]
        failures.extend(
            _or_refused(refused, "checking the index", self._retriever().traces, store, note) or ()
        )
        checks = [
            "file removed",
            "not listed",
            "not in the index or its vectors",
            "search for its distinctive terms does not return it",
        ]
        if purge:
            leftovers = store.history.leftovers(note.id)
            if leftovers:
                failures.append(f"{len(leftovers)} history objects still hold it")
            if any(
                b.note_id == note.id and b.origin in (None, store.path)
                for b in self.stores.backups.list(None)
            ):
                failures.append("a backup still holds it")
            if any(store.path.glob(f".{note.id}.md{TEMP_MARKER}*")):
                failures.append("a temp copy of its file still holds it")
            if self._replica().holds_copy(store.scope, note.id):
                failures.append("the sync baseline still holds it")
            checks += [
                "history scrubbed",
                "backups scrubbed",
                "sync copies on this machine scrubbed",
            ]
        if refused:
            # The disk said no part-way: the note is forgotten, not everything it left is gone.
            raise DiskError(
                f"{note.id} was forgotten (its file removed, the audit log says so), but "
                + "; ".join([*refused, *failures])
                + ". Run the same forget again once the disk has room, or see `memdir doctor`",
                hint=Remedy.DOCTOR,
            )
        if failures:
            raise IntegrityError(
                f"forget of {note.id} could not be verified: " + "; ".join(failures)
            )
        return tuple(checks)

    # -- health -------------------------------------------------------------------------

    def doctor(self, deep: bool = False) -> DoctorReport:
        """Unparseable files (never modified), dangling links, limits, damaged search indexes
        and warnings; `deep` also verifies every history object, backup and audit entry, and
        that each index holds exactly what the files hold (slower)."""
        problems: builtins.list[FileProblem] = []
        counts: dict[str, int] = {}
        dirs: dict[str, str] = {}
        leftovers: builtins.list[Path] = []
        notes: builtins.list[Note] = []
        cleaned = 0
        if self.settings.project_root is not None:
            try:
                load_project_id(self.settings.project_root)
            except InvalidInput as exc:
                self._warn(str(exc))
        for scope in self.stores.scopes:
            store = self.stores.store(scope)
            scan = store.scan()
            problems.extend(scan.problems)
            try:
                store.directory.marker()
            except IntegrityError as exc:  # notes open, writes are refused until it is fixed
                problems.append(FileProblem(scope, store.path / MARKER, str(exc)))
            counts[scope.value] = len(scan.notes) + scan.over_limit
            dirs[scope.value] = str(store.path)
            notes.extend(scan.notes.values())
            # Cleaning takes the lock, which creates the lock file: only when there is
            # something to clean, so that a plain check writes nothing into the project.
            if store.path.is_dir() and any(TEMP_MARKER in p.name for p in store.path.iterdir()):
                try:
                    with store.lock():
                        cleaned += store.directory.clear_leftovers()
                except Busy:
                    pass  # a writer is active; its temp files are not leftovers yet
                except OSError as exc:  # a full or read-only disk: checking goes on
                    self._warn(
                        f"{scope.value} scope: temp files left by interrupted writes were not "
                        f"removed ({exc.strerror or exc})"
                    )
            if store.path.is_dir():
                leftovers.extend(p for p in store.path.iterdir() if TEMP_MARKER in p.name)
            if scan.over_limit:
                self._warn(
                    f"{scope.value} scope: {scan.over_limit} notes above memory.maxNotes "
                    f"({self.settings.max_notes}) are not loaded"
                )
        from memdir.index.schema import index_file, needs_care  # doctor only, not start-up

        index = {(n.scope, n.id): n for n in notes}
        dangling = tuple(
            (n.id, t)
            for n in notes
            for t in n.links
            if self.stores.resolve_link(t, index).scope is None
        )
        findings = [
            finding
            for store in map(self.stores.store, self.stores.scopes)
            # Plain doctor asks the retriever (and loads numpy) only about an index that
            # needs it.
            if deep or needs_care(index_file(self.stores.home, store.state_key))
            for finding in self._retriever().index_findings(store, deep=deep)
        ]
        return DoctorReport(
            problems=tuple(problems),
            dangling=dangling,
            # the files a command left out are problems here, named with their reasons
            warnings=tuple(w for w in self._warnings if not is_skipped_message(w)),
            counts=counts,
            directories=dirs,
            leftovers=tuple(sorted(leftovers)),
            cleaned=cleaned,
            index=tuple(findings),
            integrity=tuple(self._verify_stored()) if deep else (),
            deep=deep,
        )

    def _verify_stored(self) -> builtins.list[str]:
        """What fails verification in history, the backups and the audit log (doctor --deep)."""
        problems: builtins.list[str] = []
        for scope in self.stores.scopes:
            try:
                history = self.stores.store(scope).history
            except InvalidInput:
                continue  # a damaged project file: reported above, no history to check
            problems.extend(history.verify())
        problems.extend(self.stores.backups.verify())
        problems.extend(f"audit log: {p}" for p in self.stores.audit.verify().problems)
        return problems


_T = TypeVar("_T")


def _or_refused(
    refused: list[str], what: str, step: Callable[..., _T], *args: Any, **kwargs: Any
) -> _T | None:
    """Run one clean-up step of a forget; a disk that refuses it is noted in `refused`."""
    try:
        return step(*args, **kwargs)
    except Exception as exc:
        mapped = disk_error(exc, "it is not done")
        if mapped is None:
            raise
        refused.append(f"{what} failed: {mapped}")
        return None
