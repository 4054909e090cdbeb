"""The structured outputs of the MCP tools (pydantic models, so each tool has an output schema)."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from memdir.core.vocab import FindingKind, ItemStatus, choices

if TYPE_CHECKING:  # the result types are imported where a tool makes them
    from memdir import (
        Chunk,
        Finding,
        ForgetResult,
        HistoryEntry,
        Hit,
        Link,
        LinkReport,
        MergeDraft,
        Note,
        WriteResult,
    )
    from memdir.state import Goal, Session, Task

__all__ = [
    "ChunkOut",
    "DeleteOut",
    "DiffOut",
    "FindingOut",
    "GoalListOut",
    "GoalOut",
    "HistoryOut",
    "LinksOut",
    "MergeDraftOut",
    "MergeOut",
    "NoteOut",
    "RetrieveOut",
    "SearchHitOut",
    "SearchOut",
    "SessionListOut",
    "SessionOut",
    "TaskListOut",
    "TaskOut",
    "TidyOut",
    "WriteOut",
]


def _spoken(vocabulary: type[StrEnum]) -> str:
    """The members' values as words: ``a, b or c``."""
    names = choices(vocabulary)
    return ", ".join(names[:-1]) + f" or {names[-1]}"


class SearchHitOut(BaseModel):
    """One note found by memory_search: enough to decide whether to open it."""

    id: str
    summary: str
    type: str | None
    tags: list[str]
    scope: str
    score: float
    snippet: str
    match: str = Field(description="words (full text), meaning (vectors) or both")
    superseded_by: str | None = None
    weak: bool = Field(
        default=False,
        description="true when no hit is a good match: the memory likely does not hold "
        "what was asked for (every hit of such a result says so)",
    )

    @classmethod
    def of(cls, hit: Hit) -> SearchHitOut:
        return cls(
            id=hit.note_id,
            summary=hit.summary,
            type=hit.type.value if hit.type else None,
            tags=list(hit.tags),
            scope=hit.scope.value,
            score=round(hit.score, 6),
            snippet=hit.snippet,
            match=hit.match,
            superseded_by=hit.superseded_by,
            weak=hit.weak,
        )


class SearchOut(BaseModel):
    """Summaries and snippets only: open a note with memory_read, or chunks with memory_retrieve."""

    hits: list[SearchHitOut]
    hint: str
    method: str = Field(
        description="hybrid (words and meaning), or lexical (words only: vector search is off, "
        "or vectors are still being computed — then a warning says how far they are)"
    )
    #: Why the results may be incomplete (e.g. the search index cannot be updated now).
    warnings: list[str] = []


class ChunkOut(BaseModel):
    """One chunk of a note: where it lives and what it says."""

    id: str
    summary: str
    revision: str
    chunk_hash: str
    start: int = Field(description="byte offset of the chunk in the note file")
    end: int
    score: float
    source: str = Field(description="scope and path of the note file")
    scope: str
    text: str
    match: str
    weak: bool = Field(default=False, description="true when no chunk is a good match")

    @classmethod
    def of(cls, chunk: Chunk) -> ChunkOut:
        return cls(
            id=chunk.note_id,
            summary=chunk.summary,
            revision=chunk.revision,
            chunk_hash=chunk.chunk_hash,
            start=chunk.start,
            end=chunk.end,
            score=round(chunk.score, 6),
            source=chunk.source,
            scope=chunk.scope.value,
            text=chunk.text,
            match=chunk.match,
            weak=chunk.weak,
        )


class RetrieveOut(BaseModel):
    """Chunks best matching a query."""

    chunks: list[ChunkOut]
    method: str = Field(description="hybrid (words and meaning) or lexical (words only)")
    #: Why the results may be incomplete (e.g. the search index cannot be updated now).
    warnings: list[str] = []


class NoteOut(BaseModel):
    """A whole note."""

    id: str
    summary: str
    type: str | None
    tags: list[str]
    body: str
    scope: str | None
    created_at: int = Field(description="Unix milliseconds")
    updated_at: int = Field(description="Unix milliseconds")
    supersedes: list[str]
    links: list[str]
    hash: str
    revision: str = Field(description="the revision of exactly these bytes (memory_history)")

    @classmethod
    def of(cls, note: Note, revision: str) -> NoteOut:
        return cls(
            id=note.id,
            summary=note.summary,
            type=note.type.value if note.type else None,
            tags=list(note.tags),
            body=note.body,
            scope=note.scope.value if note.scope else None,
            created_at=note.created_at,
            updated_at=note.updated_at,
            supersedes=list(note.supersedes),
            links=list(note.links),
            hash=note.hash,
            revision=revision,
        )


