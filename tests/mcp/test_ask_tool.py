"""The `memory_ask` tool (§10): under read access through the tool function (scripted chat
server on loopback), the grant's scope, and through the real MCP server — listed and
answered under a read grant, refused once the grant is revoked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import make_grant, stdio_params
from pydantic import BaseModel

from answer import answered, cite
from extract import ChatServer, completion
from loopback import serving
from mcp import Client
from memdir import Memory
from memdir.clients.grants import revoke_grant
from memdir.core import AccessLevel
from memdir.errors import Refused
from memdir.extract import HttpChatClient
from memdir.mcp.access import CURRENT, Access
from memdir.mcp.tools import TOOL_NAMES, usable_tools
from memdir.mcp.tools.ask import memory_ask

READ = Access(AccessLevel.READ, "both", False, "g-read")
USER_READ = Access(AccessLevel.READ, "user", False, "g-user")
QUESTION = "Which strategy do our deploys on the staging cluster use?"


def ask(memory: Memory, access: Access, **kwargs: Any) -> dict[str, Any]:
    token = CURRENT.set(access)
    try:
        out = memory_ask(memory, **kwargs)
    finally:
        CURRENT.reset(token)
    assert isinstance(out, BaseModel)
    return out.model_dump()


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with serving(ChatServer()) as srv:
        yield srv


@pytest.fixture
def asking(env: tuple[Path, Path], server: ChatServer) -> Iterator[Memory]:
    project, home = env
    client = HttpChatClient(server.url, "small-model", max_retries=0)
    memory = Memory.open(project, home=home, chat=client)
    memory.remember("Deploys", "Our deploys use the blue green strategy on staging.", id="deploys")
    try:
        yield memory
    finally:
        memory.close()
        client.close()


def test_memory_ask_is_a_read_tool() -> None:
    assert "memory_ask" in TOOL_NAMES
    assert "memory_ask" in usable_tools(READ) and "memory_ask" in usable_tools(USER_READ)


def test_a_grounded_answer_under_read_access(asking: Memory, server: ChatServer) -> None:
    chunk = next(c for c in asking.index.retrieve(QUESTION) if c.note_id == "deploys")
    server.answer(completion(answered(("Deploys are blue green.", [cite(chunk)]))))
    out = ask(asking, READ, question=QUESTION)
    assert out["status"] == "answered" and out["text"] == "Deploys are blue green."
    assert out["claims"] == [
        {
            "text": "Deploys are blue green.",
            "citations": [
                {
                    "id": "deploys",
                    "revision": chunk.revision,
                    "start": chunk.start,
                    "end": chunk.end,
                }
            ],
        }
    ]
    assert "memory_read" in out["hint"] and out["chunks_sent"] == 1


def test_hostile_and_empty_outcomes(asking: Memory, server: ChatServer) -> None:
    chunk = next(c for c in asking.index.retrieve(QUESTION) if c.note_id == "deploys")
    server.answer(completion(answered(("Blue green.", [cite(chunk, note_id="elsewhere")]))))
    refused = ask(asking, READ, question=QUESTION)
    assert refused["status"] == "refused" and refused["claims"] == []
    assert "memory_retrieve" in refused["hint"]
    server.seen.clear()
    nothing = ask(asking, READ, question="What is the capital of Australia?")
    assert nothing["status"] == "insufficient_evidence" and server.seen == []
    assert "rather than guess" in nothing["hint"]


def test_the_grants_scope_limits_the_notes(asking: Memory, server: ChatServer) -> None:
    out = ask(asking, USER_READ, question=QUESTION)  # the deploy note is a project note
    assert out["status"] == "insufficient_evidence" and server.seen == []
    with pytest.raises(Refused, match="user scope only"):
        ask(asking, USER_READ, question=QUESTION, scope="project")


def test_memory_ask_through_the_server_needs_a_valid_grant(
    env: tuple[Path, Path], memory: Memory, tmp_path: Path
) -> None:
    project, home = env
    memory.remember("Deploys", "Our deploys use the blue green strategy on staging.")
    grant_file = tmp_path / "read.grant"
    grant_id, _ = make_grant(memory, grant_file)  # read-only

    async def call() -> tuple[Any, ...]:
        params = stdio_params(project, home, "--grant-file", str(grant_file))
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            result = await client.call_tool("memory_ask", {"question": "capital of Australia"})
            empty = await client.call_tool("memory_ask", {"question": ""})
            revoke_grant(memory, grant_id)  # the grant is read again on every call
            denied = await client.call_tool("memory_ask", {"question": "How do we deploy?"})
            return tools, result, empty, denied

    tools, result, empty, denied = anyio.run(call)
    assert "memory_write" not in tools and "memory_ask" in tools
    annotations = tools["memory_ask"].annotations
    assert annotations is not None and annotations.read_only_hint
    assert not result.is_error
    assert result.structured_content["status"] == "insufficient_evidence"
    assert empty.is_error
    assert denied.is_error
    text = " ".join(getattr(c, "text", "") for c in denied.content)
    assert text.startswith("refused") and "revoked" in text
