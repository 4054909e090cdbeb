"""The OAuth 2.1 authorization server of the sync server's remote MCP endpoint (``<base>/mcp``).

`OAuthServer.routes()` serves, on the sync server's own origin (issuer = ``base_url``):

- ``/.well-known/oauth-protected-resource/mcp`` (RFC 9728) and
  ``/.well-known/oauth-authorization-server`` (RFC 8414, with client ID metadata
  documents and RFC 9207 ``iss`` advertised);
- ``/authorize``, ``/token``, ``/register``, ``/revoke``: the MCP SDK's handlers over
  `MemdirProvider` (code flow with PKCE S256 only, refresh rotation, RFC 7591, RFC 7009);
- ``/oauth/consent``: the page where the user signs in with their sync token and picks
  scopes, a project and a team (`ConsentPage`).

The MCP endpoint itself asks `verify` what a bearer token grants (`OAuthGrant`) and
answers 401/403 with `challenge`. All state is shared between replicas (`OAuthState`);
entries expired for more than a day are deleted by a prune that runs, at most once an
hour per process, in a thread started from a request (`OAuthServer.prune_soon`).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread
from mcp.server.auth.routes import (
    build_metadata,
    cors_middleware,
    create_auth_routes,
    validate_issuer_url,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from memdir.server.accounts import Accounts
from memdir.server.oauth.clients import SCOPES, ClientRefused, Clients, is_cimd
from memdir.server.oauth.consent import ConsentPage, message
from memdir.server.oauth.provider import MemdirProvider
from memdir.server.oauth.state import (
    BackendDocuments,
    DirectoryDocuments,
    DocumentStore,
    OAuthState,
)
from memdir.server.ratelimit import retry_after_header
from memdir.server.storage.base import ServerDocuments, Storage
from memdir.server.teams import TeamRules

__all__ = ["PRUNE_EVERY", "SCOPES", "OAuthGrant", "OAuthServer"]

log = logging.getLogger(__name__)

#: Seconds between two prunes of the OAuth state by one process.
PRUNE_EVERY = 3600.0
#: The SDK's endpoints whose requests are rate limited: path -> methods. Not `/token`:
#: what it takes (a code or refresh token of 256 bits) cannot be guessed, and a refresh
#: refused with 429 would make the SDK's client drop its tokens and ask the user again.
_LIMITED = {
    "/authorize": ("GET", "POST"),
    "/register": ("POST",),
}

_REGISTRATION = ClientRegistrationOptions(
    enabled=True, valid_scopes=list(SCOPES), default_scopes=list(SCOPES)
)
_REVOCATION = RevocationOptions(enabled=True)
#: The SDK's endpoints, served by its handlers: path -> methods.
_SDK_PATHS = {
    "/authorize": ["GET", "POST"],
    "/token": ["POST", "OPTIONS"],
    "/register": ["POST", "OPTIONS"],
    "/revoke": ["POST", "OPTIONS"],
}
#: URLs as given: a path-less issuer stays without a trailing slash (RFC 8414 compares as strings).
_URL = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))
PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource/mcp"
AUTHORIZATION_SERVER_PATH = "/.well-known/oauth-authorization-server"


@dataclass(frozen=True, slots=True)
class OAuthGrant:
    """What a valid access token gives: whose memory, which scopes, which project and team."""

    account: str
    scopes: frozenset[str]
    project: str | None
    team: str | None
    client_id: str
    resource: str
    expires_at: int


def client_network(address: str) -> str:
    """The rate limit's key for a client address: an IPv4 address, or an IPv6 address's
    /64 (one host holds a whole /64, and must not get a fresh budget from each address)."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if parsed.version == 6:
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


