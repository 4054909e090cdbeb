"""The memdir MCP tools: validate, check access, make one `Memory` call, format the result.

A failing call is a tool error whose text begins with its kind (`memdir.mcp.failures`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Coroutine, Iterator
from contextvars import ContextVar
from enum import StrEnum
from typing import Annotated, Any

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import AfterValidator, Field

from memdir.core import AccessLevel, Note, NoteType, Scope, SearchMode, choices, validate_id
from memdir.core.ids import ID_PATTERN
from memdir.core.merging import MAX_MERGED
from memdir.core.vocab import FindingKind, SearchMethod
from memdir.errors import Conflict, InvalidInput, MemdirError, NotFound, Refused
from memdir.guidance import GUIDANCE
from memdir.mcp.access import CURRENT, Access
from memdir.mcp.ask_tool import ASK_ANNOTATIONS, ASK_DESCRIPTION, AskTool
from memdir.mcp.failures import ToolArguments, error_result, error_text
from memdir.mcp.models import (
    ChunkOut,
    DeleteOut,
    DiffOut,
    FindingOut,
    HistoryEntryOut,
    HistoryOut,
    LinksOut,
    MergeDraftOut,
    MergeOut,
    NoteOut,
    RetrieveOut,
    SearchHitOut,
    SearchOut,
    TidyOut,
    WriteOut,
)
from memdir.memory import Memory
from memdir.retrieve.report import current_progress, observing
from memdir.tidy.merge import MergePlan, MergeResult
from memdir.tidy.merge import plan_token as merge_plan_token

__all__ = ["PROGRESS", "TOOL_NAMES", "register_tools", "usable_tools"]

_log = logging.getLogger(__name__)

#: Sends a progress notification for the request being served (progress, total, message);
#: set by the server for each tool call (a no-op when the client gave no progressToken).
PROGRESS: ContextVar[
    Callable[[float, float | None, str | None], Coroutine[Any, Any, None]] | None
] = ContextVar("memdir_mcp_progress", default=None)

# The input schemas' enums come from the vocabulary (memdir.core), like the CLI's choices:
# a plain string in the schema with the members as its `enum`, validated into the member
# with an error that lists them (an agent learns the valid values from it).


def _member(vocabulary: type[StrEnum]) -> Callable[[str], StrEnum]:
    names = choices(vocabulary)
    listed = ", ".join(repr(n) for n in names[:-1]) + f" or {names[-1]!r}"

    def member(value: str) -> StrEnum:
        try:
            return vocabulary(value)
        except ValueError:
            raise ValueError(f"expected {listed}") from None

    return member


def _enum(vocabulary: type[StrEnum]) -> Any:
    return Field(json_schema_extra={"enum": list(choices(vocabulary))})


Mode = Annotated[str, _enum(SearchMode), AfterValidator(_member(SearchMode))]
ScopeArg = Annotated[str, _enum(Scope), AfterValidator(_member(Scope))]
TypeArg = Annotated[str, _enum(NoteType), AfterValidator(_member(NoteType))]
KindArg = Annotated[str, _enum(FindingKind), AfterValidator(_member(FindingKind))]
NoteId = Annotated[str, Field(description="A note id (from memory_search or the prompt index).")]

#: At most this many notes superseded by one `memory_write` (a note replaces a few facts).
MAX_SUPERSEDES = 20


def _note_id(value: str) -> str:
    try:
        return validate_id(value)
    except InvalidInput as exc:
        raise ValueError(str(exc)) from None


ValidId = Annotated[
    str,
    Field(json_schema_extra={"pattern": f"^{ID_PATTERN.pattern}$"}),
    AfterValidator(_note_id),
]
Limit = Annotated[int, Field(ge=1, le=50, description="At most this many results.")]

_READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
_DELETE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)


def _access() -> Access:
    access = CURRENT.get()
    if access is None:  # the server sets it before every dispatch; refuse if it did not
        raise Refused("no access was resolved for this call")
    return access


class MemoryTools:
    """The tool functions of one server, bound to its `Memory`."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.memory_ask = AskTool(memory).memory_ask  # its own module (memdir.mcp.ask_tool)

    # -- visibility ---------------------------------------------------------------------

    def _visible(self, note: Note, access: Access) -> bool:
        return not note.private and access.covers(note.scope.value if note.scope else None)

    def _note(self, note_id: str, access: Access, scope: str | None = None) -> Note:
        """The current note `note_id`, or NotFound when it is private or outside the grant
        (said the same way as for a note that does not exist: its existence is not told)."""
        where = access.scope_for(scope)
        try:
            note = self.memory.read(note_id, scope=where)
        except NotFound:
            raise NotFound(f"no note {note_id}") from None
        if not self._visible(note, access):
            raise NotFound(f"no note {note_id}")
        return note

    def _check_history(self, note_id: str, access: Access) -> None:
        """NotFound unless the note (or, once deleted, its last version) may be shown."""
        try:
            self._note(note_id, access)
            return
        except NotFound:
            pass
        where = access.scope_for(None)
        revisions = [
            e.revision for e in self.memory.notes.history(note_id, scope=where) if e.revision
        ]
        if not revisions:
            raise NotFound(f"no note {note_id}")
        last = self.memory.read(note_id, revisions[-1], scope=where)
        if not self._visible(last, access) or self._exists_hidden(note_id, access, where):
            raise NotFound(f"no note {note_id}")

    def _exists_hidden(self, note_id: str, access: Access, scope: str | None = None) -> bool:
        """True when a note `note_id` exists (in `scope`, None: any) that may not be shown."""
        try:
            note = self.memory.read(note_id, scope=scope)
        except NotFound:
            return False
        return not self._visible(note, access)

    def _hidden_anywhere(self, note_id: str, access: Access) -> bool:
        """True when a note `note_id` that may not be shown exists in any scope (a note to
        supersede: which scope counts is decided by the write, so any hidden one refuses)."""
        for scope in self.memory.scopes:
            try:
                note = self.memory.read(note_id, scope=scope)
            except NotFound:
                continue
            if not self._visible(note, access):
                return True
        return False

    @contextlib.contextmanager
    def _warnings(self) -> Iterator[list[str]]:
        """The warnings the block raised, for its answer; taken off the memory's list, so
        the next call that meets the same condition (a full disk) says it again."""
        before = len(self.memory.warnings)
        found: list[str] = []
        try:
            yield found
        finally:
            found.extend(self.memory.warnings[before:])
            del self.memory.warnings[before:]

    # -- tools --------------------------------------------------------------------------

    def memory_search(
        self,
        query: Annotated[str, Field(description="Words to look for (any language).")],
        mode: Annotated[Mode, Field(description="any word, all words, or the phrase")] = "any",
        scope: Annotated[ScopeArg | None, Field(description="project or user notes")] = None,
        type: Annotated[TypeArg | None, Field(description="only notes of this type")] = None,
        tags: Annotated[list[str] | None, Field(description="only notes with all these")] = None,
        limit: Limit = 10,
    ) -> SearchOut:
        where = _access().scope_for(scope)
        # Private notes are never indexed; scope, type and tags filter inside the search.
        with self._warnings() as warnings, observing(current_progress()) as report:
            hits = self.memory.search(
                query, limit=limit, mode=mode, scope=where, type=type, tags=tags
            )
        out = [SearchHitOut.of(hit) for hit in hits]
        hint = (
            "open a note with memory_read(id), or get matching passages with memory_retrieve"
            if out
            else "nothing matched: try other words, synonyms or the other language, or mode any"
        )
        method = report.method or SearchMethod.LEXICAL
        return SearchOut(hits=out, hint=hint, method=method.value, warnings=warnings)

    def memory_retrieve(
        self,
        query: Annotated[str, Field(description="Words to look for (any language).")],
        mode: Annotated[Mode, Field(description="any word, all words, or the phrase")] = "any",
        scope: Annotated[ScopeArg | None, Field(description="project or user notes")] = None,
        limit: Limit = 10,
    ) -> RetrieveOut:
        where = _access().scope_for(scope)
        with self._warnings() as warnings, observing(current_progress()) as report:
            chunks = self.memory.index.retrieve(query, limit=limit, mode=mode, scope=where)
        method = report.method or SearchMethod.LEXICAL
        return RetrieveOut(
            chunks=[ChunkOut.of(c) for c in chunks], method=method.value, warnings=warnings
        )

    def memory_read(
        self,
        id: NoteId,
        scope: Annotated[ScopeArg | None, Field(description="default: project, then user")] = None,
    ) -> NoteOut:
        access = _access()
        note = self._note(id, access, scope)
        where = note.scope.value if note.scope else access.scope_for(scope)
        current = self.memory.notes.read_current(note.id, scope=where)
        # Changed between the two reads: the newer one is answered, if it may be shown.
        if current.note.hash != note.hash and not self._visible(current.note, access):
            raise NotFound(f"no note {id}")
        return NoteOut.of(current.note, revision=current.revision)

    def memory_read_revision(
        self,
        id: NoteId,
        revision: Annotated[str, Field(description="A revision (hex prefix) from memory_history.")],
    ) -> NoteOut:
        access = _access()
        self._check_history(id, access)
        where = access.scope_for(None)
        note = self.memory.read(id, revision, scope=where)
        if not self._visible(note, access):
            raise NotFound(f"no note {id}")
        return NoteOut.of(note, revision=self._full_revision(id, revision, where))

    def memory_history(self, id: NoteId) -> HistoryOut:
        access = _access()
        self._check_history(id, access)
        entries = self.memory.notes.history(id, scope=access.scope_for(None))
        return HistoryOut(id=id, entries=[HistoryEntryOut.of(e) for e in entries])

    def memory_diff(
        self,
        id: NoteId,
        a: Annotated[str | None, Field(description="older revision (default: previous)")] = None,
        b: Annotated[str | None, Field(description="newer revision (default: current)")] = None,
    ) -> DiffOut:
        access = _access()
        where = access.scope_for(None)
        self._note(id, access)
        for rev in (a, b):
            if rev is not None and not self._visible(
                self.memory.read(id, rev, scope=where), access
            ):
                raise NotFound(f"no note {id}")
        diff = self.memory.notes.diff(id, a, b, scope=where)
        # The revisions compared, as `Memory.diff` chooses them: `b` (default: the file now)
        # against `a` (default: the version recorded just before `b`; none for a first one).
        revs = [e.revision for e in self.memory.notes.history(id, scope=where) if e.revision]
        right = (
            self._full_revision(id, b, where, revs)
            if b
            else self.memory.notes.read_current(id, scope=where).revision
        )
        if a:
            left: str | None = self._full_revision(id, a, where, revs)
        else:
            before = revs[: len(revs) - 1 - revs[::-1].index(right)] if right in revs else revs
            older = [r for r in before if r != right]
            left = older[-1] if older else None
        return DiffOut(id=id, a=left, b=right, diff=diff)

    def _full_revision(
        self, note_id: str, prefix: str, scope: str | None, revs: list[str] | None = None
    ) -> str:
        """The whole revision a (unique) prefix given by the caller names."""
        if revs is None:
            revs = [
                e.revision for e in self.memory.notes.history(note_id, scope=scope) if e.revision
            ]
        found = {r for r in revs if r.startswith(prefix)}
        return found.pop() if len(found) == 1 else prefix

    def memory_links(self, id: NoteId) -> LinksOut:
        access = _access()
        self._note(id, access)
        report = self.memory.notes.links(id, scope=access.scope_for(None), hide_private=True)
        return LinksOut.of(report)

    def memory_tidy(
        self,
        kinds: Annotated[
            list[KindArg] | None, Field(description="only findings of these kinds (default: all)")
        ] = None,
        scope: Annotated[ScopeArg | None, Field(description="project or user notes")] = None,
    ) -> TidyOut:
        where = _access().scope_for(scope)
        # Private notes are never shown over MCP: findings about them are left out.
        findings = self.memory.tidy.findings(kinds or None, where, hide_private=True)
        hint = (
            "open the notes with memory_read; tell the user, who can merge, supersede "
            "(memory_write with supersedes) or dismiss (memdir tidy dismiss ID)"
            if findings
            else "nothing to tidy"
        )
        return TidyOut(findings=[FindingOut.of(f) for f in findings], hint=hint)

    def memory_write(
        self,
        summary: Annotated[str, Field(description="One line that states the fact itself.")],
        body: Annotated[
            str | None, Field(description="Markdown: why it matters, how to apply it, [[links]].")
        ] = None,
        type: Annotated[
            TypeArg | None, Field(description="user, feedback, project, reference")
        ] = None,
        tags: Annotated[
            list[str] | None,
            Field(description="Search words: synonyms and the term in the user's other language."),
        ] = None,
        scope: Annotated[ScopeArg | None, Field(description="default: by type")] = None,
        id: Annotated[
            str | None, Field(description="Update this note instead of creating one.")
        ] = None,
        supersedes: Annotated[
            list[ValidId] | None,
            Field(
                max_length=MAX_SUPERSEDES,
                description=(
                    "Ids of notes of the same scope that this one replaces (a changed decision, "
                    "a corrected fact): they drop out of recall and the prompt index, and "
                    "search marks them. On update this is the whole list; [] clears it."
                ),
            ),
        ] = None,
    ) -> WriteOut:
        access = _access()
        access.require_write()
        where = access.scope_for(scope)
        if id is not None and self._exists_hidden(id, access):
            raise NotFound(f"no note {id}")
        for old in supersedes or ():
            if self._hidden_anywhere(old, access):
                raise NotFound(f"no note {old}")
        result = self.memory.remember(
            summary, body, type=type, tags=tags, scope=where, id=id, supersedes=supersedes
        )
        # Neighbours come from the index, which never holds private notes.
        visible = {n.note_id for n in result.nearest if access.covers(n.scope)}
        return WriteOut.of(result, visible)

    def memory_delete(
        self,
        id: NoteId,
        confirm: Annotated[
            bool, Field(description="Must be true: set it only after the user agreed.")
        ] = False,
    ) -> DeleteOut:
        access = _access()
        access.require_delete(confirm)
        note = self._note(id, access)
        scope = note.scope.value if note.scope else None
        result = self.memory.forget(id, scope=scope, expect_hash=note.hash)
        return DeleteOut.of(result)

    def memory_merge(
        self,
        ids: Annotated[
            list[ValidId],
            Field(
                min_length=2,
                max_length=MAX_MERGED,
                description="The notes to merge (2-20, one scope), e.g. a same_topic finding's.",
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
        access = _access()
        access.require_delete_right()
        # Every note must be one this caller may read: a private note, or one outside the
        # grant, is "no note" here exactly as memory_read says (its existence is not told,
        # and its content never reaches the draft).
        shown = {(n.scope, n.id) for n in (self._note(i, access, scope) for i in ids)}
        plan = self.memory.merges.plan(
            ids, draft="concat", summary=summary, body=body, scope=access.scope_for(scope)
        )
        for planned in plan.notes:
            if (plan.scope, planned.id) not in shown:
                raise NotFound(f"no note {planned.id}")
        if plan.draft.private:  # only private originals make a private draft
            raise NotFound(f"no note {plan.keep}")
        token = merge_plan_token(plan)
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
            result = self.memory.merges.apply(plan)
        except Conflict as exc:
            raise self._unnamed(exc, plan, {i for _, i in shown}) from None
        hidden = {i for i in (*result.relinked, *result.skipped) if not self._shown(i, plan)}
        return _merge_out(
            plan,
            result,
            f"Merged {len(plan.notes)} notes into {result.kept}; every changed note was backed "
            "up (the user can undo a change with memdir backups restore ID).",
            hidden,
        )

    def _unnamed(self, exc: Conflict, plan: MergePlan, shown: set[str]) -> Conflict:
        """`exc`, unless it names a note held back by a sync conflict that the caller may not
        see (a private note whose links the merge would rewrite): then without its id."""
        held = {
            c.id
            for c in self.memory.sync.conflicts()
            if c.scope == plan.scope.value and c.id not in shown
        }
        if any(i in str(exc) and not self._shown(i, plan) for i in held):
            return Conflict(
                "a note whose links this merge rewrites is held back by a sync conflict; "
                "settle it first (the user can run memdir sync conflicts); nothing was merged"
            )
        return exc

    def _shown(self, note_id: str, plan: MergePlan) -> bool:
        """Whether a note of the merge's scope touched by it may be named to the caller."""
        try:
            note = self.memory.read(note_id, scope=plan.scope)
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


_DESCRIPTIONS: dict[str, str] = {
    "memory_search": (
        "Search the long-term memory notes of this project and user. Returns summaries, "
        "snippets and ids only (cheap): open a promising note with memory_read, or fetch "
        "matching passages with memory_retrieve. Search before writing a note, and try "
        "synonyms or the user's other language when nothing matches. `method` says how it "
        "matched: hybrid (words and meaning) or lexical (words only, e.g. while vectors are "
        "still being computed: a warning then says how far they are)."
    ),
    "memory_retrieve": (
        "Passages (chunks) of notes best matching a query, each with its note id, revision, "
        "chunk hash, byte offsets, score and source. Use when snippets are not enough but "
        "whole notes would be too much."
    ),
    "memory_ask": ASK_DESCRIPTION,
    "memory_read": "Read one whole memory note by id (summary, type, tags, body, links).",
    "memory_read_revision": "Read a past revision of a note (revisions come from memory_history).",
    "memory_history": "Every version of a note recorded on this machine, oldest first.",
    "memory_diff": (
        "A unified diff between two revisions of a note (default: previous version → current)."
    ),
    "memory_links": "A note's outgoing [[links]], its backlinks, and links to missing notes.",
    "memory_tidy": (
        "The tidy-up list of the memory notes: notes on the same topic, broken [[links]], "
        "paths to files that do not exist, notes unused for long, notes too long, and "
        "contradicting notes. Each finding has an id, its note ids and a one-line reason. "
        "Read-only: nothing is changed."
    ),
    "memory_write": (
        "Create a memory note, or update one (give its id). Returns the nearest existing notes "
        "and a likely-duplicate flag: when set, update that note instead. The credential "
        "guard refuses secrets.\n\n" + GUIDANCE
    ),
    "memory_delete": (
        "Delete a memory note (a backup is kept; `memdir backups restore` undoes it). Only "
        "with confirm: true, after the user agreed to deleting this note."
    ),
    "memory_merge": (
        "Merge 2-20 memory notes of one scope into one (e.g. a same_topic finding of "
        "memory_tidy): the oldest note's id is kept, the others are deleted, [[links]] to them "
        "are pointed at the kept note, and every changed note is backed up. Without confirm it "
        "only returns the plan (kept id, deleted ids, the merged draft) and changes nothing: "
        "show it to the user, then call again with confirm: true. The draft is every "
        "original joined (repeats said once), or the summary and body you give; drafts "
        "written by a model are not offered here. Needs the right to delete notes; the "
        "credential guard refuses secrets."
    ),
}

_ANNOTATIONS: dict[str, ToolAnnotations] = {
    "memory_ask": ASK_ANNOTATIONS,
    "memory_write": _WRITE,
    "memory_delete": _DELETE,
    "memory_merge": _DELETE,
}

TOOL_NAMES: tuple[str, ...] = tuple(_DESCRIPTIONS)
#: The tools that delete notes: offered only to a caller with the right to delete.
_DELETING = frozenset({"memory_delete", "memory_merge"})


def usable_tools(access: Access) -> frozenset[str]:
    """The tools `access` may call: a read-only caller is not offered write or delete."""
    names = set(TOOL_NAMES)
    if access.level is AccessLevel.READ:
        names -= {"memory_write", *_DELETING}
    elif not access.can_delete:
        names -= _DELETING
    return frozenset(names)


class _IndexProgress:
    """Index-building progress of one call (from its worker thread) as MCP progress
    notifications: counted across scopes so that the value only ever grows."""

    def __init__(
        self, send: Callable[[float, float | None, str | None], Coroutine[Any, Any, None]]
    ):
        self.send = send
        self.base = self.last_done = self.last_total = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if done <= self.last_done:  # the next scope's index
            self.base += self.last_total
        self.last_done, self.last_total = done, total
        message = f"building the search index: {done} of {total} notes read"
        try:
            anyio.from_thread.run(
                self.send, float(self.base + done), float(self.base + total), message
            )
        except Exception:  # a client that went away must not fail the call itself
            _log.debug("progress notification not sent", exc_info=True)


def _wrap(fn: Callable[..., Any], limiter: anyio.CapacityLimiter) -> Callable[..., Any]:
    """An async tool running `fn` in a worker thread; a memdir error becomes a tool error
    that begins with its kind (`memdir.mcp.failures`), anything else an `internal:` one.
    The signature is kept for the input schema.

    memdir's calls block on files and SQLite, so they leave the event loop free (pings,
    cancellation, other HTTP requests); `limiter` lets one call into the `Memory` run at
    a time, as before, since its index and sync state connections are not shared safely
    between concurrent calls. The caller's access travels along (`run_sync` copies the
    context), and so does index-building progress (`memdir.retrieve.report`)."""

    @functools.wraps(fn)
    async def call(*args: Any, **kwargs: Any) -> Any:
        send = PROGRESS.get()
        progress = _IndexProgress(send) if send is not None else None

        def run() -> Any:
            with observing(progress):
                return fn(*args, **kwargs)

        try:
            return await anyio.to_thread.run_sync(run, limiter=limiter)
        except MemdirError as exc:
            return error_result(error_text(exc))
        except Exception:
            _log.exception("MCP tool %s failed", getattr(fn, "__name__", "?"))
            return error_result(
                f"internal: {getattr(fn, '__name__', 'the tool')} failed unexpectedly; nothing "
                "more is said here (the server's log, its standard error, has the details)"
            )

    return call


def register_tools(
    server: MCPServer[Any], memory: Memory, limiter: anyio.CapacityLimiter
) -> ToolArguments:
    """Add every memdir tool to `server`, with its description and annotations; returns
    the checker of their arguments (the server runs it before the SDK's own validation).

    `limiter` (one token) is shared with every other handler that calls `memory`.
    """
    tools = MemoryTools(memory)
    arguments = ToolArguments()
    for name in TOOL_NAMES:
        arguments.add(name, getattr(tools, name))
        server.add_tool(
            _wrap(getattr(tools, name), limiter),
            name=name,
            title=name.replace("_", " "),
            description=_DESCRIPTIONS[name],
            annotations=_ANNOTATIONS.get(name, _READ),
            structured_output=True,
        )
    return arguments
