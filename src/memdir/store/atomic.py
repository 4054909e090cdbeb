"""Crash-safe file replacement: temp file beside the target, fsync, rename, fsync the directory."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

__all__ = ["TEMP_MARKER", "atomic_write", "ensure_private_dir", "fsync_dir", "remove_durably"]

#: Temp files carry this marker so scans skip them and a crash leaves them recognisable.
TEMP_MARKER = ".tmp-"


def fsync_dir(directory: Path) -> None:
    """Make a rename or unlink in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def ensure_private_dir(directory: Path) -> Path:
    """Create `directory` (and parents) readable by this user only; return it."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    return directory


def atomic_write(path: Path, data: bytes, *, mode: int = 0o666) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new file.

    `mode` is filtered by the umask like any new file; pass 0o600 for private state.
    """
    directory = path.parent
    tmp = directory / f".{path.name}{TEMP_MARKER}{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(directory)


def remove_durably(path: Path) -> bool:
    """Unlink `path` and fsync its directory; False when it was already gone."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    fsync_dir(path.parent)
    return True
