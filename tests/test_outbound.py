"""Tests for `outbound.py`: which endpoints may be called, retry timing and safe error text."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from answer.model_faults import FloodServer, SilentServer
from loopback import serving
from memdir.config import LlmSettings
from memdir.embed import EmbeddingFailed, HttpEmbedder
from memdir.extract import ChatFailed, client_from_settings
from memdir.outbound import (
    Deadline,
    RequestFailed,
    api_key,
    backoff,
    detail,
    endpoint,
    is_loopback,
    post_json,
    redact_key,
    retry_after,
)

KEY = "sk-" + "outbound-test-key-42"


def test_endpoint_appends_the_suffix_and_says_whether_it_is_loopback() -> None:
    url, loopback = endpoint("https://api.example.com/v1/", "embeddings", what="x", key_setting="k")
    assert (str(url), loopback) == ("https://api.example.com/v1/embeddings", False)
    url, loopback = endpoint("http://localhost:8080", "v1", what="x", key_setting="k")
    assert (str(url), loopback) == ("http://localhost:8080/v1", True)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://api.example.com", "plain HTTP is allowed only to loopback"),
        ("ftp://127.0.0.1", "must start with https://"),
        ("https://user:pw@api.example.com", "must not carry credentials"),
        ("https://api.example.com/?key=1", "query or fragment"),
        ("https://api.example.com/#x", "query or fragment"),
        ("not a url", "must start with https://"),
    ],
)
def test_endpoint_refuses_unsafe_urls(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        endpoint(url, "v1", what="chat", key_setting="llm.apiKeyEnv")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("LOCALHOST", True),
        ("127.0.0.9", True),
        ("::1", True),
        ("::ffff:127.0.0.1", False),
        ("10.0.0.1", False),
        ("localhost.example.com", False),
    ],
)
def test_is_loopback_decides_from_the_host_as_written(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_retry_after_in_seconds_or_as_a_date_within_the_cap() -> None:
    assert retry_after(None) is None
    assert retry_after("2") == 2.0
    assert retry_after("-5") == 0.0
    assert retry_after("999") == 30.0
    assert retry_after("999", cap=1000.0) == 999.0
    assert retry_after("nan") is None
    assert retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 20, usegmt=True)
    assert 15.0 <= (retry_after(later) or 0.0) <= 20.0


@pytest.mark.parametrize("attempt", [0, 1, 2, 10])
def test_backoff_is_half_fixed_half_jitter_and_capped(attempt: int) -> None:
    step = min(8.0, 0.5 * 2.0**attempt)
    for _ in range(20):
        assert step / 2 <= backoff(attempt) <= step


def test_detail_is_short_single_line_and_never_holds_the_key() -> None:
    long = httpx.Response(400, json={"error": {"message": f"bad {KEY}\nline two " + "x" * 500}})
    text = detail(long, KEY)
    assert text.startswith(": bad [REDACTED] line two")
    assert KEY not in text and "\n" not in text and len(text) <= 202
    assert detail(httpx.Response(500, text="plain failure"), None) == ": plain failure"
    assert detail(httpx.Response(500, text=""), None) == ""
    assert redact_key(f"a {KEY} b {KEY}", KEY) == "a [REDACTED] b [REDACTED]"
    assert redact_key("text", None) == "text"


def test_api_key_names_the_variable_never_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    assert api_key(None, "llm.apiKeyEnv") is None
    monkeypatch.delenv("MEMDIR_TEST_KEY", raising=False)
    with pytest.raises(ValueError, match=r"MEMDIR_TEST_KEY \(llm\.apiKeyEnv\) is not set"):
        api_key("MEMDIR_TEST_KEY", "llm.apiKeyEnv")
    monkeypatch.setenv("MEMDIR_TEST_KEY", "two words")
    with pytest.raises(ValueError) as info:
        api_key("MEMDIR_TEST_KEY", "llm.apiKeyEnv")
    assert "two words" not in str(info.value)
    monkeypatch.setenv("MEMDIR_TEST_KEY", KEY)
    assert api_key("MEMDIR_TEST_KEY", "llm.apiKeyEnv") == KEY


def post(answers: list[httpx.Response], sleeps: list[float], retries: int = 2) -> httpx.Response:
    replies = iter(answers)
    client = httpx.Client(transport=httpx.MockTransport(lambda request: next(replies)))
    url = httpx.URL("http://127.0.0.1:9/v1/x")
    return post_json(
        client,
        url,
        {"q": 1},
        key=KEY,
        what="test",
        redirect_hint="x.url",
        max_retries=retries,
        sleep=sleeps.append,
        deadline=Deadline.start(60),
        max_bytes=1 << 20,
    )


def test_post_json_retries_transient_answers_and_honours_retry_after() -> None:
    sleeps: list[float] = []
    answers = [
        httpx.Response(429, headers={"Retry-After": "3"}),
        httpx.Response(503),
        httpx.Response(200, json={"ok": True}),
    ]
    assert post(answers, sleeps).json() == {"ok": True}
    assert sleeps[0] == 3.0 and len(sleeps) == 2


def test_post_json_gives_up_without_leaking_the_key() -> None:
    sleeps: list[float] = []
    with pytest.raises(RequestFailed) as info:
        post([httpx.Response(500, text=f"echo {KEY}")] * 3, sleeps)
    assert "(3 attempts)" in str(info.value) and KEY not in str(info.value)
    assert len(sleeps) == 2
    with pytest.raises(RequestFailed, match="redirect"):
        post([httpx.Response(307, headers={"Location": "http://127.0.0.1:9/y"})], [])
    with pytest.raises(RequestFailed, match=r"\(1 attempt\): HTTP 400"):
        post([httpx.Response(400)], [])


# -- streaming, the size cap and the deadline ----------------------------------------------------


class FakeClock:
    """A clock that only moves when told to (or when `sleep` is called)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def send(
    handler: Callable[[httpx.Request], httpx.Response],
    *,
    deadline: Deadline,
    sleep: Callable[[float], None],
    max_bytes: int = 1 << 20,
    retries: int = 3,
) -> httpx.Response:
    client = httpx.Client(transport=httpx.MockTransport(handler))
    return post_json(
        client,
        httpx.URL("http://127.0.0.1:9/v1/chat/completions"),
        {"q": 1},
        key=KEY,
        what="chat",
        redirect_hint="llm.url",
        max_retries=retries,
        sleep=sleep,
        deadline=deadline,
        max_bytes=max_bytes,
    )


