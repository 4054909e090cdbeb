"""`Memory.backups`: the backups kept before every replace or delete, and restoring one."""

from __future__ import annotations

import builtins
import difflib
from dataclasses import dataclass

from memdir.core import DEFAULT_SCOPE, Note, is_valid_id, parse_note
from memdir.core.vocab import WriteEvent
from memdir.errors import InvalidInput, NotFound, ParseError, Refused, Remedy
from memdir.memory.stores import Stores
from memdir.store import BackupRecord, ScopeStore, revision_of

__all__ = ["BackupShelf", "RestoreResult"]


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """A restored note and the backup of the version it replaced, if any."""

    note: Note
    backup_id: str
    replaced_backup: BackupRecord | None


class BackupShelf:
    """The backups of one memory's home, newest first, and restoring them."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    def __call__(self, limit: int | None = 50) -> builtins.list[BackupRecord]:
        """The latest backups, newest first."""
        return self.stores.backups.list(limit)

    def restore(self, backup_id: str) -> RestoreResult:
        """Put a backup back in the directory it came from, backing up a newer version first.

        `backup_id` may also name a note of this memory (its id or a unique prefix): then
        that note's latest backup is restored. An argument that is both is a backup id.
        """
        record, data = self._backup_for(backup_id)
        backup_id = record.id
        # A note file may leave its id to the file name; the backup's record keeps that id.
        file_id = record.note_id if is_valid_id(record.note_id) else None
        try:
            note = parse_note(data, file_id=file_id)
        except ParseError as exc:
            raise Refused(f"backup {backup_id} cannot be restored: {exc}") from None
        store = self._restore_target(record, note)
        located = note.located(store.scope, store.directory.file_for(note.id))
        with store.lock():
            current = store.directory.read_bytes(note.id)
            if current is not None and revision_of(current) == record.revision:
                return RestoreResult(located, backup_id, None)
            outcome = store.save(
                located,
                raw=data,
                event=WriteEvent.RESTORE,
                backup_reason="replaced by restore" if current is not None else None,
                expect_revision=revision_of(current) if current is not None else "",
            )
        replaced = None
        if current is not None:
            replaced = next((b for b in self.stores.backups.list(5) if b.note_id == note.id), None)
        return RestoreResult(outcome.note, backup_id, replaced)

    def _backup_for(self, ref: str) -> tuple[BackupRecord, bytes]:
        """The backup `ref` names: a backup id, else the latest backup of the note it names."""
        try:
            return self.stores.backups.get(ref)
        except (NotFound, InvalidInput) as error:
            not_a_backup = error
        here = {store.path.resolve() for store in self.stores.by_scope.values()}
        records = [
            r
            for r in self.stores.backups.list(limit=None)
            if is_valid_id(r.note_id) and (r.origin is None or r.origin.resolve() in here)
        ]
        latest: dict[str, BackupRecord] = {}
        for r in records:  # newest first
            latest.setdefault(str(r.note_id), r)
        if ref in latest:
            return self.stores.backups.get(latest[ref].id)
        key = ref.casefold()
        matches = sorted(i for i in latest if i.startswith(key))
        if len(matches) == 1:
            return self.stores.backups.get(latest[matches[0]].id)
        if matches:
            shown = "\n".join(f"  {i}  (backup {latest[i].id})" for i in matches[:10])
            more = f"\n  … and {len(matches) - 10} more" if len(matches) > 10 else ""
            raise InvalidInput(
                f"{ref} is the beginning of {len(matches)} ids of notes with backups; give "
                f"more of the id:\n{shown}{more}"
            )
        if isinstance(not_a_backup, InvalidInput) and not is_valid_id(ref):
            raise not_a_backup
        close = difflib.get_close_matches(key, [*latest, *(r.id for r in records)], n=5)
        hint = ("; did you mean: " + ", ".join(close)) if close else ""
        raise NotFound(
            f"no backup {ref}, and no note {ref} with a backup{hint}", hint=Remedy.BACKUPS
        )

    def _restore_target(self, record: BackupRecord, note: Note) -> ScopeStore:
        if record.origin is None:
            return self.stores.store(DEFAULT_SCOPE[note.type])
        for store in self.stores.by_scope.values():
            if store.path.resolve() == record.origin.resolve():
                return store
        raise Refused(
            f"backup {record.id} came from {record.origin}, which is not a note directory of "
            "this project",
            hint=Remedy.OTHER_PROJECT,
        )
