"""Merging notes of one `Memory` (§6): a plan (the originals' revisions and a draft), and
applying it as one batch — the kept note rewritten, the others deleted, every
`[[deleted-id]]` link in the scope pointed at the kept note, each changed note backed
up, the merge recorded in the audit log; through the sync server first when sync is on.

Nothing is changed when any original changed since the plan was made, when a note
involved is held back by a sync conflict, or when the merged note would be refused by
the credential guard or the limits (here or on the server).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from memdir.config import Settings
from memdir.core import Note, Scope, is_valid_id, parse_note, parse_scope
from memdir.core.merging import MAX_MERGED, MergeDraft
from memdir.core.vocab import DraftKind, choices
from memdir.errors import Conflict, InvalidInput, MemdirError, NotFound, Refused
from memdir.memory.stores import Stores
from memdir.memory.syncing import Sync
from memdir.store import ScopeStore, check_secrets, revision_of
from memdir.tidy.merge import MergePlan, MergeResult, PlannedNote, relink

if TYPE_CHECKING:
    from memdir.extract.llm import ChatClient

__all__ = ["DRAFT_KINDS", "MERGE_REASON", "Merging"]

#: How a draft can be made: all originals concatenated, or by the `[llm]` model.
DRAFT_KINDS = choices(DraftKind)
#: The backup reason and audit action of a merge.
MERGE_REASON = "merge"


class Merging:
    """`plan` and `apply` merges over `Stores`; the replica and the chat client on first use."""

    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        *,
        sync: Sync,
        chat: Callable[[], ChatClient],
        clock: Callable[[], int],
    ) -> None:
        self.settings = settings
        self.stores = stores
        self._sync = sync
        self._chat = chat
        self._clock = clock

    # -- planning ------------------------------------------------------------------------

    def plan(
        self,
        ids: Iterable[str],
        *,
        draft: str = "concat",
        summary: str | None = None,
        body: str | None = None,
        scope: Scope | str | None = None,
    ) -> MergePlan:
        """A plan to merge `ids` (2–20 notes of one scope) into the oldest; nothing changes.

        `draft` is ``concat`` (every original, repeats said once) or ``llm`` (the `[llm]`
        model writes it; its answer is untrusted). `summary` and `body` replace the
        draft's. Raises InvalidInput (an id twice, fewer than two, a bad id or draft
        kind), NotFound, Refused (two scopes; a draft holding a credential), Conflict (a
        note held back by a sync conflict).
        """
        from memdir.tidy.merge import check_plan_ids, concat_draft, keeper

        if draft not in DRAFT_KINDS:
            raise InvalidInput(f"draft must be one of {', '.join(DRAFT_KINDS)} (got {draft!r})")
        wanted = _ids(ids)
        store, found = self._originals(wanted, parse_scope(scope))
        self._check_not_held(store.scope, [n.id for n, _ in found])
        self._check_not_superseded(store.scope, [n.id for n, _ in found])
        notes = [n for n, _ in found]
        keep = keeper(notes)
        warnings: tuple[str, ...] = ()
        if draft == "llm":
            from memdir.extract.merge_draft import llm_draft

            made, warnings = llm_draft(
                self._chat(), notes, keep, max_bytes=self.settings.max_note_bytes
            )
        else:
            made = concat_draft(notes)
        source = draft
        if summary is not None or body is not None:
            made = replace(
                made,
                summary=made.summary if summary is None else summary,
                body=made.body if body is None else body,
            )
            source = "edited"
        plan = MergePlan(
            scope=store.scope,
            keep=keep.id,
            notes=tuple(PlannedNote(n.id, rev, n.hash) for n, rev in found),
            draft=made,
            source=source,
            warnings=warnings,
        )
        check_plan_ids(plan)
        # The draft must make a note the store would write (guard, limits), checked now
        # rather than only when the plan is applied.
        store.admit(self._merged(plan, keep))
        return plan

    def _originals(
        self, ids: Sequence[str], scope: Scope | None
    ) -> tuple[ScopeStore, builtins.list[tuple[Note, str]]]:
        """The store and (note, revision) of each id; Refused when they are in two scopes."""
        found: builtins.list[tuple[ScopeStore, Note, str]] = []
        for typed in ids:
            store, note = self.stores.find(typed, scope)  # a unique prefix names its note
            note_id = note.id
            if any(n.id == note_id for _, n, _ in found):
                raise InvalidInput(
                    f"note {note_id} is named twice: a note cannot be merged with itself"
                )
            data = store.directory.read_bytes(note_id)
            if data is None:
                raise NotFound(f"no note {note_id}")
            found.append((store, parse_note(data, file_id=note_id), revision_of(data)))
        scopes = {s.scope for s, _, _ in found}
        if len(scopes) > 1:
            where = ", ".join(f"{n.id} ({s.scope.value})" for s, n, _ in found)
            raise Refused(
                f"notes of two scopes cannot be merged ({where}); move one first, or merge "
                "each scope's notes on their own"
            )
        return found[0][0], [(n, rev) for _, n, rev in found]

    def _check_not_superseded(self, scope: Scope, ids: Iterable[str]) -> None:
        """Refused when a note of the merge is superseded: merging it would bring its outdated
        statements back as current (or bury live ones in a superseded note)."""
        wanted = set(ids)
        by: dict[str, str] = {}
        for note in self.stores.all_notes(scope):
            for old in note.supersedes:
                if old in wanted:
                    by.setdefault(old, note.id)
        if by:
            named = ", ".join(f"{old} (superseded by {new})" for old, new in sorted(by.items()))
            raise Refused(
                f"a superseded note cannot be merged: {named}; merge only current notes, or "
                "forget the outdated one; nothing was merged"
            )

    def _check_not_held(self, scope: Scope, ids: Iterable[str]) -> None:
        held = sorted(i for s, i in self._sync.held() if s is scope and i in set(ids))
        if held:
            raise Conflict(
                f"note {', '.join(held)} is held back by a sync conflict; settle it first "
                "(memdir sync conflicts); nothing was merged"
            )

    def _merged(self, plan: MergePlan, keep: Note) -> Note:
        """The kept note as the plan's draft makes it (checked like any write)."""
        draft: MergeDraft = plan.draft
        gone = set(plan.deletes)
        stray = sorted(set(draft.supersedes) & (gone | {plan.keep}))
        if stray:
            raise InvalidInput(
                f"the merged note cannot supersede a note of the merge ({', '.join(stray)})"
            )
        note = Note(
            id=plan.keep,
            summary=draft.summary,
            body=relink(draft.body, gone, plan.keep),  # a given body may name them too
            type=draft.type,
            tags=draft.tags,
            created_at=keep.created_at or self._clock(),
            updated_at=self._clock(),
            supersedes=draft.supersedes,
            private=draft.private,
            extra=keep.extra,
        )
        check_secrets(note)
        return note

    # -- applying ------------------------------------------------------------------------

    def merge(
        self,
        ids: Iterable[str],
        *,
        draft: str = "concat",
        summary: str | None = None,
        body: str | None = None,
        scope: Scope | str | None = None,
    ) -> MergeResult:
        """Plan and apply a merge in one step (see `plan` and `apply`)."""
        return self.apply(self.plan(ids, draft=draft, summary=summary, body=body, scope=scope))

    def apply(self, plan: MergePlan) -> MergeResult:
        """Apply a merge plan: the oldest note's id is kept with the draft as its content,
        the others are deleted, `[[deleted-id]]` links in the scope point at the kept note,
        every changed note is backed up and the merge is audited; with sync on it goes to
        the server first. Refused with nothing changed if any original changed since."""
        from memdir.tidy.merge import check_plan_ids

        check_plan_ids(plan)
        store = self.stores.store(plan.scope)
        expected: dict[str, str] = {}
        originals: dict[str, Note] = {}
        for planned in plan.notes:
            data = store.directory.read_bytes(planned.id)
            if data is None:
                raise NotFound(
                    f"note {planned.id} is gone since the merge was planned; nothing was merged"
                )
            note = parse_note(data, file_id=planned.id)
            if revision_of(data) != planned.revision or note.hash != planned.hash:
                raise Conflict(
                    f"note {planned.id} changed since the merge was planned; nothing was merged "
                    "(plan it again)"
                )
            expected[planned.id] = planned.revision
            originals[planned.id] = note
        gone = set(plan.deletes)
        self._check_not_superseded(plan.scope, expected)
        merged = self._merged(plan, originals[plan.keep])
        writes: dict[str, Note | None] = {plan.keep: merged, **dict.fromkeys(gone)}
        now = self._clock()
        # Every note file of the scope, loaded or not (above memory.maxNotes too), read
        # once: the bytes whose revision the batch is checked against, so an edit after
        # this read is kept, never overwritten.
        for note_id in sorted(store.directory.ids_on_disk()):
            if note_id in expected:
                continue
            data = store.directory.read_bytes(note_id)
            if data is None or not any(f"[[{g}]]".encode() in data for g in gone):
                continue
            try:
                current = parse_note(data, file_id=note_id)
            except MemdirError:
                continue  # not parseable now: left alone (memdir doctor reports it)
            if not gone.intersection(current.links):
                continue
            body = relink(current.body, gone, plan.keep)
            writes[note_id] = replace(current, body=body, updated_at=now)
            expected[note_id] = revision_of(data)
        relinked = tuple(sorted(i for i in writes if i not in originals))
        self._check_not_held(plan.scope, writes)
        # One entry for the kept note and one per deleted note (the ids alone can outgrow
        # an audit field); the files' own writes and backups are logged with them.
        scope = plan.scope.value
        audit: builtins.list[tuple[str, dict[str, str | int | None]]] = [
            (
                MERGE_REASON,
                {
                    "scope": scope,
                    "note_id": plan.keep,
                    "note_hash": merged.hash,
                    "count": len(plan.notes),
                    "reason": f"{plan.source} draft",
                },
            )
        ]
        for note_id in sorted(gone):
            detail = f"merged into {plan.keep}"
            audit.append((MERGE_REASON, {"scope": scope, "note_id": note_id, "detail": detail}))
        batch = self._sync.commit_batch(
            writes,
            scope=plan.scope,
            reason="auto-merge" if plan.source == "auto" else MERGE_REASON,
            expected=expected,
            audit=audit,
        )
        if batch.skipped:  # the server took it; a note edited here meanwhile: nothing here yet
            gone, relinked = set(), ()
        return MergeResult(
            plan=plan,
            kept=plan.keep,
            deleted=tuple(sorted(gone)),
            relinked=relinked,
            backup_ids=tuple(batch.backup_ids),
            version=batch.version,
            skipped=tuple(batch.skipped),
        )


def _ids(ids: Iterable[str]) -> builtins.list[str]:
    if isinstance(ids, str):
        ids = ids.replace(",", " ").split()
    out: builtins.list[str] = []
    for note_id in ids:
        if not isinstance(note_id, str) or not is_valid_id(note_id):
            raise InvalidInput(f"{str(note_id)[:80]!r} is not a note id")
        if note_id in out:
            raise InvalidInput(
                f"note {note_id} is named twice: a note cannot be merged with itself"
            )
        out.append(note_id)
    if len(out) < 2:
        raise InvalidInput("a merge needs at least two different notes")
    if len(out) > MAX_MERGED:
        raise InvalidInput(f"a merge joins at most {MAX_MERGED} notes ({len(out)} given)")
    return out
