"""`memdir hooks install` and `memdir hooks check` (§11): each client's documented file and
shape, merging beside the user's own hooks, backups under the memdir home, idempotence,
refusals, and the approval or trust step each client still asks for (`memdir.clients.trust`).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memdir.cli.main import main
from memdir.clients import jsonc
from memdir.clients.hooks import HOOK_CLIENTS, check_hooks, install_hooks, is_memdir_hook
from memdir.clients.install import this_memdir
from memdir.clients.trust import approvals
from memdir.errors import Refused

#: The documented events of each client, with the seconds each may take.
EVENTS: dict[str, dict[str, int]] = {
    "claude-code": {
        "SessionStart": 10,
        "UserPromptSubmit": 10,
        "PreCompact": 30,
        "Stop": 30,
        "SessionEnd": 30,
    },
    "codex": {
        "SessionStart": 10,
        "UserPromptSubmit": 10,
        "PreCompact": 30,
        "Stop": 30,
        "SessionEnd": 30,
    },
    "gemini": {"BeforeAgent": 10, "AfterAgent": 30, "SessionEnd": 30},
    "cursor": {
        "sessionStart": 10,
        "beforeSubmitPrompt": 10,
        "preCompact": 30,
        "stop": 30,
        "sessionEnd": 30,
    },
}
FILES = {
    "claude-code": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/hooks.json",
}
CLIENTS = tuple(FILES)
BIN = str(Path(sys.executable).parent)


@dataclass(frozen=True)
class Env:
    """A project, a user home and a memdir home, all temporary; the process points at them."""

    root: Path
    project: Path
    home: Path
    memdir_home: Path

    @property
    def environ(self) -> dict[str, str]:
        return dict(os.environ)

    @property
    def backups(self) -> Path:
        return self.memdir_home / "backups" / "client-configs"

    def backup_files(self) -> list[Path]:
        return sorted(self.backups.iterdir()) if self.backups.is_dir() else []


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    root = tmp_path.resolve()
    project, home, memdir_home, runtime = (root / n for n in ("proj", "home", "mh", "run"))
    for path in (project / ".git", home, memdir_home):
        path.mkdir(parents=True)
    runtime.mkdir(mode=0o700)
    runtime.chmod(0o700)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMDIR_HOME", str(memdir_home))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("MEMDIR_HOOK_WARM", "0")
    monkeypatch.setenv("MEMDIR_HOOK_IDLE", "20")
    monkeypatch.setenv("PATH", BIN + os.pathsep + os.environ.get("PATH", ""))
    for name in (
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_TRUST_WORKSPACE",
        "CLAUDE_PROJECT_DIR",
        "XDG_CONFIG_HOME",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(project)
    yield Env(root, project, home, memdir_home)


def _install(env: Env, client: str, **kwargs: Any) -> Any:
    kwargs.setdefault("scope", "project")
    return install_hooks(
        client,
        project=env.project,
        user_home=env.home,
        environ=env.environ,
        memdir_home=env.memdir_home,
        **kwargs,
    )


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _doc(path: Path) -> dict[str, Any]:
    doc = jsonc.loads(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def _memdir_hooks(client: str, entries: list[Any]) -> list[dict[str, Any]]:
    if HOOK_CLIENTS[client].shape == "flat":
        return [e for e in entries if is_memdir_hook(e)]
    return [h for e in entries for h in e.get("hooks", []) if is_memdir_hook(h)]


def _files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if ".git" not in p.parts}


# -- files and shapes ---------------------------------------------------------------------


@pytest.mark.parametrize("scope", ["project", "user"])
@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_gets_its_documented_file_and_shape(client: str, scope: str, env: Env) -> None:
    result = _install(env, client, scope=scope)
    expected = (env.project if scope == "project" else env.home) / FILES[client]
    assert result.path == expected and result.written and not result.unchanged
    assert result.events == tuple(EVENTS[client])
    doc = _doc(expected)
    assert set(doc["hooks"]) == set(EVENTS[client])
    launcher = "memdir" if scope == "project" else this_memdir().command
    for event, seconds in EVENTS[client].items():
        entries = doc["hooks"][event]
        command = f"{launcher} hook --client {client} {event}"
        if client == "cursor":
            assert doc["version"] == 1
            assert entries == [{"command": command}]
        elif client == "gemini":
            assert entries == [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": command,
                            "name": "memdir",
                            "timeout": seconds * 1000,
                        }
                    ]
                }
            ]
        else:
            assert entries == [
                {"hooks": [{"type": "command", "command": command, "timeout": seconds}]}
            ]
    text = expected.read_text(encoding="utf-8")
    if scope == "project":
        # Meant to be committed: `memdir` and no machine path at all.
        for machine in (str(env.root), str(env.home), str(env.memdir_home), BIN, "/tmp/"):
            assert machine not in text
    else:
        assert Path(launcher).is_absolute() and launcher in text


def test_user_scope_follows_the_clients_own_folder_variables(env: Env) -> None:
    claude_dir, codex_dir = env.root / "claude-config", env.root / "codex-home"
    environ = {**env.environ, "CLAUDE_CONFIG_DIR": str(claude_dir), "CODEX_HOME": str(codex_dir)}
    claude = install_hooks(
        "claude-code", project=env.project, scope="user", user_home=env.home, environ=environ
    )
    codex = install_hooks(
        "codex", project=env.project, scope="user", user_home=env.home, environ=environ
    )
    assert claude.path == claude_dir / "settings.json" and claude.path.is_file()
    assert codex.path == codex_dir / "hooks.json" and codex.path.is_file()


# -- merging ------------------------------------------------------------------------------


def test_other_hooks_groups_and_keys_are_kept(env: Env) -> None:
    path = env.project / FILES["claude-code"]
    path.parent.mkdir()
    mine = {"type": "command", "command": "./scripts/lint.sh", "timeout": 5}
    old_memdir = {"type": "command", "command": "/old/bin/memdir hook --client claude-code Stop"}
    before: dict[str, Any] = {
        "permissions": {"allow": ["Bash(ls:*)"]},
        "model": "opus",
        "hooks": {
            "Stop": [
                {"matcher": "", "hooks": [mine]},
                {"matcher": "*", "hooks": [{"type": "command", "command": "notify"}, old_memdir]},
            ],
            "PreToolUse": [{"matcher": "Bash", "hooks": [mine]}],
        },
    }
    path.write_text(json.dumps(before, indent=2), encoding="utf-8")
    _install(env, "claude-code")
    doc = _doc(path)
    assert doc["permissions"] == before["permissions"] and doc["model"] == "opus"
    assert doc["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]
    stop = doc["hooks"]["Stop"]
    # The user's group untouched; the mixed group keeps the user's hook (and its matcher)
    # and loses only memdir's old entry; memdir's own group comes last.
    assert stop[0] == {"matcher": "", "hooks": [mine]}
    assert stop[1] == {"matcher": "*", "hooks": [{"type": "command", "command": "notify"}]}
    assert stop[2] == {
        "hooks": [
            {"type": "command", "command": "memdir hook --client claude-code Stop", "timeout": 30}
        ]
    }
    for event in EVENTS["claude-code"]:
        assert len(_memdir_hooks("claude-code", doc["hooks"][event])) == 1


def test_cursor_keeps_the_users_flat_entries_and_version(env: Env) -> None:
    path = env.project / FILES["cursor"]
    path.parent.mkdir()
    path.write_text(
        json.dumps({"version": 1, "hooks": {"stop": [{"command": "./audit.sh"}]}}),
        encoding="utf-8",
    )
    _install(env, "cursor")
    doc = _doc(path)
    assert doc["version"] == 1
    assert doc["hooks"]["stop"] == [
        {"command": "./audit.sh"},
        {"command": "memdir hook --client cursor stop"},
    ]


GEMINI_WITH_COMMENTS = """\
// my Gemini settings
{
  /* the theme I like */
  "ui": {"theme": "GitHub"},  // trailing comment
  "hooks": {
    "BeforeTool": [
      {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh"}]}
    ]
  },
  "security": {"folderTrust": {"enabled": true}}
}
"""


def test_jsonc_comments_and_other_keys_survive_in_gemini_settings(env: Env) -> None:
    path = env.project / FILES["gemini"]
    path.parent.mkdir()
    path.write_text(GEMINI_WITH_COMMENTS, encoding="utf-8")
    result = _install(env, "gemini")
    assert result.written
    text = path.read_text(encoding="utf-8")
    for comment in ("// my Gemini settings", "/* the theme I like */", "// trailing comment"):
        assert comment in text
    doc = _doc(path)
    assert doc["ui"] == {"theme": "GitHub"}
    assert doc["security"] == {"folderTrust": {"enabled": True}}
    assert doc["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "./guard.sh"
    assert set(EVENTS["gemini"]) <= set(doc["hooks"])


# -- idempotence and backups ----------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_a_second_install_changes_nothing(client: str, env: Env) -> None:
    first = _install(env, client)
    assert first.backup is None  # nothing was there to back up
    before = first.path.read_bytes()
    mtime = first.path.stat().st_mtime_ns
    again = _install(env, client)
    assert again.unchanged and not again.written and again.backup is None and again.diff == ""
    assert first.path.read_bytes() == before and first.path.stat().st_mtime_ns == mtime
    assert env.backup_files() == []
    done = _cli("hooks", "install", "--client", client)
    assert done.exit_code == 0 and "nothing changed" in done.output
    assert first.path.read_bytes() == before and env.backup_files() == []


def test_a_second_install_after_the_user_added_a_hook_changes_nothing(env: Env) -> None:
    """memdir's entry is already there and right: the user's later hook is no reason to
    rewrite (and back up) the file, moving memdir's entry after it."""
    first = _install(env, "claude-code")
    doc = _doc(first.path)
    doc["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "./after.sh"}]})
    first.path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    before = first.path.read_bytes()
    again = _install(env, "claude-code")
    assert again.unchanged, again.diff
    assert first.path.read_bytes() == before
    assert env.backup_files() == []


def test_a_reinstall_restores_an_edited_timeout_and_backs_up_the_edit(env: Env) -> None:
    first = _install(env, "claude-code")
    doc = _doc(first.path)
    doc["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 1
    edited = json.dumps(doc, indent=2) + "\n"
    first.path.write_text(edited, encoding="utf-8")
    project_files = _files_under(env.project)
    again = _install(env, "claude-code")
    assert again.written and not again.unchanged
    assert _doc(first.path)["hooks"]["Stop"][0]["hooks"][0]["timeout"] == 30
    assert again.backup is not None
    assert again.backup.parent == env.backups
    assert again.backup.read_text(encoding="utf-8") == edited
    # Never beside the file: no new file anywhere in the project.
    assert _files_under(env.project) == project_files
    assert (env.backups.stat().st_mode & 0o077) == 0


def test_the_cli_backs_up_under_memdir_home_never_in_the_project(env: Env) -> None:
    path = env.project / FILES["codex"]
    path.parent.mkdir()
    path.write_text('{"hooks": {"Stop": []}}\n', encoding="utf-8")
    done = _cli("hooks", "install", "--client", "codex")
    assert done.exit_code == 0, done.output
    assert "original backed up to" in done.output
    backups = env.backup_files()
    assert len(backups) == 1 and backups[0].name.startswith("hooks.json.bak-")
    assert backups[0].read_text(encoding="utf-8") == '{"hooks": {"Stop": []}}\n'
    assert {p.name for p in path.parent.iterdir()} == {"hooks.json"}


def test_dry_run_shows_a_diff_and_writes_nothing(env: Env) -> None:
    done = _cli("hooks", "install", "--client", "claude-code", "--dry-run")
    assert done.exit_code == 0, done.output
    assert "would write" in done.output
    assert "+++ " in done.output and "memdir hook --client claude-code Stop" in done.output
    assert not (env.project / ".claude").exists()
    path = env.project / FILES["gemini"]
    path.parent.mkdir()
    path.write_text(GEMINI_WITH_COMMENTS, encoding="utf-8")
    done = _cli("hooks", "install", "--client", "gemini", "--dry-run")
    assert done.exit_code == 0 and "--- " in done.output and '+    "AfterAgent"' in done.output
    assert path.read_text(encoding="utf-8") == GEMINI_WITH_COMMENTS
    assert env.backup_files() == []


# -- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"hooks": {"Stop": [}', "does not parse"),
        ('{"hooks": ["memdir"]}', '"hooks"'),
        ('{"hooks": {"Stop": {"command": "x"}}}', '"hooks.Stop"'),
        ("[1, 2]", "not a JSON object"),
    ],
    ids=["unparsable", "hooks-not-object", "event-not-list", "not-object"],
)
def test_a_file_memdir_cannot_merge_into_safely_is_refused(text: str, says: str, env: Env) -> None:
    path = env.project / FILES["claude-code"]
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    done = CliRunner().invoke(main, ["hooks", "install", "--client", "claude-code"])
    assert done.exit_code == 4, done.output
    assert says in done.output and "nothing was written" in done.output
    assert path.read_text(encoding="utf-8") == text
    assert env.backup_files() == []
    assert {p.name for p in path.parent.iterdir()} == {"settings.json"}


def test_a_symlinked_settings_file_is_written_through_the_link(env: Env) -> None:
    dotfiles = env.root / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude-settings.json"
    target.write_text('{"model": "sonnet"}\n', encoding="utf-8")
    link = env.home / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(target)
    result = _install(env, "claude-code", scope="user")
    assert link.is_symlink() and link.resolve() == target
    doc = _doc(target)
    assert doc["model"] == "sonnet" and set(doc["hooks"]) == set(EVENTS["claude-code"])
    assert result.backup is not None and result.backup.parent == env.backups
    assert result.backup.read_text(encoding="utf-8") == '{"model": "sonnet"}\n'
    assert sorted(p.name for p in link.parent.iterdir()) == ["settings.json"]


# -- CLI output -----------------------------------------------------------------------------


def test_json_output(env: Env) -> None:
    done = _cli("hooks", "install", "--client", "codex", "--json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    assert data["client"] == "codex" and data["scope"] == "project"
    assert data["path"] == str(env.project / FILES["codex"])
    assert data["events"] == list(EVENTS["codex"])
    assert data["written"] is True and data["unchanged"] is False and data["dry_run"] is False
    assert data["backup"] is None and data["diff"].startswith("--- /dev/null")
    assert any(n.startswith("hook trust:") for n in data["notes"])
    again = json.loads(_cli("hooks", "install", "--client", "codex", "--json").output)
    assert again["unchanged"] is True and again["written"] is False


@pytest.mark.parametrize(
    ("client", "notes"),
    [
        ("claude-code", ["folder trust (project hooks)", "trust this folder"]),
        ("gemini", ["folder trust", "untrusted folder", "trustedFolders.json"]),
        ("codex", ["hook trust", "project trust", "trust them"]),
    ],
)
def test_the_cli_prints_the_approval_the_client_will_ask_for(
    client: str, notes: list[str], env: Env
) -> None:
    done = _cli("hooks", "install", "--client", client)
    assert done.exit_code == 0, done.output
    assert "note:" in done.output
    text = " ".join(done.output.split())
    for note in notes:
        assert note in text
    assert f"memdir hooks check --client {client}" in text


def test_a_project_install_notes_when_memdir_is_not_on_path(env: Env) -> None:
    result = install_hooks(
        "claude-code",
        project=env.project,
        user_home=env.home,
        environ={"PATH": str(env.root / "empty"), "HOME": str(env.home)},
        memdir_home=env.memdir_home,
    )
    assert any("not on PATH" in n for n in result.notes)


# -- memdir hooks check ----------------------------------------------------------------------


def _trust_claude(env: Env) -> None:
    state = {"projects": {str(env.project): {"hasTrustDialogAccepted": True}}}
    (env.home / ".claude.json").write_text(json.dumps(state), encoding="utf-8")


def _trust_gemini(env: Env) -> None:
    (env.home / ".gemini").mkdir(exist_ok=True)
    rules = {str(env.project): "TRUST_FOLDER"}
    (env.home / ".gemini" / "trustedFolders.json").write_text(json.dumps(rules), "utf-8")


def _trust_codex(env: Env) -> None:
    hooks_file = env.project / FILES["codex"]
    lines = []
    for number, event in enumerate(("session_start", "user_prompt_submit", "stop")):
        lines += [f'[hooks.state."{hooks_file}:{event}:0:0"]', f'trusted_hash = "sha256:{number}"']
    lines += [f'[projects."{env.project}"]', 'trust_level = "trusted"']
    (env.home / ".codex").mkdir(exist_ok=True)
    (env.home / ".codex" / "config.toml").write_text("\n".join(lines) + "\n", "utf-8")


TRUST = {"claude-code": _trust_claude, "gemini": _trust_gemini, "codex": _trust_codex}


def test_check_a_missing_file_fails_with_a_hint(env: Env) -> None:
    done = _cli("hooks", "check", "--client", "claude-code")
    assert done.exit_code == 1
    text = " ".join(done.output.split())
    assert "does not exist" in text
    assert "memdir hooks install --client claude-code --scope project" in text


def test_check_names_the_missing_events(env: Env) -> None:
    result = _install(env, "claude-code")
    doc = _doc(result.path)
    del doc["hooks"]["Stop"], doc["hooks"]["PreCompact"]
    result.path.write_text(json.dumps(doc), encoding="utf-8")
    done = _cli("hooks", "check", "--client", "claude-code")
    assert done.exit_code == 1
    assert "missing for PreCompact, Stop" in " ".join(done.output.split())
    report = check_hooks("claude-code", project=env.project, user_home=env.home)
    assert report.missing == ("PreCompact", "Stop") and report.status == "broken"


def test_check_says_when_the_command_is_not_on_path(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(env, "claude-code")
    _trust_claude(env)
    monkeypatch.setenv("PATH", str(env.root / "empty"))
    done = _cli("hooks", "check", "--client", "claude-code")
    assert done.exit_code == 1
    assert "'memdir' is not found (not on PATH here)" in done.output


def test_check_reports_an_unparsable_file(env: Env) -> None:
    path = env.project / FILES["gemini"]
    path.parent.mkdir()
    path.write_text("{nope", encoding="utf-8")
    done = _cli("hooks", "check", "--client", "gemini")
    assert done.exit_code == 1 and "does not parse" in done.output


@pytest.mark.parametrize("client", CLIENTS)
def test_check_works_only_once_nothing_is_pending(client: str, env: Env) -> None:
    _install(env, client)
    if client in TRUST:
        pending = _cli("hooks", "check", "--client", client)
        assert pending.exit_code == 1, pending.output
        assert "pending" in pending.output and "still asks for a step" in pending.output
        assert "the first hook ran and answered" in pending.output
        TRUST[client](env)
    done = _cli("hooks", "check", "--client", client)
    assert done.exit_code == 0, done.output
    assert f"memdir's hooks work in {client}" in done.output
    as_json = _cli("hooks", "check", "--client", client, "--json")
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.output)
    assert data["ok"] is True and data["status"] == "works" and data["missing"] == []
    assert all(step["state"] == "approved" for step in data["approvals"])
    assert "memdir" in data["output"]


def test_check_of_the_user_file(env: Env) -> None:
    _install(env, "cursor", scope="user")
    report = check_hooks("cursor", project=env.project, scope="user", user_home=env.home)
    assert report.path == env.home / FILES["cursor"]
    assert report.ok, report.problem
    assert Path(report.command.split()[0]).is_absolute()


# -- approvals (memdir mcp check and hooks check) ----------------------------------------------


def _states(client: str, env: Env, purpose: str = "hooks", **environ: str) -> dict[str, str]:
    found = approvals(
        client,
        project=env.project,
        user_home=env.home,
        environ={**env.environ, **environ},
        purpose=purpose,
    )
    return {a.what: a.state for a in found}


def test_claude_project_mcp_server_pending_approved_refused(env: Env) -> None:
    assert _states("claude-code", env, "mcp") == {}  # no .mcp.json: nothing to approve
    (env.project / ".mcp.json").write_text('{"mcpServers": {"memdir": {}}}', "utf-8")
    assert _states("claude-code", env, "mcp") == {"MCP server approval": "pending"}
    local = env.project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"enabledMcpjsonServers": ["memdir"]}), "utf-8")
    assert _states("claude-code", env, "mcp") == {"MCP server approval": "approved"}
    local.write_text(json.dumps({"enabledMcpjsonServers": ["other"]}), "utf-8")
    assert _states("claude-code", env, "mcp") == {"MCP server approval": "pending"}
    local.write_text(json.dumps({"enableAllProjectMcpServers": True}), "utf-8")
    assert _states("claude-code", env, "mcp") == {"MCP server approval": "approved"}
    local.write_text(json.dumps({"disabledMcpjsonServers": ["memdir"]}), "utf-8")
    assert _states("claude-code", env, "mcp") == {"MCP server approval": "refused"}
    # The folder trust of project hooks is a separate step.
    assert _states("claude-code", env) == {"folder trust (project hooks)": "pending"}
    _trust_claude(env)
    assert _states("claude-code", env) == {"folder trust (project hooks)": "approved"}


