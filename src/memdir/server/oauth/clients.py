"""OAuth clients: redirect URI rules, registered clients, and client ID metadata documents.

A client is either registered dynamically (RFC 7591; kept as an entry of the state) or
names itself by an https URL, its client ID metadata document (CIMD), which is fetched
here: no redirects followed, a 5 s timeout, at most 64 KiB, TLS verified (against the
CA file named by ``SSL_CERT_FILE`` when set, else the system's) for the URL's host name,
and only from a host that resolves to public addresses unless private clients are
allowed. The host is resolved once and the connection made to the address vetted (the
name goes in ``Host`` and in TLS SNI), so a DNS answer that changes in between
(rebinding) cannot send the request elsewhere. A fetched document is cached in the state
for its ``Cache-Control: max-age`` (at most 24 h, 1 h by default), so every replica
reuses it. A client's name and redirect URIs are limited in length and number
(`check_metadata`), registered or fetched alike.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import re
import socket
import ssl
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import httpx
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import ValidationError

from memdir.server.oauth.state import OAuthState

__all__ = [
    "SCOPES",
    "ClientMetadataRefused",
    "ClientRefused",
    "Clients",
    "check_metadata",
    "check_redirect_uris",
    "is_cimd",
    "origin_of",
]

log = logging.getLogger(__name__)

#: The scopes of the MCP endpoint (delete needs write, write needs read).
SCOPES = ("read", "write", "delete")

_TIMEOUT = 5.0
_MAX_BODY = 64 * 1024
_DEFAULT_TTL = 3600
_MAX_TTL = 24 * 3600
_LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
#: Limits of a client's metadata (registered or fetched).
MAX_NAME = 200
MAX_REDIRECT_URIS = 10
MAX_REDIRECT_URI = 2000
#: The whole registered metadata, as stored (the other fields: URIs, contacts, ...).
_MAX_STORED = 16 * 1024
#: NAT64 prefixes (RFC 6052 well-known, RFC 8215 local use).
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)\"?\s*(?:,|$)", re.IGNORECASE)


class ClientRefused(Exception):
    """Raised when a client (its metadata document or registration) is refused; the message
    says why, for the person who set the client up."""


class ClientMetadataRefused(ClientRefused):
    """A client's metadata is too large (``invalid_client_metadata`` at registration)."""


def is_cimd(client_id: str) -> bool:
    """Whether `client_id` names a client ID metadata document (an https URL)."""
    return client_id.startswith("https://")


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of `url`."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def check_redirect_uris(uris: list[str]) -> None:
    """Refuse redirect URIs other than https ones and http ones on loopback; none at all."""
    if not uris:
        raise ClientRefused("a client needs at least one redirect URI")
    for uri in uris:
        parts = urlsplit(uri)
        if parts.fragment:
            raise ClientRefused(f"redirect URI {uri!r} has a fragment")
        if parts.scheme == "https" and parts.hostname:
            continue
        if parts.scheme == "http" and parts.hostname in _LOOPBACK_HOSTS:
            continue
        raise ClientRefused(
            f"redirect URI {uri!r} is refused: only https URIs, or http on loopback "
            "(127.0.0.1, [::1], localhost), are allowed"
        )


def check_metadata(name: object, uris: list[str]) -> None:
    """Refuse a client name longer than `MAX_NAME` characters, more than
    `MAX_REDIRECT_URIS` redirect URIs, or one longer than `MAX_REDIRECT_URI`."""
    if isinstance(name, str) and len(name) > MAX_NAME:
        raise ClientMetadataRefused(f"client_name is longer than {MAX_NAME} characters")
    if len(uris) > MAX_REDIRECT_URIS:
        raise ClientMetadataRefused(f"a client may have at most {MAX_REDIRECT_URIS} redirect URIs")
    if any(len(uri) > MAX_REDIRECT_URI for uri in uris):
        raise ClientMetadataRefused(f"a redirect URI is longer than {MAX_REDIRECT_URI} characters")


def _ssl_context() -> ssl.SSLContext:
    """TLS verification against ``SSL_CERT_FILE`` when set, else the system's CAs."""
    cafile = os.environ.get("SSL_CERT_FILE") or None
    return ssl.create_default_context(cafile=cafile)


