"""Test helper: a loopback HTTP proxy in front of a real sync server, scriptable per request.

    from fault_proxy import FaultProxy

    with FaultProxy(server.url) as proxy:
        proxy.script("/commit", "500", times=2)         # the next two commits fail
        proxy.script("/snapshot", "429", retry_after=42)
        proxy.script("/commit", "drop")                 # forwarded, applied, answer lost
        proxy.script("/commit", "delay", seconds=0.5)
        proxy.script("/commit", "pass", before=hook)    # run hook(), then forward
        memory.sync.login(proxy.url, token)

Rules are matched in the order they were added, by a substring of the request path,
and each is used up after `times` requests; a request no rule matches is passed
through. Every request is logged (`proxy.log`) with the action taken. The upstream can
be changed at any time (`proxy.upstream = other_url`), so a server restarted on
another port stays behind the same client-facing origin. Only 127.0.0.1 is used.

As a load balancer in front of server replicas (`proxy.spread = [url, url, url]`), each
request goes to the next replica in turn; a replica that refuses the connection (it
died) is skipped for the next one, and a request forwarded to a replica that dies
before answering gets a 502, as from a real proxy. A rule's `to` pins its requests to
one replica.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = ["Action", "FaultProxy", "Logged"]

Action = Literal["pass", "500", "429", "drop", "delay", "refuse"]
_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "host",
}


@dataclass
class _Rule:
    path: str
    action: Action
    times: int
    retry_after: str
    seconds: float
    before: Callable[[], None] | None
    after: Callable[[], None] | None
    method: str | None = None
    to: str | None = None


@dataclass(frozen=True)
class Logged:
    """One request the proxy saw: method, path, the action taken and the status sent."""

    method: str
    path: str
    action: Action
    status: int | None  # None: the connection was dropped without an answer
    body: bytes = field(repr=False, default=b"")
    answer: bytes = field(repr=False, default=b"")  # what the server answered (if forwarded)
    #: the answer's headers, names in lower case
    headers: dict[str, str] = field(repr=False, default_factory=dict)

    def json(self) -> Any:
        """The request body as JSON."""
        return json.loads(self.body)

    def answer_json(self) -> Any:
        """The server's answer as JSON."""
        return json.loads(self.answer)