class HistoryEntryOut(BaseModel):
    """One recorded version (or deletion) of a note."""

    revision: str | None
    ts: int
    event: str
    current: bool

    @classmethod
    def of(cls, entry: HistoryEntry) -> HistoryEntryOut:
        return cls(revision=entry.revision, ts=entry.ts, event=entry.event, current=entry.current)


class HistoryOut(BaseModel):
    """Every version of a note recorded on this machine, oldest first."""

    id: str
    entries: list[HistoryEntryOut]


class DiffOut(BaseModel):
    """A unified diff between two revisions of a note (empty: no differences)."""

    id: str
    a: str | None = Field(description="the older revision (null: b is the first version)")
    b: str = Field(description="the newer revision (by default the note as it is now)")
    diff: str


class NeighbourOut(BaseModel):
    """An existing note close to the one just written."""

    id: str
    summary: str
    scope: str | None
    score: float


class WriteOut(BaseModel):
    """What memory_write did, and what the store already holds near it."""

    id: str
    scope: str | None
    created: bool
    changed: bool
    revision: str
    likely_duplicate: bool
    duplicate_of: str | None
    nearest: list[NeighbourOut]
    dangling_links: list[str]
    supersedes: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, result: WriteResult, visible: set[str]) -> WriteOut:
        note = result.note
        return cls(
            id=note.id,
            scope=note.scope.value if note.scope else None,
            created=result.created,
            changed=result.changed,
            revision=result.revision,
            likely_duplicate=result.likely_duplicate and result.duplicate_of in visible,
            duplicate_of=result.duplicate_of if result.duplicate_of in visible else None,
            nearest=[
                NeighbourOut(
                    id=n.note_id,
                    summary=n.summary,
                    scope=n.scope.value if n.scope else None,
                    score=round(n.score, 4),
                )
                for n in result.nearest
                if n.note_id in visible
            ],
            dangling_links=list(result.dangling_links),
            supersedes=list(note.supersedes),
        )


class DeleteOut(BaseModel):
    """What memory_delete removed; the backup restores it (`memdir backups restore ID`)."""

    id: str
    scope: str
    backup_id: str | None
    checks: list[str]

    @classmethod
    def of(cls, result: ForgetResult) -> DeleteOut:
        return cls(
            id=result.note_id,
            scope=result.scope.value,
            backup_id=result.backup.id if result.backup else None,
            checks=list(result.checks),
        )


class LinkOut(BaseModel):
    """A link and the scope its target resolves in (null: dangling)."""

    id: str
    scope: str | None
    summary: str | None

    @classmethod
    def of(cls, link: Link) -> LinkOut:
        return cls(
            id=link.target, scope=link.scope.value if link.scope else None, summary=link.summary
        )


class LinksOut(BaseModel):
    """A note's outgoing links, backlinks and dangling links."""

    id: str
    outgoing: list[LinkOut]
    backlinks: list[LinkOut]
    dangling: list[str]

    @classmethod
    def of(cls, report: LinkReport) -> LinksOut:
        return cls(
            id=report.note_id,
            outgoing=[LinkOut.of(link) for link in report.outgoing],
            backlinks=[LinkOut.of(link) for link in report.backlinks],
            dangling=list(report.dangling),
        )


class FindingOut(BaseModel):
    """One entry of the tidy-up list: what is wrong, with which notes."""

    id: str
    kind: str = Field(description=_spoken(FindingKind))
    scope: str
    notes: list[str]
    reason: str

    @classmethod
    def of(cls, finding: Finding) -> FindingOut:
        return cls(
            id=finding.id,
            kind=finding.kind.value,
            scope=finding.scope.value,
            notes=list(finding.notes),
            reason=finding.reason,
        )


class TidyOut(BaseModel):
    """The tidy-up list (findings dismissed on this machine are left out)."""

    findings: list[FindingOut]
    hint: str


