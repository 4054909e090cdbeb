"""Extraction through agent hooks (§4.3, §11): `memdir hook` run as Claude Code runs it, over
a Claude-format transcript written here, with a scripted OpenAI-compatible model.

Stop/PreCompact/SessionEnd hooks start `memdir.hooks.background` detached; the tests wait
for those processes (found in /proc by the memdir home in their command line) instead of
sleeping, so nothing depends on how fast the machine is.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from model_servers import ChatCompletionsServer, RecordedRequest, _Handler

from memdir.hooks.sessions import Sessions, log_path

BIN = Path(sys.executable).parent
MEMDIR = str(BIN / "memdir") if (BIN / "memdir").exists() else None
DEADLINE = 60.0
SUMMARY = "Deploys go through the staging pipeline before production"
ANSWER = json.dumps(
    {
        "notes": [
            {
                "action": "create",
                "summary": SUMMARY,
                "body": "**Why:** production broke twice. **How to apply:** staging first.",
                "type": "project",
                "tags": ["deploy"],
            }
        ]
    }
)


class Chat(ChatCompletionsServer):
    """The chat server, recording how many model requests were in flight at once, and able
    to answer with an HTTP error (`status`) or slowly (`delay`)."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(replies)
        self.status = 200
        self.delay = 0.0
        self.active = 0
        self.peak = 0
        self._gauge = threading.Lock()

    def handle(self, handler: _Handler, request: RecordedRequest) -> None:
        if not self.is_model_request(request):
            super().handle(handler, request)
            return
        with self._gauge:
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            if self.delay:
                time.sleep(self.delay)
            if self.status != 200:
                data = json.dumps({"error": {"message": "boom", "type": "server_error"}}).encode()
                handler.send_response(self.status)
                handler.send_header("Content-Type", "application/json")
                handler.send_header("Content-Length", str(len(data)))
                handler.send_header("Retry-After", "0")
                handler.end_headers()
                handler.wfile.write(data)
                return
            super().handle(handler, request)
        finally:
            with self._gauge:
                self.active -= 1


