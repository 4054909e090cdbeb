"""HttpEmbedder against a real scripted server on loopback: batching, validation, retries, keys."""

from __future__ import annotations

import hashlib
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import numpy as np
import pytest

from loopback import serving
from memdir.embed import (
    EmbedderUnavailable,
    EmbeddingFailed,
    HttpEmbedder,
    make_embedder,
)

DIM = 8
SECRET = "sk-test-6Q2xv9LmZ0aB7cD1eF3gH5iJ"
KEY_ENV = "MEMDIR_TEST_EMBED_KEY"


def vector_for(text: str, dim: int = DIM) -> list[float]:
    """A deterministic, unnormalised vector for `text`."""
    digest = hashlib.sha256(text.encode()).digest()
    return [float(b) - 100.0 for b in digest[:dim]]


def unit(values: list[float]) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    return array / np.linalg.norm(array)


@dataclass
class Reply:
    status: int = 200
    body: bytes | Callable[[list[str]], Any] | None = None  # None: vectors for the inputs
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class ScriptedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: list[Reply] = [Reply()]
        self.seen: list[Seen] = []
        self.lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and left is part of the script

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def next_reply(self) -> Reply:
        with self.lock:  # the last reply repeats
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedServer

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = json.loads(raw)
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.server.lock:
            self.server.seen.append(Seen(self.path, headers, body))
        reply = self.server.next_reply()
        time.sleep(reply.delay)
        inputs: list[str] = body.get("input", [])
        if reply.body is None:
            # Answered in reverse order: the client must sort by index.
            data = [{"index": i, "embedding": vector_for(t)} for i, t in enumerate(inputs)]
            payload = json.dumps({"object": "list", "data": data[::-1]}).encode()
        elif callable(reply.body):
            payload = json.dumps(reply.body(inputs)).encode()
        else:
            payload = reply.body
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with serving(ScriptedServer()) as srv:
        yield srv


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make(sleeps: list[float]) -> Iterator[Callable[..., HttpEmbedder]]:
    built: list[HttpEmbedder] = []

    def build(base_url: str, **options: Any) -> HttpEmbedder:
        options.setdefault("api_key_env", None)
        embedder = HttpEmbedder(base_url, "test-embed", sleep=sleeps.append, **options)
        built.append(embedder)
        return embedder

    yield build
    for embedder in built:
        embedder.close()


def data(vectors: list[Any]) -> Callable[[list[str]], Any]:
    return lambda _inputs: {"data": [{"index": i, "embedding": v} for i, v in enumerate(vectors)]}


def no_network(request: httpx.Request) -> httpx.Response:
    raise AssertionError(f"no request may be made, got {request.url}")


def test_batches_sorted_normalised_and_dimension_learned(
    server: ScriptedServer, make: Callable[..., HttpEmbedder]
) -> None:
    embedder = make(server.url, batch_size=2)
    texts = ["alpha", "beta", "gamma"]
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (3, DIM)
    assert vectors.dtype == np.float32
    for row, text in zip(vectors, texts, strict=True):
        np.testing.assert_allclose(row, unit(vector_for(text)), atol=1e-6)
    assert [s.body for s in server.seen] == [
        {"model": "test-embed", "input": ["alpha", "beta"]},
        {"model": "test-embed", "input": ["gamma"]},
    ]
    assert server.seen[0].path == "/v1/embeddings"
    assert embedder.info.dim == DIM
    assert embedder.info.id == f"http:test-embed@test-embed@127.0.0.1/{DIM}"
    assert len(server.seen) == 2  # the dimension came from the first response


def test_query_is_one_unit_vector(
    server: ScriptedServer, make: Callable[..., HttpEmbedder]
) -> None:
    vector = make(server.url).embed_query("where is the deploy script")
    assert vector.shape == (DIM,)
    np.testing.assert_allclose(vector, unit(vector_for("where is the deploy script")), atol=1e-6)


