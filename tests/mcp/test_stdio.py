"""The MCP server over stdio, driven by the official MCP client in a subprocess."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import all_text, make_grant, memdir_command, stdio_params

from mcp import Client
from memdir import Memory
from memdir.clients.grants import GrantStore, revoke_grant
from memdir.mcp.access import Gate
from memdir.mcp.tools import TOOL_NAMES
from memdir.store import UsageStats
from memdir.sync.baseline import Baseline


async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    return bool(result.is_error), (text if result.is_error else result.structured_content)


def test_tools_carry_annotations_and_schemas(env: tuple[Path, Path]) -> None:
    project, home = env

    async def main() -> None:
        async with Client(stdio_params(project, home)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == set(TOOL_NAMES)
            for tool in tools.values():
                a = tool.annotations
                assert a is not None
                assert None not in (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
                assert tool.output_schema is not None
                assert tool.input_schema["type"] == "object"
            assert tools["memory_read"].annotations.read_only_hint is True  # type: ignore[union-attr]
            assert tools["memory_delete"].annotations.destructive_hint is True  # type: ignore[union-attr]
            assert "other language" in " ".join((tools["memory_write"].description or "").split())
            uris = {str(r.uri) for r in (await client.list_resources()).resources}
            assert {"memdir://prompt-index", "memdir://guidance"} <= uris
            prompts = {p.name for p in (await client.list_prompts()).prompts}
            assert {"memory_index", "memory_guidance"} <= prompts

    anyio.run(main)


def test_full_round_trip(env: tuple[Path, Path], memory: Memory) -> None:
    project, home = env

    async def main() -> None:
        async with Client(stdio_params(project, home)) as client:
            err, out = await _call(
                client,
                "memory_write",
                {
                    "summary": "Deploys go through the staging cluster first",
                    "body": "Prod broke once. See [[runbook-missing]].",
                    "type": "project",
                    "tags": ["deploy", "staging", "Bereitstellung"],
                },
            )
            assert not err, out
            note_id, first_rev = out["id"], out["revision"]
            assert out["created"] and out["dangling_links"] == ["runbook-missing"]

            err, out = await _call(
                client, "memory_search", {"query": "staging", "tags": ["deploy"]}
            )
            assert not err and [h["id"] for h in out["hits"]] == [note_id]
            assert "body" not in out["hits"][0]  # progressive disclosure: snippets only
            err, out = await _call(client, "memory_search", {"query": "staging", "type": "user"})
            assert not err and out["hits"] == []

            err, out = await _call(client, "memory_retrieve", {"query": "staging"})
            chunk = out["chunks"][0]
            assert chunk["id"] == note_id and chunk["end"] > chunk["start"] >= 0
            assert chunk["chunk_hash"] and chunk["revision"] and chunk["source"]

            err, out = await _call(
                client,
                "memory_write",
                {"id": note_id, "summary": "Deploys go through staging, then canary"},
            )
            assert not err and out["changed"] and not out["created"]

            err, out = await _call(client, "memory_read", {"id": note_id})
            assert out["summary"] == "Deploys go through staging, then canary"
            assert "Prod broke once" in out["body"]

            err, out = await _call(client, "memory_history", {"id": note_id})
            assert [e["current"] for e in out["entries"]] == [False, True]
            err, out = await _call(
                client, "memory_read_revision", {"id": note_id, "revision": first_rev[:12]}
            )
            assert not err and out["summary"] == "Deploys go through the staging cluster first"
            err, out = await _call(client, "memory_diff", {"id": note_id})
            assert "-summary: Deploys go through the staging cluster first" in out["diff"]
            assert "+summary: Deploys go through staging, then canary" in out["diff"]

            other = memory.remember("Canary lasts an hour", f"After [[{note_id}]].").note.id
            err, out = await _call(client, "memory_links", {"id": note_id})
            assert [b["id"] for b in out["backlinks"]] == [other]
            assert out["dangling"] == ["runbook-missing"]

            err, text = await _call(client, "memory_delete", {"id": note_id})
            assert err and "confirm" in text
            err, out = await _call(client, "memory_delete", {"id": note_id, "confirm": True})
            assert not err and out["backup_id"]
            assert memory.backups()[0].note_id == note_id
            err, text = await _call(client, "memory_read", {"id": note_id})
            assert err and text.startswith("not_found: no note"), text
            err, text = await _call(client, "memory_read", {"id": "../etc/passwd"})
            assert err and text.startswith("invalid: note id '../etc/passwd'"), text

    anyio.run(main)


def test_private_notes_are_invisible(env: tuple[Path, Path], memory: Memory) -> None:
    project, home = env
    secret = memory.remember("Private zebra fact", "zebra zebra", private=True).note.id
    public = memory.remember("Public zebra fact", f"zebra, see [[{secret}]]").note.id

    async def main() -> None:
        async with Client(stdio_params(project, home)) as client:
            err, text = await _call(client, "memory_read", {"id": secret})
            assert err and text.startswith("not_found: no note")
            for tool in ("memory_history", "memory_links", "memory_diff"):
                err, text = await _call(client, tool, {"id": secret})
                assert err and text.startswith("not_found: no note"), tool
            err, text = await _call(client, "memory_write", {"id": secret, "summary": "x"})
            assert err and text.startswith("not_found: no note")
            err, out = await _call(client, "memory_search", {"query": "zebra"})
            assert [h["id"] for h in out["hits"]] == [public]
            err, out = await _call(client, "memory_links", {"id": public})
            assert all(link["summary"] is None for link in out["outgoing"])
            index = await client.read_resource("memdir://prompt-index")
            assert "Private zebra" not in index.contents[0].text  # type: ignore[union-attr]

    anyio.run(main)
    assert memory.read(secret).summary == "Private zebra fact"


def test_config_read_access_refuses_writes(env: tuple[Path, Path]) -> None:
    project, home = env
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n\n[mcp]\naccess = "read"\n')

    async def main() -> None:
        async with Client(stdio_params(project, home)) as client:
            err, text = await _call(client, "memory_write", {"summary": "A fact"})
            assert err and "read-only" in text
            err, text = await _call(client, "memory_delete", {"id": "x", "confirm": True})
            assert err and text.startswith("refused: "), text

    anyio.run(main)
    assert not (project / "MEMORY").exists() or not list((project / "MEMORY").glob("*.md"))


def test_grants_narrow_and_revoke_at_once(
    env: tuple[Path, Path], memory: Memory, tmp_path: Path
) -> None:
    project, home = env
    note = memory.remember("Grant target note", "body").note.id
    read_file, write_file = tmp_path / "read.grant", tmp_path / "write.grant"
    _, read_token = make_grant(memory, read_file)
    write_id, write_token = make_grant(memory, write_file, write=True)
    errlog = (tmp_path / "stderr.log").open("w")

    async def main() -> None:
        async with Client(stdio_params(project, home, "--grant-file", str(read_file))) as client:
            err, _ = await _call(client, "memory_read", {"id": note})
            assert not err
            err, text = await _call(client, "memory_write", {"summary": "Nope"})
            assert err and "read-only" in text
        params = stdio_params(project, home, "--grant-file", str(write_file))
        async with Client(params) as client:
            err, _out = await _call(client, "memory_write", {"summary": "Allowed by grant"})
            assert not err
            err, text = await _call(client, "memory_delete", {"id": note, "confirm": True})
            assert err and "not allowed" in text  # a write grant is not a delete grant
            revoke_grant(memory, write_id)
            err, text = await _call(client, "memory_read", {"id": note})
            assert err and "revoked" in text
            err, text = await _call(client, "memory_write", {"summary": "After revoke"})
            assert err and "revoked" in text

    anyio.run(main)
    errlog.close()
    assert [n.summary for n in memory.notes.list() if n.summary == "After revoke"] == []
    assert memory.read(note)
    leaked = all_text(home, project, tmp_path / "stderr.log")
    assert read_token not in leaked and write_token not in leaked


def test_expired_grant_refuses_to_start(
    env: tuple[Path, Path], memory: Memory, tmp_path: Path
) -> None:
    project, home = env
    store = GrantStore(home, clock=lambda: 1_000)  # issued in 1970: long expired
    out = tmp_path / "old.grant"
    from memdir.clients.grants import issue_grant

    issue_grant(memory, minutes=5, out=out, store=store)
    token = json.loads(out.read_text())["token"]
    cmd = memdir_command()
    proc = subprocess.run(
        [
            *cmd,
            "--project",
            str(project),
            "--home",
            str(home),
            "mcp",
            "serve",
            "--grant-file",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 4
    assert "expired" in proc.stderr and token not in proc.stderr + proc.stdout


def test_legacy_2024_11_05_client(env: tuple[Path, Path]) -> None:
    """A client that speaks only 2024-11-05 gets that version and can call tools."""
    project, home = env
    params = stdio_params(project, home)
    proc = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin and proc.stdout

    def send(msg: dict[str, Any]) -> None:
        assert proc.stdin
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {},
                    "clientInfo": {"name": "old-client", "version": "0"},
                },
            }
        )
        init = json.loads(proc.stdout.readline())
        assert init["result"]["protocolVersion"] == "2024-11-05"
        assert init["result"]["capabilities"]["tools"] is not None
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = json.loads(proc.stdout.readline())
        names = {t["name"] for t in listed["result"]["tools"]}
        assert set(TOOL_NAMES) <= names
        send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "memory_search", "arguments": {"query": "anything"}},
            }
        )
        called = json.loads(proc.stdout.readline())
        assert called["result"]["isError"] is False
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


@pytest.mark.parametrize("mode", ["legacy"])
def test_current_handshake_version(env: tuple[Path, Path], mode: str) -> None:
    project, home = env

    async def main() -> None:
        async with Client(stdio_params(project, home), mode=mode) as client:
            assert client.protocol_version == "2025-11-25"
        async with Client(stdio_params(project, home)) as client:
            assert client.protocol_version == "2026-07-28"

    anyio.run(main)


def test_concurrent_calls_on_a_synced_project(env: tuple[Path, Path], memory: Memory) -> None:
    # A project that synced has sync state databases; the server reads them (held notes)
    # in worker threads, from calls that arrive all at once.
    project, home = env
    ids = [
        memory.remember(f"Deploy fact number {i} about staging", "body", type="project").note.id
        for i in range(5)
    ]
    for scope in memory.scopes:
        key = memory.stores.store(scope).state_key
        Baseline(home / "memory-sync" / f"{key}.sqlite").close()
    errors: list[str] = []

    async def call(client: Client, name: str, args: dict[str, Any]) -> None:
        err, out = await _call(client, name, args)
        if err:
            errors.append(f"{name}: {out}")

    async def main() -> None:
        async with Client(stdio_params(project, home)) as client:
            for round_ in range(2):
                async with anyio.create_task_group() as tg:
                    for j in range(6):
                        tg.start_soon(call, client, "memory_search", {"query": "staging deploy"})
                        tg.start_soon(call, client, "memory_retrieve", {"query": "fact"})
                        tg.start_soon(call, client, "memory_read", {"id": ids[j % len(ids)]})
                        tg.start_soon(call, client, "memory_links", {"id": ids[0]})
                        summary = f"Concurrent write {round_} {j} on staging"
                        tg.start_soon(call, client, "memory_write", {"summary": summary})
            err, out = await _call(client, "memory_search", {"query": "concurrent", "limit": 20})
            assert not err
            assert len(out["hits"]) == 12

    anyio.run(main)
    assert errors == []


def test_recalls_counted_by_the_mcp_server_are_on_disk_once_it_has_served(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memdir mcp serve` returns from `serve` and the process exits (the CLI never closes
    its Memory): the write-behind thread is a daemon, so what it holds then is lost."""
    from types import SimpleNamespace

    from memdir.mcp import server as mcp_server

    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    m = Memory.open(project, home=home)
    m.usage.coalesce = 60.0  # the writer has not run yet
    try:
        written = m.remember("Walrus migration", "The walrus migration starts in spring.")
        recalled: list[str] = []

        async def run_stdio_async() -> None:  # the client asks once, then hangs up
            recalled.extend(m.recall("when does the walrus migration start?").note_ids)

        fake = SimpleNamespace(run_stdio_async=run_stdio_async)
        monkeypatch.setattr(mcp_server, "build_server", lambda memory, gate, states=None: fake)
        gate = Gate(m.settings.mcp_access)
        mcp_server.run(m, gate, GrantStore(home), states=None, address=None)
        assert recalled == [written.note.id]
        key = m.stores.chosen("project")[0].state_key
        assert UsageStats(home / "memory-usage").counts(key) == {written.note.id: 1}
    finally:
        m.close()
