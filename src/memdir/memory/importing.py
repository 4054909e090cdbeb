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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
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
from memdir.errors import MemdirError
from memdir.memory.stores import Stores
from memdir.results import ImportIssue, ImportReport
from memdir.store import BackupRecord, ScopeStore, revision_of

if TYPE_CHECKING:
    from memdir.importers.base import Imported, Reading

__all__ = ["BATCH", "SOURCE_KEY", "Importer"]

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
    """`run` one import over `Stores`."""

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
        path: Path,
        kind: str | None = None,
        scope: Scope | str | None = None,
        *,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Import the source at `path` (its kind detected when None)."""
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
        """Each planned item as the note to write (links resolved, every check run)."""
        from memdir.importers.base import REF_PATTERN

        names: dict[str, str] = {}
        for p in planned:
            for name in (p.item.key, *p.item.aliases, p.item.summary):
                names.setdefault(name.casefold(), p.id)
        known_ids = {i for s in self.stores.by_scope.values() for i in s.directory.ids_on_disk()}
        now = self._clock()
        for p in planned:
            item = p.item

            def link(match: object, item: Imported = item) -> str:
                index = int(match.group(1))  # type: ignore[attr-defined]
                if index >= len(item.refs):
                    return str(match.group(0))  # type: ignore[attr-defined]
                ref = item.refs[index]
                target = names.get(ref.target.casefold())
                if target is None and ref.target in known_ids:
                    target = ref.target
                return f"[[{target}]]" if target is not None else ref.text

            # Only a reader that made refs wrote [[ref:N]]; any other is the source's own text.
            body = REF_PATTERN.sub(link, item.body) if item.refs else item.body
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
            try:
                note = Note(
                    id=p.id,
                    summary=item.summary,
                    body=body,
                    type=item.type,
                    tags=item.tags,
                    created_at=created,
                    updated_at=max(item.updated_at or created, created),
                    supersedes=item.supersedes,
                    private=item.private,
                    extra=tuple(extra.items()),
                )
                self.stores.store(p.scope).admit(note)
            except MemdirError as exc:
                refused.append(ImportIssue(item.origin or item.key, str(exc)))
                continue
            p.note = note

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


def _same(existing: Note, note: Note | None) -> bool:
    """True when importing `note` over `existing` would change nothing but timestamps."""
    return note is not None and existing.same_content(note)


def kinds() -> Iterable[str]:
    """The source kinds `memdir import --from` takes."""
    from memdir.importers import KINDS

    return tuple(KINDS)