def refused_address(address: str) -> bool:
    """Whether the server refuses to fetch from `address`: anything not global, and IPv6
    addresses that wrap such an IPv4 address (IPv4-mapped or -compatible, 6to4, NAT64)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _NAT64_LOCAL:
            return True
        wrapped = ip.ipv4_mapped or ip.sixtofour
        if wrapped is None and (ip in _NAT64 or int(ip) >> 32 == 0):
            # NAT64 (64:ff9b::a.b.c.d) and IPv4-compatible (::a.b.c.d, also :: and ::1).
            wrapped = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if wrapped is not None and _refused_ip(wrapped):
            return True
    return _refused_ip(ip)


def _refused_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or not ip.is_global
    )


def _max_age(cache_control: str | None) -> int:
    if not cache_control:
        return _DEFAULT_TTL
    if "no-store" in cache_control.lower() or "no-cache" in cache_control.lower():
        return 0
    found = _MAX_AGE.search(cache_control)
    return _DEFAULT_TTL if found is None else min(int(found.group(1)), _MAX_TTL)


def _check_document_url(url: str) -> str:
    """The host of a metadata document URL, or ClientRefused."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise ClientRefused(f"client_id {url!r} is not an https URL")
    if parts.path in ("", "/") or parts.fragment or parts.username or parts.password:
        raise ClientRefused(
            f"client_id {url!r} must be an https URL with a path and no fragment or credentials"
        )
    return parts.hostname


class Clients:
    """Registered clients and fetched metadata documents, kept in `state`."""

    def __init__(
        self, state: OAuthState, *, allow_private: bool, clock: Callable[[], float]
    ) -> None:
        self.state = state
        self.allow_private = allow_private
        self.clock = clock
        self._ssl = _ssl_context()

    async def get(self, client_id: str) -> OAuthClientInformationFull | None:
        """The client, None when unknown or its metadata document cannot be had."""
        try:
            return await self.resolve(client_id)
        except ClientRefused:
            return None

    async def resolve(self, client_id: str) -> OAuthClientInformationFull | None:
        """The client; None when no such client was registered; ClientRefused (with the
        reason) when its metadata document cannot be fetched or is not acceptable."""
        if is_cimd(client_id):
            return await self._document(client_id)
        found = await anyio.to_thread.run_sync(self.state.get, "client", client_id)
        if found is None:
            return None
        return OAuthClientInformationFull.model_validate(found.fields["info"])

    async def register(self, info: OAuthClientInformationFull) -> None:
        """Keep a dynamically registered client (its metadata checked first)."""
        uris = [str(u) for u in info.redirect_uris or []]
        check_metadata(info.client_name, uris)
        check_redirect_uris(uris)
        dumped = info.model_dump(mode="json", exclude_none=True)
        if len(json.dumps(dumped)) > _MAX_STORED:
            raise ClientMetadataRefused(
                f"the client's metadata is larger than {_MAX_STORED // 1024} KiB"
            )
        # Deleted by `OAuthState.prune` unless approved within a day (see `Clients.approved`).
        fields = {"info": dumped, "created_at": self.clock(), "approved": False}
        stored = await anyio.to_thread.run_sync(self.state.put, "client", info.client_id, fields)
        if not stored:
            raise ClientRefused("a client with this id exists")

    async def approved(self, client_id: str) -> None:
        """Note that a registered client was approved once (it is then kept)."""
        if not is_cimd(client_id):
            await anyio.to_thread.run_sync(
                self.state.update, "client", client_id, {"approved": True}
            )

    async def _document(self, url: str) -> OAuthClientInformationFull:
        cached = await anyio.to_thread.run_sync(self.state.get, "cimd", url)
        if cached is not None and float(cached.fields["expires_at"]) > self.clock():
            return OAuthClientInformationFull.model_validate(cached.fields["info"])
        info, ttl = await self._fetch(url)
        if ttl > 0:
            fields = {
                "info": info.model_dump(mode="json", exclude_none=True),
                "expires_at": self.clock() + ttl,
            }
            await anyio.to_thread.run_sync(self.state.store_latest, "cimd", url, fields)
        return info

    async def _addresses(self, host: str, port: int) -> list[str]:
        """The addresses to connect to for `host`, resolved once; every one is checked
        (unless private clients are allowed), and they are tried in turn."""
        try:
            found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            raise ClientRefused(f"the client's host {host!r} does not resolve") from None
        addresses = [str(address[0]) for _f, _t, _p, _n, address in found]
        if not addresses:
            raise ClientRefused(f"the client's host {host!r} does not resolve")
        if not self.allow_private:
            for address in addresses:
                if refused_address(address):
                    raise ClientRefused(
                        f"the client metadata document's host {host!r} resolves to a private, "
                        f"loopback or link-local address ({address}); this server does not "
                        "fetch from those (the operator can allow private clients)"
                    )
        return list(dict.fromkeys(a.split("%", 1)[0] for a in addresses))

    async def _fetch(self, url: str) -> tuple[OAuthClientInformationFull, int]:
        """Fetch and check the metadata document at `url`; (client, seconds to cache it).
        The connection goes to the address `_address` vetted, never to a second lookup's."""
        host = _check_document_url(url)
        parts = urlsplit(url)
        addresses = await self._addresses(host, parts.port or 443)
        for n, address in enumerate(addresses):
            try:
                return await self._fetch_from(url, host, address)
            except httpx.ConnectError as exc:  # the next vetted address, if any
                log.info("the client metadata host %s at %s: %r", host, address, exc)
                if n + 1 == len(addresses):
                    raise ClientRefused(
                        f"the client metadata document at {url} could not be fetched"
                    ) from None
        raise ClientRefused(f"the client's host {host!r} does not resolve")

    async def _fetch_from(
        self, url: str, host: str, address: str
    ) -> tuple[OAuthClientInformationFull, int]:
        """Fetch `url` from `address` (TLS checked for `host`); ConnectError when nothing
        answers there, ClientRefused for anything else that goes wrong."""
        parts = urlsplit(url)
        target = httpx.URL(url).copy_with(host=address)
        headers = {"Accept": "application/json", "Host": parts.netloc}
        body = bytearray()
        try:
            async with (
                httpx.AsyncClient(
                    verify=self._ssl, trust_env=False, follow_redirects=False, timeout=_TIMEOUT
                ) as http,
                http.stream(
                    "GET", target, headers=headers, extensions={"sni_hostname": host}
                ) as answer,
            ):
                if answer.status_code != 200:
                    raise ClientRefused(
                        f"the client metadata document at {url} answered HTTP "
                        f"{answer.status_code} (redirects are not followed)"
                    )
                async for chunk in answer.aiter_bytes():
                    body.extend(chunk)
                    if len(body) > _MAX_BODY:
                        raise ClientRefused(
                            f"the client metadata document at {url} is larger than 64 KiB"
                        )
                cache_control = answer.headers.get("Cache-Control")
        except httpx.ConnectError:
            raise
        except httpx.HTTPError as exc:
            # The reason stays in the log: told to the client, it would say what answers
            # (or not) where, a probe of the network this server sits in.
            log.info("the client metadata document at %s could not be fetched: %r", url, exc)
            raise ClientRefused(
                f"the client metadata document at {url} could not be fetched"
            ) from None
        return client_of(url, bytes(body)), _max_age(cache_control)


