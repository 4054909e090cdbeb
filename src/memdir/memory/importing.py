"""Importing another system's memory (§5): a reader of `memdir.importers` turns the source
into items; this module gives them ids, resolves their links, runs every write check
(the credential guard, the limits) and writes them in batches.

Each imported note keeps a pointer to where it came from in its frontmatter
(``"source": "<kind>:<root>#<key>"``), so a second import of the same source finds the
notes the first one wrote: an unchanged item changes nothing, a changed one updates its
note with a backup of the version it replaces. memdir's own export keeps its ids
instead (and carries no pointer, so a round trip gives back the same files' content).

Writes go in batches (`BATCH` notes, one `ScopeStore.save_many` each: one lock, every
file fsynced, the batch undone whole if the disk fails part-way), so a killed import
leaves whole notes only and a rerun completes it.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
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
    "BATCH",
    "SOURCE_KEY",
    "ImportIssue",
    "ImportReport",
    "Importer",
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


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What `memdir import` did (or, with `dry_run`, would do)."""

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
    #: ids of the notes imported or updated
    notes: tuple[str, ...]
    updated_notes: tuple[str, ...] = ()
    by_type: dict[str, int] = field(default_factory=dict)
    by_scope: dict[str, int] = field(default_factory=dict)
    backup_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", _redacted(self.source))


#: Notes written per `save_many` call.
BATCH = 500
#: The frontmatter key holding an imported note's pointer to its source.
SOURCE_KEY = "source"
#: The backup reason of a note an import updates.
BACKUP_REASON = "import"

Progress = Callable[[str, int, int], None]


@dataclass(slots=True)
class _Planned:
    item: Imported
    scope: Scope
    id: str
    pointer: str | None
    existing: Note | None = None
    revision: str = ""  # of the existing file ("" none)
    note: Note | None = None


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
        progress: Progress | None = None,
    ) -> ImportReport:
        """Import another system's memory from `path` (§5): `kind` one of
        `memdir.importers.KINDS` (None: detected). Every note passes the credential guard
        (refusals are listed, the rest imported), keeps its source's timestamps and a
        pointer to its source; a second import of the same source changes nothing, an
        updated source updates its notes with a backup. `scope` overrides where notes go
        (default: by type, §1.3). With `dry_run` nothing is written."""
        from memdir.importers import detect, reader

        source = Path(path).expanduser().resolve()
        chosen = parse_scope(scope)
        if chosen is not None:
            self.stores.store(chosen)  # refuses a scope that is not open, before reading
        kind = kind or detect(source)
        reading: Reading = reader(kind).read(source)
        problems = [ImportIssue(p.origin, p.reason) for p in reading.problems]
        refused: builtins.list[ImportIssue] = []
        planned = self._plan(reading, chosen, problems)
        self._render(planned, refused)
        ready = [p for p in planned if p.note is not None]
        changed = [p for p in ready if p.existing is None or not _same(p.existing, p.note)]
        new = [p for p in changed if p.existing is None]
        updates = [p for p in changed if p.existing is not None]
        backups: builtins.list[BackupRecord] = []
        if not dry_run and changed:
            written = self._write(changed, kind, reading.root, refused, backups, progress)
            new = [p for p in new if p.id in written]
            updates = [p for p in updates if p.id in written]
        by_type: dict[str, int] = {}
        by_scope: dict[str, int] = {}
        for p in [*new, *updates]:
            assert p.note is not None
            name = p.note.type.value if p.note.type is not None else "none"
            by_type[name] = by_type.get(name, 0) + 1
            by_scope[p.scope.value] = by_scope.get(p.scope.value, 0) + 1
        return ImportReport(
            kind=kind,
            source=str(reading.root),
            dry_run=dry_run,
            imported=len(new),
            updated=len(updates),
            unchanged=len(ready) - len(changed),
            refused=tuple(refused),
            problems=tuple(problems),
            notes=tuple(p.id for p in [*new, *updates]),
            updated_notes=tuple(p.id for p in updates),
            by_type=by_type,
            by_scope=by_scope,
            backup_ids=tuple(r.id for r in backups),
        )

    # -- planning ------------------------------------------------------------------------

    def _plan(
        self, reading: Reading, chosen: Scope | None, problems: builtins.list[ImportIssue]
    ) -> builtins.list[_Planned]:
        """Each item's scope and id: the note an earlier import wrote, or a fresh id."""
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
        return out

    def _render(
        self, planned: builtins.list[_Planned], refused: builtins.list[ImportIssue]
    ) -> None:
        """Each planned item as the note to write, every check run: first with its links as
        their text (what the guard and the limits see), then — only among the items that
        passed — with links resolved to ids, so no link names a note that is not written.
        New notes count against `memory.maxNotes` in the order they come."""
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

    def _note(self, p: _Planned, body: str, now: int) -> Note:
        item = p.item
        extra = dict(p.existing.extra) if p.existing is not None else {}
        extra.update(item.extra)
        if p.pointer is not None:
            extra[SOURCE_KEY] = p.pointer
        created = (
            item.created_at
            or item.updated_at
            or (p.existing.created_at if p.existing else 0)
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


def _same(existing: Note, note: Note | None) -> bool:
    """True when importing `note` over `existing` would change nothing but timestamps."""
    return note is not None and existing.same_content(note)


def kinds() -> Iterable[str]:
    """The source kinds `memdir import --from` takes."""
    from memdir.importers import KINDS

    return tuple(KINDS)
