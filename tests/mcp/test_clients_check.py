"""`memdir mcp check`: a real server started from each kind of config, and every failure named."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp_helpers import memdir_command

from memdir.cli.main import main
from memdir.clients.check import PROBLEMS, CheckReport, check
from memdir.clients.install import install

BIN = str(Path(sys.executable).parent)

FAKE_SERVER = """\
import sys
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

app = MCPServer("fake")

if sys.argv[1] == "error":
    @app.tool()
    def memory_search(query: str, limit: int = 10) -> str:
        raise ToolError("the index is broken")
else:
    @app.tool()
    def something_else() -> str:
        return "x"

app.run()
"""


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path, Path]]:
    """(project, user home, memdir home) with HOME and MEMDIR_HOME pointing at tmp_path."""
    project, home, memdir_home = tmp_path / "proj", tmp_path / "home", tmp_path / "mh"
    for folder in (project, home, memdir_home):
        folder.mkdir()
    (project / ".git").mkdir()
    (memdir_home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMDIR_HOME", str(memdir_home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("PATH", BIN + os.pathsep + os.environ.get("PATH", ""))
    yield project, home, memdir_home


def _check(
    client: str,
    project: Path,
    home: Path,
    *,
    timeout: float = 30.0,
    environ: dict[str, str] | None = None,
) -> CheckReport:
    return check(
        client, project=project, user_home=home, platform="linux", timeout=timeout, environ=environ
    )


def _write(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def _desktop(home: Path) -> Path:
    return home / ".config/Claude/claude_desktop_config.json"


@pytest.mark.parametrize("client", ["claude-desktop", "codex", "vscode", "zed"])
def test_installed_config_starts_a_working_server(
    client: str, setup: tuple[Path, Path, Path]
) -> None:
    project, home, memdir_home = setup
    install(
        client,
        project=project,
        user_home=home,
        platform="linux",
        command=memdir_command()[0] if client in ("claude-desktop", "codex", "zed") else None,
        memdir_home=memdir_home,
    )
    report = _check(client, project, home)
    assert report.ok, (report.problem, report.detail, report.stderr)
    assert report.passed == (
        "config",
        "entry",
        "command",
        "initialize",
        "list_tools",
        "memory_search",
    )
    assert "memory_search" in report.tools and report.protocol_version
    assert "--project" in report.command
    assert str(project) in report.command  # ${workspaceFolder} filled in
    if client == "vscode":
        assert report.cwd == project
        assert any("MEMDIR_HOME" in w for w in report.warnings)
    else:
        assert report.warnings == ()


def test_codex_gets_only_its_forwarded_environment(setup: tuple[Path, Path, Path]) -> None:
    project, home, _ = setup
    toml = home / ".codex" / "config.toml"
    toml.parent.mkdir()
    script = home / "env.py"
    script.write_text(
        "import os, sys; sys.stderr.write('|'.join(sorted(os.environ))); sys.exit(1)\n"
    )
    toml.write_text(
        f"[mcp_servers.memdir]\ncommand = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(str(script))}]\nenv = {{ EXTRA = "1" }}\n'
    )
    report = _check("codex", project, home)
    assert report.problem == "server_exited"
    names = set(report.stderr.split("|"))
    assert "EXTRA" in names and "PATH" in names and "MEMDIR_HOME" not in names
    assert tomllib.loads(toml.read_text())  # the config was only read


def _problem(report: CheckReport) -> str:
    assert not report.ok
    problem = report.problem
    assert problem in PROBLEMS and report.detail
    return str(problem)


def test_missing_and_broken_configs(setup: tuple[Path, Path, Path]) -> None:
    project, home, _ = setup
    assert _problem(_check("claude-desktop", project, home)) == "config_missing"
    _desktop(home).parent.mkdir(parents=True)
    _desktop(home).write_text("{broken")
    report = _check("claude-desktop", project, home)
    assert _problem(report) == "config_invalid" and "line 1" in report.detail
    _write(_desktop(home), {"mcpServers": {"other": {"command": "x"}}})
    report = _check("claude-desktop", project, home)
    assert _problem(report) == "entry_missing" and "other" in report.detail
    _write(_desktop(home), {"mcpServers": {"memdir": {"url": "http://127.0.0.1:1/mcp"}}})
    assert _problem(_check("claude-desktop", project, home)) == "entry_invalid"
    _write(_desktop(home), {"mcpServers": {"memdir": {"command": "memdir", "args": "mcp serve"}}})
    assert _problem(_check("claude-desktop", project, home)) == "entry_invalid"


def test_command_not_on_the_clients_path(setup: tuple[Path, Path, Path]) -> None:
    project, home, _ = setup
    install("cursor", project=project, user_home=home)
    empty = home / "bin"
    empty.mkdir()
    report = _check("cursor", project, home, environ={"PATH": str(empty), "HOME": str(home)})
    assert _problem(report) == "command_not_found"
    assert "pipx install memdir" in report.detail


@pytest.mark.parametrize(
    ("code", "problem", "stderr"),
    [
        (
            "import sys; sys.stderr.write('boom: cannot open\\n'); sys.exit(3)",
            "server_exited",
            "boom",
        ),
        ("print('not a protocol message')", "handshake_failed", ""),
    ],
)
def test_server_that_dies_or_speaks_nonsense(
    code: str, problem: str, stderr: str, setup: tuple[Path, Path, Path]
) -> None:
    project, home, _ = setup
    _write(
        _desktop(home),
        {"mcpServers": {"memdir": {"command": sys.executable, "args": ["-c", code]}}},
    )
    report = _check("claude-desktop", project, home, timeout=20)
    assert _problem(report) == problem, report.detail
    assert stderr in report.stderr
    assert report.passed == ("config", "entry", "command")


def test_server_that_never_answers(setup: tuple[Path, Path, Path]) -> None:
    project, home, _ = setup
    code = "import time; time.sleep(60)"
    _write(
        _desktop(home),
        {"mcpServers": {"memdir": {"command": sys.executable, "args": ["-c", code]}}},
    )
    report = _check("claude-desktop", project, home, timeout=2)
    assert _problem(report) == "timeout" and "initialize" in report.detail


@pytest.mark.parametrize(
    ("mode", "problem"), [("missing", "tool_missing"), ("error", "tool_error")]
)
def test_tool_missing_or_failing(mode: str, problem: str, setup: tuple[Path, Path, Path]) -> None:
    project, home, _ = setup
    script = home / "fake_server.py"
    script.write_text(FAKE_SERVER)
    _write(
        _desktop(home),
        {"mcpServers": {"memdir": {"command": sys.executable, "args": [str(script), mode]}}},
    )
    report = _check("claude-desktop", project, home, timeout=30)
    assert _problem(report) == problem, (report.detail, report.stderr)
    if problem == "tool_error":
        assert "the index is broken" in report.detail
        assert report.passed[-2:] == ("initialize", "list_tools")


def test_cli_check_exit_codes_and_json(setup: tuple[Path, Path, Path]) -> None:
    project, home, memdir_home = setup
    runner = CliRunner()
    base = ["--project", str(project), "mcp", "check", "--client", "claude-desktop"]
    r = runner.invoke(main, [*base, "--json"])
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert json.loads(r.output)["problem"] == "config_missing"
    r = runner.invoke(main, base)
    assert r.exit_code == 1 and "config_missing" in r.output
    install(
        "claude-desktop",
        project=project,
        user_home=home,
        platform="linux",
        command=memdir_command()[0],
        memdir_home=memdir_home,
    )
    r = runner.invoke(main, base)
    assert r.exit_code == 0, r.output
    assert "memdir works in claude-desktop" in r.output and "ok memory_search" in r.output
