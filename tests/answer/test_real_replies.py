"""Replies shaped like real models' (issue 24, item C): what is tolerated and never shown
(a fence, a <think> block, keys beyond the schema at any level), what is still refused.

Through `Memory.ask`: the real `[llm]` client reads a full OpenAI-compatible chat
completion (id, usage, finish_reason… around the message) from the scripted server on
loopback, and `check_answer` reads the message's content.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extract import ChatServer
from loopback import serving
from memdir import Memory
from memdir.answer.check import AnswerStatus
from memdir.retrieve.hits import Chunk

from . import cite

QUESTION = "Which strategy do our deploys on the staging cluster use?"
#: Text a model put outside the schema: it must appear nowhere in what `ask` returns.
MARKER = "VISIT-EVIL-EXAMPLE-COM"


def chat_completion(content: str, **message: Any) -> bytes:
    """A chat completion as OpenAI-compatible servers (OpenAI, vLLM, Ollama) send it."""
    return json.dumps(
        {
            "id": "chatcmpl-9x2",
            "object": "chat.completion",
            "created": 1765000000,
            "model": "small-model",
            "system_fingerprint": "fp_1",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, **message},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 812, "completion_tokens": 64, "total_tokens": 876},
        }
    ).encode()


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with serving(ChatServer()) as srv:
        yield srv


@pytest.fixture
def memory(project: Path, home: Path, server: ChatServer) -> Iterator[Memory]:
    (home / "config.toml").write_text(
        f'[embed]\nprovider = "none"\n[llm]\nurl = "{server.url}"\nmodel = "small-model"\n',
        encoding="utf-8",
    )
    with Memory.open(project, home=home) as m:
        m.remember(
            "Deploys are blue green",
            "Our deploys use the blue green strategy on the staging cluster.",
            id="deploys",
        )
        yield m


@pytest.fixture
def passage(memory: Memory) -> Chunk:
    return next(c for c in memory.index.retrieve(QUESTION) if c.note_id == "deploys")


def shown(memory: Memory, answer: Any) -> str:
    """Everything `ask` hands back or records: the answer's fields and the audit entry."""
    entry = memory.stores.audit.entries()[-1]
    return json.dumps(dataclasses.asdict(answer), default=str) + repr(entry)


def reply(passage: Chunk, *, fence: bool = False, **extra: Any) -> str:
    claim = {"text": "Deploys use the blue green strategy.", "citations": [cite(passage)]}
    text = json.dumps({"status": "answered", "claims": [claim], **extra}, indent=2)
    return f"```json\n{text}\n```" if fence else text


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(
            lambda c: reply(c, confidence=0.92, notes=f"{MARKER} see also", sources=["deploys"]),
            id="top-level confidence, notes, sources",
        ),
        pytest.param(
            lambda c: reply(c, reasoning=f"The passage says blue green. {MARKER}"),
            id="reasoning",
        ),
        pytest.param(lambda c: reply(c, fence=True, confidence="high"), id="fenced json"),
        pytest.param(
            lambda c: "```JSON\r\n" + reply(c) + "\r\n```\n", id="fence in capitals, CRLF"
        ),
        pytest.param(
            lambda c: (
                f"<think>\nThe user asks about deploys. {MARKER}\n</think>\n\n"
                + reply(c, fence=True)
            ),
            id="think block",
        ),
        pytest.param(
            lambda c: json.dumps(
                {
                    "status": "answered",
                    "claims": [
                        {
                            "text": "Deploys use the blue green strategy.",
                            "confidence": 0.9,
                            "quote": f"blue green {MARKER}",
                            "source": "deploys",
                            "citations": [{**cite(c), "quote": MARKER, "relevance": "high"}],
                        }
                    ],
                }
            ),
            id="per-claim and per-citation keys",
        ),
    ],
)
def test_harmless_extra_keys_are_ignored_and_never_shown(
    memory: Memory, server: ChatServer, passage: Chunk, content: Any
) -> None:
    server.answer(chat_completion(content(passage)))
    answer = memory.ask(QUESTION)
    assert answer.status is AnswerStatus.ANSWERED, answer.reason
    assert answer.text == "Deploys use the blue green strategy."
    (claim,) = answer.claims
    assert [(c.note_id, c.start, c.end) for c in claim.citations] == [
        ("deploys", passage.start, passage.end)
    ]
    assert MARKER not in shown(memory, answer)


def test_a_reasoning_field_beside_the_content_is_ignored(
    memory: Memory, server: ChatServer, passage: Chunk
) -> None:
    # DeepSeek-style servers put the reasoning beside the content, in the message.
    server.answer(chat_completion(reply(passage), reasoning_content=MARKER, refusal=None))
    answer = memory.ask(QUESTION)
    assert answer.status is AnswerStatus.ANSWERED
    assert MARKER not in shown(memory, answer)


@pytest.mark.parametrize(
    ("content", "why"),
    [
        pytest.param(
            lambda c: f"Sure! {MARKER}\n" + reply(c, fence=True),
            "not one JSON object",
            id="prose before the fence",
        ),
        pytest.param(
            lambda c: reply(c) + f"\n\nLet me know if you need more. {MARKER}",
            "not one JSON object",
            id="prose after",
        ),
        pytest.param(
            lambda c: "<think>unfinished " + reply(c),
            "not one JSON object",
            id="unclosed think block",
        ),
        pytest.param(
            lambda c: reply(c).replace('"status"', '"claims": [], "status"', 1),
            "gives a key twice",
            id="claims given twice",
        ),
        pytest.param(
            lambda c: json.dumps(
                {
                    "status": "answered",
                    "claims": [{"text": "Blue green.", "citation": cite(c), "confidence": 1}],
                }
            ),
            "lacks citations",
            id="citation under another name",
        ),
        pytest.param(
            lambda c: json.dumps({"status": "answered", "answer": f"Blue green. {MARKER}"}),
            "has no claims",
            id="answer as free text",
        ),
        pytest.param(
            lambda c: reply(c, status="Answered"),
            "neither answered nor",
            id="status in other case",
        ),
    ],
)
def test_what_could_carry_text_to_the_user_is_still_refused(
    memory: Memory, server: ChatServer, passage: Chunk, content: Any, why: str
) -> None:
    server.answer(chat_completion(content(passage)))
    answer = memory.ask(QUESTION)
    assert answer.status is AnswerStatus.REFUSED
    assert answer.reason is not None and why in answer.reason
    assert MARKER not in shown(memory, answer)
