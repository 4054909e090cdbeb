"""CLI commands that move notes in and out (§5): `memdir import` and `memdir export`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from memdir.cli.errors import Outcome
from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, progress_bar
from memdir.core.vocab import ExportFormat, ImportKind, Scope, choices
from memdir.errors import EXIT_REFUSED

if TYPE_CHECKING:
    from memdir import Memory
    from memdir.memory.importing import ImportReport, NoteDecision

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
@click.option(
    "--dry-run", is_flag=True, help="Show what would be imported and each decision; write nothing."
)
@click.option(
    "--overwrite",
    is_flag=True,
    help="Let the imported version replace a local note that is newer or differs "
    "(each replaced note backed up first).",
)
@json_option
def import_notes(
    path: Path,
    kind: str | None,
    scope: str | None,
    dry_run: bool,
    overwrite: bool,
    as_json: bool,
) -> Outcome | None:
    """Import the memory of another system: Claude Code, Codex, basic-memory, the MCP memory
    server, mem0, a Markdown folder, a memdir export or note folder.

    A memdir note folder is another project's MEMORY/ (or the project holding it): give
    --from memdir; its notes keep their ids.

    An item whose note exists here (the same id, or the same source imported before) and
    differs from it never silently replaces it. If only the source changed since it was
    imported, or the import is newer (a later updatedAt), the note is updated and its old
    version backed up. If the local note is newer (it changed here since, or the import
    holds an earlier version of it), it is kept: "kept local". If which is newer cannot be
    told (both changed, the same updatedAt, or no time in the source), both are kept: the
    imported version becomes a new note beside the local one, as sync's "keep both" does:
    "kept both". Every decision is listed (--json: "decisions"); --dry-run shows them
    first; --overwrite replaces instead, with a backup.

    Exit codes: 0 done; 4 some items were refused (the credential guard, a limit: the rest
    is imported and the report lists them).
    """
    memory = _memory()
    with progress_bar(not as_json and not dry_run) as progress:
        report = memory.importer.run(
            path, kind, scope=scope, dry_run=dry_run, overwrite=overwrite, progress=progress
        )
    if as_json:
        emit_json(report)
    else:
        _show_import(report)
    return Outcome(EXIT_REFUSED) if report.refused else None


def _show_import(report: ImportReport) -> None:
    verb = "would import" if report.dry_run else "imported"
    counts = f"{verb} {report.imported}, {'would update' if report.dry_run else 'updated'} "
    counts += f"{report.updated}, unchanged {report.unchanged}"
    for label, number in (
        ("kept local", report.kept_local),
        ("kept both", report.kept_both),
        ("refused", len(report.refused)),
    ):
        counts += f", {label} {number}" if number else ""
    console.print(f"{counts} ({report.kind} from {report.source})", markup=False)
    if report.by_scope:
        scopes = ", ".join(f"{k} {v}" for k, v in sorted(report.by_scope.items()))
        types = ", ".join(f"{k} {v}" for k, v in sorted(report.by_type.items()))
        console.print(f"  by scope: {scopes}; by type: {types}", markup=False)
    if report.updated_notes:
        shown = ", ".join(report.updated_notes[:_SHOWN])
        console.print(f"  updated (old versions backed up): {shown}", markup=False)
    _show_decisions(report.decisions)
    for title, issues in (("refused", report.refused), ("not read", report.problems)):
        if not issues:
            continue
        console.print(f"[yellow]{title}: {len(issues)}[/]")
        for issue in issues[:_SHOWN]:
            console.print(f"  {escape(issue.source)}: {escape(issue.reason)}")
        if len(issues) > _SHOWN:
            console.print(f"  … and {len(issues) - _SHOWN} more (--json lists all)")


def _show_decisions(decisions: tuple[NoteDecision, ...]) -> None:
    """The local notes an import did not simply update, by decision, each with why."""
    from memdir.memory.importing import Decision

    for decision, title in (
        (Decision.KEPT_LOCAL, "kept local (newer)"),
        (Decision.KEPT_BOTH, "kept both (imported version as a new note)"),
        (Decision.OVERWRITTEN, "overwritten (--overwrite; old versions backed up)"),
    ):
        mine = [d for d in decisions if d.decision is decision]
        if not mine:
            continue
        console.print(f"[yellow]{title}: {len(mine)}[/]")
        for d in mine[:_SHOWN]:
            beside = f" → {d.new_id}" if d.new_id is not None else ""
            console.print(f"  {d.id}{beside}: {d.reason}", markup=False)
        if len(mine) > _SHOWN:
            console.print(f"  … and {len(mine) - _SHOWN} more (--json lists all)")


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
