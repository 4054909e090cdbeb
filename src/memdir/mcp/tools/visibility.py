"""What a note tool may show: never a private note, never one outside the grant's scope.

A note that may not be shown is "no note" (`NotFound`), said exactly as for a note that
does not exist: its existence is not told.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from memdir import Memory, Note
from memdir.errors import NotFound
from memdir.mcp.access import Access

__all__ = [
    "check_history",
    "exists_hidden",
    "full_revision",
    "hidden_anywhere",
    "shown_note",
    "visible",
    "warnings_of",
]


def visible(note: Note, access: Access) -> bool:
    """Whether `note` may be shown under `access` (not private, in the grant's scope)."""
    return not note.private and access.covers(note.scope.value if note.scope else None)


def shown_note(memory: Memory, note_id: str, access: Access, scope: str | None = None) -> Note:
    """The current note `note_id`, or NotFound when it is private or outside the grant
    (said the same way as for a note that does not exist: its existence is not told)."""
    where = access.scope_for(scope)
    try:
        note = memory.read(note_id, scope=where)
    except NotFound:
        raise NotFound(f"no note {note_id}") from None
    if not visible(note, access):
        raise NotFound(f"no note {note_id}")
    return note


def check_history(memory: Memory, note_id: str, access: Access) -> None:
    """NotFound unless the note (or, once deleted, its last version) may be shown."""
    try:
        shown_note(memory, note_id, access)
        return
    except NotFound:
        pass
    where = access.scope_for(None)
    revisions = [e.revision for e in memory.notes.history(note_id, scope=where) if e.revision]
    if not revisions:
        raise NotFound(f"no note {note_id}")
    last = memory.read(note_id, revisions[-1], scope=where)
    if not visible(last, access) or exists_hidden(memory, note_id, access, where):
        raise NotFound(f"no note {note_id}")


def exists_hidden(memory: Memory, note_id: str, access: Access, scope: str | None = None) -> bool:
    """True when a note `note_id` exists (in `scope`, None: any) that may not be shown."""
    try:
        note = memory.read(note_id, scope=scope)
    except NotFound:
        return False
    return not visible(note, access)


def hidden_anywhere(memory: Memory, note_id: str, access: Access) -> bool:
    """True when a note `note_id` that may not be shown exists in any scope (a note to
    supersede: which scope counts is decided by the write, so any hidden one refuses)."""
    for scope in memory.scopes:
        try:
            note = memory.read(note_id, scope=scope)
        except NotFound:
            continue
        if not visible(note, access):
            return True
    return False


def full_revision(
    memory: Memory, note_id: str, prefix: str, scope: str | None, revs: list[str] | None = None
) -> str:
    """The whole revision a (unique) prefix given by the caller names."""
    if revs is None:
        revs = [e.revision for e in memory.notes.history(note_id, scope=scope) if e.revision]
    found = {r for r in revs if r.startswith(prefix)}
    return found.pop() if len(found) == 1 else prefix


@contextlib.contextmanager
def warnings_of(memory: Memory) -> Iterator[list[str]]:
    """The warnings the block raised, for its answer; taken off the memory's list, so
    the next call that meets the same condition (a full disk) says it again."""
    before = len(memory.warnings)
    found: list[str] = []
    try:
        yield found
    finally:
        found.extend(memory.warnings[before:])
        del memory.warnings[before:]