def test_info_learns_the_dimension_with_one_request(
    server: ScriptedServer, make: Callable[..., HttpEmbedder]
) -> None:
    embedder = make(server.url)
    assert embedder.info.dim == DIM
    assert embedder.check().dim == DIM
    assert len(server.seen) == 2


def test_given_dimensions_need_no_request_and_are_enforced(
    server: ScriptedServer, make: Callable[..., HttpEmbedder]
) -> None:
    known = make(server.url, dimensions=DIM)
    assert known.info.dim == DIM
    assert known.embed_documents([]).shape == (0, DIM)
    assert server.seen == []
    with pytest.raises(EmbeddingFailed, match=r"returned 8-dimensional vectors, expected 16"):
        make(server.url, dimensions=16).embed_query("x")


def test_a_later_response_of_another_size_fails(
    server: ScriptedServer, make: Callable[..., HttpEmbedder]
) -> None:
    server.script = [Reply(), Reply(body=data([[1.0, 2.0, 3.0]]))]
    embedder = make(server.url)
    embedder.embed_query("first")
    with pytest.raises(EmbeddingFailed, match=r"3-dimensional vectors, expected 8"):
        embedder.embed_query("second")


def test_429_waits_for_retry_after_then_succeeds(
    server: ScriptedServer, make: Callable[..., HttpEmbedder], sleeps: list[float]
) -> None:
    server.script = [Reply(429, b"{}", {"Retry-After": "7"}), Reply()]
    make(server.url).embed_query("x")
    assert sleeps == [7.0]
    assert len(server.seen) == 2


def test_retry_after_is_capped(
    server: ScriptedServer, make: Callable[..., HttpEmbedder], sleeps: list[float]
) -> None:
    server.script = [Reply(429, b"{}", {"Retry-After": "3600"}), Reply()]
    make(server.url).embed_query("x")
    assert sleeps == [30.0]


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_selected_5xx_are_retried_with_backoff(
    server: ScriptedServer, make: Callable[..., HttpEmbedder], sleeps: list[float], status: int
) -> None:
    server.script = [Reply(status, b"busy"), Reply()]
    assert make(server.url).embed_query("x").shape == (DIM,)
    assert len(server.seen) == 2
    assert len(sleeps) == 1
    assert 0.25 <= sleeps[0] <= 0.5


def test_retries_are_bounded(
    server: ScriptedServer, make: Callable[..., HttpEmbedder], sleeps: list[float]
) -> None:
    server.script = [Reply(503, b'{"error": {"message": "overloaded"}}')]
    with pytest.raises(EmbeddingFailed) as caught:
        make(server.url, max_retries=3).embed_documents(["x"])
    assert len(server.seen) == 4
    assert len(sleeps) == 3
    assert all(lo <= s <= hi for s, lo, hi in zip(sleeps, [0.25, 0.5, 1], [0.5, 1, 2], strict=True))
    assert "HTTP 503: overloaded" in str(caught.value)
    assert "4 attempts" in str(caught.value)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422, 501])
def test_client_errors_are_not_retried(
    server: ScriptedServer, make: Callable[..., HttpEmbedder], sleeps: list[float], status: int
) -> None:
    server.script = [Reply(status, b'{"error": {"message": "nope"}}')]
    with pytest.raises(EmbeddingFailed, match=rf"HTTP {status}: nope"):
        make(server.url).embed_query("x")
    assert len(server.seen) == 1
    assert sleeps == []


