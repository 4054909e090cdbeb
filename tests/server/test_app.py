"""The sync server over HTTP: a real `memdir server serve` on loopback, driven with httpx."""

from __future__ import annotations

import asyncio
import random
import string
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memdir.core import Note, render_note
from memdir.server.accounts import Accounts
from memdir.server.app import create_app
from memdir.server.ratelimit import RateLimiter, retry_after_header
from memdir.server.rules import SyncRules
from memdir.server.storage.directory import DirectoryStorage
from memdir.sync.protocol import Manifest, Quotas, rev_of
from sync_server import RunningServer, add_user, admin_key, auth_headers, running_server

QUOTA_VALUE = Quotas().header()
USER_SCOPE = {"kind": "user"}


def put(note_id: str, body: str = "body", base: str | None = None) -> dict[str, Any]:
    text = render_note(Note(id=note_id, summary=f"about {note_id}", body=body)).decode()
    return {"id": note_id, "op": "put", "base": base, "rev": rev_of(text.encode()), "text": text}


def assert_server_headers(response: httpx.Response, quotas: str = QUOTA_VALUE) -> None:
    assert response.headers["Memdir-Quotas"] == quotas
    assert response.headers["Memdir-Protocol"] == "1"


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert_server_headers(response)
    body: dict[str, Any] = response.json()
    assert body["error"] == code
    assert body["message"]
    assert body["quotas"] == Quotas().model_dump()
    return body


class Server:
    def __init__(self, running: RunningServer, data: Path, tokens: dict[str, str], key: str):
        self.running = running
        self.url = running.url
        self.data = data
        self.tokens = tokens
        self.admin_key = key

    def client(self, user: str | None = None) -> httpx.Client:
        headers = auth_headers(self.tokens[user]) if user else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("server-data")
    tokens = {name: add_user(data, name) for name in ("alice", "bob", "carol", "dave", "eve")}
    key = admin_key(data)
    with running_server(data, extra_args=["--rate-limit", "0"]) as running:
        yield Server(running, data, tokens, key)


def test_identity(server: Server) -> None:
    with server.client("alice") as client:
        response = client.get("/v1/memory/identity")
    assert response.status_code == 200
    assert_server_headers(response)
    body = response.json()
    assert body["user"] == "alice"
    assert body["protocol"] == 1 and body["min_protocol"] == 1
    assert body["quotas"] == Quotas().model_dump()


@pytest.mark.parametrize(
    "authorization", [None, "Bearer", "Basic YWxpY2U6eA==", "Bearer wrong-token", "bearer  x"]
)
def test_missing_or_wrong_token_is_401(server: Server, authorization: str | None) -> None:
    headers = {"Memdir-Protocol": "1"}
    if authorization is not None:
        headers["Authorization"] = authorization
    with server.client() as client:
        response = client.get("/v1/memory/identity", headers=headers)
        snapshot = client.post("/v1/memory/snapshot", headers=headers, json={"scope": USER_SCOPE})
    assert_error(response, 401, "unauthorized")
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert_error(snapshot, 401, "unauthorized")


@pytest.mark.parametrize("protocol", [None, "0", "2", "abc", ""])
def test_an_unsupported_protocol_is_426(server: Server, protocol: str | None) -> None:
    headers = {"Authorization": f"Bearer {server.tokens['alice']}"}
    if protocol is not None:
        headers["Memdir-Protocol"] = protocol
    with server.client() as client:
        response = client.get("/v1/memory/identity", headers=headers)
    body = assert_error(response, 426, "incompatible_protocol")
    assert body["supported"] == [1]


def test_headers_on_every_response(server: Server) -> None:
    with server.client("alice") as client:
        responses = {
            "404": client.get("/no/such/path"),
            "404 under v1": client.post("/v1/memory/nothing", json={}),
            "405": client.get("/v1/memory/commit"),
            "422": client.post("/v1/memory/snapshot", json={"scope": {"kind": "nope"}}),
            "openapi": client.get("/openapi.json"),
            "200": client.get("/v1/memory/identity"),
        }
    for name, response in responses.items():
        assert response.headers.get("Memdir-Quotas") == QUOTA_VALUE, name
        assert response.headers.get("Memdir-Protocol") == "1", name
    assert_error(responses["404"], 404, "not_found")
    assert_error(responses["405"], 405, "method_not_allowed")
    assert_error(responses["422"], 422, "invalid")


