"""CLI commands that move notes in and out (§5): `memdir import` and `memdir export`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, progress_bar
from memdir.core.vocab import ExportFormat, ImportKind, Scope, choices

if TYPE_CHECKING:
    from memdir import Memory
    from memdir.memory.importing import ImportReport

__all__ = ["export", "import_notes"]

_KINDS = click.Choice(choices(ImportKind))
_SCOPES = click.Choice(choices(Scope))
_SHOWN = 20  # refusals and problems listed before "and N more"


def _memory() -> Memory:
    memory: Memory = click.get_current_context().obj.memory()
    return memory


@click.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--from",
    "kind",
    type=_KINDS,
    default=None,
    help="The kind of source (default: detected).",
)
@click.option(
    "--scope", type=_SCOPES, default=None, help="Put every note here (default: by its type)."
)
@click.option("--dry-run", is_flag=True, help="Show what would be imported; write nothing.")
@json_option
def import_notes(
    path: Path, kind: str | None, scope: str | None, dry_run: bool, as_json: bool
) -> None:
    """Import the memory of another system: Claude Code, Codex, basic-memory, the MCP memory
    server, mem0, a Markdown folder or a memdir export."""
    memory = _memory()
    with progress_bar(not as_json and not dry_run) as progress:
        report = memory.importer.run(path, kind, scope=scope, dry_run=dry_run, progress=progress)
    if as_json:
        emit_json(report)
        return
    _show_import(report)


def _show_import(report: ImportReport) -> None:
    verb = "would import" if report.dry_run else "imported"
    console.print(
        f"{verb} {report.imported}, {'would update' if report.dry_run else 'updated'} "
        f"{report.updated}, unchanged {report.unchanged} ({report.kind} from {report.source})",
        markup=False,
    )
    if report.by_scope:
        scopes = ", ".join(f"{k} {v}" for k, v in sorted(report.by_scope.items()))
        types = ", ".join(f"{k} {v}" for k, v in sorted(report.by_type.items()))
        console.print(f"  by scope: {scopes}; by type: {types}", markup=False)
    if report.updated_notes:
        shown = ", ".join(report.updated_notes[:_SHOWN])
        console.print(f"  updated (old versions backed up): {shown}", markup=False)
    for title, issues in (("refused", report.refused), ("not read", report.problems)):
        if not issues:
            continue
        console.print(f"[yellow]{title}: {len(issues)}[/]")
        for issue in issues[:_SHOWN]:
            console.print(f"  {escape(issue.source)}: {escape(issue.reason)}")
        if len(issues) > _SHOWN:
            console.print(f"  … and {len(issues) - _SHOWN} more (--json lists all)")


@click.command()
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--scope", type=_SCOPES, default=None, help="Only this scope (default: both).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(choices(ExportFormat)),
    default=None,
    help="Archive or plain folder (default: from OUT's name; a name without suffix: folder).",
)
@json_option
def export(out: Path, scope: str | None, fmt: str | None, as_json: bool) -> None:
    """Write the notes to a tar.gz, a zip or a folder you can read anywhere (with an index;
    `memdir import OUT --from memdir` reads it back)."""
    report = _memory().exporter.run(out, scope=scope, format=fmt)
    if as_json:
        emit_json(report)
        return
    scopes = ", ".join(f"{k} {v}" for k, v in sorted(report.by_scope.items())) or "no notes"
    console.print(f"exported {report.notes} notes ({scopes}) to {report.path}", markup=False)
    if report.skipped:
        console.print(
            f"  left out, cannot be parsed (see memdir doctor): {', '.join(report.skipped)}",
            markup=False,
        )