class OAuthServer:
    """The authorization server; set `base_url` before the first request.

    `limit` (a rate limiter's ``check``: 0.0, or the seconds to wait; called from a worker
    thread when `limit_blocks`) is applied to ``/register``, ``/authorize`` and the
    consent page's POST, keyed ``"oauth:" + <client network>`` (an IPv4 address, an IPv6
    /64): an answer of 429 with ``Retry-After``. The address is the TCP peer's (the server
    does not trust proxy headers), so behind a reverse proxy every client shares the
    proxy's one bucket.
    """

    def __init__(
        self,
        *,
        storage: Storage,
        data_dir: Path,
        accounts: Accounts,
        teams: TeamRules,
        allow_private_clients: bool = False,
        clock: Callable[[], float] = time.time,
        access_ttl: int = 3600,
        refresh_ttl: int = 30 * 86400,
        code_ttl: int = 300,
        limit: Callable[[str], float] | None = None,
        limit_blocks: bool = False,
    ) -> None:
        store: DocumentStore = (
            BackendDocuments(storage)
            if isinstance(storage, ServerDocuments)
            else DirectoryDocuments(data_dir / "oauth")
        )
        self.state = OAuthState(store)
        self._accounts = accounts
        self._clock = clock
        self._limit = limit
        self._limit_blocks = limit_blocks
        self._prune_lock = threading.Lock()
        self.next_prune = 0.0  # time.monotonic() of the next prune
        self.clients = Clients(self.state, allow_private=allow_private_clients, clock=clock)
        self._base = ""
        self.provider = MemdirProvider(
            self.state,
            self.clients,
            accounts,
            base=self._current_base,
            clock=clock,
            access_ttl=access_ttl,
            refresh_ttl=refresh_ttl,
            code_ttl=code_ttl,
        )
        self.consent = ConsentPage(
            self.state, self.provider, accounts, teams, base=self._current_base, clock=clock
        )
        #: The SDK's routes, built for one base URL: (base, path -> app).
        self._sdk: tuple[str, dict[str, ASGIApp]] | None = None

    @property
    def base_url(self) -> str:
        """The server's origin as clients reach it (the issuer), e.g. ``https://memory.example.com``."""
        return self._base

    @base_url.setter
    def base_url(self, value: str) -> None:
        base = value.rstrip("/")
        validate_issuer_url(AnyHttpUrl(base))
        self._base = base

    def _current_base(self) -> str:
        if not self._base:
            raise RuntimeError("OAuthServer.base_url was not set")
        return self._base

    @property
    def resource(self) -> str:
        """The protected resource: ``<base>/mcp``."""
        return self._current_base() + "/mcp"

    # -- routes --------------------------------------------------------------------------

    def routes(self) -> list[BaseRoute]:
        """Every endpoint of the authorization server, to mount at the app's root."""
        routes: list[BaseRoute] = [
            Route(
                PROTECTED_RESOURCE_PATH,
                endpoint=cors_middleware(self._resource_metadata, ["GET", "OPTIONS"]),
                methods=["GET", "OPTIONS"],
            ),
            Route(
                AUTHORIZATION_SERVER_PATH,
                endpoint=cors_middleware(self._server_metadata, ["GET", "OPTIONS"]),
                methods=["GET", "OPTIONS"],
            ),
            Route("/oauth/consent", endpoint=self._consent, methods=["GET", "POST"]),
        ]
        routes.extend(
            Route(path, endpoint=_Delegate(self, path), methods=methods)
            for path, methods in _SDK_PATHS.items()
        )
        return routes

    def sdk_app(self, path: str) -> ASGIApp:
        """The SDK's handler of `path`, built for the current base URL."""
        base = self._current_base()
        if self._sdk is None or self._sdk[0] != base:
            built = create_auth_routes(
                self.provider,
                _URL.validate_python(base),
                client_registration_options=_REGISTRATION,
                revocation_options=_REVOCATION,
            )
            self._sdk = (base, {r.path: r.app for r in built})
        return self._sdk[1][path]

    async def _consent(self, request: Request) -> Response:
        if request.method == "POST":
            wait = await self.throttle(request.scope)
            if wait:
                return message(
                    429,
                    "Too many requests from your address; wait a minute and send the form again.",
                    {"Retry-After": retry_after_header(wait)},
                )
        return await self.consent.handle(request)

    async def throttle(self, scope: Scope) -> float:
        """Spend a token of the request's client address (0.0: go on; else the seconds to
        wait); start a prune of the state when one is due."""
        self.prune_soon()
        if self._limit is None:
            return 0.0
        client = scope.get("client")
        key = "oauth:" + (client_network(str(client[0])) if client else "unknown")
        if self._limit_blocks:
            wait: float = await anyio.to_thread.run_sync(self._limit, key)
            return wait
        return self._limit(key)

    # -- pruning -------------------------------------------------------------------------

    def prune_soon(self) -> None:
        """Start a prune in a thread of its own if none ran in this process for
        `PRUNE_EVERY` seconds (never waited for: a request does not wait on it)."""
        now = time.monotonic()
        with self._prune_lock:
            if now < self.next_prune:
                return
            self.next_prune = now + PRUNE_EVERY
        threading.Thread(target=self.prune, name="memdir-oauth-prune", daemon=True).start()

    def prune(self) -> int:
        """Delete the state's entries expired for more than a day (`OAuthState.prune`); the
        number deleted, 0 when it failed (logged: the next one tries again)."""
        try:
            return self.state.prune(self._clock())
        except Exception as exc:  # a prune must never take a request or the server down
            log.warning("pruning the OAuth state failed: %s", exc)
            return 0

    async def _resource_metadata(self, request: Request) -> Response:
        metadata = ProtectedResourceMetadata(
            resource=_URL.validate_python(self.resource),
            authorization_servers=[_URL.validate_python(self._current_base())],
            scopes_supported=list(SCOPES),
            resource_name="memdir",
        )
        return _json(metadata.model_dump(mode="json", exclude_none=True))

    async def _server_metadata(self, request: Request) -> Response:
        metadata = build_metadata(
            _URL.validate_python(self._current_base()), None, _REGISTRATION, _REVOCATION
        )
        metadata.token_endpoint_auth_methods_supported = [
            "none",
            "client_secret_post",
            "client_secret_basic",
        ]
        metadata.revocation_endpoint_auth_methods_supported = [
            "none",
            "client_secret_post",
            "client_secret_basic",
        ]
        metadata.client_id_metadata_document_supported = True
        metadata.authorization_response_iss_parameter_supported = True
        return _json(metadata.model_dump(mode="json", exclude_none=True))

    # -- the resource's side -------------------------------------------------------------

    async def verify(self, token: str) -> OAuthGrant | None:
        """What `token` grants; None for an unknown, expired, revoked or other-resource token."""
        if not token or len(token) > 200:
            return None
        # A grant whose account was removed since (`memdir server user remove`), or whose
        # sync token was rotated, is refused by the provider (the family is bound to the
        # token's digest); an erased account is refused by the sync rules as well.
        grant = await self.provider.grant(token)
        if grant is None or grant.resource != self.resource:
            return None
        return OAuthGrant(
            account=grant.account,
            scopes=frozenset(grant.scopes),
            project=grant.project,
            team=grant.team,
            client_id=grant.client_id,
            resource=grant.resource,
            expires_at=grant.expires_at,
        )

    def challenge(self, error: str | None = None, description: str | None = None) -> str:
        """The ``WWW-Authenticate`` value of a 401/403 answer of the MCP endpoint."""
        parts = [
            'Bearer realm="memdir"',
            f'resource_metadata="{self._current_base()}{PROTECTED_RESOURCE_PATH}"',
            f'scope="{" ".join(SCOPES)}"',
        ]
        if error is not None:
            parts.append(f'error="{_quoted(error)}"')
        if description is not None:
            parts.append(f'error_description="{_quoted(description)}"')
        return ", ".join(parts)


