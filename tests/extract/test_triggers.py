"""Trigger rules (§4.3): off by default, user-only switch-on, minUserTurns, compaction, resume."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from memdir import Memory
from memdir.extract import ExtractionState, HttpChatClient, is_user_turn

from . import ON_STOP, ChatServer, assistant, notes_answer, user

ANSWER = notes_answer({"action": "create", "summary": "Deploys use blue green"})


def turns(n: int, prefix: str = "message") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        out += [user(f"{prefix} {i} from the user"), assistant(f"{prefix} {i} reply")]
    return out


def test_off_by_default(
    open_memory: Callable[..., Memory], server: ChatServer, chat: HttpChatClient
) -> None:
    memory = open_memory()
    for reason in ("stop", "compaction"):
        result = memory.agent.extract(turns(5), chat, reason=reason)  # type: ignore[arg-type]
        assert result.skipped is not None and "off" in result.skipped
        assert not result.ran and result.state == ExtractionState()
    assert server.seen == []
    server.answer(ANSWER)
    assert len(memory.agent.extract(turns(1), chat, force=True).created) == 1


def test_a_project_config_cannot_switch_it_on_but_the_user_config_can(
    open_memory: Callable[..., Memory], server: ChatServer, chat: HttpChatClient
) -> None:
    project_on = "[memory.autoExtract]\nonStop = true\nonCompaction = true\n"
    memory = open_memory("", project_on)
    assert not memory.settings.auto_extract.on_stop
    assert not memory.settings.auto_extract.on_compaction
    assert any("only the user config can switch it on" in w for w in memory.warnings)
    assert memory.agent.extract(turns(5), chat).skipped is not None
    assert server.seen == []

    user_on = open_memory(ON_STOP)
    assert user_on.settings.auto_extract.on_stop
    server.answer(ANSWER)
    assert user_on.agent.extract(turns(5), chat).ran

    project_off = open_memory(ON_STOP, "[memory.autoExtract]\nonStop = false\n")
    assert not project_off.settings.auto_extract.on_stop


def test_on_stop_waits_for_min_user_turns(
    open_memory: Callable[..., Memory], server: ChatServer, chat: HttpChatClient
) -> None:
    memory = open_memory(ON_STOP)
    server.answer(ANSWER)
    noise = [
        user(""),
        user("   "),
        user("tool output", metadata={"toolResult": True}),
        {"role": "user", "content": [{"type": "tool_result", "content": "x"}]},
        {"role": "tool", "content": "result", "tool_call_id": "c1"},
    ]
    talk = turns(2) + noise
    result = memory.agent.extract(talk, chat)
    assert result.skipped is not None and "2 new user messages" in result.skipped
    assert server.seen == []
    talk += [user("the third real message")]
    assert memory.agent.extract(talk, chat).created
    assert len(server.seen) == 1


def test_min_user_turns_is_configurable(
    open_memory: Callable[..., Memory], server: ChatServer, chat: HttpChatClient
) -> None:
    memory = open_memory(ON_STOP + "minUserTurns = 1\n")
    server.answer(ANSWER)
    assert memory.agent.extract(turns(1), chat).ran


def test_compaction_reads_the_unread_part_about_to_go_however_short(
    open_memory: Callable[..., Memory], server: ChatServer, chat: HttpChatClient
) -> None:
    memory = open_memory(ON_STOP)
    server.answer(ANSWER)
    talk = [user("old alpha decision"), assistant("ok"), user("recent beta topic")]
    result = memory.agent.extract(talk, chat, reason="compaction", discard=2)
    assert result.ran and result.state.read_count == 2
    prompt = server.seen[0].prompt
    assert "old alpha decision" in prompt and "recent beta topic" not in prompt
    # Nothing unread is left in the part about to go: no second call.
    again = memory.agent.extract(talk, chat, state=result.state, reason="compaction", discard=2)
    assert again.skipped is not None and len(server.seen) == 1


def test_resumed_session_counts_from_where_it_resumed(
    open_memory: Callable[..., Memory], server: ChatServer, chat: HttpChatClient
) -> None:
    memory = open_memory(ON_STOP)
    server.answer(ANSWER)
    first = turns(3, "first run")
    done = memory.agent.extract(first, chat)
    assert done.ran
    stored = json.loads(json.dumps(done.state.to_dict()))  # what the host persists

    resumed = first + turns(2, "second run")
    state = ExtractionState.from_dict(stored)
    assert memory.agent.extract(resumed, chat, state=state).skipped is not None
    resumed += turns(1, "third run")
    result = memory.agent.extract(resumed, chat, state=state)
    assert result.ran and result.state.read_count == len(resumed)
    prompt = server.seen[-1].prompt
    assert "second run 0" in prompt and "first run" not in prompt


def test_a_session_resumed_without_state_starts_counting_at_the_resume(
    open_memory: Callable[..., Memory], server: ChatServer, chat: HttpChatClient
) -> None:
    memory = open_memory(ON_STOP)
    history = turns(5, "earlier")
    state = ExtractionState.resumed(history)
    assert memory.agent.extract(history + turns(2, "later"), chat, state=state).skipped is not None
    assert server.seen == []


def test_message_ids_keep_the_position_across_compaction() -> None:
    talk = [user("a", id="m1"), assistant("b", id="m2"), user("c", id="m3")]
    state = ExtractionState().after(talk, 2)
    assert state == ExtractionState(2, "m2")
    assert state.start(talk) == 2
    assert state.start([assistant("summary", id="s1"), talk[2]]) == 0  # m2 compacted away
    assert state.start([*talk[1:], user("d", id="m4")]) == 1  # the id wins over the count


def test_without_ids_the_host_shifts_the_count_after_compaction() -> None:
    talk = [user("a"), assistant("b"), user("c"), assistant("d")]
    state = ExtractionState().after(talk, 3)
    compacted = [assistant("summary of a, b"), *talk[2:]]
    shifted = state.compacted(discarded=2, added=1)
    assert shifted == ExtractionState(2, None)
    assert compacted[shifted.start(compacted) :] == talk[3:]
    assert ExtractionState.from_dict(state.to_dict()) == state


def test_a_malformed_stored_state_reads_as_nothing_read() -> None:
    assert ExtractionState.from_dict({"readCount": "x", "lastId": 3}) == ExtractionState()
    assert ExtractionState.from_dict(None) == ExtractionState()
    assert ExtractionState.from_dict({"readCount": -1}) == ExtractionState()


def test_subagents_never_extract(
    open_memory: Callable[..., Memory], server: ChatServer, chat: HttpChatClient
) -> None:
    memory = open_memory(ON_STOP)
    result = memory.agent.extract(turns(5), chat, is_subagent=True, force=True)
    assert result.skipped is not None and "subagent" in result.skipped
    assert server.seen == []


def test_nothing_new_means_no_call(
    open_memory: Callable[..., Memory], server: ChatServer, chat: HttpChatClient
) -> None:
    memory = open_memory(ON_STOP)
    talk = turns(3)
    result = memory.agent.extract(talk, chat, state=ExtractionState(len(talk)), force=True)
    assert result.skipped == "nothing new since the last pass"
    assert server.seen == []


def test_is_user_turn() -> None:
    assert is_user_turn(user("hi"))
    assert is_user_turn({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    assert not is_user_turn(assistant("hi"))
    assert not is_user_turn(user(" \n"))
    assert not is_user_turn(user("x", metadata={"tool_result": True}))
