"""`memdir audit verify`: check the audit log's hash chain."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from memdir.cli.errors import Outcome
from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json
from memdir.errors import EXIT_INTEGRITY

if TYPE_CHECKING:
    from memdir import Memory

__all__ = ["audit"]


@click.group()
def audit() -> None:
    """The append-only, hash-chained audit log."""


@audit.command()
@json_option
def verify(as_json: bool) -> Outcome | None:
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
    return None if report.ok else Outcome(EXIT_INTEGRITY)
