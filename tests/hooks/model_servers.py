"""Scripted model servers on loopback for driving the real agent CLIs offline.

Each server records every request (method, path, headers, JSON body) and answers from a
script of reply texts, in the wire format its client expects:

- `AnthropicServer`: the Messages API (`POST /v1/messages`, streamed SSE or plain JSON),
  for Claude Code (`ANTHROPIC_BASE_URL` = `base_url`).
- `ResponsesServer`: the OpenAI Responses API (`POST /v1/responses`, streamed SSE), for
  Codex (a `[model_providers.*]` entry whose `base_url` = `base_url`, which ends in `/v1`).
- `GeminiServer`: `generateContent` and `streamGenerateContent` (SSE with `alt=sse`), for
  Gemini CLI (`GOOGLE_GEMINI_BASE_URL` = `base_url`).
- `ChatCompletionsServer`: OpenAI-compatible `POST /v1/chat/completions` (not streamed),
  for memdir's own extraction model (`base_url` ends in `/v1`).

Every server is a context manager: ``with AnthropicServer(["hi"]) as srv: srv.base_url``.
The reply texts are used in order and the last one repeats; pass a callable instead to choose
the reply from the request (return None to fall through to the script).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self
from urllib.parse import parse_qs, urlsplit

from loopback import serving

JSON = dict[str, Any]


@dataclass
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    raw: bytes = b""

    @property
    def route(self) -> str:
        """The path without its query string."""
        return urlsplit(self.path).path

    def text(self) -> str:
        """The body as JSON text (for `in` checks over the whole request)."""
        return json.dumps(self.body, ensure_ascii=False)


Responder = Callable[[RecordedRequest], "str | None"]


@dataclass
class Script:
    """Reply texts in order (the last repeats), or chosen by `responder` when it answers."""

    replies: list[str] = field(default_factory=lambda: ["OK"])
    responder: Responder | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, request: RecordedRequest) -> str:
        if self.responder is not None:
            chosen = self.responder(request)
            if chosen is not None:
                return chosen
        with self.lock:
            if not self.replies:
                return "OK"
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"

    def _record(self) -> RecordedRequest:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        parts = urlsplit(self.path)
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            query=parse_qs(parts.query),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
        )
        with self.server.lock:
            self.server.requests.append(request)
        return request

    def _dispatch(self) -> None:
        request = self._record()
        with suppress(BrokenPipeError, ConnectionResetError):
            self.server.owner.handle(self, request)

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def do_HEAD(self) -> None:
        self._record()
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def send_json(self, payload: Any, status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events: Iterable[tuple[str | None, Any]]) -> None:
        """Stream `(event name or None, JSON data)` pairs, then close the connection."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for name, data in events:
            chunk = f"event: {name}\n" if name else ""
            chunk += f"data: {json.dumps(data)}\n\n"
            self.wfile.write(chunk.encode())
            self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: ModelServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner
        self.requests: list[RecordedRequest] = []
        self.lock = threading.Lock()


class ModelServer(AbstractContextManager["ModelServer"]):
    """A scripted HTTP model server on 127.0.0.1 (a free port), serving while entered."""

    #: What follows the root in `base_url` (what the client is configured with).
    base_suffix: ClassVar[str] = ""

    def __init__(
        self, replies: Iterable[str] | Responder | None = None, *, model: str = "scripted-model"
    ) -> None:
        if callable(replies):
            self.script = Script(responder=replies)
        else:
            self.script = Script(list(replies) if replies is not None else ["OK"])
        self.model = model
        self._http = _HTTPServer(self)
        self._serving: AbstractContextManager[_HTTPServer] | None = None

    # -- context manager -------------------------------------------------------------------

    def __enter__(self) -> Self:
        self._serving = serving(self._http)
        self._serving.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._serving is not None:
            self._serving.__exit__(exc_type, exc, tb)
            self._serving = None

    # -- what tests read -------------------------------------------------------------------

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    @property
    def base_url(self) -> str:
        return self.root + self.base_suffix

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far (a copy)."""
        with self._http.lock:
            return list(self._http.requests)

    def model_requests(self) -> list[RecordedRequest]:
        """The requests that asked the model for a reply."""
        return [r for r in self.requests if self.is_model_request(r)]

    def reply(self, *texts: str) -> None:
        """Replace the scripted replies (the last repeats)."""
        with self.script.lock:
            self.script.replies = list(texts)

    # -- per API ---------------------------------------------------------------------------

    def is_model_request(self, request: RecordedRequest) -> bool:
        raise NotImplementedError

    def handle(self, handler: _Handler, request: RecordedRequest) -> None:
        raise NotImplementedError


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


class AnthropicServer(ModelServer):
    """The Anthropic Messages API: `POST /v1/messages` (streamed or not), token counting."""

    def is_model_request(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and request.route == "/v1/messages"

    def handle(self, handler: _Handler, request: RecordedRequest) -> None:
        body = request.body if isinstance(request.body, dict) else {}
        if request.method == "POST" and request.route == "/v1/messages/count_tokens":
            handler.send_json({"input_tokens": max(1, len(request.raw) // 4)})
            return
        if not self.is_model_request(request):
            if request.method == "GET":
                handler.send_json({"data": [], "has_more": False})
            else:
                handler.send_json(
                    {"type": "error", "error": {"type": "not_found_error", "message": "no"}}, 404
                )
            return
        text = self.script.next(request)
        model = str(body.get("model") or self.model)
        message_id = _new_id("msg")
        usage = {"input_tokens": max(1, len(request.raw) // 4), "output_tokens": len(text) // 4}
        if not body.get("stream"):
            handler.send_json(
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": usage,
                }
            )
            return
        start: JSON = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": 1},
        }
        events: list[tuple[str | None, Any]] = [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": text},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": usage["output_tokens"]},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        handler.send_sse(events)


class ResponsesServer(ModelServer):
    """The OpenAI Responses API as Codex uses it: `POST /v1/responses`, streamed SSE."""

    base_suffix = "/v1"

    def is_model_request(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and request.route == "/v1/responses"

    def handle(self, handler: _Handler, request: RecordedRequest) -> None:
        if request.method == "GET" and request.route == "/v1/models":
            handler.send_json({"object": "list", "data": [], "models": []})
            return
        if not self.is_model_request(request):
            handler.send_json({"error": {"message": "not found", "type": "not_found"}}, 404)
            return
        text = self.script.next(request)
        response_id = _new_id("resp")
        item_id = _new_id("msg")
        item = {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress"}
        done_item = {
            **item,
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        input_tokens = max(1, len(request.raw) // 4)
        output_tokens = max(1, len(text) // 4)
        usage = {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        }
        events: list[tuple[str | None, Any]] = [
            (
                "response.created",
                {
                    "type": "response.created",
                    "response": {"id": response_id, "status": "in_progress"},
                },
            ),
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": {**item, "content": []},
                },
            ),
            (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item_id,
                    "output_index": 0,
                    "content_index": 0,
                    "delta": text,
                },
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": done_item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {
                        "id": response_id,
                        "status": "completed",
                        "output": [done_item],
                        "usage": usage,
                    },
                },
            ),
        ]
        handler.send_sse(events)


class GeminiServer(ModelServer):
    """The Gemini API: `models/<m>:generateContent`, `:streamGenerateContent` (`alt=sse`)
    and `:countTokens`, under any version prefix (`/v1beta/...`)."""

    def is_model_request(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and request.route.endswith(
            (":generateContent", ":streamGenerateContent")
        )

    def handle(self, handler: _Handler, request: RecordedRequest) -> None:
        route = request.route
        if route.endswith(":countTokens"):
            handler.send_json({"totalTokens": max(1, len(request.raw) // 4)})
            return
        if route.endswith(":embedContent"):
            handler.send_json({"embedding": {"values": [0.0] * 8}})
            return
        if not self.is_model_request(request):
            if request.method == "GET":
                handler.send_json({"models": []})
            else:
                handler.send_json({"error": {"code": 404, "message": "not found"}}, 404)
            return
        text = self.script.next(request)
        prompt_tokens = max(1, len(request.raw) // 4)
        answer = {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": text}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": prompt_tokens,
                "candidatesTokenCount": max(1, len(text) // 4),
                "totalTokenCount": prompt_tokens + max(1, len(text) // 4),
            },
            "modelVersion": self.model,
        }
        if route.endswith(":streamGenerateContent"):
            if request.query.get("alt") == ["sse"]:
                handler.send_sse([(None, answer)])
            else:
                handler.send_json([answer])
            return
        handler.send_json(answer)


class ChatCompletionsServer(ModelServer):
    """An OpenAI-compatible `POST /v1/chat/completions` (not streamed): memdir's extraction
    model. Replies are message contents (e.g. ``json.dumps({"notes": [...]})``)."""

    base_suffix = "/v1"

    def is_model_request(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and request.route == "/v1/chat/completions"

    def handle(self, handler: _Handler, request: RecordedRequest) -> None:
        if not self.is_model_request(request):
            handler.send_json({"error": {"message": "not found", "type": "not_found"}}, 404)
            return
        body = request.body if isinstance(request.body, dict) else {}
        text = self.script.next(request)
        handler.send_json(
            {
                "id": _new_id("chatcmpl"),
                "object": "chat.completion",
                "model": str(body.get("model") or self.model),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )


def last_model_request(server: ModelServer) -> JSON:
    """The JSON body of the server's last model request (KeyError-free: {} when none)."""
    found = server.model_requests()
    body = found[-1].body if found else {}
    return body if isinstance(body, dict) else {}


def iter_texts(value: Any) -> Iterator[str]:
    """Every string anywhere in a JSON value (to search a request for injected text)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from iter_texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from iter_texts(item)
