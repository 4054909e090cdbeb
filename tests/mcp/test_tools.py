"""The MCP tool handlers (`memdir.mcp.tools`) under a grant's access: what a
caller may see when the same id exists in both scopes, and the errors agents get."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from memdir import Memory
from memdir.core import AccessLevel, Note, render_note
from memdir.errors import MemdirError, Refused, Remedy, SyncRefused
from memdir.mcp.access import CURRENT, Access
from memdir.mcp.failures import remedy_text
from memdir.mcp.registry import wrap
from memdir.mcp.tools import Tool, tool_named
from memdir.mcp.tools.record import READS

USER_ONLY = Access(AccessLevel.READ_WRITE, "user", False, "g-user")
BOTH = Access(AccessLevel.READ_WRITE, "both", False, None)


@pytest.fixture
def twin(memory: Memory) -> Memory:
    """Note `shared` in both scopes: the project one edited twice, with a link."""
    memory.remember("Project plan", "see [[project-target]]", scope="project", id="shared")
    memory.remember("Project target", "x", scope="project", id="project-target")
    memory.remember("Project plan v2", "PROJECT ONLY TEXT [[project-target]]", id="shared")
    # The same id in the user scope, as sync or a hand edit can leave it (remember refuses).
    note = Note(id="shared", summary="User note", body="user body", created_at=1, updated_at=1)
    (memory.stores.directory("user") / "shared.md").write_bytes(render_note(note))
    return memory


def call(memory: Memory, access: Access, name: str, **kwargs: Any) -> dict[str, Any]:
    tool = tool_named(name)
    assert tool is not None
    token = CURRENT.set(access)
    try:
        out = tool.handler(memory, **kwargs)
    finally:
        CURRENT.reset(token)
    assert isinstance(out, BaseModel)
    return out.model_dump()


def test_a_user_grant_diffs_the_user_note_not_the_project_note(twin: Memory) -> None:
    out = call(twin, USER_ONLY, "memory_diff", id="shared")
    assert "PROJECT ONLY" not in out["diff"]
    assert out["diff"] == ""  # the user note has one version
    both = call(twin, BOTH, "memory_diff", id="shared")
    assert "PROJECT ONLY TEXT" in both["diff"]


def test_a_user_grant_gets_the_user_notes_links(twin: Memory) -> None:
    out = call(twin, USER_ONLY, "memory_links", id="shared")
    assert out["outgoing"] == [] and out["dangling"] == []
    both = call(twin, BOTH, "memory_links", id="shared")
    assert [link["id"] for link in both["outgoing"]] == ["project-target"]


def test_a_user_grant_reads_the_user_notes_history(twin: Memory) -> None:
    user = call(twin, USER_ONLY, "memory_history", id="shared")
    both = call(twin, BOTH, "memory_history", id="shared")
    assert len(user["entries"]) == 1
    assert len(both["entries"]) == 2


def test_search_filters_run_inside_the_search(memory: Memory) -> None:
    for i in range(30):
        memory.remember(f"Staging deploy fact {i}", "staging", type="project", tags=["ops"])
    memory.remember("Staging deploy rule", "staging", type="feedback", tags=["ops", "Rule"])
    out = call(memory, BOTH, "memory_search", query="staging deploy", type="feedback", limit=1)
    assert [h["id"] for h in out["hits"]] == [memory.notes.list(type="feedback")[0].id]
    assert out["hits"][0]["tags"] == ["ops", "Rule"]
    tagged = call(memory, BOTH, "memory_search", query="staging", tags=["RULE"], limit=5)
    assert len(tagged["hits"]) == 1
    many = call(memory, BOTH, "memory_search", query="staging", type="project", limit=25)
    assert len(many["hits"]) == 25


def _tool(name: str, handler: Any) -> Tool:
    return Tool(name, handler, description="", annotations=READS, access=AccessLevel.READ)


@pytest.mark.parametrize("hint", list(Remedy))
def test_every_remedy_has_an_agent_facing_sentence(hint: Remedy) -> None:
    text = remedy_text(hint)
    # What the agent does: ask the user for a step (a command it can name), or call a tool.
    assert text.startswith(("ask the user", "it belongs")) or "memory_" in text, text
    assert "--" not in text  # no CLI option syntax for the agent to misread as its own


def test_tool_errors_start_with_the_kind_and_carry_the_hint(memory: Memory) -> None:
    import anyio
    from mcp_types import CallToolResult

    def refuse(memory: Memory) -> None:
        raise SyncRefused("sync is off; notes stay local", hint=Remedy.SYNC_ON)

    # The wrapper every registered tool goes through.
    wrapped = wrap(_tool("memory_refuse", refuse), memory, anyio.CapacityLimiter(1))
    result = anyio.run(wrapped)
    assert isinstance(result, CallToolResult) and result.is_error
    message = result.content[0].text  # type: ignore[union-attr]
    assert message.startswith("refused: sync is off; notes stay local (")
    assert remedy_text(Remedy.SYNC_ON) in message
    assert "Error executing tool" not in message
    assert isinstance(SyncRefused("x"), Refused)
    assert not isinstance(result, MemdirError)


def test_a_crash_is_an_internal_error_that_tells_nothing(memory: Memory) -> None:
    import anyio
    from mcp_types import CallToolResult

    def crash(memory: Memory) -> None:
        raise RuntimeError("/home/someone/secret-path exploded")

    tool = _tool("memory_crash", crash)
    result = anyio.run(wrap(tool, memory, anyio.CapacityLimiter(1)))
    assert isinstance(result, CallToolResult) and result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("internal: memory_crash failed unexpectedly")
    assert "secret-path" not in text
