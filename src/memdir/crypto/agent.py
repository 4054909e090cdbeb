"""The per-user unlock agent (like ssh-agent): master keys and index images held in memory only.

`memdir unlock` hands a master key to a background process (`start_agent`) that keeps it,
and opaque blobs (serialized in-memory index images), until `DEFAULT_IDLE_SECONDS` without
use or a lock; then it zeroes them and exits. Each memdir process asks it through
`AgentClient`, one connection per call (so the client is thread-safe). The socket lives in
a private folder (`runtime_dir`), is 0600 from the moment it is bound, and serves peers of
its own uid only (SO_PEERCRED); an flock beside it arbitrates "probe, drop stale, bind".

A frame is ``>II`` (header length, payload length), a JSON object, then the raw payload (a
key or blob, never base64). Requests name an ``op``; replies carry ``ok`` and, on failure,
``error`` (a code) and ``message``. The agent imports only the standard library and
`memdir.errors`, so it starts fast.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import hashlib
import math
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.errors import InvalidInput, LimitExceeded, MemdirError
from memdir.files.sockets import MAX_CONNECTIONS, runtime_dir
from memdir.files.sockets import SocketFault as _Fault
from memdir.files.sockets import claim_socket as _claim
from memdir.files.sockets import path_lock as _path_lock
from memdir.files.sockets import peer_uid as _peer_uid
from memdir.files.sockets import read_frame as _read_frame
from memdir.files.sockets import send_frame as _send
from memdir.files.sockets import unlink_stale as _unlink_stale

__all__ = [
    "DEFAULT_IDLE_SECONDS",
    "AgentClient",
    "AgentServer",
    "AgentStatus",
    "AgentUnavailable",
    "BlobChanged",
    "main",
    "runtime_dir",
    "socket_path",
    "start_agent",
]

#: Seconds without use after which the agent wipes everything and exits.
DEFAULT_IDLE_SECONDS = 900.0

_MAX_KEY, _MAX_NAME = 4096, 256
_CONN_TIMEOUT = 10.0  # a silent client holds only its own thread, and only this long
_MAX_CONNECTIONS = MAX_CONNECTIONS
_START_WAIT = 10.0
_ZEROS = bytes(1 << 20)
_USE = frozenset({"put_key", "get_key", "touch", "put_blob", "get_blob"})
_KEEP_ENV = ("PATH", "PYTHONPATH", "PYTHONHOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")
_Reply = tuple[dict[str, Any], Any, Callable[[], None] | None]


class AgentUnavailable(Exception):
    """Raised when no usable agent answers at a socket (none runs, it died, the socket is
    stale, or it answered garbage); the message says which and never holds key bytes."""


class BlobChanged(Exception):
    """Raised by `AgentClient.put_blob` when the blob's generation is not the one expected."""

    def __init__(self, current: int) -> None:
        super().__init__(f"the blob changed under the request (its generation is {current})")
        #: The blob's generation now (0: absent).
        self.current = current


@dataclass(frozen=True, slots=True)
class AgentStatus:
    """What an agent holds and how long until it locks itself (asking never counts as use)."""

    pid: int
    key_ids: tuple[str, ...]
    idle_seconds: float
    idle_left: float
    blobs: int
    blob_bytes: int


def socket_path(home: Path, environ: Mapping[str, str]) -> Path:
    """The agent socket of one MEMDIR_HOME (one agent per home)."""
    digest = hashlib.sha256(str(home.resolve()).encode()).hexdigest()[:16]
    return runtime_dir(environ) / f"agent-{digest}.sock"


def _zero(buf: bytearray) -> None:
    """Overwrite buf with zeros in place (in chunks: no blob-sized temporary)."""
    for start in range(0, len(buf), len(_ZEROS)):
        buf[start : start + len(_ZEROS)] = _ZEROS[: len(buf) - start]


