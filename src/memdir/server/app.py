"""The sync server's HTTP app (§7.3): the endpoints over `SyncRules`, with a gate in front.

The gate is one ASGI middleware. For every response it sets the `Memdir-Quotas` and
`Memdir-Protocol` headers (404s and 500s included). For the four API routes it then
checks, in this order and before the body is read: the client's protocol version
(426), the bearer token or admin key (401/403), the account's rate limit (429 with
`Retry-After`), and the request size (413). The endpoints are plain `def`s, which
FastAPI runs in its thread pool, so blocking storage never stalls the event loop.
Every error body is an `ErrorBody`. The API's own description (`/openapi.json`,
`/docs`, `/redoc`) needs no token, so it is served only when asked for (`docs=True`).
The server speaks plain HTTP: bound beyond loopback it needs a TLS-terminating proxy
in front (`plain_http_warning`).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, FastAPI, Header, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memdir import __version__
from memdir.errors import Busy, InvalidInput, MemdirError, Refused
from memdir.outbound import is_loopback
from memdir.server.accounts import Accounts
from memdir.server.ratelimit import Limiter, retry_after_header
from memdir.server.rules import Rejection, SyncRules
from memdir.sync.protocol import (
    MAX_PROTOCOL,
    MIN_PROTOCOL,
    PROTOCOL_HEADER,
    QUOTA_HEADER,
    CommitRequest,
    CommitResult,
    EraseRequest,
    EraseResult,
    ErrorBody,
    Identity,
    KeyringDoc,
    KeyringPut,
    Quotas,
    Snapshot,
    SnapshotRequest,
    TeamChange,
    TeamCreate,
    TeamDoc,
    TeamKeysChange,
)

__all__ = [
    "API_ROUTES",
    "DOC_ROUTES",
    "MIN_REQUEST_CAP",
    "TEAM_PREFIX",
    "create_app",
    "plain_http_warning",
    "request_cap",
    "serve",
]

log = logging.getLogger(__name__)

#: path -> who may call it ("user": an account's token, "admin": the admin key).
API_ROUTES = {
    "/v1/memory/identity": "user",
    "/v1/memory/snapshot": "user",
    "/v1/memory/commit": "user",
    "/v1/keyring": "user",
    "/v1/admin/erase": "admin",
    "/v1/teams": "user",
}
#: Paths below this prefix are a team's (`/v1/teams/{team}`, `…/changes`, `…/keys`).
TEAM_PREFIX = "/v1/teams/"
#: The API's description, served without a token and so only with `docs=True`.
DOC_ROUTES = ("/openapi.json", "/docs", "/redoc")
#: The smallest request-size cap; a full commit at the quotas may need more (see request_cap).
MIN_REQUEST_CAP = 64 * 1024 * 1024
_ADMIN_BUCKET = ":admin"  # not a valid user name, so no account shares its bucket
_USER_KEY = "memdir.user"
_SUPPORTED = list(range(MIN_PROTOCOL, MAX_PROTOCOL + 1))
_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


def request_cap(quotas: Quotas) -> int:
    """The largest request body accepted: room for a full commit, JSON escaping included."""
    return max(MIN_REQUEST_CAP, 2 * quotas.max_changes * quotas.max_body_bytes)


def _json(
    model: BaseModel, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    return Response(
        model.model_dump_json(), status_code=status, media_type="application/json", headers=headers
    )


def _error(
    quotas: Quotas,
    status: int,
    code: str,
    message: str,
    *,
    ids: Iterable[str] = (),
    version: int | None = None,
    supported: Sequence[int] = (),
    headers: Mapping[str, str] | None = None,
) -> Response:
    body = ErrorBody(
        error=code,
        message=message,
        ids=list(ids),
        version=version,
        supported=list(supported),
        quotas=quotas,
    )
    return _json(body, status, headers)


class _Gate:
    """Headers on every response; protocol, auth, rate and size checks on the API routes."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        accounts: Accounts,
        limiter: Limiter,
        quotas: Quotas,
        max_request_bytes: int,
    ) -> None:
        self.app = app
        self.accounts = accounts
        self.limiter = limiter
        self.quotas = quotas
        self.max_request_bytes = max_request_bytes
        self._headers = [
            (QUOTA_HEADER.lower().encode("latin-1"), quotas.header().encode("latin-1")),
            (PROTOCOL_HEADER.lower().encode("latin-1"), str(MAX_PROTOCOL).encode("latin-1")),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False
        ours = {name for name, _ in self._headers}

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in ours]
                message = {**message, "headers": kept + self._headers}
            await send(message)

        try:
            try:
                refusal = await self._admit(scope)
            except Refused:
                raise
            except MemdirError as exc:  # the backend behind the accounts or limiter: down
                log.warning("request %s refused: %s", scope.get("path"), exc)
                refusal = _error(
                    self.quotas,
                    503,
                    "busy",
                    "the server's storage is not available right now; try again later",
                    headers={"Retry-After": "5"},
                )
            if refusal is None:
                receive, refusal = await self._limit_body(scope, receive)
            if refusal is not None:
                await refusal(scope, receive, send_with_headers)
                return
            await self.app(scope, receive, send_with_headers)
        except Exception:
            log.exception("request %s %s failed", scope.get("method"), scope.get("path"))
            if not started:
                failed = _error(self.quotas, 500, "internal", "the server failed; see its log")
                await failed(scope, receive, send_with_headers)

    def _header(self, scope: Scope, name: bytes) -> str | None:
        for key, value in scope.get("headers", []):
            if key.lower() == name:
                text: str = value.decode("latin-1")
                return text
        return None

    async def _admit(self, scope: Scope) -> Response | None:
        """None when the request may go on, else the refusal to send."""
        role = _route_role(scope.get("path", ""))
        if role is None:
            return None
        raw = (self._header(scope, PROTOCOL_HEADER.lower().encode()) or "").strip()
        if not raw.isdigit() or not MIN_PROTOCOL <= int(raw) <= MAX_PROTOCOL:
            return _error(
                self.quotas,
                426,
                "incompatible_protocol",
                f"this server speaks protocol {MIN_PROTOCOL}..{MAX_PROTOCOL}; the request "
                f"{'sent ' + repr(raw[:20]) if raw else f'had no {PROTOCOL_HEADER} header'}",
                supported=_SUPPORTED,
            )
        scheme, _, token = (self._header(scope, b"authorization") or "").partition(" ")
        token = token.strip()
        challenge = {"WWW-Authenticate": "Bearer"}
        if scheme.lower() != "bearer" or not token:
            return _error(
                self.quotas, 401, "unauthorized", "a bearer token is required", headers=challenge
            )
        if role == "admin":
            if not await anyio.to_thread.run_sync(self.accounts.is_admin, token):
                return _error(self.quotas, 403, "forbidden", "this endpoint needs the admin key")
            bucket = _ADMIN_BUCKET
        else:
            user = await anyio.to_thread.run_sync(self.accounts.authenticate, token)
            if user is None:
                return _error(
                    self.quotas, 401, "unauthorized", "the token is not valid", headers=challenge
                )
            scope.setdefault("state", {})[_USER_KEY] = user
            bucket = user
        if self.limiter.blocking:
            wait = await anyio.to_thread.run_sync(self.limiter.check, bucket)
        else:
            wait = self.limiter.check(bucket)
        if wait > 0:
            return _error(
                self.quotas,
                429,
                "rate_limited",
                "too many requests; retry later",
                headers={"Retry-After": retry_after_header(wait)},
            )
        return None

    async def _limit_body(self, scope: Scope, receive: Receive) -> tuple[Receive, Response | None]:
        """Refuse bodies over the cap: by Content-Length, or by counting a chunked body."""
        too_big = _error(
            self.quotas,
            413,
            "quota_exceeded",
            f"the request body is larger than {self.max_request_bytes} bytes",
        )
        length = self._header(scope, b"content-length")
        if length is not None:
            if length.strip().isdigit() and int(length) > self.max_request_bytes:
                return receive, too_big
            return receive, None
        if scope.get("method") in ("GET", "HEAD") or _route_role(scope.get("path", "")) is None:
            return receive, None
        buffered: list[Message] = []
        total = 0
        while True:
            message = await receive()
            buffered.append(message)
            if message["type"] != "http.request":
                break
            total += len(message.get("body", b""))
            if total > self.max_request_bytes:
                return receive, too_big
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return buffered.pop(0) if buffered else await receive()

        return replay, None


