"""`memdir audit verify`: check the audit log's hash chain."""

from __future__ import annotations

import sys

import click

from memdir.cli.output import console, emit_json, json_option, run
from memdir.errors import EXIT_INTEGRITY
from memdir.memory import Memory

__all__ = ["register"]


@click.group()
def audit() -> None:
    """The append-only, hash-chained audit log."""


@audit.command()
@json_option
@run
def verify(as_json: bool) -> None:
    """Detect edited, removed, reordered or truncated entries (exit 7 when broken)."""
    memory: Memory = click.get_current_context().obj.memory()
    report = memory.audit_verify()
    if as_json:
        emit_json(report)
    elif report.ok:
        console.print(f"audit log intact: {report.entries} entries, head {report.head_hash[:12]}")
    else:
        console.print(f"[red]audit log is damaged[/] ({report.entries} entries read):")
        for problem in report.problems:
            console.print(f"  {problem}", markup=False)
    if not report.ok:
        sys.exit(EXIT_INTEGRITY)


def register(group: click.Group) -> None:
    """Add this module's commands to the CLI."""
    group.add_command(audit)
