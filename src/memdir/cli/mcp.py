"""CLI commands for the MCP server: serve, grant, grants, revoke, install."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, fmt_ms
from memdir.core.vocab import Scope, choices
from memdir.mcp import grants as grant_api
from memdir.mcp.install import CLIENTS

if TYPE_CHECKING:
    from memdir import Memory

__all__ = ["GRANT_SCOPES", "mcp_group"]

#: What a grant may cover: one scope, or both.
GRANT_SCOPES = (*choices(Scope), "both")


def _memory() -> Memory:
    app = click.get_current_context().obj
    memory: Memory = app.memory()
    return memory


def _project() -> Path | None:
    memory = _memory()
    return memory.settings.project_root


@click.group(name="mcp")
def mcp_group() -> None:
    """The MCP server for agents: serve it, grant access, set up clients."""


@mcp_group.command()
@click.option(
    "--grant-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Run with the access of this capability grant (from `memdir mcp grant`).",
)
@click.option(
    "--http",
    "address",
    default=None,
    metavar="127.0.0.1:PORT",
    help="Serve streamable HTTP on this loopback address (every request needs a grant's token).",
)
def serve(grant_file: Path | None, address: str | None) -> None:
    """Serve memdir over MCP (stdio by default; stdout carries the protocol)."""
    # The MCP SDK is imported only here: it would cost every other command ~0.5 s.
    from memdir.mcp.server import serve as serve_mcp

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
    "--scope",
    type=click.Choice(GRANT_SCOPES),
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
    minutes: int, write: bool, delete: bool, scope: str, out: Path, force: bool, as_json: bool
) -> None:
    """Issue a capability grant; the token goes to --out only, never to the terminal."""
    issued = grant_api.issue_grant(
        _memory(), minutes=minutes, write=write, delete=delete, scope=scope, out=out, force=force
    )
    if as_json:
        emit_json({**issued.public(), "file": str(out)})
        return
    console.print(
        f"grant [bold]{issued.id}[/] ({issued.access}, scope {issued.scope}) "
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


@mcp_group.command()
@click.option("--client", type=click.Choice(CLIENTS), required=True, help="The MCP client.")
@click.option(
    "--write", is_flag=True, help="Merge into the client's config file (the original is backed up)."
)
@json_option
def install(client: str, write: bool, as_json: bool) -> None:
    """Print (or merge with --write) the client config that runs `memdir mcp serve`."""
    from memdir.mcp.install import install as install_client

    result = install_client(client, project=_project(), write=write)
    if as_json:
        emit_json(result)
        return
    if not write:
        console.print(f"# add to {result.path}", markup=False)
        click.echo(result.snippet, nl=False)
    elif result.unchanged:
        console.print(f"{result.path} already runs memdir; nothing changed", markup=False)
    else:
        console.print(f"wrote {result.path}", markup=False)
        if result.backup:
            console.print(f"  original backed up to {result.backup}", markup=False)
