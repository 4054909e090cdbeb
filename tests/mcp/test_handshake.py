"""The `initialize` answer written before the MCP SDK loads (memdir.mcp.handshake): the same
answer the SDK gives, exactly one answer per request, and everything else left to the SDK."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import make_grant, stdio_params

from memdir import Memory
from memdir.clients.grants import GrantStore, issue_grant
from memdir.mcp.access import Gate
from memdir.mcp.handshake import (
    HANDSHAKE_REVISIONS,
    AnsweredFilter,
    initialize_request,
    initialize_result,
)
from memdir.mcp.server import run
from memdir.mcp.tools.state import StateStores

_REQUESTED = [*HANDSHAKE_REVISIONS, "2026-07-28", "1999-01-01", ""]


def _initialize(version: str, ident: object = 1, **capabilities: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": {"name": "handshake-test", "version": "1.0"},
        },
    }


class _Lines:
    def __init__(self, lines: list[str]) -> None:
        self._lines = list(lines)

    def readline(self) -> str:
        return self._lines.pop(0) if self._lines else ""


class _Sink:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


class _SdkOnly:
    """A wire on which nothing was answered early: the SDK answers every message itself."""

    answered_early = False

    def __init__(self, lines: list[str]) -> None:
        self.sink = _Sink()
        self._lines = lines

    def streams(self) -> tuple[_Lines, _Sink]:
        return _Lines(self._lines), self.sink


def _sdk_answers(memory: Memory, messages: list[dict[str, Any]], states: Any = None) -> list[Any]:
    wire = _SdkOnly([json.dumps(m) + "\n" for m in messages])
    gate = Gate(memory.settings.mcp_access)
    run(memory, gate, GrantStore(memory.settings.home), states=states, address=None, wire=wire)  # type: ignore[arg-type]
    return [json.loads(line) for line in wire.sink.text.splitlines()]


@pytest.mark.parametrize("version", _REQUESTED)
def test_the_early_answer_is_the_sdks_answer(memory: Memory, version: str) -> None:
    assert initialize_request(json.dumps(_initialize(version)).encode()) is not None
    (answer,) = _sdk_answers(memory, [_initialize(version)])
    assert answer == {"jsonrpc": "2.0", "id": 1, "result": initialize_result(version)}


def test_the_answer_does_not_depend_on_the_client_or_the_grant(
    memory: Memory, tmp_path: Path
) -> None:
    rich = _initialize(
        "2025-06-18",
        "abc",
        roots={"listChanged": True},
        sampling={},
        elicitation={},
        experimental={"x": {}},
    )
    (answer,) = _sdk_answers(memory, [rich], StateStores(memory.settings.home))  # run closes it
    assert answer == {"jsonrpc": "2.0", "id": "abc", "result": initialize_result("2025-06-18")}


def _serve(project: Path, home: Path, *extra: str) -> subprocess.Popen[str]:
    params = stdio_params(project, home, *extra)
    return subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(params.env or {})},
    )


def _exchange(proc: subprocess.Popen[str], *messages: dict[str, Any]) -> list[dict[str, Any]]:
    """Send `messages` at once, close stdin, and read every line the server wrote."""
    out, _ = proc.communicate("".join(json.dumps(m) + "\n" for m in messages), timeout=120)
    return [json.loads(line) for line in out.splitlines()]


def _answered(proc: subprocess.Popen[str], *messages: dict[str, Any]) -> list[dict[str, Any]]:
    """Send `messages` at once and read until every request is answered, in whatever order
    (the SDK handles requests concurrently, and drops those still in flight when its input
    ends), then close stdin and read the rest from the same buffered stream: communicate()
    would read the descriptor itself and skip what readline has buffered already."""
    assert proc.stdin and proc.stdout and proc.stderr
    waiting = {m["id"] for m in messages if "id" in m}
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
    proc.stdin.flush()
    answers: list[dict[str, Any]] = []
    while waiting:
        line = proc.stdout.readline()
        assert line, "the server closed its output"
        answers.append(json.loads(line))
        waiting.discard(answers[-1].get("id"))
    proc.stdin.close()
    rest = proc.stdout.read()
    proc.stderr.read()
    proc.wait(timeout=60)
    return answers + [json.loads(line) for line in rest.splitlines()]


def test_one_answer_per_request_and_the_session_continues(env: tuple[Path, Path]) -> None:
    project, home = env
    proc = _serve(project, home)
    answers = _answered(
        proc,
        _initialize("2025-06-18", 7),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 9, "method": "ping"},
    )
    assert proc.returncode == 0
    assert sorted(a["id"] for a in answers) == [7, 8, 9]
    assert answers[0] == {"jsonrpc": "2.0", "id": 7, "result": initialize_result("2025-06-18")}
    by_id = {a["id"]: a for a in answers}
    assert any(t["name"] == "memory_search" for t in by_id[8]["result"]["tools"])
    assert by_id[9]["result"] == {}


#: A server that answers the last request first (as the SDK does under load: it handles
#: requests concurrently, and `ping` is done long before `tools/list`). The ping answer and
#: the head of the tools/list answer reach the pipe in one write, so a reader that buffers
#: them and then reads the descriptor directly (Popen.communicate) gets a torn line.
_OUT_OF_ORDER = r"""
import json, os, sys, time
for _ in range(4):
    sys.stdin.readline()
