"""The memdir MCP tools: validate, check access, make one `Memory` call, format the result."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from enum import StrEnum
from typing import Annotated, Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import AfterValidator, Field

from memdir.core import AccessLevel, Note, NoteType, Scope, SearchMode, choices, validate_id
from memdir.core.ids import ID_PATTERN
from memdir.errors import (
    Busy,
    Conflict,
    InvalidInput,
    MemdirError,
    NotFound,
    Refused,
    Remedy,
    SecretRefused,
)
from memdir.guidance import GUIDANCE
from memdir.mcp.access import CURRENT, Access
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
from memdir.results import FindingKind, MergePlan, MergeResult
from memdir.tidy.merge import MAX_MERGED

__all__ = ["TOOL_NAMES", "register_tools", "usable_tools"]

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
            raise ValueError(f"Input should be {listed}") from None

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

_PREFIX: tuple[tuple[type[MemdirError], str], ...] = (
    (NotFound, "not found"),
    (SecretRefused, "refused (credential guard)"),
    (Refused, "refused"),
    (InvalidInput, "invalid input"),
    (Conflict, "conflict"),
    (Busy, "busy"),
)


#: What an agent can do about an error, in its own terms (the CLI says it as a command).
_REMEDIES: dict[Remedy, str] = {
    Remedy.SYNC_LOGIN: "the user can sign in to a sync server (memdir sync login)",
    Remedy.SYNC_ON: "the user can turn sync on (memdir sync on)",
    Remedy.SYNC_NOW: "sync first (the user can run memdir sync), then try again",
    Remedy.DOCTOR: "the user can inspect the file with memdir doctor",
    Remedy.BACKUPS: "the user can list backups with memdir backups",
    Remedy.AUDIT_VERIFY: "the user can check the audit log with memdir audit verify",
    Remedy.MCP_GRANT: "ask the user for a new grant (memdir mcp grant)",
    Remedy.OTHER_PROJECT: "it belongs to another project: ask the user to work there",
    Remedy.UPGRADE: "the user needs a newer memdir",
}


def remedy_text(hint: Remedy) -> str:
    """The agent-facing sentence for a remedy."""
    return _REMEDIES[hint]


def error_text(exc: MemdirError) -> str:
    """memdir's message (which never holds a secret) and what the agent can do about it."""
    return f"{exc} ({remedy_text(exc.hint)})" if exc.hint is not None else str(exc)


def _tool_error(exc: MemdirError) -> ToolError:
    """A clear tool error: the kind first, then the message and the remedy."""
    kind = next((label for cls, label in _PREFIX if isinstance(exc, cls)), "error")
    return ToolError(f"{kind}: {error_text(exc)}")


def _access() -> Access:
    access = CURRENT.get()
    if access is None:  # the server sets it before every dispatch; refuse if it did not
        raise Refused("no access was resolved for this call")
    return access


