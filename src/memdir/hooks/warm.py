"""The warm hook server: one per memdir home, so a hook answers in milliseconds.

A hook is a fresh process that the client waits for before the model sees the message.
Opening a project's memory and taking in 5,000 notes' terms costs a fresh process about
half a second; a warm process keeps them. The first hook of a home starts this server
(`ensure_started`, detached) and answers in-process; later hooks send their input over a
private socket (`memdir.files.sockets`: a 0700 folder, 0600 socket, peers of our own uid
only) and print the reply. The server keeps one `Memory` per project (reopened when a
config file changes), handles each connection in a thread, and exits after `IDLE_SECONDS`
without a request, when its home is gone, or when a client of another memdir version asks
(an upgrade never answers from old code).

Request: ``{"op": "hook", "version", "client", "event", "environ"}`` with the hook's stdin
as payload; reply: ``{"ok": true}`` with the output as payload, or ``{"ok": false,
"error", "message"}`` (the client then answers in-process).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import sys
import threading
import time
from pathlib import Path

from memdir._version import __version__
from memdir.files.sockets import (
    SocketFault,
    claim_socket,
    peer_uid,
    read_frame,
    runtime_dir,
    send_frame,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: hooks import this
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from memdir import Memory

__all__ = ["IDLE_SECONDS", "WarmServer", "ask", "ensure_started", "main", "socket_for"]

#: Seconds without a request after which the server exits (MEMDIR_HOOK_IDLE overrides).
IDLE_SECONDS = 900.0
_MAX_PAYLOAD = 8 << 20
_CONN_TIMEOUT = 10.0
#: Seconds a project whose store is encrypted is declined before it is looked at again.
DECLINE_SECONDS = 60.0


def socket_for(home: Path, environ: Mapping[str, str]) -> Path:
    """The warm server's socket for one memdir home."""
    # One server per home and memdir version: two installed versions never stop each other.
    digest = hashlib.sha256(f"{home.resolve()}\0{__version__}".encode()).hexdigest()[:16]
    return runtime_dir(environ) / f"hooks-{digest}.sock"


