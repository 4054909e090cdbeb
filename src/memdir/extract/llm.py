"""A small OpenAI-compatible chat client for extraction, held to the HTTP rules of SPEC §3.

The rules are the embedding client's (`memdir.embed._http`, whose pure helpers are reused):
HTTPS for remote hosts, plain HTTP only to a loopback host written literally in the URL;
redirects are refused; a request is retried at most `max_retries` times and only after a
connection error or timeout, HTTP 429 (honouring ``Retry-After``) or HTTP 500/502/503/504.
The API key is read from the environment variable named by `api_key_env` for each request
and is never stored, logged or put in an exception message. One completion — connecting,
reading, retries, waits and the retry without JSON mode — ends by `deadline` seconds
(`llm.deadlineSeconds`), and an answer over 4 MiB is refused as soon as it passes that
size, never read whole (`memdir.outbound.post_json`).
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import httpx

from memdir.config import LlmSettings
from memdir.errors import ErrorKind, MemdirError
from memdir.outbound import Deadline, RequestFailed, api_key, endpoint, post_json

__all__ = ["ChatClient", "ChatFailed", "ChatUnavailable", "HttpChatClient", "client_from_settings"]

log = logging.getLogger(__name__)

_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,127}")
#: How large an answer may be before it is refused, the rest unread (a model loop, a
#: hostile server): a checked answer (§10) is at most some 300 KiB of JSON, extraction's
#: notes far less.
MAX_ANSWER_BYTES = 4 << 20


class ChatUnavailable(MemdirError):
    """Raised when no usable chat endpoint is configured (URL, model or key variable)."""

    kind = ErrorKind.UNAVAILABLE


class ChatFailed(MemdirError):
    """Raised when a chat request fails after the allowed retries, or its answer is unusable."""

    kind = ErrorKind.UNAVAILABLE


class ChatClient(Protocol):
    """What extraction needs from a model: one answer text for a list of chat messages."""

    def complete(self, messages: Sequence[Mapping[str, Any]], *, json_mode: bool = False) -> str:
        """The assistant's answer text; `json_mode` asks for a JSON object when supported."""
        ...


