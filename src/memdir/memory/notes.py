"""Writing and reading notes across the scopes of one `Memory`: remember, supersede, read,
list, history, diffs and links.

A note supersedes notes of its own scope only: search marks a superseded note per scope
(the index of one scope knows nothing of the other), and a note of one scope replacing
a note of the other would hide a fact from whoever sees only one of them. Supersedes
never form a cycle, which would hide every note on it.
"""

from __future__ import annotations

import builtins
import difflib
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from memdir.core import (
    DEFAULT_SCOPE,
    Note,
    NoteType,
    Scope,
    make_id,
    normalize_tags,
    parse_note,
    parse_scope,
    parse_type,
    validate_id,
)
from memdir.core.links import Link, LinkReport
from memdir.errors import Conflict, InvalidInput, Locked, NotFound, ParseError, Refused
from memdir.memory.stores import Stores
from memdir.store import SaveOutcome, ScopeStore, check_secrets, revision_of
from memdir.store.notes import CurrentNote, HistoryEntry, SupersedeResult, WriteResult

if TYPE_CHECKING:
    from memdir.retrieve import Neighbour

__all__ = ["Notebook"]

#: The notes nearest to a note just written (the retrieval layer computes them).
Nearest = Callable[[Note], Sequence["Neighbour"]]

#: The reason on the backup of the superseding note's version that `supersede` replaced.
SUPERSEDE_BACKUP_REASON = "supersede"

_log = logging.getLogger("memdir.store")


class _Fields(NamedTuple):
    """The fields a `remember` call gives (None: keep the existing note's value)."""

    summary: str
    body: str | None
    type: NoteType | None
    clear_type: bool
    tags: tuple[str, ...] | None
    supersedes: tuple[str, ...] | None
    private: bool | None


