"""`memdir hook EVENT` end to end: the venv's `memdir` console script in a subprocess, the
client's JSON on stdin, a fresh git project whose notes were written through
`memdir.Memory`, and its own MEMDIR_HOME and XDG_RUNTIME_DIR.

Most calls answer in-process (MEMDIR_HOOK_WARM=0); the deadline test stands a socket that
accepts and never answers where the warm server's would be. Every failure must leave the
agent unharmed: exit 0, nothing on stdout (except the locked notice, once per session), and
exactly one line in $MEMDIR_HOME/logs/hooks.log, which never holds a credential.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memdir import Memory
from memdir.guidance import EMPTY_INDEX
from memdir.hooks.run import INDEX_HEADER, LOCKED_NOTICE
from memdir.hooks.warm import socket_for

MEMDIR = Path(sys.executable).parent / "memdir"
TIMEOUT = 120
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PASSWORD = "tangerine-Xylo-8317-harbour"
DEPLOY = "how do I deploy the quokka cluster?"
UNRELATED = "what is the weather like in Lisbon?"
NOTES = (
    (
        "deploy-checklist",
        "Deploy checklist for the quokka cluster",
        "Run the zanzibar smoke tests before tagging a release.",
    ),
    ("db-migrations", "Database migrations use alembic", "Never edit an applied migration."),
)


@dataclass
class Hooks:
    """A project, a memdir home and a runtime dir, and `memdir hook` run on them."""

    project: Path
    home: Path
    runtime: Path
    user: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMDIR_", "CLAUDE"))}
        env.update(
            MEMDIR_HOME=str(self.home),
            XDG_RUNTIME_DIR=str(self.runtime),
            HOME=str(self.user),
            MEMDIR_HOOK_WARM="0",
            PYTHONDONTWRITEBYTECODE="1",
        )
        env.update(extra)
        return env

    def payload(self, event: str, **fields: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "session_id": "session-1",
            "cwd": str(self.project),
            "hook_event_name": event,
        }
        out.update(fields)
        return out

    def hook(
        self,
        event: str,
        stdin: dict[str, Any] | bytes,
        *,
        client: str | None = None,
        argv: tuple[str, ...] = (),
        **env: str,
    ) -> subprocess.CompletedProcess[bytes]:
        data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
        args = [str(MEMDIR), *argv, "hook", *(("--client", client) if client else ()), event]
        return subprocess.run(
            args,
            input=data,
            capture_output=True,
            env=self.env(**env),
            cwd=str(self.project),
            timeout=TIMEOUT,
            check=False,
        )

    def ask(self, event: str, **fields: Any) -> str:
        """The stdout of a hook call that must succeed quietly (exit 0, no log line)."""
        before = self.log()
        done = self.hook(event, self.payload(event, **fields))
        assert done.returncode == 0, done.stderr
        assert self.log() == before, self.log()
        return done.stdout.decode()

    def log(self) -> list[str]:
        path = self.home / "logs" / "hooks.log"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

    def write_notes(self, notes: tuple[tuple[str, str, str], ...] = NOTES) -> None:
        with Memory.open(self.project, home=self.home, embedder=None) as memory:
            for note_id, summary, body in notes:
                memory.remember(summary, body=body, id=note_id)


@pytest.fixture
def hooks(tmp_path: Path) -> Iterator[Hooks]:
    project = tmp_path / "proj"
    project.mkdir()
    git = shutil.which("git")
    if git:
        subprocess.run([git, "init", "-q", str(project)], check=True, timeout=60)
    else:
        (project / ".git").mkdir()
    home, user = tmp_path / "home", tmp_path / "user"
    home.mkdir()
    user.mkdir()
    runtime = Path(tempfile.mkdtemp(prefix="mh-", dir="/tmp"))
    runtime.chmod(0o700)
    try:
        yield Hooks(project, home, runtime, user)
    finally:
        _stop_agents(runtime)
        shutil.rmtree(runtime, ignore_errors=True)


def _stop_agents(runtime: Path) -> None:
    """Lock every unlock agent a test started (they exit and remove their sockets)."""
    from memdir.crypto.agent import AgentClient, AgentUnavailable

    for sock in runtime.rglob("*.sock"):
        if sock.name.startswith("hooks-"):
            continue
        with contextlib.suppress(AgentUnavailable, OSError):
            AgentClient(sock).lock()


@pytest.fixture
def notes(hooks: Hooks) -> Hooks:
    hooks.write_notes()
    return hooks


def context_of(stdout: str, event: str) -> str:
    out = json.loads(stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == event
    context = out["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str)
    return context


def attachment_block(hooks: Hooks) -> str:
    """The block a prompt hook attaches for DEPLOY (asked in a session of its own)."""
    out = hooks.ask("UserPromptSubmit", session_id="probe", prompt=DEPLOY)
    return context_of(out, "UserPromptSubmit")


def claude_transcript(
    path: Path, session: str, block: str, *, tail: list[dict[str, Any]] | None = None
) -> Path:
    """A Claude Code transcript as 2.1.197 writes it: every line carries ``sessionId``,
    the hook output is an ``attachment`` line of type ``hook_additional_context``."""
    lines: list[dict[str, Any]] = [
        {
            "type": "queue-operation",
            "operation": "enqueue",
            "timestamp": "2026-12-06T02:40:55.572Z",
            "sessionId": session,
            "content": DEPLOY,
        },
        {
            "parentUuid": None,
            "isSidechain": False,
            "type": "user",
            "message": {"role": "user", "content": DEPLOY},
            "uuid": "u-1",
            "sessionId": session,
        },
        {
            "parentUuid": "u-1",
            "isSidechain": False,
            "type": "attachment",
            "attachment": {
                "type": "hook_additional_context",
                "content": [block],
                "hookName": "UserPromptSubmit",
                "toolUseID": "hook-1",
                "hookEvent": "UserPromptSubmit",
            },
            "uuid": "a-1",
            "sessionId": session,
        },
        {
            "parentUuid": "a-1",
            "isSidechain": False,
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Sure."}]},
            "uuid": "r-1",
            "sessionId": session,
        },
        *(tail or []),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


COMPACTION: list[dict[str, Any]] = [
    {
        "parentUuid": None,
        "logicalParentUuid": "r-1",
        "isSidechain": False,
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "compactMetadata": {"trigger": "manual", "preTokens": 29035},
        "uuid": "c-1",
    },
    {
        "parentUuid": "c-1",
        "isSidechain": False,
        "type": "user",
        "isCompactSummary": True,
        "isVisibleInTranscriptOnly": True,
        "message": {"role": "user", "content": "This session is being continued … Summary: x"},
        "uuid": "c-2",
    },
]


# -- the run start -------------------------------------------------------------------------------


def test_session_start_prints_the_index_of_the_notes(notes: Hooks) -> None:
    out = notes.ask("SessionStart", source="startup", transcript_path="/nonexistent.jsonl")
    assert out.endswith("\n") and out.count("\n") == 1
    context = context_of(out, "SessionStart")
    assert context.startswith("<memory-index>\n" + INDEX_HEADER)
    assert context.endswith("</memory-index>")
    for note_id, summary, _ in NOTES:
        assert f"- {summary} [[{note_id}]]" in context
    assert "<recalled-memory>" not in context


def test_session_start_of_an_empty_store_gives_the_guidance(hooks: Hooks) -> None:
    context = context_of(hooks.ask("SessionStart", source="startup"), "SessionStart")
    assert len(EMPTY_INDEX.splitlines()) == 2
    assert context == f"<memory-index>\n{INDEX_HEADER}\n\n{EMPTY_INDEX}\n</memory-index>"


def test_codex_session_start_has_the_same_shape(notes: Hooks) -> None:
    payload = notes.payload(
        "SessionStart",
        transcript_path=str(notes.user / ".codex/sessions/2026/rollout-x.jsonl"),
        model="gpt-5-codex",
        permission_mode="bypassPermissions",
        source="startup",
    )
    done = notes.hook("SessionStart", payload, client="codex")
    assert done.returncode == 0
    assert "[[deploy-checklist]]" in context_of(done.stdout.decode(), "SessionStart")


# -- recall on each message --------------------------------------------------------------------


def test_a_prompt_about_a_note_attaches_it_and_an_unrelated_one_prints_nothing(
    notes: Hooks,
) -> None:
    context = context_of(notes.ask("UserPromptSubmit", prompt=DEPLOY), "UserPromptSubmit")
    assert context.startswith("<recalled-memory>") and context.endswith("</recalled-memory>")
    assert "## Deploy checklist for the quokka cluster [[deploy-checklist]]" in context
    assert "zanzibar smoke tests" in context
    assert "[[db-migrations]]" not in context
    assert notes.ask("UserPromptSubmit", session_id="other", prompt=UNRELATED) == ""
    assert notes.ask("UserPromptSubmit", session_id="empty", prompt="   ") == ""


def test_a_note_held_by_the_real_claude_transcript_is_not_attached_again(
    notes: Hooks, tmp_path: Path
) -> None:
    """Claude Code 2.1.197 writes ``sessionId`` on every line, the first one included."""
    block = attachment_block(notes)
    path = claude_transcript(tmp_path / "held.jsonl", "held", block)
    out = notes.ask("UserPromptSubmit", session_id="held", transcript_path=str(path), prompt=DEPLOY)
    assert out == ""


def test_a_note_held_by_attachment_lines_is_not_attached_again(
    notes: Hooks, tmp_path: Path
) -> None:
    """The same dedupe, with lines that do not carry ``sessionId``."""
    block = attachment_block(notes)
    path = claude_transcript(tmp_path / "held.jsonl", "held", block)
    lines = [json.loads(raw) for raw in path.read_text().splitlines()]
    path.write_text(
        "".join(
            json.dumps({k: v for k, v in line.items() if k != "sessionId"}) + "\n"
            for line in lines[1:]
        )
    )
    out = notes.ask(
        "UserPromptSubmit", session_id="held-2", transcript_path=str(path), prompt=DEPLOY
    )
    assert out == ""


def test_after_a_compaction_the_note_is_attached_again(notes: Hooks, tmp_path: Path) -> None:
    block = attachment_block(notes)
    path = claude_transcript(tmp_path / "compacted.jsonl", "cmp", block, tail=COMPACTION)
    out = notes.ask("UserPromptSubmit", session_id="cmp", transcript_path=str(path), prompt=DEPLOY)
    assert "[[deploy-checklist]]" in context_of(out, "UserPromptSubmit")


def test_the_session_ledger_prevents_reattachment_without_a_transcript(notes: Hooks) -> None:
    first = notes.ask("UserPromptSubmit", session_id="ledger", prompt=DEPLOY)
    assert "[[deploy-checklist]]" in context_of(first, "UserPromptSubmit")
    assert notes.ask("UserPromptSubmit", session_id="ledger", prompt=DEPLOY) == ""
    # another session has its own ledger
    other = notes.ask("UserPromptSubmit", session_id="ledger-2", prompt=DEPLOY)
    assert "[[deploy-checklist]]" in other
    # a compaction releases what the session attached
    assert notes.ask("PreCompact", session_id="ledger", trigger="manual") == ""
    again = notes.ask("UserPromptSubmit", session_id="ledger", prompt=DEPLOY)
    assert "[[deploy-checklist]]" in context_of(again, "UserPromptSubmit")


def test_subagent_calls_print_nothing(notes: Hooks) -> None:
    assert notes.ask("UserPromptSubmit", agent_id="a658622f8bdee0c7c", prompt=DEPLOY) == ""
    assert notes.ask("SessionStart", agent_id="a658622f8bdee0c7c", source="startup") == ""
    assert (
        notes.ask(
            "SubagentStop",
            agent_id="a658622f8bdee0c7c",
            agent_type="",
            stop_hook_active=False,
            last_assistant_message="done",
        )
        == ""
    )
    assert not (notes.home / "hooks" / "sessions").exists() or not list(
        (notes.home / "hooks" / "sessions").glob("*.json")
    )


def test_stop_and_end_print_nothing(notes: Hooks) -> None:
    assert notes.ask("Stop", stop_hook_active=False, last_assistant_message="REPLY") == ""
    assert notes.ask("SessionEnd", reason="other") == ""


# -- Gemini CLI and Cursor -----------------------------------------------------------------------


def test_gemini_gets_the_index_with_its_first_message_only(notes: Hooks) -> None:
    transcript = str(notes.user / ".gemini/tmp/proj/chats/session-x.jsonl")
    start = notes.payload("SessionStart", transcript_path=transcript, source="startup")
    done = notes.hook("SessionStart", start, client="gemini")
    assert (done.returncode, done.stdout) == (0, b"")

    def before_agent(prompt: str) -> str:
        payload = notes.payload("BeforeAgent", transcript_path=transcript, prompt=prompt)
        done = notes.hook("BeforeAgent", payload, client="gemini")
        assert done.returncode == 0 and notes.log() == []
        return done.stdout.decode()

    first = context_of(before_agent(UNRELATED), "BeforeAgent")
    assert first.startswith("<memory-index>") and "[[deploy-checklist]]" in first
    assert "<recalled-memory>" not in first
    assert before_agent(UNRELATED) == ""
    recalled = context_of(before_agent(DEPLOY), "BeforeAgent")
    assert "<memory-index>" not in recalled
    assert "## Deploy checklist for the quokka cluster [[deploy-checklist]]" in recalled


def test_gemini_is_told_from_its_input(notes: Hooks) -> None:
    payload = notes.payload("BeforeAgent", session_id="g2", prompt=DEPLOY)
    done = notes.hook("BeforeAgent", payload)
    context = context_of(done.stdout.decode(), "BeforeAgent")
    assert "<memory-index>" in context and "[[deploy-checklist]]" in context


def test_cursor_session_start_output_shape(notes: Hooks) -> None:
    payload = {
        "conversation_id": "c-1",
        "generation_id": "g-1",
        "hook_event_name": "sessionStart",
        "workspace_roots": [str(notes.project)],
        "cursor_version": "1.7.2",
    }
    done = notes.hook("sessionStart", payload)
    assert done.returncode == 0
    out = json.loads(done.stdout)
    assert set(out) == {"additional_context"}
    assert out["additional_context"].startswith("<memory-index>")
    assert "[[deploy-checklist]]" in out["additional_context"]
    prompt = dict(payload, hook_event_name="beforeSubmitPrompt", prompt=DEPLOY)
    done = notes.hook("beforeSubmitPrompt", prompt, client="cursor")
    assert done.returncode == 0
    out = json.loads(done.stdout)
    assert out["continue"] is True
    assert set(out) <= {"continue", "additional_context"}
    assert "[[deploy-checklist]]" in out.get("additional_context", "[[deploy-checklist]]")
    assert notes.log() == []


# -- failures: exit 0, nothing printed, one log line -------------------------------------------


def assert_one_failure(hooks: Hooks, done: subprocess.CompletedProcess[bytes], before: int) -> str:
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    lines = hooks.log()
    assert len(lines) == before + 1, lines
    return lines[-1]


@pytest.mark.parametrize(
    "stdin",
    [
        b'{"session_id": "s", "prompt": "my token is ' + TOKEN.encode() + b'", "hook_e',
        b"\xff\xfe" + TOKEN.encode(),
        json.dumps(["prompt", TOKEN]).encode(),
        json.dumps({"prompt": TOKEN, "cwd": 7, "session_id": ["x"]}).encode()[:-1] + b",}",
    ],
)
def test_malformed_stdin_is_logged_once_without_the_credential(notes: Hooks, stdin: bytes) -> None:
    done = notes.hook("UserPromptSubmit", stdin)
    line = assert_one_failure(notes, done, 0)
    assert "UserPromptSubmit" in line
    assert TOKEN not in line and TOKEN not in done.stderr.decode()


def test_a_valid_call_with_a_credential_in_the_prompt_logs_and_prints_none(notes: Hooks) -> None:
    done = notes.hook("UserPromptSubmit", notes.payload("UserPromptSubmit", prompt=TOKEN))
    assert done.returncode == 0
    assert TOKEN.encode() not in done.stdout + done.stderr
    assert all(TOKEN not in line for line in notes.log())


def test_an_unknown_event_is_logged_once(notes: Hooks) -> None:
    done = notes.hook("BeforeLunch", notes.payload("BeforeLunch", prompt=DEPLOY))
    line = assert_one_failure(notes, done, 0)
    assert "BeforeLunch" in line


def test_an_unknown_event_naming_a_credential_is_logged_redacted(notes: Hooks) -> None:
    done = notes.hook(TOKEN, notes.payload(TOKEN, prompt=DEPLOY))
    line = assert_one_failure(notes, done, 0)
    assert TOKEN not in line


def test_an_unknown_client_is_logged_once(notes: Hooks) -> None:
    payload = notes.payload("UserPromptSubmit", prompt=DEPLOY)
    done = notes.hook("UserPromptSubmit", payload, client="emacs")
    line = assert_one_failure(notes, done, 0)
    assert "emacs" in line
    done = notes.hook("UserPromptSubmit", payload, client=TOKEN)
    line = assert_one_failure(notes, done, 1)
    assert TOKEN not in line


def test_a_damaged_index_database_never_breaks_the_hook(notes: Hooks) -> None:
    databases = list((notes.home / "index").glob("*.sqlite3"))
    assert databases
    for path in databases:
        path.write_bytes(b"this is not a database\x00" * 64)
        for extra in ("-wal", "-shm"):
            path.with_name(path.name + extra).unlink(missing_ok=True)
    for event, fields in (
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": DEPLOY}),
    ):
        before = len(notes.log())
        done = notes.hook(event, notes.payload(event, **fields))
        assert done.returncode == 0
        lines = notes.log()
        if done.stdout:  # answered from the note files: the right answer, nothing logged
            assert "[[deploy-checklist]]" in context_of(done.stdout.decode(), event)
            assert len(lines) == before
        else:
            assert len(lines) == before + 1


def _read_only(
    hooks: Hooks, event: str, payload: dict[str, Any]
) -> subprocess.CompletedProcess[bytes]:
    """The hook run with MEMDIR_HOME read-only (a read-only bind mount in a mount namespace
    of its own when running as root, whom mode bits do not stop)."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [hooks.home, *hooks.home.rglob("*")] if p.is_dir()}
        for path in modes:
            path.chmod(0o555)
        try:
            return hooks.hook(event, payload)
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("running as root without unshare: no way to make a folder read-only")
    home = str(hooks.home)
    script = (
        'mount --bind "$H" "$H" && mount -o remount,ro,bind "$H" && '
        'touch "$H/probe" 2>/dev/null && exit 97; exec "$0" hook "$1"'
    )
    probe = subprocess.run(
        [
            unshare,
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            "mount --bind / /mnt 2>/dev/null; true",
        ],
        capture_output=True,
        timeout=60,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot make a mount namespace: {probe.stderr.decode()[:200]}")
    return subprocess.run(
        [unshare, "-m", "--propagation", "private", "sh", "-c", script, str(MEMDIR), event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=hooks.env(H=home),
        cwd=str(hooks.project),
        timeout=TIMEOUT,
        check=False,
    )


def test_a_read_only_home_exits_0_and_prints_at_most_the_answer(notes: Hooks) -> None:
    (notes.home / "logs").mkdir(exist_ok=True)
    for event, fields in (
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": DEPLOY}),
        ("UserPromptSubmit", {"prompt": UNRELATED}),
    ):
        done = _read_only(notes, event, notes.payload(event, session_id="ro", **fields))
        assert done.returncode == 0, done.stderr
        assert done.stderr == b""
        if done.stdout:
            assert "[[deploy-checklist]]" in context_of(done.stdout.decode(), event)
    assert notes.log() == []  # the log is under the read-only home too
    assert not (notes.home / "probe").exists()


def test_a_locked_encrypted_store_says_so_once_per_session(
    hooks: Hooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMDIR_HOME", str(hooks.home))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(hooks.runtime))
    with Memory.open(hooks.project, home=hooks.home, embedder=None) as memory:
        for note_id, summary, body in NOTES:
            memory.remember(summary, body=body, id=note_id)
        memory.crypto.encrypt(PASSWORD.encode())
        assert memory.crypto.lock() is True
    notice = json.dumps({"systemMessage": LOCKED_NOTICE}, ensure_ascii=False) + "\n"
    for session in ("locked-1", "locked-2"):
        out = hooks.hook("SessionStart", hooks.payload("SessionStart", session_id=session))
        assert out.returncode == 0
        assert out.stdout.decode() == notice
        for event, fields in (
            ("SessionStart", {"source": "resume"}),
            ("UserPromptSubmit", {"prompt": DEPLOY}),
            ("UserPromptSubmit", {"prompt": DEPLOY}),
        ):
            done = hooks.hook(event, hooks.payload(event, session_id=session, **fields))
            assert (done.returncode, done.stdout) == (0, b""), done.stdout
    # a session whose first call is a prompt hears it there
    done = hooks.hook(
        "UserPromptSubmit", hooks.payload("UserPromptSubmit", session_id="l3", prompt=DEPLOY)
    )
    assert done.stdout.decode() == notice
    assert all(PASSWORD not in line for line in hooks.log())
    assert hooks.log() == []  # locked is said, not a failure


# -- the deadline --------------------------------------------------------------------------------


def test_the_deadline_gives_up_silently_when_the_warm_server_never_answers(
    notes: Hooks,
) -> None:
    """A socket where the warm server's would be that accepts and never answers."""
    path = socket_for(notes.home, {"XDG_RUNTIME_DIR": str(notes.runtime)})
    path.parent.mkdir(mode=0o700, exist_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stuck:
        stuck.bind(str(path))
        stuck.listen(8)
        done = notes.hook(
            "UserPromptSubmit",
            notes.payload("UserPromptSubmit", session_id=str(uuid.uuid4()), prompt=DEPLOY),
            MEMDIR_HOOK_WARM="1",
            MEMDIR_HOOK_DEADLINE="0.2",
        )
    line = assert_one_failure(notes, done, 0)
    assert "deadline" in line


def test_a_malformed_hook_command_line_exits_0_and_logs(hooks: Hooks) -> None:
    """A client reads exit 2 from a prompt hook as "block the prompt": never give it."""
    for argv in ([], ["a", "b"], ["--client"], ["--bogus", "Stop"]):
        done = subprocess.run(
            [str(MEMDIR), "hook", *argv],
            input=b"{}",
            capture_output=True,
            env=hooks.env(),
            timeout=120,
            check=False,
        )
        assert (done.returncode, done.stdout) == (0, b""), (argv, done.stderr)
        assert b"Usage: memdir hook" in done.stderr
    assert len(hooks.log()) == 4


def test_a_numeric_session_id_is_its_own_session() -> None:
    from memdir.hooks.clients import parse_call

    calls = [
        parse_call(json.dumps({"session_id": sid, "prompt": "x"}).encode(), "prompt", "codex")
        for sid in (5, 6, "5", None, True)
    ]
    assert [c.session_id for c in calls] == ["5", "6", "5", "default", "default"]
