"""`memdir doctor`: unparseable files (never modified), dangling links, limits, warnings."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape

from memdir.cli.errors import Outcome
from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json
from memdir.errors import EXIT_ERROR

if TYPE_CHECKING:
    from memdir import Memory

__all__ = ["doctor"]


@click.command()
@json_option
def doctor(as_json: bool) -> Outcome | None:
    """Check the note directories; exit 1 when something needs attention."""
    memory: Memory = click.get_current_context().obj.memory()
    report = memory.doctor()
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
        if report.cleaned:
            console.print(f"removed {report.cleaned} temp files left by interrupted writes")
        for warning in report.warnings:
            console.print(f"[yellow]warning[/] {escape(warning)}")
        if report.ok:
            console.print("[green]all notes are healthy[/]")
    return None if report.ok else Outcome(EXIT_ERROR)
