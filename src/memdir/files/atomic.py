"""Crash-safe file replacement: temp file beside the target, fsync, rename, fsync the directory."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import time
from pathlib import Path

from memdir.errors import InvalidInput, Refused

__all__ = [
    "TEMP_MARKER",
    "atomic_create",
    "atomic_write",
    "check_private_target",
    "ensure_private_dir",
    "fsync_dir",
    "open_lock_file",
    "remove_durably",
    "remove_quietly",
    "write_private",
]

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
    """Create `directory` (and missing parents) readable by this user only; return it.

    Existing directories keep their mode. (`mkdir(parents=True)` would create the
    parents with the default mode, so they are created one by one here.)
    """
    missing: list[Path] = []
    parent = directory.parent
    while parent != parent.parent and not parent.is_dir():
        missing.append(parent)
        parent = parent.parent
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)
    directory.mkdir(mode=0o700, exist_ok=True)
    return directory


def atomic_write(path: Path, data: bytes, *, mode: int = 0o666, sync_dir: bool = True) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new file.

    `mode` is filtered by the umask like any new file; pass 0o600 for private state.
    `sync_dir=False` leaves the directory fsync (which makes the rename durable) to the
    caller, who batches many writes into one directory and syncs it once at the end.
    A replaced file keeps its permissions (narrowed to `mode`): a note a person made
    private with chmod stays private when memdir rewrites it.
    """
    directory = path.parent
    try:
        keep: int | None = stat.S_IMODE(path.stat().st_mode) & mode
    except FileNotFoundError:
        keep = None
    tmp = directory / f".{path.name}{TEMP_MARKER}{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            if keep is not None:
                os.fchmod(fd, keep)
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
    if sync_dir:
        fsync_dir(directory)


def atomic_create(path: Path, data: bytes, *, mode: int = 0o666) -> bool:
    """Create `path` holding `data` unless it exists; False (nothing written) when it does.

    Of several processes racing to create the same file exactly one wins, and a crash
    leaves either no file or the whole file: the data is written to a temp file and
    hard-linked into place, which fails if the name is taken.
    """
    directory = path.parent
    tmp = directory / f".{path.name}{TEMP_MARKER}{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:
            # No hard links on this file system: exclusive create, written in place.
            try:
                out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            except FileExistsError:
                return False
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(out, view) :]
                os.fsync(out)
            finally:
                os.close(out)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    fsync_dir(directory)
    return True


def remove_durably(path: Path) -> bool:
    """Unlink `path` and fsync its directory; False when it was already gone."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    fsync_dir(path.parent)
    return True


def open_lock_file(path: Path | str, *, create: bool = True) -> int:
    """Open a lock file (created 0600 with `create`), never through a symbolic link.

    A link planted where a lock file belongs would otherwise be followed, and with
    `create` make a file wherever it points: that is refused (`Refused`), naming the path.
    """
    flags = (os.O_RDWR | os.O_CREAT if create else os.O_RDONLY) | os.O_CLOEXEC
    try:
        return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(
                f"the lock file {path} is a symbolic link; memdir does not follow it. "
                "Remove the link and try again."
            ) from None
        raise


def remove_quietly(path: Path) -> None:
    """Unlink `path` if it exists, without a directory fsync (a leftover temp file)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def check_private_target(path: Path, *, force: bool) -> None:
    """Refuse, before a secret is issued, to write it over an existing file (or nowhere)."""
    if path.is_dir():
        raise InvalidInput(f"{path} is a directory")
    if not path.parent.is_dir():
        raise InvalidInput(f"the directory of {path} does not exist")
    if path.exists() and not force:
        raise Refused(f"{path} exists; pass --force to overwrite it")


def write_private(path: Path, data: bytes, *, force: bool) -> None:
    """Write a secret (a token, a key, a capability) to `path` with mode 0600, durably.

    An existing file is replaced only with `force` (narrowed to 0600 first); otherwise
    the file is created exclusively, so a racing writer cannot be overwritten.
    """
    check_private_target(path, force=force)
    if force and path.exists():
        path.chmod(0o600)
        atomic_write(path, data, mode=0o600)
    elif not atomic_create(path, data, mode=0o600):
        raise Refused(f"{path} exists; pass --force to overwrite it")


def remove_stale_temps(root: Path, *, older_than: float = 60.0) -> int:
    """Remove temp files of interrupted writes anywhere under `root` that are older than
    `older_than` seconds (a writer still at work never keeps one that long); how many.
    Used before encrypting, since such a file may hold a plain copy of a note."""
    removed = 0
    cutoff = time.time() - older_than
    if not root.is_dir():
        return 0
    for path in root.rglob(f".*{TEMP_MARKER}*"):
        with contextlib.suppress(OSError):
            if path.is_file() and not path.is_symlink() and path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
    return removed
