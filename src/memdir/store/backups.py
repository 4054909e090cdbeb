"""Backups: copies of note versions replaced or removed without the user choosing them.

Each backup is ``$MEMDIR_HOME/memory-backups/<backup-id>.md`` (the exact file
bytes, readable on its own) plus ``<backup-id>.json`` with the time, reason,
scope and origin directory. A ``.md`` with no ``.json`` beside it is a backup
made before reasons existed: it is still listed and restorable.

The sidecar records the revision (SHA-256) of the bytes backed up. A backup whose
bytes no longer match it (edited or damaged on disk) is still listed, under its
recorded revision, but is refused with `IntegrityError` when read to be restored;
`verify` checks them all (doctor --deep). A backup with no recorded revision
(before sidecars existed) cannot be checked and is trusted as it is.

A backup of an encrypted scope is sealed (kind ``backup``, bound to its backup id and the
revision in its sidecar); listing needs no key (the sidecar has what a list shows),
reading one to restore it does.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memdir.core import content_hash, is_valid_id, parse_note
from memdir.crypto.seal import Kind, is_sealed
from memdir.errors import IntegrityError, InvalidInput, NotFound, ParseError, Remedy
from memdir.files.atomic import atomic_write, ensure_private_dir, remove_durably, remove_quietly
from memdir.store.history import revision_of
from memdir.store.rollback import Rollback
from memdir.store.sealing import Sealer

__all__ = [
    "BackupRecord",
    "Backups",
]


@dataclass(frozen=True, slots=True)
class BackupRecord:
    """One backup. `reason`, `scope` and `origin` are None for legacy backups."""

    id: str
    note_id: str | None
    created_at: int
    reason: str | None
    scope: str | None
    origin: Path | None
    revision: str
    note_hash: str | None
    path: Path


_BACKUP_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
_REV = re.compile(r"[0-9a-f]{64}")


class Backups:
    """The backup folder of one MEMDIR_HOME."""

    def __init__(self, root: Path) -> None:
        self.root = root
        #: The sealer for new backups of a scope (by its name) when it is encrypted.
        self.sealing: Callable[[str], Sealer | None] = lambda _scope: None
        #: The sealer that opens sealed backups (None: this home has no keyring).
        self.opener: Callable[[], Sealer | None] = lambda: None

    def _open(self, backup_id: str, raw: bytes, revision: str | None, md: Path) -> bytes:
        if not is_sealed(raw):
            return raw
        sealer = self.opener()
        where = f"backup {backup_id} ({md})"
        if sealer is None:
            raise IntegrityError(f"{where} is sealed, but this memdir home has no keyring")
        return sealer.open(Kind.BACKUP, backup_id, raw, where=where, revision=revision)

    def convert(self, scope: str, origin: Path) -> int:
        """Seal (or open) every backup of `scope` made from the directory `origin` as that
        scope now says (other projects' backups are left as they are); how many changed.

        Sealing errs on the side of sealing: it also takes the backups of this scope whose
        origin folder is gone (the project was moved or renamed) and the backups made
        before sidecars existed (no scope, no origin). Opening takes only this folder's
        own backups, so a backup another encrypted folder may own stays sealed."""
        if not self.root.is_dir():
            return 0
        sealer = self.sealing(scope)
        changed = 0
        for md in sorted(self.root.glob("*.md")):
            record, raw = self._read(md, open_data=False)
            if (sealer is not None) == is_sealed(raw):
                continue
            ours = record.scope == scope and record.origin == origin
            if sealer is not None and not ours:
                moved = record.scope == scope and (
                    record.origin is None or not record.origin.exists()
                )
                ours = moved or record.scope is None
            if not ours:
                continue
            plain = self._read(md)[1] if is_sealed(raw) else raw  # checked as when restored
            data = sealer.seal(Kind.BACKUP, record.id, plain) if sealer is not None else plain
            atomic_write(md, data, mode=0o600)
            changed += 1
        return changed

    def add(
        self,
        note_id: str,
        data: bytes,
        *,
        reason: str,
        scope: str,
        origin: Path,
        rollback: Rollback | None = None,
    ) -> BackupRecord:
        """Copy `data` into the backups with its reason and origin; return the record.

        With `rollback`, undoing removes the copy again.
        """
        if not is_valid_id(note_id):
            raise InvalidInput(f"{note_id!r} is not a note id")
        ensure_private_dir(self.root)
        now = time.time()
        stamp = datetime.fromtimestamp(now, UTC).strftime("%Y%m%dT%H%M%S%fZ")
        backup_id = f"{stamp}-{note_id}-{secrets.token_hex(2)}"
        note_hash = None
        with contextlib.suppress(ParseError):
            n = parse_note(data, file_id=note_id)
            note_hash = content_hash(n.summary, n.tags, n.body, n.type, n.supersedes)
        sealer = self.sealing(scope)
        record = BackupRecord(
            id=backup_id,
            note_id=note_id,
            created_at=int(now * 1000),
            reason=reason,
            scope=scope,
            origin=origin,
            revision=revision_of(data),
            note_hash=note_hash,
            path=self.root / f"{backup_id}.md",
        )
        meta_path = self.root / f"{backup_id}.json"
        if rollback is not None:

            def drop() -> None:
                remove_quietly(meta_path)
                remove_quietly(record.path)

            rollback.on_undo(f"backing up {note_id}", drop)
        stored = sealer.seal(Kind.BACKUP, backup_id, data) if sealer is not None else data
        atomic_write(record.path, stored, mode=0o600)
        meta = {
            "id": backup_id,
            "noteId": note_id,
            "createdAt": record.created_at,
            "reason": reason,
            "scope": scope,
            "origin": str(origin),
            "revision": record.revision,
            "hash": note_hash,
        }
        atomic_write(meta_path, json.dumps(meta).encode(), mode=0o600)
        return record

    def _load(self, md: Path) -> BackupRecord:
        return self._read(md, open_data=False)[0]

    def _read(self, md: Path, *, open_data: bool = True) -> tuple[BackupRecord, bytes]:
        """The record (with the revision its sidecar recorded, if any) and the bytes (a
        sealed backup's opened, unless not `open_data`: then as they are on disk)."""
        backup_id = md.name[:-3]
        data = md.read_bytes()
        meta: dict[str, object] = {}
        with contextlib.suppress(OSError, ValueError):
            loaded = json.loads((self.root / f"{backup_id}.json").read_text("utf-8"))
            if isinstance(loaded, dict):
                meta = loaded
        sealed_rev = meta.get("revision")
        if is_sealed(data) and open_data:
            rev = sealed_rev if isinstance(sealed_rev, str) else None
            data = self._open(backup_id, data, rev, md)
        note_id = meta.get("noteId")
        if not isinstance(note_id, str):
            note_id = None
            with contextlib.suppress(ParseError):
                note_id = parse_note(data).id
        created = meta.get("createdAt")
        origin = meta.get("origin")
        reason, scope, hash_ = meta.get("reason"), meta.get("scope"), meta.get("hash")
        recorded = meta.get("revision")
        record = BackupRecord(
            id=backup_id,
            note_id=note_id,
            created_at=created if isinstance(created, int) else md.stat().st_mtime_ns // 10**6,
            reason=reason if isinstance(reason, str) else None,
            scope=scope if isinstance(scope, str) else None,
            origin=Path(origin) if isinstance(origin, str) else None,
            revision=recorded
            if isinstance(recorded, str) and _REV.fullmatch(recorded)
            else revision_of(data),
            note_hash=hash_ if isinstance(hash_, str) else None,
            path=md,
        )
        return record, data

    @staticmethod
    def _mismatch(record: BackupRecord, data: bytes) -> str | None:
        if revision_of(data) == record.revision:
            return None
        return (
            f"backup {record.id} ({record.path}) does not match the revision recorded when it "
            f"was made ({record.revision[:12]}): edited or damaged on disk"
        )

    def list(self, limit: int | None = 50) -> builtins.list[BackupRecord]:
        """Backups, newest first (the latest `limit`; None for all)."""
        if not self.root.is_dir():
            return []
        records = []
        for md in self.root.glob("*.md"):
            with contextlib.suppress(OSError):
                records.append(self._load(md))
        records.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return records if limit is None else records[:limit]

    def get(self, backup_id: str) -> tuple[BackupRecord, bytes]:
        """A backup and its bytes; InvalidInput for a malformed id, NotFound when absent."""
        if not _BACKUP_ID.fullmatch(backup_id) or ".." in backup_id:
            raise InvalidInput(f"{backup_id!r} is not a backup id")
        md = self.root / f"{backup_id}.md"
        if not md.is_file():
            raise NotFound(f"no backup {backup_id}", hint=Remedy.BACKUPS)
        record, data = self._read(md)
        mismatch = self._mismatch(record, data)
        if mismatch is not None:
            raise IntegrityError(f"{mismatch}; it is not used", hint=Remedy.DOCTOR)
        return record, data

    def verify(self) -> builtins.list[str]:
        """Every backup whose bytes do not match the revision recorded with it."""
        if not self.root.is_dir():
            return []
        problems: builtins.list[str] = []
        for md in sorted(self.root.glob("*.md")):
            try:
                mismatch = self._mismatch(*self._read(md))
            except OSError as exc:
                mismatch = f"backup {md.name[:-3]} ({md}) cannot be read: {exc.strerror}"
            except IntegrityError as exc:
                mismatch = str(exc)
            if mismatch is not None:
                problems.append(mismatch)
        return problems

    def purge(self, note_id: str, origin: Path | None = None) -> int:
        """Delete every backup of `note_id` (from `origin`, when given); return how many."""
        if not is_valid_id(note_id):
            raise InvalidInput(f"{note_id!r} is not a note id")
        removed = 0
        failed: OSError | None = None
        for record in self.list(limit=None):
            if record.note_id != note_id:
                continue
            if origin is not None and record.origin not in (None, origin):
                continue
            try:
                remove_durably(record.path)
                with contextlib.suppress(FileNotFoundError):
                    (self.root / f"{record.id}.json").unlink()
            except OSError as exc:  # the others still go; the first failure is raised after
                failed = failed or exc
                continue
            removed += 1
        if failed is not None:
            raise failed
        return removed
