"""Test helper: model servers on loopback that misbehave at the socket level.

    with serving(FloodServer(200 << 20)) as flood:     # 200 MiB of answer, streamed
        ...; flood.sent                                 # bytes the client took
    with serving(SilentServer()) as silent:            # reads the request, never answers
        ...
    with serving(TrickleServer()) as trickle:          # headers, then a byte now and then

Each speaks just enough HTTP/1.1 for an OpenAI-compatible client: it reads one request
(headers and a Content-Length body) and answers it on that connection, which it then
closes. `requests` counts the requests read. A server blocked on a client is released by
`shutdown` (the `serving` context manager's exit) through `release`.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading

__all__ = ["FloodServer", "SilentServer", "TrickleServer"]

_PIECE = 1 << 20


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests = 0
        self.release = threading.Event()
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def shutdown(self) -> None:
        self.release.set()
        super().shutdown()

    def answer(self, connection: socket.socket) -> None:
        raise NotImplementedError


class FloodServer(_Server):
    """Answers 200 with a chat completion `total` bytes long, written 1 MiB at a time until
    the client stops reading; `sent` counts the bytes the client's socket took. With
    `declare`, the length is announced in Content-Length; without, the body simply runs
    until the connection closes."""

    def __init__(self, total: int, *, declare: bool = False) -> None:
        super().__init__()
        self.total = total
        self.declare = declare
        self.sent = 0

    def answer(self, connection: socket.socket) -> None:
        length = f"Content-Length: {self.total}\r\n" if self.declare else ""
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"{length}Connection: close\r\n\r\n"
        )
        connection.sendall(head.encode())
        opening = b'{"choices": [{"message": {"role": "assistant", "content": "'
        connection.sendall(opening)
        self.sent += len(opening)
        piece = b"x" * _PIECE
        while self.sent < self.total and not self.release.is_set():
            chunk = piece[: self.total - self.sent]
            try:
                connection.sendall(chunk)
            except OSError:  # the client closed: it stopped reading
                return
            self.sent += len(chunk)


class SilentServer(_Server):
    """Reads the request and never answers (until the server shuts down)."""

    def answer(self, connection: socket.socket) -> None:
        self.release.wait()


class TrickleServer(_Server):
    """Answers 200 headers at once, then one byte of body every `every` seconds, forever."""

    def __init__(self, every: float = 0.2) -> None:
        super().__init__()
        self.every = every

    def answer(self, connection: socket.socket) -> None:
        connection.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"
        )
        while not self.release.wait(self.every):
            try:
                connection.sendall(b" ")
            except OSError:
                return


class _Handler(socketserver.BaseRequestHandler):
    server: _Server
    request: socket.socket

    def handle(self) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            more = self.request.recv(65536)
            if not more:
                return
            data += more
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            more = self.request.recv(65536)
            if not more:
                return
            body += more
        with self.server.lock:
            self.server.requests += 1
        with contextlib.suppress(OSError):
            self.server.answer(self.request)