class MergeDraftOut(BaseModel):
    """The note a merge writes under the kept id: every original concatenated (repeats said
    once), or the summary and body the caller gave."""

    summary: str
    body: str
    type: str | None
    tags: list[str]
    supersedes: list[str]

    @classmethod
    def of(cls, draft: MergeDraft) -> MergeDraftOut:
        return cls(
            summary=draft.summary,
            body=draft.body,
            type=draft.type.value if draft.type else None,
            tags=list(draft.tags),
            supersedes=list(draft.supersedes),
        )


class MergeOut(BaseModel):
    """A merge: its plan (`applied` false: nothing was changed) or what it did."""

    applied: bool = Field(description="false: only the plan, nothing was changed")
    scope: str
    kept: str = Field(description="the id that stays (the oldest note), with the draft as content")
    deleted: list[str] = Field(description="the notes deleted (or, in a plan, to be deleted)")
    draft: MergeDraftOut
    source: str = Field(description="concat (the originals joined) or edited (summary/body given)")
    relinked: list[str] = Field(
        default_factory=list, description="notes whose [[deleted-id]] links now name the kept note"
    )
    backup_ids: list[str] = Field(
        default_factory=list, description="backups of every changed note (memdir backups restore)"
    )
    skipped: list[str] = Field(
        default_factory=list,
        description="notes edited here while the merge went to the sync server: kept as edited",
    )
    plan_token: str | None = Field(
        default=None, description="pass it back with confirm: true to apply this very plan"
    )
    message: str


# -- the agent state store (memdir.mcp.tools.state) -------------------------------------


class GoalOut(BaseModel):
    """One goal of the agent state store."""

    id: str
    title: str
    status: str = Field(description=_spoken(ItemStatus))
    priority: int = Field(description="higher comes first")
    notes: str
    fields: dict[str, str] = Field(description="named text fields")
    created_at: int = Field(description="Unix milliseconds")
    updated_at: int = Field(description="Unix milliseconds")
    closed_at: int | None = Field(description="Unix milliseconds; null while open")

    @classmethod
    def of(cls, goal: Goal) -> GoalOut:
        return cls(
            id=goal.id,
            title=goal.title,
            status=goal.status.value,
            priority=goal.priority,
            notes=goal.notes,
            fields=dict(goal.fields),
            created_at=goal.created_at,
            updated_at=goal.updated_at,
            closed_at=goal.closed_at,
        )


class TaskOut(BaseModel):
    """One task of the agent state store (serving a goal, or none)."""

    id: str
    title: str
    status: str = Field(description=_spoken(ItemStatus))
    priority: int = Field(description="higher comes first")
    notes: str
    goal_id: str | None = Field(description="the goal this task serves")
    fields: dict[str, str] = Field(description="named text fields")
    created_at: int = Field(description="Unix milliseconds")
    updated_at: int = Field(description="Unix milliseconds")
    closed_at: int | None = Field(description="Unix milliseconds; null while open")

    @classmethod
    def of(cls, task: Task) -> TaskOut:
        return cls(
            id=task.id,
            title=task.title,
            status=task.status.value,
            priority=task.priority,
            notes=task.notes,
            goal_id=task.goal_id,
            fields=dict(task.fields),
            created_at=task.created_at,
            updated_at=task.updated_at,
            closed_at=task.closed_at,
        )


class TaskListOut(BaseModel):
    """Tasks, open ones first, then by priority (highest first), then oldest first."""

    tasks: list[TaskOut]
    truncated: bool = Field(description="true: more tasks match than `limit` returned")


class GoalListOut(BaseModel):
    """Goals, open ones first, then by priority (highest first), then oldest first."""

    goals: list[GoalOut]
    truncated: bool = Field(description="true: more goals match than `limit` returned")


class SessionOut(BaseModel):
    """One recorded agent session."""

    id: str
    agent: str
    started_at: int = Field(description="Unix milliseconds")
    ended_at: int | None = Field(description="Unix milliseconds; null if not given")
    summary: str
    fields: dict[str, str]

    @classmethod
    def of(cls, session: Session) -> SessionOut:
        return cls(
            id=session.id,
            agent=session.agent,
            started_at=session.started_at,
            ended_at=session.ended_at,
            summary=session.summary,
            fields=dict(session.fields),
        )


class SessionListOut(BaseModel):
    """Recorded sessions, most recent first."""

    sessions: list[SessionOut]
    truncated: bool = Field(description="true: more sessions match than `limit` returned")
