"""Cross-process exclusive write lock per note directory (`fcntl.flock` on a lock file).

The lock is re-entrant within a thread, so a composite operation can hold it
while calling operations that take it too. Readers never take it.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path
from types import TracebackType

from memdir.errors import Busy
from memdir.files.atomic import open_lock_file

__all__ = ["DirLock"]

_POLL_SECONDS = 0.02
_held: dict[str, tuple[int, int, int]] = {}  # realpath -> (fd, depth, owner thread id)
_registry_lock = threading.Lock()


def _forget_inherited_locks() -> None:
    """In a forked child: the parent's locks are not ours (the forking thread's id lives on)."""
    global _registry_lock
    _registry_lock = threading.Lock()
    _held.clear()


os.register_at_fork(after_in_child=_forget_inherited_locks)


class DirLock:
    """`with DirLock(path, timeout, label):` holds an exclusive lock on `path`."""

    def __init__(self, path: Path, *, timeout: float, label: str) -> None:
        self.path = path
        self.timeout = timeout
        self.label = label
        self._key = str(path.parent.resolve() / path.name)

    def _reenter(self) -> bool:
        me = threading.get_ident()
        with _registry_lock:
            held = _held.get(self._key)
            if held is not None and held[2] == me:
                _held[self._key] = (held[0], held[1] + 1, me)
                return True
        return False

    def __enter__(self) -> DirLock:
        if self._reenter():
            return self
        deadline = time.monotonic() + self.timeout
        while True:
            # Other threads of this process wait here too: flock on a second
            # descriptor would not exclude them reliably across platforms.
            with _registry_lock:
                if self._key not in _held:
                    fd = open_lock_file(self.path)
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        os.close(fd)
                    else:
                        _held[self._key] = (fd, 1, threading.get_ident())
                        return self
            if time.monotonic() >= deadline:
                raise Busy(
                    f"another memdir process is writing {self.label}; gave up after "
                    f"{self.timeout:g} s (lock file {self.path}). Try again when it has finished."
                )
            time.sleep(_POLL_SECONDS)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with _registry_lock:
            fd, depth, owner = _held[self._key]
            if depth > 1:
                _held[self._key] = (fd, depth - 1, owner)
                return
            del _held[self._key]
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