tools = [{"name": "t%d" % i, "description": "x" * 200} for i in range(100)]
listed = json.dumps({"jsonrpc": "2.0", "id": 8, "result": {"tools": tools}})
head = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {}}) + "\n"
head += json.dumps({"jsonrpc": "2.0", "id": 9, "result": {}}) + "\n" + listed[:1000]
os.write(1, head.encode())  # under PIPE_BUF: the reader gets it in one read
time.sleep(0.2)
os.write(1, (listed[1000:] + "\n").encode())
sys.stdin.read()
"""


def test_answers_in_any_order_are_read_whole() -> None:
    """Regression: `_answered` waited for the last request's answer only, then read the
    rest with communicate(), which skips what readline had buffered (a torn line under
    load, when ping is answered before tools/list), and closed stdin while tools/list was
    still in flight (the SDK then drops it)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _OUT_OF_ORDER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    answers = _answered(
        proc,
        _initialize("2025-06-18", 7),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 9, "method": "ping"},
    )
    assert proc.returncode == 0
    assert [a["id"] for a in answers] == [7, 9, 8]
    assert len(answers[2]["result"]["tools"]) == 100


def test_the_initialize_answer_comes_before_the_sdk_is_loaded(env: tuple[Path, Path]) -> None:
    """The answer is on the wire while the server is still loading: the next request
    (sent only once the answer was read) is answered by the SDK afterwards."""
    project, home = env
    proc = _serve(project, home)
    assert proc.stdin and proc.stdout
    try:
        proc.stdin.write(json.dumps(_initialize("2025-11-25", 1)) + "\n")
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())
        assert first["result"]["protocolVersion"] == "2025-11-25"
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}) + "\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline()) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


@pytest.mark.parametrize(
    "first",
    [
        # No clientInfo: the SDK refuses it, in its own words.
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {**_initialize("2025-06-18"), "id": True},
        {**_initialize("2025-06-18"), "jsonrpc": "1.0"},
    ],
)
def test_a_malformed_initialize_is_left_to_the_sdk(
    env: tuple[Path, Path], first: dict[str, Any]
) -> None:
    project, home = env
    answers = _exchange(_serve(project, home), first)
    assert len(answers) <= 1
    assert all("error" in a for a in answers)


def test_a_first_message_of_another_kind_is_the_sdks(env: tuple[Path, Path]) -> None:
    project, home = env
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "handshake-test", "version": "1"},
    }
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
    (answer,) = _exchange(_serve(project, home), discover)
    assert answer["result"]["supportedVersions"] == ["2026-07-28"]


def test_a_line_that_is_not_json_is_left_to_the_sdk(env: tuple[Path, Path]) -> None:
    project, home = env
    proc = _serve(project, home)
    out, _ = proc.communicate("this is not json\n" + json.dumps(_initialize("2025-06-18")) + "\n")
    answers = [json.loads(line) for line in out.splitlines()]
    assert [a.get("id") for a in answers if "result" in a] == [1]


def test_end_of_input_before_any_message_exits_cleanly(env: tuple[Path, Path]) -> None:
    project, home = env
    proc = _serve(project, home)
    out, _ = proc.communicate("", timeout=120)
    assert proc.returncode == 0 and out == ""