def stream_of(total: int, counter: list[int]) -> Iterator[bytes]:
    """`total` bytes in 64 KiB pieces, counting in `counter[0]` how many were taken."""
    while counter[0] < total:
        piece = b"x" * min(65536, total - counter[0])
        counter[0] += len(piece)
        yield piece


def test_a_deadline_says_how_long_and_which_setting_changes_it() -> None:
    clock = FakeClock()
    deadline = Deadline.start(2, "llm.deadlineSeconds", clock=clock)
    assert deadline.remaining() == 2.0
    assert deadline.describe() == "the 2 s deadline (llm.deadlineSeconds sets it)"
    clock.now += 2.5
    assert deadline.remaining() == -0.5
    assert Deadline.start(0.5).describe() == "the 0.5 s deadline"
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="positive"):
            Deadline.start(bad)


def test_an_answer_past_the_cap_is_refused_as_it_streams() -> None:
    taken = [0]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=_Stream(taken))

    with pytest.raises(
        RequestFailed, match=r"larger than 1 MiB.*refused without reading the rest"
    ) as info:
        send(handler, deadline=Deadline.start(60), sleep=time.sleep)
    assert KEY not in str(info.value)
    assert taken[0] <= (1 << 20) + 65536  # one piece past the cap, never the 200 MiB


class _Stream(httpx.SyncByteStream):
    """200 MiB of body, produced only as it is read."""

    def __init__(self, taken: list[int], total: int = 200 << 20) -> None:
        self.taken = taken
        self.total = total

    def __iter__(self) -> Iterator[bytes]:
        return stream_of(self.total, self.taken)


def test_a_declared_length_past_the_cap_is_refused_before_reading() -> None:
    taken = [0]

    def handler(request: httpx.Request) -> httpx.Response:
        headers = {"Content-Length": str(200 << 20)}
        return httpx.Response(200, headers=headers, stream=_Stream(taken))

    with pytest.raises(RequestFailed, match="larger than 1 MiB"):
        send(handler, deadline=Deadline.start(60), sleep=time.sleep)
    assert taken[0] == 0


