"""The MCP server over loopback streamable HTTP: bearer grants, Host/Origin checks, revocation."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_helpers import all_text, make_grant, memdir_command

from mcp import Client
from memdir import Memory
from memdir.clients.grants import GrantStore, issue_grant, revoke_grant
from memdir.errors import Refused
from memdir.mcp.serving import parse_http_address
from memdir.mcp.tools import TOOL_NAMES

_SERVE = ("mcp", "serve", "--http")


@dataclass
class Served:
    url: str
    port: int
    tokens: dict[str, str]
    ids: dict[str, str]
    memory: Memory
    home: Path
    stderr: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("http")
    home, project = root / "home", root / "project"
    home.mkdir()
    project.mkdir()
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    memory = Memory.open(project, home=home)
    tokens, ids = {}, {}
    for name, kwargs in {
        "write": {"write": True},
        "read": {},
        "delete": {"delete": True},
        "revoke": {"write": True},
    }.items():
        ids[name], tokens[name] = make_grant(memory, root / f"{name}.grant", **kwargs)
    old = root / "expired.grant"
    issue_grant(memory, minutes=5, out=old, store=GrantStore(home, clock=lambda: 1_000))
    tokens["expired"] = json.loads(old.read_text())["token"]
    port = _free_port()
    stderr = root / "stderr.log"
    cmd = memdir_command()
    with stderr.open("w") as err:
        proc = subprocess.Popen(
            [
                *cmd,
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
            env={"MEMDIR_HOME": str(home), "PATH": "/usr/bin:/bin"},
        )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("server did not start: " + stderr.read_text()) from None
                time.sleep(0.05)
        yield Served(f"http://127.0.0.1:{port}/mcp", port, tokens, ids, memory, home, stderr)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        memory.close()


def _client(served: Served, token: str, **kwargs: Any) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(served.url, http_client=http), **kwargs)


async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    return bool(result.is_error), (text if result.is_error else result.structured_content)


_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
_ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_bearer_required(served: Served) -> None:
    r = httpx.post(served.url, json=_INIT, headers=_ACCEPT)
    assert r.status_code == 401 and "bearer" in r.headers["www-authenticate"].lower()
    r = httpx.post(served.url, json=_INIT, headers={**_ACCEPT, "Authorization": "Bearer nope"})
    assert r.status_code == 401
    auth = {**_ACCEPT, "Authorization": f"Bearer {served.tokens['read']}"}
    assert httpx.post(served.url, json=_INIT, headers=auth).status_code == 200


def test_host_and_origin_checked(served: Served) -> None:
    auth = {**_ACCEPT, "Authorization": f"Bearer {served.tokens['read']}"}
    r = httpx.post(served.url, json=_INIT, headers={**auth, "Host": "evil.example:80"})
    assert r.status_code == 403
    r = httpx.post(served.url, json=_INIT, headers={**auth, "Origin": "http://evil.example"})
    assert r.status_code == 403
    ok = {**auth, "Origin": f"http://localhost:{served.port}"}
    assert httpx.post(served.url, json=_INIT, headers=ok).status_code == 200


def test_tools_over_http(served: Served) -> None:
    async def main() -> None:
        async with _client(served, served.tokens["write"]) as client:
            tools = (await client.list_tools()).tools
            assert all(t.annotations is not None for t in tools)
            err, out = await _call(
                client,
                "memory_write",
                {"summary": "HTTP notes use port forwarding", "tags": ["http"]},
            )
            assert not err, out
            note = out["id"]
            err, out = await _call(client, "memory_search", {"query": "forwarding"})
            assert [h["id"] for h in out["hits"]] == [note]
            err, out = await _call(client, "memory_read", {"id": note})
            assert out["summary"] == "HTTP notes use port forwarding"
            err, text = await _call(client, "memory_delete", {"id": note, "confirm": True})
            assert err and "not allowed" in text
        async with _client(served, served.tokens["delete"]) as client:
            err, out = await _call(client, "memory_delete", {"id": note, "confirm": True})
            assert not err and out["backup_id"]

    anyio.run(main)


def test_both_eras_over_http(served: Served) -> None:
    """2026-07-28 (each request with its envelope and the bearer) and the 2025-11-25
    session both get the grant's tools and answers."""

    async def main() -> None:
        for mode, version in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
            async with _client(served, served.tokens["read"], mode=mode) as client:
                assert client.protocol_version == version, mode
                names = {t.name for t in (await client.list_tools()).tools}
                assert "memory_search" in names and "memory_write" not in names, mode
                err, out = await _call(client, "memory_search", {"query": "anything"})
                assert not err and out["method"] == "lexical", (mode, out)
                err, text = await _call(client, "memory_write", {"summary": "Not written"})
                assert err and text.startswith("refused: memory_write writes notes, which is not")
                assert "is read-only; it needs a grant issued with --write;" in text

    anyio.run(main)


