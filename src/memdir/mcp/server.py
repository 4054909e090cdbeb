"""The memdir MCP server over stdio or loopback streamable HTTP, gated by access and grants.

Over HTTP every request (initialize and listings included) needs a usable grant: the
ASGI wrapper re-reads the grants on each request, so a revoked or expired grant is
refused with 401 at once. Content requests resolve the caller's access again in the MCP
middleware, and `tools/list` offers only the tools that access may call. The same
middleware answers a request naming no tool, prompt or resource of memdir's, or one the
SDK refuses, with a JSON-RPC error in memdir's `kind: message (next step)` form
(`memdir.mcp.protocol`); a tool's own failures are tool errors (`memdir.mcp.failures`).

Protocol revisions: the SDK (mcp >= 2.3) serves both eras on one endpoint. A client that
opens with a request carrying the per-request `_meta` envelope (or `server/discover`) is
served 2026-07-28 statelessly; one that opens with `initialize` gets the handshake era
at the revision it asked for (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25) or, for
any other — 2026-07-28 included, which has no handshake — the newest handshake revision,
2025-11-25, as the 2026-07-28 versioning rules require of a dual-era server
(docs/specification/2026-07-28/basic/versioning.mdx). `check_protocol_support` fails
loudly at startup should an SDK upgrade drop a revision docs/mcp.md promises.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from memdir import __version__
from memdir.clients.grants import GrantStore
from memdir.errors import MemdirError, Refused
from memdir.guidance import GUIDANCE
from memdir.mcp.access import CURRENT, AsyncResolver, Gate, Resolver, bearer_token
from memdir.mcp.failures import ToolArguments, error_result, error_text
from memdir.mcp.handshake import (
    HANDSHAKE_REVISIONS,
    INSTRUCTIONS,
    SERVER_NAME,
    SERVER_TITLE,
    StdioWire,
)
from memdir.mcp.protocol import Offered, check_request, internal_error, translated
from memdir.mcp.registry import PROGRESS, Source, opener, register_tools, turn_of
from memdir.mcp.tools import TOOLS, tool_named, usable_tools
from memdir.mcp.tools.state import StateStores
from memdir.memory import Memory

__all__ = [
    "HANDSHAKE_REVISIONS",
    "STATELESS_REVISIONS",
    "build_server",
    "check_protocol_support",
    "run",
]

#: The revisions served statelessly, each request carrying its own `_meta` envelope.
STATELESS_REVISIONS = ("2026-07-28",)


def check_protocol_support() -> None:
    """Raise RuntimeError unless the installed MCP SDK serves every revision memdir
    promises; run at startup, so an SDK upgrade that drops one fails loudly, not quietly
    answering with another revision."""
    missing = [r for r in HANDSHAKE_REVISIONS if r not in HANDSHAKE_PROTOCOL_VERSIONS]
    missing += [r for r in STATELESS_REVISIONS if r not in MODERN_PROTOCOL_VERSIONS]
    if missing:
        raise RuntimeError(
            f"the installed MCP SDK does not serve protocol revision(s) {', '.join(missing)}; "
            "install the mcp version memdir's pyproject.toml names"
        )
    # The handshake is answered before the SDK loads (memdir.mcp.handshake): the revision
    # it agrees must be the one the SDK would.
    if tuple(HANDSHAKE_PROTOCOL_VERSIONS) != HANDSHAKE_REVISIONS:
        raise RuntimeError(
            "the installed MCP SDK agrees the handshake revisions "
            f"{', '.join(HANDSHAKE_PROTOCOL_VERSIONS)}, memdir answers with "
            f"{', '.join(HANDSHAKE_REVISIONS)}; install the mcp version memdir's "
            "pyproject.toml names"
        )


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Requests that return memory content: each is checked against the grant first.
_GUARDED = frozenset({"tools/call", "resources/read", "prompts/get"})
#: Listings filtered by the caller's access (a read-only caller sees no write tools).
_FILTERED = frozenset({"tools/list"})
_INDEX_URI = "memdir://prompt-index"
_GUIDANCE_URI = "memdir://guidance"
_PROMPTS = ("memory_index", "memory_guidance")
#: Freshness hints of the cacheable results (2026-07-28, SEP-2549): private, since what
#: a caller is offered depends on its grant; the listings do not change while the server
#: runs, the prompt index changes with every write.
_CACHE_HINTS: dict[Any, CacheHint] = {
    "tools/list": CacheHint(ttl_ms=60_000, scope="private"),
    "prompts/list": CacheHint(ttl_ms=60_000, scope="private"),
    "resources/list": CacheHint(ttl_ms=60_000, scope="private"),
    "resources/templates/list": CacheHint(ttl_ms=60_000, scope="private"),
    "resources/read": CacheHint(ttl_ms=0, scope="private"),
}


def _headers(ctx: ServerRequestContext[Any, Any]) -> dict[str, str] | None:
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is None:
        return None
    return {k.lower(): v for k, v in headers.items()}


_log = logging.getLogger(__name__)


class _Guard:
    """Middleware: resolve and check the caller's access before any content request is
    served, answer a request that names nothing this server has, and say every error the
    SDK raises for a request memdir's way (`memdir.mcp.protocol`)."""

    def __init__(self, gate: Resolver) -> None:
        self.gate = gate
        #: The tools' argument checker, set once the tools are registered.
        self.arguments = ToolArguments()
        #: Every tool and the arguments it takes (a state tool a server did not register
        #: is still known: calling it is refused naming the grant that would allow it).
        self.tools = {tool.name: tuple(tool.parameters().parameters) for tool in TOOLS}

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        try:
            return await self._serve(ctx, call_next)
        except (MCPError, ValidationError) as exc:
            raise translated(ctx.method, exc) from None
        except Exception:
            _log.exception("MCP request %r failed", ctx.method[:80])
            raise internal_error(ctx.method) from None

    async def _serve(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method not in _GUARDED and ctx.method not in _FILTERED:
            return await call_next(ctx)
        try:
            if isinstance(self.gate, AsyncResolver):
                access = await self.gate.resolve_async(_headers(ctx))
            else:  # reads the grants file: off the event loop
                access = await anyio.to_thread.run_sync(self.gate.resolve, _headers(ctx))
        except MemdirError as exc:
            message = error_text(exc)
            if ctx.method == "tools/call":
                return error_result(message)
            raise MCPError(INVALID_REQUEST, message) from None
        if ctx.method in _GUARDED:
            usable = usable_tools(access)
            offered = Offered(
                tools=tuple(name for name in self.tools if name in usable),
                prompts=_PROMPTS,
                resources=(_INDEX_URI, _GUIDANCE_URI),
            )
            check_request(ctx.method, ctx.params, offered, self.tools)
        if ctx.method == "tools/call":
            params = ctx.params or {}
            tool = tool_named(str(params.get("name")))
            refusal = tool.refusal(access) if tool is not None else None
            if refusal is not None:  # also for a server that registered no state tools
                return error_result(refusal)
            problem = self.arguments.problem(str(params.get("name")), params.get("arguments"))
            if problem is not None:  # said in one line, before the SDK's own validation
                return error_result(problem)
        token = CURRENT.set(access)
        progress = PROGRESS.set(ctx.session.report_progress)  # no-op without a progressToken
        try:
            result = await call_next(ctx)
        finally:
            PROGRESS.reset(progress)
            CURRENT.reset(token)
        if ctx.method == "tools/list":
            result = _only_usable(result, usable_tools(access))
        return result


def _only_usable(result: HandlerResult, names: frozenset[str]) -> HandlerResult:
    """A tools/list result (the wire mapping, or a model) without the tools outside `names`."""
    if isinstance(result, dict):
        tools = result.get("tools")
        if not isinstance(tools, list):
            return result
        kept = [t for t in tools if isinstance(t, dict) and t.get("name") in names]
        return {**result, "tools": kept}
    tools = getattr(result, "tools", None)
    if result is None or not isinstance(tools, list):
        return result
    return result.model_copy(update={"tools": [t for t in tools if t.name in names]})


def build_server(
    memory: Memory | Source, gate: Resolver, states: StateStores | None = None
) -> MCPServer[Any]:
    """The MCP server: tools, the prompt index and guidance as resources and prompts.

    `states` is the agent state store of the state tools (whoever passes it closes it);
    None: no state tools, for a server whose access can never include the state store (a
    stdio server without a grant, or with one that gives none) — registering them would
    only slow its start-up.
    """
    check_protocol_support()
    guard = _Guard(gate)
    server: MCPServer[Any] = MCPServer(
        SERVER_NAME,
        title=SERVER_TITLE,
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        middleware=[guard],
        cache_hints=_CACHE_HINTS,
    )
    # One call into `memory` at a time, each in a worker thread (see mcp.registry.wrap);
    # a remote server's source serialises the calls into each working copy itself.
    limiter = anyio.CapacityLimiter(4 if isinstance(memory, Source) else 1)
    guard.arguments = register_tools(server, memory, limiter, states)
    opened, turn = opener(memory), turn_of(memory)

    def index_text() -> str:
        with opened() as subject:
            text: str = subject.agent.prompt_index()
            return text

    async def prompt_index() -> str:
        access = CURRENT.get()
        try:
            if access is None:
                raise Refused("no access was resolved for this call")
            if access.scope != "both":
                return f"This grant covers the {access.scope} scope only: use memory_search."
            # Scanning the note files blocks: keep the event loop free for other requests.
            async with turn():
                return await anyio.to_thread.run_sync(index_text, limiter=limiter)
        except MemdirError as exc:  # a locked store, a damaged note: said as a tool says it
            raise MCPError(INTERNAL_ERROR, error_text(exc)) from None

    async def guidance() -> str:
        return GUIDANCE

    server.resource(
        _INDEX_URI,
        name="prompt-index",
        title="memdir prompt index",
        description="One line per memory note (summary, id, type), newest first.",
        mime_type="text/markdown",
    )(prompt_index)
    server.resource(
        _GUIDANCE_URI,
        name="guidance",
        title="when to write a memory note",
        description="When a memory note is worth writing, and when not.",
        mime_type="text/markdown",
    )(guidance)
    server.prompt(
        name=_PROMPTS[0],
        title="memdir prompt index",
        description="What the long-term memory holds, to read at the start of a task.",
    )(prompt_index)
    server.prompt(
        name=_PROMPTS[1],
        title="when to write a memory note",
        description="When a memory note is worth writing, and when not.",
    )(guidance)
    return server


# -- HTTP -------------------------------------------------------------------------------


def _allowed_hosts(host: str, port: int) -> frozenset[str]:
    names = {"127.0.0.1", "localhost"} if host.startswith("127.") else {f"[{host}]", "localhost"}
    names.add(host if ":" not in host else f"[{host}]")
    return frozenset(f"{n}:{port}" for n in names)


class HttpGuard:
    """ASGI wrapper: Host and Origin checks (403, DNS rebinding) and a usable bearer grant
    (401) on every request, re-read from disk each time so revocation is immediate."""

    def __init__(
        self, app: ASGIApp, hosts: frozenset[str], store: GrantStore, grant_id: str | None
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.origins = frozenset(f"http://{h}" for h in hosts)
        self.store = store
        self.grant_id = grant_id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if headers.get("host") not in self.hosts:
            await _plain(send, 403, "unexpected Host header")
            return
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            await _plain(send, 403, "unexpected Origin header")
            return
        problem = await anyio.to_thread.run_sync(self._problem, bearer_token(headers))
        if problem is not None:
            await _plain(send, 401, problem)
            return
        await self.app(scope, receive, send)

    def _problem(self, token: str | None) -> str | None:
        """Why a request with `token` is refused (no token, unknown, expired, revoked, or
        another grant than the one this server is pinned to), or None."""
        if token is None:
            return _NO_GRANT
        try:
            grant = self.store.authenticate(token)
            if grant is None:
                return _NO_GRANT
            self.store.validate(token)  # expired or revoked: said as such
        except MemdirError as exc:  # expired, revoked, or a damaged grants file
            return error_text(exc)
        if self.grant_id is not None and grant.id != self.grant_id:
            # Said only to the holder of another usable grant of this memdir, and naming
            # neither grant: that this server is pinned is all it learns.
            return _PINNED
        return None


#: The 401 body for a request without a usable grant's token.
_NO_GRANT = (
    "refused: a valid capability grant is required (send Authorization: Bearer with the "
    "token of a grant file from `memdir mcp grant`)"
)
#: The 401 body for another grant's token on a server started with --grant-file.
_PINNED = (
    "refused: this server serves only the grant in its --grant-file, and this token is "
    "another grant's (use the token from that grant file, or ask the user to start "
    "`memdir mcp serve --http` without --grant-file, which accepts any usable grant)"
)


async def _plain(send: Send, status: int, text: str) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="memdir"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text.encode("utf-8") + b"\n"})