def test_claude_state_follows_claude_config_dir(env: Env) -> None:
    config = env.root / "claude-config"
    config.mkdir()
    state = {"projects": {str(env.project): {"hasTrustDialogAccepted": True}}}
    (config / ".claude.json").write_text(json.dumps(state), "utf-8")
    assert _states("claude-code", env)["folder trust (project hooks)"] == "pending"
    found = _states("claude-code", env, CLAUDE_CONFIG_DIR=str(config))
    assert found["folder trust (project hooks)"] == "approved"


def _gemini_rules(env: Env, rules: dict[str, str]) -> None:
    (env.home / ".gemini").mkdir(exist_ok=True)
    (env.home / ".gemini" / "trustedFolders.json").write_text(json.dumps(rules), "utf-8")


def test_gemini_folder_trust_states(env: Env) -> None:
    assert _states("gemini", env) == {"folder trust": "pending"}
    _gemini_rules(env, {str(env.project): "DO_NOT_TRUST"})
    assert _states("gemini", env) == {"folder trust": "refused"}
    _gemini_rules(env, {str(env.project): "TRUST_FOLDER"})
    assert _states("gemini", env) == {"folder trust": "approved"}
    _gemini_rules(env, {str(env.root): "TRUST_FOLDER"})  # a trusted ancestor
    assert _states("gemini", env) == {"folder trust": "approved"}
    # TRUST_PARENT on a folder above the project covers it (the rule's parent and below).
    _gemini_rules(env, {str(env.root): "TRUST_PARENT"})
    assert _states("gemini", env) == {"folder trust": "approved"}
    assert _states("gemini", env, GEMINI_CLI_TRUST_WORKSPACE="true") == {"folder trust": "approved"}