class Notebook:
    """remember, supersede, read, list, history, diff and links over `Stores`."""

    def __init__(self, stores: Stores, *, clock: Callable[[], int], nearest: Nearest) -> None:
        self.stores = stores
        self._clock = clock
        self._nearest = nearest

    # -- writing ------------------------------------------------------------------------

    def remember(
        self,
        summary: str,
        body: str | None = None,
        type: NoteType | str | None = None,
        tags: str | Iterable[str] | None = None,
        scope: Scope | str | None = None,
        id: str | None = None,
        *,
        supersedes: Iterable[str] | None = None,
        private: bool | None = None,
        expect_revision: str | None = None,
        backup_reason: str | None = None,
    ) -> WriteResult:
        """Create a note, or update the note `id`; see WriteResult for what comes back.

        On update, every argument left as None keeps its value (body, type, tags,
        supersedes, private); pass "" or () to clear. Unknown frontmatter keys are kept.
        `supersedes` names notes of the note's own scope that it replaces; an id it does
        not list yet is refused like in `supersede` (unknown, itself, other scope, cycle).
        `private` notes are never indexed, recalled or shown over MCP. `expect_revision`
        ("" for 'must not exist') refuses the write (Conflict, nothing written) when the
        note's file changed since the caller read that revision — an editor's save, never
        last-writer-wins; `backup_reason` backs up the version an update replaces.

        An error raised means nothing was written: once the note is on disk this returns.
        The nearest notes are looked up after the write and are left empty when that fails
        (e.g. the store was locked meanwhile) rather than failing the call.
        """
        note_type = parse_type(type)
        clear_type = type == ""
        wanted_scope = parse_scope(scope)
        tag_list = normalize_tags(tags) if tags is not None else None
        existing: Note | None = None
        if id is not None:
            validate_id(id)
            for store in self.stores.chosen(wanted_scope):
                existing = store.get(id)
                if existing is not None:
                    break
            if existing is None and wanted_scope is not None:
                for other in self.stores.scopes:
                    if other is not wanted_scope and self.stores.store(other).get(id) is not None:
                        raise Conflict(f"note {id} already exists in the {other.value} scope")
        target = wanted_scope or (existing.scope if existing else None) or DEFAULT_SCOPE[note_type]
        if wanted_scope is None and note_type is None and target not in self.stores.scopes:
            # No project here: an untyped note is a user note (a typed one keeps its
            # type's scope, and is refused, rather than quietly changing where it lives).
            target = Scope.USER
        store = self.stores.store(target)
        replaces = None
        if supersedes is not None:  # a generator must not be consumed twice below
            given = (supersedes,) if isinstance(supersedes, str) else tuple(supersedes)
            replaces = tuple(self._superseded_id(old, target) for old in given)
        fields = _Fields(summary, body, note_type, clear_type, tag_list, replaces, private)
        # Validate and guard before taking the lock: the lock creates the directory, and a
        # refused write must leave nothing behind, not even an empty MEMORY/.
        composed = _compose(fields, id or "note", existing, self._clock())
        store.check_size(composed, existing)  # before the guard: it is slow on a huge body
        check_secrets(composed)
        self._check_supersedes(store, id, _added(replaces, existing))
        with store.lock():
            if id is not None:
                existing = store.get(id)
            if expect_revision is not None:
                data = store.directory.read_bytes(id) if id is not None else None
                if (revision_of(data) if data is not None else "") != expect_revision:
                    raise Conflict(f"note {id} changed since it was read; nothing was written")
            self._check_supersedes(store, id, _added(replaces, existing))
            note_id = id or make_id(summary, self.stores.taken_ids())
            note = _compose(fields, note_id, existing, self._clock())
            if existing is not None and existing.same_content(note):
                data = store.directory.read_bytes(note_id) or b""
                return self._write_result(existing, False, False, revision_of(data))
            outcome = store.save(
                note, backup_reason=backup_reason if existing is not None else None
            )
        return self._write_result(outcome.note, existing is None, True, outcome.revision)

    def supersede(self, old: str, *, by: str, scope: Scope | str | None = None) -> SupersedeResult:
        """Mark note `old` as replaced by note `by`: one write adds `old` to `by`'s supersedes.

        `old` stays on disk and in history but is left out of recall and the prompt index,
        and search marks it and ranks `by` above it. Both notes must be in one scope
        (`scope`, None: wherever `by` is, project first). Raises InvalidInput for the same
        id twice, NotFound for an unknown note, Refused across scopes or for a cycle (`old`
        already supersedes `by`, directly or through other notes); when `by` already
        supersedes `old`, nothing is written and `changed` is False.
        """
        if old == by:
            raise InvalidInput(f"a note cannot supersede itself ({old})")
        store, found = self.stores.find(by, scope)
        by = found.id
        old = self._superseded_id(old, store.scope)
        if old == by:
            raise InvalidInput(f"a note cannot supersede itself ({old})")
        with store.lock():
            newer = store.get(by)
            if newer is None:
                raise NotFound(f"no note {by}")
            older = self._superseded(store, old)
            if old in newer.supersedes:
                data = store.directory.read_bytes(by) or b""
                return SupersedeResult(older, newer, False, revision_of(data), store.scope)
            _check_cycle(store, older, by)
            fields = _Fields(newer.summary, None, None, False, None, (*newer.supersedes, old), None)
            outcome = store.save(
                _compose(fields, by, newer, self._clock()), backup_reason=SUPERSEDE_BACKUP_REASON
            )
        return SupersedeResult(older, outcome.note, True, outcome.revision, store.scope)

    def _superseded_id(self, old: str, scope: Scope) -> str:
        """The full id of note `old` (a unique prefix of one of `scope`); else `old` as given,
        which `_superseded` then refuses as unknown or of the other scope."""
        try:
            return self.stores.find(old, scope)[1].id
        except NotFound:
            validate_id(old)
            return old

    def _check_supersedes(self, store: ScopeStore, note_id: str | None, ids: Iterable[str]) -> None:
        """Check the ids note `note_id` (None: a new note) is to supersede: each is a note of
        its own scope other than itself, and none already supersedes it (a cycle)."""
        for old in ids:
            validate_id(old)
            if old == note_id:
                raise InvalidInput(f"a note cannot supersede itself ({old})")
            older = self._superseded(store, old)
            if note_id is not None:
                _check_cycle(store, older, note_id)

    def _superseded(self, store: ScopeStore, old: str) -> Note:
        """Note `old` of `store`'s scope, to be superseded; NotFound, or Refused when it is
        a note of the other scope."""
        older = store.get(old)
        if older is not None:
            return older
        here = store.scope.value
        for other in self.stores.scopes:
            if other is not store.scope and self.stores.store(other).get(old) is not None:
                raise Refused(
                    f"note {old} is in the {other.value} scope, the superseding note in the "
                    f"{here} scope: a note supersedes notes of its own scope only"
                )
        raise NotFound(f"no note {old} in the {here} scope")

    def save_over(
        self, note: Note, *, scope: Scope, revision: str, backup_reason: str
    ) -> SaveOutcome:
        """Replace note `note.id` only if its file is still at `revision` (else Conflict).

        The replaced version is backed up first with `backup_reason`; for a caller that
        showed someone (a model, a person) a version and now writes their change to it.
        """
        store = self.stores.store(scope)
        return store.save(note, backup_reason=backup_reason, expect_revision=revision)

    def _write_result(self, note: Note, created: bool, changed: bool, rev: str) -> WriteResult:
        from memdir.retrieve import DUPLICATE_THRESHOLD

        nearest = self._neighbours(note)
        # A note it supersedes is near by design: that is no duplicate to update instead.
        duplicate = next(
            (
                n
                for n in nearest
                if n.score >= DUPLICATE_THRESHOLD and n.note_id not in note.supersedes
            ),
            None,
        )
        dangling = tuple(t for t in note.links if t != note.id and not self.stores.exists(t))
        return WriteResult(
            note=note,
            created=created,
            changed=changed,
            revision=rev,
            nearest=nearest,
            likely_duplicate=duplicate is not None,
            dangling_links=dangling,
            duplicate_of=duplicate.note_id if duplicate else None,
        )

    def _neighbours(self, note: Note) -> tuple[Neighbour, ...]:
        """The notes nearest to `note`, or none when they cannot be looked up now.

        Called once the note is on disk: a write that landed is never reported as failed
        because this advice could not be given — the store locked meanwhile (by another
        process or the inactivity timeout, between the write and the index lookup), a
        damaged index, a neighbour's file unreadable.
        """
        try:
            return tuple(self._nearest(note))
        except Locked:
            _log.info(
                "note %s was written; the store was locked before its neighbours were found",
                note.id,
            )
        except Exception:
            _log.exception("note %s was written; its nearest notes could not be found", note.id)
        return ()

    # -- reading ------------------------------------------------------------------------

    def read(
        self,
        id: str,
        revision: str | None = None,
        *,
        scope: Scope | str | None = None,
        hide_private: bool = True,
    ) -> Note:
        """A note by id or unique prefix (project scope first), or one of its past revisions
        (of a note forgotten since: by its exact id). See `Stores.find` for `hide_private`."""
        if revision is None:
            store, note = self.stores.find(id, scope, hide_private=hide_private)
            data = store.directory.read_bytes(note.id)
            return store.with_edit_time(note, data) if data is not None else note
        id = self.stores.resolve(id, scope, hide_private=hide_private, kept=True)
        store, rev = self._revision(id, revision, scope)
        data = store.history.read(rev)
        try:
            return parse_note(data, file_id=id).located(store.scope, store.directory.file_for(id))
        except ParseError as exc:
            raise ParseError(f"revision {rev[:12]} of {id} cannot be parsed: {exc}") from None

    def read_current(
        self, id: str, scope: Scope | str | None = None, *, hide_private: bool = True
    ) -> CurrentNote:
        """The note `id` (or unique prefix) parsed from the very bytes whose revision comes
        with it."""
        store, found = self.stores.find(id, scope, hide_private=hide_private)
        id = found.id
        data = store.directory.read_bytes(id)
        if data is None:
            raise NotFound(f"no note {id}")
        note = parse_note(data, file_id=id).located(store.scope, store.directory.file_for(id))
        return CurrentNote(store.with_edit_time(note, data), store.scope, revision_of(data))

    def _revision(
        self, note_id: str, revision: str, scope: Scope | str | None
    ) -> tuple[ScopeStore, str]:
        validate_id(note_id)
        last: NotFound | None = None
        for store in self.stores.chosen(scope):
            try:
                return store, store.history.resolve(note_id, revision)
            except NotFound as exc:
                last = exc
        raise last or NotFound(f"note {note_id} has no revision {revision}")

    def list(
        self,
        scope: Scope | str | None = None,
        type: NoteType | str | None = None,
        tag: str | None = None,
    ) -> builtins.list[Note]:
        """Notes, most recently updated first, filtered by scope, type and tag."""
        wanted_type = parse_type(type)
        wanted_tag = tag.casefold() if tag else None
        notes = [
            n
            for n in self.stores.all_notes(scope)
            if (wanted_type is None or n.type is wanted_type)
            and (wanted_tag is None or wanted_tag in {t.casefold() for t in n.tags})
        ]
        notes.sort(key=lambda n: (-n.updated_at, n.id))
        return notes

    def history(
        self, id: str, *, scope: Scope | str | None = None, hide_private: bool = True
    ) -> builtins.list[HistoryEntry]:
        """Every version of a note recorded on this machine, oldest first (`id` may be a
        unique prefix of a note on disk; a note forgotten since is named by its exact id)."""
        id = self.stores.resolve(id, scope, hide_private=hide_private, kept=True)
        for store in self.stores.chosen(scope):
            current = store.directory.read_bytes(id)
            if current is not None:
                store.scan()
            revisions = store.history.revisions(id)
            if revisions:
                now = revision_of(current) if current is not None else None
                return [
                    HistoryEntry(r.rev, r.ts, r.event, r.hash, r.rev is not None and r.rev == now)
                    for r in revisions
                ]
        raise NotFound(f"no history for note {id}")

    def diff(
        self,
        id: str,
        a: str | None = None,
        b: str | None = None,
        *,
        scope: Scope | str | None = None,
        hide_private: bool = True,
    ) -> str:
        """A unified diff between two revisions (default: `b`'s previous version and `b`, by
        default the current one); the note is looked up in `scope` (None: project, then user)."""
        id = self.stores.resolve(id, scope, hide_private=hide_private, kept=True)
        revs = [e.revision for e in self.history(id, scope=scope) if e.revision]
        if not revs:
            raise NotFound(f"no stored versions of note {id}")
        right = self.read(id, b, scope=scope) if b else self.stores.find(id, scope)[1]
        if a:
            left = self.read(id, a, scope=scope)
        else:
            right_rev = revision_of(self._bytes(id, b, scope))
            if right_rev in revs:  # the version recorded just before b, not the latest other one
                revs = revs[: len(revs) - 1 - revs[::-1].index(right_rev)]
            older = [r for r in revs if r != right_rev]
            if not older:
                return ""
            left = self.read(id, older[-1], scope=scope)
        return "".join(
            difflib.unified_diff(
                _display(left).splitlines(keepends=True),
                _display(right).splitlines(keepends=True),
                fromfile=f"{id} (a)",
                tofile=f"{id} (b)",
            )
        )

    def _bytes(self, note_id: str, revision: str | None, scope: Scope | str | None) -> bytes:
        if revision:
            store, rev = self._revision(note_id, revision, scope)
            return store.history.read(rev)
        store, _ = self.stores.find(note_id, scope)
        return store.directory.read_bytes(note_id) or b""

    def links(
        self, id: str, *, scope: Scope | str | None = None, hide_private: bool = False
    ) -> LinkReport:
        """Outgoing links (resolved project first, then user), backlinks and dangling links.

        The note is looked up in `scope` (None: project, then user). Links to notes outside
        `scope` or (with `hide_private`) to private notes are shown without their scope and
        summary; such notes are not listed as backlinks.
        """
        _, note = self.stores.find(id, scope, hide_private=hide_private)
        id = note.id
        notes = self.stores.all_notes()
        wanted = parse_scope(scope)

        def shown(n: Note) -> bool:
            return (wanted is None or n.scope is wanted) and not (hide_private and n.private)

        index = {(n.scope, n.id): n for n in notes}
        outgoing: builtins.list[Link] = []
        hidden: builtins.list[str] = []
        for target in note.links:
            link = self.stores.resolve_link(target, index)
            if link.scope is not None and not shown(index[(link.scope, target)]):
                link = Link(target, None, None)
                hidden.append(target)
            outgoing.append(link)
        backlinks = tuple(
            Link(n.id, n.scope, n.summary)
            for n in notes
            if id in n.links and n.id != id and shown(n)
        )
        newer = tuple(n.id for n in notes if id in n.supersedes and n.id != id and shown(n))
        return LinkReport(id, tuple(outgoing), backlinks, hidden=tuple(hidden), superseded_by=newer)


