"""The OAuth authorization server of the remote MCP endpoint, served for real on loopback."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import httpx2
import pytest
import uvicorn
from hypothesis import given
from hypothesis import strategies as st
from mcp.shared.auth import OAuthClientInformationFull
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memdir.server.accounts import Accounts
from memdir.server.oauth import SCOPES, OAuthServer, client_network
from memdir.server.oauth.consent import MAX_ATTEMPTS, close_scopes
from memdir.server.rules import SyncRules
from memdir.server.storage.base import Storage
from memdir.server.storage.directory import DirectoryStorage
from memdir.sync.protocol import Quotas, TeamChange
from oauth_client import REDIRECT, consenting_client, hidden_fields
from tls_loopback import https_documents

PROJECT = "proj-0123456789"


class Clock:
    """A clock the test moves on."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@dataclass
class Running:
    base: str
    oauth: OAuthServer
    clock: Clock
    tokens: dict[str, str]
    http: httpx.Client
    _server: uvicorn.Server = field(repr=False)
    _thread: threading.Thread = field(repr=False)


def _serve(
    storage: Storage, data: Path, *, allow_private: bool = True, **options: Any
) -> tuple[Running, uvicorn.Server, threading.Thread]:
    accounts = Accounts(data)
    tokens = {name: accounts.add_user(name) for name in ("olga", "rita")}
    rules = SyncRules(storage, Quotas(), known_user=accounts.exists)
    created = rules.teams.create("olga", "acme")
    rules.teams.change(
        "olga",
        "acme",
        TeamChange(action="add", member="rita", role="reader", parent=created.head),
    )
    clock = Clock()
    oauth = OAuthServer(
        storage=storage,
        data_dir=data,
        accounts=accounts,
        teams=rules.teams,
        allow_private_clients=allow_private,
        clock=clock,
        **options,
    )

    async def mcp(request: Request) -> Response:
        header = request.headers.get("Authorization", "")
        grant = await oauth.verify(header.removeprefix("Bearer "))
        if grant is None:
            return Response(status_code=401, headers={"WWW-Authenticate": oauth.challenge()})
        return JSONResponse({"account": grant.account, "scopes": sorted(grant.scopes)})

    app = Starlette(routes=[*oauth.routes(), Route("/mcp", mcp, methods=["GET", "POST"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    oauth.base_url = base
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    http = httpx.Client(base_url=base, timeout=30, follow_redirects=False)
    return Running(base, oauth, clock, tokens, http, server, thread), server, thread


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[Any]:
    started: list[tuple[Running, uvicorn.Server, threading.Thread]] = []

    def make(
        storage: Storage | None = None, *, allow_private: bool = True, **options: Any
    ) -> Running:
        data = tmp_path / f"server{len(started)}"
        data.mkdir()
        running = _serve(
            storage or DirectoryStorage(data), data, allow_private=allow_private, **options
        )
        started.append(running)
        return running[0]

    yield make
    for running, server, thread in started:
        running.http.close()
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def srv(make_server: Any) -> Running:
    made: Running = make_server()
    return made


# -- helpers -------------------------------------------------------------------------------


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.decode().rstrip("=")


def register(srv: Running, redirect: str = REDIRECT, **extra: Any) -> str:
    answer = srv.http.post(
        "/register",
        json={"redirect_uris": [redirect], "token_endpoint_auth_method": "none", **extra},
    )
    assert answer.status_code == 201, answer.text
    client_id: str = answer.json()["client_id"]
    return client_id


def authorize(srv: Running, client_id: str, challenge: str, **params: str) -> httpx.Response:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st-1",
        "scope": "read write delete",
        "resource": srv.base + "/mcp",
        **params,
    }
    return srv.http.get("/authorize", params=query)


def consent_form(srv: Running, location: str) -> dict[str, str]:
    page = srv.http.get(location)
    assert page.status_code == 200, page.text
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert page.headers["Cache-Control"] == "no-store"
    assert "samesite=strict" in page.headers["set-cookie"].lower()
    hidden = hidden_fields(page.text)
    assert set(hidden) == {"request", "csrf"}
    return hidden


def post_consent(
    srv: Running,
    form: dict[str, str],
    *,
    token: str,
    scopes: tuple[str, ...] = SCOPES,
    action: str = "approve",
    **fields: str,
) -> httpx.Response:
    body: dict[str, Any] = {**form, "token": token, "action": action, **fields}
    body["scope"] = list(scopes)
    return srv.http.post("/oauth/consent", data=body)


def redirected(answer: httpx.Response) -> dict[str, str]:
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    assert location.startswith(REDIRECT + "?")
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def get_code(srv: Running, client_id: str, challenge: str, **fields: str) -> str:
    answer = authorize(srv, client_id, challenge)
    assert answer.status_code == 302, answer.text
    form = consent_form(srv, answer.headers["location"])
    params = redirected(post_consent(srv, form, token=srv.tokens["olga"], **fields))
    assert params["state"] == "st-1" and params["iss"] == srv.base
    return params["code"]


def token(srv: Running, **form: str) -> httpx.Response:
    return srv.http.post("/token", data=form)


def redeem(srv: Running, client_id: str, code: str, verifier: str) -> httpx.Response:
    return token(
        srv,
        grant_type="authorization_code",
        client_id=client_id,
        code=code,
        code_verifier=verifier,
        redirect_uri=REDIRECT,
        resource=srv.base + "/mcp",
    )


def refresh(srv: Running, client_id: str, refresh_token: str) -> httpx.Response:
    return token(srv, grant_type="refresh_token", client_id=client_id, refresh_token=refresh_token)


def verify(srv: Running, access: str) -> Any:
    return anyio.run(srv.oauth.verify, access)


def tokens_for(srv: Running, **fields: str) -> tuple[str, dict[str, Any]]:
    client_id = register(srv)
    verifier, challenge = pkce()
    answer = redeem(srv, client_id, get_code(srv, client_id, challenge, **fields), verifier)
    assert answer.status_code == 200, answer.text
    return client_id, answer.json()


# -- metadata ------------------------------------------------------------------------------


def test_metadata_documents(srv: Running) -> None:
    prm = srv.http.get("/.well-known/oauth-protected-resource/mcp").json()
    assert prm["resource"] == srv.base + "/mcp"
    assert prm["authorization_servers"] == [srv.base]
    assert prm["scopes_supported"] == list(SCOPES)
    asm = srv.http.get("/.well-known/oauth-authorization-server").json()
    assert asm["issuer"] == srv.base
    assert asm["response_types_supported"] == ["code"]
    assert asm["code_challenge_methods_supported"] == ["S256"]
    assert asm["client_id_metadata_document_supported"] is True
    assert asm["authorization_response_iss_parameter_supported"] is True
    assert "none" in asm["token_endpoint_auth_methods_supported"]
    assert asm["registration_endpoint"] == srv.base + "/register"
    assert asm["revocation_endpoint"] == srv.base + "/revoke"
    challenge = srv.oauth.challenge("invalid_token", 'bad "one"')
    assert f'resource_metadata="{srv.base}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert 'scope="read write delete"' in challenge
    assert 'error="invalid_token", error_description="bad one"' in challenge


# -- the code flow -------------------------------------------------------------------------


def test_full_flow_refresh_rotation_and_reuse(srv: Running) -> None:
    client_id, issued = tokens_for(srv, project=PROJECT)
    assert len(issued["access_token"]) >= 43 and issued["expires_in"] == 3600
    grant = verify(srv, issued["access_token"])
    assert grant is not None and grant.account == "olga" and grant.project == PROJECT
    assert grant.scopes == frozenset(SCOPES) and grant.team is None
    assert grant.resource == srv.base + "/mcp" and grant.client_id == client_id

    rotated = refresh(srv, client_id, issued["refresh_token"])
    assert rotated.status_code == 200, rotated.text
    new = rotated.json()
    assert new["refresh_token"] != issued["refresh_token"]
    assert verify(srv, new["access_token"]) is not None
    # The old refresh token comes back: refused, and the whole family is revoked.
    again = refresh(srv, client_id, issued["refresh_token"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert verify(srv, new["access_token"]) is None
    assert refresh(srv, client_id, new["refresh_token"]).status_code == 400


def test_code_reuse_fails_and_revokes(srv: Running) -> None:
    client_id = register(srv)
    verifier, challenge = pkce()
    code = get_code(srv, client_id, challenge)
    first = redeem(srv, client_id, code, verifier)
    assert first.status_code == 200
    second = redeem(srv, client_id, code, verifier)
    assert second.status_code == 400 and second.json()["error"] == "invalid_grant"
    assert verify(srv, first.json()["access_token"]) is None
    assert refresh(srv, client_id, first.json()["refresh_token"]).status_code == 400


def test_wrong_pkce_verifier(srv: Running) -> None:
    client_id = register(srv)
    challenge = pkce()[1]
    code = get_code(srv, client_id, challenge)
    answer = redeem(srv, client_id, code, pkce()[0])
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"


def test_unregistered_redirect_uri_is_not_redirected_to(srv: Running) -> None:
    client_id = register(srv)
    answer = authorize(srv, client_id, pkce()[1], redirect_uri="http://127.0.0.1:9/evil")
    assert answer.status_code == 400 and "location" not in answer.headers
    assert answer.json()["error"] == "invalid_request"


def test_registration_refuses_remote_http_redirects(srv: Running) -> None:
    answer = srv.http.post(
        "/register",
        json={"redirect_uris": ["http://example.com/cb"], "token_endpoint_auth_method": "none"},
    )
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_redirect_uri"


def test_resource_of_another_server(srv: Running) -> None:
    client_id = register(srv)
    answer = authorize(srv, client_id, pkce()[1], resource="https://other.example/mcp")
    params = {k: v[0] for k, v in parse_qs(urlsplit(answer.headers["location"]).query).items()}
    assert answer.headers["location"].startswith(REDIRECT)
    assert params["error"] == "invalid_target" and params["state"] == "st-1"


def test_access_token_expires(srv: Running) -> None:
    _, issued = tokens_for(srv)
    assert verify(srv, issued["access_token"]) is not None
    srv.clock.now += 3601
    assert verify(srv, issued["access_token"]) is None
    assert verify(srv, "not-a-token") is None


def test_revoked_token(srv: Running) -> None:
    client_id, issued = tokens_for(srv)
    answer = srv.http.post(
        "/revoke",
        data={"token": issued["refresh_token"], "client_id": client_id, "client_secret": ""},
    )
    assert answer.status_code == 200
    assert verify(srv, issued["access_token"]) is None
    assert refresh(srv, client_id, issued["refresh_token"]).status_code == 400


def test_deny(srv: Running) -> None:
    client_id = register(srv)
    answer = authorize(srv, client_id, pkce()[1])
    form = consent_form(srv, answer.headers["location"])
    params = redirected(post_consent(srv, form, token="", action="deny"))
    assert params == {
        "error": "access_denied",
        "error_description": params["error_description"],
        "state": "st-1",
        "iss": srv.base,
    }


# -- the consent page ----------------------------------------------------------------------


def test_wrong_account_token_shows_the_page_again(srv: Running) -> None:
    client_id = register(srv)
    answer = authorize(srv, client_id, pkce()[1])
    form = consent_form(srv, answer.headers["location"])
    wrong = post_consent(srv, form, token="x" * 43)
    assert wrong.status_code == 400 and "location" not in wrong.headers
    assert "That token was not accepted" in wrong.text and 'name="csrf"' in wrong.text
    assert "code=" not in wrong.text
    params = redirected(post_consent(srv, form, token=srv.tokens["olga"]))
    assert "code" in params


def test_csrf_missing_or_wrong(srv: Running) -> None:
    client_id = register(srv)
    answer = authorize(srv, client_id, pkce()[1])
    form = consent_form(srv, answer.headers["location"])
    missing = post_consent(srv, {"request": form["request"]}, token=srv.tokens["olga"])
    assert missing.status_code == 403
    forged = post_consent(srv, {**form, "csrf": "x" * 43}, token=srv.tokens["olga"])
    assert forged.status_code == 403
    srv.http.cookies.clear()
    no_cookie = post_consent(srv, form, token=srv.tokens["olga"])
    assert no_cookie.status_code == 403


def test_consent_attempts_are_limited(srv: Running) -> None:
    client_id = register(srv)
    answer = authorize(srv, client_id, pkce()[1])
    form = consent_form(srv, answer.headers["location"])
    for _ in range(MAX_ATTEMPTS):
        assert post_consent(srv, form, token="wrong").status_code == 400
    dead = post_consent(srv, form, token=srv.tokens["olga"])
    assert dead.status_code == 400 and "location" not in dead.headers
    assert srv.http.get(answer.headers["location"]).status_code == 400


def test_scopes_narrowed_and_closed(srv: Running) -> None:
    client_id = register(srv)
    verifier, challenge = pkce()
    answer = authorize(srv, client_id, challenge)
    form = consent_form(srv, answer.headers["location"])
    code = redirected(post_consent(srv, form, token=srv.tokens["olga"], scopes=("write",)))["code"]
    issued = redeem(srv, client_id, code, verifier).json()
    assert issued["scope"] == "read write"
    assert verify(srv, issued["access_token"]).scopes == {"read", "write"}


def test_team_reader_asking_write_is_refused(srv: Running) -> None:
    client_id = register(srv)
    verifier, challenge = pkce()
    answer = authorize(srv, client_id, challenge)
    form = consent_form(srv, answer.headers["location"])
    rita = srv.tokens["rita"]
    refused = post_consent(srv, form, token=rita, project=PROJECT, team="acme")
    assert refused.status_code == 400 and "readers cannot write" in refused.text
    stranger = post_consent(srv, form, token=rita, project=PROJECT, team="other")
    assert stranger.status_code == 400 and "other" in stranger.text
    params = redirected(
        post_consent(srv, form, token=rita, scopes=("read",), project=PROJECT, team="acme")
    )
    grant = verify(srv, redeem(srv, client_id, params["code"], verifier).json()["access_token"])
    assert grant.team == "acme" and grant.scopes == {"read"} and grant.account == "rita"


def test_bad_project_id(srv: Running) -> None:
    client_id = register(srv)
    answer = authorize(srv, client_id, pkce()[1])
    form = consent_form(srv, answer.headers["location"])
    bad = post_consent(srv, form, token=srv.tokens["olga"], project="no/good")
    assert bad.status_code == 400 and "project id" in bad.text


@given(st.sets(st.sampled_from([*SCOPES, "admin", ""])))
def test_close_scopes(chosen: set[str]) -> None:
    closed = close_scopes(chosen)
    assert set(closed) <= set(SCOPES) and list(closed) == [s for s in SCOPES if s in closed]
    assert ("delete" not in closed or "write" in closed) and (
        "write" not in closed or "read" in closed
    )
    assert set(chosen) & set(SCOPES) <= set(closed)


# -- client ID metadata documents ----------------------------------------------------------


def cimd(url: str, client_id: str | None = None) -> bytes:
    doc = {"client_id": client_id or url, "client_name": "Test Agent", "redirect_uris": [REDIRECT]}
    return json.dumps(doc).encode()


def test_cimd_client(make_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with https_documents(tmp_path) as site:
        monkeypatch.setenv("SSL_CERT_FILE", str(site.ca_file))
        url = site.url("/client.json")
        site.documents["/client.json"] = (cimd(url), {"Cache-Control": "max-age=60"})
        site.documents["/liar.json"] = (cimd(url, "https://elsewhere.example/c"), {})
        srv = make_server()
        verifier, challenge = pkce()
        answer = authorize(srv, url, challenge)
        assert answer.status_code == 302, answer.text
        page = srv.http.get(answer.headers["location"])
        assert "Test Agent" in page.text and "metadata published at 127.0.0.1" in page.text
        code = get_code(srv, url, challenge)
        issued = redeem(srv, url, code, verifier)
        assert issued.status_code == 200, issued.text
        assert site.hits.count("/client.json") == 1  # cached
        liar = authorize(srv, site.url("/liar.json"), challenge)
        assert (
            liar.status_code == 400
            and "names another client_id" in liar.json()["error_description"]
        )
        private = make_server(allow_private=False)
        refused = authorize(private, url, challenge)
        assert refused.status_code == 400
        assert "loopback" in refused.json()["error_description"]


# -- the SDK's own client ------------------------------------------------------------------


def sdk_client_flow(srv: Running, client_metadata_url: str | None) -> OAuthClientInformationFull:
    consent = consenting_client(
        srv.base, srv.tokens["olga"], name="SDK client", client_metadata_url=client_metadata_url
    )

    async def run() -> Any:
        async with httpx2.AsyncClient(auth=consent.provider, timeout=30) as http:
            answer = await http.get(srv.base + "/mcp")
            assert answer.status_code == 200, answer.text
            return answer.json()

    assert anyio.run(run) == {"account": "olga", "scopes": sorted(SCOPES)}
    assert consent.storage.client is not None
    return consent.storage.client


def test_sdk_client_with_dynamic_registration(srv: Running) -> None:
    client = sdk_client_flow(srv, None)
    assert not client.client_id.startswith("https://")


def test_sdk_client_with_metadata_document(
    make_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with https_documents(tmp_path) as site:
        monkeypatch.setenv("SSL_CERT_FILE", str(site.ca_file))
        url = site.url("/sdk-client.json")
        site.documents["/sdk-client.json"] = (cimd(url), {})
        srv = make_server()
        client = sdk_client_flow(srv, url)
        assert client.client_id == url and "/sdk-client.json" in site.hits


# -- PostgreSQL ----------------------------------------------------------------------------


def test_full_flow_over_postgres(make_server: Any, pg_database_dsn: str) -> None:
    from memdir.server.storage.postgres import PostgresStorage

    storage = PostgresStorage(pg_database_dsn)
    try:
        srv = make_server(storage)
        client_id, issued = tokens_for(srv, project=PROJECT)
        assert verify(srv, issued["access_token"]).account == "olga"
        rotated = refresh(srv, client_id, issued["refresh_token"])
        assert rotated.status_code == 200
        assert refresh(srv, client_id, issued["refresh_token"]).status_code == 400
        assert verify(srv, rotated.json()["access_token"]) is None
    finally:
        storage.close()


# -- grants end with the account's token ------------------------------------------------


def test_rotating_or_reissuing_the_account_token_ends_its_grants(srv: Running) -> None:
    accounts = srv.oauth.provider.accounts
    client_id, issued = tokens_for(srv)
    assert verify(srv, issued["access_token"]) is not None
    srv.tokens["olga"] = accounts.add_user("olga", rotate=True)  # the old token leaked
    assert verify(srv, issued["access_token"]) is None
    assert refresh(srv, client_id, issued["refresh_token"]).json()["error"] == "invalid_grant"

    client_id, issued = tokens_for(srv)  # approved with the new token: works
    assert verify(srv, issued["access_token"]).account == "olga"
    accounts.remove_user("olga")
    accounts.add_user("olga")  # the name given to someone else
    assert verify(srv, issued["access_token"]) is None
    assert refresh(srv, client_id, issued["refresh_token"]).status_code == 400


# -- client metadata documents: the address vetted is the one connected to ----------------


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("93.184.216.34", False),
        ("2606:4700::1111", False),
        ("2002:808:808::1", False),  # 6to4 of a public address
        ("10.1.2.3", True),
        ("::ffff:10.0.0.1", True),
        ("::127.0.0.1", True),  # IPv4-compatible
        ("2002:7f00:1::1", True),  # 6to4 of 127.0.0.1
        ("2002:c0a8:101::", True),  # 6to4 of 192.168.1.1
        ("64:ff9b::7f00:1", True),  # NAT64 of 127.0.0.1
        ("64:ff9b::a9fe:a9fe", True),  # NAT64 of 169.254.169.254
        ("64:ff9b:1::a00:1", True),  # local-use NAT64
    ],
)
def test_refused_addresses(address: str, refused: bool) -> None:
    from memdir.server.oauth.clients import refused_address

    assert refused_address(address) is refused


def test_a_metadata_document_is_fetched_from_the_address_vetted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host is resolved once: a second answer (DNS rebinding) is never connected to;
    TLS is checked for the URL's name, which goes in SNI and Host; failures say no more."""
    from memdir.server.oauth import clients as module
    from memdir.server.oauth.clients import ClientRefused, Clients
    from memdir.server.oauth.state import DirectoryDocuments, OAuthState

    # Only 127.0.0.1 (where the site listens) passes the check, as a public address would.
    monkeypatch.setattr(module, "refused_address", lambda address: address != "127.0.0.1")

    real = socket.getaddrinfo
    asked: list[str] = []

    def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name in ("localhost", "other.test"):
            asked.append(name)  # first the vetted address, then a refused, unroutable one
            host = "127.0.0.1" if asked.count(name) == 1 else "192.0.2.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    with https_documents(tmp_path) as site:
        monkeypatch.setenv("SSL_CERT_FILE", str(site.ca_file))
        url = f"https://localhost:{site.port}/client.json"
        site.documents["/client.json"] = (cimd(url), {"Cache-Control": "no-store"})
        state = OAuthState(DirectoryDocuments(tmp_path / "state"))
        clients = Clients(state, allow_private=False, clock=time.time)
        client = anyio.run(clients.resolve, url)
        assert client is not None and client.client_id == url
        assert asked == ["localhost"]
        assert site.hosts == [f"localhost:{site.port}"] and site.sni == ["localhost"]

        other = f"https://other.test:{site.port}/client.json"  # not in the certificate
        site.documents["/other.json"] = (cimd(other), {})
        with pytest.raises(ClientRefused) as refused:
            anyio.run(clients.resolve, other)
        assert str(refused.value) == f"the client metadata document at {other} could not be fetched"

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: the connection is refused
    port = closed.getsockname()[1]
    with pytest.raises(ClientRefused) as probe:
        anyio.run(clients.resolve, f"https://127.0.0.1:{port}/client.json")
    closed.close()
    assert str(probe.value).endswith("could not be fetched")  # no errno, no "refused"


def test_each_vetted_address_is_tried_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first address where nothing answers (an AAAA record without IPv6 routing) does
    not stop the fetch: the next vetted address is tried, pinned the same way."""
    from memdir.server.oauth import clients as module
    from memdir.server.oauth.clients import Clients
    from memdir.server.oauth.state import DirectoryDocuments, OAuthState

    monkeypatch.setattr(module, "refused_address", lambda address: False)
    real = socket.getaddrinfo
    dead = socket.socket()
    dead.bind(("127.0.0.2", 0))  # bound, never listening: nothing answers there

    def resolve(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name == "localhost":
            return real("127.0.0.2", port, *args, **kwargs) + real(
                "127.0.0.1", port, *args, **kwargs
            )
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    try:
        with https_documents(tmp_path) as site:
            monkeypatch.setenv("SSL_CERT_FILE", str(site.ca_file))
            url = f"https://localhost:{site.port}/client.json"
            site.documents["/client.json"] = (cimd(url), {"Cache-Control": "no-store"})
            clients = Clients(
                OAuthState(DirectoryDocuments(tmp_path / "state")),
                allow_private=False,
                clock=time.time,
            )
            client = anyio.run(clients.resolve, url)
            assert client is not None and client.client_id == url
            assert site.sni == ["localhost"]
    finally:
        dead.close()


# -- limits: metadata sizes, request rates -------------------------------------------------


def test_client_metadata_is_limited(srv: Running) -> None:
    from memdir.server.oauth.clients import ClientRefused, client_of

    def refused(**fields: Any) -> str:
        answer = srv.http.post(
            "/register",
            json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", **fields},
        )
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"] == "invalid_client_metadata"
        return str(answer.json()["error_description"])

    assert "client_name" in refused(client_name="x" * 201)
    assert "at most 10" in refused(redirect_uris=[f"{REDIRECT}/{i}" for i in range(11)])
    assert "longer than 2000" in refused(redirect_uris=[REDIRECT + "/" + "x" * 2000])
    register(srv, client_name="x" * 200, redirect_uris=[f"{REDIRECT}/{i}" for i in range(10)])
    url = "https://client.example/c.json"
    doc = {"client_id": url, "client_name": "x" * 201, "redirect_uris": [REDIRECT]}
    with pytest.raises(ClientRefused, match="client_name is longer than 200"):
        client_of(url, json.dumps(doc).encode())


class Allowance:
    """A rate limiter letting `left` requests through, then asking for 30 s."""

    def __init__(self, left: int) -> None:
        self.left = left
        self.keys: list[str] = []

    def __call__(self, key: str) -> float:
        self.keys.append(key)
        self.left -= 1
        return 0.0 if self.left >= 0 else 30.0


@pytest.mark.parametrize("blocks", [False, True])
def test_oauth_endpoints_are_rate_limited(make_server: Any, blocks: bool) -> None:
    limit = Allowance(2)
    srv = make_server(limit=limit, limit_blocks=blocks)
    client_id = register(srv)
    form = consent_form(srv, authorize(srv, client_id, pkce()[1]).headers["location"])
    page = post_consent(srv, form, token=srv.tokens["olga"])
    assert page.status_code == 429 and page.headers["Retry-After"] == "30"
    assert "Too many requests" in page.text and "text/html" in page.headers["content-type"]
    for answer in (
        srv.http.post("/register", json={"redirect_uris": [REDIRECT]}),
        authorize(srv, client_id, pkce()[1]),
    ):
        assert answer.status_code == 429 and answer.headers["Retry-After"] == "30"
        assert answer.json()["error"] == "temporarily_unavailable"
    # Not the token endpoint: a refresh refused with 429 would log the user out.
    refused = token(srv, grant_type="refresh_token", client_id=client_id, refresh_token="x")
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    assert set(limit.keys) == {"oauth:127.0.0.1"} and len(limit.keys) == 5
    assert srv.http.get("/.well-known/oauth-authorization-server").status_code == 200


def test_an_ipv6_client_is_limited_by_its_64() -> None:
    assert client_network("2001:db8:1:2:aaaa::1") == client_network("2001:db8:1:2:ffff::9")
    assert client_network("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64"
    assert client_network("2001:db8:1:3::1") != client_network("2001:db8:1:2::1")
    assert client_network("192.0.2.7") == "192.0.2.7"


# -- pruning the state ---------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["directory", "postgres", "s3"])
def test_expired_entries_are_pruned(
    make_server: Any, request: pytest.FixtureRequest, backend: str
) -> None:
    storage: Any = None
    if backend == "postgres":
        from memdir.server.storage.postgres import PostgresStorage

        storage = PostgresStorage(request.getfixturevalue("pg_database_dsn"))
    elif backend == "s3":
        from memdir.server.storage.s3 import S3Storage

        endpoint, bucket, prefix = request.getfixturevalue("s3_bucket")
        storage = S3Storage(endpoint, bucket, prefix=prefix)
    try:
        srv = make_server(storage)
        srv.oauth.next_prune = float("inf")  # only the prunes below
        store = srv.oauth.state.store

        def kinds() -> list[str]:
            return sorted(name[6] for name in store.names("oauth-"))

        client_id, issued = tokens_for(srv)  # client, request, code, family, access, refresh
        register(srv)  # never approved
        authorize(srv, client_id, pkce()[1])  # never answered
        assert kinds() == sorted("kkrrcgaf")
        assert srv.oauth.prune() == 0
        srv.clock.now += 86400 + 3601  # a day after the access token and the requests expired
        assert srv.oauth.prune() == 4  # both requests, the code, the access token
        assert kinds() == sorted("kkgf")  # an unapproved client is kept for a month
        rotated = refresh(srv, client_id, issued["refresh_token"])  # the grant goes on
        assert rotated.status_code == 200, rotated.text
        srv.clock.now += 31 * 86400 + 3601  # then is left unused
        # The family, both refresh tokens, the access token, the unapproved client.
        assert srv.oauth.prune() == 5
        assert kinds() == ["k"]  # the approved client stays
        assert refresh(srv, client_id, rotated.json()["refresh_token"]).status_code == 400
    finally:
        if storage is not None:
            storage.close()


def test_a_prune_runs_at_most_hourly_and_its_failure_is_only_logged(
    srv: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = threading.Event()
    calls: list[int] = []

    def counted() -> int:
        calls.append(1)
        ran.set()
        return 0

    srv.oauth.next_prune = 0.0
    monkeypatch.setattr(srv.oauth, "prune", counted)
    srv.oauth.prune_soon()
    srv.oauth.prune_soon()
    register(srv)
    assert ran.wait(10) and calls == [1]
    monkeypatch.undo()

    def broken(now: float) -> int:
        raise OSError("disk gone")

    monkeypatch.setattr(srv.oauth.state, "prune", broken)
    assert srv.oauth.prune() == 0