def test_gemini_trust_parent_on_a_sibling_covers_the_project(env: Env) -> None:
    """Gemini CLI's "Trust parent folder" on ROOT/other writes ``ROOT/other: TRUST_PARENT``,
    which trusts ROOT and every folder below it (trustedFolders.ts: the effective path of a
    TRUST_PARENT rule is ``path.dirname(rule)``), so ROOT/proj is trusted too."""
    sibling = env.root / "other"
    sibling.mkdir()
    _gemini_rules(env, {str(sibling): "TRUST_PARENT"})
    assert _states("gemini", env) == {"folder trust": "approved"}


def test_codex_hook_and_project_trust(env: Env) -> None:
    assert _states("codex", env) == {"hook trust": "pending", "project trust": "pending"}
    _trust_codex(env)
    assert _states("codex", env) == {"hook trust": "approved", "project trust": "approved"}


def test_codex_trust_of_another_tools_hook_does_not_trust_memdirs(env: Env) -> None:
    """Codex keys hook trust by hook (``[hooks.state."FILE:event:group:hook"]``): a hash
    trusted for some other file's hook says nothing about the project's .codex/hooks.json."""
    _install(env, "codex")
    elsewhere = env.home / ".codex" / "hooks.json"
    (env.home / ".codex").mkdir()
    (env.home / ".codex" / "config.toml").write_text(
        f'[hooks.state."{elsewhere}:stop:0:0"]\ntrusted_hash = "sha256:abc"\n', "utf-8"
    )
    assert _states("codex", env)["hook trust"] == "pending"


