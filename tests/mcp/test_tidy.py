"""The read-only `memory_tidy` tool (issue 11, §6): through the tool functions under a grant's
access (scope, private notes, kinds) and through the real MCP server under a read grant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import make_grant, stdio_params
from pydantic import BaseModel, ValidationError

from mcp import Client
from memdir import Memory
from memdir.clients.grants import GrantStore, read_grant_file
from memdir.core import AccessLevel
from memdir.errors import Refused
from memdir.mcp.access import CURRENT, Access, Gate
from memdir.mcp.tools import TOOL_NAMES, usable_tools
from memdir.mcp.tools.tidy import memory_tidy

READ = Access(AccessLevel.READ, "both", False, "g-read")
USER_READ = Access(AccessLevel.READ, "user", False, "g-user")


def tidy(memory: Memory, access: Access, **kwargs: Any) -> dict[str, Any]:
    token = CURRENT.set(access)
    try:
        out = memory_tidy(memory, **kwargs)
    finally:
        CURRENT.reset(token)
    assert isinstance(out, BaseModel)
    return out.model_dump()


@pytest.fixture
def notes(memory: Memory) -> dict[str, str]:
    return {
        "project": memory.remember("Project link", "[[nowhere-a1]]").note.id,
        "user": memory.remember("User link", "[[nowhere-b2]]", scope="user").note.id,
        "private": memory.remember("Private link", "[[nowhere-c3]]", private=True).note.id,
        "long": memory.remember("Long", "x" * 8001).note.id,
    }


def test_a_read_grant_lists_findings(memory: Memory, notes: dict[str, str]) -> None:
    assert "memory_tidy" in usable_tools(READ)
    out = tidy(memory, READ)
    listed = {(f["kind"], tuple(f["notes"])) for f in out["findings"]}
    assert listed == {
        ("broken_link", (notes["project"],)),
        ("broken_link", (notes["user"],)),
        ("too_long", (notes["long"],)),
    }  # never the private note
    assert all(set(f) == {"id", "kind", "scope", "notes", "reason"} for f in out["findings"])
    assert "memory_read" in out["hint"]
    assert memory.tidy.findings()  # nothing changed: the list is the same afterwards
    assert {f.id for f in memory.tidy.findings(hide_private=True)} == {
        f["id"] for f in out["findings"]
    }


def test_kinds_and_the_grants_scope(memory: Memory, notes: dict[str, str]) -> None:
    only = tidy(memory, READ, kinds=["too_long"])
    assert [f["kind"] for f in only["findings"]] == ["too_long"]
    user = tidy(memory, USER_READ)
    assert [(f["kind"], f["notes"]) for f in user["findings"]] == [("broken_link", [notes["user"]])]
    with pytest.raises(Refused, match="user scope only"):
        tidy(memory, USER_READ, scope="project")


def test_nothing_to_tidy(memory: Memory) -> None:
    assert tidy(memory, READ) == {"findings": [], "hint": "nothing to tidy"}


def test_memory_tidy_through_the_server_under_a_read_grant(
    env: tuple[Path, Path], memory: Memory, notes: dict[str, str], tmp_path: Path
) -> None:
    project, home = env
    grant_file = tmp_path / "read.grant"
    make_grant(memory, grant_file)
    store = GrantStore(memory.settings.home)
    access = Gate("read_write", store, fixed=read_grant_file(grant_file)).resolve(None)
    assert access.level is AccessLevel.READ
    assert usable_tools(access) == set(TOOL_NAMES) - {
        "memory_write",
        "memory_delete",
        "memory_merge",
    }
    assert "memory_tidy" in usable_tools(access)

    async def main() -> None:
        params = stdio_params(project, home, "--grant-file", str(grant_file))
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "memory_write" not in tools
            tool = tools["memory_tidy"]
            assert tool.annotations is not None and tool.annotations.read_only_hint
            kinds = tool.input_schema["properties"]["kinds"]
            listed = next(s for s in kinds["anyOf"] if s.get("type") == "array")
            assert listed["items"]["enum"][0] == "same_topic"
            result = await client.call_tool("memory_tidy", {"kinds": ["broken_link"]})
            assert not result.is_error
            out = result.structured_content
            assert out is not None
            assert sorted(f["notes"][0] for f in out["findings"]) == sorted(
                [notes["project"], notes["user"]]
            )
            bad = await client.call_tool("memory_tidy", {"kinds": ["duplicates"]})
            assert bad.is_error
            text = " ".join(getattr(c, "text", "") for c in bad.content)
            assert "same_topic" in text

    anyio.run(main)


def test_an_unknown_kind_is_refused_by_the_schema() -> None:
    from pydantic import TypeAdapter

    from memdir.mcp.tools.arguments import KindArg

    with pytest.raises(ValidationError, match="'same_topic'"):
        TypeAdapter(KindArg).validate_python("duplicates")
