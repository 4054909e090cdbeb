"""`memdir doctor [--deep]`: unparseable files (never modified), dangling links, limits,
damaged search indexes, warnings; `--deep` also verifies every stored object."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape

from memdir.cli.errors import Outcome
from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json
from memdir.errors import EXIT_ERROR, EXIT_INTEGRITY

if TYPE_CHECKING:
    from memdir import Memory

__all__ = ["doctor"]


@click.command()
@click.option(
    "--deep",
    is_flag=True,
    help="Also verify every history object and backup against its recorded hash, the audit "
    "log's chain, and that each search index holds exactly what the files hold (slower).",
)
@json_option
def doctor(deep: bool, as_json: bool) -> Outcome | None:
    """Check the note directories; exit 1 when something needs attention.

    The search indexes are checked too (a damaged one is rebuilt from the files and
    reported). With --deep, stored data that fails verification exits 7."""
    memory: Memory = click.get_current_context().obj.memory()
    report = memory.upkeep.doctor(deep=deep)
    if as_json:
        emit_json(report)
    else:
        for scope, path in report.directories.items():
            console.print(f"{scope}: {report.counts.get(scope, 0)} notes in {escape(path)}")
        for p in report.problems:
            console.print(
                f"[red]skipped[/] {escape(str(p.path))}: {escape(p.reason)} (left untouched)"
            )
        for source, target in report.dangling:
            console.print(f"[yellow]dangling link[/] {source} → {escape(f'[[{target}]]')}")
        for leftover in report.leftovers:
            console.print(
                f"[yellow]interrupted write left[/] {escape(str(leftover))} (safe to delete)"
            )
        for finding in report.index:
            console.print(f"[yellow]{escape(finding)}[/]")
        for problem in report.integrity:
            console.print(f"[red]fails verification[/] {escape(problem)}")
        if report.cleaned:
            console.print(f"removed {report.cleaned} temp files left by interrupted writes")
        for warning in report.warnings:
            console.print(f"[yellow]warning[/] {escape(warning)}")
        if report.ok:
            verified = " (history, backups, audit log and indexes verified)" if deep else ""
            console.print(f"[green]all notes are healthy[/]{verified}")
    if report.integrity:
        return Outcome(EXIT_INTEGRITY)
    return None if report.ok else Outcome(EXIT_ERROR)
