"""The CLI's one error map: every memdir error and outcome to its message and exit code."""

from __future__ import annotations

import ast
import json
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

import memdir
import memdir.cli
from memdir.cli.errors import ErrorWithDetails, Outcome, render_hint
from memdir.cli.group import MemdirGroup
from memdir.cli.main import AppContext, main
from memdir.cli.options import json_option
from memdir.errors import ConfigError, MemdirError, NotFound, Remedy, exit_code_for

Invoke = Callable[..., Result]


def _subclasses(cls: type[MemdirError]) -> Iterator[type[MemdirError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


# Every public name loaded first, so errors defined outside memdir.errors are found too.
for _name in memdir.__all__:
    getattr(memdir, _name)
ERRORS = sorted({MemdirError, *_subclasses(MemdirError)}, key=lambda cls: cls.__name__)


def _tool(raised: BaseException | None = None, outcome: Outcome | None = None) -> click.Group:
    """A small group like `memdir`'s: `tool run [--json]` and `tool sub run [--json]`."""

    @click.group(cls=MemdirGroup)
    def tool() -> None:
        """A tool."""

    @click.group()
    @json_option
    def sub(as_json: bool) -> None:
        """A nested group."""

    def body(as_json: bool) -> Outcome | None:
        if raised is not None:
            raise raised
        click.echo("done")
        return outcome

    tool.command(name="run")(json_option(body))
    sub.command(name="run")(json_option(body))
    tool.add_command(sub)
    return tool


def _invoke(group: click.Group, *args: str) -> Any:
    return CliRunner().invoke(group, list(args), catch_exceptions=False)


@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: cls.__name__)
def test_every_error_maps_to_its_exit_code_and_message(cls: type[MemdirError]) -> None:
    error = cls("it went wrong")
    code = exit_code_for(error)
    assert code == cls.exit_code
    human = _invoke(_tool(error), "run")
    assert human.exit_code == code
    assert human.stdout == ""
    assert human.stderr == "error: it went wrong\n"
    for args in (("run", "--json"), ("sub", "run", "--json")):
        as_json = _invoke(_tool(error), *args)
        assert as_json.exit_code == code
        assert as_json.stderr == ""
        assert json.loads(as_json.stdout) == {
            "error": {"type": cls.__name__, "message": "it went wrong", "exitCode": code}
        }


def test_the_innermost_json_flag_decides() -> None:
    # `--json` on the group but not on the failing subcommand: the subcommand's form.
    result = _invoke(_tool(NotFound("no note x")), "sub", "--json", "run")
    assert result.exit_code == 3
    assert result.stderr == "error: no note x\n"
    assert result.stdout == ""


@pytest.mark.parametrize("hint", list(Remedy), ids=lambda hint: hint.name)
def test_every_remedy_is_rendered_in_both_forms(hint: Remedy) -> None:
    text = render_hint(hint)
    assert text.strip() and text == text.strip()
    assert hint is Remedy.UPGRADE or "`memdir " in text
    error = NotFound("no such thing", hint=hint)
    human = _invoke(_tool(error), "run")
    assert human.exit_code == 3
    assert human.stderr == f"error: no such thing ({text})\n"
    as_json = _invoke(_tool(error), "run", "--json")
    assert json.loads(as_json.stdout) == {
        "error": {"type": "NotFound", "message": "no such thing", "exitCode": 3, "hint": text}
    }


def test_remedies_read_as_the_cli_says_them() -> None:
    assert render_hint(Remedy.SYNC_LOGIN) == "run `memdir sync login --server URL`"
    assert render_hint(Remedy.SYNC_ON) == "turn it on with `memdir sync on`"
    assert render_hint(Remedy.SYNC_NOW) == "run `memdir sync` and try again"
    assert len({render_hint(hint) for hint in Remedy}) == len(Remedy)


@pytest.mark.parametrize("code", [0, 1, 4, 5, 7])
def test_an_outcome_carries_its_exit_code(code: int) -> None:
    for args in (("run",), ("sub", "run"), ("run", "--json")):
        result = _invoke(_tool(outcome=Outcome(code)), *args)
        assert result.exit_code == code
        assert result.stdout == "done\n"
        assert result.stderr == ""


def test_error_with_details_adds_fields_to_the_json_document() -> None:
    error = ErrorWithDetails(ConfigError("needs --yes"), plan={"id": "a"}, confirmed=False)
    as_json = _invoke(_tool(error), "run", "--json")
    assert as_json.exit_code == 2
    assert json.loads(as_json.stdout) == {
        "error": {"type": "ConfigError", "message": "needs --yes", "exitCode": 2},
        "plan": {"id": "a"},
        "confirmed": False,
    }
    human = _invoke(_tool(error), "run")
    assert (human.exit_code, human.stdout, human.stderr) == (2, "", "error: needs --yes\n")


def test_other_exceptions_are_not_swallowed() -> None:
    with pytest.raises(ValueError, match="a bug"):
        _invoke(_tool(ValueError("a bug")), "run")


# --- the real command tree ------------------------------------------------------------------


def _leaves(
    command: click.Command, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    if isinstance(command, click.Group):
        if any(p.name == "as_json" for p in command.params):
            yield path, command  # a group that runs on its own (`memdir sync`, `backups`)
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None
            yield from _leaves(sub, (*path, name))
    else:
        yield path, command


def _argv(command: click.Command, tmp: Path) -> list[str]:
    """Arguments that get a command past click's parsing to its body."""
    argv: list[str] = []
    for param in command.params:
        if isinstance(param, click.Argument) and param.required:
            argv.append(str(param.type.choices[0]) if isinstance(param.type, click.Choice) else "x")
        elif isinstance(param, click.Option) and param.required:
            if isinstance(param.type, click.Choice):
                value = str(param.type.choices[0])
            elif isinstance(param.type, click.IntRange):
                value = str(param.type.min or 1)
            else:
                value = str(tmp / param.name) if param.name else "x"
            argv += [param.opts[0], value]
    return argv


# Commands that never open the project's Memory: the sync server's and the demo's own, and
# the MCP client tools that read or write a client's config or a bundle (they work while
# memdir's own config is broken: that is when one checks a setup).
# Commands that open no project Memory (the state store lives in the memdir home).
NO_MEMORY = {
    ("demo",),
    ("server",),
    ("state",),
    ("mcp", "bundle"),
    ("mcp", "check"),
    ("mcp", "install"),
    # A hook answers an agent client: it never fails (exit 0, one log line) and opens
    # memory its own way; hooks install/check/plugin touch the clients' files only.
    ("hook",),
    ("hooks",),
}
LEAVES = [
    (path, command)
    for path, command in _leaves(main, ())
    if not any(path[: len(prefix)] == prefix for prefix in NO_MEMORY)
]


@pytest.mark.parametrize(
    ("path", "command"), LEAVES, ids=[" ".join(path) or "memdir" for path, _ in LEAVES]
)
def test_every_command_reports_errors_in_the_form_asked(
    path: tuple[str, ...],
    command: click.Command,
    cli: Invoke,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(self: AppContext) -> Any:
        raise ConfigError("bad config", hint=Remedy.DOCTOR)

    monkeypatch.setattr(AppContext, "memory", broken)
    monkeypatch.chdir(tmp_path)  # whatever a command writes by default lands here
    argv = [*path, *_argv(command, tmp_path)]
    human = cli(*argv)
    assert human.exit_code == 2, human.output
    assert human.stderr == "error: bad config (see `memdir doctor`)\n"
    if not any(p.name == "as_json" for p in command.params):
        return
    as_json = cli(*argv, "--json")
    assert as_json.exit_code == 2, as_json.output
    assert json.loads(as_json.stdout) == {
        "error": {
            "type": "ConfigError",
            "message": "bad config",
            "exitCode": 2,
            "hint": "see `memdir doctor`",
        }
    }


def test_forget_declined_at_the_prompt_exits_1(
    cli: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("remember", "Keep me", "--id", "keep-me", "--body", "x").exit_code == 0
    terminal = types.SimpleNamespace(stdin=types.SimpleNamespace(isatty=lambda: True))
    monkeypatch.setattr("memdir.cli.notes.sys", terminal)
    declined = cli("forget", "keep-me", input="n\n")
    assert declined.exit_code == 1
    assert "nothing was removed" in declined.stdout
    assert (project / "MEMORY" / "keep-me.md").is_file()
    accepted = cli("forget", "keep-me", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert not (project / "MEMORY" / "keep-me.md").exists()


# --- no command chooses its own exit -------------------------------------------------------


def _exits(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in {"exit", "_exit"}:
            owner = ast.unparse(node.value)
            if owner in {"sys", "os"}:
                found.append(f"{path.name}:{node.lineno}: {owner}.{node.attr}")
        elif isinstance(node, ast.Name) and node.id in {"SystemExit", "exit", "quit"}:
            found.append(f"{path.name}:{node.lineno}: {node.id}")
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module in {"sys", "os"}
            and any(alias.name in {"exit", "_exit"} for alias in node.names)
        ):
            found.append(f"{path.name}:{node.lineno}: from {node.module} import exit")
    return found


def test_no_cli_module_calls_sys_exit() -> None:
    package = Path(memdir.cli.__file__).parent
    modules = sorted(package.glob("*.py"))
    assert len(modules) >= 10
    assert [hit for module in modules for hit in _exits(module)] == []
