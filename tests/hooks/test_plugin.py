"""`memdir hooks plugin`: the real Claude Code CLI installs the plugin from a local folder
(`claude plugin marketplace add`, `claude plugin install memdir@memdir`) and, with no
hooks in the project's own settings, a `claude -p` run sends the memory index and the
recalled note to the model (a scripted Anthropic server on loopback).

Skips when the CLI is not installed, unless MEMDIR_REQUIRE_AGENT_CLIS=1 (as `.ci/run`
sets), when it fails instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agent_clis import claude_env, find_cli, run_claude
from model_servers import AnthropicServer, iter_texts

from memdir import Memory
from memdir.clients.hooks import plugin_files

CLAUDE = find_cli("claude")
if CLAUDE is None:
    if os.environ.get("MEMDIR_REQUIRE_AGENT_CLIS") == "1":
        raise RuntimeError("MEMDIR_REQUIRE_AGENT_CLIS=1 but Claude Code is not installed")
    pytestmark = pytest.mark.skip(reason="Claude Code (claude) is not installed")

MEMDIR = str(Path(sys.executable).with_name("memdir"))


def _memdir(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MEMDIR, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_plugin_files_are_the_hooks_install_writes() -> None:
    files = plugin_files("9.9.9")
    hooks = json.loads(files["memdir/hooks/hooks.json"])["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"}
    for event, groups in hooks.items():
        (hook,) = groups[0]["hooks"]
        assert hook["command"] == f"memdir hook --client claude-code {event}"
    market = json.loads(files[".claude-plugin/marketplace.json"])
    assert market["plugins"][0]["source"] == "./memdir"
    assert json.loads(files["memdir/.mcp.json"])["mcpServers"]["memdir"]["args"] == [
        "mcp",
        "serve",
    ]


def test_claude_installs_the_plugin_and_its_hooks_reach_the_model(tmp_path: Path) -> None:
    home, project, memdir_home = tmp_path / "home", tmp_path / "project", tmp_path / "mh"
    for folder in (home, project, memdir_home):
        folder.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (memdir_home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    with Memory.open(project, home=memdir_home) as memory:
        memory.remember(
            "Deploys go out on Tuesdays",
            body="Release train leaves Tuesday 10:00 UTC.",
            tags=["deploys"],
        )
        memory.remember("The staging database is Postgres 16", tags=["staging"])
    extra = {
        "MEMDIR_HOME": str(memdir_home),
        "MEMDIR_HOOK_IDLE": "20",
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
    }
    (tmp_path / "run").mkdir(mode=0o700)
    with AnthropicServer() as server:
        env = claude_env(home, server.base_url, extra)
        env["PATH"] = f"{Path(MEMDIR).parent}{os.pathsep}{env['PATH']}"
        out = tmp_path / "plugin"
        made = _memdir("hooks", "plugin", "--out", str(out), "--json", env=env, cwd=project)
        assert made.returncode == 0, made.stderr
        assert CLAUDE is not None
        for argv in (
            ["plugin", "marketplace", "add", str(out)],
            ["plugin", "install", "memdir@memdir"],
        ):
            done = subprocess.run(
                [str(CLAUDE), *argv],
                env=env,
                cwd=project,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, done.stdout + done.stderr
        assert not (project / ".claude").exists()  # the hooks come from the plugin only
        server.reply("Tuesdays.")
        run = run_claude(
            project,
            home,
            server.base_url,
            "When do deploys go out?",
            extra_env={**extra, "PATH": env["PATH"]},
        )
        assert run.returncode == 0, run.stdout + run.stderr
        texts = "\n".join(t for r in server.model_requests() for t in iter_texts(r.body))
        assert "<memory-index>" in texts and "The staging database is Postgres 16" in texts
        assert "<recalled-memory>" in texts and "Release train leaves Tuesday" in texts