def test_an_answer_within_the_cap_is_returned_whole() -> None:
    body = b'{"ok": "' + b"y" * 1000 + b'"}'
    answer = send(
        lambda request: httpx.Response(200, content=body),
        deadline=Deadline.start(60),
        sleep=time.sleep,
        max_bytes=len(body),
    )
    assert answer.content == body and answer.json()["ok"] == "y" * 1000


def test_an_error_answer_is_read_to_64_kib_only() -> None:
    taken = [0]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, stream=_Stream(taken))

    with pytest.raises(RequestFailed, match=r"\(1 attempt\): HTTP 400: x+…"):
        send(handler, deadline=Deadline.start(60), sleep=time.sleep)
    assert taken[0] <= (64 << 10) + 65536


def test_a_wait_past_the_deadline_is_not_started() -> None:
    clock = FakeClock()
    calls: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(clock())
        return httpx.Response(429, headers={"Retry-After": "20"}, json={"error": "busy"})

    deadline = Deadline.start(30, "llm.deadlineSeconds", clock=clock)
    with pytest.raises(RequestFailed) as info:
        send(handler, deadline=deadline, sleep=clock.sleep)
    # One 20 s wait fits in 30 s; the second would end at 40 s: it is not slept.
    assert clock.sleeps == [20.0] and len(calls) == 2
    message = str(info.value)
    assert "stopped before the 30 s deadline (llm.deadlineSeconds sets it)" in message
    assert "the endpoint asked to wait 20.0 s and 10.0 s are left" in message
    assert "2 attempts; last: HTTP 429: busy" in message


def test_backoff_past_the_deadline_is_not_started_either() -> None:
    clock = FakeClock()
    deadline = Deadline.start(0.2, clock=clock)
    with pytest.raises(RequestFailed, match=r"the next retry is due in \d\.\d s"):
        send(lambda request: httpx.Response(503), deadline=deadline, sleep=clock.sleep)
    assert clock.sleeps == []  # the first backoff is 0.25 s at least


def test_a_deadline_already_passed_sends_nothing() -> None:
    clock = FakeClock()
    deadline = Deadline.start(1, "x.deadline", clock=clock)
    clock.now += 5
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json={})

    with pytest.raises(RequestFailed, match=r"within the 1 s deadline \(x.deadline sets it\)"):
        send(handler, deadline=deadline, sleep=clock.sleep)
    assert calls == []


def test_the_request_asks_for_an_uncompressed_answer_and_bounded_timeouts() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={})

    send(handler, deadline=Deadline.start(3), sleep=time.sleep)
    (request,) = seen
    assert request.headers["Accept-Encoding"] == "identity"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    timeouts = request.extensions["timeout"]
    assert all(0 < value <= 3.5 for value in timeouts.values())  # the deadline, plus grace


# -- every caller gets the cap and the deadline ---------------------------------------------------


def test_the_embedder_refuses_a_flood_and_ends_at_its_deadline() -> None:
    with serving(FloodServer(200 << 20)) as flood:
        embedder = HttpEmbedder(flood.url, "e5", api_key_env=None)
        with embedder, pytest.raises(EmbeddingFailed, match=r"larger than 1280 KiB"):
            embedder.embed_query("x")  # 1 MiB + 256 KiB for one text
        assert flood.sent < 64 << 20
    with serving(SilentServer()) as silent:
        began = time.monotonic()
        embedder = HttpEmbedder(silent.url, "e5", api_key_env=None, deadline=1)
        late = r"within the 1 s deadline \(1 attempt, the last still unanswered\)"
        with embedder, pytest.raises(EmbeddingFailed, match=late):
            embedder.embed_query("x")
        assert 1 <= time.monotonic() - began < 30


def test_the_chat_client_takes_its_deadline_from_the_settings() -> None:
    with serving(SilentServer()) as silent:
        settings = LlmSettings(url=silent.url, model="m", deadline_seconds=1.0)
        began = time.monotonic()
        with client_from_settings(settings) as chat, pytest.raises(ChatFailed) as info:
            chat.complete([{"role": "user", "content": "hi"}], json_mode=True)
        took = time.monotonic() - began
    assert "within the 1 s deadline (llm.deadlineSeconds sets it)" in str(info.value)
    assert 1 <= took < 30