def test_read_grant_cannot_write(served: Served) -> None:
    async def main() -> None:
        async with _client(served, served.tokens["read"], mode="legacy") as client:
            err, text = await _call(client, "memory_write", {"summary": "Must not be written"})
            assert err and "read-only" in text

    anyio.run(main)
    assert all(n.summary != "Must not be written" for n in served.memory.notes.list())


def _raw(served: Served, token: str, method: str, session: str | None = None) -> httpx.Response:
    """One JSON-RPC request over HTTP (initialize, or a listing within `session`)."""
    headers = {**_ACCEPT, "Authorization": f"Bearer {token}"}
    if session is not None:
        headers["Mcp-Session-Id"] = session
        headers["Mcp-Protocol-Version"] = "2025-11-25"
    body = _INIT if method == "initialize" else {"jsonrpc": "2.0", "id": 2, "method": method}
    return httpx.post(served.url, json=body, headers=headers, timeout=30)


_EVERY = ("initialize", "tools/list", "resources/list", "prompts/list")


def test_expired_grant_refused_on_every_request(served: Served) -> None:
    for method in _EVERY:
        response = _raw(served, served.tokens["expired"], method)
        assert response.status_code == 401, (method, response.text)
        assert "expired" in response.text and "memdir mcp grant" in response.text
        assert served.tokens["expired"] not in response.text


def test_revoked_grant_refused_on_every_request_at_once(served: Served) -> None:
    grant_id, token = make_grant(served.memory, served.home.parent / "soon-revoked.grant")
    opened = _raw(served, token, "initialize")
    assert opened.status_code == 200, opened.text
    session = opened.headers.get("mcp-session-id")
    for method in _EVERY[1:]:
        assert _raw(served, token, method, session).status_code == 200, method
    revoke_grant(served.memory, grant_id)
    for method in _EVERY:
        response = _raw(served, token, method, session)
        assert response.status_code == 401, (method, response.text)
        assert "revoked" in response.text

    # A client that was connected before gets no further answer either.
    async def main() -> None:
        async with _client(served, token) as client:
            await client.list_tools()

    with pytest.raises(ExceptionGroup) as info:  # the SDK's task groups wrap its error
        anyio.run(main)
    assert info.group_contains(MCPError)


def test_tools_list_offers_only_what_the_grant_may_call(served: Served) -> None:
    async def names(token: str) -> set[str]:
        async with _client(served, token) as client:
            return {t.name for t in (await client.list_tools()).tools}

    async def main() -> None:
        everything = set(TOOL_NAMES)
        read = await names(served.tokens["read"])
        assert read == everything - {"memory_write", "memory_delete", "memory_merge"}
        assert all(
            t.annotations is not None and t.annotations.read_only_hint
            for t in (await _tools(served, served.tokens["read"]))
        )
        assert await names(served.tokens["write"]) == everything - {"memory_delete", "memory_merge"}
        assert await names(served.tokens["delete"]) == everything

    anyio.run(main)


async def _tools(served: Served, token: str) -> list[Any]:
    async with _client(served, token) as client:
        return list((await client.list_tools()).tools)


def test_tokens_never_logged(served: Served) -> None:
    text = all_text(served.home) + served.stderr.read_text()
    assert all(token not in text for token in served.tokens.values())
    actions = [
        json.loads(line)["action"] for line in (served.home / "audit" / "audit.jsonl").open()
    ]
    assert "grant" in actions


def test_only_loopback_binds(tmp_path: Path) -> None:
    assert parse_http_address("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert parse_http_address("[::1]:8080") == ("::1", 8080)
    for bad in ("0.0.0.0:8080", "192.168.1.2:80", "example.com:80"):
        with pytest.raises(Refused):
            parse_http_address(bad)
    cmd = memdir_command()
    proc = subprocess.run(
        [
            *cmd,
            "--project",
            str(tmp_path),
            "--home",
            str(tmp_path / "h"),
            "mcp",
            "serve",
            "--http",
            "0.0.0.0:8765",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 4 and "loopback" in proc.stderr
