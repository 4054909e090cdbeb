"""Test helper: the official MCP SDK's OAuth client, with the user's consent given by a
script (the consent page fetched, its form filled and posted, as a browser would).

    auth = consenting_client(base, account_token, scopes=("read",), project="p-…")
    async with httpx2.AsyncClient(auth=auth.provider) as http: ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

__all__ = ["REDIRECT", "Consent", "MemoryTokens", "consenting_client", "hidden_fields"]

#: Where the authorization server sends the browser back (nothing listens: the script
#: reads the code from the redirect itself).
REDIRECT = "http://127.0.0.1:9/callback"

_HIDDEN = re.compile(r'<input type="hidden" name="(\w+)" value="([^"]*)">')


def hidden_fields(page: str) -> dict[str, str]:
    """The hidden fields of the consent page's form (the request id and the CSRF value)."""
    return dict(_HIDDEN.findall(page))


class MemoryTokens:
    """The SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@dataclass
class Consent:
    """An SDK OAuth client whose authorizations are approved by the script."""

    provider: OAuthClientProvider
    storage: MemoryTokens
    #: Each consent page seen: its status and text (the last one first).
    pages: list[tuple[int, str]] = field(default_factory=list)


def consenting_client(
    base: str,
    account_token: str,
    *,
    scopes: tuple[str, ...] = ("read", "write", "delete"),
    project: str | None = None,
    team: str | None = None,
    client_metadata_url: str | None = None,
    name: str = "test agent",
) -> Consent:
    """An OAuth client for `base`/mcp whose user signs in with `account_token` and
    approves `scopes` (and `project`, `team`) on the consent page."""
    results: list[AuthorizationCodeResult] = []
    storage = MemoryTokens()

    async def redirect_handler(url: str) -> None:
        async with httpx.AsyncClient(timeout=30, follow_redirects=False) as http:
            answer = await http.get(url)
            assert answer.status_code == 302, answer.text
            page = await http.get(base + answer.headers["location"].removeprefix(base))
            consent.pages.insert(0, (page.status_code, page.text))
            body: dict[str, Any] = {
                **hidden_fields(page.text),
                "token": account_token,
                "action": "approve",
                "scope": list(scopes),
            }
            if project is not None:
                body["project"] = project
            if team is not None:
                body["team"] = team
            done = await http.post(base + "/oauth/consent", data=body)
            if done.status_code != 303:
                consent.pages.insert(0, (done.status_code, done.text))
                raise AssertionError(f"consent refused ({done.status_code}): {done.text[:500]}")
        query = parse_qs(urlsplit(done.headers["location"]).query)
        params = {k: v[0] for k, v in query.items()}
        results.append(
            AuthorizationCodeResult(code=params["code"], state=params["state"], iss=params["iss"])
        )

    async def callback_handler() -> AuthorizationCodeResult:
        return results.pop()

    provider = OAuthClientProvider(
        server_url=base + "/mcp",
        client_metadata=OAuthClientMetadata(
            redirect_uris=[REDIRECT],  # type: ignore[list-item]
            client_name=name,
            token_endpoint_auth_method="none",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_metadata_url,
    )
    consent = Consent(provider, storage)
    return consent
