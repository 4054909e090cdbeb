"""The CLI reference: every command and option has help, and docs/cli.md is generated from it.

docs/cli.md is written by scripts/cli-docs from the click commands; `scripts/check` runs
``scripts/cli-docs --check`` and these tests fail too when the page is stale.
"""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from memdir.cli.group import LazyCommands
from memdir.cli.main import COMMANDS, main

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "cli-docs"
CLI_DOCS: dict[str, Any] = runpy.run_path(str(SCRIPT))


def _walk(command: click.Command, ctx: click.Context) -> list[tuple[str, click.Command]]:
    return [(sub_ctx.command_path, sub) for sub, sub_ctx in CLI_DOCS["walk"](command, ctx)]


COMMANDS_FOUND = _walk(main, CLI_DOCS["root_context"](main, "memdir"))
IDS = [name for name, _ in COMMANDS_FOUND]


def test_the_walk_finds_every_command() -> None:
    names = {name for name, _ in COMMANDS_FOUND}
    expected = {"remember", "read", "list", "search", "history", "diff", "links", "forget"}
    expected |= {"backups", "backups restore", "doctor", "audit", "audit verify", "demo"}
    expected |= {"sync", "sync resolve", "mcp serve", "server user add", "recall", "reindex"}
    assert {f"memdir {n}" for n in expected} <= names
    assert {f"memdir {n}" for n in COMMANDS} <= names


@pytest.mark.parametrize(("name", "command"), COMMANDS_FOUND, ids=IDS)
def test_command_has_help(name: str, command: click.Command) -> None:
    assert (command.help or "").strip(), f"{name} has no help text"
    assert command.get_short_help_str().strip(), f"{name} has no short help"


@pytest.mark.parametrize(("name", "command"), COMMANDS_FOUND, ids=IDS)
def test_every_option_has_help(name: str, command: click.Command) -> None:
    missing = [
        param.name
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()
    ]
    assert not missing, f"{name}: options without help: {missing}"


def test_the_reference_is_current() -> None:
    on_disk = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert CLI_DOCS["render"]() == on_disk, "docs/cli.md is stale: run scripts/cli-docs"


def test_the_reference_documents_every_command_and_option() -> None:
    page = CLI_DOCS["render"]()
    for name, command in COMMANDS_FOUND:
        assert f"# {name}\n" in page
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert f"`{param.opts[0]}" in page.split(f"# {name}\n", 1)[1], (name, param.name)


def test_a_command_without_help_fails_the_reference() -> None:
    @click.group()
    def tool() -> None:
        """A tool."""

    @tool.command()
    def undocumented() -> None:
        pass

    with pytest.raises(CLI_DOCS["MissingHelp"], match="tool undocumented"):
        CLI_DOCS["render"](tool, "tool")


def test_check_mode_fails_on_a_stale_page(tmp_path: Path) -> None:
    # The script itself, as scripts/check runs it: current page → 0.
    ok = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    # A copy of the script whose page is elsewhere and stale → 1, and the page is untouched.
    stale = tmp_path / "docs" / "cli.md"
    stale.parent.mkdir()
    stale.write_text("# old\n", encoding="utf-8")
    (tmp_path / "scripts").mkdir()
    copy = tmp_path / "scripts" / "cli-docs"
    copy.write_text(SCRIPT.read_text(encoding="utf-8"), encoding="utf-8")
    result = subprocess.run([sys.executable, str(copy), "--check"], capture_output=True, text=True)
    assert result.returncode == 1
    assert "stale" in result.stderr
    assert stale.read_text(encoding="utf-8") == "# old\n"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_registry_summaries_match_the_commands(name: str) -> None:
    # `memdir --help` lists commands from the registry without importing them: each
    # summary is the first paragraph of the command's own help, so the listing is the same.
    command = main.commands[name]
    first = " ".join((command.help or "").partition("\n\n")[0].split())
    assert COMMANDS[name].summary == first
    assert command.short_help is None
    assert isinstance(main.commands, LazyCommands)
    for limit in (30, 45, 60, 80, 200):
        assert main.commands.short_help(name, limit) == command.get_short_help_str(limit)


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys\n"
        "from memdir.cli.main import main\n"
        "try:\n"
        "    main(['--help'], prog_name='memdir')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('rich', 'numpy', 'httpx', 'pydantic', 'mcp', 'memdir.memory', 'memdir.core')\n"
        "loaded = [m for m in sys.modules if m.startswith('memdir.cli.') or m in heavy]\n"
        "print(sorted(loaded), file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "Commands:" in result.stdout
    loaded = ["memdir.cli.errors", "memdir.cli.group", "memdir.cli.main", "memdir.cli.options"]
    assert result.stderr.strip() == str(loaded)
