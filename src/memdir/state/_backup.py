"""Backups of a SQLite state store with the online backup API, and verified restores.

A backup is a directory holding ``state.sqlite3`` (a consistent copy taken while writers
may run) and ``manifest.json`` with its size and SHA-256, signed by this machine's key
(`_trust`). A restore checks the manifest, the signature, the file's sum, SQLite's own
integrity check and every row (`_restored`: the schema's shape and the no-credential guard)
before touching anything, and keeps a backup of the store as it was. It then replaces the
tasks, goals, sessions and meta with the backup's in one transaction under SQLite's write
lock, so readers see either the old or the new state. The audit table is never replaced: its
past stays as it is, and the restore appends to it (`restore_into`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.errors import Conflict, DiskError, IntegrityError, NotFound, Refused, disk_error
from memdir.files.atomic import TEMP_MARKER, atomic_write, ensure_private_dir, fsync_dir

from ._db import SqliteDb, sqlite_error
from ._restored import ALIAS, COLUMNS, check_rows
from ._trust import BackupKey, Trust, sign_manifest, trust_of

__all__ = [
    "DB_NAME",
    "FORMAT",
    "MANIFEST_NAME",
    "Restored",
    "manifest_sum",
    "restore_into",
    "take_backup",
    "verify_backup",
]

DB_NAME = "state.sqlite3"
MANIFEST_NAME = "manifest.json"
FORMAT = "memdir-state-backup"
FORMAT_VERSION = 2
#: Version 1 manifests (before backups were signed) still verify, as foreign backups.
_VERSIONS = (1, FORMAT_VERSION)
#: The tables a restore replaces; the audit table is only ever appended to.
_REPLACED = ("state_goals", "state_tasks", "state_sessions", "state_meta")


def _sha256(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _disk(exc: OSError | sqlite3.Error, outcome: str) -> Exception:
    if isinstance(exc, sqlite3.Error):
        return sqlite_error(exc, outcome)
    return disk_error(exc, outcome) or DiskError(f"{outcome}: {exc}")


def _copy_db(source: sqlite3.Connection, dest: Path) -> None:
    """Copy `source` into a new self-contained file at `dest` (mode 0600, no WAL)."""
    os.close(os.open(dest, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    target = sqlite3.connect(dest, isolation_level=None)
    try:
        source.backup(target)
        target.execute("PRAGMA journal_mode=DELETE")
    finally:
        target.close()
    fd = os.open(dest, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def manifest_sum(manifest: dict[str, Any]) -> str:
    """The SHA-256 of the manifest's other fields, so a changed count or time is caught too."""
    rest = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    canonical = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def take_backup(
    source: sqlite3.Connection,
    directory: Path,
    *,
    created_at: int,
    rows: dict[str, int],
    key: BackupKey,
) -> dict[str, Any]:
    """Write a backup of `source` into `directory` (new or empty), its manifest signed by
    `key`; return the manifest. A failure leaves no file of it behind."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise Refused(f"the backup directory {directory} is not empty; choose a new one")
    key.public_key()  # an unusable key file refuses the backup before anything is written
    created = not directory.exists()
    db = directory / DB_NAME
    try:
        ensure_private_dir(directory)
        _copy_db(source, db)
        sha, size = _sha256(db)
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "created_at": created_at,
            "rows": rows,
            "files": {DB_NAME: {"sha256": sha, "size": size}},
        }
        sign_manifest(manifest, key)
        manifest["manifest_sha256"] = manifest_sum(manifest)
        data = json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n"
        atomic_write(directory / MANIFEST_NAME, data, mode=0o600)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            db.unlink(missing_ok=True)
            if created:
                directory.rmdir()
        if isinstance(exc, (OSError, sqlite3.Error)):
            raise _disk(exc, "the backup is incomplete") from None
        raise
    return manifest


def _damaged(directory: Path, why: str) -> IntegrityError:
    return IntegrityError(f"the backup in {directory} is damaged: {why}; nothing was changed")


def verify_backup(
    directory: Path, machine: str | None, *, accept_foreign: bool = False
) -> tuple[dict[str, Any], Trust]:
    """Check a backup's manifest, file sums and signature against this machine's public key
    `machine`; return the manifest and how its signature stands, or raise IntegrityError.

    A foreign backup (unsigned, or signed by another key) passes only with `accept_foreign`;
    a signature that does not verify never does."""
    if not directory.is_dir():
        raise NotFound(f"no backup directory at {directory}")
    try:
        manifest = json.loads((directory / MANIFEST_NAME).read_bytes())
    except FileNotFoundError:
        raise _damaged(directory, f"{MANIFEST_NAME} is missing") from None
    except (OSError, ValueError, RecursionError):
        raise _damaged(directory, f"{MANIFEST_NAME} cannot be read as JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _damaged(directory, f"{MANIFEST_NAME} is not a state store backup manifest")
    if manifest.get("version") not in _VERSIONS:
        raise _damaged(directory, f"manifest version {manifest.get('version')!r} is unknown")
    if manifest.get("manifest_sha256") != manifest_sum(manifest):
        raise _damaged(directory, f"{MANIFEST_NAME} was changed (its own SHA-256 differs)")
    files = manifest.get("files")
    entry = files.get(DB_NAME) if isinstance(files, dict) else None
    if not isinstance(files, dict) or not isinstance(entry, dict) or set(files) != {DB_NAME}:
        raise _damaged(directory, f"the manifest does not list exactly {DB_NAME}")
    try:
        sha, size = _sha256(directory / DB_NAME)
    except FileNotFoundError:
        raise _damaged(directory, f"{DB_NAME} is missing") from None
    except OSError as exc:
        raise _disk(exc, "nothing was changed") from None
    if size != entry.get("size"):
        raise _damaged(
            directory, f"{DB_NAME} is {size} bytes, the manifest says {entry.get('size')}"
        )
    if sha != entry.get("sha256"):
        raise _damaged(directory, f"the SHA-256 of {DB_NAME} does not match the manifest")
    trust = trust_of(manifest, machine)
    if not trust.authenticated and not trust.acceptable:
        raise IntegrityError(
            f"the backup in {directory} is refused: {trust.problem}; nothing was changed"
        )
    if not trust.authenticated and not accept_foreign:
        raise IntegrityError(
            f"the backup in {directory} is not authenticated by this machine's key: "
            f"{trust.problem}; nothing was changed. A backup you moved here from another "
            "machine yourself can be restored by accepting it explicitly as foreign: every "
            "other check still runs, and its audit entries are not imported"
        )
    return manifest, trust


def _check_database(path: Path, directory: Path) -> None:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            (result,) = conn.execute("PRAGMA integrity_check").fetchone()
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        raise _damaged(directory, f"{DB_NAME} is not a SQLite database") from None
    if result != "ok":
        raise _damaged(directory, "SQLite's integrity check failed")
    if "state_schema" not in tables:
        raise _damaged(directory, f"{DB_NAME} is not a state store")


@dataclass(frozen=True, slots=True)
class Restored:
    """What a restore did besides replacing rows: whether the backup was authenticated by
    this machine's key, and how many of its audit entries were appended or left out."""

    authenticated: bool
    audit_imported: int
    audit_not_imported: int


