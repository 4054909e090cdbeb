"""`supersedes` on `memory_write` (issue 11): through the tool functions under a grant's
access, and through the real MCP server over stdio (input validation included)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import stdio_params
from pydantic import BaseModel

from mcp import Client
from memdir import Memory
from memdir.core import AccessLevel
from memdir.errors import NotFound, Refused
from memdir.guidance import EMPTY_INDEX
from memdir.mcp.access import CURRENT, Access
from memdir.mcp.tools.notes import MAX_SUPERSEDES, memory_write

BOTH = Access(AccessLevel.READ_WRITE, "both", False, None)
USER_ONLY = Access(AccessLevel.READ_WRITE, "user", False, "g-user")


def write(memory: Memory, access: Access, **kwargs: Any) -> dict[str, Any]:
    token = CURRENT.set(access)
    try:
        out = memory_write(memory, **kwargs)
    finally:
        CURRENT.reset(token)
    assert isinstance(out, BaseModel)
    return out.model_dump()


def test_memory_write_supersedes(memory: Memory) -> None:
    old = memory.remember("Lint with flake8", "flake8 runs in CI.", type="project").note.id
    out = write(
        memory, BOTH, summary="Lint with ruff", body="ruff replaced flake8.", supersedes=[old]
    )
    assert out["supersedes"] == [old] and out["created"]
    assert memory.read(out["id"]).supersedes == (old,)
    assert old not in memory.agent.prompt_index()
    # On update the list is replaced; leaving it out keeps it.
    kept = write(memory, BOTH, summary="Lint with ruff", body="ruff only.", id=out["id"])
    assert kept["supersedes"] == [old]
    cleared = write(memory, BOTH, summary="Lint with ruff", id=out["id"], supersedes=[])
    assert cleared["supersedes"] == []


def test_a_private_note_cannot_be_superseded_over_mcp(memory: Memory) -> None:
    secret = memory.remember("Private lint notes", "mine", private=True).note.id
    with pytest.raises(NotFound, match=f"no note {secret}$"):
        write(memory, BOTH, summary="Lint with ruff", supersedes=[secret])
    assert [n.id for n in memory.notes.list()] == [secret]  # nothing written
    assert memory.agent.prompt_index() == EMPTY_INDEX  # only the private note: nothing listed


def test_a_grant_cannot_supersede_or_probe_a_note_outside_its_scope(memory: Memory) -> None:
    project = memory.remember("Project lint rule", type="project").note.id
    with pytest.raises(NotFound, match=f"no note {project}$"):
        write(memory, USER_ONLY, summary="My lint rule", type="user", supersedes=[project])
    mine = memory.remember("My old lint rule", type="user").note.id
    out = write(memory, USER_ONLY, summary="My lint rule", type="user", supersedes=[mine])
    assert out["scope"] == "user" and out["supersedes"] == [mine]


def test_memory_write_refuses_other_scopes_and_cycles(memory: Memory) -> None:
    user = memory.remember("My editor is vim", type="user").note.id
    with pytest.raises(Refused, match="own scope"):
        write(memory, BOTH, summary="The editor is helix", type="project", supersedes=[user])
    a = memory.remember("Version a", type="project").note.id
    b = memory.remember("Version b", type="project", supersedes=[a]).note.id
    with pytest.raises(Refused, match="cycle"):
        write(memory, BOTH, summary="Version a", id=a, supersedes=[b])


async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    return bool(result.is_error), (text if result.is_error else result.structured_content)


def test_supersedes_through_the_mcp_server(env: tuple[Path, Path], memory: Memory) -> None:
    project, home = env
    old = memory.remember("Deploys use Capistrano", "cap deploy", type="project").note.id

    async def main() -> None:
        async with Client(stdio_params(project, home)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            schema = tools["memory_write"].input_schema["properties"]["supersedes"]
            listed = next(s for s in schema["anyOf"] if s.get("type") == "array")
            assert listed["maxItems"] == MAX_SUPERSEDES
            assert listed["items"]["pattern"].startswith("^[a-z0-9]")

            err, out = await _call(
                client,
                "memory_write",
                {"summary": "Deploys use Kamal", "body": "kamal deploy", "supersedes": [old]},
            )
            assert not err, out
            new = out["id"]
            assert out["supersedes"] == [old]
            err, out = await _call(client, "memory_search", {"query": "deploys"})
            hits = {h["id"]: h for h in out["hits"]}
            assert hits[old]["superseded_by"] == new
            assert [h["id"] for h in out["hits"]][:2] == [new, old]

            bad: list[tuple[object, str]] = [
                (["../etc/passwd"], "must not contain"),
                (["Upper-Case"], "lower-case"),
                ([f"note-{i}" for i in range(MAX_SUPERSEDES + 1)], str(MAX_SUPERSEDES)),
                ("just-one-id", "list"),
                ([7], "string"),
            ]
            for value, words in bad:
                err, text = await _call(
                    client, "memory_write", {"summary": "Invalid", "supersedes": value}
                )
                assert err and words in text, (value, text)
            err, text = await _call(
                client, "memory_write", {"summary": "Unknown", "supersedes": ["no-such-note"]}
            )
            assert err and text.startswith("not_found: no note no-such-note")
            err, text = await _call(
                client, "memory_write", {"summary": "Itself", "id": new, "supersedes": [new]}
            )
            assert err and text.startswith("invalid:") and "itself" in text

    anyio.run(main)
    assert sorted(n.summary for n in memory.notes.list()) == [
        "Deploys use Capistrano",
        "Deploys use Kamal",
    ]