def _serve_http(
    server: MCPServer[Any], host: str, port: int, store: GrantStore, grant_id: str | None
) -> None:
    import uvicorn

    hosts = _allowed_hosts(host, port)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted(hosts),
        allowed_origins=sorted(f"http://{h}" for h in hosts),
    )
    app = server.streamable_http_app(transport_security=security, host=host)
    guarded = HttpGuard(app, hosts, store, grant_id)
    config = uvicorn.Config(
        guarded, host=host, port=port, log_level="warning", access_log=False, lifespan="on"
    )
    shown = f"[{host}]" if ":" in host else host
    print(f"memdir MCP server on http://{shown}:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.Server(config).run()


def run(
    memory: Memory,
    gate: Gate,
    store: GrantStore,
    *,
    states: StateStores | None,
    address: tuple[str, int] | None,
    wire: StdioWire | None = None,
) -> None:
    """Build the server and run it until the client disconnects (stdio: over `wire` when
    the handshake was read already, else the process's own stdin and stdout) or it is
    interrupted (HTTP on `address`). `memdir.mcp.serving.serve` checks the grant first."""
    server = build_server(memory, gate, states)
    # A long-lived process: vectors are filled in a worker thread, so no query waits for
    # the embedder (a search answers from the lexical index while they are behind).
    filler = memory.index.embed_in_background()
    # And it watches the note directories: a query looks at the files changed since the
    # last one, not at every file (memdir.store.watch).
    memory.watch_files()
    memory.defer_usage_writes()  # a recall never waits for its statistics to be written
    # Signed in to a sync server: this long-running process syncs in the background (§7.2).
    status = memory.sync.status()
    coordinator = memory.sync.background() if status.server and status.enabled else None
    if coordinator is not None:
        coordinator.start()
    # Opt-in (memory.consolidate.auto): merge same-topic notes when a pass is due (§6).
    consolidator = memory.consolidation.background()
    if consolidator is not None:
        consolidator.start()
    try:
        if address is not None:
            fixed = gate.fixed[0] if gate.fixed is not None else None
            _serve_http(server, address[0], address[1], store, fixed)
        elif wire is not None:
            anyio.run(_serve_wire, server, wire)
        else:
            anyio.run(server.run_stdio_async)
    finally:
        if filler is not None:
            filler.stop()
        if consolidator is not None:
            consolidator.stop()
        if coordinator is not None:
            coordinator.stop()
        if states is not None:
            states.close()
        memory.usage.flush()  # recall statistics held back by the writer thread


async def _serve_wire(server: MCPServer[Any], wire: StdioWire) -> None:
    """The SDK's stdio transport over the claimed wire: the first message (answered
    already, when it was `initialize`) is read again and the SDK's answer to it dropped."""
    reader, writer = wire.streams()
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, on our streams
    async with stdio_server(anyio.wrap_file(reader), anyio.wrap_file(writer)) as (read, write):
        await lowlevel.run(read, write, lowlevel.create_initialization_options())
