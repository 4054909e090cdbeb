"""CLI commands of the tidy-up list (§6): list findings, dismiss one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape

from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json
from memdir.core.vocab import Scope, choices
from memdir.results import FindingKind

if TYPE_CHECKING:
    from memdir import Memory

__all__ = ["tidy"]

_KINDS = click.Choice(choices(FindingKind))
_SCOPES = click.Choice(choices(Scope))


def _memory() -> Memory:
    memory: Memory = click.get_current_context().obj.memory()
    return memory


@click.group(invoke_without_command=True)
@click.option(
    "--kind",
    "kinds",
    type=_KINDS,
    multiple=True,
    help="Only findings of this kind (repeat for several; default: all).",
)
@click.option("--scope", type=_SCOPES, default=None, help="Only this scope (default: both).")
@json_option
@click.pass_context
def tidy(ctx: click.Context, kinds: tuple[str, ...], scope: str | None, as_json: bool) -> None:
    """List what needs tidying: same topic, broken links, missing files, unused, too long,
    contradictions (dismiss one: `memdir tidy dismiss ID`)."""
    if ctx.invoked_subcommand is not None:
        return
    findings = _memory().tidy(kinds or None, scope)
    if as_json:
        emit_json(findings)  # each: id, kind, scope, notes, reason, hashes
        return
    if not findings:
        console.print("nothing to tidy")
        return
    for f in findings:
        console.print(f"[bold]{escape(f.id)}[/] ({f.scope.value}) {escape(f.reason)}")
        console.print(f"  notes: {escape(', '.join(f.notes))}")
    console.print(
        f"{len(findings)} finding{'s' if len(findings) != 1 else ''}; "
        "hide one with: memdir tidy dismiss ID",
        markup=False,
    )


@tidy.command()
@click.argument("finding_id", metavar="FINDING_ID")
@json_option
def dismiss(finding_id: str, as_json: bool) -> None:
    """Hide a finding on this machine until one of its notes is edited."""
    result = _memory().dismiss(finding_id)
    if as_json:
        emit_json(result)
        return
    if result.changed:
        console.print(f"dismissed {finding_id}", markup=False)
    else:
        console.print(f"{finding_id} was dismissed already", markup=False)
