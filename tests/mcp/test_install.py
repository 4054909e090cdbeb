"""`memdir mcp install`: each client's file and shape, merging, backups, idempotence, paths."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memdir.cli.main import main
from memdir.clients import jsonc
from memdir.clients.install import install
from memdir.clients.specs import CLIENTS, client_spec
from memdir.errors import InvalidInput, Refused

PROJECT_FILES = {
    "claude-code": ".mcp.json",
    "cursor": ".cursor/mcp.json",
    "vscode": ".vscode/mcp.json",
    "gemini": ".gemini/settings.json",
}
USER_FILES = {
    "claude-desktop": ".config/Claude/claude_desktop_config.json",
    "cursor": ".cursor/mcp.json",
    "codex": ".codex/config.toml",
    "vscode": ".config/Code/User/mcp.json",
    "gemini": ".gemini/settings.json",
    "windsurf": ".codeium/windsurf/mcp_config.json",
    "zed": ".config/zed/settings.json",
}
KEYS = {"vscode": "servers", "zed": "context_servers", "codex": "mcp_servers"}


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """(project, user home): HOME points at a temporary folder, MEMDIR_HOME is unset."""
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (project / ".git").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("MEMDIR_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    yield project, home


def _environ(home: Path, **extra: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), **extra}


def _entry(client: str, path: Path, name: str = "memdir") -> Any:
    text = path.read_text(encoding="utf-8")
    if client == "codex":
        return tomllib.loads(text)["mcp_servers"][name]
    return jsonc.loads(text)[KEYS.get(client, "mcpServers")][name]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _run(client: str, project: Path, home: Path, **kwargs: Any) -> Any:
    kwargs.setdefault("environ", _environ(home))
    return install(client, project=project, user_home=home, platform="linux", **kwargs)


@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_gets_its_documented_file_and_shape(
    client: str, where: tuple[Path, Path]
) -> None:
    project, home = where
    result = _run(client, project, home, memdir_home=home / "mh")
    spec = client_spec(client)
    expected = (
        project / PROJECT_FILES[client] if result.scope == "project" else home / USER_FILES[client]
    )
    assert result.path == expected and result.written and expected.is_file()
    entry = _entry(client, expected)
    assert entry == result.entry
    assert entry["args"][-2:] == ["mcp", "serve"]
    assert ("type" in entry) == (client in ("claude-code", "vscode"))
    if "type" in entry:
        assert entry["type"] == "stdio"
    if result.scope == "project":
        assert entry["command"] == "memdir" and "env" not in entry
        if spec.workspace_var:
            assert entry["args"] == ["--project", "${workspaceFolder}", "mcp", "serve"]
        else:
            assert entry["args"] == ["mcp", "serve"]
    else:
        assert Path(entry["command"]).is_absolute()
        assert entry["args"][-4:] == ["--project", str(project), "mcp", "serve"]
        assert entry["env"] == {"MEMDIR_HOME": str(home / "mh")}
    # The snippet is the same entry in the file's format.
    if client == "codex":
        assert tomllib.loads(result.snippet)["mcp_servers"]["memdir"] == entry
    else:
        assert json.loads(result.snippet)[KEYS.get(client, "mcpServers")]["memdir"] == entry


@pytest.mark.parametrize("client", ["cursor", "vscode", "gemini"])
def test_user_scope_of_clients_with_both(client: str, where: tuple[Path, Path]) -> None:
    project, home = where
    result = _run(client, project, home, scope="user")
    assert result.path == home / USER_FILES[client]
    assert _entry(client, result.path)["args"] == ["--project", str(project), "mcp", "serve"]


def test_platform_paths(where: tuple[Path, Path]) -> None:
    project, home = where
    mac = install(
        "claude-desktop", project=project, user_home=home, platform="darwin", dry_run=True
    )
    assert mac.path == home / "Library/Application Support/Claude/claude_desktop_config.json"
    win = install(
        "claude-desktop",
        project=project,
        user_home=home,
        platform="win32",
        environ={"APPDATA": str(home / "Roaming")},
        dry_run=True,
    )
    assert win.path == home / "Roaming" / "Claude" / "claude_desktop_config.json"
    code = install(
        "vscode", project=project, user_home=home, platform="darwin", scope="user", dry_run=True
    )
    assert code.path == home / "Library/Application Support/Code/User/mcp.json"
    zed_mac = install("zed", project=project, user_home=home, platform="darwin", dry_run=True)
    assert zed_mac.path == home / ".config/zed/settings.json"
    codex = install(
        "codex",
        project=project,
        user_home=home,
        environ={"CODEX_HOME": str(home / "cx")},
        dry_run=True,
    )
    assert codex.path == home / "cx" / "config.toml"
    with pytest.raises(InvalidInput, match="no project-level config"):
        install("zed", project=project, user_home=home, scope="project")
    with pytest.raises(InvalidInput, match="--project"):
        install("claude-code", project=None, user_home=home)


@pytest.mark.parametrize("client", sorted(PROJECT_FILES))
def test_project_files_name_no_machine_path(
    client: str, where: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, home = where
    monkeypatch.setenv("MEMDIR_HOME", str(home / "mh"))
    result = _run(client, project, home, memdir_home=home / "mh")
    text = result.path.read_text(encoding="utf-8")
    for value in _strings(jsonc.loads(text)):
        assert not Path(value).is_absolute() and not value.startswith(("/", "\\"))
        assert ":\\" not in value
    for machine in (str(project), str(home), sys.prefix, str(Path(sys.executable).parent), ".venv"):
        assert machine not in text
    assert any("MEMDIR_HOME" in note and "--write-home" in note for note in result.notes)


def test_memdir_not_on_path_still_writes_memdir_and_says_how(where: tuple[Path, Path]) -> None:
    project, home = where
    empty = home / "empty-bin"
    empty.mkdir()
    result = _run("claude-code", project, home, environ={"PATH": str(empty)})
    assert _entry("claude-code", result.path)["command"] == "memdir"
    hint = " ".join(result.notes)
    assert "not on PATH" in hint and "pipx install memdir" in hint and "uv tool install" in hint


def test_memdir_home_rules(where: tuple[Path, Path]) -> None:
    project, home = where
    asked = _run("vscode", project, home, memdir_home=home / "mh", write_home=True)
    assert _entry("vscode", asked.path)["env"] == {"MEMDIR_HOME": str(home / "mh")}
    unset = _run("windsurf", project, home, memdir_home=None)
    assert "env" not in _entry("windsurf", unset.path)
    assert not any("MEMDIR_HOME" in n for n in unset.notes)


def test_merge_keeps_other_keys_and_servers_and_backs_up(where: tuple[Path, Path]) -> None:
    project, home = where
    path = project / ".mcp.json"
    original = json.dumps({"mcpServers": {"other": {"command": "x"}}, "keep": [1, 2]}, indent=4)
    path.write_text(original)
    result = _run("claude-code", project, home)
    assert result.written and result.backup is not None
    assert result.backup.read_text() == original
    assert result.backup.name.startswith(".mcp.json.bak-")
    assert project not in result.backup.parents  # never an untracked file in the repository
    doc = json.loads(path.read_text())
    assert doc["keep"] == [1, 2] and doc["mcpServers"]["other"] == {"command": "x"}
    assert path.read_text().startswith('{\n    "mcpServers": {\n        "other"')  # style kept


@pytest.mark.parametrize("client", CLIENTS)
def test_second_install_changes_nothing(client: str, where: tuple[Path, Path]) -> None:
    project, home = where
    first = _run(client, project, home, memdir_home=home / "mh")
    before = first.path.read_bytes()
    backups = sorted(first.path.parent.iterdir())
    again = _run(client, project, home, memdir_home=home / "mh")
    assert again.unchanged and not again.written and again.backup is None
    assert first.path.read_bytes() == before and sorted(first.path.parent.iterdir()) == backups


def test_changed_entry_is_replaced_with_a_backup_each_time(where: tuple[Path, Path]) -> None:
    project, home = where
    first = _run("windsurf", project, home)
    second = _run("windsurf", project, home, memdir_home=home / "mh")
    third = _run("windsurf", project, home)
    assert second.backup is not None and third.backup is not None
    assert second.backup != third.backup and first.backup is None
    assert "env" in json.loads(third.backup.read_text())["mcpServers"]["memdir"]
    assert "env" not in _entry("windsurf", third.path)


def test_dry_run_writes_nothing_and_shows_a_diff(where: tuple[Path, Path]) -> None:
    project, home = where
    result = _run("zed", project, home, dry_run=True)
    assert not result.written and not result.path.exists()
    assert result.dry_run and '+  "context_servers": {' in result.diff
    existing = home / USER_FILES["zed"]
    existing.parent.mkdir(parents=True)
    existing.write_text('// Zed settings\n{\n  "theme": "One Dark",\n}\n')
    shown = _run("zed", project, home, dry_run=True)
    assert existing.read_text() == '// Zed settings\n{\n  "theme": "One Dark",\n}\n'
    assert "--- " in shown.diff and '+    "memdir": {' in shown.diff


def test_jsonc_files_keep_their_comments(where: tuple[Path, Path]) -> None:
    project, home = where
    settings = home / USER_FILES["zed"]
    settings.parent.mkdir(parents=True)
    settings.write_text(
        "// Zed settings\n//\n// For information on how to configure Zed, see the docs.\n{\n"
        '  "ui_font_size": 16, // bigger\n'
        '  /* servers */ "context_servers": {\n'
        '    "other": {"command": "x", "args": []},\n'
        "  },\n}\n"
    )
    _run("zed", project, home)
    text = settings.read_text()
    assert "// For information on how to configure Zed" in text and "// bigger" in text
    assert "/* servers */" in text
    doc = jsonc.loads(text)
    assert doc["ui_font_size"] == 16 and doc["context_servers"]["other"]["command"] == "x"
    assert doc["context_servers"]["memdir"]["args"][-2:] == ["mcp", "serve"]


def test_symlinked_config_is_written_through_the_link(where: tuple[Path, Path]) -> None:
    project, home = where
    dotfiles = home / "dotfiles" / "mcp.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"mcpServers": {}}')
    link = home / USER_FILES["windsurf"]
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfiles)
    result = _run("windsurf", project, home)
    assert link.is_symlink() and "memdir" in json.loads(dotfiles.read_text())["mcpServers"]
    # The backup goes under the memdir home, never into the (often committed) dotfiles.
    assert result.backup is not None and result.backup.read_text() == '{"mcpServers": {}}'
    assert result.backup.parent.name == "client-configs" and list(dotfiles.parent.iterdir()) == [
        dotfiles
    ]


@pytest.mark.parametrize(
    ("client", "relative", "text"),
    [
        ("cursor", ".cursor/mcp.json", "{not json"),
        ("vscode", ".vscode/mcp.json", '{"servers": [1]}'),
        ("gemini", ".gemini/settings.json", "[1, 2]"),
        ("claude-code", ".mcp.json", '{"mcpServers": {"a": 1} /* open'),
    ],
)
def test_malformed_json_files_are_refused_untouched(
    client: str, relative: str, text: str, where: tuple[Path, Path]
) -> None:
    project, home = where
    bad = project / relative
    bad.parent.mkdir(exist_ok=True)
    bad.write_text(text)
    with pytest.raises(Refused, match="nothing was written"):
        _run(client, project, home)
    assert bad.read_text() == text and not list(bad.parent.glob("*.bak-*"))


def test_codex_toml_merge_replaces_only_its_table(where: tuple[Path, Path]) -> None:
    project, home = where
    toml = home / ".codex" / "config.toml"
    toml.parent.mkdir()
    toml.write_text(
        '# my settings\nmodel = "o3"\n\n[mcp_servers.memdir]\ncommand = "old"\nargs = []\n\n'
        '[mcp_servers.memdir.env]\nOLD = "1"\n\n[mcp_servers.other]\ncommand = "x"\n'
    )
    result = _run("codex", project, home, command="memdir", memdir_home=home / "mh")
    text = toml.read_text()
    doc = tomllib.loads(text)
    assert text.startswith("# my settings\n")
    assert doc["model"] == "o3" and doc["mcp_servers"]["other"] == {"command": "x"}
    assert doc["mcp_servers"]["memdir"] == {
        "command": "memdir",
        "args": ["--project", str(project), "mcp", "serve"],
        "env": {"MEMDIR_HOME": str(home / "mh")},
    }
    assert result.backup is not None and '"old"' in result.backup.read_text()
    assert _run("codex", project, home, command="memdir", memdir_home=home / "mh").unchanged


def test_codex_refuses_malformed_or_unmergeable_toml(where: tuple[Path, Path]) -> None:
    project, home = where
    toml = home / ".codex" / "config.toml"
    toml.parent.mkdir()
    toml.write_text("model = \n")
    with pytest.raises(Refused, match="not valid TOML"):
        _run("codex", project, home)
    inline = 'mcp_servers = { memdir = { command = "x" } }\n'
    toml.write_text(inline)
    with pytest.raises(Refused, match="safely"):
        _run("codex", project, home)
    assert toml.read_text() == inline


def test_other_server_names(where: tuple[Path, Path]) -> None:
    project, home = where
    _run("claude-desktop", project, home)
    second = _run("claude-desktop", project, home, name="memdir-other")
    servers = json.loads(second.path.read_text())["mcpServers"]
    assert set(servers) == {"memdir", "memdir-other"}
    with pytest.raises(InvalidInput):
        _run("claude-desktop", project, home, name="bad name")


def test_cli_install_and_json(where: tuple[Path, Path]) -> None:
    project, _ = where
    runner = CliRunner()
    base = ["--project", str(project), "mcp", "install"]
    r = runner.invoke(main, [*base, "--client", "cursor", "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "would write" in r.output and '"mcpServers"' in r.output
    assert not (project / ".cursor").exists()
    r = runner.invoke(main, [*base, "--client", "cursor", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["written"] and out["scope"] == "project" and out["path"].endswith("mcp.json")
    assert out["entry"]["command"] == "memdir" and out["notes"]
    r = runner.invoke(main, [*base, "--client", "cursor"])
    assert r.exit_code == 0 and "nothing changed" in r.output
    r = runner.invoke(main, [*base, "--client", "cursor", "--write"])  # the old flag still works
    assert r.exit_code == 0 and "nothing changed" in r.output
    (project / ".mcp.json").write_text("[")
    r = runner.invoke(main, [*base, "--client", "claude-code"])
    assert r.exit_code == 4 and "Traceback" not in r.output
    r = runner.invoke(main, [*base, "--client", "zed", "--scope", "project"])
    assert r.exit_code == 2


def test_cli_passes_home_option_to_user_files(where: tuple[Path, Path]) -> None:
    project, home = where
    runner = CliRunner()
    r = runner.invoke(
        main,
        [
            "--project",
            str(project),
            "--home",
            str(home / "mh"),
            "mcp",
            "install",
            "--client",
            "codex",
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    entry = tomllib.loads((home / ".codex/config.toml").read_text())["mcp_servers"]["memdir"]
    assert entry["env"] == {"MEMDIR_HOME": str((home / "mh").resolve())}
