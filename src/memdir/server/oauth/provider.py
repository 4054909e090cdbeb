"""The authorization server provider the MCP SDK's OAuth handlers call: codes, tokens, families.

The SDK's handlers parse requests, check PKCE (S256), redirect URIs, client secrets and
grant types, and write the error bodies; this provider keeps the state behind them
(`OAuthState`). An approved consent creates a *family*: the grant (account, scopes,
project, team, client, resource) that its code and every token issued from it share.
Revoking the family revokes all of them at once, which is what happens when a code is
used twice, when a rotated-away refresh token comes back, and on `/revoke` of either
token. A family is also bound to the digest of the account's sync token the user signed
in with: once that token is rotated, or the account removed (and maybe a new one of the
same name added), no code, access or refresh token of the family works any more. Codes,
access and refresh tokens are random (256 bits) and stored only as digests.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    IdentityAssertionParams,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from memdir.server.accounts import Accounts
from memdir.server.oauth.clients import (
    SCOPES,
    ClientMetadataRefused,
    ClientRefused,
    Clients,
    is_cimd,
)
from memdir.server.oauth.state import Kind, OAuthState

__all__ = ["Code", "Grant", "IssuedAccess", "IssuedRefresh", "MemdirProvider", "new_secret"]

_SECRET_BYTES = 32
#: How long a pending authorization request waits for the consent.
REQUEST_TTL = 600


def new_secret() -> str:
    """A random code or token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(_SECRET_BYTES)


class Code(AuthorizationCode):
    """An authorization code as loaded (with the family its tokens will belong to)."""

    family: str


class IssuedRefresh(RefreshToken):
    """A refresh token as loaded."""

    family: str


class IssuedAccess(AccessToken):
    """An access token as loaded."""

    family: str
    expires_at_clock: int


@dataclass(frozen=True, slots=True)
class Grant:
    """What the family of a valid access token grants (see `OAuthGrant`)."""

    account: str
    scopes: tuple[str, ...]
    project: str | None
    team: str | None
    client_id: str
    resource: str
    expires_at: int


