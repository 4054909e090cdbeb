"""Tests for `extract/run.py`: a pass never breaks its host: failing models, broken
clients and a missing endpoint come back as an error on the result."""

from __future__ import annotations

import py_compile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from memdir import Memory
from memdir.extract import ExtractionState, HttpChatClient

from . import ON_STOP, TALK, ChatServer, Reply, notes_answer


def test_a_failing_model_reports_an_error_and_keeps_the_state(
    memory: Memory, server: ChatServer, chat: HttpChatClient
) -> None:
    server.answer(Reply(503, b"{}"))
    state = ExtractionState(1, None)
    result = memory.agent.extract(TALK, chat, state=state, force=True)
    assert result.error is not None and "503" in result.error
    assert result.state == state
    server.answer(Reply(307, b"", {"Location": server.url}))
    assert "redirect" in (memory.agent.extract(TALK, chat, force=True).error or "")


def test_a_broken_host_client_does_not_break_the_host(memory: Memory) -> None:
    class Broken:
        def complete(self, messages: Sequence[Mapping[str, Any]], *, json_mode: bool = False):
            raise RuntimeError("boom")

    result = memory.agent.extract(TALK, Broken(), force=True)
    assert result.error == "the model call failed: RuntimeError"


def test_without_a_client_the_user_config_endpoint_is_used(
    open_memory: Callable[..., Memory], server: ChatServer
) -> None:
    memory = open_memory(ON_STOP + f'[llm]\nurl = "{server.url}"\nmodel = "tiny"\n')
    server.answer(notes_answer({"action": "create", "summary": "From config"}))
    result = memory.agent.extract(TALK)
    assert len(result.created) == 1
    assert server.seen[0].body["model"] == "tiny"
    bare = open_memory("[memory.autoExtract]\nonStop = true\n")
    assert "llm.url" in (bare.agent.extract(TALK).error or "")


def test_the_agent_loop_example_compiles(tmp_path: Path) -> None:
    example = Path(__file__).parents[2] / "examples" / "agent_loop.py"
    py_compile.compile(str(example), cfile=str(tmp_path / "agent_loop.pyc"), doraise=True)
