"""Backups of a SQLite state store with the online backup API, and verified restores.

A backup is a directory holding ``state.sqlite3`` (a consistent copy taken while writers
may run) and ``manifest.json`` with its size and SHA-256. A restore checks the manifest,
the file's sum and SQLite's own integrity check before touching anything, keeps a backup
of the store as it was, then copies the backup into the live database with the same API —
one transaction under SQLite's write lock, so readers see either the old or the new state.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from memdir.errors import DiskError, IntegrityError, NotFound, Refused, disk_error
from memdir.files.atomic import TEMP_MARKER, atomic_write, ensure_private_dir, fsync_dir

from ._db import sqlite_error

__all__ = [
    "DB_NAME",
    "FORMAT",
    "MANIFEST_NAME",
    "manifest_sum",
    "restore_into",
    "take_backup",
    "verify_backup",
]

DB_NAME = "state.sqlite3"
MANIFEST_NAME = "manifest.json"
FORMAT = "memdir-state-backup"
FORMAT_VERSION = 1


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
    source: sqlite3.Connection, directory: Path, *, created_at: int, rows: dict[str, int]
) -> dict[str, Any]:
    """Write a backup of `source` into `directory` (new or empty); return its manifest."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise Refused(f"the backup directory {directory} is not empty; choose a new one")
    try:
        ensure_private_dir(directory)
        db = directory / DB_NAME
        _copy_db(source, db)
        sha, size = _sha256(db)
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "created_at": created_at,
            "rows": rows,
            "files": {DB_NAME: {"sha256": sha, "size": size}},
        }
        manifest["manifest_sha256"] = manifest_sum(manifest)
        data = json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n"
        atomic_write(directory / MANIFEST_NAME, data, mode=0o600)
    except (OSError, sqlite3.Error) as exc:
        raise _disk(exc, "the backup is incomplete") from None
    return manifest


def _damaged(directory: Path, why: str) -> IntegrityError:
    return IntegrityError(f"the backup in {directory} is damaged: {why}; nothing was changed")


def verify_backup(directory: Path) -> dict[str, Any]:
    """Check a backup's manifest and file sums; return the manifest or raise IntegrityError."""
    if not directory.is_dir():
        raise NotFound(f"no backup directory at {directory}")
    try:
        manifest = json.loads((directory / MANIFEST_NAME).read_bytes())
    except FileNotFoundError:
        raise _damaged(directory, f"{MANIFEST_NAME} is missing") from None
    except (OSError, ValueError):
        raise _damaged(directory, f"{MANIFEST_NAME} cannot be read as JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _damaged(directory, f"{MANIFEST_NAME} is not a state store backup manifest")
    if manifest.get("version") != FORMAT_VERSION:
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
    if size != entry.get("size"):
        raise _damaged(
            directory, f"{DB_NAME} is {size} bytes, the manifest says {entry.get('size')}"
        )
    if sha != entry.get("sha256"):
        raise _damaged(directory, f"the SHA-256 of {DB_NAME} does not match the manifest")
    return manifest


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


def restore_into(
    live: sqlite3.Connection,
    live_path: Path,
    directory: Path,
    pre_restore: Path,
    *,
    created_at: int,
    rows: dict[str, int],
) -> None:
    """Verify the backup in `directory`, back the live store up into `pre_restore`, then
    replace the live database's contents with the backup's in one transaction."""
    manifest = verify_backup(directory)
    temp = live_path.with_name(f"{live_path.name}{TEMP_MARKER}restore")
    with contextlib.suppress(FileNotFoundError):
        temp.unlink()
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
        take_backup(live, pre_restore, created_at=created_at, rows=rows)
        source = sqlite3.connect(temp, isolation_level=None)
        try:
            source.backup(live)
        finally:
            source.close()
        live.execute("PRAGMA journal_mode=WAL")
    except (OSError, sqlite3.Error) as exc:
        raise _disk(exc, "the store was not replaced") from None
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()
            fsync_dir(live_path.parent)