def _added(ids: tuple[str, ...] | None, existing: Note | None) -> tuple[str, ...]:
    """The ids of `ids` that `existing` does not supersede yet (only those are checked)."""
    if ids is None:
        return ()
    kept = set(existing.supersedes) if existing is not None else set()
    return tuple(i for i in ids if i not in kept)


def _check_cycle(store: ScopeStore, older: Note, note_id: str) -> None:
    """Refused when `older` supersedes note `note_id`, directly or through other notes."""
    seen: set[str] = set()
    pending = [older]
    while pending:
        note = pending.pop()
        if note.id in seen:
            continue
        seen.add(note.id)
        if note_id in note.supersedes:
            # Only the two ids the caller named: the chain may run through notes it may
            # not see (a private note, for an MCP client).
            raise Refused(
                f"note {older.id} already supersedes {note_id} (directly or through other "
                f"notes): {note_id} superseding {older.id} would make a cycle"
            )
        for old in note.supersedes:
            if old not in seen:
                found = store.get(old)
                if found is not None:
                    pending.append(found)


def _compose(fields: _Fields, note_id: str, existing: Note | None, now: int) -> Note:
    """The note `remember` writes: given fields, the rest kept from `existing`."""
    summary, body, note_type, clear_type, tags, supersedes, private = fields
    return Note(
        id=note_id,
        summary=summary,
        body=body if body is not None else (existing.body if existing else ""),
        type=note_type if note_type is not None or clear_type or not existing else existing.type,
        tags=tags if tags is not None else (existing.tags if existing else ()),
        created_at=existing.created_at if existing else now,
        updated_at=max(now, existing.updated_at + 1) if existing else now,
        supersedes=tuple(supersedes)
        if supersedes is not None
        else (existing.supersedes if existing else ()),
        private=private if private is not None else (existing.private if existing else False),
        extra=existing.extra if existing else (),
    )


def _display(note: Note) -> str:
    head = [f"summary: {note.summary}"]
    if note.type is not None:
        head.append(f"type: {note.type.value}")
    head.append(f"tags: {', '.join(note.tags)}")
    if note.supersedes:
        head.append(f"supersedes: {', '.join(note.supersedes)}")
    return "\n".join(head) + "\n\n" + (note.body + "\n" if note.body else "")
