"""The note tools: read a note (now, at a revision), its history, diffs and links; write
and delete one.

Every one of them hides what the caller may not see (`memdir.mcp.tools.visibility`): a
private note, or one outside the grant's scope, is "no note".
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from memdir import Memory
from memdir.core import AccessLevel, NoteType, choices
from memdir.errors import NotFound
from memdir.guidance import GUIDANCE
from memdir.mcp.models import (
    DeleteOut,
    DiffOut,
    HistoryEntryOut,
    HistoryOut,
    LinksOut,
    NoteOut,
    WriteOut,
)
from memdir.mcp.tools.arguments import NoteId, ScopeArg, TypeArg, ValidId
from memdir.mcp.tools.record import DELETES, READS, WRITES, Tool, caller
from memdir.mcp.tools.visibility import (
    check_history,
    exists_hidden,
    full_revision,
    hidden_anywhere,
    shown_note,
    visible,
)

__all__ = [
    "DELETE",
    "DIFF",
    "HISTORY",
    "LINKS",
    "MAX_SUPERSEDES",
    "READ",
    "READ_REVISION",
    "WRITE",
    "memory_delete",
    "memory_diff",
    "memory_history",
    "memory_links",
    "memory_read",
    "memory_read_revision",
    "memory_write",
]

#: At most this many notes superseded by one `memory_write` (a note replaces a few facts).
MAX_SUPERSEDES = 20


def memory_read(
    memory: Memory,
    id: NoteId,
    scope: Annotated[ScopeArg | None, Field(description="default: project, then user")] = None,
) -> NoteOut:
    access = caller()
    note = shown_note(memory, id, access, scope)
    where = note.scope.value if note.scope else access.scope_for(scope)
    current = memory.notes.read_current(note.id, scope=where)
    # Changed between the two reads: the newer one is answered, if it may be shown.
    if current.note.hash != note.hash and not visible(current.note, access):
        raise NotFound(f"no note {id}")
    return NoteOut.of(current.note, revision=current.revision)


READ = Tool(
    "memory_read",
    memory_read,
    description="Read one whole memory note by id (summary, type, tags, body, links).",
    annotations=READS,
    access=AccessLevel.READ,
)


def memory_read_revision(
    memory: Memory,
    id: NoteId,
    revision: Annotated[str, Field(description="A revision (hex prefix) from memory_history.")],
) -> NoteOut:
    access = caller()
    check_history(memory, id, access)
    where = access.scope_for(None)
    note = memory.read(id, revision, scope=where)
    if not visible(note, access):
        raise NotFound(f"no note {id}")
    return NoteOut.of(note, revision=full_revision(memory, id, revision, where))


READ_REVISION = Tool(
    "memory_read_revision",
    memory_read_revision,
    description="Read a past revision of a note (revisions come from memory_history).",
    annotations=READS,
    access=AccessLevel.READ,
)


def memory_history(memory: Memory, id: NoteId) -> HistoryOut:
    access = caller()
    check_history(memory, id, access)
    entries = memory.notes.history(id, scope=access.scope_for(None))
    return HistoryOut(id=id, entries=[HistoryEntryOut.of(e) for e in entries])


HISTORY = Tool(
    "memory_history",
    memory_history,
    description="Every version of a note recorded on this machine, oldest first.",
    annotations=READS,
    access=AccessLevel.READ,
)


def memory_diff(
    memory: Memory,
    id: NoteId,
    a: Annotated[str | None, Field(description="older revision (default: previous)")] = None,
    b: Annotated[str | None, Field(description="newer revision (default: current)")] = None,
) -> DiffOut:
    access = caller()
    where = access.scope_for(None)
    shown_note(memory, id, access)
    for rev in (a, b):
        if rev is not None and not visible(memory.read(id, rev, scope=where), access):
            raise NotFound(f"no note {id}")
    diff = memory.notes.diff(id, a, b, scope=where)
    # The revisions compared, as `Memory.diff` chooses them: `b` (default: the file now)
    # against `a` (default: the version recorded just before `b`; none for a first one).
    revs = [e.revision for e in memory.notes.history(id, scope=where) if e.revision]
    right = (
        full_revision(memory, id, b, where, revs)
        if b
        else memory.notes.read_current(id, scope=where).revision
    )
    if a:
        left: str | None = full_revision(memory, id, a, where, revs)
    else:
        before = revs[: len(revs) - 1 - revs[::-1].index(right)] if right in revs else revs
        older = [r for r in before if r != right]
        left = older[-1] if older else None
    return DiffOut(id=id, a=left, b=right, diff=diff)


DIFF = Tool(
    "memory_diff",
    memory_diff,
    description=(
        "A unified diff between two revisions of a note (default: previous version → current)."
    ),
    annotations=READS,
    access=AccessLevel.READ,
)


def memory_links(memory: Memory, id: NoteId) -> LinksOut:
    access = caller()
    shown_note(memory, id, access)
    report = memory.notes.links(id, scope=access.scope_for(None), hide_private=True)
    return LinksOut.of(report)


LINKS = Tool(
    "memory_links",
    memory_links,
    description="A note's outgoing [[links]], its backlinks, and links to missing notes.",
    annotations=READS,
    access=AccessLevel.READ,
)


def memory_write(
    memory: Memory,
    summary: Annotated[str, Field(description="One line that states the fact itself.")],
    body: Annotated[
        str | None, Field(description="Markdown: why it matters, how to apply it, [[links]].")
    ] = None,
    type: Annotated[TypeArg | None, Field(description=", ".join(choices(NoteType)))] = None,
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
    access = caller()
    access.require_write("memory_write")
    where = access.scope_for(scope)
    if id is not None and exists_hidden(memory, id, access):
        raise NotFound(f"no note {id}")
    for old in supersedes or ():
        if hidden_anywhere(memory, old, access):
            raise NotFound(f"no note {old}")
    result = memory.remember(
        summary, body, type=type, tags=tags, scope=where, id=id, supersedes=supersedes
    )
    # Neighbours come from the index, which never holds private notes.
    shown = {n.note_id for n in result.nearest if access.covers(n.scope)}
    return WriteOut.of(result, shown)


WRITE = Tool(
    "memory_write",
    memory_write,
    description=(
        "Create a memory note, or update one (give its id). Returns the nearest existing notes "
        "and a likely-duplicate flag: when set, update that note instead. The credential "
        "guard refuses secrets.\n\n" + GUIDANCE
    ),
    annotations=WRITES,
    access=AccessLevel.READ_WRITE,
)


def memory_delete(
    memory: Memory,
    id: NoteId,
    confirm: Annotated[
        bool, Field(description="Must be true: set it only after the user agreed.")
    ] = False,
) -> DeleteOut:
    access = caller()
    access.require_delete("memory_delete", confirm)
    note = shown_note(memory, id, access)
    scope = note.scope.value if note.scope else None
    result = memory.forget(id, scope=scope, expect_hash=note.hash)
    return DeleteOut.of(result)


DELETE = Tool(
    "memory_delete",
    memory_delete,
    description=(
        "Delete a memory note (a backup is kept; `memdir backups restore` undoes it). Only "
        "with confirm: true, after the user agreed to deleting this note."
    ),
    annotations=DELETES,
    access=AccessLevel.READ_WRITE_DELETE,
)
