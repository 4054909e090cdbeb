"""Running the memory page: bind 127.0.0.1 (and nothing else), make a fresh token, serve the
app with uvicorn until SIGINT/SIGTERM; the page's address (token in its fragment) goes to
the caller once the socket listens."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import socket
import threading
from collections.abc import Callable
from pathlib import Path

from memdir.errors import InvalidInput, Locked, MemdirError
from memdir.memory import Memory
from memdir.web.app import build_app

__all__ = ["HOST", "bind", "new_token", "page_url", "serve"]

#: The only address the page listens on.
HOST = "127.0.0.1"


def new_token() -> str:
    """A fresh random 256-bit token (one per process)."""
    return secrets.token_urlsafe(32)


def page_url(port: int, token: str) -> str:
    """The page's address, the token in its fragment (which browsers never send)."""
    return f"http://{HOST}:{port}/#token={token}"


def bind(port: int, host: str = HOST) -> socket.socket:
    """A listening-ready socket on 127.0.0.1:`port` (0: any free port). Any other host is
    refused: the page is for the person at this machine only."""
    if host != HOST:
        raise InvalidInput(f"the memory page listens on {HOST} only, not {host}")
    if not 0 <= port <= 65535:
        raise InvalidInput(f"port {port} is not a port number (0 to 65535)")
    # IPPROTO_TCP said outright: asyncio turns Nagle off (TCP_NODELAY) only on sockets that
    # say so, and with Nagle on, every answer on a kept-alive connection waits ~40 ms for
    # the browser's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise MemdirError(
                f"port {port} on {HOST} is in use: choose another with --port, or --port 0 "
                "for any free one"
            ) from None
        raise MemdirError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
    return sock


def open_page(url: str, *, keep_seconds: float = 120.0) -> bool:
    """Open the page in the browser without putting the token on any command line (where
    `ps` shows it to every local user): the browser is given a private file (0600, in a
    0700 folder) that forwards to `url`, removed `keep_seconds` later. False when no
    browser could be started."""
    import shutil
    import tempfile
    import webbrowser
    from html import escape

    folder = Path(tempfile.mkdtemp(prefix="memdir-ui-"))
    page = folder / "open.html"
    target = escape(url, quote=True)
    text = (
        '<!doctype html><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="0;url={target}">'
        f'<title>memdir</title><p><a href="{target}">Open the memory page</a></p>\n'
    )
    descriptor = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    try:
        opened = webbrowser.open(page.as_uri())
    finally:
        timer = threading.Timer(
            keep_seconds, shutil.rmtree, args=(folder,), kwargs={"ignore_errors": True}
        )
        timer.daemon = True
        timer.start()
    return bool(opened)


def serve(memory: Memory, port: int = 0, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve the page for `memory` on 127.0.0.1:`port` until SIGINT/SIGTERM (then return).

    `on_ready` gets the page's URL (with the token) once the socket accepts connections.
    The notes are loaded once first, so that the first page answers quickly.
    """
    import uvicorn

    sock = bind(port)
    try:
        bound = sock.getsockname()[1]
        token = new_token()
        app = build_app(memory, token=token, port=bound)
        # Parse every note once now, not during the first request (a locked encrypted
        # store is parsed when unlocked: the page starts and says it is locked meanwhile).
        with contextlib.suppress(Locked):
            memory.notes.list()
        memory.watch_files()  # a search looks at the files changed since the last one only
        url = page_url(bound, token)

        class _Server(uvicorn.Server):
            async def startup(self, sockets: list[socket.socket] | None = None) -> None:
                await super().startup(sockets)
                if self.started and on_ready is not None:
                    on_ready(url)

            async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
                await super().shutdown(sockets)
                # uvicorn re-raises the signal that stopped it, which would end the process
                # before the memory is closed; a stop by signal is a normal end here.
                self._captured_signals.clear()

        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            proxy_headers=False,
            server_header=False,
            date_header=False,
        )
        _Server(config).run(sockets=[sock])
    finally:
        sock.close()