class _Delegate:
    """An ASGI app passing a request to the SDK's handler of one path; for ``/authorize``
    it first fetches a metadata-document client, to answer a refused one clearly."""

    def __init__(self, server: OAuthServer, path: str) -> None:
        self.server = server
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") in _LIMITED.get(self.path, ()):
            wait = await self.server.throttle(scope)
            if wait:
                slow = JSONResponse(
                    {
                        "error": "temporarily_unavailable",
                        "error_description": "too many requests from this address; "
                        f"retry after {retry_after_header(wait)} s",
                    },
                    status_code=429,
                    headers={"Retry-After": retry_after_header(wait), "Cache-Control": "no-store"},
                )
                await slow(scope, receive, send)
                return
        if self.path == "/authorize" and scope.get("method") == "GET":
            client_id = Request(scope).query_params.get("client_id", "")
            if is_cimd(client_id):
                try:
                    await self.server.clients.resolve(client_id)
                except ClientRefused as exc:
                    refused = JSONResponse(
                        {"error": "invalid_client", "error_description": str(exc)},
                        status_code=400,
                        headers={"Cache-Control": "no-store"},
                    )
                    await refused(scope, receive, send)
                    return
        await self.server.sdk_app(self.path)(scope, receive, send)


def _quoted(text: str) -> str:
    """`text` fit for a quoted-string of an HTTP header (RFC 6750 §3: no quotes, backslashes
    or controls)."""
    return "".join(c for c in text if c.isprintable() and c not in '"\\')[:300]


def _json(doc: object) -> Response:
    body = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    return Response(
        body,
        media_type="application/json",
        headers={"Cache-Control": "public, max-age=3600"},
    )