def test_redirects_are_refused(
    server: ScriptedServer, make: Callable[..., HttpEmbedder], sleeps: list[float]
) -> None:
    elsewhere = server.url.replace("/v1", "/elsewhere")
    server.script = [Reply(302, b"", {"Location": elsewhere}), Reply()]
    with pytest.raises(EmbeddingFailed, match="redirects are refused"):
        make(server.url).embed_query("x")
    assert [s.path for s in server.seen] == ["/v1/embeddings"]
    assert sleeps == []


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(body=b"<html>not json"), "malformed JSON"),
        (Reply(body=b'{"object": "list"}'), "no 'data' list"),
        (Reply(body=lambda inputs: {"data": []}), "returned 0 embeddings for 2 texts"),
        (Reply(body=data([[1.0] * DIM] * 3)), "returned 3 embeddings for 2 texts"),
        (
            Reply(
                body=b'{"data": [{"index": 0, "embedding": [NaN, 1]}, '
                b'{"index": 1, "embedding": [1, 1]}]}'
            ),
            "non-finite",
        ),
        (Reply(body=data([[1.0] * DIM, [1.0] * 4])), "differing or zero length"),
        (Reply(body=data([[0.0] * DIM, [1.0] * DIM])), "zero vector"),
        (Reply(body=data([["1"] * DIM, [1.0] * DIM])), "not a list of numbers"),
        (Reply(body=data(["AAAA", [1.0] * DIM])), "not a list of numbers"),
        (
            Reply(body=lambda _: {"data": [{"index": 0, "embedding": [1.0]}] * 2}),
            "bad or repeated index",
        ),
    ],
)
def test_unusable_responses_fail_without_retry(
    server: ScriptedServer,
    make: Callable[..., HttpEmbedder],
    sleeps: list[float],
    reply: Reply,
    message: str,
) -> None:
    server.script = [reply]
    with pytest.raises(EmbeddingFailed, match=message):
        make(server.url).embed_documents(["one", "two"])
    assert len(server.seen) == 1
    assert sleeps == []