@pytest.mark.parametrize("path", ["/openapi.json", "/docs", "/redoc"])
def test_the_api_description_is_not_served_without_the_docs_flag(server: Server, path: str) -> None:
    with server.client() as anonymous, server.client("alice") as signed_in:
        for client in (anonymous, signed_in):
            assert_error(client.get(path), 404, "not_found")


def test_with_docs_the_description_lists_the_endpoints(tmp_path: Path) -> None:
    with (
        running_server(tmp_path, extra_args=["--docs"]) as running,
        httpx.Client(base_url=running.url, timeout=30) as client,
    ):
        response = client.get("/openapi.json")
        pages = [client.get("/docs"), client.get("/redoc")]
    assert response.status_code == 200
    assert_server_headers(response)
    doc = response.json()
    assert doc["info"]["title"] == "memdir sync server"
    assert doc["info"]["version"] == __import__("memdir").__version__
    assert set(doc["paths"]) == {
        "/v1/memory/identity",
        "/v1/memory/snapshot",
        "/v1/memory/commit",
        "/v1/keyring",
        "/v1/admin/erase",
        "/v1/teams",
        "/v1/teams/{team}",
        "/v1/teams/{team}/changes",
        "/v1/teams/{team}/keys",
    }
    assert "get" in doc["paths"]["/v1/memory/identity"]
    assert {"get", "put"} <= set(doc["paths"]["/v1/keyring"])
    for path in ("/v1/memory/snapshot", "/v1/memory/commit", "/v1/admin/erase"):
        assert "post" in doc["paths"][path]
    assert all(p.status_code == 200 and "text/html" in p.headers["content-type"] for p in pages)


def test_commit_then_snapshot(server: Server) -> None:
    change = put("first-note", "hello")
    with server.client("bob") as client:
        committed = client.post(
            "/v1/memory/commit", json={"scope": USER_SCOPE, "changes": [change]}
        )
        assert committed.status_code == 200, committed.text
        assert_server_headers(committed)
        result = committed.json()
        assert result["version"] == 1
        assert result["notes"]["first-note"]["rev"] == change["rev"]
        assert result["quotas"] == Quotas().model_dump()

        snap = client.post("/v1/memory/snapshot", json={"scope": USER_SCOPE}).json()
        assert snap["version"] == 1
        assert snap["objects"] == {change["rev"]: change["text"]}
        same = client.post(
            "/v1/memory/snapshot", json={"scope": USER_SCOPE, "known_version": 1}
        ).json()
        assert same["unchanged"] is True and same["notes"] == {}

        stale = client.post(
            "/v1/memory/commit", json={"scope": USER_SCOPE, "changes": [put("first-note", "x")]}
        )
        body = assert_error(stale, 409, "stale")
        assert body["ids"] == ["first-note"]

        bad = dict(put("second-note"), rev=rev_of(b"not it"))
        invalid = client.post("/v1/memory/commit", json={"scope": USER_SCOPE, "changes": [bad]})
        assert assert_error(invalid, 422, "invalid")["ids"] == ["second-note"]

        malformed = client.post(
            "/v1/memory/commit",
            content=b"{not json",
            headers={"Content-Type": "application/json"},
        )
        assert "detail" not in assert_error(malformed, 422, "invalid")
        missing = client.post("/v1/memory/commit", json={"scope": USER_SCOPE, "changes": []})
        assert_error(missing, 422, "invalid")
        # Another user's scope is separate.
    with server.client("carol") as client:
        other = client.post("/v1/memory/snapshot", json={"scope": USER_SCOPE}).json()
    assert other["version"] == 0 and other["notes"] == {}


def test_a_commit_carrying_a_credential_is_422_and_nothing_is_stored(server: Server) -> None:
    rng = random.Random("app")
    token = "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    with server.client("dave") as client:
        response = client.post(
            "/v1/memory/commit",
            json={"scope": USER_SCOPE, "changes": [put("fine-note"), put("leaky", token)]},
        )
        body = assert_error(response, 422, "secret_refused")
        assert body["ids"] == ["leaky"]
        assert "GitHub token" in body["message"] and "leaky" in body["message"]
        assert token not in response.text
        snap = client.post("/v1/memory/snapshot", json={"scope": USER_SCOPE}).json()
    assert snap["version"] == 0 and snap["notes"] == {} and snap["objects"] == {}
    stored = [p for p in server.data.rglob("*") if p.is_file() and "dave" in p.parts]
    assert not any(p.suffix == ".md" or p.name == "manifest.json" for p in stored), stored


