"""A watch of one note directory: which note files changed since the last look.

Long-running hosts (the MCP server, the memory page) would otherwise stat every note
file before every query to be sure no edit made outside memdir is served stale. A
watch replaces that with the kernel's own record of changes: Linux's inotify queues
an event in the very system call that changes a file (a write, a rename, a delete, a
``chmod``, a ``touch``), before that call returns. So reading the queue without
waiting, at the start of a query, yields every change that finished before the query
began; nothing is debounced or batched in between. (That ordering is why this reads
inotify directly, through `inotify_simple`, rather than through a debouncing watcher
library: a change made a millisecond before a query must be seen by it.)

Whenever the watch cannot vouch for the directory, `changes()` returns None and the
caller looks at every file, as it would with no watch:

- no inotify here (not Linux, the library missing, the per-user limit of watches or
  instances reached);
- a file system whose other clients' changes inotify does not see (NFS, SMB, FUSE
  mounts such as sshfs, 9p, Ceph…), read off ``/proc/self/mountinfo``;
- the kernel's event queue overflowed;
- the directory was removed, renamed, replaced (``git checkout`` of another branch,
  ``rm -r`` and a new one) or does not exist yet: the watch is set up again on the next
  look, which returns None once more;
- every `FULL_LOOK_SECONDS`, for what inotify never reports: a write through a hard link
  from outside the directory (the event goes to the directory of the name written
  through), or through a shared memory map (no event until it is unmapped).
"""

from __future__ import annotations

import contextlib
import errno
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["FULL_LOOK_SECONDS", "DirectoryWatch", "load_inotify", "unwatchable_reason"]

#: However quiet the watch, each consumer looks at every file this often: a bound on what
#: inotify never reports (a write through a hard link from outside the directory, or
#: through a shared memory map before it is unmapped).
FULL_LOOK_SECONDS = 300.0

#: File systems where inotify misses what other machines or the host change.
_REMOTE = frozenset(
    {
        *("nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs", "afs"),
        *("lustre", "gpfs", "vboxsf", "vmhgfs", "davfs", "fuse", "fuseblk", "virtiofs"),
        # Cluster file systems (other nodes' writes) and WSL 1's view of Windows drives.
        *("gfs2", "ocfs2", "drvfs", "beegfs", "orangefs", "cephfs"),
    }
)


def _mount_type(path: Path, mountinfo: str) -> str | None:
    """The file system type of the mount holding `path`, from mountinfo's text."""
    best, fstype = -1, None
    target = str(path)
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 5:
            continue
        point = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        # Of mounts on one point, the last listed is on top: that is the one seen.
        if inside and len(point) >= best:
            best, fstype = len(point), (right.split() or [""])[0]
    return fstype


def unwatchable_reason(path: Path, mountinfo: str | None = None) -> str | None:
    """Why a watch of `path` could not vouch for it (None: it can)."""
    if not sys.platform.startswith("linux"):
        return "inotify is Linux's"
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "the mount table cannot be read"
    fstype = _mount_type(path, mountinfo)
    if fstype is None:
        return "its file system is unknown"
    if fstype in _REMOTE or fstype.startswith("fuse."):
        return f"it is on {fstype}, where changes made elsewhere raise no event"
    return None


def load_inotify() -> Any:
    """The inotify_simple module (the default `loader` of `DirectoryWatch`), imported when a
    watch first needs it; Linux only."""
    import inotify_simple  # type: ignore[import-untyped]  # ctypes wrapper; Linux only

    return inotify_simple


