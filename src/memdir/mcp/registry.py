"""Registering the tool records (`memdir.mcp.tools.TOOLS`) with an MCP server.

Each record becomes one SDK tool: an async function that runs the handler in a worker
thread with what it works on (the `Memory`, or the `StateStores` of a state tool), whose
signature — the handler's without that first parameter — gives the input and output
schemas. A memdir error becomes a tool error that begins with its kind, anything else an
`internal:` one that tells nothing more.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager, AbstractContextManager, nullcontext
from contextvars import ContextVar
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import MCPServer

from memdir import Memory
from memdir.errors import MemdirError
from memdir.mcp.failures import ToolArguments, error_result
from memdir.mcp.tools import TOOLS
from memdir.mcp.tools.record import Tool
from memdir.mcp.tools.state import StateStores
from memdir.memory.searching import Index

__all__ = ["PROGRESS", "IndexProgress", "Source", "opener", "register_tools", "turn_of", "wrap"]

_log = logging.getLogger(__name__)

#: Sends a progress notification for the request being served (progress, total, message);
#: set by the server for each tool call (a no-op when the client gave no progressToken).
PROGRESS: ContextVar[
    Callable[[float, float | None, str | None], Coroutine[Any, Any, None]] | None
] = ContextVar("memdir_mcp_progress", default=None)


class IndexProgress:
    """Index-building progress of one call (from its worker thread) as MCP progress
    notifications: counted across scopes so that the value only ever grows."""

    def __init__(
        self, send: Callable[[float, float | None, str | None], Coroutine[Any, Any, None]]
    ):
        self.send = send
        self.base = self.last_done = self.last_total = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if done <= self.last_done:  # the next scope's index
            self.base += self.last_total
        self.last_done, self.last_total = done, total
        message = f"building the search index: {done} of {total} notes read"
        try:
            anyio.from_thread.run(
                self.send, float(self.base + done), float(self.base + total), message
            )
        except Exception:  # a client that went away must not fail the call itself
            _log.debug("progress notification not sent", exc_info=True)


class Source:
    """Where each call finds the `Memory` it works on, when that is not one fixed memory:
    the remote server opens the caller's own working copy for every call (`opened`)."""

    def opened(self) -> AbstractContextManager[Memory]:
        """The memory of the request being served (from its access), for one call."""
        raise NotImplementedError

    def turn(self) -> AbstractAsyncContextManager[object]:
        """Held (on the event loop) around each call into the memory `opened` gives: the
        calls into one memory wait their turn here, not in a worker thread."""
        return nullcontext()


def opener(context: object) -> Callable[[], AbstractContextManager[Any]]:
    """How a call reaches `context`: a `Source` opens one per call, anything else is it."""
    if isinstance(context, Source):
        return context.opened
    return lambda: nullcontext(context)


def turn_of(context: object) -> Callable[[], AbstractAsyncContextManager[object]]:
    """What a call into `context` waits for first (a `Source`'s turn; else nothing)."""
    if isinstance(context, Source):
        return context.turn
    return nullcontext


def wrap(
    tool: Tool, context: object, limiter: anyio.CapacityLimiter
) -> Callable[..., Awaitable[Any]]:
    """The async function the server registers for `tool`: it runs the handler with
    `context` in a worker thread; a memdir error becomes a tool error that begins with its
    kind (`tool.explain`), anything else an `internal:` one. Its name and signature are
    the tool's (the SDK makes the schemas from them).

    memdir's calls block on files and SQLite, so they leave the event loop free (pings,
    cancellation, other HTTP requests); `limiter` lets one call into `context` run at a
    time, since its index, sync state and state store connections are not shared safely
    between concurrent calls. The caller's access travels along (`run_sync` copies the
    context), and so does index-building progress (`Index.observing`)."""
    parameters = tool.parameters()
    opened = opener(context)
    turn = turn_of(context)

    async def call(**arguments: Any) -> Any:
        send = PROGRESS.get()
        progress = IndexProgress(send) if send is not None else None

        def run() -> Any:
            with Index.observing(progress), opened() as subject:
                return tool.handler(subject, **arguments)

        try:
            async with turn():
                return await anyio.to_thread.run_sync(run, limiter=limiter)
        except MemdirError as exc:
            return error_result(tool.explain(exc))
        except Exception:
            _log.exception("MCP tool %s failed", tool.name)
            return error_result(
                f"internal: {tool.name} failed unexpectedly; nothing more is said here "
                "(the server's log, its standard error, has the details)"
            )

    call.__name__ = call.__qualname__ = tool.name
    call.__doc__ = tool.description
    call.__signature__ = parameters  # type: ignore[attr-defined]
    call.__annotations__ = {
        **{p.name: p.annotation for p in parameters.parameters.values()},
        **(
            {"return": parameters.return_annotation}
            if parameters.return_annotation is not inspect.Signature.empty
            else {}
        ),
    }
    return call


def register_tools(
    server: MCPServer[Any],
    memory: Memory | Source,
    limiter: anyio.CapacityLimiter,
    states: StateStores | None = None,
) -> ToolArguments:
    """Add every tool of `TOOLS` to `server`, with its description and annotations; returns
    the checker of their arguments (the server runs it before the SDK's own validation).

    `limiter` (one token) is shared with every other handler that calls `memory`. The
    state tools are added only with `states`, and wait on a limiter of their own: the
    state store is its own database, so its calls need not wait for a note search.
    """
    state_limiter = anyio.CapacityLimiter(1)
    arguments = ToolArguments()
    for tool in TOOLS:
        if tool.state and states is None:
            continue
        context, runs = (states, state_limiter) if tool.state else (memory, limiter)
        arguments.add(tool)
        server.add_tool(
            wrap(tool, context, runs),
            name=tool.name,
            title=tool.title,
            description=tool.description,
            annotations=tool.annotations,
            structured_output=True,
        )
    return arguments