def _idle(value: Any) -> float:
    """A validated inactivity limit: a finite, positive number of seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InvalidInput(f"an idle limit must be a positive number of seconds, not {value!r}")
    if not math.isfinite(value):
        raise InvalidInput("an idle limit must be finite")
    return float(value)


def _name(value: Any, what: str) -> str:
    """A validated key id or blob name."""
    if not isinstance(value, str) or not 0 < len(value) <= _MAX_NAME:
        raise InvalidInput(f"a {what} must be a string of 1 to {_MAX_NAME} characters")
    return value


def _generation(value: Any) -> int | None:
    """value if it is a generation number (an int ≥ 0, not a bool), else None."""
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if ok else None


@dataclass(slots=True)
class _Blob:
    """A stored blob; one being sent is zeroed when its last reader is done."""

    data: bytearray
    readers: int = 0
    dead: bool = False


class AgentServer:
    """The agent: holds keys and blobs for its own uid's processes until lock, signal or idle.

    The constructor binds (FileExistsError when a live agent answers at path already);
    `serve_forever` runs the accept loop, one thread per connection. The clock is
    injectable, so tests drive the idle limit through `expired` without sleeping.
    """

    def __init__(
        self,
        path: Path,
        *,
        idle_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        max_blob_bytes: int = 1 << 30,
    ) -> None:
        self._path, self._idle, self._clock = path, _idle(idle_seconds), clock
        self._max_blob, self._last_use = max_blob_bytes, clock()
        self._state, self._stop = threading.Lock(), threading.Event()
        self._keys: dict[str, bytearray] = {}
        self._blobs: dict[str, _Blob] = {}
        self._generations: dict[str, int] = {}  # outlives a drop, so a generation never recurs
        self._conns: set[socket.socket] = set()
        self._listener, self._inode = _claim(path)
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_w.setblocking(False)
        self._unlinked = self._locking = False

    def serve_forever(self) -> None:
        """Serve until lock, `shutdown` or the idle limit; then wipe and unlink the socket."""
        selector = selectors.DefaultSelector()
        selector.register(self._listener, selectors.EVENT_READ)
        selector.register(self._wake_r, selectors.EVENT_READ)
        try:
            while not self._stop.is_set() and not self.expired():
                for key, _ in selector.select(min(1.0, max(0.01, self._idle_left()))):
                    if key.fileobj is self._listener:
                        self._accept()
                    else:
                        self._wake_r.recv(64)
        finally:
            self._stop.set()
            self._wipe()
            self._unlink()
            selector.close()
            self._listener.close()
            with self._state:
                conns = list(self._conns)
            for conn in conns:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
            self._wake_r.close()
            self._wake_w.close()

    def shutdown(self) -> None:
        """Make `serve_forever` wipe and return (safe from a signal handler or any thread)."""
        self._stop.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")

    def expired(self) -> bool:
        """Whether the idle limit has passed by the clock; if it has, wipe and stop."""
        if late := self._idle_left() <= 0:
            self._wipe()
            self.shutdown()
        return late

    def _idle_left(self) -> float:
        with self._state:
            return max(0.0, self._idle - (self._clock() - self._last_use))

    def _wipe(self) -> None:
        """Zero every key and blob and forget them all."""
        with self._state:
            for buf in [*self._keys.values(), *(b.data for b in self._blobs.values())]:
                _zero(buf)
            self._keys.clear()
            self._blobs.clear()
            self._generations.clear()

    def _unlink(self) -> None:
        """Remove the socket file if it is still ours: no client reaches a dying agent."""
        if not self._unlinked:
            self._unlinked = True
            with contextlib.suppress(OSError), _path_lock(self._path):
                if os.lstat(self._path).st_ino == self._inode:
                    self._path.unlink()

    def _accept(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except OSError:  # gone already, or out of descriptors: the next round retries
            return
        try:
            conn.settimeout(_CONN_TIMEOUT)
            with self._state:
                admit = len(self._conns) < _MAX_CONNECTIONS
                if admit := admit and _peer_uid(conn) in (None, os.getuid()):
                    self._conns.add(conn)
            if admit:
                threading.Thread(target=self._serve_conn, args=(conn,), daemon=True).start()
                return
        except (OSError, RuntimeError):  # RuntimeError: no thread to be had
            with self._state:
                self._conns.discard(conn)
        conn.close()

    def _limit(self, header: dict[str, Any]) -> int:
        op = header.get("op")
        return self._max_blob if op == "put_blob" else _MAX_KEY if op == "put_key" else 0

    def _serve_conn(self, conn: socket.socket) -> None:
        """Answer requests on one connection until the peer closes, errs or falls silent."""
        try:
            while not (self._stop.is_set() or self._locking):
                try:
                    frame = _read_frame(conn, self._limit)
                except _Fault as bad:
                    _send(conn, {"ok": False, "error": bad.code, "message": str(bad)})
                    return
                if frame is None:
                    return
                reply, payload, done = self._handle(*frame)
                try:
                    _send(conn, reply, payload)
                finally:
                    if done is not None:
                        done()
        except Exception:  # a broken peer costs its own connection, never the agent
            return
        finally:
            with self._state:
                self._conns.discard(conn)
            conn.close()

    def _handle(self, header: dict[str, Any], payload: bytearray) -> _Reply:
        """Answer one request: (reply, payload to send, what to do once it is sent)."""
        op = header.get("op")
        try:
            if self._locking or self._stop.is_set() or self.expired():
                raise _Fault("locked", "the agent is locking")
            if op == "lock":  # refuse all from now on; wipe before the reply, stop after it
                self._locking = True
                self._wipe()
                self._unlink()
                return {"ok": True}, b"", self.shutdown
            with self._state:
                if op in _USE:
                    self._last_use = self._clock()
                return self._answer(op, header, payload)
        except (_Fault, InvalidInput) as exc:
            _zero(payload)
            code, extra = (exc.code, exc.extra) if isinstance(exc, _Fault) else ("bad-request", {})
            return {"ok": False, "error": code, "message": str(exc), **extra}, b"", None
        except Exception:
            _zero(payload)
            return {"ok": False, "error": "internal", "message": "the agent failed"}, b"", None

    def _answer(self, op: Any, header: dict[str, Any], payload: bytearray) -> _Reply:
        """The state part of a request, under the state lock; payloads it keeps are adopted."""
        ok: dict[str, Any] = {"ok": True}
        if op in ("ping", "touch", "status"):
            if op != "touch":
                ok["pid"] = os.getpid()
            if op == "status":
                ok |= {"key_ids": sorted(self._keys), "idle_seconds": self._idle}
                ok["idle_left"] = max(0.0, self._idle - (self._clock() - self._last_use))
                ok["blobs"] = len(self._blobs)
                ok["blob_bytes"] = sum(len(b.data) for b in self._blobs.values())
            return ok, b"", None
        if op in ("put_key", "get_key"):
            key_id = _name(header.get("id"), "key id")
            if op == "get_key":
                if (key := self._keys.get(key_id)) is None:
                    return ok | {"found": False}, b"", None
                copy = bytearray(key)  # sent outside the state lock, then zeroed
                return ok | {"found": True}, copy, lambda: _zero(copy)
            if not payload:
                raise InvalidInput("a key must not be empty")
            if header.get("idle") is not None:
                self._idle = _idle(header["idle"])
            if (old := self._keys.pop(key_id, None)) is not None:
                _zero(old)
            self._keys[key_id] = payload
            return ok, b"", None
        if op not in ("put_blob", "get_blob", "drop_blob"):
            raise _Fault("unknown-op", f"no such request: {op!r}")
        name = _name(header.get("name"), "blob name")
        blob = self._blobs.get(name)
        if op == "get_blob":
            if blob is None:
                return ok | {"found": False}, b"", None
            blob.readers += 1
            reply = ok | {"found": True, "generation": self._generations[name]}
            return reply, blob.data, lambda: self._release(blob)
        if op == "put_blob":
            expect, current = header.get("expect"), self._generations[name] if blob else 0
            if expect is not None and _generation(expect) is None:
                raise InvalidInput("expect must be a generation number")
            if expect is not None and expect != current:
                raise _Fault("changed", "the blob changed", current=current)
            self._generations[name] = ok["generation"] = self._generations.get(name, 0) + 1
            self._blobs[name] = _Blob(payload)
        if blob is not None:  # replaced or dropped: zero it, now or after its last reader
            if op == "drop_blob":
                del self._blobs[name]
            blob.dead = True
            if not blob.readers:
                _zero(blob.data)
        return ok, b"", None

    def _release(self, blob: _Blob) -> None:
        with self._state:
            blob.readers -= 1
            if blob.dead and not blob.readers:
                _zero(blob.data)


class AgentClient:
    """Talks to the agent at one socket; a connection per call, so it is thread-safe."""

    def __init__(self, path: Path, *, timeout: float = 5.0) -> None:
        self.path, self._timeout = path, timeout

    def running(self) -> bool:
        """Whether an agent answers a ping at the socket."""
        try:
            self._call({"op": "ping"})
        except AgentUnavailable:
            return False
        return True

    def put_key(self, key_id: str, key: bytes, *, idle_seconds: float | None = None) -> None:
        """Hand the agent a key to hold; idle_seconds sets its inactivity limit."""
        if not 0 < len(key) <= _MAX_KEY:
            raise InvalidInput(f"a key must be 1 to {_MAX_KEY} bytes")
        idle = None if idle_seconds is None else _idle(idle_seconds)
        self._call({"op": "put_key", "id": _name(key_id, "key id"), "idle": idle}, key)

    def get_key(self, key_id: str) -> bytes | None:
        """The key held under key_id (None: the agent holds none); counts as use."""
        return self._found(*self._call({"op": "get_key", "id": _name(key_id, "key id")}))

    def touch(self) -> None:
        """Count as use (resets the idle timer) without fetching anything."""
        self._call({"op": "touch"})

    def status(self) -> AgentStatus:
        """What the agent holds and how long until it locks; does not count as use."""
        reply, _ = self._call({"op": "status"})
        try:
            keys = tuple(str(k) for k in reply["key_ids"])
            return AgentStatus(
                int(reply["pid"]), keys, float(reply["idle_seconds"]),
                float(reply["idle_left"]), int(reply["blobs"]), int(reply["blob_bytes"]),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError):
            raise AgentUnavailable(f"the agent at {self.path} answered garbage") from None

    def put_blob(self, name: str, data: bytes, *, expect: int | None = None) -> int:
        """Store data under name; its new generation. expect: the generation it must have now
        (0: absent), else BlobChanged. LimitExceeded: larger than the agent takes."""
        if expect is not None and _generation(expect) is None:
            raise InvalidInput("expect must be a generation number (0: absent)")
        header = {"op": "put_blob", "name": _name(name, "blob name"), "expect": expect}
        return self._generation(self._call(header, data)[0])

    def get_blob(self, name: str) -> tuple[int, bytes] | None:
        """(generation, data) of the blob under name, or None; counts as use."""
        reply, payload = self._call({"op": "get_blob", "name": _name(name, "blob name")})
        data = self._found(reply, payload)
        return None if data is None else (self._generation(reply), data)

    def drop_blob(self, name: str) -> None:
        """Forget (and zero) the blob under name, if any."""
        self._call({"op": "drop_blob", "name": _name(name, "blob name")})

    def lock(self) -> bool:
        """Wipe everything; the agent exits and removes its socket. False: none was running."""
        try:
            sock = self._connect()
        except AgentUnavailable:
            return False
        try:
            with sock:
                self._exchange(sock, {"op": "lock"}, b"")
        except AgentUnavailable:
            if self.running():  # it is locking by itself already, unless it still answers
                raise
        return True

    def _found(self, reply: dict[str, Any], payload: bytearray) -> bytes | None:
        data = bytes(payload) if reply.get("found") is True else None
        _zero(payload)
        return data

    def _generation(self, reply: dict[str, Any]) -> int:
        if (generation := _generation(reply.get("generation"))) is None:
            raise AgentUnavailable(f"the agent at {self.path} answered garbage")
        return generation

    def _call(self, header: dict[str, Any], payload: Any = b"") -> tuple[dict[str, Any], bytearray]:
        with self._connect() as sock:
            return self._exchange(sock, header, payload)

    def _connect(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self._timeout)
        try:
            sock.connect(str(self.path))
            uid = _peer_uid(sock)
        except OSError as exc:
            sock.close()
            why = {FileNotFoundError: "no socket", ConnectionRefusedError: "a stale socket"}
            reason = why.get(type(exc)) or ("timed out" if isinstance(exc, TimeoutError) else exc)
            raise AgentUnavailable(f"no agent answers at {self.path} ({reason})") from None
        if uid not in (None, os.getuid()):
            sock.close()
            raise AgentUnavailable(f"the socket at {self.path} is served by uid {uid}, not us")
        return sock

    def _exchange(
        self, sock: socket.socket, header: dict[str, Any], payload: Any
    ) -> tuple[dict[str, Any], bytearray]:
        where = f"the agent at {self.path}"
        try:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                _send(sock, header, payload)  # it may refuse before reading all: read why
            frame = _read_frame(sock, lambda _: 0xFFFFFFFF)
        except TimeoutError:
            raise AgentUnavailable(f"{where} did not answer within {self._timeout} s") from None
        except (_Fault, OSError) as exc:
            raise AgentUnavailable(f"{where} failed mid-reply or answered garbage: {exc}") from None
        if frame is None:
            raise AgentUnavailable(f"{where} closed the connection without answering")
        reply, data = frame
        if reply.get("ok") is True:
            return reply, data
        code, message = reply.get("error"), f"{where} refused: {reply.get('message', '')}"
        if code == "changed" and (current := _generation(reply.get("current"))) is not None:
            raise BlobChanged(current)
        if code == "too-large":
            raise LimitExceeded(message)
        raise AgentUnavailable(f"{message} ({code})")


def start_agent(path: Path, *, idle_seconds: float = DEFAULT_IDLE_SECONDS) -> AgentClient:
    """A client of the agent at path, first starting one (in the background) if none answers."""
    client = AgentClient(path)
    argv = [sys.executable, "-m", "memdir.crypto.agent", "--socket", str(path)]
    argv += ["--idle", str(_idle(idle_seconds))]
    deadline = time.monotonic() + _START_WAIT
    while not client.running():
        if time.monotonic() > deadline:
            raise AgentUnavailable(f"no agent answered at {path} within {_START_WAIT:g} s")
        try:
            _spawn(path, argv, deadline)
        except OSError as exc:
            raise AgentUnavailable(f"cannot start an agent at {path}: {exc}") from None
    return client


def _spawn(path: Path, argv: list[str], deadline: float) -> None:
    """Run the agent's starter unless something answers at path already; wait for it to exit
    (it binds, forks the agent and exits: 0 also when it met a live agent there)."""
    with _path_lock(path):
        answers = _unlink_stale(path)
    if answers:  # it accepts but did not answer the ping (yet): ask again shortly
        time.sleep(0.01)
        return
    # Only what Python needs: an inherited secret must not sit in the agent's environment.
    env = {k: v for k, v in os.environ.items() if k in _KEEP_ENV}
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
        start_new_session=True,
        cwd=path.parent,
        env=env,
    )
    try:
        code = process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return
    if code != 0:
        raise AgentUnavailable(f"the agent for {path} failed to start (exit status {code})")


def _harden() -> None:
    """Best effort (Linux): no ptrace or core dumps of this process, no swapping of its pages."""
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    except (OSError, AttributeError):
        return
    # Lock memory only where locking cannot fail a later allocation: no limit or CAP_IPC_LOCK.
    unlimited = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0] == resource.RLIM_INFINITY
    with contextlib.suppress(OSError, ValueError, IndexError):
        caps = Path("/proc/self/status").read_text().split("CapEff:")[1].split()[0]
        unlimited = unlimited or bool(int(caps, 16) & (1 << 14))
    if unlimited and libc.mlockall(1 | 2 | 4) != 0:  # MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT
        libc.mlockall(1 | 2)


def main(argv: list[str] | None = None) -> int:
    """Run an agent: ``python -m memdir.crypto.agent --socket P --idle S`` (`start_agent`)."""
    parser = argparse.ArgumentParser(prog="python -m memdir.crypto.agent")
    parser.add_argument("--socket", required=True, type=Path, help="the socket path")
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE_SECONDS, help="seconds")
    parser.add_argument("--foreground", action="store_true", help="serve without forking")
    args = parser.parse_args(argv)
    try:
        server = AgentServer(args.socket, idle_seconds=args.idle)
    except FileExistsError:
        return 0  # another agent won the bind and serves: leave quietly
    except (OSError, MemdirError) as exc:
        print(f"memdir agent: {exc}", file=sys.stderr)
        return 1
    if not args.foreground and os.fork():
        os._exit(0)  # the socket listens already: the starter may go on while the child serves
    _harden()
    threading.stack_size(512 * 1024)  # locked pages: keep the connection threads' stacks small
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: server.shutdown())
    server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
