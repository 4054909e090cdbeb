"""`ask` against model servers that fail at the transport level (issue 24, failure 5): a
200 MiB answer, a silent server, a trickling one, 429 with a long Retry-After, a 500.

Real servers on loopback (`model_faults`, and the scripted `extract.ChatServer`), the real
`[llm]` client built from the user config, and the CLI in a subprocess where its memory
or its output is what is measured. Time bounds are generous: a deadline of 2 s must end
the call well before 30 s, never before the deadline.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from answer import answered, cite
from answer.model_faults import FloodServer, SilentServer, TrickleServer
from extract import ChatServer, Reply, completion
from loopback import serving
from memdir import Memory
from memdir.answer.check import AnswerStatus
from memdir.extract import ChatFailed
from memdir.extract.llm import MAX_ANSWER_BYTES
from memdir.retrieve.hits import Chunk

QUESTION = "Which strategy do our deploys on the staging cluster use?"
GOOD_CLAIM = "Deploys use the blue green strategy."
#: How much more than the cap a refused flood may have pushed into the client's socket:
#: the kernel's buffers on loopback (a few MiB each way), never the 200 MiB sent.
SOCKET_SLACK = 32 << 20


def configure(home: Path, url: str, deadline: float | None = None) -> None:
    line = f"deadlineSeconds = {deadline}\n" if deadline is not None else ""
    (home / "config.toml").write_text(
        f'[embed]\nprovider = "none"\n[llm]\nurl = "{url}"\nmodel = "small-model"\n{line}',
        encoding="utf-8",
    )


@pytest.fixture
def deploys(project: Path, home: Path) -> Chunk:
    """The deploy note written to the project, and the chunk a question about it finds."""
    (project / ".memdir").mkdir(exist_ok=True)
    configure(home, "http://127.0.0.1:9/v1")
    with Memory.open(project, home=home) as memory:
        memory.remember(
            "Deploys", "Our deploys use the blue green strategy on staging.", id="deploys"
        )
        return next(c for c in memory.index.retrieve(QUESTION) if c.note_id == "deploys")


def ask(project: Path, home: Path) -> tuple[AnswerStatus | str, float]:
    """`Memory.ask(QUESTION)`: its status (or the ChatFailed message) and the seconds taken."""
    began = time.monotonic()
    with Memory.open(project, home=home) as memory:
        try:
            result: AnswerStatus | str = memory.ask(QUESTION).status
        except ChatFailed as exc:
            result = str(exc)
    return result, time.monotonic() - began


def run_cli(project: Path, home: Path) -> tuple[int, str, str, int]:
    """`memdir ask QUESTION` in a subprocess: exit code, stdout, stderr and its peak RSS in
    bytes (from wait4, the child's own figure)."""
    out_path, err_path = home.parent / "cli.out", home.parent / "cli.err"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        command = [sys.executable, "-m", "memdir", "--project", str(project), "--home", str(home)]
        proc = subprocess.Popen(
            [*command, "ask", QUESTION],
            stdout=out,
            stderr=err,
            env={**os.environ, "MEMDIR_HOME": str(home), "COLUMNS": "250"},
        )
        killer = threading.Timer(300, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    return proc.returncode, out_path.read_text(), err_path.read_text(), peak


# -- a huge answer -----------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="peak RSS of a child needs wait4")
def test_a_200_mib_answer_is_refused_at_the_cap_with_bounded_memory(
    project: Path, home: Path, deploys: Chunk
) -> None:
    # The baseline: the same command answered normally, for its peak RSS.
    with serving(ChatServer()) as good:
        good.answer(completion(answered((GOOD_CLAIM, [cite(deploys)]))))
        configure(home, good.url)
        code, out, err, baseline = run_cli(project, home)
    assert code == 0, err
    assert out.startswith(GOOD_CLAIM)

    with serving(FloodServer(200 << 20)) as flood:
        configure(home, flood.url)
        code, out, err, peak = run_cli(project, home)
        sent = flood.sent
    print(
        f"\n200 MiB flood: {sent / 2**20:.1f} MiB taken by the client; peak RSS "
        f"{peak / 2**20:.1f} MiB (answered normally: {baseline / 2**20:.1f} MiB)"
    )
    assert code == 1
    assert err.startswith("error:") and "Traceback" not in err
    assert "larger than 4 MiB" in err and flood.url in err
    assert MAX_ANSWER_BYTES <= sent <= MAX_ANSWER_BYTES + SOCKET_SLACK
    # Reading the whole answer would add 200 MiB at least; the cap adds a few.
    assert peak - baseline < 64 << 20


def test_an_answer_declared_too_large_is_refused_before_its_body_is_read(
    project: Path, home: Path, deploys: Chunk
) -> None:
    with serving(FloodServer(200 << 20, declare=True)) as flood:
        configure(home, flood.url)
        result, _ = ask(project, home)
        sent = flood.sent
    assert isinstance(result, str) and "larger than 4 MiB" in result
    assert "refused without reading the rest" in result
    assert sent <= SOCKET_SLACK  # the body was never read, only the buffers filled
    assert flood.requests == 1  # a too-large answer is not asked for again


# -- a silent or slow model: one deadline ------------------------------------------------------


def test_a_silent_model_ends_at_the_configured_deadline(
    project: Path, home: Path, deploys: Chunk
) -> None:
    with serving(SilentServer()) as silent:
        configure(home, silent.url, deadline=2)
        result, took = ask(project, home)
    print(f"\nsilent model, deadline 2 s: ask ended after {took:.2f} s")
    assert isinstance(result, str)
    assert f"{silent.url}/chat/completions" in result
    assert "within the 2 s deadline (llm.deadlineSeconds sets it)" in result
    assert 2 <= took < 30


def test_the_cli_says_which_deadline_ended_a_silent_model(
    project: Path, home: Path, deploys: Chunk
) -> None:
    with serving(SilentServer()) as silent:
        configure(home, silent.url, deadline=1.5)
        began = time.monotonic()
        code, out, err, _ = run_cli(project, home)
        took = time.monotonic() - began
    assert code == 1 and out == ""
    assert err.startswith("error: chat request to ") and "Traceback" not in err
    assert "1.5 s deadline (llm.deadlineSeconds sets it)" in err
    assert took < 60  # Python's start-up included


def test_a_trickling_answer_ends_at_the_deadline_too(
    project: Path, home: Path, deploys: Chunk
) -> None:
    # Each byte arrives well within any read timeout: only the overall deadline ends it.
    with serving(TrickleServer(every=0.2)) as trickle:
        configure(home, trickle.url, deadline=2)
        result, took = ask(project, home)
    assert isinstance(result, str) and "within the 2 s deadline" in result
    assert 2 <= took < 30


def test_a_long_retry_after_is_not_slept_past_the_deadline(
    project: Path, home: Path, deploys: Chunk
) -> None:
    with serving(ChatServer()) as server:
        server.answer(
            Reply(status=429, body=b'{"error": "slow down"}', headers={"Retry-After": "3600"})
        )
        configure(home, server.url, deadline=5)
        result, took = ask(project, home)
        requests = len(server.seen)
    assert isinstance(result, str)
    assert "stopped before the 5 s deadline (llm.deadlineSeconds sets it)" in result
    assert "the endpoint asked to wait 30.0 s" in result  # Retry-After is capped at 30 s
    assert "HTTP 429: slow down" in result
    assert requests == 1 and took < 5  # it gave up at once rather than sleep


def test_a_short_retry_after_is_honoured_within_the_deadline(
    project: Path, home: Path, deploys: Chunk
) -> None:
    with serving(ChatServer()) as server:
        server.answer(
            Reply(status=429, body=b"{}", headers={"Retry-After": "1"}),
            completion(answered((GOOD_CLAIM, [cite(deploys)]))),
        )
        configure(home, server.url, deadline=20)
        result, took = ask(project, home)
        requests = len(server.seen)
    assert result is AnswerStatus.ANSWERED
    assert requests == 2 and 1 <= took < 20


def test_a_500_then_an_answer_is_answered(project: Path, home: Path, deploys: Chunk) -> None:
    with serving(ChatServer()) as server:
        server.answer(
            Reply(status=500, body=b'{"error": {"message": "overloaded"}}'),
            completion(answered((GOOD_CLAIM, [cite(deploys)]))),
        )
        configure(home, server.url)
        result, _ = ask(project, home)
        requests = len(server.seen)
    assert result is AnswerStatus.ANSWERED and requests == 2


def test_500s_until_the_retries_run_out_say_so(project: Path, home: Path, deploys: Chunk) -> None:
    with serving(ChatServer()) as server:
        server.answer(Reply(status=500, body=b'{"error": {"message": "overloaded"}}'))
        configure(home, server.url, deadline=60)
        result, _ = ask(project, home)
        requests = len(server.seen)
    assert isinstance(result, str)
    assert "failed (4 attempts): HTTP 500: overloaded" in result
    assert requests == 4
