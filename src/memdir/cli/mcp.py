"""CLI commands for the MCP server: serve, grant, grants, revoke; install, check, bundle."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import click
from rich.markup import escape

from memdir.cli.errors import Outcome
from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, fmt_ms
from memdir.clients import grants as grant_api
from memdir.clients.install import SERVER_NAME
from memdir.clients.specs import CLIENTS, SCOPES
from memdir.errors import EXIT_ERROR

if TYPE_CHECKING:
    from memdir import Memory

__all__ = ["mcp_group"]

P = ParamSpec("P")
R = TypeVar("R")


def _memory() -> Memory:
    app = click.get_current_context().obj
    memory: Memory = app.memory()
    return memory


@click.group(name="mcp")
def mcp_group() -> None:
    """The MCP server for agents: serve it, grant access, set up clients."""


@mcp_group.command()
@click.option(
    "--grant-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help=(
        "Run with the access of this capability grant (from `memdir mcp grant`). With "
        "--http the server serves only this grant: a request with another grant's token "
        "is refused (401)."
    ),
)
@click.option(
    "--http",
    "address",
    default=None,
    metavar="127.0.0.1:PORT",
    help=(
        "Serve streamable HTTP on this loopback address (every request needs a grant's "
        "token: any usable grant, or only --grant-file's)."
    ),
)
def serve(grant_file: Path | None, address: str | None) -> None:
    """Serve memdir over MCP (stdio by default; stdout carries the protocol)."""
    # The MCP SDK is imported only here, after the handshake: it costs ~0.5 s.
    from memdir.mcp.serving import serve as serve_mcp

    serve_mcp(_memory(), grant_file=grant_file, http=address)


@mcp_group.command()
@click.option(
    "--minutes",
    type=click.IntRange(grant_api.MIN_MINUTES, grant_api.MAX_MINUTES),
    required=True,
    help="Lifetime of the grant, 1 to 60 minutes.",
)
@click.option("--write", is_flag=True, help="Allow writing notes.")
@click.option("--delete", is_flag=True, help="Allow deleting notes (with confirm) and writing.")
@click.option(
    "--state",
    type=click.Choice(grant_api.STATE_ACCESS),
    default=None,
    help="Open the agent state store's tools: read, or read_write (default: none).",
)
@click.option(
    "--scope",
    type=click.Choice(grant_api.GRANT_SCOPES),
    default="both",
    show_default=True,
    help="Which notes the grant covers.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Write the capability (bearer token) to this file, mode 0600.",
)
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@json_option
def grant(
    minutes: int,
    write: bool,
    delete: bool,
    state: str | None,
    scope: str,
    out: Path,
    force: bool,
    as_json: bool,
) -> None:
    """Issue a capability grant; the token goes to --out only, never to the terminal."""
    issued = grant_api.issue_grant(
        _memory(),
        minutes=minutes,
        write=write,
        delete=delete,
        state=state,
        scope=scope,
        out=out,
        force=force,
    )
    if as_json:
        emit_json({**issued.public(), "file": str(out)})
        return
    console.print(
        f"grant [bold]{issued.id}[/] ({issued.access}, scope {issued.scope}"
        + (f", state {issued.state}" if issued.state else "")
        + ") "
        f"until {fmt_ms(issued.expires_at)}"
    )
    console.print(f"  capability written to {out} (mode 0600)", markup=False)
    console.print(f"  revoke with `memdir mcp revoke {issued.id}`", markup=False)


@mcp_group.command(name="grants")
@json_option
def list_grants(as_json: bool) -> None:
    """List grants: id, access, scope, expiry, revoked (tokens are never stored)."""
    records = grant_api.list_grants(_memory())
    if as_json:
        emit_json([g.public() for g in records])
        return
    if not records:
        console.print("no grants")
        return
    from rich.table import Table

    table = Table()
    for col in ("id", "access", "scope", "expires", "revoked"):
        table.add_column(col)
    for g in records:
        revoked = fmt_ms(g.revoked_at) if g.revoked_at is not None else ""
        table.add_row(g.id, g.access, g.scope, fmt_ms(g.expires_at), revoked)
    console.print(table)


@mcp_group.command()
@click.argument("grant_id", metavar="ID")
@json_option
def revoke(grant_id: str, as_json: bool) -> None:
    """Revoke a grant; the next MCP call that uses it is refused."""
    revoked = grant_api.revoke_grant(_memory(), grant_id)
    if as_json:
        emit_json(revoked.public())
    else:
        console.print(f"revoked {revoked.id}")


def _install_project() -> Path | None:
    """The project to name in a client config, without opening (or creating) anything.

    An explicit --project always counts; otherwise the project containing the current
    folder, but only when it really is one (a git work tree or a memdir project), so a
    user-level config is never pinned to whatever folder the command ran in.
    """
    from memdir.project import PROJECT_FILE, find_project_root

    app = click.get_current_context().obj
    if app.project is not None:
        return Path(app.project).resolve()
    root = find_project_root(Path.cwd())
    if root is not None and ((root / ".git").exists() or (root / PROJECT_FILE).is_file()):
        return root
    return None


def _scope_option(func: Callable[P, R]) -> Callable[P, R]:
    return click.option(
        "--scope",
        type=click.Choice(SCOPES),
        default=None,
        help="Project file (committed, no machine paths) or user file; default: the "
        "client's usual one (see docs/clients.md).",
    )(func)


def _name_option(func: Callable[P, R]) -> Callable[P, R]:
    return click.option(
        "--name",
        default=SERVER_NAME,
        show_default=True,
        help="The server's name in the client's config (another name adds another project).",
    )(func)


@mcp_group.command()
@click.option("--client", type=click.Choice(CLIENTS), required=True, help="The MCP client.")
@_scope_option
@click.option(
    "--dry-run", is_flag=True, help="Show what would be written (a diff) and change nothing."
)
@_name_option
@click.option(
    "--command",
    "command",
    default=None,
    metavar="CMD",
    help="The command to write instead of `memdir` (project files) or this memdir's "
    "absolute path (user files).",
)
@click.option(
    "--write-home",
    is_flag=True,
    help="Also write MEMDIR_HOME into a project file (it is a machine path; user files "
    "always get it when it is set).",
)
@click.option("--write", "legacy_write", is_flag=True, hidden=True)
@json_option
def install(
    client: str,
    scope: str | None,
    dry_run: bool,
    name: str,
    command: str | None,
    write_home: bool,
    legacy_write: bool,
    as_json: bool,
) -> None:
    """Add memdir to an MCP client's config file (merged, the original backed up).

    Other keys and servers are kept, comments too; a second install changes nothing.
    Project files (Claude Code, Cursor, VS Code, Gemini CLI) name the command `memdir`
    and no machine path; user files name this memdir's absolute path and --project.
    """
    from memdir.clients.install import explicit_home
    from memdir.clients.install import install as install_client

    app = click.get_current_context().obj
    result = install_client(
        client,
        project=_install_project(),
        scope=scope,
        dry_run=dry_run,
        name=name,
        command=command,
        memdir_home=explicit_home(app.home),
        write_home=write_home,
    )
    if as_json:
        emit_json(result)
        return
    where = f"{result.path} ({result.scope})"
    if result.unchanged:
        console.print(
            f"{where} already runs memdir as {result.name!r}; nothing changed", markup=False
        )
    elif result.dry_run:
        console.print(f"would write {where}:", markup=False)
        click.echo(result.diff, nl=False)
    else:
        console.print(f"wrote {where}", markup=False)
        if result.backup:
            console.print(f"  original backed up to {result.backup}", markup=False)
    for note in result.notes:
        console.print(f"  note: {note}", markup=False)
    if not result.dry_run:
        console.print(f"  check it with `memdir mcp check --client {result.client}`", markup=False)


@mcp_group.command()
@click.option("--client", type=click.Choice(CLIENTS), required=True, help="The MCP client.")
@_scope_option
@_name_option
@click.option(
    "--timeout",
    type=click.FloatRange(1, 600),
    default=30.0,
    show_default=True,
    help="Seconds to wait for the server to start, answer and search.",
)
@json_option
def check(
    client: str, scope: str | None, name: str, timeout: float, as_json: bool
) -> Outcome | None:
    """Start memdir as the client's config says and report what would fail (exit 1 if anything).

    Reads the client's file, finds the entry, runs its command with its arguments,
    environment and folder over stdio, then initializes, lists the tools and searches once.
    """
    from memdir.clients.check import check as check_client

    report = check_client(
        client, project=_install_project(), scope=scope, name=name, timeout=timeout
    )
    if as_json:
        emit_json(report)
    else:
        console.print(f"{report.path} ({report.scope}), entry {report.name!r}", markup=False)
        if report.command:
            console.print(f"  runs: {shlex.join(report.command)}", markup=False)
            console.print(f"  in:   {report.cwd}", markup=False)
        for step in report.passed:
            console.print(f"  [green]ok[/] {step}")
        for warning in report.warnings:
            console.print(f"  warning: {warning}", markup=False, style="yellow")
        for waiting in report.pending:
            console.print(
                f"  [yellow]{waiting.state}[/] {escape(waiting.what)}: {escape(waiting.detail)}"
            )
        if report.ok and report.pending:
            console.print(
                f"[yellow]memdir's server starts and answers, but {client} will not run it "
                "until the step above is done[/]"
            )
        elif report.ok:
            tools = len(report.tools)
            console.print(
                f"[green]memdir works in {client}[/] ({tools} tools, protocol "
                f"{escape(report.protocol_version or '?')})"
            )
        else:
            console.print(f"  [red]{report.problem}[/]: {escape(report.detail)}")
            if report.stderr:
                console.print("  server stderr:", markup=False)
                for line in report.stderr.splitlines():
                    console.print(f"    {line}", markup=False)
    return None if report.ok and not report.pending else Outcome(EXIT_ERROR)


@mcp_group.command()
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("memdir.mcpb"),
    show_default=True,
    help="The bundle to write (a zip with manifest.json).",
)
@click.option(
    "--python",
    default=None,
    metavar="PATH",
    help="The interpreter memdir is installed in (default: the one running this command).",
)
@click.option(
    "--server-json",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the MCP registry's server.json here.",
)
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@json_option
def bundle(
    out: Path, python: str | None, server_json: Path | None, force: bool, as_json: bool
) -> None:
    """Write a Claude Desktop bundle (.mcpb) that runs this memdir; open it to install.

    The bundle names this machine's Python (memdir's compiled dependencies are not
    bundled), so build it where it will be used; Claude Desktop asks for the project
    folder when installing it.
    """
    from memdir.clients.bundle import server_json as registry_entry
    from memdir.clients.bundle import write_bundle
    from memdir.mcp.tools import TOOL_NAMES  # imports the MCP SDK: only when bundling

    result = write_bundle(out, tools=TOOL_NAMES, python=python, force=force)
    if server_json is not None:
        server_json.write_text(
            json.dumps(registry_entry(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    if as_json:
        emit_json(
            {
                "path": result.path,
                "python": result.python,
                "files": result.files,
                "server_json": server_json,
            }
        )
        return
    console.print(f"wrote {result.path} (runs memdir with {result.python})", markup=False)
    if server_json is not None:
        console.print(f"wrote {server_json}", markup=False)
