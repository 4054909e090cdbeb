"""`memdir mcp install`: client config snippets, printed or merged (with a backup)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli.main import main
from memdir.errors import Refused
from memdir.mcp.install import CLIENTS, install


@pytest.mark.parametrize("client", CLIENTS)
def test_snippet_runs_memdir_mcp_serve(client: str, tmp_path: Path) -> None:
    result = install(client, project=tmp_path, user_home=tmp_path / "u", command="memdir")
    assert not result.written and not result.path.exists()
    if client == "codex":
        entry = tomllib.loads(result.snippet)["mcp_servers"]["memdir"]
    else:
        entry = json.loads(result.snippet)["mcpServers"]["memdir"]
    assert entry["command"] == "memdir" and entry["args"][-2:] == ["mcp", "serve"]


def test_json_merge_keeps_entries_and_backs_up(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "keep": 1}))
    result = install("claude-code", project=tmp_path, write=True, command="memdir")
    assert result.written and result.path == path and result.backup is not None
    doc = json.loads(path.read_text())
    assert doc["keep"] == 1 and doc["mcpServers"]["other"] == {"command": "x"}
    assert doc["mcpServers"]["memdir"]["args"] == ["mcp", "serve"]
    assert json.loads(result.backup.read_text())["mcpServers"] == {"other": {"command": "x"}}
    again = install("claude-code", project=tmp_path, write=True, command="memdir")
    assert again.unchanged and not again.written


def test_desktop_config_names_the_project(tmp_path: Path) -> None:
    result = install(
        "claude-desktop",
        project=tmp_path,
        write=True,
        user_home=tmp_path,
        platform="darwin",
        command="memdir",
    )
    assert result.path == tmp_path / "Library/Application Support/Claude/claude_desktop_config.json"
    entry = json.loads(result.path.read_text())["mcpServers"]["memdir"]
    assert entry["args"] == ["--project", str(tmp_path), "mcp", "serve"]


def test_malformed_files_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / ".cursor" / "mcp.json"
    bad.parent.mkdir()
    bad.write_text("{not json")
    with pytest.raises(Refused):
        install("cursor", project=tmp_path, write=True)
    assert bad.read_text() == "{not json"
    toml = tmp_path / ".codex" / "config.toml"
    toml.parent.mkdir()
    toml.write_text("model = \n")
    with pytest.raises(Refused):
        install("codex", project=None, write=True, user_home=tmp_path)
    assert toml.read_text() == "model = \n"


def test_codex_toml_merge_replaces_only_its_table(tmp_path: Path) -> None:
    toml = tmp_path / ".codex" / "config.toml"
    toml.parent.mkdir()
    toml.write_text(
        'model = "o3"\n\n[mcp_servers.memdir]\ncommand = "old"\nargs = []\n\n'
        '[mcp_servers.other]\ncommand = "x"\n'
    )
    result = install("codex", project=None, write=True, user_home=tmp_path, command="memdir")
    doc = tomllib.loads(toml.read_text())
    assert doc["model"] == "o3" and doc["mcp_servers"]["other"] == {"command": "x"}
    assert doc["mcp_servers"]["memdir"] == {"command": "memdir", "args": ["mcp", "serve"]}
    assert result.backup is not None and "old" in result.backup.read_text()


def test_cli_install(tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["--project", str(tmp_path), "--home", str(tmp_path / "h"), "mcp", "install"]
    r = runner.invoke(main, [*base, "--client", "cursor"])
    assert r.exit_code == 0 and '"mcpServers"' in r.output
    assert not (tmp_path / ".cursor").exists()
    r = runner.invoke(main, [*base, "--client", "cursor", "--write", "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["written"]
    (tmp_path / ".mcp.json").write_text("[")
    r = runner.invoke(main, [*base, "--client", "claude-code", "--write"])
    assert r.exit_code == 4