def restore_into(
    db: SqliteDb,
    live_path: Path,
    directory: Path,
    pre_restore: Path,
    *,
    key: BackupKey,
    accept_foreign: bool,
    created_at: int,
    rows: dict[str, int],
    record: Callable[[str], None],
) -> Restored:
    """Verify the backup in `directory` and its rows, back the live store up into
    `pre_restore`, then replace the live tasks, goals, sessions and meta with the backup's in
    one transaction that also calls `record` (with ``state.restore``, or
    ``state.restore.foreign`` for a foreign backup) to append the restore's audit entry.

    The live audit table keeps every entry it has. The backup's audit entries are appended
    only when the backup is authenticated and continues this store's history (every entry
    both hold is the same): those past the live table's last seq. Otherwise none are.
    """
    manifest, trust = verify_backup(directory, key.public_key(), accept_foreign=accept_foreign)
    temp = live_path.with_name(f"{live_path.name}{TEMP_MARKER}restore")
    with contextlib.suppress(FileNotFoundError):
        temp.unlink()
    attached = False
    try:
        try:
            # Work on a private copy checked again, so a backup changed after the check
            # cannot slip in.
            with (directory / DB_NAME).open("rb") as src:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as out:
                    while chunk := src.read(1 << 20):
                        out.write(chunk)
                    out.flush()
                    os.fsync(out.fileno())
            if _sha256(temp)[0] != manifest["files"][DB_NAME]["sha256"]:
                raise _damaged(directory, f"{DB_NAME} changed while it was being read")
            _check_database(temp, directory)
        except (OSError, sqlite3.Error) as exc:
            raise _disk(exc, "nothing was changed") from None
        db.query(f"ATTACH DATABASE ? AS {ALIAS}", (str(temp),))
        attached = True
        check_rows(db, directory)
        (before,) = db.query("SELECT COALESCE(MAX(seq), 0) FROM main.state_audit")[0]
        try:
            take_backup(db.conn, pre_restore, created_at=created_at, rows=rows, key=key)
        except (OSError, sqlite3.Error) as exc:
            raise _disk(exc, "nothing was changed") from None
        try:
            with db.write():
                (now,) = db.query("SELECT COALESCE(MAX(seq), 0) FROM main.state_audit")[0]
                if now != before:
                    raise Conflict(
                        "the state store was written to while the restore ran; nothing was "
                        "changed, try again"
                    )
                for table in _REPLACED:
                    listed = ", ".join(COLUMNS[table][0])
                    db.query(f"DELETE FROM main.{table}")
                    db.query(
                        f"INSERT INTO main.{table} ({listed}) SELECT {listed} FROM {ALIAS}.{table}"
                    )
                imported, left_out = _append_audit_rows(db, int(before), trust.authenticated)
                record("state.restore" if trust.authenticated else "state.restore.foreign")
        except Conflict:
            shutil.rmtree(pre_restore, ignore_errors=True)  # a copy of a store left as it is
            raise
        return Restored(trust.authenticated, imported, left_out)
    finally:
        if attached:
            with contextlib.suppress(Exception):
                db.query(f"DETACH DATABASE {ALIAS}")
        with contextlib.suppress(OSError):
            temp.unlink()
            fsync_dir(live_path.parent)


def _append_audit_rows(db: SqliteDb, last: int, authenticated: bool) -> tuple[int, int]:
    """Append the backup's audit entries past seq `last` when it may; (appended, left out)."""
    differ = (
        f"SELECT COUNT(*) FROM main.state_audit m JOIN {ALIAS}.state_audit r ON r.seq = m.seq "
        "WHERE r.ts != m.ts OR r.actor != m.actor OR r.action != m.action "
        "OR r.object_id != m.object_id"
    )
    (differing,) = db.query(differ)[0]
    (beyond,) = db.query(f"SELECT COUNT(*) FROM {ALIAS}.state_audit WHERE seq > ?", (last,))[0]
    if not authenticated or differing or not beyond:
        return 0, int(differing) + int(beyond)
    listed = ", ".join(COLUMNS["state_audit"][0])
    db.query(
        f"INSERT INTO main.state_audit ({listed}) "
        f"SELECT {listed} FROM {ALIAS}.state_audit WHERE seq > ? ORDER BY seq",
        (last,),
    )
    return int(beyond), 0
