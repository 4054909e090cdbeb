"""Test helper: run a real `memdir server serve` in a subprocess on a loopback port.

    from sync_server import add_user, running_server

    token = add_user(data_dir, "alice")
    with running_server(data_dir) as server:
        httpx.get(f"{server.url}/v1/memory/identity", headers=auth_headers(token))

The server binds port 0 and announces the real port on its ready line; the context
manager always stops it (SIGTERM, then SIGKILL) and closes its pipes.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from memdir.server.accounts import Accounts
from memdir.sync.protocol import PROTOCOL_HEADER, PROTOCOL_VERSION

__all__ = [
    "MEMDIR_COMMAND",
    "RunningServer",
    "add_user",
    "admin_key",
    "auth_headers",
    "running_server",
]

#: The `memdir` CLI as a command line (there is no `python -m memdir`).
MEMDIR_COMMAND = [
    sys.executable,
    "-c",
    "from memdir.cli.main import main; main(prog_name='memdir')",
]
#: The ready line, plain or --json.
_READY = re.compile(r'listening(?: on |": ")(http://[^\s"]+)')
_START_TIMEOUT = 60.0


@dataclass
class RunningServer:
    """A server subprocess: its URL, the process, and ways to end it."""

    url: str
    process: subprocess.Popen[str]
    stderr_path: Path
    lines: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self.url.rsplit(":", 1)[1])

    def kill(self) -> None:
        """SIGKILL the server (a crash) and reap it."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self, timeout: float = 15.0) -> int:
        """Ask the server to shut down (SIGTERM); SIGKILL it if it does not. Its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.process.returncode

    def stderr(self) -> str:
        """What the server wrote on stderr so far."""
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


def _pump(stream: object, lines: queue.Queue[str | None]) -> None:
    assert hasattr(stream, "readline")
    for line in iter(stream.readline, ""):
        lines.put(line)
    lines.put(None)


@contextmanager
def running_server(
    data_dir: Path,
    *,
    backend: str = "dir",
    dsn: str | None = None,
    extra_args: Sequence[str] = (),
) -> Iterator[RunningServer]:
    """Start `memdir server serve --data DATA_DIR --port 0` and yield it once it is ready."""
    command = [
        *MEMDIR_COMMAND,
        "server",
        "serve",
        "--data",
        str(data_dir),
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--backend",
        backend,
        *extra_args,
    ]
    env = dict(os.environ)
    env.pop("MEMDIR_SERVER_DSN", None)
    if dsn is not None:
        env["MEMDIR_SERVER_DSN"] = dsn  # not on the command line, where `ps` would show it
    stderr_file = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in finally
        prefix="memdir-server-", suffix=".log", delete=False
    )
    stderr_path = Path(stderr_file.name)
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=stderr_file,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    stderr_file.close()
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True).start()
    server: RunningServer | None = None
    seen: list[str] = []
    try:
        while server is None:
            try:
                line = lines.get(timeout=_START_TIMEOUT)
            except queue.Empty:
                raise RuntimeError(f"server not ready after {_START_TIMEOUT} s") from None
            if line is None:
                process.wait(timeout=30)
                raise RuntimeError(
                    f"server exited with {process.returncode} before it was ready:\n"
                    + "".join(seen)
                    + stderr_path.read_text(errors="replace")
                )
            seen.append(line)
            match = _READY.search(line)
            if match:
                server = RunningServer(match.group(1), process, stderr_path, seen)
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
        stderr_path.unlink(missing_ok=True)


def add_user(data_dir: Path, name: str, *, backend: str = "dir", dsn: str | None = None) -> str:
    """Add an account to the server's data directory (or, for `backend` postgres, to the
    database at `dsn`, where a server over it keeps its accounts); its bearer token."""
    if backend == "dir":
        return Accounts(data_dir).add_user(name)
    from memdir.server.accounts import open_accounts
    from memdir.server.rules import open_storage

    storage = open_storage(backend, data_dir, dsn)
    try:
        return open_accounts(data_dir, storage).add_user(name)
    finally:
        storage.close()


def admin_key(data_dir: Path) -> str:
    """Issue the server's admin key; return it."""
    return Accounts(data_dir).set_admin_key()


def auth_headers(token: str, protocol: int | None = PROTOCOL_VERSION) -> dict[str, str]:
    """Request headers: the bearer token and (unless None) the protocol version."""
    headers = {"Authorization": f"Bearer {token}"}
    if protocol is not None:
        headers[PROTOCOL_HEADER] = str(protocol)
    return headers