def ask(
    path: Path, client: str, event: str, stdin: bytes, environ: Mapping[str, str], timeout: float
) -> str | None:
    """The warm server's answer; None when none answers usably (then answer in-process)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(path))
            if peer_uid(sock) not in (None, os.getuid()):
                return None
            header = {
                "op": "hook",
                "version": __version__,
                "client": client,
                "event": event,
                "environ": dict(environ),
            }
            send_frame(sock, header, stdin)
            frame = read_frame(sock, lambda _: _MAX_PAYLOAD)
    except (OSError, SocketFault):
        return None
    if frame is None or frame[0].get("ok") is not True:
        return None
    return bytes(frame[1]).decode("utf-8", "replace")


def ensure_started(home: Path, environ: Mapping[str, str]) -> None:
    """Start the warm server for `home` in the background (it exits at once when one runs)."""
    from memdir.hooks.sessions import detach

    env = dict(environ)
    env["MEMDIR_HOME"] = str(home)
    argv = [sys.executable, "-m", "memdir.hooks.warm", "--home", str(home)]
    detach(argv, env, home if home.is_dir() else Path("/"))


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class WarmServer:
    """Answers hooks for one home from memories kept open."""

    def __init__(self, home: Path, path: Path, *, idle_seconds: float) -> None:
        self.home, self.path, self.idle = home, path, idle_seconds
        self._listener, self._inode = claim_socket(path)
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._memories: dict[Path | None, tuple[object, Memory, threading.Lock]] = {}
        self._declined: dict[Path | None, float] = {}

    def _config_stamp(self, root: Path | None) -> object:
        from memdir.config import CONFIG_NAME

        project = _stamp(root / ".memdir" / CONFIG_NAME) if root is not None else None
        return (_stamp(self.home / CONFIG_NAME), project)

    def memory(self, root: Path | None) -> tuple[Memory, threading.Lock]:
        """The kept memory of a project, reopened when a config file changed."""
        from memdir import Memory
        from memdir.hooks.run import Declined

        declined = self._declined.get(root)
        if declined is not None and time.monotonic() - declined < DECLINE_SECONDS:
            raise Declined("an encrypted store is not kept warm")
        stamp = self._config_stamp(root)
        with self._lock:
            kept = self._memories.get(root)
            if kept is not None and kept[0] == stamp:
                return kept[1], kept[2]
            if kept is not None:
                with kept[2]:
                    kept[1].close()
            memory = Memory.open(root, home=self.home)
            memory.defer_usage_writes()  # no hook waits for the disk to count a recall
            memory.watch_files()  # a recall looks only at the files changed since the last
            # Vectors filled in a worker thread: once they are complete, recall ranks by
            # words and meaning (`AgentView.recall`'s warm path); until then, by words.
            memory.index.embed_in_background()
            lock = threading.Lock()
            self._memories[root] = (stamp, memory, lock)
            return memory, lock

    def decline(self, root: Path | None) -> None:
        """Answer no hook of `root` for a while (an encrypted store: in-process only)."""
        self._declined[root] = time.monotonic()
        self.forget(root)

    def forget(self, root: Path | None) -> None:
        """Drop a kept memory (after a failure: the next hook opens it afresh)."""
        with self._lock:
            kept = self._memories.pop(root, None)
        if kept is not None:
            with contextlib.suppress(Exception), kept[2]:
                kept[1].close()

    def serve_forever(self) -> None:
        """Accept until idle, stopped, or the home is gone; then remove the socket."""
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(self._listener, selectors.EVENT_READ)
        try:
            while not self._stop.is_set():
                if time.monotonic() - self._last > self.idle or not self.home.is_dir():
                    break
                if not sel.select(timeout=1.0):
                    continue
                with contextlib.suppress(BlockingIOError, InterruptedError):
                    conn, _ = self._listener.accept()
                    self._last = time.monotonic()
                    threading.Thread(target=self._serve, args=(conn,), daemon=True).start()
        finally:
            sel.close()
            self._listener.close()
            with contextlib.suppress(OSError):
                if os.lstat(self.path).st_ino == self._inode:
                    self.path.unlink()
            for root in list(self._memories):
                self.forget(root)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.setblocking(True)
            conn.settimeout(_CONN_TIMEOUT)
            try:
                if peer_uid(conn) not in (None, os.getuid()):
                    return
                frame = read_frame(conn, lambda _: _MAX_PAYLOAD)
                if frame is None:
                    return
                header, payload = frame
                reply, out = self._handle(header, bytes(payload))
                send_frame(conn, reply, out)
            except (OSError, SocketFault):
                return
            finally:
                self._last = time.monotonic()

    def _handle(self, header: dict[str, Any], payload: bytes) -> tuple[dict[str, Any], bytes]:
        if header.get("version") != __version__:
            self._stop.set()  # another memdir version: let the new one take over
            return {"ok": False, "error": "version", "message": "another memdir version"}, b""
        if header.get("op") != "hook":
            return {"ok": False, "error": "unknown-op", "message": "no such request"}, b""
        from memdir.hooks.run import Declined, answer_hook

        environ = header.get("environ")
        environ = {str(k): str(v) for k, v in environ.items()} if isinstance(environ, dict) else {}
        try:
            out = answer_hook(
                self.home,
                str(header.get("client") or ""),
                str(header.get("event") or ""),
                payload,
                environ,
                memory=self,
            )
        except Declined as why:
            return {"ok": False, "error": "declined", "message": str(why)}, b""
        return {"ok": True}, out.encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m memdir.hooks.warm")
    parser.add_argument("--home", type=Path, required=True)
    args = parser.parse_args(argv)
    home: Path = args.home.resolve()
    try:
        idle = float(os.environ.get("MEMDIR_HOOK_IDLE", "") or IDLE_SECONDS)
    except ValueError:
        idle = IDLE_SECONDS
    try:
        server = WarmServer(home, socket_for(home, os.environ), idle_seconds=idle)
    except FileExistsError:
        return 0  # one answers there already
    except Exception as exc:
        from memdir.hooks.sessions import log_failure

        log_failure(home, "-", "warm", f"the warm hook server cannot start: {exc}")
        return 0
    server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
