"""Importing another system's memory (§5): a reader of `memdir.importers` turns the source
into items; this module gives them ids, resolves their links, runs every write check
(the credential guard, the limits) and writes them in batches.

Each imported note keeps a pointer to where it came from in its frontmatter
(``"source": "<kind>:<root>#<key>"``) and the content hash of what the import wrote
(``"sourceHash"``), so a second import of the same source finds the notes the first one
wrote and knows which side changed since. memdir's own export keeps its ids instead (and
carries no pointer, so a round trip gives back the same files' content).

When an item meets a note that exists (by pointer or by id) and differs from it, the
import never simply replaces it; each such note gets a `Decision`, listed in the report.
With a ``sourceHash`` both sides share (the last import), it is a three-way choice:
only the source changed since: ``updated``; only the local note: ``kept-local``; both:
``kept-both``. Without one (memdir's export, notes imported before the hash was kept):

* the import holds an earlier version of the local note (its content is in the note's
  history), or its ``updatedAt`` is older: the local note is newer and is kept
  (``kept-local``);
* the import's ``updatedAt`` is newer: it replaces the local note, which is backed up
  first (``updated``) — importing a newer export of one's own notes updates them;
* neither can be told (the same ``updatedAt``, or a source that gives no time): both are
  kept, the import's version written beside the local note under a new id as sync's
  "keep both" does (``kept-both``; a later import finds that copy and writes no other).

With ``overwrite`` the import's version replaces the local note in every case, backed up
first (``overwritten``). An export carries no history of its own, so an import that is
newer by ``updatedAt`` is taken to descend from the local version; the backup is there
when it did not.

Writes go in batches (`BATCH` notes, one `ScopeStore.save_many` each: one lock, every
file fsynced, the batch undone whole if the disk fails part-way), so a killed import
leaves whole notes only and a rerun completes it.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.config import Settings
from memdir.core import (
    DEFAULT_SCOPE,
    Note,
    Scope,
    is_valid_id,
    make_id,
    parse_scope,
    render_note,
)
from memdir.core.vocab import WriteEvent
from memdir.errors import LimitExceeded, MemdirError
from memdir.memory.stores import Stores
from memdir.store import BackupRecord, ScopeStore, revision_of

if TYPE_CHECKING:
    from memdir.importers.base import Imported, Reading

__all__ = [
    "BASE_KEY",
    "BATCH",
    "SOURCE_KEY",
    "Decision",
    "ImportIssue",
    "ImportReport",
    "Importer",
    "NoteDecision",
]


@dataclass(frozen=True, slots=True)
class ImportIssue:
    """Something of an import source that did not become a note: where and why (a
    refusal names the guard's kind and line, never the value)."""

    source: str
    reason: str

    def __post_init__(self) -> None:
        # A source can be named by a credential (a Markdown file, an entity called after
        # a token): what is printed, in text or --json, never holds it.
        object.__setattr__(self, "source", _redacted(self.source))
        object.__setattr__(self, "reason", _redacted(self.reason))


def _redacted(text: str) -> str:
    from memdir.guard import redact

    return redact(text)


class Decision(StrEnum):
    """What an import did with an item whose note exists and differs from it."""

    #: the import is newer (or only the source changed since the last import): it replaced
    #: the local note, backed up first
    UPDATED = "updated"
    #: the local note is newer (or the import holds an earlier version of it): left as it is
    KEPT_LOCAL = "kept-local"
    #: which is newer cannot be told: the import's version was written beside it, new id
    KEPT_BOTH = "kept-both"
    #: `overwrite`: replaced although the local note was newer or diverged, backed up first
    OVERWRITTEN = "overwritten"


@dataclass(frozen=True, slots=True)
class NoteDecision:
    """The decision about one local note an imported item differed from: the note's id and
    scope, the item's origin, why, and (kept both) the id the import's version got."""

    id: str
    scope: str
    source: str
    decision: Decision
    reason: str
    new_id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", _redacted(self.source))


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What `memdir import` did (or, with `dry_run`, would do). Each item read ends in one
    of: imported, updated, unchanged, kept_local, kept_both, refused (or, not usable at
    all, in problems); `decisions` says why for every local note an item differed from."""

    kind: str
    source: str
    dry_run: bool
    imported: int
    updated: int
    unchanged: int
    #: items the credential guard or the limits refused
    refused: tuple[ImportIssue, ...]
    #: what the reader could not read (malformed lines, unreadable or empty files)
    problems: tuple[ImportIssue, ...]
    #: ids of the notes written: imported, updated, and the copies kept beside
    notes: tuple[str, ...]
    #: ids of the local notes replaced (each backed up first), overwritten ones included
    updated_notes: tuple[str, ...] = ()
    by_type: dict[str, int] = field(default_factory=dict)
    by_scope: dict[str, int] = field(default_factory=dict)
    backup_ids: tuple[str, ...] = ()
    #: local notes left as they are because they are newer than the import
    kept_local: int = 0
    #: items written beside a local note that differs where which is newer cannot be told
    kept_both: int = 0
    #: of `updated`: local notes that were newer or diverged, replaced by `overwrite`
    overwritten: int = 0
    decisions: tuple[NoteDecision, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", _redacted(self.source))


#: Notes written per `save_many` call.
BATCH = 500
#: The frontmatter key holding an imported note's pointer to its source.
SOURCE_KEY = "source"
#: The frontmatter key holding the content hash of the note as the import last wrote it.
BASE_KEY = "sourceHash"
#: The backup reason of a note an import updates.
BACKUP_REASON = "import"

Progress = Callable[[str, int, int], None]


#: What becomes of a planned item that passed every check (None: refused).
_NEW, _UNCHANGED = "new", "unchanged"
_WRITTEN = (_NEW, Decision.UPDATED, Decision.OVERWRITTEN, Decision.KEPT_BOTH)


@dataclass(slots=True)
class _Planned:
    item: Imported
    scope: Scope
    id: str
    pointer: str | None
    existing: Note | None = None
    revision: str = ""  # of the existing file ("" none)
    note: Note | None = None
    outcome: str = _NEW  # _NEW, _UNCHANGED or a Decision
    reason: str = ""
    beside: str | None = None  # kept both: the local note this item's copy stands beside


class Importer:
    """`Memory.importer`: imports of other memory systems' notes (§5) over `Stores`."""

    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        *,
        clock: Callable[[], int],
        warn: Callable[[str], None],
    ) -> None:
        self.settings = settings
        self.stores = stores
        self._clock = clock
        self._warn = warn

    def run(
        self,
        path: str | Path,
        kind: str | None = None,
        *,
        scope: Scope | str | None = None,
        dry_run: bool = False,
        overwrite: bool = False,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Import another system's memory from `path` (§5): `kind` one of
        `memdir.importers.KINDS` (None: detected). Every note passes the credential guard
        (refusals are listed, the rest imported), keeps its source's timestamps and a
        pointer to its source; a second import of the same source changes nothing. A
        local note the import differs from is updated (with a backup) only when the
        import is newer; a newer local note is kept, and one where which is newer cannot
        be told is kept beside the import's version (see the module doc). `overwrite`
        replaces every differing local note, each backed up first. `scope` overrides
        where notes go (default: by type, §1.3). With `dry_run` nothing is written."""
        from memdir.importers import detect, reader

        source = Path(path).expanduser().resolve()
        chosen = parse_scope(scope)
        if chosen is not None:
            self.stores.store(chosen)  # refuses a scope that is not open, before reading
        kind = kind or detect(source)
        reading: Reading = reader(kind).read(source)
        problems = [ImportIssue(p.origin, p.reason) for p in reading.problems]
        refused: builtins.list[ImportIssue] = []
        planned, taken = self._plan(reading, chosen, problems)
        self._render(planned, refused, taken, overwrite=overwrite)
        ready = [p for p in planned if p.note is not None]
        changed = [p for p in ready if p.outcome in _WRITTEN]
        backups: builtins.list[BackupRecord] = []
        if not dry_run and changed:
            written = self._write(changed, kind, reading.root, refused, backups, progress)
            ready = [p for p in ready if p.outcome not in _WRITTEN or p.id in written]
            changed = [p for p in changed if p.id in written]

        def count(*outcomes: str) -> int:
            return sum(1 for p in ready if p.outcome in outcomes)

        by_type: dict[str, int] = {}
        by_scope: dict[str, int] = {}
        for p in changed:
            assert p.note is not None
            name = p.note.type.value if p.note.type is not None else "none"
            by_type[name] = by_type.get(name, 0) + 1
            by_scope[p.scope.value] = by_scope.get(p.scope.value, 0) + 1
        replaced = (Decision.UPDATED, Decision.OVERWRITTEN)
        return ImportReport(
            kind=kind,
            source=str(reading.root),
            dry_run=dry_run,
            imported=count(_NEW),
            updated=count(*replaced),
            unchanged=count(_UNCHANGED),
            refused=tuple(refused),
            problems=tuple(problems),
            notes=tuple(p.id for p in changed),
            updated_notes=tuple(p.id for p in changed if p.outcome in replaced),
            by_type=by_type,
            by_scope=by_scope,
            backup_ids=tuple(r.id for r in backups),
            kept_local=count(Decision.KEPT_LOCAL),
            kept_both=count(Decision.KEPT_BOTH),
            overwritten=count(Decision.OVERWRITTEN),
            decisions=tuple(_decision(p) for p in ready if isinstance(p.outcome, Decision)),
        )

    # -- planning ------------------------------------------------------------------------

    def _plan(
        self, reading: Reading, chosen: Scope | None, problems: builtins.list[ImportIssue]
    ) -> tuple[builtins.list[_Planned], set[str]]:
        """Each item's scope and id: the note an earlier import wrote, the note of the id
        memdir's export keeps, or a fresh id; and the ids taken (casefolded)."""
        keeps_ids = reading.kind == "memdir"
        by_pointer: dict[str, tuple[Scope, Note]] = {}
        by_id: dict[tuple[Scope, str], Note] = {}
        for store in self.stores.chosen(None):
            for note in self.stores.all_notes(store.scope):
                by_id[(store.scope, note.id)] = note
                pointer = dict(note.extra).get(SOURCE_KEY)
                if isinstance(pointer, str):
                    by_pointer.setdefault(pointer, (store.scope, note))
        taken = self.stores.taken_ids()
        seen: set[str] = set()
        out: builtins.list[_Planned] = []
        root = str(reading.root)
        open_scopes = set(self.stores.scopes)
        fallback_warned = False
        for item in reading.items:
            if item.key in seen:
                problems.append(ImportIssue(item.origin or item.key, "a second item with this key"))
                continue
            seen.add(item.key)
            pointer = None if keeps_ids else f"{reading.kind}:{root}#{item.key}"
            scope = chosen or item.scope or DEFAULT_SCOPE.get(item.type, Scope.PROJECT)
            if scope not in open_scopes:
                scope = self.stores.scopes[0]
                if not fallback_warned:
                    self._warn(
                        f"no project is open: notes meant for it go to the {scope.value} scope"
                    )
                    fallback_warned = True
            found = by_pointer.get(pointer) if pointer is not None else None
            if found is not None:
                scope, existing = found
                plan = _Planned(item, scope, existing.id, pointer, existing)
            elif keeps_ids and item.id is not None and is_valid_id(item.id):
                same = by_id.get((scope, item.id))
                if same is None and item.id.casefold() in taken:
                    problems.append(
                        ImportIssue(
                            item.origin or item.key,
                            f"note {item.id} exists in another scope or differs only in case; "
                            "not imported",
                        )
                    )
                    continue
                plan = _Planned(item, scope, item.id, None, same)
            else:
                new_id = make_id(item.summary or "note", taken)
                plan = _Planned(item, scope, new_id, pointer)
            taken.add(plan.id.casefold())
            if plan.existing is not None:
                store = self.stores.store(plan.scope)
                data = store.directory.read_bytes(plan.id)
                plan.revision = revision_of(data) if data is not None else ""
            out.append(plan)
        return out, taken

    def _render(
        self,
        planned: builtins.list[_Planned],
        refused: builtins.list[ImportIssue],
        taken: set[str],
        *,
        overwrite: bool,
    ) -> None:
        """Each planned item as the note to write, every check run: first with its links as
        their text (what the guard and the limits see), then — only among the items that
        passed — with links resolved to ids, so no link names a note that is not written;
        last, what becomes of each item whose note exists (`_decide`). New notes count
        against `memory.maxNotes` in the order they come."""
        from memdir.importers.base import REF_PATTERN

        now = self._clock()
        room = {
            s.scope: self.settings.max_notes - len(s.directory.ids_on_disk())
            for s in self.stores.chosen(None)
        }
        for p in planned:
            plain = REF_PATTERN.sub(_ref_text(p.item), p.item.body) if p.item.refs else None
            try:
                note = self._note(p, plain if plain is not None else p.item.body, now)
                if p.existing is None and not room[p.scope] > 0:
                    raise LimitExceeded(
                        f"the {p.scope.value} scope would hold more than memory.maxNotes "
                        f"({self.settings.max_notes}) notes"
                    )
                self.stores.store(p.scope).admit(note)
            except MemdirError as exc:
                refused.append(ImportIssue(p.item.origin or p.item.key, str(exc)))
                continue
            if p.existing is None:
                room[p.scope] -= 1
            p.note = note
        # Links may name what will exist: the items admitted, and notes already on disk
        # (a refused update leaves its note as it was).
        names: dict[str, str] = {}
        for p in planned:
            if p.note is not None or p.existing is not None:
                for name in (p.item.key, *p.item.aliases, p.item.summary):
                    names.setdefault(name.casefold(), p.id)
        known = {i for s in self.stores.by_scope.values() for i in s.directory.ids_on_disk()}
        for p in planned:
            if p.note is None or not p.item.refs:
                continue
            body = REF_PATTERN.sub(_ref_link(p.item, names, known), p.item.body)
            try:
                note = replace(p.note, body=body)
                self.stores.store(p.scope).admit(note)
            except MemdirError as exc:  # the ids made it longer than the limit
                refused.append(ImportIssue(p.item.origin or p.item.key, str(exc)))
                p.note = None
                continue
            p.note = note
        for p in planned:
            if p.note is not None and p.pointer is not None:
                extra = {**dict(p.note.extra), BASE_KEY: p.note.hash}
                p.note = replace(p.note, extra=tuple(extra.items()))
        held: dict[Scope, dict[tuple[str, bool], str]] = {}
        for p in planned:
            if p.note is not None and p.existing is not None:
                self._decide(p, taken, room, held, refused, overwrite=overwrite)

    def _decide(
        self,
        p: _Planned,
        taken: set[str],
        room: dict[Scope, int],
        held: dict[Scope, dict[tuple[str, bool], str]],
        refused: builtins.list[ImportIssue],
        *,
        overwrite: bool,
    ) -> None:
        """What becomes of an item whose note exists: unchanged, or a `Decision`; kept both,
        the item becomes a new note beside the local one (as sync's "keep both" makes the
        server's copy: `make_id` from its summary), unless a note of the scope already
        holds exactly its content (an earlier import kept it beside)."""
        local, note = p.existing, p.note
        assert local is not None and note is not None
        if _without_base(local).same_content(_without_base(note)):
            p.outcome = _UNCHANGED  # a note imported before the base was kept is not rewritten
            return
        store = self.stores.store(p.scope)
        base = dict(local.extra).get(BASE_KEY)
        if p.pointer is None and base != dict(p.item.extra).get(BASE_KEY):
            base = None  # an export: a base only when both sides come from one import
        decision, p.reason = _compare(
            local,
            note,
            base=base if isinstance(base, str) else None,
            dated=p.item.updated_at is not None,
            earlier=lambda: {r.hash for r in store.history.revisions(local.id) if r.hash},
        )
        if overwrite and decision in (Decision.KEPT_LOCAL, Decision.KEPT_BOTH):
            decision, p.reason = Decision.OVERWRITTEN, f"{p.reason}; replaced (overwrite)"
        p.outcome = decision
        if decision is not Decision.KEPT_BOTH:
            return
        # Not the local note's keys, nor its pointer and base: a note of its own (a later
        # import of the source compares with the local note again, and finds this copy).
        copy = replace(note, extra=_unbased(p.item.extra, SOURCE_KEY))
        if p.scope not in held:  # content -> id of the scope's notes, read once
            notes = self.stores.all_notes(p.scope)
            held[p.scope] = {(n.hash, n.private): n.id for n in reversed(notes)}
        if held[p.scope].get((copy.hash, copy.private), local.id) != local.id:
            p.outcome, p.reason = _UNCHANGED, ""  # an earlier import kept it beside already
            return
        try:
            if not room[p.scope] > 0:
                raise LimitExceeded(
                    f"the {p.scope.value} scope would hold more than memory.maxNotes "
                    f"({self.settings.max_notes}) notes"
                )
            copy = replace(copy, id=make_id(copy.summary, taken))
            store.admit(copy)
        except MemdirError as exc:
            refused.append(ImportIssue(p.item.origin or p.item.key, str(exc)))
            p.note = None
            return
        room[p.scope] -= 1
        taken.add(copy.id.casefold())
        held[p.scope][(copy.hash, copy.private)] = copy.id
        p.beside, p.id, p.note = local.id, copy.id, copy
        p.existing, p.revision, p.pointer = None, "", None

    def _note(self, p: _Planned, body: str, now: int) -> Note:
        item = p.item
        extra = dict(p.existing.extra) if p.existing is not None else {}
        extra.update(item.extra)
        if p.pointer is not None:
            extra[SOURCE_KEY] = p.pointer
        # An update keeps the note's creation time unless the source says when it was made.
        created = (
            item.created_at
            or (p.existing.created_at if p.existing else 0)
            or item.updated_at
            or now
        )
        # An update from a source without times is dated now (unchanged notes are compared
        # without their times, so this dates only real changes).
        updated = item.updated_at or (now if p.existing is not None else created)
        return Note(
            id=p.id,
            summary=item.summary,
            body=body,
            type=item.type,
            tags=item.tags,
            created_at=created,
            updated_at=max(updated, created),
            supersedes=item.supersedes,
            private=item.private,
            extra=tuple(extra.items()),
        )

    # -- writing -------------------------------------------------------------------------

    def _write(
        self,
        changed: builtins.list[_Planned],
        kind: str,
        root: Path,
        refused: builtins.list[ImportIssue],
        backups: builtins.list[BackupRecord],
        progress: Progress | None,
    ) -> set[str]:
        """Write the changed notes in batches per scope; the ids written."""
        written: set[str] = set()
        total = len(changed)
        done = 0
        if progress is not None:
            progress("import", 0, total)
        for scope in self.stores.scopes:
            mine = [p for p in changed if p.scope is scope]
            store = self.stores.store(scope)
            for start in range(0, len(mine), BATCH):
                batch = mine[start : start + BATCH]
                outcomes = self._write_batch(store, batch, kind, root, backups)
                for p in batch:
                    outcome = outcomes.get(p.id)
                    if isinstance(outcome, MemdirError):
                        refused.append(ImportIssue(p.item.origin or p.item.key, str(outcome)))
                    elif outcome is not None:
                        written.add(p.id)
                done += len(batch)
                if progress is not None:
                    progress("import", done, total)
        return written

    def _write_batch(
        self,
        store: ScopeStore,
        batch: builtins.list[_Planned],
        kind: str,
        root: Path,
        backups: builtins.list[BackupRecord],
    ) -> dict[str, object]:
        items = []
        for p in batch:
            assert p.note is not None
            items.append((p.note, render_note(p.note), p.revision))
        detail = f"{kind} from {root}"
        audit: builtins.list[tuple[str, dict[str, str | int | None]]] = [
            ("import", {"scope": store.scope.value, "count": len(items), "detail": detail[:500]})
        ]
        return dict(
            store.save_many(
                items,
                event=WriteEvent.WRITE,
                backup_reason=BACKUP_REASON,
                audit=audit,
                backups=backups,
            )
        )


def _ref_text(item: Imported) -> Callable[[re.Match[str]], str]:
    """`[[ref:N]]` -> the text its ref keeps when it names nothing."""

    def text(match: re.Match[str]) -> str:
        index = int(match.group(1))
        return item.refs[index].text if index < len(item.refs) else match.group(0)

    return text


def _ref_link(
    item: Imported, names: dict[str, str], known: set[str]
) -> Callable[[re.Match[str]], str]:
    """`[[ref:N]]` -> `[[id]]` of the imported or existing note it names, else its text."""

    def link(match: re.Match[str]) -> str:
        index = int(match.group(1))
        if index >= len(item.refs):
            return match.group(0)
        ref = item.refs[index]
        target = names.get(ref.target.casefold())
        if target is None and ref.target in known:
            target = ref.target
        return f"[[{target}]]" if target is not None else ref.text

    return link


def _unbased(extra: tuple[tuple[str, object], ...], *also: str) -> tuple[tuple[str, object], ...]:
    """`extra` without the base hash (and the keys `also` names)."""
    return tuple((k, v) for k, v in extra if k != BASE_KEY and k not in also)


def _without_base(note: Note) -> Note:
    return replace(note, extra=_unbased(note.extra))


def _compare(
    local: Note,
    imported: Note,
    *,
    base: str | None,
    dated: bool,
    earlier: Callable[[], set[str]],
) -> tuple[Decision, str]:
    """Which of two differing versions of a note wins, and why. With `base` (the content
    hash both come from) the side that changed since; else the history of the local note
    (an import holding one of its earlier versions is older, whatever its times say),
    then ``updatedAt`` when the source gives one."""
    if base is not None:
        if imported.hash == base:
            return (
                Decision.KEPT_LOCAL,
                "the local note changed since the last import; the source did not",
            )
        if local.hash == base:
            return (
                Decision.UPDATED,
                "the source changed since the last import; the local note did not",
            )
        return (
            Decision.KEPT_BOTH,
            "both the source and the local note changed since the last import",
        )
    if imported.hash != local.hash and imported.hash in earlier():
        return Decision.KEPT_LOCAL, "the import holds an earlier version of the local note"
    if not dated:
        return (
            Decision.KEPT_BOTH,
            "the source does not say when it changed; which is newer is unknown",
        )
    ours, theirs = _when(local.updated_at), _when(imported.updated_at)
    if imported.updated_at > local.updated_at:
        return Decision.UPDATED, f"the import is newer (updated {theirs}; local {ours})"
    if imported.updated_at < local.updated_at:
        return Decision.KEPT_LOCAL, f"the local note is newer (updated {ours}; import {theirs})"
    return Decision.KEPT_BOTH, f"both say they were updated {ours}; which is newer is unknown"


def _when(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"


def _decision(p: _Planned) -> NoteDecision:
    assert isinstance(p.outcome, Decision)
    local = p.beside if p.beside is not None else p.id
    new_id = p.id if p.beside is not None else None
    origin = p.item.origin or p.item.key
    return NoteDecision(local, p.scope.value, origin, p.outcome, p.reason, new_id)


def kinds() -> Iterable[str]:
    """The source kinds `memdir import --from` takes."""
    from memdir.importers import KINDS

    return tuple(KINDS)
