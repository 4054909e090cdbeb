"""CLI commands of the tidy-up list (§6): list findings, dismiss one, merge notes (at once,
or through a plan file a person can edit before applying it)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from memdir.cli.errors import ErrorWithDetails, Outcome, confirmation_needed
from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, progress_bar
from memdir.core.vocab import DraftKind, FindingKind, Scope, choices
from memdir.errors import EXIT_ERROR, DiskError, InvalidInput

if TYPE_CHECKING:
    from memdir import Memory, MergePlan, MergeResult

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
@click.option(
    "--confirm-with-llm",
    "confirm",
    is_flag=True,
    help="Have the [llm] model check each contradiction; those it rejects are left out.",
)
@json_option
@click.pass_context
def tidy(
    ctx: click.Context, kinds: tuple[str, ...], scope: str | None, confirm: bool, as_json: bool
) -> None:
    """List what needs tidying: same topic, broken links, missing files, unused, too long,
    contradictions (then: dismiss, merge, apply, auto)."""
    if ctx.invoked_subcommand is not None:
        return
    memory = _memory()
    with progress_bar(not as_json) as progress:  # the first tidy embeds notes
        findings = memory.tidy.findings(
            kinds or None, scope, confirm_with_llm=confirm, progress=progress
        )
    if as_json:
        emit_json(findings)  # each: id, kind, scope, notes, reason, hashes
        return
    if not findings:
        console.print("nothing to tidy")
        return
    for f in findings:
        console.print(f"[bold]{escape(f.id)}[/] ({f.scope.value}) {escape(f.reason)}")
        console.print(f"  notes: {escape(', '.join(f.notes))}")
        if f.confirmation is not None:
            says = f": {f.model_says}" if f.model_says else ""
            console.print(f"  the model: {f.confirmation}{says}", markup=False)
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
    result = _memory().tidy.dismiss(finding_id)
    if as_json:
        emit_json(result)
        return
    if result.changed:
        console.print(f"dismissed {finding_id}", markup=False)
    else:
        console.print(f"{finding_id} was dismissed already", markup=False)


#: Lines of the draft's body shown before asking to confirm.
_PREVIEW_LINES = 12
#: A plan file larger than this is refused unread (a body is at most memory.maxNoteBytes).
_MAX_PLAN_BYTES = 16 << 20


@tidy.command()
@click.argument("note_ids", metavar="ID ID...", nargs=-1, required=True)
@click.option(
    "--draft",
    type=click.Choice(choices(DraftKind)),
    default=DraftKind.CONCAT.value,
    show_default=True,
    help="Draft from all originals concatenated, or written by the [llm] model.",
)
@click.option("--summary", default=None, help="The merged note's summary (default: the oldest's).")
@click.option(
    "--body-file",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    default=None,
    help="The merged note's body from this file ('-': stdin) instead of the draft's.",
)
@click.option("--scope", type=_SCOPES, default=None, help="The notes' scope (default: found).")
@click.option(
    "--plan-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the plan (ids, hashes, draft) to this file and change nothing.",
)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (for scripts).")
@json_option
def merge(
    note_ids: tuple[str, ...],
    draft: str,
    summary: str | None,
    body_file: Path | None,
    scope: str | None,
    plan_out: Path | None,
    yes: bool,
    as_json: bool,
) -> Outcome | None:
    """Merge notes of one scope into the oldest: its id is kept, the others are deleted and
    links to them point at it; every changed note is backed up (asks first unless --yes)."""
    body = _read_body(body_file) if body_file is not None else None
    memory = _memory()
    plan = memory.merges.plan(note_ids, draft=draft, summary=summary, body=body, scope=scope)
    if plan_out is not None:
        _write_plan(plan, plan_out)
        if as_json:
            emit_json({"plan": plan, "plan_file": str(plan_out)})
        else:
            _show_plan(plan)
            console.print(
                f"plan written to {plan_out}; nothing was changed. Edit its draft if you "
                f"like, then run: memdir tidy apply {plan_out}",
                markup=False,
            )
        return None
    return _confirm_and_apply(memory, plan, yes, as_json)


@tidy.command()
@click.argument("plan_file", metavar="PLAN.json", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (for scripts).")
@json_option
def apply(plan_file: Path, yes: bool, as_json: bool) -> Outcome | None:
    """Apply a merge plan written by `memdir tidy merge --plan-out`; refused, with nothing
    changed, if any of its notes changed since it was written."""
    from memdir import MergePlan

    memory = _memory()  # config errors first, as every command
    plan = MergePlan.from_json(_read_json(plan_file))
    return _confirm_and_apply(memory, plan, yes, as_json)


def _confirm_and_apply(memory: Memory, plan: MergePlan, yes: bool, as_json: bool) -> Outcome | None:
    if not as_json:
        _show_plan(plan)
    if not yes:
        if as_json or not sys.stdin.isatty():
            # The plan in the form `tidy apply` reads back (save it, edit it, apply it).
            raise ErrorWithDetails(
                confirmation_needed("merge", as_json=as_json),
                plan=_redacted(plan).to_json(),
                confirmed=False,
            )
        if not click.confirm(f"Merge these {len(plan.notes)} notes?", default=False):
            console.print("nothing was merged")
            return Outcome(EXIT_ERROR)
    result = memory.merges.apply(plan)
    if as_json:
        emit_json(result)
    else:
        _show_result(result)
    return None


def _redacted(plan: MergePlan) -> MergePlan:
    """The plan with any credential in its draft redacted: a hand-edited plan is checked
    by the guard only when it is applied, and nothing shown may repeat a credential."""
    from memdir.guard import redact

    draft = plan.draft
    shown = replace(
        draft,
        summary=redact(draft.summary),
        body=redact(draft.body),
        tags=tuple(redact(t) for t in draft.tags),
    )
    return replace(plan, draft=shown)


def _show_plan(plan: MergePlan) -> None:
    draft = _redacted(plan).draft
    console.print(
        f"merge {len(plan.notes)} notes ({plan.scope.value}) into [bold]{escape(plan.keep)}[/] "
        f"(the oldest); deletes {escape(', '.join(plan.deletes))}"
    )
    console.print(f"  draft ({plan.source}): {draft.summary}", markup=False)
    if draft.tags:
        console.print(f"  tags: {', '.join(draft.tags)}", markup=False)
    lines = draft.body.splitlines()
    for line in lines[:_PREVIEW_LINES]:
        console.print(f"  │ {line}", markup=False, highlight=False)
    if len(lines) > _PREVIEW_LINES:
        console.print(f"  │ … {len(lines) - _PREVIEW_LINES} more lines", markup=False)
    for warning in plan.warnings:
        console.print(f"  [yellow]warning:[/] {escape(warning)}")


def _show_result(result: MergeResult) -> None:
    console.print(f"merged into {result.kept}; deleted {', '.join(result.deleted)}", markup=False)
    if result.relinked:
        console.print(f"  links rewritten in {', '.join(result.relinked)}", markup=False)
    if result.version is not None:
        console.print(f"  committed to the sync server first (version {result.version})")
    if result.skipped:
        console.print(
            f"  edited here meanwhile, kept as edited (the next sync merges them): "
            f"{', '.join(result.skipped)}",
            markup=False,
        )
    console.print(
        f"  {len(result.backup_ids)} backups made (undo one with `memdir backups restore ID`)",
        markup=False,
    )


def _read_body(path: Path) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text") from None
    except FileNotFoundError:
        raise InvalidInput(f"no file {path}") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None


def _read_json(path: Path) -> object:
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_PLAN_BYTES + 1)
    except FileNotFoundError:
        raise InvalidInput(f"no plan file {path}") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > _MAX_PLAN_BYTES:
        raise InvalidInput(f"{path} is too large to be a merge plan")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise InvalidInput(f"{path} is not a JSON merge plan (it does not parse)") from None


def _write_plan(plan: MergePlan, path: Path) -> None:
    from memdir.files.atomic import atomic_write

    text = json.dumps(plan.to_json(), ensure_ascii=False, indent=2) + "\n"
    try:
        atomic_write(path, text.encode("utf-8"), mode=0o600)
    except OSError as exc:
        raise DiskError(f"cannot write the plan to {path}: {exc.strerror or exc}") from exc


@tidy.command()
@click.option(
    "--now",
    "force",
    is_flag=True,
    help="Run a pass over every scope now, even if none is due or the pass is switched off.",
)
@json_option
def auto(force: bool, as_json: bool) -> None:
    """Run the automatic consolidation pass (merge same-topic notes) if it is due; long-lived
    hosts run it on their own when memory.consolidate.auto is on."""
    from memdir.cli.output import fmt_ms

    report = _memory().consolidation.run(force=force)
    if as_json:
        emit_json(report)
        return
    if not report.ran:
        console.print(f"no pass ran: {report.reason}", markup=False)
        return
    for result in report.merged:
        console.print(
            f"merged {', '.join(result.deleted)} into {result.kept} "
            f"({len(result.backup_ids)} backups)",
            markup=False,
        )
    for finding_id, why in report.skipped:
        console.print(f"left {finding_id}: {why}", markup=False)
    merges = len(report.merged)
    console.print(
        f"{merges} merge{'s' if merges != 1 else ''} in "
        f"{', '.join(s.value for s in report.scopes)}"
        + (f"; next pass due {fmt_ms(report.next_due)}" if report.next_due else ""),
        markup=False,
    )
