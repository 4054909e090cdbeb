"""`memdir audit verify` and `memdir audit head`: check the audit log, print its signed head."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from memdir.cli.errors import Outcome
from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, fmt_ms
from memdir.errors import EXIT_INTEGRITY

if TYPE_CHECKING:
    from memdir import Memory

__all__ = ["audit"]


@click.group()
def audit() -> None:
    """The append-only, hash-chained audit log.

    Its head is signed by this machine's key (see docs/audit.md).
    """


@audit.command()
@click.option(
    "--against",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A head saved earlier (`memdir audit head --json`): also detect a rollback past it.",
)
@json_option
def verify(against: Path | None, as_json: bool) -> Outcome | None:
    """Detect edited, removed, reordered or truncated entries and a rewritten head (exit 7).

    The head's signature is checked against this machine's key. A head written before heads
    were signed is reported as unsigned: a warning, not a failure (the next write signs it).
    A rollback to an older, consistent copy of the log is only detected --against a head
    kept elsewhere.
    """
    memory: Memory = click.get_current_context().obj.memory()
    report = memory.audit.verify(against)
    if as_json:
        emit_json(report)
    elif report.ok:
        signed = {"signed": "signed", "unsigned": "unsigned", "absent": "no head yet"}
        console.print(
            f"audit log intact: {report.entries} entries, head {report.head_hash[:12]} "
            f"({signed.get(report.signature, report.signature)})"
        )
        if against is not None:
            console.print(f"consistent with the saved head in {against}", markup=False)
    else:
        console.print(f"[red]audit log is damaged[/] ({report.entries} entries read):")
        for problem in report.problems:
            console.print(f"  {problem}", markup=False)
    if not as_json:
        for warning in report.warnings:
            console.print(f"[yellow]warning:[/] {warning}")
    return None if report.ok else Outcome(EXIT_INTEGRITY)


@audit.command()
@json_option
def head(as_json: bool) -> None:
    """Print the signed head (seq, hash, time, key, signature) to keep somewhere else.

    Save it with `memdir audit head --json > FILE`, off this machine or where memdir
    cannot write; `memdir audit verify --against FILE` later detects a log rolled back
    past it or a head signed by another key. Exit 7 when the head does not verify.
    """
    memory: Memory = click.get_current_context().obj.memory()
    current = memory.audit.head()
    if as_json:
        emit_json(current)
        return
    console.print(f"seq        {current.seq}", markup=False)
    console.print(f"hash       {current.hash}", markup=False)
    if current.ts is None or current.key is None or current.sig is None:
        console.print("[yellow]unsigned[/] (written before memdir signed audit heads)")
        return
    console.print(f"time       {fmt_ms(current.ts)}", markup=False)
    console.print(f"key        {current.key} (id {current.key_id})", markup=False)
    console.print(f"signature  {current.sig}", markup=False)