def test_check_accepts_a_memdir_path_with_a_space(env: Env) -> None:
    """A user file names this memdir's absolute path, shell-quoted when it holds a space
    (``'/Users/Jo Doe/.local/bin/memdir' hook …``, macOS ``Application Support``): the
    installed hook runs, so check must find its command too."""
    folder = env.root / "with space" / "bin"
    folder.mkdir(parents=True)
    (folder / "memdir").symlink_to(Path(sys.executable).parent / "memdir")
    result = _install(env, "cursor", scope="user", command=str(folder / "memdir"))
    command = _doc(result.path)["hooks"]["sessionStart"][0]["command"]
    assert command.startswith(f"'{folder / 'memdir'}' hook ")
    report = check_hooks("cursor", project=env.project, scope="user", user_home=env.home)
    assert report.problem is None and report.ok


# -- review findings: line endings, symlink loops, read-only files, lock files ----------------


def test_a_crlf_settings_file_stays_crlf(env: Env) -> None:
    path = env.project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b'\xef\xbb\xbf{\r\n  "model": "x"\r\n}\r\n')
    result = _install(env, "claude-code")
    data = path.read_bytes()
    assert result.written and data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\n") == data.count(b"\r\n") > 3  # every line CRLF, none turned LF
    assert "\r" not in result.diff and '+  "hooks": {' in result.diff
    assert _install(env, "claude-code").unchanged