class DirectoryWatch:
    """Which note files of one directory changed since each consumer's last look.

    `is_note_name` tells the note files from others (temp files, the lock). Calls from
    several threads are serialised.
    """

    def __init__(
        self,
        path: Path,
        is_note_name: Callable[[str], bool],
        *,
        loader: Callable[[], Any] = load_inotify,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self._is_note = is_note_name
        self._loader = loader
        self._lock = threading.Lock()
        self._ino: Any = None
        self._wd: int | None = None
        #: (st_dev, st_ino) of the directory watched, to notice it being replaced.
        self._dir: tuple[int, int] | None = None
        #: Why there is no watch (None: there is one, or none was tried yet).
        self.reason: str | None = None
        self._given_up = False
        #: What each consumer has not taken yet (None: unknown, it must look at every file).
        self._pending: dict[str, set[str] | None] = {}
        #: When each consumer was last told to look at every file.
        self._full_at: dict[str, float] = {}
        self._clock = clock

    def close(self) -> None:
        """Stop watching."""
        with self._lock:
            self._drop()
            self._given_up = True

    def reset(self, consumer: str = "index") -> None:
        """Make `consumer`'s next `changes()` return None (what it last gave was unused)."""
        with self._lock:
            self._pending[consumer] = None

    def _drop(self) -> None:
        if self._ino is not None:
            with contextlib.suppress(OSError):
                self._ino.close()
        self._ino = self._wd = self._dir = None

    def _attach(self) -> bool:
        """Set the watch up; False (with `reason`) when it cannot be now."""
        try:
            st = self.path.stat()
        except OSError:
            self.reason = "the directory does not exist yet"
            return False
        reason = unwatchable_reason(self.path.resolve())
        if reason is not None:
            self.reason, self._given_up = reason, True
            return False
        try:
            lib = self._loader()
            flags = lib.flags
            mask = (
                flags.CREATE | flags.DELETE | flags.MODIFY | flags.CLOSE_WRITE | flags.ATTRIB
            ) | (flags.MOVED_FROM | flags.MOVED_TO | flags.DELETE_SELF | flags.MOVE_SELF)
            ino = lib.INotify(nonblocking=True)
        except (ImportError, OSError, AttributeError) as exc:
            self.reason, self._given_up = f"inotify is not available ({exc})", True
            return False
        try:
            wd = ino.add_watch(self.path, mask | flags.ONLYDIR)
            after = self.path.stat()
        except OSError as exc:
            with contextlib.suppress(OSError):
                ino.close()
            self.reason = f"the directory cannot be watched ({exc.strerror or exc})"
            # The per-user limits (watches, memory) do not lift by themselves: stop trying.
            self._given_up = exc.errno in (errno.ENOSPC, errno.ENOMEM, errno.EMFILE)
            return False
        if (after.st_dev, after.st_ino) != (st.st_dev, st.st_ino):
            with contextlib.suppress(OSError):
                ino.close()
            self.reason = "the directory was replaced while the watch was set up"
            return False
        self._ino, self._wd, self._dir = ino, wd, (after.st_dev, after.st_ino)
        self.reason = None
        return True

    def changes(self, consumer: str = "index") -> set[str] | None:
        """File names of notes changed since `consumer`'s last call; None when any file
        may have changed (no watch, overflow, the directory replaced, or the consumer's
        first call): look at every file then.

        Each consumer (the search index, the directory's own scan…) has its own record:
        one taking its changes leaves the others' in place. Never waits: events of
        changes finished before this call are already queued.
        """
        with self._lock:
            self._drain()
            if self._ino is None:
                self._pending.clear()
                return None
            names = self._pending.get(consumer)
            self._pending[consumer] = set()
            now = self._clock()
            if names is None or now - self._full_at.get(consumer, now) >= FULL_LOOK_SECONDS:
                self._full_at[consumer] = now
                return None
            return names

    def _drain(self) -> None:
        """Move what the kernel queued into every consumer's record (None: unknown)."""
        if self._given_up:
            return
        if self._ino is None:
            self._attach()  # whatever happened before the watch began is unknown
            self._unknown_all()
            return
        try:
            st = self.path.stat()
            events = list(self._ino.read(timeout=0))
        except OSError as exc:
            self._drop()
            self.reason = f"the watch failed ({exc.strerror or exc})"
            return
        if (st.st_dev, st.st_ino) != self._dir:
            self._drop()  # replaced (or a link that now points elsewhere)
            self._attach()
            self._unknown_all()
            return
        flags = self._loader().flags
        lost = flags.Q_OVERFLOW | flags.IGNORED | flags.DELETE_SELF | flags.MOVE_SELF
        names: set[str] = set()
        for event in events:
            if event.mask & lost:
                self._drop()
                self._attach()
                self._unknown_all()
                return
            if event.name and self._is_note(event.name):
                names.add(event.name)
        if names:
            for pending in self._pending.values():
                if pending is not None:
                    pending |= names

    def _unknown_all(self) -> None:
        for consumer in self._pending:
            self._pending[consumer] = None
