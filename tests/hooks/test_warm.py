"""The warm hook server (`memdir.hooks.warm`) through the real `memdir hook` command: started
on demand, answering later calls with the in-process answer, stopped by another version or
by idleness, and seeing notes and config written after it started.

Each test has its own MEMDIR_HOME and a private 0700 XDG_RUNTIME_DIR; every server a test
started is killed by pid at teardown. Whether a call was answered by the server is told
from the hook process's own imports (PYTHONPROFILEIMPORTTIME): answering in-process
imports `memdir.hooks.run`, asking the server does not.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memdir import Memory, __version__
from memdir.files.sockets import read_frame, send_frame
from memdir.hooks.warm import socket_for

MEMDIR = Path(sys.executable).parent / "memdir"
TIMEOUT = 120
WAIT = 60.0
DEPLOY = "how do I deploy the quokka cluster?"
MIGRATE = "which tool runs the database migrations, alembic?"


def wait_for(check: Callable[[], bool], what: str, seconds: float = WAIT) -> None:
    end = time.monotonic() + seconds
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@dataclass
class Warm:
    project: Path
    home: Path
    runtime: Path
    user: Path

    @property
    def socket(self) -> Path:
        return socket_for(self.home, {"XDG_RUNTIME_DIR": str(self.runtime)})

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMDIR_", "CLAUDE"))}
        env.update(
            MEMDIR_HOME=str(self.home),
            XDG_RUNTIME_DIR=str(self.runtime),
            HOME=str(self.user),
            MEMDIR_HOOK_IDLE="120",
            PYTHONDONTWRITEBYTECODE="1",
        )
        env.update(extra)
        return env

    def hook(self, event: str, **fields: Any) -> tuple[str, bool]:
        """(stdout, whether it was answered in-process) of one Claude Code hook call."""
        env = fields.pop("env", {})
        payload = {"session_id": "w", "cwd": str(self.project), "hook_event_name": event}
        payload.update(fields)
        done = subprocess.run(
            [str(MEMDIR), "hook", event],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=self.env(PYTHONPROFILEIMPORTTIME="1", **env),
            cwd=str(self.project),
            timeout=TIMEOUT,
            check=False,
        )
        assert done.returncode == 0
        in_process = b"memdir.hooks.run" in done.stderr
        return done.stdout.decode(), in_process

    def pids(self) -> list[int]:
        """The warm servers of this home (by their command line)."""
        pgrep = shutil.which("pgrep")
        assert pgrep is not None
        done = subprocess.run(
            [pgrep, "-f", f"memdir.hooks.warm --home {self.home}"],
            capture_output=True,
            timeout=60,
            check=False,
        )
        return [int(p) for p in done.stdout.split()]

    def write_note(self, note_id: str, summary: str, body: str) -> None:
        with Memory.open(self.project, home=self.home, embedder=None) as memory:
            memory.remember(summary, body=body, id=note_id)

    def started(self) -> None:
        """A first hook call started the server: wait until it listens."""
        wait_for(lambda: self.socket.is_socket() and bool(self.pids()), "the warm server")


@pytest.fixture
def warm(tmp_path: Path) -> Iterator[Warm]:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    home, user = tmp_path / "home", tmp_path / "user"
    home.mkdir()
    user.mkdir()
    runtime = Path(tempfile.mkdtemp(prefix="mw-", dir="/tmp"))
    runtime.chmod(0o700)
    made = Warm(project, home, runtime, user)
    made.write_note(
        "deploy-checklist",
        "Deploy checklist for the quokka cluster",
        "Run the zanzibar smoke tests before tagging a release.",
    )
    try:
        yield made
    finally:
        for pid in made.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(runtime, ignore_errors=True)


def context(stdout: str) -> str:
    value = json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
    assert isinstance(value, str)
    return value


def test_started_on_demand_then_answers_with_the_in_process_output(warm: Warm) -> None:
    assert not warm.socket.exists()
    first, in_process = warm.hook("SessionStart", source="startup")
    assert in_process
    warm.started()
    mode = stat.S_IMODE(warm.socket.stat().st_mode)
    assert mode == 0o600, oct(mode)
    assert stat.S_IMODE(warm.socket.parent.stat().st_mode) == 0o700
    assert warm.socket.parent == warm.runtime / "memdir"
    assert len(warm.pids()) == 1

    second, in_process = warm.hook("SessionStart", source="startup", session_id="w2")
    assert not in_process
    assert second == first
    assert "[[deploy-checklist]]" in context(second)

    # recall through the server: the same output as in-process (MEMDIR_HOOK_WARM=0)
    served, in_process = warm.hook("UserPromptSubmit", prompt=DEPLOY, session_id="p1")
    assert not in_process
    local, in_process = warm.hook(
        "UserPromptSubmit", prompt=DEPLOY, session_id="p2", env={"MEMDIR_HOOK_WARM": "0"}
    )
    assert in_process
    assert served == local
    assert "## Deploy checklist for the quokka cluster [[deploy-checklist]]" in context(served)
    # the ledger is shared: the session that got it through the server does not again
    assert warm.hook("UserPromptSubmit", prompt=DEPLOY, session_id="p1") == ("", False)
    assert len(warm.pids()) == 1


def test_a_second_start_does_not_start_a_second_server(warm: Warm) -> None:
    warm.hook("SessionStart", source="startup")
    warm.started()
    pid = warm.pids()
    subprocess.run(
        [sys.executable, "-m", "memdir.hooks.warm", "--home", str(warm.home)],
        env=warm.env(),
        timeout=TIMEOUT,
        check=True,
    )
    assert warm.pids() == pid


def _ask(path: Path, header: dict[str, Any]) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(str(path))
        send_frame(sock, header, b"{}")
        frame = read_frame(sock, lambda _: 1 << 20)
    assert frame is not None
    return frame[0]


def test_another_version_stops_it(warm: Warm) -> None:
    warm.hook("SessionStart", source="startup")
    warm.started()
    reply = _ask(
        warm.socket,
        {"op": "hook", "version": __version__ + ".other", "client": "", "event": "Stop"},
    )
    assert reply["ok"] is False and reply["error"] == "version"
    wait_for(lambda: not warm.pids() and not warm.socket.exists(), "the server to stop")
    # the next hook answers in-process and starts a server of this version
    out, in_process = warm.hook("SessionStart", source="startup")
    assert in_process and "[[deploy-checklist]]" in context(out)
    warm.started()


def test_an_unknown_request_is_refused_and_the_server_stays(warm: Warm) -> None:
    warm.hook("SessionStart", source="startup")
    warm.started()
    reply = _ask(warm.socket, {"op": "shutdown", "version": __version__})
    assert reply == {"ok": False, "error": "unknown-op", "message": "no such request"}
    out, in_process = warm.hook("SessionStart", source="startup")
    assert not in_process and "[[deploy-checklist]]" in context(out)


def test_it_exits_when_idle(warm: Warm) -> None:
    warm.hook("SessionStart", source="startup", env={"MEMDIR_HOOK_IDLE": "1"})
    warm.started()
    wait_for(lambda: not warm.pids(), "the idle server to exit")
    assert not warm.socket.exists()


def test_it_sees_a_note_written_after_it_started(warm: Warm) -> None:
    warm.hook("SessionStart", source="startup")
    warm.started()
    out, in_process = warm.hook("UserPromptSubmit", prompt=MIGRATE, session_id="n1")
    assert (out, in_process) == ("", False)
    warm.write_note(
        "db-migrations",
        "Database migrations use alembic",
        "Never edit an applied migration; alembic runs them.",
    )
    out, in_process = warm.hook("UserPromptSubmit", prompt=MIGRATE, session_id="n2")
    assert not in_process
    assert "[[db-migrations]]" in context(out)
    start, in_process = warm.hook("SessionStart", source="startup", session_id="n3")
    assert not in_process
    assert "[[db-migrations]]" in context(start)


def test_it_picks_up_a_user_config_change(warm: Warm) -> None:
    warm.hook("SessionStart", source="startup")
    warm.started()
    out, in_process = warm.hook("UserPromptSubmit", prompt=DEPLOY, session_id="c1")
    assert not in_process and "[[deploy-checklist]]" in context(out)
    (warm.home / "config.toml").write_text("[memory.recall]\nenabled = false\n", encoding="utf-8")
    out, in_process = warm.hook("UserPromptSubmit", prompt=DEPLOY, session_id="c2")
    assert (out, in_process) == ("", False)
    (warm.home / "config.toml").write_text(
        "[memory.recall]\nenabled = true\nperTurn = 2\n", encoding="utf-8"
    )
    out, in_process = warm.hook("UserPromptSubmit", prompt=DEPLOY, session_id="c3")
    assert not in_process and "[[deploy-checklist]]" in context(out)


def test_an_encrypted_store_is_never_kept_warm_so_a_lock_takes_effect_at_once(
    warm: Warm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decrypted notes must not outlive `memdir lock` in a process that keeps them."""
    from memdir.crypto.agent import AgentClient, AgentUnavailable

    monkeypatch.setenv("MEMDIR_HOME", str(warm.home))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(warm.runtime))
    password = b"tangerine-Xylo-8317-harbour"
    try:
        with Memory.open(warm.project, home=warm.home, embedder=None) as memory:
            memory.crypto.encrypt(password)  # leaves it unlocked
        warm.hook("SessionStart", source="startup")  # starts the server
        warm.started()
        out, in_process = warm.hook("UserPromptSubmit", session_id="e1", prompt=DEPLOY)
        assert in_process  # declined by the warm server, answered here
        assert "[[deploy-checklist]]" in context(out)
        with Memory.open(warm.project, home=warm.home, embedder=None) as memory:
            assert memory.crypto.lock() is True
        out, _ = warm.hook("UserPromptSubmit", session_id="e2", prompt=DEPLOY)
        assert "zanzibar" not in out and "memory is locked" in out
    finally:
        for sock in (warm.runtime / "memdir").glob("agent-*.sock"):
            with contextlib.suppress(AgentUnavailable, OSError):
                AgentClient(sock).lock()


def test_each_memdir_version_has_its_own_socket(warm: Warm) -> None:
    from memdir.hooks import warm as module

    env = {"XDG_RUNTIME_DIR": str(warm.runtime)}
    here = socket_for(warm.home, env)
    original = module.__version__
    try:
        module.__version__ = original + ".other"
        assert socket_for(warm.home, env) != here
    finally:
        module.__version__ = original