@dataclass
class ClaudeTranscript:
    """A Claude Code session file (JSON lines), appended to as the session goes on."""

    path: Path
    ids: list[str] = field(default_factory=list)

    def _line(self, line: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")

    def user(self, text: str) -> None:
        self.ids.append(str(uuid.uuid4()))
        message = {"role": "user", "content": text}
        self._line({"type": "user", "message": message, "uuid": self.ids[-1]})

    def assistant(self, text: str) -> None:
        self.ids.append(str(uuid.uuid4()))
        message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        self._line({"type": "assistant", "message": message, "uuid": self.ids[-1]})

    def turns(self, *texts: str) -> None:
        for text in texts:
            self.user(text)
            self.assistant(f"Understood: {text.lower()}")

    def compact(self, summary: str) -> None:
        self._line({"type": "system", "subtype": "compact_boundary", "uuid": str(uuid.uuid4())})
        message = {"role": "user", "content": summary}
        self._line(
            {
                "type": "user",
                "isCompactSummary": True,
                "message": message,
                "uuid": str(uuid.uuid4()),
            }
        )


def _ours(home: Path) -> list[int]:
    """Processes started for this memdir home (warm server, background passes)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode("utf-8", "replace") for a in argv]
        if str(home) in words and any(w.startswith("memdir.hooks.") for w in words):
            found.append(int(entry.name))
    return found


def _backgrounds(home: Path) -> list[int]:
    pids = []
    for pid in _ours(home):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"memdir.hooks.background" in argv:
            pids.append(pid)
    return pids


def _until(check: Callable[[], bool], what: str, seconds: float = DEADLINE) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds:.0f} s: {what}")
        time.sleep(0.05)


@dataclass
class World:
    root: Path
    project: Path
    home: Path
    environ: dict[str, str]
    chat: Chat

    def config(self, text: str, *, model: bool = True) -> None:
        llm = f'[llm]\nurl = "{self.chat.base_url}"\nmodel = "small"\n' if model else ""
        body = '[embed]\nprovider = "none"\n\n' + llm + "\n" + text
        (self.home / "config.toml").write_text(body, encoding="utf-8")

    def transcript(self, name: str = "session") -> ClaudeTranscript:
        return ClaudeTranscript(self.root / f"{name}.jsonl")

    def hook(
        self, event: str, session: str, transcript: ClaudeTranscript | None, **extra: Any
    ) -> str:
        done = self.start_hook(event, session, transcript, **extra)
        out, err = done.communicate(timeout=DEADLINE)
        assert done.returncode == 0, err
        return out.decode()

    def start_hook(
        self, event: str, session: str, transcript: ClaudeTranscript | None, **extra: Any
    ) -> subprocess.Popen[bytes]:
        payload = {
            "session_id": session,
            "transcript_path": str(transcript.path) if transcript else "",
            "cwd": str(self.project),
            "hook_event_name": event,
            **extra,
        }
        argv = [MEMDIR] if MEMDIR else [sys.executable, "-m", "memdir"]
        proc = subprocess.Popen(
            [*argv, "hook", "--client", "claude-code", event],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.project,
            env=self.environ,
        )
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(payload).encode())
        proc.stdin.close()
        proc.stdin = None
        return proc

    def settle(self) -> None:
        """Wait until no background pass of this home runs."""
        _until(lambda: not _backgrounds(self.home), "the background passes end")

    def requests(self) -> list[RecordedRequest]:
        return self.chat.model_requests()

    def notes(self) -> list[dict[str, Any]]:
        argv = [MEMDIR] if MEMDIR else [sys.executable, "-m", "memdir"]
        done = subprocess.run(
            [*argv, "--project", str(self.project), "list", "--json"],
            env=self.environ,
            capture_output=True,
            timeout=DEADLINE,
            check=True,
        )
        notes = json.loads(done.stdout)
        assert isinstance(notes, list)
        return notes

    def state(self, session: str) -> dict[str, Any]:
        return Sessions(self.home).load(Sessions(self.home).key("claude-code", session))

    def log(self) -> list[str]:
        path = log_path(self.home)
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

    def stop_spawned_nothing(self, session: str) -> None:
        """Nothing ran: no pass in flight now, none finished (a pass, even one that skips,
        stores its position), nothing logged."""
        assert _backgrounds(self.home) == []
        assert "extraction" not in self.state(session)
        assert self.log() == []


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    root = tmp_path.resolve()
    project, home, user_home, runtime = (root / n for n in ("proj", "mh", "home", "run"))
    for path in (project / ".git", home, user_home):
        path.mkdir(parents=True)
    runtime.mkdir(mode=0o700)
    runtime.chmod(0o700)
    environ = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMDIR_", "CLAUDE_", "GEMINI_", "CURSOR_", "CODEX_"))
    }
    environ.update(
        HOME=str(user_home),
        MEMDIR_HOME=str(home),
        XDG_RUNTIME_DIR=str(runtime),
        MEMDIR_HOOK_IDLE="20",
        PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""),
    )
    with Chat([ANSWER]) as chat:
        assert isinstance(chat, Chat)
        world = World(root, project, home, environ, chat)
        try:
            yield world
        finally:
            _until(lambda: not _backgrounds(home), "the background passes end")
            for pid in _ours(home):  # the warm server this test started
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)


ON_STOP = "[memory.autoExtract]\nonStop = true\nminUserTurns = {n}\n"


def _saved(world: World) -> bool:
    return any(n["summary"] == SUMMARY for n in world.notes())


# -- off unless the user says -----------------------------------------------------------------


def test_extraction_is_off_by_default(world: World) -> None:
    world.config("")
    transcript = world.transcript()
    transcript.turns("We deploy through staging", "Always staging first", "Then production")
    assert world.hook("Stop", "s1", transcript, stop_hook_active=False) == ""
    world.stop_spawned_nothing("s1")
    assert world.hook("PreCompact", "s1", transcript, trigger="auto") == ""
    assert world.hook("SessionEnd", "s1", transcript, reason="exit") == ""
    world.settle()
    assert "extraction" not in world.state("s1")
    assert world.requests() == []
    assert world.log() == []


def test_a_project_config_cannot_switch_extraction_on(world: World) -> None:
    world.config("")  # a model, but no switch in the user config
    (world.project / ".memdir").mkdir()
    (world.project / ".memdir" / "config.toml").write_text(
        "[memory.autoExtract]\nonStop = true\nonCompaction = true\nminUserTurns = 1\n",
        encoding="utf-8",
    )
    transcript = world.transcript()
    transcript.turns("We deploy through staging", "Always staging first")
    assert world.hook("Stop", "s1", transcript) == ""
    assert _backgrounds(world.home) == [] and "extraction" not in world.state("s1")
    assert world.hook("PreCompact", "s1", transcript, trigger="manual") == ""
    world.settle()
    assert "extraction" not in world.state("s1")
    assert world.requests() == []


# -- on stop ----------------------------------------------------------------------------------


def test_stop_extracts_at_min_user_turns_and_announces_once(world: World) -> None:
    world.config(ON_STOP.format(n=3))
    transcript = world.transcript()
    transcript.turns("We deploy through staging", "Production only after staging is green")
    world.hook("Stop", "s1", transcript)
    world.settle()
    assert world.requests() == []  # 2 user turns < minUserTurns
    assert world.state("s1")["extraction"] == {"readCount": 0, "lastId": None}

    transcript.turns("Remember that for next time")
    assert world.hook("Stop", "s1", transcript) == ""  # the agent never waits
    world.settle()
    _until(lambda: _saved(world), "the extracted note is listed")
    requests = world.requests()
    assert len(requests) == 1
    sent = requests[0].text()
    for text in ("We deploy through staging", "Remember that for next time"):
        assert text in sent
    assert world.state("s1")["extraction"]["lastId"] == transcript.ids[-1]

    # Another session's message does not take this session's announcement.
    other = world.hook("UserPromptSubmit", "s2", None, prompt="unrelated question")
    assert "saved 1 memory" not in other
    first = world.hook("UserPromptSubmit", "s1", transcript, prompt="what next?")
    assert json.loads(first)["systemMessage"] == ("memdir: saved 1 memory from this conversation")
    again = world.hook("UserPromptSubmit", "s1", transcript, prompt="and then?")
    assert "saved 1 memory" not in again

    # No new turns: the position is kept and the model is not asked again.
    world.hook("Stop", "s1", transcript)
    world.settle()
    assert len(world.requests()) == 1
    assert [n["summary"] for n in world.notes()].count(SUMMARY) == 1


def test_session_end_extracts_like_stop(world: World) -> None:
    world.config(ON_STOP.format(n=1))
    transcript = world.transcript()
    transcript.turns("We deploy through staging")
    world.hook("SessionEnd", "s1", transcript, reason="exit")
    world.settle()
    assert len(world.requests()) == 1
    _until(lambda: _saved(world), "the extracted note is listed")


# -- compaction ---------------------------------------------------------------------------------


def test_precompact_reads_the_part_about_to_go(world: World) -> None:
    world.config("[memory.autoExtract]\nonCompaction = true\nminUserTurns = 9\n")
    transcript = world.transcript()
    transcript.turns("Before compaction: deploy through staging")  # short: one turn
    assert world.hook("PreCompact", "s1", transcript, trigger="auto") == ""
    # Claude Code compacts right after the hook: the boundary, its summary, new turns.
    transcript.compact("Summary: the user deploys through staging.")
    transcript.turns("After compaction: something else entirely")
    world.settle()
    _until(lambda: _saved(world), "the extracted note is listed")
    requests = world.requests()
    assert len(requests) == 1
    sent = requests[0].text()
    assert "Before compaction: deploy through staging" in sent
    assert "After compaction" not in sent and "Summary: the user deploys" not in sent
    # onStop is off: a Stop after the compaction asks nothing.
    world.hook("Stop", "s1", transcript)
    world.settle()
    assert len(world.requests()) == 1


def test_precompact_is_off_without_on_compaction(world: World) -> None:
    world.config(ON_STOP.format(n=1))
    transcript = world.transcript()
    transcript.turns("Before compaction: deploy through staging")
    world.hook("PreCompact", "s1", transcript, trigger="auto")
    world.stop_spawned_nothing("s1")
    assert world.requests() == []


# -- resume and subagents -----------------------------------------------------------------------


def test_a_resumed_session_counts_from_where_it_resumed(world: World) -> None:
    world.config(ON_STOP.format(n=2))
    transcript = world.transcript()
    transcript.turns("Old turn one", "Old turn two", "Old turn three")
    out = world.hook("SessionStart", "s1", transcript, source="resume")
    assert "<memory-index>" in out
    assert world.state("s1")["extraction"]["lastId"] == transcript.ids[-1]
    world.hook("Stop", "s1", transcript)
    world.settle()
    assert world.requests() == []  # nothing since the resume
    transcript.turns("New turn: we deploy through staging")
    world.hook("Stop", "s1", transcript)
    world.settle()
    assert world.requests() == []  # one new user turn < 2
    transcript.turns("New turn: production after staging")
    world.hook("Stop", "s1", transcript)
    world.settle()
    requests = world.requests()
    assert len(requests) == 1
    sent = requests[0].text()
    assert "New turn: we deploy through staging" in sent and "New turn: production" in sent
    assert "Old turn" not in sent


def test_a_started_session_reads_from_its_beginning(world: World) -> None:
    """Only a resume skips what is there: a startup (no state) reads everything."""
    world.config(ON_STOP.format(n=2))
    transcript = world.transcript()
    world.hook("SessionStart", "s1", transcript, source="startup")
    transcript.turns("First: we deploy through staging", "Second: production after")
    world.hook("Stop", "s1", transcript)
    world.settle()
    assert len(world.requests()) == 1 and "First: we deploy" in world.requests()[0].text()


def test_subagents_never_extract(world: World) -> None:
    world.config(ON_STOP.format(n=1) + "onCompaction = true\n")
    transcript = world.transcript()
    transcript.turns("We deploy through staging", "Production after staging")
    assert world.hook("Stop", "s1", transcript, agent_id="agent-7", agent_type="Explore") == ""
    world.stop_spawned_nothing("s1")
    assert world.hook("SubagentStop", "s1", transcript, agent_id="agent-7") == ""
    world.stop_spawned_nothing("s1")
    assert world.hook("PreCompact", "s1", transcript, agent_id="agent-7") == ""
    world.stop_spawned_nothing("s1")
    assert world.requests() == []
    # The same session's own Stop does extract: the switch is on.
    world.hook("Stop", "s1", transcript)
    world.settle()
    assert len(world.requests()) == 1


def test_a_subagent_transcript_never_extracts(world: World) -> None:
    """A transcript made of sidechain lines only is a subagent's own file."""
    world.config(ON_STOP.format(n=1))
    path = world.root / "agent-7.jsonl"
    lines = [
        {
            "type": "user",
            "isSidechain": True,
            "message": {"role": "user", "content": "Explore the deploy scripts"},
            "uuid": str(uuid.uuid4()),
        }
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    world.hook("Stop", "s1", ClaudeTranscript(path))
    world.settle()
    assert world.requests() == []


# -- failures ---------------------------------------------------------------------------------


def test_no_model_configured_logs_one_line(world: World) -> None:
    world.config(ON_STOP.format(n=1), model=False)
    transcript = world.transcript()
    transcript.turns("We deploy through staging")
    assert world.hook("Stop", "s1", transcript) == ""
    assert _backgrounds(world.home) == []
    log = world.log()
    assert len(log) == 1, log
    assert "claude-code Stop" in log[0] and "no model is configured" in log[0]
    world.settle()
    assert "extraction" not in world.state("s1")
    assert world.requests() == []
    assert world.notes() == []


def test_a_failing_model_keeps_the_position(world: World) -> None:
    world.config(ON_STOP.format(n=2))
    world.chat.status = 500
    transcript = world.transcript()
    transcript.turns("We deploy through staging", "Production after staging")
    world.hook("Stop", "s1", transcript)
    world.settle()
    failed = len(world.requests())
    assert failed >= 1  # the client's bounded retries
    log = world.log()
    assert len(log) == 1 and "extraction failed" in log[0] and "500" in log[0], log
    assert world.notes() == []
    assert world.state("s1")["extraction"] == {"readCount": 0, "lastId": None}
    # The model is back: the next Stop reads the same messages again (none was lost).
    world.chat.status = 200
    world.hook("Stop", "s1", transcript)
    world.settle()
    requests = world.requests()
    assert len(requests) == failed + 1
    assert "We deploy through staging" in requests[-1].text()
    _until(lambda: _saved(world), "the extracted note is listed")
    assert world.state("s1")["extraction"]["lastId"] == transcript.ids[-1]


def test_an_unusable_answer_is_logged_and_not_paid_for_twice(world: World) -> None:
    """A 200 answer that is not the JSON asked for writes nothing; the model did read the
    messages, so the position moves on (apply.AnswerRejected after `after`)."""
    world.config(ON_STOP.format(n=1))
    world.chat.reply("I think you should deploy via staging.")
    transcript = world.transcript()
    transcript.turns("We deploy through staging")
    world.hook("Stop", "s1", transcript)
    world.settle()
    assert len(world.requests()) == 1
    assert any("not valid JSON" in line for line in world.log()), world.log()
    assert world.notes() == []
    assert world.state("s1")["extraction"]["lastId"] == transcript.ids[-1]


def test_two_stops_at_once_run_one_pass_at_a_time(world: World) -> None:
    world.config(ON_STOP.format(n=1))
    world.chat.delay = 1.0  # long enough for a second pass to overlap, were it allowed to
    transcript = world.transcript()
    transcript.turns("We deploy through staging", "Production after staging")
    hooks = [world.start_hook("Stop", "s1", transcript) for _ in range(2)]
    for proc in hooks:
        out, err = proc.communicate(timeout=DEADLINE)
        assert proc.returncode == 0 and out == b"", err
    world.settle()
    assert world.chat.peak == 1
    assert len(world.requests()) == 1
    _until(lambda: _saved(world), "the extracted note is listed")
    assert [n["summary"] for n in world.notes()].count(SUMMARY) == 1
