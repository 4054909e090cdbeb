"""`memdir tidy --confirm-with-llm` and `Memory.tidy(confirm_with_llm=True)`: the model checks
each contradiction finding against the scripted chat server on loopback; its answer is
untrusted (verdicts for findings not asked about are ignored)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir import Memory
from memdir.cli.main import main
from memdir.errors import MemdirError

from . import ChatServer, Reply, completion

_PAIRS = [
    ("The staging API timeout is 30 seconds", "The staging API timeout is 45 seconds"),
    ("Release builds run on Fridays", "Release builds run on Tuesdays"),
]


def _plant(memory: Memory) -> None:
    for first, second in _PAIRS:
        memory.remember(first, first + ".", tags="settings")
        memory.remember(second, second + ".", tags="settings")


def _llm_config(server: ChatServer) -> str:
    return f'[embed]\nprovider = "none"\n\n[llm]\nurl = "{server.url}"\nmodel = "small"\n'


def _verdicts(findings: list[str], *, keep: int) -> bytes:
    """Confirm the first `keep` findings, reject the rest, plus one for an id not asked."""
    items = [
        {"id": f, "contradiction": i < keep, "why": "both cannot hold" if i < keep else "fine"}
        for i, f in enumerate(findings)
    ]
    items.append({"id": "contradiction-000000000000", "contradiction": True, "why": "invented"})
    return completion(json.dumps({"verdicts": items}))


def test_the_model_confirms_one_and_rejects_the_other(
    open_memory: Callable[..., Memory], server: ChatServer
) -> None:
    memory = open_memory(_llm_config(server))
    _plant(memory)
    plain = memory.tidy.findings("contradiction")
    assert len(plain) == 2
    server.answer(_verdicts([f.id for f in plain], keep=1))
    checked = memory.tidy.findings("contradiction", confirm_with_llm=True)
    assert [f.id for f in checked] == [plain[0].id]
    assert checked[0].confirmation == "confirmed"
    assert checked[0].model_says == "both cannot hold"
    assert any("did not confirm" in w for w in memory.warnings)
    # One call, and only the two pairs were sent.
    assert len(server.seen) == 1
    assert "30 seconds" in server.seen[0].prompt and "Tuesdays" in server.seen[0].prompt


def test_no_model_call_without_contradictions(
    open_memory: Callable[..., Memory], server: ChatServer
) -> None:
    memory = open_memory(_llm_config(server))
    memory.remember("Deploys go through the release train", "Weekly.", tags="deploy")
    assert memory.tidy.findings(confirm_with_llm=True) == memory.tidy.findings()
    assert server.seen == []


def test_the_cli_shows_the_verdict_and_a_failing_model_is_a_clear_error(
    open_memory: Callable[..., Memory], server: ChatServer, project: Path, home: Path
) -> None:
    memory = open_memory(_llm_config(server))
    _plant(memory)
    ids = [f.id for f in memory.tidy.findings("contradiction")]
    memory.close()
    server.answer(_verdicts(ids, keep=2))
    runner = CliRunner()
    args = ["--project", str(project), "--home", str(home), "tidy", "--kind", "contradiction"]
    done = runner.invoke(main, [*args, "--confirm-with-llm", "--json"])
    assert done.exit_code == 0, done.output
    shown = json.loads(done.stdout)
    assert [f["confirmation"] for f in shown] == ["confirmed", "confirmed"]
    text = runner.invoke(main, [*args, "--confirm-with-llm"])
    assert "the model: confirmed: both cannot hold" in text.stdout
    server.answer(Reply(status=500, body=b"{}"))
    failed = runner.invoke(main, [*args, "--confirm-with-llm", "--json"])
    assert failed.exit_code != 0
    error = json.loads(failed.stdout)["error"]
    assert "chat" in error["message"] and "Traceback" not in failed.output


def test_without_a_configured_model_the_error_names_the_setting(
    open_memory: Callable[..., Memory],
) -> None:
    memory = open_memory('[embed]\nprovider = "none"\n')
    _plant(memory)
    with pytest.raises(MemdirError, match=r"llm\.url"):
        memory.tidy.findings(confirm_with_llm=True)
