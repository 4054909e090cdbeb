"""The memory page's guard, an ASGI middleware run before any route (docs/web.md): the Host
allow-list (421), foreign Origins and cross-site fetch metadata (403), the bearer token on
/api/ (401, compared in constant time), and the security headers on every response.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CSP", "Guard", "security_headers"]

CSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

#: Fetch destinations that mean the page is being embedded somewhere.
_FRAMED = frozenset({b"iframe", b"frame", b"embed", b"object", b"fencedframe"})
_ALLOWED_SITES = frozenset({b"same-origin", b"none"})


def security_headers(path: str) -> list[tuple[bytes, bytes]]:
    """The headers every response of `path` carries."""
    headers = [
        (b"content-security-policy", CSP.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"x-frame-options", b"DENY"),
        (b"cross-origin-opener-policy", b"same-origin"),
        (b"cross-origin-resource-policy", b"same-origin"),
    ]
    cache = b"no-store" if path.startswith("/api/") or path == "/api" else b"no-cache"
    headers.append((b"cache-control", cache))
    return headers


class Guard:
    """Refuse what the page must never answer, and add the security headers to the rest."""

    def __init__(self, app: ASGIApp, *, token: str, port: int) -> None:
        self.app = app
        self._token = f"Bearer {token}".encode()
        self._hosts = frozenset({f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()})
        self._origins = frozenset(b"http://" + host for host in self._hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        if scope["type"] != "http":  # no websockets here
            await send({"type": "websocket.close", "code": 1008})
            return
        problem = self._problem(scope["headers"], path)
        if problem is not None:
            status, message = problem
            await _refuse(send, path, status, message)
            return
        extra = security_headers(path)
        names = {name for name, _ in extra}

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = {**message, "headers": kept + extra}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _problem(self, raw: Iterable[tuple[bytes, bytes]], path: str) -> tuple[int, str] | None:
        headers: dict[bytes, list[bytes]] = {}
        for name, value in raw:
            headers.setdefault(name.lower(), []).append(value)
        hosts = headers.get(b"host", [])
        if len(hosts) != 1 or hosts[0].lower() not in self._hosts:
            return 421, "this page answers only on its own address (127.0.0.1 or localhost)"
        origins = headers.get(b"origin", [])
        if any(origin.lower() not in self._origins for origin in origins):
            return 403, "a request from another site is refused"
        sites = headers.get(b"sec-fetch-site", [])
        if any(site.strip().lower() not in _ALLOWED_SITES for site in sites):
            return 403, "a request from another site is refused"
        if any(dest.strip().lower() in _FRAMED for dest in headers.get(b"sec-fetch-dest", [])):
            return 403, "this page may not be framed or embedded"
        if path == "/api" or path.startswith("/api/"):
            given = headers.get(b"authorization", [])
            # Constant time: the comparison says nothing about how much of a guess was right.
            if len(given) != 1 or not hmac.compare_digest(given[0], self._token):
                return 401, "a valid token is required (open the address memdir ui printed)"
        return None


async def _refuse(send: Send, path: str, status: int, message: str) -> None:
    body = json.dumps({"error": {"kind": "refused", "message": message, "hint": None}}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *security_headers(path),
    ]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
