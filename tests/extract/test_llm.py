"""HttpChatClient against a scripted loopback server: JSON mode, retries, redirects, keys."""

from __future__ import annotations

import json

import pytest

from memdir.config import LlmSettings
from memdir.extract import ChatFailed, ChatUnavailable, HttpChatClient, client_from_settings

from . import ChatServer, Reply, completion

KEY_ENV = "MEMDIR_TEST_LLM_KEY"
KEY = "sk-test-" + "Zr81vQ2mX4pL7nB0cD5eF9gH"
MESSAGES = [{"role": "user", "content": "hello"}]


def test_completes_with_json_mode_and_the_named_key(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    server.answer(completion('{"notes": []}'))
    with HttpChatClient(server.url, "small-model", api_key_env=KEY_ENV) as client:
        assert client.complete(MESSAGES, json_mode=True) == '{"notes": []}'
        assert KEY not in repr(client)
    (seen,) = server.seen
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.body["model"] == "small-model"
    assert seen.body["messages"] == MESSAGES
    assert seen.body["response_format"] == {"type": "json_object"}


def test_json_mode_is_dropped_when_the_endpoint_refuses_it(
    server: ChatServer, chat: HttpChatClient
) -> None:
    refusal = json.dumps({"error": {"message": "response_format is not supported"}}).encode()
    server.answer(Reply(400, refusal), completion("{}"))
    assert chat.complete(MESSAGES, json_mode=True) == "{}"
    assert chat.complete(MESSAGES, json_mode=True) == "{}"
    assert [("response_format" in s.body) for s in server.seen] == [True, False, False]


def test_500_then_success_is_retried(
    server: ChatServer, chat: HttpChatClient, sleeps: list[float]
) -> None:
    server.answer(Reply(500, b'{"error": "busy"}'), completion("ok"))
    assert chat.complete(MESSAGES) == "ok"
    assert len(server.seen) == 2
    assert len(sleeps) == 1


def test_429_honours_retry_after(
    server: ChatServer, chat: HttpChatClient, sleeps: list[float]
) -> None:
    server.answer(Reply(429, b"{}", {"Retry-After": "2"}), completion("ok"))
    assert chat.complete(MESSAGES) == "ok"
    assert sleeps == [2.0]


def test_retries_are_bounded_and_the_key_is_never_echoed(
    server: ChatServer, sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    echo = json.dumps({"error": {"message": f"bad gateway for key {KEY}"}}).encode()
    server.answer(Reply(502, echo))
    client = HttpChatClient(
        server.url, "m", api_key_env=KEY_ENV, max_retries=2, sleep=sleeps.append
    )
    with pytest.raises(ChatFailed) as info:
        client.complete(MESSAGES)
    client.close()
    assert len(server.seen) == 3
    assert "3 attempts" in str(info.value)
    assert KEY not in str(info.value)


def test_4xx_is_not_retried(server: ChatServer, chat: HttpChatClient) -> None:
    server.answer(Reply(401, b'{"error": {"message": "no"}}'))
    with pytest.raises(ChatFailed, match="HTTP 401"):
        chat.complete(MESSAGES)
    assert len(server.seen) == 1


def test_redirects_are_refused(server: ChatServer, chat: HttpChatClient) -> None:
    elsewhere = server.url + "/elsewhere"
    server.answer(Reply(307, b"", {"Location": elsewhere}), completion("followed"))
    with pytest.raises(ChatFailed, match="redirect"):
        chat.complete(MESSAGES)
    assert [s.path for s in server.seen] == ["/v1/chat/completions"]


@pytest.mark.parametrize(
    "body",
    [b"not json", b'{"choices": []}', b'{"choices": [{"message": {"content": null}}]}'],
)
def test_unusable_answers_fail_cleanly(
    server: ChatServer, chat: HttpChatClient, body: bytes
) -> None:
    server.answer(Reply(200, body))
    with pytest.raises(ChatFailed):
        chat.complete(MESSAGES)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://example.com/v1", "plain HTTP"),
        ("ftp://127.0.0.1/v1", "https://"),
        ("https://user:pw@example.com/v1", "credentials"),
        ("https://example.com/v1?x=1", "query"),
    ],
)
def test_url_rules(url: str, problem: str) -> None:
    with pytest.raises(ChatUnavailable, match=problem):
        HttpChatClient(url, "m")


def test_https_and_loopback_urls_are_accepted() -> None:
    with HttpChatClient("https://api.example.com/v1/", "m") as client:
        assert client.endpoint == "https://api.example.com/v1/chat/completions"
    with HttpChatClient("http://localhost:11434/v1", "m") as client:
        assert client.endpoint.startswith("http://localhost:11434/")


def test_a_key_in_place_of_the_variable_name_is_refused_without_echo() -> None:
    with pytest.raises(ChatUnavailable) as info:
        HttpChatClient("https://api.example.com/v1", "m", api_key_env=KEY)
    assert KEY not in str(info.value)


def test_an_unset_key_variable_is_named(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with (
        HttpChatClient(server.url, "m", api_key_env=KEY_ENV) as client,
        pytest.raises(ChatUnavailable, match=KEY_ENV),
    ):
        client.complete(MESSAGES)
    assert server.seen == []


def test_client_from_settings_needs_url_and_model() -> None:
    with pytest.raises(ChatUnavailable, match=r"llm\.url"):
        client_from_settings(LlmSettings())
    client = client_from_settings(LlmSettings(url="https://api.example.com/v1", model="m"))
    assert client.endpoint.endswith("/chat/completions")
    client.close()
