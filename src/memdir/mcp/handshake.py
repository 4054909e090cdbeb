"""The stdio wire of `memdir mcp serve`, and the handshake answered before the SDK loads.

Importing the MCP SDK and building the server takes most of a second on a small machine,
and a client waits for its `initialize` answer first (some with a time-out). So the
command claims the wire at once, reads the first message, and when it is a well-formed
`initialize` request answers it from what is known without the SDK: the revision agreed
(the one asked for when memdir serves it, else the newest handshake revision, as the SDK
agrees it), the capabilities, the server's name and the instructions.
`tests/mcp/test_handshake.py` compares that answer with the SDK's own for every revision.

Once the SDK is loaded it is handed that first message before anything else on the wire,
and its own answer to it is dropped: its session is then in the state the client
believes it is in, and the requests that followed meanwhile waited in the pipe. A first
message of any other kind (`server/discover`, a stateless request, something malformed) is
left to the SDK untouched. Should the SDK refuse the request answered early (it validates
more than this module does), its refusal is written to stderr, since the client has
already had an answer for that id.

Claiming the wire: fd 0 and fd 1 are moved to private descriptors (close-on-exec) and then
point at the null device and at stderr until the server returns, as the SDK does when it
claims them itself, so nothing another part prints while loading or serving reaches the
protocol stream.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import sys
from collections.abc import Callable
from typing import IO, Any, BinaryIO, cast

from memdir import __version__

__all__ = [
    "CAPABILITIES",
    "HANDSHAKE_REVISIONS",
    "INSTRUCTIONS",
    "SERVER_NAME",
    "SERVER_TITLE",
    "AnsweredFilter",
    "StdioWire",
    "initialize_request",
    "initialize_result",
]

SERVER_NAME = "memdir"
SERVER_TITLE = "memdir memory"
#: The revisions reached with the `initialize` handshake (docs/mcp.md promises these).
HANDSHAKE_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: What the server offers in the handshake era: tools, resources and prompts whose lists
#: never change while it runs, and no resource subscriptions.
CAPABILITIES: dict[str, dict[str, bool]] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
INSTRUCTIONS = (
    "memdir is the long-term memory of this project and user: one Markdown note per fact. "
    "Read the prompt index resource (memdir://prompt-index) for what is known; "
    "memory_search returns summaries and snippets, memory_read opens a note. "
    "Write with memory_write only what a later conversation needs (see memdir://guidance). "
    "Under a grant with state access, the state_* tools read and update the agent's tasks, "
    "goals and sessions."
)


def initialize_result(requested: str) -> dict[str, Any]:
    """The `initialize` result for a client that asked for revision `requested`."""
    agreed = requested if requested in HANDSHAKE_REVISIONS else HANDSHAKE_REVISIONS[-1]
    return {
        "capabilities": {name: dict(flags) for name, flags in CAPABILITIES.items()},
        "instructions": INSTRUCTIONS,
        "protocolVersion": agreed,
        "serverInfo": {"name": SERVER_NAME, "title": SERVER_TITLE, "version": __version__},
    }


def _plain_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


#: The shape of an `initialize` request answered early: what the clients memdir knows send
#: (protocolVersion, capabilities, clientInfo with name, version and perhaps a title).
#: Anything else — other fields, a capability that is not an object, deep nesting, a
#: string that is not valid Unicode — is left to the SDK, which may refuse what Python's
#: json accepts; answering such a request early could claim a session the SDK never opened.
_PARAMS = frozenset({"protocolVersion", "capabilities", "clientInfo"})
_CLIENT_INFO = frozenset({"name", "version", "title"})
_MAX_DEPTH = 16


def _shallow_and_valid(value: object, depth: int = 0) -> bool:
    """No deeper than `_MAX_DEPTH`, every string encodable (no lone surrogate)."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(value, dict):
        return all(
            _shallow_and_valid(k, depth + 1) and _shallow_and_valid(v, depth + 1)
            for k, v in value.items()
        )
    if isinstance(value, list):
        return all(_shallow_and_valid(v, depth + 1) for v in value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return True


def initialize_request(line: bytes) -> dict[str, Any] | None:
    """The message when `line` is an `initialize` request this module may answer (see
    `_PARAMS`); None for anything else, which is the SDK's to judge."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or set(message) != {"jsonrpc", "id", "method", "params"}:
        return None
    if message["jsonrpc"] != "2.0" or message["method"] != "initialize":
        return None
    params = message["params"]
    if not _plain_id(message["id"]) or not isinstance(params, dict) or set(params) != _PARAMS:
        return None
    capabilities, info = params["capabilities"], params["clientInfo"]
    if not isinstance(params["protocolVersion"], str) or not isinstance(capabilities, dict):
        return None
    if not all(isinstance(v, dict) for v in capabilities.values()):
        return None
    if not isinstance(info, dict) or not {"name", "version"} <= set(info) <= _CLIENT_INFO:
        return None
    if not all(isinstance(v, str) for v in info.values()):
        return None
    return message if _shallow_and_valid(message) else None


def _claim(fd: int, mode: str, diversion: Callable[[], int]) -> tuple[BinaryIO, int | None]:
    """A private binary stream on the wire behind `fd`, and the descriptor to put back
    (None: the descriptor could not be moved, so the stream is the process's own)."""
    own = sys.stdin.buffer if fd == 0 else sys.stdout.buffer
    try:
        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        return own, None
    try:
        other = diversion()
    except OSError:
        os.close(private)
        return own, None
    try:
        os.dup2(other, fd)
    except OSError:
        os.close(private)
        return own, None
    finally:
        os.close(other)
    stream = os.fdopen(private, mode, closefd=False)
    return cast(BinaryIO, stream), private


def _stdout_diversion() -> int:
    try:
        return os.dup(2)
    except OSError:
        return os.open(os.devnull, os.O_WRONLY)


class _Unowned(io.TextIOWrapper):
    """UTF-8 text over a claimed stream that never closes it: a worker thread may still
    block on the descriptor when the transport exits, so it must not be closed and reused
    under it."""

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self.detach()


class _ReplayReader:
    """The SDK's stdin: the first message (if the handshake kept it), then the wire."""

    def __init__(self, first: str | None, wire: IO[str]) -> None:
        self._first = first
        self._wire = wire

    def readline(self) -> str:
        if self._first is not None:
            line, self._first = self._first, None
            return line
        return self._wire.readline()


class AnsweredFilter:
    """The SDK's stdout: drops the SDK's answer to the request the handshake answered.

    Only the SDK's first response can be that answer (the request is the first it reads);
    whatever that first response is, the filter then stands aside, so a later response that
    happens to carry the same id is never dropped. An answer that differs from the one
    given early (a refusal, another revision) is said on stderr."""

    def __init__(self, wire: IO[str], answered: object, given: object = None) -> None:
        self._wire = wire
        self._answered = answered
        self._given = given
        self._pending = True

    def _is_dropped(self, text: str) -> bool:
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            return False
        if not isinstance(message, dict) or "method" in message:
            return False  # a notification: the response is still to come
        self._pending = False
        found = message.get("id")
        if found != self._answered or type(found) is not type(self._answered):
            return False
        if self._given is not None and message.get("result") != self._given:
            said = json.dumps(message.get("error", message.get("result")))[:500]
            print(
                f"memdir: the MCP SDK answered the initialize request answered early "
                f"otherwise: {said}",
                file=sys.stderr,
                flush=True,
            )
        return True

    def write(self, text: str) -> int:
        if self._pending and self._is_dropped(text):
            return len(text)
        return self._wire.write(text)

    def flush(self) -> None:
        self._wire.flush()


class StdioWire:
    """The protocol's stdin and stdout, claimed from fd 0 and 1 for one serve."""

    def __init__(self) -> None:
        self._in, self._in_fd = _claim(0, "rb", lambda: os.open(os.devnull, os.O_RDONLY))
        self._out, self._out_fd = _claim(1, "wb", _stdout_diversion)
        self._first: str | None = None
        self._answered: object = None
        self._given: object = None
        self.answered_early = False

    def greet(self) -> None:
        """Read the first message; answer it now if it is an `initialize` request."""
        line = self._in.readline()
        if not line:
            return
        self._first = line.decode("utf-8", errors="replace")
        message = initialize_request(line)
        if message is None:
            return
        result = initialize_result(message["params"]["protocolVersion"])
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        self._out.write(json.dumps(answer, separators=(",", ":")).encode("ascii") + b"\n")
        self._out.flush()
        self._answered = message["id"]
        self._given = result
        self.answered_early = True

    def streams(self) -> tuple[Any, Any]:
        """The text streams to hand the SDK's stdio transport (to wrap with anyio)."""
        reader = _ReplayReader(self._first, _Unowned(self._in, encoding="utf-8", errors="replace"))
        writer = _Unowned(self._out, encoding="utf-8", write_through=True)
        if not self.answered_early:
            return reader, writer
        return reader, AnsweredFilter(writer, self._answered, self._given)

    def release(self) -> None:
        """Put fd 0 and 1 back on the wire (flushing what was written)."""
        with contextlib.suppress(OSError, ValueError):
            self._out.flush()
        for fd, private in ((0, self._in_fd), (1, self._out_fd)):
            if private is not None:
                with contextlib.suppress(OSError):
                    os.dup2(private, fd)