def test_an_unusable_grant_refuses_before_the_wire_is_read(
    env: tuple[Path, Path], memory: Memory, tmp_path: Path
) -> None:
    """The grant is checked first: a client that waits for an answer sees the process
    exit with the reason, and no handshake answer is ever written."""
    project, home = env
    out = tmp_path / "old.grant"
    issue_grant(memory, minutes=5, out=out, store=GrantStore(home, clock=lambda: 1_000))
    proc = _serve(project, home, "--grant-file", str(out))
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # stdin stays open: the process must not wait for it
        assert proc.returncode == 4
        assert proc.stdout and proc.stdout.read() == ""
        assert proc.stderr and "expired" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_a_valid_grant_still_answers_early(
    env: tuple[Path, Path], memory: Memory, tmp_path: Path
) -> None:
    project, home = env
    grant, _ = make_grant(memory, tmp_path / "ok.grant")
    answers = _answered(
        _serve(project, home, "--grant-file", str(tmp_path / "ok.grant")),
        _initialize("2024-11-05"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    )
    assert grant and [a["id"] for a in answers] == [1, 2]
    assert answers[0]["result"]["protocolVersion"] == "2024-11-05"


def test_the_filter_drops_only_the_sdks_first_answer_and_says_when_it_differs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sink = _Sink()
    given = initialize_result("2025-06-18")
    wire = AnsweredFilter(sink, 1, given)  # type: ignore[arg-type]
    notice = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
    wire.write(notice + "\n")
    wire.write(json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -1}}) + "\n")
    wire.write(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"later": True}}) + "\n")
    lines = [json.loads(line) for line in sink.text.splitlines()]
    assert lines == [json.loads(notice), {"jsonrpc": "2.0", "id": 1, "result": {"later": True}}]
    assert "answered the initialize request answered early otherwise" in capsys.readouterr().err


def test_the_filter_stands_aside_when_the_first_answer_is_another_id() -> None:
    sink = _Sink()
    wire = AnsweredFilter(sink, 1, None)  # type: ignore[arg-type]
    wire.write(json.dumps({"jsonrpc": "2.0", "id": "1", "result": {}}) + "\n")
    wire.write(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}) + "\n")
    assert [json.loads(line)["id"] for line in sink.text.splitlines()] == ["1", 1]


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


_SURROGATE_ID = (
    '{"jsonrpc":"2.0","id":"\\ud800","method":"initialize","params":{"protocolVersion":'
    '"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}'
)
_DEEP_ARRAY = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":' + "[" * 5000 + "]" * 5000 + "}"
)
_ICONS = _initialize("2025-06-18")
_ICONS["params"]["clientInfo"]["icons"] = "nope"
_EXTRA = _initialize("2025-06-18")
_EXTRA["params"]["_meta"] = {"x": 1}
_NOT_EARLY = [
    pytest.param(_SURROGATE_ID, id="lone-surrogate-id"),
    pytest.param(_DEEP_ARRAY, id="5000-deep"),
    pytest.param(json.dumps(_initialize("2025-06-18", 1, experimental=_deep(300))), id="300-deep"),
    pytest.param(json.dumps(_initialize("2025-06-18", 1, roots=5)), id="capability-not-object"),
    pytest.param(json.dumps(_ICONS), id="client-info-extra"),
    pytest.param(json.dumps(_EXTRA), id="params-extra"),
]


@pytest.mark.parametrize("first", _NOT_EARLY)
def test_what_the_sdk_may_judge_otherwise_is_not_answered_early(first: str) -> None:
    assert initialize_request(first.encode()) is None


@pytest.mark.parametrize("first", _NOT_EARLY)
def test_a_request_the_sdk_may_judge_otherwise_is_left_to_it(
    env: tuple[Path, Path], first: str
) -> None:
    """The server keeps serving, and the SDK's own answer (or refusal) is the only one."""
    project, home = env
    proc = _serve(project, home)
    assert proc.stdin and proc.stdout
    proc.stdin.write(first + "\n")
    proc.stdin.write(json.dumps(_initialize("2025-06-18", 2)) + "\n")
    proc.stdin.flush()
    answers: list[dict[str, Any]] = []
    while not any(a.get("id") == 2 for a in answers):
        line = proc.stdout.readline()
        assert line, "the server closed its output"
        answers.append(json.loads(line))
    proc.stdin.close()
    proc.wait(timeout=60)
    assert sum(1 for a in answers if a.get("id") == 2) == 1
    assert sum(1 for a in answers if a.get("id") != 2) <= 1