class MemoryTools:
    """The tool functions of one server, bound to its `Memory`."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

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
        revisions = [e.revision for e in self.memory.history(note_id, scope=where) if e.revision]
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
        with self._warnings() as warnings:
            hits = self.memory.search(
                query, limit=limit, mode=mode, scope=where, type=type, tags=tags
            )
        out = [SearchHitOut.of(hit) for hit in hits]
        hint = (
            "open a note with memory_read(id), or get matching passages with memory_retrieve"
            if out
            else "nothing matched: try other words, synonyms or the other language, or mode any"
        )
        return SearchOut(hits=out, hint=hint, warnings=warnings)

    def memory_retrieve(
        self,
        query: Annotated[str, Field(description="Words to look for (any language).")],
        mode: Annotated[Mode, Field(description="any word, all words, or the phrase")] = "any",
        scope: Annotated[ScopeArg | None, Field(description="project or user notes")] = None,
        limit: Limit = 10,
    ) -> RetrieveOut:
        where = _access().scope_for(scope)
        with self._warnings() as warnings:
            chunks = self.memory.retrieve(query, limit=limit, mode=mode, scope=where)
        return RetrieveOut(chunks=[ChunkOut.of(c) for c in chunks], warnings=warnings)

    def memory_read(
        self,
        id: NoteId,
        scope: Annotated[ScopeArg | None, Field(description="default: project, then user")] = None,
    ) -> NoteOut:
        note = self._note(id, _access(), scope)
        return NoteOut.of(note)

    def memory_read_revision(
        self,
        id: NoteId,
        revision: Annotated[str, Field(description="A revision (hex prefix) from memory_history.")],
    ) -> NoteOut:
        access = _access()
        self._check_history(id, access)
        note = self.memory.read(id, revision, scope=access.scope_for(None))
        if not self._visible(note, access):
            raise NotFound(f"no note {id}")
        return NoteOut.of(note, revision=revision)

    def memory_history(self, id: NoteId) -> HistoryOut:
        access = _access()
        self._check_history(id, access)
        entries = self.memory.history(id, scope=access.scope_for(None))
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
        return DiffOut(id=id, a=a, b=b, diff=self.memory.diff(id, a, b, scope=where))

    def memory_links(self, id: NoteId) -> LinksOut:
        access = _access()
        self._note(id, access)
        report = self.memory.links(id, scope=access.scope_for(None), hide_private=True)
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
        findings = self.memory.tidy(kinds or None, where, hide_private=True)
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
    ) -> MergeOut:
        access = _access()
        access.require_delete_right()
        # Every note must be one this caller may read: a private note, or one outside the
        # grant, is "no note" here exactly as memory_read says (its existence is not told,
        # and its content never reaches the draft).
        shown = {(n.scope, n.id) for n in (self._note(i, access, scope) for i in ids)}
        plan = self.memory.plan_merge(
            ids, draft="concat", summary=summary, body=body, scope=access.scope_for(scope)
        )
        for planned in plan.notes:
            if (plan.scope, planned.id) not in shown:
                raise NotFound(f"no note {planned.id}")
        if plan.draft.private:  # only private originals make a private draft
            raise NotFound(f"no note {plan.keep}")
        if not confirm:
            return _merge_out(
                plan,
                None,
                "Nothing was changed: this is the plan. Show it to the user; to apply it, call "
                "memory_merge again with the same ids (and summary/body, if given) and "
                "confirm: true.",
            )
        try:
            result = self.memory.apply_merge(plan)
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
            for c in self.memory.sync_conflicts()
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
    plan: MergePlan, result: MergeResult | None, message: str, hidden: set[str] | None = None
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
        message=message,
    )


_DESCRIPTIONS: dict[str, str] = {
    "memory_search": (
        "Search the long-term memory notes of this project and user. Returns summaries, "
        "snippets and ids only (cheap): open a promising note with memory_read, or fetch "
        "matching passages with memory_retrieve. Search before writing a note, and try "
        "synonyms or the user's other language when nothing matches."
    ),
    "memory_retrieve": (
        "Passages (chunks) of notes best matching a query, each with its note id, revision, "
        "chunk hash, byte offsets, score and source. Use when snippets are not enough but "
        "whole notes would be too much."
    ),
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


def _wrap(fn: Callable[..., Any], limiter: anyio.CapacityLimiter) -> Callable[..., Any]:
    """An async tool running `fn` in a worker thread, with memdir errors mapped to clear
    tool errors; the signature is kept for the input schema.

    memdir's calls block on files and SQLite, so they leave the event loop free (pings,
    cancellation, other HTTP requests); `limiter` lets one call into the `Memory` run at
    a time, as before, since its index and sync state connections are not shared safely
    between concurrent calls. The caller's access travels along (`run_sync` copies the
    context)."""

    @functools.wraps(fn)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await anyio.to_thread.run_sync(
                functools.partial(fn, *args, **kwargs), limiter=limiter
            )
        except MemdirError as exc:
            raise _tool_error(exc) from None

    return call


def register_tools(server: MCPServer[Any], memory: Memory, limiter: anyio.CapacityLimiter) -> None:
    """Add every memdir tool to `server`, with its description and annotations.

    `limiter` (one token) is shared with every other handler that calls `memory`.
    """
    tools = MemoryTools(memory)
    for name in TOOL_NAMES:
        server.add_tool(
            _wrap(getattr(tools, name), limiter),
            name=name,
            title=name.replace("_", " "),
            description=_DESCRIPTIONS[name],
            annotations=_ANNOTATIONS.get(name, _READ),
            structured_output=True,
        )
