"""Tests for `sync/client.py` with an injected `httpx.MockTransport`: every server answer
becomes a typed model or the right memdir error with its hint, never an httpx traceback."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from memdir.errors import (
    IncompatibleVersion,
    LimitExceeded,
    MemdirError,
    RateLimited,
    Refused,
    Remedy,
    SecretRefused,
    SyncFailed,
    SyncRefused,
)
from memdir.sync.client import SecretInCommit, Stale, SyncClient, origin_of
from memdir.sync.protocol import (
    PROTOCOL_HEADER,
    PROTOCOL_VERSION,
    QUOTA_HEADER,
    Change,
    CommitRequest,
    Quotas,
    ScopeRef,
    SnapshotRequest,
    rev_of,
)

TOKEN = "tok-" + "s3cr3t-value-123"
SERVER = "http://127.0.0.1:8765"
QUOTAS = Quotas().model_dump()
IDENTITY = {"user": "ada", "server": "memdir-server 1", "protocol": 1, "min_protocol": 1}
SNAPSHOT = {"version": 3, "notes": {}, "quotas": QUOTAS}

Handler = Callable[[httpx.Request], httpx.Response]


def client(handler: Handler, sleeps: list[float] | None = None) -> SyncClient:
    record = sleeps if sleeps is not None else []
    return SyncClient(SERVER, TOKEN, transport=httpx.MockTransport(handler), sleep=record.append)


def answer(status: int, body: object = None, **headers: str) -> Handler:
    def handle(request: httpx.Request) -> httpx.Response:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return httpx.Response(status, content=content, headers=headers)

    return handle


def identity_error(handler: Handler) -> MemdirError:
    with client(handler) as c, pytest.raises(MemdirError) as info:
        c.identity()
    error = info.value
    assert TOKEN not in str(error)
    chained = error.__cause__ or error.__context__
    while chained is not None:  # no httpx exception (it holds the request headers)
        assert not isinstance(chained, httpx.HTTPError), chained
        chained = chained.__cause__ or chained.__context__
    return error


def test_requests_carry_the_token_protocol_and_body() -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=SNAPSHOT, headers={QUOTA_HEADER: "notes=9"})

    with client(handle) as c:
        snap = c.snapshot(SnapshotRequest(scope=ScopeRef(kind="user"), have=[rev_of(b"x")]))
    assert snap.version == 3
    (request,) = seen
    assert request.url == f"{SERVER}/v1/memory/snapshot"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers[PROTOCOL_HEADER] == str(PROTOCOL_VERSION)
    assert json.loads(request.content)["have"] == [rev_of(b"x")]
    assert c.quotas.max_notes == 9
    assert c.transfer.requests == 1 and c.transfer.sent == len(request.content)
    assert c.transfer.received > 0


def test_identity_is_parsed() -> None:
    with client(answer(200, {**IDENTITY, "quotas": QUOTAS})) as c:
        assert c.identity().user == "ada"


def test_401_asks_to_sign_in_again() -> None:
    error = identity_error(answer(401, {"error": "unauthorized", "message": "bad token"}))
    assert type(error) is SyncRefused
    assert error.hint is Remedy.SYNC_LOGIN
    assert "did not accept the token" in str(error)


@pytest.mark.parametrize("status", [410, 403])
def test_an_erased_account_stops_sync(status: int) -> None:
    error = identity_error(answer(status, {"error": "account_erased", "message": "gone"}))
    assert type(error) is SyncRefused
    assert "erased" in str(error) and "local notes are kept" in str(error)


def test_429_is_rate_limited_with_the_server_s_retry_after_and_no_retry() -> None:
    calls: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(429, json={"error": "rate_limited"}, headers={"Retry-After": "120"})

    error = identity_error(handle)
    assert isinstance(error, RateLimited)
    assert error.retry_after == 120.0
    assert "120 s" in str(error)
    assert len(calls) == 1


def test_429_without_retry_after_waits_a_minute() -> None:
    error = identity_error(answer(429, {"error": "rate_limited"}))
    assert isinstance(error, RateLimited) and error.retry_after == 60.0


def test_5xx_is_tried_twice_then_sync_failed_without_the_token() -> None:
    calls: list[httpx.Request] = []
    sleeps: list[float] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(503, json={"error": "busy", "message": f"echo {TOKEN}"})

    with client(handle, sleeps) as c, pytest.raises(SyncFailed) as info:
        c.identity()
    assert type(info.value) is SyncFailed
    assert len(calls) == 2 and len(sleeps) == 1
    assert "HTTP 503" in str(info.value) and "no note is lost" in str(info.value)
    assert TOKEN not in str(info.value)


def test_a_5xx_then_success_recovers() -> None:
    answers = iter([httpx.Response(500), httpx.Response(200, json=SNAPSHOT)])
    with client(lambda request: next(answers)) as c:
        assert c.snapshot(SnapshotRequest(scope=ScopeRef(kind="user"))).version == 3


def test_a_network_error_is_sync_failed_and_never_chained() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused for {TOKEN}", request=request)

    error = identity_error(handle)
    assert type(error) is SyncFailed
    assert "cannot reach the sync server" in str(error) and "ConnectError" in str(error)


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_refused_not_followed(status: int) -> None:
    calls: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(status, headers={"Location": "https://elsewhere.example/v1"})

    error = identity_error(handle)
    assert type(error) is SyncRefused
    assert "redirect" in str(error)
    assert len(calls) == 1


@pytest.mark.parametrize(
    "body", [b"not json at all", b"{}", b'{"user": 1}', b"[]", b'{"version": "x"}']
)
def test_garbage_in_a_2xx_answer_is_sync_failed(body: bytes) -> None:
    error = identity_error(answer(200, body))
    assert type(error) is SyncFailed
    assert "cannot read" in str(error)


def test_garbage_error_bodies_still_map_by_status() -> None:
    assert type(identity_error(answer(401, b"<html>nope</html>"))) is SyncRefused
    assert type(identity_error(answer(418, b"\x00\xff"))) is SyncFailed


def test_426_names_the_supported_versions() -> None:
    error = identity_error(
        answer(
            426, {"error": "incompatible_protocol", "supported": [2, 3]}, **{PROTOCOL_HEADER: "3"}
        )
    )
    assert isinstance(error, IncompatibleVersion)
    assert "2–3" in str(error)


def test_a_server_outside_the_protocol_range_is_incompatible() -> None:
    error = identity_error(answer(200, {**IDENTITY, "quotas": QUOTAS}, **{PROTOCOL_HEADER: "7"}))
    assert isinstance(error, IncompatibleVersion)
    too_new = {**IDENTITY, "protocol": 9, "min_protocol": 5, "quotas": QUOTAS}
    assert isinstance(identity_error(answer(200, too_new)), IncompatibleVersion)


def commit(handler: Handler) -> None:
    change = Change(id="a", op="put", rev=rev_of(b"t"), text="t")
    with client(handler) as c:
        c.commit(CommitRequest(scope=ScopeRef(kind="user"), changes=[change]))


def test_409_stale_names_the_ids_and_version() -> None:
    with pytest.raises(Stale) as info:
        commit(answer(409, {"error": "stale", "message": "moved", "ids": ["a", 3], "version": 4}))
    assert info.value.ids == ("a",)
    assert info.value.version == 4


def test_409_case_collision_is_refused() -> None:
    with pytest.raises(Refused):
        commit(answer(409, {"error": "case_collision", "message": "A vs a", "ids": ["a"]}))


def test_422_secret_refused_names_the_notes_and_never_echoes_the_token() -> None:
    said = f"note leaky: GitHub token (body, line 2) \x1b[2J sent with {TOKEN}"
    with pytest.raises(SecretRefused) as info:
        commit(answer(422, {"error": "secret_refused", "message": said, "ids": ["leaky", 7]}))
    assert isinstance(info.value, SecretInCommit) and info.value.ids == ("leaky",)
    message = str(info.value)
    assert "leaky" in message and "GitHub token (body, line 2)" in message
    assert TOKEN not in message and "\x1b" not in message


def test_413_is_a_quota_limit() -> None:
    with pytest.raises(LimitExceeded, match="quota"):
        commit(answer(413, {"error": "quota_exceeded", "message": "too many notes"}))


@pytest.mark.parametrize(
    "server",
    ["http://sync.example.com", "ftp://127.0.0.1", "https://user:pw@sync.example.com", "nope"],
)
def test_a_bad_server_url_is_refused_before_any_request(server: str) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request may be sent")

    with pytest.raises(SyncRefused):
        SyncClient(server, TOKEN, transport=httpx.MockTransport(handle))


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://Sync.Example.com:443/base/", "https://sync.example.com"),
        ("http://127.0.0.1:80", "http://127.0.0.1"),
        ("http://localhost:8765/x", "http://localhost:8765"),
        ("http://[::1]:9000/", "http://[::1]:9000"),
    ],
)
def test_origin_of(url: str, origin: str) -> None:
    assert origin_of(url) == origin
