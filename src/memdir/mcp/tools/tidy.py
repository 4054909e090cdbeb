"""The tidy-up tools: `memory_tidy` (the findings) and `memory_merge` (plan, then apply).

Private notes are never shown over MCP: findings about them are left out, a merge refuses
them as "no note", and notes a merge touched that the caller may not see are not named.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from memdir import Memory, MergePlan, MergeResult
from memdir.core import AccessLevel
from memdir.core.merging import MAX_MERGED
from memdir.errors import Conflict, InvalidInput, NotFound
from memdir.mcp.models import FindingOut, MergeDraftOut, MergeOut, TidyOut
from memdir.mcp.tools.arguments import KindArg, ScopeArg, ValidId
from memdir.mcp.tools.record import DELETES, READS, Tool, caller
from memdir.mcp.tools.visibility import shown_note

__all__ = ["MERGE", "TIDY", "memory_merge", "memory_tidy"]


def memory_tidy(
    memory: Memory,
    kinds: Annotated[
        list[KindArg] | None, Field(description="only findings of these kinds (default: all)")
    ] = None,
    scope: Annotated[ScopeArg | None, Field(description="project or user notes")] = None,
) -> TidyOut:
    where = caller().scope_for(scope)
    # Private notes are never shown over MCP: findings about them are left out.
    findings = memory.tidy.findings(kinds or None, where, hide_private=True)
    hint = (
        "open the notes with memory_read; tell the user, who can merge, supersede "
        "(memory_write with supersedes) or dismiss (memdir tidy dismiss ID)"
        if findings
        else "nothing to tidy"
    )
    return TidyOut(findings=[FindingOut.of(f) for f in findings], hint=hint)


TIDY = Tool(
    "memory_tidy",
    memory_tidy,
    description=(
        "The tidy-up list of the memory notes: notes on the same topic, broken [[links]], "
        "paths to files that do not exist, notes unused for long, notes too long, and "
        "contradicting notes. Each finding has an id, its note ids and a one-line reason. "
        "Read-only: nothing is changed."
    ),
    annotations=READS,
    access=AccessLevel.READ,
)


def memory_merge(
    memory: Memory,
    ids: Annotated[
        list[ValidId],
        Field(
            min_length=2,
            max_length=MAX_MERGED,
            description=(
                f"The notes to merge (2-{MAX_MERGED}, one scope), e.g. a same_topic finding's."
            ),
        ),
    ],
    confirm: Annotated[
        bool,
        Field(
            description=(
                "false: only return the plan, nothing changes. true: merge, after the user "
                "agreed to this plan."
            )
        ),
    ] = False,
    summary: Annotated[
        str | None, Field(description="The merged note's summary (default: the oldest's).")
    ] = None,
    body: Annotated[
        str | None,
        Field(description="The merged note's body (default: every original's, joined)."),
    ] = None,
    scope: Annotated[ScopeArg | None, Field(description="default: project, then user")] = None,
    plan_token: Annotated[
        str | None,
        Field(
            description=(
                "With confirm: true, the plan_token of the plan the user agreed to (from "
                "the call without confirm); refused if the notes changed since."
            )
        ),
    ] = None,
) -> MergeOut:
    access = caller()
    access.require_delete_right("memory_merge")
    # Every note must be one this caller may read: a private note, or one outside the
    # grant, is "no note" here exactly as memory_read says (its existence is not told,
    # and its content never reaches the draft).
    shown = {(n.scope, n.id) for n in (shown_note(memory, i, access, scope) for i in ids)}
    plan = memory.merges.plan(
        ids, draft="concat", summary=summary, body=body, scope=access.scope_for(scope)
    )
    for planned in plan.notes:
        if (plan.scope, planned.id) not in shown:
            raise NotFound(f"no note {planned.id}")
    if plan.draft.private:  # only private originals make a private draft
        raise NotFound(f"no note {plan.keep}")
    token = plan.token
    if not confirm:
        return _merge_out(
            plan,
            None,
            "Nothing was changed: this is the plan. Show it to the user; to apply it, call "
            "memory_merge again with the same ids (and summary/body, if given), "
            "confirm: true and this plan_token.",
            token=token,
        )
    if plan_token is None:
        raise InvalidInput(
            "plan_token: call memory_merge without confirm first, show the plan to the "
            "user, then confirm with the plan_token it returned"
        )
    if plan_token != token:
        raise Conflict(
            "the notes (or the summary/body) changed since that plan was made; nothing was "
            "merged: call memory_merge without confirm again and show the new plan"
        )
    try:
        result = memory.merges.apply(plan)
    except Conflict as exc:
        raise _unnamed(memory, exc, plan, {i for _, i in shown}) from None
    hidden = {i for i in (*result.relinked, *result.skipped) if not _shown(memory, i, plan)}
    return _merge_out(
        plan,
        result,
        f"Merged {len(plan.notes)} notes into {result.kept}; every changed note was backed "
        "up (the user can undo a change with memdir backups restore ID).",
        hidden,
    )


MERGE = Tool(
    "memory_merge",
    memory_merge,
    description=(
        f"Merge 2-{MAX_MERGED} memory notes of one scope into one (e.g. a same_topic finding of "
        "memory_tidy): the oldest note's id is kept, the others are deleted, [[links]] to them "
        "are pointed at the kept note, and every changed note is backed up. Without confirm it "
        "only returns the plan (kept id, deleted ids, the merged draft) and changes nothing: "
        "show it to the user, then call again with confirm: true. The draft is every "
        "original joined (repeats said once), or the summary and body you give; drafts "
        "written by a model are not offered here. Needs the right to delete notes; the "
        "credential guard refuses secrets."
    ),
    annotations=DELETES,
    access=AccessLevel.READ_WRITE_DELETE,
)


def _unnamed(memory: Memory, exc: Conflict, plan: MergePlan, shown: set[str]) -> Conflict:
    """`exc`, unless it names a note held back by a sync conflict that the caller may not
    see (a private note whose links the merge would rewrite): then without its id."""
    held = {
        c.id for c in memory.sync.conflicts() if c.scope == plan.scope.value and c.id not in shown
    }
    if any(i in str(exc) and not _shown(memory, i, plan) for i in held):
        return Conflict(
            "a note whose links this merge rewrites is held back by a sync conflict; "
            "settle it first (the user can run memdir sync conflicts); nothing was merged"
        )
    return exc


def _shown(memory: Memory, note_id: str, plan: MergePlan) -> bool:
    """Whether a note of the merge's scope touched by it may be named to the caller."""
    try:
        note = memory.read(note_id, scope=plan.scope)
    except NotFound:
        return False
    return not note.private


def _backup_note(backup_id: str) -> str:
    """The note id inside a backup id (``<stamp>-<note id>-<4 hex>``)."""
    return backup_id.partition("-")[2].rpartition("-")[0]


def _merge_out(
    plan: MergePlan,
    result: MergeResult | None,
    message: str,
    hidden: set[str] | None = None,
    *,
    token: str | None = None,
) -> MergeOut:
    """The plan or the result, leaving out every note in `hidden` (private notes whose links
    a merge rewrote: MCP never names them) and their backups."""
    hidden = hidden or set()
    return MergeOut(
        applied=result is not None,
        scope=plan.scope.value,
        kept=plan.keep,
        deleted=list(result.deleted if result is not None else plan.deletes),
        draft=MergeDraftOut.of(plan.draft),
        source=plan.source,
        relinked=[i for i in (result.relinked if result else ()) if i not in hidden],
        backup_ids=[
            b for b in (result.backup_ids if result else ()) if _backup_note(b) not in hidden
        ],
        skipped=[i for i in (result.skipped if result else ()) if i not in hidden],
        plan_token=token,
        message=message,
    )
