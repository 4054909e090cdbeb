"""Helpers of the memory page's tests: the app over `httpx.ASGITransport` (`AsgiPage`), and
the real server (uvicorn on 127.0.0.1, a free port, in a thread: `start_server`)."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import uvicorn

from memdir import Memory
from memdir.web.app import build_app
from memdir.web.serve import HOST, bind, new_token, page_url

#: The port the ASGI-transport tests claim to be on (no socket is opened for them).
ASGI_PORT = 8765


@dataclass
class AsgiPage:
    """The app in-process: `request` sends one request through httpx's ASGI transport."""

    app: Any
    token: str
    memory: Memory
    port: int = ASGI_PORT
    base: str = f"http://{HOST}:{ASGI_PORT}"

    def request(
        self, method: str, path: str, *, auth: bool = True, **kwargs: Any
    ) -> httpx.Response:
        headers = dict(kwargs.pop("headers", None) or {})
        if auth:
            headers.setdefault("Authorization", f"Bearer {self.token}")

        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url=self.base) as client:
                return await client.request(method, path, headers=headers, **kwargs)

        return anyio.run(send)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", path, **kwargs)


@dataclass
class UiServer:
    """A running memory page: `url` is what `memdir ui` prints (token in the fragment),
    `base` the origin, `memory` the server's own Memory (touch it only between requests:
    a Memory is not shared safely between threads), `project` and `home` its folders."""

    url: str
    base: str
    token: str
    port: int
    memory: Memory
    project: Path
    home: Path
    _server: uvicorn.Server = field(repr=False)
    _thread: threading.Thread = field(repr=False)

    @property
    def headers(self) -> dict[str, str]:
        """The Authorization header the page sends."""
        return {"Authorization": f"Bearer {self.token}"}

    def client(self, **kwargs: Any) -> httpx.Client:
        """An httpx client on the server, sending the token."""
        return httpx.Client(base_url=self.base, headers=self.headers, timeout=30, **kwargs)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


def start_server(memory: Memory, project: Path, home: Path, port: int = 0) -> UiServer:
    """Serve the page for `memory` in a thread on 127.0.0.1 (`port` 0: a free one)."""
    sock: socket.socket = bind(port)
    bound = sock.getsockname()[1]
    token = new_token()
    app = build_app(memory, token=token, port=bound)
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", server_header=False
    )
    server = uvicorn.Server(config)
    # uvicorn captures signals only in the main thread: this one leaves them to pytest.

    def run() -> None:
        try:
            server.run(sockets=[sock])
        finally:
            sock.close()

    thread = threading.Thread(target=run, name="memdir-ui-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the memory page's server did not start")
        time.sleep(0.01)
    base = f"http://{HOST}:{bound}"
    return UiServer(
        page_url(bound, token), base, token, bound, memory, project, home, server, thread
    )