def client_of(url: str, body: bytes) -> OAuthClientInformationFull:
    """The client a fetched metadata document describes, or ClientRefused."""
    try:
        doc: Any = json.loads(body)
    except ValueError:
        raise ClientRefused(f"the client metadata document at {url} is not JSON") from None
    if not isinstance(doc, dict):
        raise ClientRefused(f"the client metadata document at {url} is not a JSON object")
    if doc.get("client_id") != url:
        raise ClientRefused(
            f"the client metadata document at {url} names another client_id "
            f"({str(doc.get('client_id'))[:200]!r}); it must be its own URL"
        )
    uris = doc.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise ClientRefused(f"the client metadata document at {url} lists no redirect_uris")
    name = doc.get("client_name")
    try:
        check_metadata(name, uris)
    except ClientMetadataRefused as exc:
        raise ClientRefused(f"the client metadata document at {url} is refused: {exc}") from None
    check_redirect_uris(uris)
    method = doc.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise ClientRefused(
            f"the client metadata document at {url} asks for token_endpoint_auth_method "
            f"{method!r}; this server supports only public ('none') metadata-document clients"
        )
    try:
        return OAuthClientInformationFull(
            client_id=url,
            client_name=name if isinstance(name, str) else None,
            redirect_uris=uris,
            token_endpoint_auth_method="none",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=" ".join(SCOPES),
        )
    except ValidationError as exc:
        raise ClientRefused(
            f"the client metadata document at {url} is not valid: {exc.errors()[0]['msg']}"
        ) from None
