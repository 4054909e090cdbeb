"""Benchmark: remote MCP behind OAuth 2.1 (`memdir server serve --mcp`), end to end.

Run as ``python bench/remote_mcp.py [--notes 300] [--calls 200] [--flows 5]
[--warm 20] [--backend dir|postgres] [--dsn DSN] [--rate-limit 0] [--no-local] [--json]``.

A real `memdir server serve --mcp` subprocess listens on a free loopback port
(tests/sync_server.py) over a fresh data directory with one account, its rate limiter
off (``--rate-limit 0``: the default 120 requests a minute would answer most of these
calls 429, which the SDK reports as an error). The directory backend by default, or
``--backend postgres`` (a throwaway cluster from tests/postgres_cluster.py, or a new
database in ``--dsn`` / ``MEMDIR_TEST_PG_DSN``, dropped at the end). The client is the
official MCP SDK: its OAuth client (tests/oauth_client.py: the consent page fetched,
filled and posted by the script) and `mcp.Client` over streamable HTTP in the SDK's
default ``mode="auto"`` (the 2026-07-28 era). What it measures:

1. The OAuth flow, ``--flows`` times, each with a new SDK client: the 401 and its
   challenge, the metadata discovery, dynamic registration, the authorization request,
   the consent page and its POST, the code for a token, and the first request retried
   with the token. The first request alone (initialize with the token already in hand)
   is timed too, so the flow's own cost is the difference. Median, min and max.
2. ``--notes`` notes written into one project through `memory_write` (each stored in the
   backend before the tool answers), then ``--calls`` `memory_search` calls over that
   project: p50/p95 (and mean, max) of each tool call, as the client sees it.
3. The server stopped and started again on the same port (a token names the resource
   URL it is for): the first `memory_search` (the working copy built again from
   storage, `DATA/working-copies/` deleted; and, a second restart, the copy left on
   disk and only reopened) against ``--warm`` calls after it. The client's connect is
   timed apart from the call.
4. For comparison (unless ``--no-local``): the same writes and searches through the
   local `memdir mcp serve --http` of a fresh project (a capability grant's bearer token,
   no OAuth, no sync).

Both servers use the default embedder of a fresh home (the working copies' homes on
the server, the fresh home locally), so search ranking costs the same in both. Timing
is printed, never asserted; the figures depend on the machine and its load. The exit
code is 1 when a tool call failed (the errors are listed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp import Client

_REPO = Path(__file__).resolve().parent.parent
# The helpers the tests use to run the server and to consent as a user, shared rather than copied.
sys.path.insert(0, str(_REPO / "tests"))
from oauth_client import consenting_client  # noqa: E402
from sync_server import MEMDIR_COMMAND, add_user, running_server  # noqa: E402

sys.path.insert(0, str(_REPO / "bench"))
from server_load import postgres_database  # noqa: E402

PROJECT = "bench-remote-project-01"
_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
_ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

_TOPICS = [
    "staging database",
    "deploy pipeline",
    "billing service",
    "search index",
    "login page",
    "cache layer",
    "message queue",
    "backup job",
    "feature flags",
    "metrics dashboard",
    "email sender",
    "mobile build",
]
_FACTS = [
    "restarts every night at {h:02d}:00 UTC",
    "needs the {w} setting before release {n}",
    "was moved to the {w} cluster in sprint {n}",
    "times out after {n} seconds under {w} load",
    "is owned by the {w} team since week {n}",
    "logs to the {w} bucket with retention of {n} days",
    "keeps {n} replicas behind the {w} proxy",
]
_WORDS = [
    "blue",
    "green",
    "north",
    "south",
    "river",
    "granite",
    "cedar",
    "amber",
    "copper",
    "delta",
]


def _note(i: int, rng: random.Random) -> str:
    fact = rng.choice(_FACTS).format(h=i % 24, w=rng.choice(_WORDS), n=i)
    return f"The {_TOPICS[i % len(_TOPICS)]} {fact}"


def _query(rng: random.Random) -> str:
    return f"{rng.choice(_TOPICS)} {rng.choice(_WORDS)}"


def _stats(values: list[float]) -> dict[str, float]:
    """p50/p95/mean/max (ms) of `values` (seconds)."""
    if not values:
        return {"n": 0, "p50": math.nan, "p95": math.nan, "mean": math.nan, "max": math.nan}
    ms = sorted(v * 1000 for v in values)

    def pct(p: float) -> float:
        k = (len(ms) - 1) * p
        lo = int(k)
        hi = min(lo + 1, len(ms) - 1)
        return ms[lo] + (ms[hi] - ms[lo]) * (k - lo)

    return {
        "n": len(ms),
        "p50": pct(0.50),
        "p95": pct(0.95),
        "mean": statistics.fmean(ms),
        "max": ms[-1],
    }


@dataclass
class Result:
    """Every figure of one run (milliseconds unless named otherwise)."""

    backend: str
    notes: int
    calls: int
    flow_ms: list[float] = field(default_factory=list)
    init_with_token_ms: list[float] = field(default_factory=list)
    flow_requests: int = 0
    remote_write: dict[str, float] = field(default_factory=dict)
    remote_search: dict[str, float] = field(default_factory=dict)
    remote_search_hits: float = 0.0
    cold: dict[str, dict[str, float]] = field(default_factory=dict)
    local_write: dict[str, float] = field(default_factory=dict)
    local_search: dict[str, float] = field(default_factory=dict)
    local_search_hits: float = 0.0
    local_skipped: str | None = None
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0


async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[float, bool, Any]:
    """Seconds the call took, whether it failed, and its structured answer (or text)."""
    start = time.perf_counter()
    try:
        result = await client.call_tool(name, args)
    except MCPError as exc:
        return time.perf_counter() - start, True, f"{exc} {exc.code} {exc.data}"
    took = time.perf_counter() - start
    if result.is_error:
        return took, True, " ".join(getattr(c, "text", "") for c in result.content)
    return took, False, result.structured_content


def _bearer_client(url: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    return Client(streamable_http_client(url, http_client=http))


# --- 1. the OAuth flow -------------------------------------------------------------------


async def _one_flow(base: str, account: str, result: Result) -> str:
    """One OAuth flow with a new SDK client; the access token it got."""
    consent = consenting_client(
        base, account, scopes=("read", "write"), project=PROJECT, name="bench agent"
    )
    requests = 0

    async def count(_: Any) -> None:
        nonlocal requests
        requests += 1

    async with httpx2.AsyncClient(
        auth=consent.provider, timeout=120, event_hooks={"request": [count]}
    ) as http:
        start = time.perf_counter()
        answer = await http.post(base + "/mcp", json=_INIT, headers=_ACCEPT)
        took = time.perf_counter() - start
    if answer.status_code != 200:
        raise RuntimeError(f"initialize after the flow: {answer.status_code} {answer.text[:300]}")
    tokens = consent.storage.tokens
    if tokens is None:
        raise RuntimeError("the OAuth flow gave no token")
    async with httpx2.AsyncClient(timeout=120) as http:
        auth = {**_ACCEPT, "Authorization": f"Bearer {tokens.access_token}"}
        start = time.perf_counter()
        again = await http.post(base + "/mcp", json=_INIT, headers=auth)
        alone = time.perf_counter() - start
    if again.status_code != 200:
        raise RuntimeError(f"initialize with the token: {again.status_code}")
    result.flow_ms.append(took * 1000)
    result.init_with_token_ms.append(alone * 1000)
    # The SDK's own requests (the consent page's three are made by the script's client).
    result.flow_requests = requests + 3
    access: str = tokens.access_token
    return access


# --- 2. writes and searches --------------------------------------------------------------


async def _writes_and_searches(
    url: str, token: str, notes: int, calls: int, seed: int, errors: list[str]
) -> tuple[list[float], list[float], float]:
    rng = random.Random(seed)
    writes: list[float] = []
    searches: list[float] = []
    hits = 0
    async with _bearer_client(url, token) as client:
        for i in range(notes):
            took, failed, out = await _call(
                client, "memory_write", {"summary": _note(i, rng), "scope": "project"}
            )
            if failed:
                errors.append(f"memory_write: {str(out)[:200]}")
                continue
            writes.append(took)
        rng = random.Random(seed + 1)
        for _ in range(calls):
            took, failed, out = await _call(
                client, "memory_search", {"query": _query(rng), "scope": "project"}
            )
            if failed:
                errors.append(f"memory_search: {str(out)[:200]}")
                continue
            searches.append(took)
            hits += len(out.get("hits", [])) if isinstance(out, dict) else 0
    return writes, searches, hits / max(1, len(searches))


# --- 3. a cold server --------------------------------------------------------------------


async def _cold_calls(
    url: str, token: str, warm: int, seed: int, errors: list[str]
) -> dict[str, float]:
    """Connect, the first search, then `warm` searches (ms)."""
    rng = random.Random(seed)
    start = time.perf_counter()
    async with _bearer_client(url, token) as client:
        connect = time.perf_counter() - start
        first, failed, out = await _call(
            client, "memory_search", {"query": _query(rng), "scope": "project"}
        )
        if failed:
            errors.append(f"first search on a cold server: {str(out)[:300]}")
        after = []
        for _ in range(warm):
            took, failed, out = await _call(
                client, "memory_search", {"query": _query(rng), "scope": "project"}
            )
            if failed:
                errors.append(f"warm search after a restart: {str(out)[:300]}")
            else:
                after.append(took)
    stats = _stats(after)
    return {
        "connect": connect * 1000,
        "first": first * 1000,
        "warm_p50": stats["p50"],
        "warm_p95": stats["p95"],
    }


# --- 4. the local server -----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def _local_server(root: Path) -> Iterator[tuple[str, str]]:
    """`memdir mcp serve --http` over a fresh project; its URL and a write grant's token."""
    from memdir import Memory
    from memdir.clients.grants import issue_grant

    home, project = root / "home", root / "project"
    home.mkdir(parents=True)
    project.mkdir()
    memory = Memory.open(project, home=home)
    try:
        grant_file = root / "bench.grant"
        issue_grant(memory, minutes=60, out=grant_file, write=True)
        token = json.loads(grant_file.read_text())["token"]
    finally:
        memory.close()
    port = _free_port()
    log = root / "local-mcp.log"
    env = {**os.environ, "MEMDIR_HOME": str(home)}
    with log.open("w") as err:
        proc = subprocess.Popen(
            [
                *MEMDIR_COMMAND,
                "--project",
                str(project),
                "--home",
                str(home),
                "mcp",
                "serve",
                "--http",
                f"127.0.0.1:{port}",
            ],
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
            env=env,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("local server did not start: " + log.read_text()) from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


# --- the run -----------------------------------------------------------------------------


def _run(fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    return anyio.run(fn, *args)


def run(args: argparse.Namespace, work: Path, say: Callable[[str], None]) -> Result:
    result = Result(args.backend, args.notes, args.calls)
    began = time.perf_counter()
    data = work / "server"
    data.mkdir()
    with contextlib.ExitStack() as stack:
        dsn = None
        if args.backend == "postgres":
            dsn = stack.enter_context(postgres_database(args.dsn))
        account = add_user(data, "bench", backend=args.backend, dsn=dsn)

        def serve(port: int = 0) -> contextlib.AbstractContextManager[Any]:
            # A restart takes the same port: a token is bound to the resource URL it names.
            extra = ["--mcp", "--rate-limit", str(args.rate_limit), "--port", str(port)]
            served: contextlib.AbstractContextManager[Any] = running_server(
                data, backend=args.backend, dsn=dsn, extra_args=extra
            )
            return served

        with serve() as server:
            base, port = server.url, server.port
            say(f"server at {base}; {args.flows} OAuth flows…")
            token = ""
            for _ in range(args.flows):
                token = _run(_one_flow, base, account, result)
            say(f"{args.notes} memory_write, then {args.calls} memory_search…")
            writes, searches, hits = _run(
                _writes_and_searches,
                base + "/mcp",
                token,
                args.notes,
                args.calls,
                args.seed,
                result.errors,
            )
            result.remote_write = _stats(writes)
            result.remote_search = _stats(searches)
            result.remote_search_hits = hits
        for label, wipe in (("rebuilt", True), ("reopened", False)):
            if wipe:
                shutil.rmtree(data / "working-copies", ignore_errors=True)
            say(f"restart: first call on a cold server (working copy {label})…")
            with serve(port) as server:
                result.cold[label] = _run(
                    _cold_calls,
                    server.url + "/mcp",
                    token,
                    args.warm,
                    args.seed + 2,
                    result.errors,
                )
    if not args.no_local:
        say("local `memdir mcp serve --http`…")
        try:
            with _local_server(work / "local") as (url, grant_token):
                errors: list[str] = []
                writes, searches, hits = _run(
                    _writes_and_searches,
                    url,
                    grant_token,
                    args.notes,
                    args.calls,
                    args.seed,
                    errors,
                )
                result.errors += [f"local {e}" for e in errors]
                result.local_write = _stats(writes)
                result.local_search = _stats(searches)
                result.local_search_hits = hits
        except (RuntimeError, OSError) as exc:
            result.local_skipped = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    result.wall_s = time.perf_counter() - began
    return result


def _table(r: Result) -> None:
    flow = statistics.median(r.flow_ms)
    init = statistics.median(r.init_with_token_ms)
    print(
        f"\nOAuth flow (SDK client: discovery, registration, authorize, consent page + POST, "
        f"token, first request retried), {len(r.flow_ms)} runs, ~{r.flow_requests} requests:"
    )
    print(
        f"  median {flow:.0f} ms (min {min(r.flow_ms):.0f}, max {max(r.flow_ms):.0f}); "
        f"initialize alone with the token {init:.1f} ms; the flow itself ≈ {flow - init:.0f} ms"
    )
    header = f"{'tool call (ms)':<34}{'n':>5}{'p50':>8}{'p95':>8}{'mean':>8}{'max':>8}"
    print()
    print(header)
    print("-" * len(header))
    rows = [
        ("remote memory_write", r.remote_write),
        (f"remote memory_search ({r.notes} notes)", r.remote_search),
    ]
    if r.local_write:
        rows += [
            ("local --http memory_write", r.local_write),
            (f"local --http memory_search ({r.notes})", r.local_search),
        ]
    for name, s in rows:
        print(
            f"{name:<34}{s['n']:>5.0f}{s['p50']:>8.1f}{s['p95']:>8.1f}{s['mean']:>8.1f}"
            f"{s['max']:>8.1f}"
        )
    print(f"  hits per search: remote {r.remote_search_hits:.1f}", end="")
    print(f", local {r.local_search_hits:.1f}" if r.local_write else "")
    if r.local_skipped:
        print(f"  local server SKIPPED: {r.local_skipped}")
    print()
    header = (
        f"{'restarted server (ms)':<34}{'connect':>9}{'1st call':>10}{'warm p50':>10}"
        f"{'warm p95':>10}"
    )
    print(header)
    print("-" * len(header))
    for label, c in r.cold.items():
        print(
            f"{'working copy ' + label:<34}{c['connect']:>9.1f}{c['first']:>10.1f}"
            f"{c['warm_p50']:>10.1f}{c['warm_p95']:>10.1f}"
        )
    for error in r.errors[:10]:
        print(f"  ERROR: {error}")
    if len(r.errors) > 10:
        print(f"  … and {len(r.errors) - 10} more errors")
    print(f"\nwall {r.wall_s:.1f} s")


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> int:
    """Parse the options, run, print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=300, help="notes written first")
    parser.add_argument("--calls", type=int, default=200, help="memory_search calls")
    parser.add_argument("--flows", type=int, default=5, help="OAuth flows (median)")
    parser.add_argument("--warm", type=int, default=20, help="warm calls after a restart")
    parser.add_argument("--backend", choices=("dir", "postgres"), default="dir")
    parser.add_argument("--dsn", help="an existing PostgreSQL server (a database is made in it)")
    parser.add_argument(
        "--rate-limit",
        type=int,
        default=0,
        help="the server's requests per minute per account (default 0: off, as calls here "
        "come far faster than the default 120 a minute allows)",
    )
    parser.add_argument("--no-local", action="store_true", help="skip `memdir mcp serve --http`")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.notes < 1 or args.calls < 1 or args.flows < 1 or args.warm < 1:
        parser.error("--notes, --calls, --flows and --warm take numbers of at least 1")
    signal.signal(signal.SIGTERM, _raise_interrupt)

    def say(text: str) -> None:
        if not args.json:
            print(text, flush=True)

    say(
        f"remote MCP: backend {args.backend}, {args.notes} notes, {args.calls} searches, "
        f"{args.flows} OAuth flows, {os.cpu_count()} CPUs"
    )
    with tempfile.TemporaryDirectory(prefix="memdir-remote-mcp-") as work:
        result = run(args, Path(work), say)
    if args.json:
        print(json.dumps(asdict(result), indent=2))
    else:
        _table(result)
    return 1 if result.errors else 0


if __name__ == "__main__":
    sys.exit(main())
