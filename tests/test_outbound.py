"""Tests for `outbound.py`: which endpoints may be called, retry timing and safe error text."""

from __future__ import annotations

import email.utils
import time

import httpx
import pytest

from memdir.outbound import (
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