def test_connection_errors_are_retried_then_fail(
    make: Callable[..., HttpEmbedder], sleeps: list[float]
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(EmbeddingFailed, match="ConnectError") as caught:
        make(f"http://127.0.0.1:{port}", max_retries=2).embed_query("x")
    assert "3 attempts" in str(caught.value)
    assert len(sleeps) == 2


def test_timeouts_are_retried(
    server: ScriptedServer, make: Callable[..., HttpEmbedder], sleeps: list[float]
) -> None:
    server.script = [Reply(delay=1.0)]
    with pytest.raises(EmbeddingFailed, match="ReadTimeout"):
        make(server.url, timeout=0.2, max_retries=1).embed_query("x")
    assert len(server.seen) == 2
    assert len(sleeps) == 1


def test_the_key_is_sent_as_bearer_and_never_shown(
    server: ScriptedServer,
    make: Callable[..., HttpEmbedder],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {SECRET}"}}).encode()
    server.script = [Reply(500, echo), Reply(401, echo)]
    embedder = make(server.url, api_key_env=KEY_ENV)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(EmbeddingFailed) as caught:
        embedder.embed_query("x")
    assert [s.headers["authorization"] for s in server.seen] == [f"Bearer {SECRET}"] * 2
    error = caught.value
    assert "HTTP 401" in str(error)
    assert "[REDACTED]" in str(error)
    texts = [str(error), repr(error), *map(str, error.args), repr(embedder), caplog.text]
    assert all(SECRET not in text for text in texts)
    assert error.__cause__ is None
    assert error.__context__ is None
    assert "retry 1 of 3" in caplog.text


def test_the_key_is_read_at_call_time(
    server: ScriptedServer, make: Callable[..., HttpEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = make(server.url, api_key_env=KEY_ENV)
    with pytest.raises(EmbedderUnavailable, match=f"{KEY_ENV} .* is not set") as caught:
        embedder.embed_query("x")
    assert server.seen == []
    assert "api_key_env" in str(caught.value)
    monkeypatch.setenv(KEY_ENV, "first-key")
    embedder.embed_query("x")
    monkeypatch.setenv(KEY_ENV, "second-key")
    embedder.embed_query("x")
    assert [s.headers["authorization"] for s in server.seen] == [
        "Bearer first-key",
        "Bearer second-key",
    ]


def test_no_key_means_no_authorization_header(
    server: ScriptedServer, make: Callable[..., HttpEmbedder]
) -> None:
    make(server.url).embed_query("x")
    assert "authorization" not in server.seen[0].headers


def test_a_key_in_place_of_a_variable_name_is_refused_unechoed() -> None:
    with pytest.raises(EmbedderUnavailable, match="never the key itself") as caught:
        HttpEmbedder("http://localhost", "m", api_key_env=SECRET)
    assert SECRET not in str(caught.value)


def test_an_unusable_key_value_is_refused_unechoed(
    server: ScriptedServer, make: Callable[..., HttpEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET + "\nX-Injected: 1")
    with pytest.raises(EmbedderUnavailable, match="usable API key") as caught:
        make(server.url, api_key_env=KEY_ENV).embed_query("x")
    assert SECRET not in str(caught.value)
    assert server.seen == []


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com",
        "http://example.com:11434/v1",
        "http://10.0.0.5/v1",
        "http://localhost.evil.example",
        "http://127.0.0.1.nip.io",
        "http://[::ffff:127.0.0.1]/v1",
        "http://127.1/",
        "http://0x7f000001/",
        "ftp://localhost/",
        "localhost:8080",
        "https://user:pass@api.example.com/v1",
        "https://api.example.com/v1?key=abc",
        "not a url",
    ],
)
def test_refused_endpoints_fail_at_construction(url: str) -> None:
    with pytest.raises(EmbedderUnavailable):
        HttpEmbedder(url, "m", api_key_env=None, transport=httpx.MockTransport(no_network))


def test_credentials_in_the_url_are_not_echoed() -> None:
    with pytest.raises(EmbedderUnavailable) as caught:
        HttpEmbedder("https://user:hunter2@api.example.com", "m", api_key_env=None)
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("http://127.0.0.1:9", "http://127.0.0.1:9/embeddings"),
        ("http://127.5.6.7/v1/", "http://127.5.6.7/v1/embeddings"),
        ("http://localhost", "http://localhost/embeddings"),
        ("HTTP://LocalHost:8080/v1", "http://localhost:8080/v1/embeddings"),
        ("http://[::1]:8080/v1", "http://[::1]:8080/v1/embeddings"),
        ("https://api.example.com/v1", "https://api.example.com/v1/embeddings"),
    ],
)
def test_allowed_endpoints(url: str, endpoint: str) -> None:
    requested: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        requested.append(str(request.url))
        return httpx.Response(200, json=data([[3.0, 4.0]])([]))

    with HttpEmbedder(
        url, "m", api_key_env=None, transport=httpx.MockTransport(answer)
    ) as embedder:
        np.testing.assert_allclose(embedder.embed_query("x"), [0.6, 0.8], atol=1e-6)
    assert requested == [endpoint]


def test_version_names_the_model_and_host() -> None:
    transport = httpx.MockTransport(lambda r: httpx.Response(200, json=data([[1.0, 0.0]])([])))
    embedder = HttpEmbedder(
        "https://api.example.com/v1",
        "text-embedding-3-small",
        api_key_env=None,
        transport=transport,
    )
    assert embedder.info.name == "http:text-embedding-3-small"
    assert embedder.info.version == "text-embedding-3-small@api.example.com"
    assert embedder.info.dim == 2


def test_loopback_ignores_proxy_settings(
    server: ScriptedServer, make: Callable[..., HttpEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{dead}")
    monkeypatch.setenv("ALL_PROXY", f"http://127.0.0.1:{dead}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert make(server.url, max_retries=0).embed_query("x").shape == (DIM,)
    assert len(server.seen) == 1


def test_bad_options_are_refused() -> None:
    for options in ({"batch_size": 0}, {"timeout": 0}, {"max_retries": -1}, {"dimensions": 0}):
        with pytest.raises(EmbedderUnavailable):
            HttpEmbedder("http://localhost", "m", api_key_env=None, **options)  # type: ignore[arg-type]
    with pytest.raises(EmbedderUnavailable, match="model name"):
        HttpEmbedder("http://localhost", " ", api_key_env=None)


def test_factory_builds_http(server: ScriptedServer) -> None:
    embedder = make_embedder("http", base_url=server.url, model="test-embed", api_key_env=None)
    assert isinstance(embedder, HttpEmbedder)
    assert embedder.info.dim == DIM
    embedder.close()
