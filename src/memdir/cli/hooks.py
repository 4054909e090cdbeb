"""CLI commands for agent hooks (§11): `hook EVENT` (what clients run) and `hooks
install|check` (set a client up, then prove it works)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click
from rich.markup import escape

from memdir.cli.errors import Outcome
from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json
from memdir.errors import EXIT_ERROR

if TYPE_CHECKING:
    from memdir.clients.hooks import HookCheck

__all__ = ["hook", "hooks_group"]

P = ParamSpec("P")
R = TypeVar("R")

_HOOK_CLIENTS = ("claude-code", "codex", "gemini", "cursor")


@click.command(context_settings={"ignore_unknown_options": True})
@click.option(
    "--client",
    type=click.Choice(_HOOK_CLIENTS),
    default=None,
    help="The client whose hook this is (default: told from its input).",
)
@click.argument("event")
def hook(client: str | None, event: str) -> None:
    """Answer an agent client's hook: its JSON on stdin, its output on stdout.

    EVENT is the client's own event name (SessionStart, UserPromptSubmit, PreCompact,
    Stop, SessionEnd; Gemini CLI's BeforeAgent and AfterAgent; Cursor's sessionStart, …).
    Always exits 0 and prints nothing on failure, which leaves one line in
    $MEMDIR_HOME/logs/hooks.log: a hook never blocks or breaks the agent.
    """
    from memdir.hooks.entry import home_of, run

    app = click.get_current_context().obj
    home = home_of(str(app.home) if app.home else None, os.environ)
    run(home, client, event)


@click.group(name="hooks")
def hooks_group() -> None:
    """Memory that arrives by itself: hooks for Claude Code, Codex, Gemini CLI and Cursor."""


def _client_options(func: Callable[P, R]) -> Callable[P, R]:
    """--client and --scope, as install and check take them."""
    func = click.option(
        "--scope",
        type=click.Choice(("project", "user")),
        default="project",
        show_default=True,
        help="The project's hook file (committed, no machine path) or the user's.",
    )(func)
    return click.option(
        "--client", type=click.Choice(_HOOK_CLIENTS), required=True, help="The client."
    )(func)


def _project() -> Path | None:
    from memdir.cli.mcp import _install_project

    return _install_project()


@hooks_group.command()
@_client_options
@click.option(
    "--dry-run", is_flag=True, help="Show the diff that would be written; change nothing."
)
@click.option(
    "--command",
    default=None,
    metavar="CMD",
    help="The command to write instead of `memdir` (project) or this memdir's path (user).",
)
@json_option
def install(client: str, scope: str, dry_run: bool, command: str | None, as_json: bool) -> None:
    """Merge memdir's hooks into the client's hook file (the original backed up).

    Other hooks and keys are kept; a second install changes nothing. Prints the approval
    or trust step the client will ask for before it runs them.
    """
    from memdir.clients.hooks import install_hooks
    from memdir.clients.install import explicit_home

    app = click.get_current_context().obj
    result = install_hooks(
        client,
        project=_project(),
        scope=scope,
        dry_run=dry_run,
        command=command,
        memdir_home=explicit_home(app.home),
    )
    if as_json:
        emit_json(result)
        return
    where = f"{result.path} ({result.scope})"
    if result.unchanged:
        console.print(f"{where} already runs memdir's hooks; nothing changed", markup=False)
    elif result.dry_run:
        console.print(f"would write {where}:", markup=False)
        click.echo(result.diff, nl=False)
    else:
        console.print(f"wrote {where}: {', '.join(result.events)}", markup=False)
        if result.backup:
            console.print(f"  original backed up to {result.backup}", markup=False)
    for note in result.notes:
        console.print(f"  note: {note}", markup=False)
    if not result.dry_run:
        console.print(
            f"  check it with `memdir hooks check --client {result.client}`", markup=False
        )


@hooks_group.command()
@_client_options
@json_option
def check(client: str, scope: str, as_json: bool) -> Outcome | None:
    """Read the client's hook file, run memdir's first hook as the client would, and report
    any approval or trust step still pending (exit 1 unless it all works)."""
    from memdir.clients.hooks import check_hooks

    report = check_hooks(client, project=_project(), scope=scope)
    if as_json:
        emit_json({**_public(report), "ok": report.ok})
        return None if report.ok else Outcome(EXIT_ERROR)
    console.print(f"{report.path} ({report.scope})", markup=False)
    if report.events:
        console.print(f"  [green]ok[/] hooks for {', '.join(report.events)}")
    if report.output:
        console.print("  [green]ok[/] the first hook ran and answered with the memory index")
    for step in report.approvals:
        style = "green" if step.state == "approved" else "yellow"
        console.print(f"  [{style}]{step.state}[/] {escape(step.what)}: {escape(step.detail)}")
    if report.problem:
        console.print(f"  [red]broken[/]: {escape(report.problem)}")
    elif report.status == "pending":
        console.print(
            f"[yellow]memdir's hooks are installed; {client} still asks for a step above[/]"
        )
    else:
        console.print(f"[green]memdir's hooks work in {client}[/]")
    return None if report.ok else Outcome(EXIT_ERROR)


def _public(report: HookCheck) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(report)


@hooks_group.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("memdir-claude-plugin"),
    show_default=True,
    help="The folder to write (a plugin marketplace holding the memdir plugin).",
)
@click.option(
    "--command", default="memdir", show_default=True, metavar="CMD", help="The command to run."
)
@click.option("--force", is_flag=True, help="Replace files there that differ.")
@json_option
def plugin(out: Path, command: str, force: bool, as_json: bool) -> None:
    """Write a Claude Code plugin (hooks and MCP server) to install from a local folder.

    Then: `claude plugin marketplace add OUT` and `claude plugin install memdir@memdir`.
    """
    from memdir._version import __version__
    from memdir.clients.hooks import write_plugin

    written = write_plugin(out, __version__, command=command, force=force)
    if as_json:
        emit_json({"path": out, "files": written})
        return
    console.print(f"wrote the memdir plugin to {out}", markup=False)
    console.print(
        f"  install it: `claude plugin marketplace add {out}` then "
        "`claude plugin install memdir@memdir`",
        markup=False,
    )