def test_parallel_commits_to_one_scope_all_land(server: Server) -> None:
    results: list[int] = []

    def one(n: int) -> None:
        with server.client("dave") as client:
            response = client.post(
                "/v1/memory/commit",
                json={"scope": USER_SCOPE, "changes": [put(f"parallel-{n}")]},
            )
        results.append(response.status_code)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert results == [200] * 12
    with server.client("dave") as client:
        snap = client.post("/v1/memory/snapshot", json={"scope": USER_SCOPE}).json()
    assert snap["version"] == 12 and len(snap["notes"]) == 12


def test_admin_erase_then_the_account_is_gone(server: Server) -> None:
    with server.client("eve") as client:
        client.post("/v1/memory/commit", json={"scope": USER_SCOPE, "changes": [put("eve-note")]})
    with server.client("alice") as client:
        forbidden = client.post("/v1/admin/erase", json={"user": "eve"})
    assert_error(forbidden, 403, "forbidden")
    with server.client() as client:
        unauth = client.post(
            "/v1/admin/erase", json={"user": "eve"}, headers={"Memdir-Protocol": "1"}
        )
        assert_error(unauth, 401, "unauthorized")
        admin = auth_headers(server.admin_key)
        bad = client.post("/v1/admin/erase", json={"user": "../eve"}, headers=admin)
        assert_error(bad, 422, "invalid")
        erased = client.post("/v1/admin/erase", json={"user": "eve"}, headers=admin)
    assert erased.status_code == 200, erased.text
    assert_server_headers(erased)
    assert erased.json()["user"] == "eve" and erased.json()["erased"] is True
    assert not list((server.data / "users" / "eve").rglob("*.md"))
    with server.client("eve") as client:
        assert_error(client.get("/v1/memory/identity"), 410, "account_erased")
        snap = client.post("/v1/memory/snapshot", json={"scope": USER_SCOPE})
        assert_error(snap, 410, "account_erased")
        again = client.post(
            "/v1/memory/commit", json={"scope": USER_SCOPE, "changes": [put("eve-note")]}
        )
        assert_error(again, 410, "account_erased")
    assert not list((server.data / "users" / "eve").rglob("*.md"))
    with server.client("alice") as client:
        assert client.get("/v1/memory/identity").status_code == 200


def test_rate_limit_answers_429_with_retry_after(tmp_path: Path) -> None:
    alice, bob = add_user(tmp_path, "alice"), add_user(tmp_path, "bob")
    args = ["--rate-limit", "6", "--rate-burst", "3", "--max-notes", "7"]
    with running_server(tmp_path, extra_args=args) as running:
        quotas = Quotas(max_notes=7).header()
        with httpx.Client(base_url=running.url, headers=auth_headers(alice)) as client:
            for _ in range(3):
                ok = client.get("/v1/memory/identity")
                assert ok.status_code == 200
                assert_server_headers(ok, quotas)
            limited = client.get("/v1/memory/identity")
        assert limited.status_code == 429
        assert_server_headers(limited, quotas)
        assert limited.json()["error"] == "rate_limited"
        retry = limited.headers["Retry-After"]
        assert retry.isdigit() and 1 <= int(retry) <= 10
        with httpx.Client(base_url=running.url, headers=auth_headers(bob)) as client:
            assert client.get("/v1/memory/identity").status_code == 200


def test_notes_survive_a_restart_and_a_kill(tmp_path: Path) -> None:
    token = add_user(tmp_path, "alice")
    change = put("kept-note")
    with running_server(tmp_path) as running:
        with httpx.Client(base_url=running.url, headers=auth_headers(token)) as client:
            response = client.post(
                "/v1/memory/commit", json={"scope": USER_SCOPE, "changes": [change]}
            )
            assert response.status_code == 200
        assert running.stop() == 0
    with running_server(tmp_path) as running:
        with httpx.Client(base_url=running.url, headers=auth_headers(token)) as client:
            snap = client.post("/v1/memory/snapshot", json={"scope": USER_SCOPE}).json()
        running.kill()
        assert running.process.returncode == -9
    assert snap["objects"] == {change["rev"]: change["text"]}
    with (
        running_server(tmp_path) as running,
        httpx.Client(base_url=running.url, headers=auth_headers(token)) as client,
    ):
        again = client.post("/v1/memory/snapshot", json={"scope": USER_SCOPE, "known_version": 1})
        assert again.json()["unchanged"]


