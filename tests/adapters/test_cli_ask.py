"""`memdir ask` (§10) in-process against the scripted chat server: output, --json, exit codes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result

from answer import answered, cite
from extract import ChatServer, Reply, completion
from loopback import serving
from memdir import Memory
from memdir.errors import EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_REFUSED, EXIT_USAGE
from memdir.retrieve.hits import Chunk

Invoke = Callable[..., Result]
QUESTION = "Which strategy do our deploys on the staging cluster use?"
ANSWER_FIELDS = {"status", "text", "claims", "chunks_sent", "model", "reason"}


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with serving(ChatServer()) as srv:
        yield srv


@pytest.fixture
def chunk(project: Path, home: Path, server: ChatServer) -> Chunk:
    """The deploy note's chunk, with `[llm]` pointing at the scripted server."""
    (home / "config.toml").write_text(
        f'[embed]\nprovider = "none"\n[llm]\nurl = "{server.url}"\nmodel = "small-model"\n'
    )
    (project / ".memdir").mkdir()
    with Memory.open(project, home=home) as memory:
        memory.remember(
            "Deploys", "Our deploys use the blue green strategy on staging.", id="deploys"
        )
        return next(c for c in memory.index.retrieve(QUESTION) if c.note_id == "deploys")


def test_an_answer_prints_each_claim_and_its_citation(
    cli: Invoke, chunk: Chunk, server: ChatServer
) -> None:
    server.answer(completion(answered(("Deploys are blue green.", [cite(chunk)]))))
    result = cli("ask", QUESTION)
    assert result.exit_code == EXIT_OK, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Deploys are blue green."
    assert lines[1] == f"  ↳ deploys rev {chunk.revision[:12]} bytes {chunk.start}–{chunk.end}"
    assert "1 passages sent to small-model" in lines[2]


def test_json_output(cli: Invoke, chunk: Chunk, server: ChatServer) -> None:
    server.answer(completion(answered(("Deploys are blue green.", [cite(chunk)]))))
    result = cli("ask", QUESTION, "--json")
    assert result.exit_code == EXIT_OK
    doc = json.loads(result.stdout)
    assert set(doc) == ANSWER_FIELDS
    assert doc["status"] == "answered" and doc["model"] == "small-model"
    assert doc["claims"] == [
        {
            "text": "Deploys are blue green.",
            "citations": [
                {
                    "note_id": "deploys",
                    "revision": chunk.revision,
                    "start": chunk.start,
                    "end": chunk.end,
                }
            ],
        }
    ]


def test_insufficient_evidence_exits_3_without_a_model(
    cli: Invoke, chunk: Chunk, server: ChatServer
) -> None:
    result = cli("ask", "What is the capital of Australia?")
    assert result.exit_code == EXIT_NOT_FOUND
    assert result.stdout.startswith("insufficient evidence: no note holds")
    doc = json.loads(cli("ask", "capital of Australia", "--json").stdout)
    assert doc["status"] == "insufficient_evidence" and doc["chunks_sent"] == 0
    assert server.seen == []


def test_a_refused_answer_exits_4(cli: Invoke, chunk: Chunk, server: ChatServer) -> None:
    server.answer(completion(answered(("Blue green.", [cite(chunk, note_id="invented")]))))
    result = cli("ask", QUESTION)
    assert result.exit_code == EXIT_REFUSED
    assert result.stdout.startswith(
        "refused: claims[0].citations[0] names a note that was not sent"
    )
    doc = json.loads(cli("ask", QUESTION, "--json").stdout)
    assert doc["status"] == "refused" and doc["claims"] == []


def test_a_failing_model_is_an_error_not_a_traceback(
    cli: Invoke, chunk: Chunk, server: ChatServer
) -> None:
    server.answer(Reply(status=400, body=b'{"error": "bad request"}'))
    result = cli("ask", QUESTION)
    assert result.exit_code == EXIT_ERROR
    assert result.stderr.startswith("error:") and "Traceback" not in result.stderr
    doc = json.loads(cli("ask", QUESTION, "--json").stdout)
    assert doc["error"]["type"] == "ChatFailed" and doc["error"]["exitCode"] == EXIT_ERROR


def test_no_model_configured_is_an_error(cli: Invoke, chunk: Chunk, home: Path) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    result = cli("ask", QUESTION)
    assert result.exit_code == EXIT_ERROR
    assert "needs a model" in result.stderr and "llm.url" in result.stderr


def test_usage_errors(cli: Invoke, chunk: Chunk) -> None:
    assert cli("ask").exit_code == EXIT_USAGE
    assert cli("ask", "  ").exit_code == EXIT_USAGE
    assert cli("ask", QUESTION, "--scope", "team").exit_code == EXIT_USAGE
