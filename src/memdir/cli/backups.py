"""CLI commands about backups: list the latest fifty, restore one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, fmt_ms, print_columns

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
    rows = [
        (
            r.id,
            r.note_id or "?",
            fmt_ms(r.created_at),
            r.reason or "(legacy)",
            str(r.origin or "?"),
        )
        for r in records
    ]
    print_columns(("backup", "note", "time", "reason", "from"), rows, flexible=(3, 4))


@backups.command()
@click.argument("backup_id", metavar="BACKUP_ID|NOTE_ID")
@json_option
def restore(backup_id: str, as_json: bool) -> None:
    """Put a backup back in the directory it came from.

    Give a backup id (see `memdir backups`), or a note's id or a unique prefix of it to
    restore that note's latest backup; an argument that is both is taken as a backup id.
    """
    result = _memory().backups.restore(backup_id)
    if as_json:
        emit_json(result)
        return
    console.print(
        f"restored {result.note.id} from backup {result.backup_id} to {result.note.path}",
        markup=False,
    )
    if result.replaced_backup:
        console.print(
            f"  the version it replaced is backup {result.replaced_backup.id}", markup=False
        )
