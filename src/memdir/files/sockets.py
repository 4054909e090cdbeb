"""Private Unix sockets for memdir's own background processes (the unlock agent, the warm
hook server): a 0700 runtime folder, a socket that is 0600 from the moment it is bound, an
flock that arbitrates "probe, drop stale, bind", peers checked by uid, and length-prefixed
frames (``>II`` header and payload lengths, a JSON header, then raw payload bytes)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import stat
import struct
import threading
from pathlib import Path

from memdir.errors import Refused

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see memdir/__init__)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from typing import Any

__all__ = [
    "MAX_CONNECTIONS",
    "SocketFault",
    "claim_socket",
    "path_lock",
    "peer_uid",
    "read_frame",
    "runtime_dir",
    "send_frame",
    "unlink_stale",
]

_PREFIX, _UCRED = struct.Struct(">II"), struct.Struct("3i")
_MAX_HEADER = 64 * 1024
#: The listen backlog of a claimed socket.
MAX_CONNECTIONS = 64
_umask_lock = threading.Lock()


def runtime_dir(environ: Mapping[str, str]) -> Path:
    """The private folder of agent sockets: $XDG_RUNTIME_DIR/memdir if XDG_RUNTIME_DIR is a
    private folder of ours, else /tmp/memdir-<uid>; created 0700, Refused when unsafe."""
    uid, xdg = os.getuid(), Path(environ.get("XDG_RUNTIME_DIR", ""))
    path = Path(f"/tmp/memdir-{uid}")
    with contextlib.suppress(OSError):
        st = xdg.stat()
        if stat.S_ISDIR(st.st_mode) and (st.st_uid, st.st_mode & 0o077) == (uid, 0):
            path = xdg / "memdir" if xdg.is_absolute() else path
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
        path.chmod(0o700)
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise Refused(f"{path} is a symbolic link or not a folder; the agent needs a real one")
    if st.st_uid != uid:
        raise Refused(f"{path} belongs to uid {st.st_uid}, not to this user (uid {uid})")
    if st.st_mode & 0o077:
        mode = stat.S_IMODE(st.st_mode)
        raise Refused(f"{path} is open to group or others (mode {mode:04o}); it must be 0700")
    return path


class SocketFault(Exception):
    """A broken frame or a refused request; code (the reply's ``error``) names which."""

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code, self.extra = code, extra


def _recv(sock: socket.socket, n: int, *, eof_ok: bool = False) -> bytearray | None:
    """Exactly n bytes; None when eof_ok and the stream ends before the first byte."""
    buf, got = bytearray(n), 0
    with memoryview(buf) as view:
        while got < n:
            k = sock.recv_into(view[got:])
            if k == 0:
                if eof_ok and got == 0:
                    return None
                raise SocketFault("truncated", "the connection closed in the middle of a frame")
            got += k
    return buf


def read_frame(
    sock: socket.socket, limit: Callable[[dict[str, Any]], int]
) -> tuple[dict[str, Any], bytearray] | None:
    """One frame (None: the peer closed between frames); limit(header) caps the payload."""
    prefix = _recv(sock, _PREFIX.size, eof_ok=True)
    if prefix is None:
        return None
    head_len, body_len = _PREFIX.unpack(prefix)
    if not 0 < head_len <= _MAX_HEADER:
        raise SocketFault("bad-frame", f"a header of {head_len} bytes (at most {_MAX_HEADER})")
    try:
        header = json.loads(bytes(_recv(sock, head_len) or b""))
    except (UnicodeDecodeError, ValueError):
        raise SocketFault("bad-frame", "the header is not JSON") from None
    if not isinstance(header, dict):
        raise SocketFault("bad-frame", "the header is not a JSON object")
    if body_len > (cap := limit(header)):
        raise SocketFault("too-large", f"a payload of {body_len} bytes (at most {cap})")
    return header, _recv(sock, body_len) or bytearray()


def send_frame(sock: socket.socket, header: Mapping[str, Any], payload: Any = b"") -> None:
    """Write one frame; payload is any bytes-like object, sent without a copy."""
    head = json.dumps(header, separators=(",", ":")).encode()
    size = memoryview(payload).nbytes
    sock.sendall(_PREFIX.pack(len(head), size) + head)
    if size:
        sock.sendall(payload)


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end (None where SO_PEERCRED does not exist)."""
    if (option := getattr(socket, "SO_PEERCRED", None)) is None:
        return None
    uid: int = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, option, _UCRED.size))[1]
    return uid


@contextlib.contextmanager
def path_lock(path: Path) -> Iterator[None]:
    """An exclusive flock beside the socket: the arbiter of probe, unlink and bind races."""
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    fd = os.open(path.with_name(path.name + ".lock"), flags, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def unlink_stale(path: Path) -> bool:
    """Whether an agent answers at path; if none does, remove a (stale) socket file there.

    Callers hold `path_lock`, so a fresh agent's socket is never taken for a stale one.
    """
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
            return True
        except TimeoutError:  # a full backlog: it lives
            return True
        except OSError:
            pass
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise Refused(f"{path} exists and is not a socket; memdir will not replace it")
        path.unlink()
    return False


def claim_socket(path: Path) -> tuple[socket.socket, int]:
    """A listening socket at path (0600 from the start) and its inode; FileExistsError when
    a live agent already answers there."""
    with path_lock(path):
        if unlink_stale(path):
            raise FileExistsError(f"an agent already answers at {path}")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with _umask_lock:
                old = os.umask(0o177)
                try:
                    sock.bind(str(path))
                finally:
                    os.umask(old)
            path.chmod(0o600)
            sock.listen(MAX_CONNECTIONS)
            sock.setblocking(False)
            return sock, os.lstat(path).st_ino
        except BaseException:
            sock.close()
            raise
