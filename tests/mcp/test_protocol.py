"""The protocol revisions `memdir mcp serve` speaks, over stdio as clients send them.

2026-07-28 (docs/specification/2026-07-28 of modelcontextprotocol/modelcontextprotocol)
has no handshake: every request carries its revision and the client's capabilities in
`_meta`, `server/discover` must be served, every result says `resultType`, results
carry the server's identity in `_meta`, and the listings carry cache hints. The older
revisions open with `initialize` and get the revision they asked for; `initialize`
asking for 2026-07-28 (which has none) gets the newest handshake revision, as the
2026-07-28 versioning page requires of a server that serves both eras.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp_helpers import Raw, stdio_params

from mcp import Client
from memdir import Memory
from memdir.mcp import server as mcp_server
from memdir.mcp.tools import TOOL_NAMES

MODERN = "2026-07-28"
HANDSHAKE = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def envelope(version: str = MODERN, **extra: Any) -> dict[str, Any]:
    """The per-request `_meta` of a 2026-07-28 request."""
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
        **extra,
    }


@pytest.fixture
def raw(env: tuple[Path, Path]) -> Iterator[Raw]:
    project, home = env
    server = Raw(project, home)
    try:
        yield server
    finally:
        server.close()


def _initialize(raw: Raw, version: str) -> dict[str, Any]:
    return raw.request(
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": f"client-{version}", "version": "0"},
        },
    )


@pytest.mark.parametrize("version", HANDSHAKE)
def test_each_handshake_revision_is_answered_with_itself(raw: Raw, version: str) -> None:
    init = _initialize(raw, version)
    assert init["result"]["protocolVersion"] == version
    assert init["result"]["serverInfo"]["name"] == "memdir"
    raw.notify("notifications/initialized")
    listed = raw.request("tools/list")
    assert [t["name"] for t in listed["result"]["tools"]] == list(TOOL_NAMES)  # fixed order
    called = raw.request(
        "tools/call", {"name": "memory_write", "arguments": {"summary": f"Fact for {version}"}}
    )
    assert called["result"]["isError"] is False
    found = raw.request("tools/call", {"name": "memory_search", "arguments": {"query": "fact"}})
    assert found["result"]["structuredContent"]["hits"][0]["summary"] == f"Fact for {version}"


def test_initialize_asking_for_2026_07_28_gets_the_newest_handshake_revision(raw: Raw) -> None:
    # 2026-07-28 has no initialize: a dual-era server answers the handshake in the legacy
    # era (versioning.mdx, "A dual-era server selects its behavior from how the client
    # opens"); the client speaks 2026-07-28 by sending the envelope instead.
    init = _initialize(raw, MODERN)
    assert init["result"]["protocolVersion"] == "2025-11-25"


def test_2026_07_28_is_served_per_request(raw: Raw) -> None:
    discover = raw.request("server/discover", {"_meta": envelope()})["result"]
    assert MODERN in discover["supportedVersions"]
    assert discover["resultType"] == "complete"
    assert discover["_meta"][SERVER_INFO]["name"] == "memdir"
    assert "memory_search" in discover["instructions"]
    assert "tools" in discover["capabilities"] and "resources" in discover["capabilities"]
    assert discover["cacheScope"] == "private"

    listed = raw.request("tools/list", {"_meta": envelope()})["result"]
    assert [t["name"] for t in listed["tools"]] == list(TOOL_NAMES)
    assert (listed["resultType"], listed["ttlMs"], listed["cacheScope"]) == (
        "complete",
        60_000,
        "private",
    )
    assert listed["_meta"][SERVER_INFO]["name"] == "memdir"

    written = raw.request(
        "tools/call",
        {"name": "memory_write", "arguments": {"summary": "A stateless fact"}, "_meta": envelope()},
    )["result"]
    assert written["resultType"] == "complete" and written["isError"] is False
    note_id = written["structuredContent"]["id"]
    read = raw.request(
        "tools/call", {"name": "memory_read", "arguments": {"id": note_id}, "_meta": envelope()}
    )["result"]
    assert read["structuredContent"]["revision"] == written["structuredContent"]["revision"]

    index = raw.request("resources/read", {"uri": "memdir://prompt-index", "_meta": envelope()})[
        "result"
    ]
    assert "A stateless fact" in index["contents"][0]["text"]
    assert (index["ttlMs"], index["cacheScope"]) == (0, "private")  # changes with every write
    unknown = raw.request("resources/read", {"uri": "memdir://nothing", "_meta": envelope()})
    assert unknown["error"]["code"] == -32602  # 2026-07-28: invalid params, not -32002


def test_2026_07_28_requests_need_their_envelope(raw: Raw) -> None:
    later = raw.request("tools/list", {"_meta": envelope("2099-01-01")})
    assert later["error"]["code"] == -32022  # UnsupportedProtocolVersionError
    assert MODERN in later["error"]["data"]["supported"]
    bare = {"io.modelcontextprotocol/protocolVersion": MODERN}
    missing = raw.request("tools/list", {"_meta": bare})
    assert missing["error"]["code"] == -32602
    assert "clientCapabilities" in missing["error"]["message"]
    # Once a connection speaks 2026-07-28, a handshake on it names what is served.
    init = _initialize(raw, "2025-11-25")
    assert init["error"]["code"] == -32022
    assert init["error"]["data"]["supported"] == [MODERN]
    gone = raw.request("ping", {"_meta": envelope()})  # removed in 2026-07-28
    assert gone["error"]["code"] == -32601


def test_the_sdk_client_gets_each_era(env: tuple[Path, Path], memory: Memory) -> None:
    project, home = env
    memory.remember("Deploys go through staging first", "body")

    async def main() -> None:
        for mode, expected in (("auto", MODERN), (MODERN, MODERN), ("legacy", "2025-11-25")):
            async with Client(stdio_params(project, home), mode=mode) as client:
                assert client.protocol_version == expected, mode
                result = await client.call_tool("memory_search", {"query": "staging"})
                assert not result.is_error and result.structured_content
                assert result.structured_content["hits"][0]["summary"].startswith("Deploys")

    anyio.run(main)


def test_the_installed_sdk_serves_every_promised_revision() -> None:
    # Fails loudly when an SDK upgrade drops a revision docs/mcp.md promises.
    assert set(mcp_server.HANDSHAKE_REVISIONS) == set(HANDSHAKE)
    assert set(HANDSHAKE) <= set(mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS)
    assert MODERN in mcp_types.version.MODERN_PROTOCOL_VERSIONS
    mcp_server.check_protocol_support()


def test_a_server_on_an_sdk_without_2026_07_28_refuses_to_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mcp_server, "MODERN_PROTOCOL_VERSIONS", ())
    with pytest.raises(RuntimeError, match="2026-07-28"):
        mcp_server.check_protocol_support()