class HttpChatClient:
    """POST ``{base_url}/chat/completions``; `complete` for text, `message` for tool use."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = None,
        timeout: float = 120,
        max_retries: int = 3,
        temperature: float | None = 0.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        deadline: float = LlmSettings().deadline_seconds,
        deadline_setting: str | None = None,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ChatUnavailable("the chat endpoint needs a model name (llm.model)")
        if api_key_env is not None and not _ENV_NAME.fullmatch(api_key_env):
            # Not echoed: the usual mistake is the key itself in place of the name.
            raise ChatUnavailable(
                "api_key_env must be the name of an environment variable holding the key "
                "(upper case, e.g. OPENAI_API_KEY), never the key itself"
            )
        if not timeout > 0 or max_retries < 0:
            raise ChatUnavailable("timeout must be positive and max_retries 0 or more")
        if not (math.isfinite(deadline) and deadline > 0) or max_answer_bytes < 1:
            raise ChatUnavailable("deadline and max_answer_bytes must be positive")
        self._endpoint, loopback = _endpoint_for(base_url)
        self._model = model
        self._api_key_env = api_key_env
        self._max_retries = max_retries
        self._temperature = temperature
        self._sleep = sleep
        self._deadline = float(deadline)
        self._deadline_setting = deadline_setting
        self._max_answer_bytes = max_answer_bytes
        # Learned from a 400 that names response_format: the endpoint does not support it.
        self._json_mode_supported = True
        self._client = httpx.Client(
            transport=transport, timeout=timeout, follow_redirects=False, trust_env=not loopback
        )

    @property
    def endpoint(self) -> str:
        """The chat completions URL requests go to."""
        return str(self._endpoint)

    def complete(self, messages: Sequence[Mapping[str, Any]], *, json_mode: bool = False) -> str:
        """The answer text of one completion (JSON mode is dropped if the endpoint lacks it)."""
        message = self.message(messages, json_mode=json_mode)
        content = message.get("content")
        if not isinstance(content, str):
            raise ChatFailed(f"the chat endpoint {self._endpoint} returned no text content")
        return content

    def message(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        json_mode: bool = False,
    ) -> dict[str, Any]:
        """The assistant message of one completion (content and any `tool_calls`); the
        whole of it, a retry without JSON mode included, ends by the client's deadline."""
        deadline = Deadline.start(self._deadline, self._deadline_setting)
        body: dict[str, Any] = {"model": self._model, "messages": list(messages)}
        if self._temperature is not None:
            body["temperature"] = self._temperature
        if tools:
            body["tools"] = list(tools)
        wants_json = json_mode and self._json_mode_supported
        if wants_json:
            body["response_format"] = {"type": "json_object"}
        try:
            payload = self._post(body, deadline)
        except _JsonModeRefused:
            self._json_mode_supported = False
            body.pop("response_format", None)
            payload = self._post(body, deadline)
        return self._first_message(payload)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def __enter__(self) -> HttpChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"HttpChatClient(endpoint={str(self._endpoint)!r}, model={self._model!r}, "
            f"api_key_env={self._api_key_env!r})"
        )

    def _api_key(self) -> str | None:
        try:
            return api_key(self._api_key_env, "llm.apiKeyEnv")
        except ValueError as exc:
            raise ChatUnavailable(str(exc)) from None

    def _post(self, body: dict[str, Any], deadline: Deadline) -> Any:
        """One request with bounded retries; the key never leaves this frame."""

        def check(status: int, detail: str) -> None:
            if status == 400 and "response_format" in body and "response_format" in detail:
                raise _JsonModeRefused

        try:
            response = post_json(
                self._client,
                self._endpoint,
                body,
                key=self._api_key(),
                what="chat",
                redirect_hint="llm.url",
                max_retries=self._max_retries,
                sleep=self._sleep,
                deadline=deadline,
                max_bytes=self._max_answer_bytes,
                check=check,
            )
        except RequestFailed as exc:
            failure = str(exc)
        else:
            return self._json(response)
        # Raised outside the except clause: nothing is chained to it, not even as context.
        raise ChatFailed(failure)

    def _json(self, response: httpx.Response) -> Any:
        # post_json read at most max_answer_bytes: a larger answer was refused there.
        try:
            return response.json()
        except ValueError:
            raise ChatFailed(
                f"the chat endpoint {self._endpoint} returned malformed JSON "
                f"(HTTP {response.status_code})"
            ) from None

    def _first_message(self, payload: Any) -> dict[str, Any]:
        choices = payload.get("choices") if isinstance(payload, dict) else None
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise ChatFailed(f"the chat endpoint {self._endpoint} returned no choices[0].message")
        return message


class _JsonModeRefused(Exception):
    """The endpoint rejected `response_format`; the request is repeated without it."""


def _endpoint_for(base_url: str) -> tuple[httpx.URL, bool]:
    """The chat completions URL under `base_url` and whether it is loopback, or a refusal."""
    try:
        return endpoint(base_url, "chat/completions", what="chat", key_setting="llm.apiKeyEnv")
    except ValueError as exc:
        raise ChatUnavailable(str(exc)) from None


def client_from_settings(settings: LlmSettings, **options: Any) -> HttpChatClient:
    """The client that `llm.url`, `llm.model` and `llm.apiKeyEnv` (user config) describe."""
    if not settings.url or not settings.model:
        raise ChatUnavailable(
            "no model is configured (extraction, merge drafts and --confirm-with-llm use one): "
            "set llm.url and llm.model "
            "(and llm.apiKeyEnv if the endpoint needs a key) in the user config"
        )
    options.setdefault("deadline", settings.deadline_seconds)
    options.setdefault("deadline_setting", "llm.deadlineSeconds")
    return HttpChatClient(settings.url, settings.model, api_key_env=settings.api_key_env, **options)
