"""Every CLI command and option has help text (the CLI reference is generated from it)."""

from __future__ import annotations

import click
import pytest

from memdir.cli.main import main


def _walk(command: click.Command, path: tuple[str, ...]) -> list[tuple[str, click.Command]]:
    found = [(" ".join(path), command)]
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            found.extend(_walk(sub, (*path, name)))
    return found


COMMANDS = _walk(main, ("memdir",))


def test_the_walk_finds_every_command() -> None:
    names = {name for name, _ in COMMANDS}
    expected = {"remember", "read", "list", "search", "history", "diff", "links", "forget"}
    expected |= {"backups", "backups restore", "doctor", "audit", "audit verify", "demo"}
    assert {f"memdir {n}" for n in expected} <= names


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[name for name, _ in COMMANDS])
def test_command_has_help(name: str, command: click.Command) -> None:
    assert (command.help or "").strip(), f"{name} has no help text"
    assert command.get_short_help_str().strip(), f"{name} has no short help"


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[name for name, _ in COMMANDS])
def test_every_option_has_help(name: str, command: click.Command) -> None:
    missing = [
        param.name
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()
    ]
    assert not missing, f"{name}: options without help: {missing}"