# -- in-process: the gate's size cap and failure handling -----------------------------


class Exploding(DirectoryStorage):
    def manifest(self, user: str, scope: str) -> Manifest:
        raise RuntimeError("disk on fire")


def _asgi(tmp_path: Path, storage: DirectoryStorage | None = None) -> tuple[Any, str]:
    token = Accounts(tmp_path).add_user("alice")
    service = SyncRules(storage or DirectoryStorage(tmp_path), Quotas())
    app = create_app(service, Accounts(tmp_path), RateLimiter(0), max_request_bytes=1000)
    return app, token


def _request(
    app: Any, token: str, extra: dict[str, str] | None = None, **kwargs: Any
) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        headers = {**auth_headers(token), **(extra or {})}
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.post("/v1/memory/snapshot", headers=headers, **kwargs)

    return asyncio.run(go())


def test_bodies_over_the_cap_are_413(tmp_path: Path) -> None:
    app, token = _asgi(tmp_path)
    padded = b'{"scope": {"kind": "user"}, "have": []' + b" " * 1000 + b"}"
    assert_error(_request(app, token, content=padded), 413, "quota_exceeded")

    async def chunks(data: bytes) -> AsyncIterator[bytes]:
        for i in range(0, len(data), 100):
            yield data[i : i + 100]

    assert_error(_request(app, token, content=chunks(padded)), 413, "quota_exceeded")
    small = b'{"scope": {"kind": "user"}}'
    json_type = {"Content-Type": "application/json"}
    response = _request(app, token, content=chunks(small), extra=json_type)
    assert response.status_code == 200, response.text
    assert response.json()["version"] == 0


def test_an_unexpected_failure_is_a_500_with_the_headers(tmp_path: Path) -> None:
    app, token = _asgi(tmp_path, Exploding(tmp_path))
    response = _request(app, token, json={"scope": USER_SCOPE})
    body = assert_error(response, 500, "internal")
    assert "fire" not in body["message"]


# -- the rate limiter ----------------------------------------------------------------


class Seconds:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket_allows_the_burst_then_the_rate() -> None:
    clock = Seconds()
    limiter = RateLimiter(per_minute=60, burst=3, clock=clock)
    assert [limiter.check("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.check("a")
    assert wait == pytest.approx(1.0)
    assert retry_after_header(wait) == "1"
    assert limiter.check("b") == 0.0  # buckets are per account
    clock.now += 0.5
    assert limiter.check("a") == pytest.approx(0.5)
    clock.now += 0.5
    assert limiter.check("a") == 0.0
    clock.now += 3600
    assert [limiter.check("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.check("a") > 0


def test_default_rate_and_off_switch() -> None:
    clock = Seconds()
    limiter = RateLimiter(clock=clock)
    assert (limiter.per_minute, limiter.burst) == (120, 30)
    assert all(limiter.check("a") == 0.0 for _ in range(30))
    assert limiter.check("a") == pytest.approx(0.5)
    off = RateLimiter(per_minute=0, clock=clock)
    assert all(off.check("a") == 0.0 for _ in range(1000))
    assert retry_after_header(0.01) == "1"
    assert retry_after_header(2.2) == "3"
    with pytest.raises(ValueError):
        RateLimiter(per_minute=-1)


def test_the_postgres_backend_over_http(tmp_path: Path, pg_database_dsn: str) -> None:
    token = add_user(tmp_path, "alice")
    key = admin_key(tmp_path)
    change = put("pg-note", "stored in PostgreSQL")
    with running_server(tmp_path, backend="postgres", dsn=pg_database_dsn) as running:
        with httpx.Client(base_url=running.url, headers=auth_headers(token)) as client:
            committed = client.post(
                "/v1/memory/commit", json={"scope": USER_SCOPE, "changes": [change]}
            )
            assert committed.status_code == 200, committed.text
            snap = client.post("/v1/memory/snapshot", json={"scope": USER_SCOPE}).json()
            assert snap["objects"] == {change["rev"]: change["text"]}
            erased = client.post(
                "/v1/admin/erase", json={"user": "alice"}, headers=auth_headers(key)
            )
            assert erased.status_code == 200, erased.text
            assert_error(client.get("/v1/memory/identity"), 410, "account_erased")
        assert pg_database_dsn not in running.stderr()
    assert not (tmp_path / "users").exists()  # notes went to PostgreSQL, not the data dir