class FaultProxy:
    """A threaded HTTP/1.0 proxy on 127.0.0.1 forwarding to `upstream` unless scripted."""

    def __init__(self, upstream: str, *, keep_host: bool = False) -> None:
        self.upstream = upstream
        #: Replicas to spread requests over in turn (empty: everything goes to `upstream`).
        self.spread: list[str] = []
        self._turn = 0
        #: Forward the client's Host header as it was (a request signed over its Host, as
        #: S3's Signature V4 is, stays valid through the proxy).
        self.keep_host = keep_host
        self.log: list[Logged] = []
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request per connection: a drop is clean

            def do_GET(self) -> None:
                proxy._handle(self)

            do_POST = do_GET  # noqa: N815 - the http.server naming convention
            do_PUT = do_GET  # noqa: N815
            do_DELETE = do_GET  # noqa: N815
            do_HEAD = do_GET  # noqa: N815

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -- control -----------------------------------------------------------------------

    def start(self) -> FaultProxy:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and close the listening socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def script(
        self,
        path: str,
        action: Action,
        *,
        times: int = 1,
        retry_after: int | str = 1,
        seconds: float = 0.0,
        before: Callable[[], None] | None = None,
        after: Callable[[], None] | None = None,
        method: str | None = None,
        to: str | None = None,
    ) -> None:
        """Answer the next `times` requests whose path contains `path` with `action`.

        pass: forward; 500: answer 500 without forwarding; 429: answer 429 with
        `Retry-After: retry_after` without forwarding; drop: forward, read the server's
        answer, then close the client connection without a word; delay: wait `seconds`,
        then forward; refuse: close the connection without forwarding. `before` runs
        before anything is forwarded, `after` once the server answered (or failed).
        With `method`, only requests of that method match; with `to`, they go to that
        replica whatever the turn.
        """
        rule = _Rule(path, action, times, str(retry_after), seconds, before, after, method, to)
        with self._lock:
            self._rules.append(rule)

    def clear(self) -> None:
        """Drop every rule that is not used up yet."""
        with self._lock:
            self._rules.clear()

    def pending(self) -> int:
        """Requests still scripted."""
        with self._lock:
            return sum(r.times for r in self._rules)

    def requests(self, path: str = "") -> list[Logged]:
        """The logged requests whose path contains `path`."""
        with self._lock:
            return [entry for entry in self.log if path in entry.path]

    # -- serving -----------------------------------------------------------------------

    def _take(self, path: str, method: str = "") -> _Rule | None:
        with self._lock:
            for rule in self._rules:
                if rule.path in path and rule.method in (None, method):
                    rule.times -= 1
                    if rule.times <= 0:
                        self._rules.remove(rule)
                    return rule
        return None

    def _record(
        self,
        handler: BaseHTTPRequestHandler,
        action: Action,
        status: int | None,
        body: bytes,
        answer: bytes = b"",
        headers: dict[str, str] | None = None,
    ) -> None:
        lowered = {k.lower(): v for k, v in (headers or {}).items()}
        entry = Logged(handler.command, handler.path, action, status, body, answer, lowered)
        with self._lock:
            self.log.append(entry)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        rule = self._take(handler.path, handler.command)
        action: Action = rule.action if rule is not None else "pass"
        if rule is not None and rule.before is not None:
            rule.before()
        try:
            if action == "500":
                self._record(handler, action, 500, body)
                self._answer(handler, 500, b'{"error":"internal","message":"injected"}', {})
                return
            if action == "429":
                headers = {"Retry-After": rule.retry_after if rule else "1"}
                payload = b'{"error":"rate_limited","message":"injected"}'
                self._record(handler, action, 429, body, payload, headers)
                self._answer(handler, 429, payload, headers)
                return
            if action == "refuse":
                handler.close_connection = True
                self._record(handler, action, None, body)
                return
            if action == "delay" and rule is not None:
                time.sleep(rule.seconds)
            try:
                status, headers, answer = self._forward(handler, body, rule.to if rule else None)
            except OSError:
                self._record(handler, action, 502, body)
                self._answer(handler, 502, b'{"error":"bad_gateway","message":"upstream"}', {})
                return
            if action == "drop":
                handler.close_connection = True
                self._record(handler, action, None, body, answer, headers)
                return
            self._record(handler, action, status, body, answer, headers)
            self._answer(handler, status, answer, headers)
        finally:
            if rule is not None and rule.after is not None:
                rule.after()

    def _targets(self, pinned: str | None) -> list[str]:
        """The upstreams to try, in order: the pinned one, the replicas from this turn on,
        or the one upstream."""
        if pinned is not None:
            return [pinned]
        with self._lock:
            spread = list(self.spread)
            self._turn += 1
            turn = self._turn
        if not spread:
            return [self.upstream]
        start = turn % len(spread)
        return spread[start:] + spread[:start]

    def _forward(
        self, handler: BaseHTTPRequestHandler, body: bytes, pinned: str | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        targets = self._targets(pinned)
        for n, url in enumerate(targets):
            target = urlsplit(url)
            conn = http.client.HTTPConnection(
                target.hostname or "127.0.0.1", target.port, timeout=60
            )
            try:
                conn.connect()
            except ConnectionRefusedError:  # a dead replica: the next one takes it
                conn.close()
                if n == len(targets) - 1:
                    raise
                continue
            return self._exchange(conn, handler, body)
        raise OSError("no upstream")

    def _exchange(
        self, conn: http.client.HTTPConnection, handler: BaseHTTPRequestHandler, body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        try:
            dropped = _HOP_BY_HOP - {"host"} if self.keep_host else _HOP_BY_HOP
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in dropped}
            headers["Content-Length"] = str(len(body))
            conn.request(handler.command, handler.path, body=body, headers=headers)
            response = conn.getresponse()
            answer = response.read()
            kept = {
                k: v
                for k, v in response.getheaders()
                if k.lower() not in _HOP_BY_HOP and k.lower() not in ("date", "server")
            }
            return response.status, kept, answer
        finally:
            conn.close()

    @staticmethod
    def _answer(
        handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]
    ) -> None:
        handler.send_response(status)
        for key, value in headers.items():
            handler.send_header(key, value)
        if not any(k.lower() == "content-type" for k in headers):
            handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(body)
