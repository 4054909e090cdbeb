"""Test helper: run a scripted `socketserver` server on loopback in a thread for a test."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

_S = TypeVar("_S", bound=socketserver.BaseServer)


@contextmanager
def serving(server: _S) -> Iterator[_S]:
    """Serve `server` in a daemon thread; shut it down and close it afterwards."""
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