class MemdirProvider:
    """`OAuthAuthorizationServerProvider` over the shared state; `base` is read per request."""

    def __init__(
        self,
        state: OAuthState,
        clients: Clients,
        accounts: Accounts,
        *,
        base: Callable[[], str],
        clock: Callable[[], float],
        access_ttl: int,
        refresh_ttl: int,
        code_ttl: int,
    ) -> None:
        self.state = state
        self.clients = clients
        self.accounts = accounts
        self.base = base
        self.clock = clock
        self.access_ttl = access_ttl
        self.refresh_ttl = refresh_ttl
        self.code_ttl = code_ttl

    @property
    def resource(self) -> str:
        """The protected resource the tokens are for: ``<base>/mcp``."""
        return self.base() + "/mcp"

    async def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(fn, *args)

    def _wall(self, at: float) -> float:
        """`at` (by the injected clock) in wall-clock seconds: the SDK's handlers compare
        expiries with `time.time()`."""
        return time.time() + (at - self.clock())

    # -- clients -------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        """The client, registered or described by its metadata document."""
        return await self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        """Keep a dynamically registered client."""
        try:
            await self.clients.register(client_info)
        except ClientMetadataRefused as exc:
            raise RegistrationError("invalid_client_metadata", str(exc)) from None
        except ClientRefused as exc:
            raise RegistrationError("invalid_redirect_uri", str(exc)) from None

    # -- authorize -----------------------------------------------------------------------

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        """Keep the request pending and send the user to the consent page."""
        if params.resource is not None and params.resource.rstrip("/") != self.resource:
            raise AuthorizeError(
                "invalid_target", f"this server issues tokens for {self.resource} only"
            )
        scopes = params.scopes or (client.scope or " ".join(SCOPES)).split()
        unknown = sorted(set(scopes) - set(SCOPES))
        if unknown:
            raise AuthorizeError("invalid_scope", f"unknown scopes: {' '.join(unknown)}")
        request_id = new_secret()
        fields = {
            "client_id": client.client_id,
            "client_name": client.client_name,
            "from_document": is_cimd(client.client_id),
            "redirect_uri": str(params.redirect_uri),
            "explicit": params.redirect_uri_provided_explicitly,
            "state": params.state,
            "scopes": [s for s in SCOPES if s in scopes],
            "challenge": params.code_challenge,
            "resource": self.resource,
            "csrf": new_secret(),
            "attempts": 0,
            "done": False,
            "expires_at": self.clock() + REQUEST_TTL,
        }
        await self._run(self.state.put, "request", request_id, fields)
        return f"{self.base()}/oauth/consent?request={request_id}"

    async def approve(self, request: dict[str, Any], grant: dict[str, Any]) -> str:
        """Create the family and a single-use code for an approved request; the code.
        `grant` holds the account, its token's digest (``token_sha256``), the scopes,
        project and team."""
        family = new_secret()
        code = new_secret()
        await self._run(
            self.state.put,
            "family",
            family,
            {
                **grant,
                "client_id": request["client_id"],
                "resource": request["resource"],
                # Moved on at each refresh: `OAuthState.prune` deletes it once it is past.
                "expires_at": self.clock() + self.code_ttl,
            },
        )
        fields = {
            "family": family,
            "client_id": request["client_id"],
            "redirect_uri": request["redirect_uri"],
            "explicit": request["explicit"],
            "challenge": request["challenge"],
            "resource": request["resource"],
            "scopes": grant["scopes"],
            "expires_at": self.clock() + self.code_ttl,
            "used": False,
        }
        await self._run(self.state.put, "code", code, fields)
        await self.clients.approved(request["client_id"])
        return code

    # -- codes ---------------------------------------------------------------------------

    async def _live(
        self, kind: Kind, secret: str, client: OAuthClientInformationFull
    ) -> dict[str, Any] | None:
        """The fields of this client's code or refresh token `secret` if it is unused,
        unexpired and its grant stands; one used before revokes its whole family."""
        found = await self._run(self.state.get, kind, secret)
        if found is None or found.fields["client_id"] != client.client_id:
            return None
        fields: dict[str, Any] = found.fields
        if fields.get("used"):
            await self._run(self.state.revoke_family, fields["family"])
            return None
        if float(fields["expires_at"]) <= self.clock():
            return None
        if await self._family(fields["family"]) is None:
            return None
        return fields

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> Code | None:
        """The code if it is unused, unexpired and this client's; a code used before
        revokes every token issued from it."""
        f = await self._live("code", authorization_code, client)
        if f is None:
            return None
        return Code(
            code=authorization_code,
            scopes=f["scopes"],
            expires_at=self._wall(float(f["expires_at"])),
            client_id=f["client_id"],
            code_challenge=f["challenge"],
            redirect_uri=f["redirect_uri"],
            redirect_uri_provided_explicitly=f["explicit"],
            resource=f["resource"],
            family=f["family"],
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: Code
    ) -> OAuthToken:
        """Use the code (once: the swap that marks it used wins on one replica only)."""
        found = await self._run(self.state.get, "code", authorization_code.code)
        if found is None or not await self._run(
            self.state.claim, "code", authorization_code.code, found
        ):
            await self._run(self.state.revoke_family, authorization_code.family)
            raise TokenError("invalid_grant", "the authorization code was used already")
        return await self._issue(authorization_code.family, authorization_code.scopes)

    # -- refresh tokens ------------------------------------------------------------------

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> IssuedRefresh | None:
        """The refresh token if valid; one rotated away already revokes its family."""
        f = await self._live("refresh", refresh_token, client)
        if f is None:
            return None
        return IssuedRefresh(
            token=refresh_token,
            client_id=f["client_id"],
            scopes=f["scopes"],
            expires_at=int(self._wall(float(f["expires_at"]))),
            resource=f["resource"],
            family=f["family"],
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: IssuedRefresh, scopes: list[str]
    ) -> OAuthToken:
        """Rotate: the old refresh token is used up, a new pair is issued."""
        found = await self._run(self.state.get, "refresh", refresh_token.token)
        if found is None or not await self._run(
            self.state.claim, "refresh", refresh_token.token, found
        ):
            await self._run(self.state.revoke_family, refresh_token.family)
            raise TokenError("invalid_grant", "the refresh token was used already")
        return await self._issue(refresh_token.family, scopes, refresh_scopes=refresh_token.scopes)

    # -- access tokens -------------------------------------------------------------------

    async def load_access_token(self, token: str) -> IssuedAccess | None:
        """The access token if valid (unexpired, family not revoked)."""
        found = await self._run(self.state.get, "access", token)
        if found is None:
            return None
        f = found.fields
        if int(f["expires_at"]) <= self.clock() or await self._family(f["family"]) is None:
            return None
        return IssuedAccess(
            token=token,
            client_id=f["client_id"],
            scopes=f["scopes"],
            expires_at=int(self._wall(int(f["expires_at"]))),
            resource=f["resource"],
            family=f["family"],
            expires_at_clock=int(f["expires_at"]),
        )

    async def grant(self, token: str) -> Grant | None:
        """What a valid access token grants, None otherwise."""
        access = await self.load_access_token(token)
        if access is None:
            return None
        f = await self._family(access.family)
        if f is None:
            return None
        return Grant(
            account=f["account"],
            scopes=tuple(access.scopes),
            project=f.get("project"),
            team=f.get("team"),
            client_id=access.client_id,
            resource=access.resource or "",
            expires_at=access.expires_at_clock,
        )

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        """Not offered: this server issues tokens through the consent page only."""
        raise TokenError("unsupported_grant_type", "the JWT bearer grant is not supported")

    async def revoke_token(self, token: IssuedAccess | IssuedRefresh) -> None:
        """Revoke the family of either token (and so both)."""
        await self._run(self.state.revoke_family, token.family)

    # -- helpers -------------------------------------------------------------------------

    async def _family(self, family: str) -> dict[str, Any] | None:
        """The family's grant while it stands: not revoked (nor pruned), and its account's
        sync token still the one the user signed in with at the consent; None otherwise."""
        found = await self._run(self.state.get, "family", family)
        if found is None or found.fields.get("revoked"):
            return None
        bound = found.fields.get("token_sha256")
        current = await self._run(self.accounts.token_digest_of, str(found.fields["account"]))
        if not isinstance(bound, str) or current is None:
            return None
        if not hmac.compare_digest(bound, current):
            return None
        fields: dict[str, Any] = found.fields
        return fields

    async def _issue(
        self, family: str, scopes: list[str], *, refresh_scopes: list[str] | None = None
    ) -> OAuthToken:
        grant = await self._family(family)
        if grant is None:
            raise TokenError("invalid_grant", "the grant was revoked")
        now = self.clock()
        await self._run(self.state.extend, "family", family, now + self.refresh_ttl)
        access, refresh = new_secret(), new_secret()
        common = {"family": family, "client_id": grant["client_id"], "resource": grant["resource"]}
        await self._run(
            self.state.put,
            "access",
            access,
            {**common, "scopes": scopes, "expires_at": int(now + self.access_ttl)},
        )
        await self._run(
            self.state.put,
            "refresh",
            refresh,
            {
                **common,
                "scopes": refresh_scopes if refresh_scopes is not None else scopes,
                "expires_at": int(now + self.refresh_ttl),
                "used": False,
            },
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.access_ttl,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )
