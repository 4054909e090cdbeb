"""Extraction tests: a scripted OpenAI-compatible chat server on loopback, and helpers."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion(content: str) -> bytes:
    """A chat completion whose first choice answers `content`."""
    return json.dumps(
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
    ).encode()


def notes_answer(*notes: dict[str, Any]) -> bytes:
    """A completion answering ``{"notes": [...]}``."""
    return completion(json.dumps({"notes": list(notes)}))


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """Every message's content, joined."""
        return "\n".join(str(m.get("content")) for m in self.body.get("messages", []))


class ChatServer(ThreadingHTTPServer):
    """Answers POSTs from `script` in order; the last reply repeats."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: list[Reply] = [Reply(body=notes_answer())]
        self.seen: list[Seen] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def answer(self, *replies: Reply | bytes) -> None:
        self.script = [r if isinstance(r, Reply) else Reply(body=r) for r in replies]

    def next_reply(self) -> Reply:
        with self.lock:
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]


class _Handler(BaseHTTPRequestHandler):
    server: ChatServer

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.server.lock:
            self.server.seen.append(Seen(self.path, headers, json.loads(raw)))
        reply = self.server.next_reply()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply.body)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


ON_STOP = "[memory.autoExtract]\nonStop = true\nonCompaction = true\n"


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, **extra}


def assistant(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **extra}


#: A short conversation about deploys, the input of most extraction tests.
TALK = [
    user("Our deploys use the blue green strategy on the staging cluster"),
    assistant("Noted: blue green deploys on staging."),
    user("Also the release checklist lives in the wiki"),
    assistant("I will remember where the checklist lives."),
    user("Thanks, that is all for the deploy topic"),
]