def _route_role(path: str) -> str | None:
    """Who may call `path` (see API_ROUTES), None for paths outside the API."""
    if path.startswith(TEAM_PREFIX):
        return "user"
    return API_ROUTES.get(path)


def _validation_message(errors: Sequence[Any]) -> str:
    parts = []
    for error in errors[:5]:
        loc = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        parts.append(f"{loc or 'body'}: {error.get('msg', 'invalid')}")
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return "invalid request: " + "; ".join(parts) + more


def _install_handlers(app: FastAPI, quotas: Quotas) -> None:
    async def on_service_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Rejection)
        return _error(quotas, exc.status, exc.code, exc.message, ids=exc.ids, version=exc.version)

    async def on_validation(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return _error(quotas, 422, "invalid", _validation_message(exc.errors()))

    async def on_invalid(request: Request, exc: Exception) -> Response:
        return _error(quotas, 422, "invalid", str(exc))

    async def on_busy(request: Request, exc: Exception) -> Response:
        return _error(quotas, 503, "busy", str(exc), headers={"Retry-After": "1"})

    async def on_http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        return _error(quotas, exc.status_code, code, str(exc.detail), headers=exc.headers)

    app.add_exception_handler(Rejection, on_service_error)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(InvalidInput, on_invalid)
    app.add_exception_handler(Busy, on_busy)
    app.add_exception_handler(StarletteHTTPException, on_http)


_bearer = HTTPBearer(auto_error=False, description="An account token, or the admin key")


def _documented(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
    protocol: Annotated[
        str | None,
        Header(alias=PROTOCOL_HEADER, description="The client's sync protocol version"),
    ] = None,
) -> None:
    """Only for the OpenAPI document: the gate has checked both before any endpoint runs."""


def _user(request: Request) -> str:
    user: str = request.scope["state"][_USER_KEY]
    return user


def create_app(
    rules: SyncRules,
    accounts: Accounts,
    limiter: Limiter,
    *,
    max_request_bytes: int | None = None,
    docs: bool = False,
    routes: Sequence[BaseRoute] = (),
    lifespan: Callable[[], AbstractAsyncContextManager[Any]] | None = None,
) -> FastAPI:
    """The sync server's ASGI app over `rules`, authenticating with `accounts`.

    `docs` serves the API's description (`DOC_ROUTES`); without it they are 404s.
    `routes` are served beside the API, outside its gate's token check (the remote MCP
    endpoint and its OAuth server check their own tokens); `lifespan` runs while the
    server does (the MCP session manager).
    """
    quotas = rules.quotas
    openapi, swagger, redoc = DOC_ROUTES if docs else (None, None, None)

    @asynccontextmanager
    async def running(_: FastAPI) -> AsyncIterator[None]:
        if lifespan is None:
            yield
            return
        async with lifespan():
            yield

    app = FastAPI(
        title="memdir sync server",
        version=__version__,
        description=__doc__,
        openapi_url=openapi,
        docs_url=swagger,
        redoc_url=redoc,
        lifespan=running,
    )
    errors: dict[int | str, dict[str, Any]] = {
        code: {"model": ErrorBody} for code in (401, 403, 404, 409, 410, 413, 422, 426, 429)
    }
    router = APIRouter(prefix="/v1", dependencies=[Security(_documented)], responses=errors)

    @router.get("/memory/identity", response_model=Identity)
    def identity(request: Request) -> Response:
        """Who the token belongs to, the protocol range and the quotas."""
        return _json(rules.identity(_user(request)))

    @router.post("/memory/snapshot", response_model=Snapshot)
    def snapshot(request: Request, body: SnapshotRequest) -> Response:
        """A scope's manifest, plus the texts the client lacks (up to the response quota)."""
        return _json(rules.snapshot(_user(request), body))

    @router.post("/memory/commit", response_model=CommitResult)
    def commit(request: Request, body: CommitRequest) -> Response:
        """Apply every change or none."""
        return _json(rules.commit(_user(request), body))

    @router.get("/keyring", response_model=KeyringDoc)
    def keyring(request: Request) -> Response:
        """The account's keyring document (404 when none is stored); opaque to the server."""
        return _json(rules.keyring(_user(request)))

    @router.put("/keyring", response_model=KeyringDoc)
    def put_keyring(request: Request, body: KeyringPut) -> Response:
        """Store the keyring document (compare-and-swap on its version; same key id only)."""
        return _json(rules.put_keyring(_user(request), body))

    @router.post("/teams", response_model=TeamDoc)
    def create_team(request: Request, body: TeamCreate) -> Response:
        """Create a team; the caller becomes its owner (409 `conflict` if the name is taken)."""
        return _json(rules.teams.create(_user(request), body.team, body.keys))

    @router.get("/teams/{team}", response_model=TeamDoc)
    def team(request: Request, team: str, history: bool = True) -> Response:
        """A team's members, revocations and history (the audit), for its members only;
        `history=false` leaves the history out (a sync pass asks only for the roles)."""
        return _json(rules.teams.show(_user(request), team, history=history))

    @router.post("/teams/{team}/changes", response_model=TeamDoc)
    def change_team(request: Request, team: str, body: TeamChange) -> Response:
        """One membership change, made against the head the caller saw (`parent`)."""
        return _json(rules.teams.change(_user(request), team, body))

    @router.post("/teams/{team}/keys", response_model=TeamDoc)
    def change_team_keys(request: Request, team: str, body: TeamKeysChange) -> Response:
        """Enrol a member key, start a key epoch or share wrapped keys (an end-to-end
        encrypted team), made against the keys version the caller read (`expected`)."""
        return _json(rules.teams.change_keys(_user(request), team, body))

    @router.post("/admin/erase", response_model=EraseResult)
    def erase(body: EraseRequest) -> Response:
        """Erase an account: marker first, then its data; its token is refused from then on."""
        return _json(rules.erase(body.user))

    app.include_router(router)
    app.router.routes.extend(routes)
    _install_handlers(app, quotas)
    app.add_middleware(
        _Gate,
        accounts=accounts,
        limiter=limiter,
        quotas=quotas,
        max_request_bytes=max_request_bytes if max_request_bytes else request_cap(quotas),
    )
    return app


def plain_http_warning(host: str) -> str | None:
    """The warning for serving plain HTTP on `host`: None for loopback (as written)."""
    bare = host.strip("[]")
    if bare and is_loopback(bare):
        return None
    shown = bare or "every address"
    return (
        f"warning: serving plain HTTP on {shown}, beyond loopback: tokens and notes would "
        "cross the network unencrypted. Put a TLS-terminating reverse proxy in front "
        "(clients refuse plain HTTP to anything but loopback), or bind 127.0.0.1."
    )


def serve(app: ASGIApp, host: str, port: int, on_ready: Callable[[str], None]) -> None:
    """Run `app` with uvicorn on host:port (0: any free port) until SIGINT/SIGTERM.

    The socket is bound here, before uvicorn starts, so the real port is known;
    `on_ready` gets the server's URL once uvicorn accepts connections.
    """
    import uvicorn

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise MemdirError(f"cannot listen on {host}:{port}: {exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise MemdirError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}"

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                on_ready(url)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            await super().shutdown(sockets)
            # uvicorn re-raises the signal that stopped it, which would kill the process
            # before the caller closes its storage; a graceful stop exits normally instead.
            self._captured_signals.clear()

    # Idle connections are kept 15 s: longer than clients keep theirs (httpx: 5 s), so a
    # client never reuses a connection at the instant the server closes it (a read error
    # the load bench saw with uvicorn's 5 s default).
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        proxy_headers=False,
        timeout_keep_alive=15,
    )
    try:
        _Server(config).run(sockets=[sock])
    finally:
        sock.close()
