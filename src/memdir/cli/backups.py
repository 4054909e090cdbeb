"""CLI commands about backups: list the latest fifty, restore one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape

from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, fmt_ms

if TYPE_CHECKING:
    from memdir import Memory

__all__ = ["backups"]


def _memory() -> Memory:
    memory: Memory = click.get_current_context().obj.memory()
    return memory


@click.group(invoke_without_command=True)
@json_option
@click.pass_context
def backups(ctx: click.Context, as_json: bool) -> None:
    """List the latest fifty backups (or restore one: `memdir backups restore ID`)."""
    if ctx.invoked_subcommand is not None:
        return
    records = _memory().backups()
    if as_json:
        emit_json(records)
        return
    if not records:
        console.print("no backups")
        return
    from rich.table import Table

    table = Table()
    for col in ("backup", "note", "time", "reason", "from"):
        table.add_column(col, overflow="fold")
    for r in records:
        table.add_row(
            escape(r.id),
            escape(r.note_id or "?"),
            fmt_ms(r.created_at),
            escape(r.reason or "(legacy)"),
            escape(str(r.origin or "?")),
        )
    console.print(table)


@backups.command()
@click.argument("backup_id", metavar="BACKUP_ID")
@json_option
def restore(backup_id: str, as_json: bool) -> None:
    """Put a backup back in the directory it came from."""
    result = _memory().restore(backup_id)
    if as_json:
        emit_json(result)
        return
    console.print(f"restored {result.note.id} to {result.note.path}", markup=False)
    if result.replaced_backup:
        console.print(
            f"  the version it replaced is backup {result.replaced_backup.id}", markup=False
        )