def test_a_symlink_loop_is_refused_with_a_message(env: Env) -> None:
    path = env.project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.symlink_to(path.name)
    r = _cli("hooks", "install", "--client", "claude-code")
    assert r.exit_code == 4 and "Traceback" not in r.output
    assert "nothing was written" in r.output + (r.stderr or "")


def test_a_read_only_settings_file_is_refused_not_replaced(env: Env) -> None:
    path = env.project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "x"}\n')
    path.chmod(0o444)
    with pytest.raises(Refused, match="read-only"):
        _install(env, "claude-code")
    assert path.read_text() == '{"model": "x"}\n'
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


def test_the_sweep_of_old_sessions_keeps_their_lock_files(env: Env) -> None:
    from memdir.hooks.sessions import Sessions

    sessions = Sessions(env.memdir_home)
    key = sessions.key("claude-code", "old")
    with sessions.update(key) as state:
        state["x"] = 1
    with sessions.pass_lock(key):
        pass
    folder = env.memdir_home / "hooks" / "sessions"
    month_ago = time.time() - 40 * 86400
    for path in folder.iterdir():
        os.utime(path, (month_ago, month_ago))
    sessions.sweep()
    left = sorted(p.name for p in folder.iterdir())
    assert left == sorted([f"{key}.json.lock", f"{key}.extract.lock"])
