"""The `Memory` facade: the one API that the CLI, MCP server, web page and sync use.

It ties the two scopes (project and user) together: where a note goes, how
ids resolve (project first, then user), and the composite operations
(remember, forget with verification, restore) built on the store.
"""

from __future__ import annotations

import builtins
import difflib
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from memdir.config import Settings, load_settings
from memdir.core import (
    DEFAULT_SCOPE,
    Note,
    NoteType,
    Scope,
    normalize_tags,
    parse_note,
    parse_scope,
    parse_type,
    validate_id,
)
from memdir.errors import (
    Conflict,
    NotFound,
    ParseError,
    Refused,
)
from memdir.extract import ChatClient, ExtractionResult, ExtractionState, Reason, extract
from memdir.guidance import GUIDANCE
from memdir.results import (
    HistoryEntry,
    Link,
    LinkReport,
    WriteResult,
)
from memdir.retrieve import Chunk, Hit, ReindexStats, Retriever
from memdir.retrieve.recall import Recall, Recaller, prompt_index, recalled_ids
from memdir.retrieve.service import Progress
from memdir.retrieve.similar import DUPLICATE_THRESHOLD
from memdir.store import (
    AuditLog,
    Backups,
    History,
    NoteDirectory,
    ScopeStore,
    UsageStats,
    check_secrets,
    ensure_project_id,
    revision_of,
)
from memdir.store.atomic import atomic_write, ensure_private_dir
from memdir.sync.service import SyncService
from memdir.syncing import Syncing
from memdir.upkeep import Upkeep

__all__ = ["Memory"]


_recall_log = logging.getLogger("memdir.recall")


def _now_ms() -> int:
    return int(time.time() * 1000)


class _Fields(NamedTuple):
    """The fields a `remember` call gives (None: keep the existing note's value)."""

    summary: str
    body: str | None
    type: NoteType | None
    clear_type: bool
    tags: tuple[str, ...] | None
    supersedes: tuple[str, ...] | None
    private: bool | None


class Memory(Upkeep, Syncing):
    """Long-term memory of one project plus the user's own notes.

    Open with `Memory.open(project_dir)`; every method re-reads what changed on
    disk first, so edits made in an editor or by `git pull` are seen at once.
    """

    def __init__(self, settings: Settings, *, clock: Callable[[], int] = _now_ms) -> None:
        self.settings = settings
        self._clock = clock
        self.warnings: builtins.list[str] = list(settings.warnings)
        home = self._state_home()
        self._backups = Backups(home / "memory-backups")
        self._audit = AuditLog(home / "audit", lock_timeout=settings.lock_timeout)
        self._retriever = Retriever(
            home,
            settings.embed,
            usage=UsageStats(home / "memory-usage", lock_timeout=settings.lock_timeout),
            warn=self._warn,
        )
        self._stores: dict[Scope, ScopeStore] = {}
        self._recaller = Recaller()
        if settings.memory_dir is not None and settings.project_root is not None:
            root = settings.project_root
            self._stores[Scope.PROJECT] = self._make_store(
                Scope.PROJECT,
                settings.memory_dir,
                lambda: History(home / "memory-history" / f"project-{ensure_project_id(root)}"),
            )
        user_dir = settings.user_dir
        try:
            user_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.warnings.append(
                f"user notes are unavailable: cannot create {user_dir} ({exc.strerror}); "
                "project notes work as usual"
            )
        else:
            self._stores[Scope.USER] = self._make_store(
                Scope.USER, user_dir, lambda: History(home / "memory-history" / "user")
            )
        project_root = settings.project_root
        self._sync = SyncService(
            home / "memory-sync",
            self._stores,
            (lambda: ensure_project_id(project_root)) if project_root is not None else None,
            clock=clock,
            lock_timeout=max(settings.lock_timeout, 30.0),
        )

    def _state_home(self) -> Path:
        """Where history, backups and the audit log live: $MEMDIR_HOME when it is usable.

        When it cannot be created or written, a project keeps its notes fully usable (§1.2)
        by keeping that machine-local state in `<project>/.memdir/local/` (git-ignored).
        """
        home = self.settings.home
        root = self.settings.project_root
        try:
            home.mkdir(parents=True, exist_ok=True)
            usable = os.access(home, os.W_OK | os.X_OK)
            problem = "it is not writable"
        except OSError as exc:
            usable, problem = False, exc.strerror or str(exc)
        if usable or root is None:
            return home
        fallback = root / ".memdir" / "local"
        ensure_private_dir(fallback)
        ignore = fallback / ".gitignore"
        if not ignore.exists():
            atomic_write(ignore, b"# machine-local memdir state, written by memdir\n*\n")
        self.warnings.append(
            f"cannot use {home} ({problem}): user notes are unavailable, and this project's "
            f"history, backups and audit log are kept in {fallback}"
        )
        return fallback

    def _make_store(self, scope: Scope, path: Path, history: Callable[[], History]) -> ScopeStore:
        directory = NoteDirectory(
            scope, path, lock_timeout=self.settings.lock_timeout, max_notes=self.settings.max_notes
        )
        return ScopeStore(
            directory,
            history,
            self._backups,
            self._audit,
            max_note_bytes=self.settings.max_note_bytes,
        )

    @classmethod
    def open(cls, project_dir: str | Path | None = ".", home: str | Path | None = None) -> Memory:
        """Open the memory of the project at `project_dir` (None: user notes only).

        `home` defaults to `$MEMDIR_HOME` or `~/.memdir`. Config files are read and
        validated here, before anything is touched.
        """
        root = Path(project_dir).resolve() if project_dir is not None else None
        settings = load_settings(home=Path(home) if home is not None else None, project_root=root)
        return cls(settings)

    def close(self) -> None:
        """Close the index and sync state databases."""
        self._retriever.close()
        self._sync.close()

    def _reopen(self) -> Memory:
        """Another `Memory` on the same settings (for work in another thread)."""
        return Memory(self.settings, clock=self._clock)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- scopes and lookup ---------------------------------------------------------

    @property
    def scopes(self) -> tuple[Scope, ...]:
        """The scopes available, project first."""
        return tuple(s for s in (Scope.PROJECT, Scope.USER) if s in self._stores)

    def directory(self, scope: Scope | str) -> Path:
        """The note directory of a scope."""
        return self._store(parse_scope(scope) or Scope.PROJECT).path

    def _store(self, scope: Scope) -> ScopeStore:
        store = self._stores.get(scope)
        if store is None:
            why = (
                "no project is open"
                if scope is Scope.PROJECT
                else "the user directory is unavailable"
            )
            raise Refused(f"the {scope.value} scope cannot be used: {why}")
        return store

    def _chosen(self, scope: Scope | str | None) -> tuple[ScopeStore, ...]:
        parsed = parse_scope(scope)
        if parsed is None:
            return tuple(self._stores[s] for s in self.scopes)
        return (self._store(parsed),)

    def _all_notes(self, scope: Scope | str | None = None) -> builtins.list[Note]:
        notes: builtins.list[Note] = []
        for store in self._chosen(scope):
            scan = store.scan()
            if scan.over_limit:
                self._warn(
                    f"the {store.scope.value} scope holds {scan.over_limit} notes above "
                    f"memory.maxNotes ({self.settings.max_notes}); the least recently changed "
                    "are not loaded"
                )
            notes.extend(scan.notes.values())
        return notes

    def _agent_notes(self) -> builtins.list[Note]:
        """Notes an agent may be shown unasked: not those held back by a sync conflict (§3)."""
        held = self._sync.held()
        return [n for n in self._all_notes() if (n.scope, n.id) not in held]

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def _find(self, note_id: str, scope: Scope | str | None = None) -> tuple[ScopeStore, Note]:
        validate_id(note_id)
        for store in self._chosen(scope):
            note = store.get(note_id)
            if note is not None:
                return store, note
        where = f" in the {parse_scope(scope).value} scope" if parse_scope(scope) else ""  # type: ignore[union-attr]
        raise NotFound(f"no note {note_id}{where}")

    def _resolve_link(self, target: str, notes: dict[tuple[Scope | None, str], Note]) -> Link:
        for scope in (Scope.PROJECT, Scope.USER):
            note = notes.get((scope, target))
            if note is not None:
                return Link(target, scope, note.summary)
        return Link(target, None, None)

    # -- writing ------------------------------------------------------------------

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
    ) -> WriteResult:
        """Create a note, or update the note `id`; see WriteResult for what comes back.

        On update, every argument left as None keeps its value (body, type, tags,
        supersedes, private); pass "" or () to clear. Unknown frontmatter keys are kept.
        """
        note_type = parse_type(type)
        clear_type = type == ""
        wanted_scope = parse_scope(scope)
        tag_list = normalize_tags(tags) if tags is not None else None
        existing: Note | None = None
        if id is not None:
            validate_id(id)
            for store in self._chosen(wanted_scope):
                existing = store.get(id)
                if existing is not None:
                    break
            if existing is None and wanted_scope is not None:
                for other in self.scopes:
                    if other is not wanted_scope and self._stores[other].get(id) is not None:
                        raise Conflict(f"note {id} already exists in the {other.value} scope")
        target = wanted_scope or (existing.scope if existing else None) or DEFAULT_SCOPE[note_type]
        store = self._store(target)
        replaces = None
        if supersedes is not None:  # a generator must not be consumed twice below
            replaces = (supersedes,) if isinstance(supersedes, str) else tuple(supersedes)
        fields = _Fields(summary, body, note_type, clear_type, tag_list, replaces, private)
        # Validate and guard before taking the lock: the lock creates the directory, and a
        # refused write must leave nothing behind, not even an empty MEMORY/.
        check_secrets(self._compose(fields, id or "note", existing, self._clock()))
        with store.lock():
            if id is not None:
                existing = store.get(id)
            note_id = id or self._new_id(summary, store)
            note = self._compose(fields, note_id, existing, self._clock())
            if existing is not None and existing.same_content(note):
                data = store.directory.read_bytes(note_id) or b""
                return self._write_result(existing, False, False, revision_of(data))
            outcome = store.save(note)
        return self._write_result(outcome.note, existing is None, True, outcome.revision)

    @staticmethod
    def _compose(fields: _Fields, note_id: str, existing: Note | None, now: int) -> Note:
        """The note `remember` writes: given fields, the rest kept from `existing`."""
        summary, body, note_type, clear_type, tags, supersedes, private = fields
        return Note(
            id=note_id,
            summary=summary,
            body=body if body is not None else (existing.body if existing else ""),
            type=note_type
            if note_type is not None or clear_type or not existing
            else existing.type,
            tags=tags if tags is not None else (existing.tags if existing else ()),
            created_at=existing.created_at if existing else now,
            updated_at=max(now, existing.updated_at + 1) if existing else now,
            supersedes=tuple(supersedes)
            if supersedes is not None
            else (existing.supersedes if existing else ()),
            private=private if private is not None else (existing.private if existing else False),
            extra=existing.extra if existing else (),
        )

    def _new_id(self, summary: str, store: ScopeStore) -> str:
        from memdir.core import make_id

        taken = {i.casefold() for s in self._stores.values() for i in s.directory.ids_on_disk()}
        return make_id(summary, taken)

    def _write_result(self, note: Note, created: bool, changed: bool, rev: str) -> WriteResult:
        stores = [self._stores[s] for s in self.scopes]
        nearest = tuple(self._retriever.nearest(stores, note, limit=3))
        duplicate = next((n for n in nearest if n.score >= DUPLICATE_THRESHOLD), None)
        dangling = tuple(t for t in note.links if t != note.id and not self._exists(t))
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

    # -- reading ------------------------------------------------------------------

    def read(
        self, id: str, revision: str | None = None, *, scope: Scope | str | None = None
    ) -> Note:
        """A note by id (project scope first), or one of its past revisions."""
        if revision is None:
            return self._find(id, scope)[1]
        store, rev = self._revision(id, revision, scope)
        data = store.history.read(rev)
        try:
            return parse_note(data, file_id=id).located(store.scope, store.directory.file_for(id))
        except ParseError as exc:
            raise ParseError(f"revision {rev[:12]} of {id} cannot be parsed: {exc}") from None

    def _revision(
        self, note_id: str, revision: str, scope: Scope | str | None
    ) -> tuple[ScopeStore, str]:
        validate_id(note_id)
        last: NotFound | None = None
        for store in self._chosen(scope):
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
            for n in self._all_notes(scope)
            if (wanted_type is None or n.type is wanted_type)
            and (wanted_tag is None or wanted_tag in {t.casefold() for t in n.tags})
        ]
        notes.sort(key=lambda n: (-n.updated_at, n.id))
        return notes

    def _exists(self, note_id: str) -> bool:
        return any(store.directory.file_for(note_id).is_file() for store in self._chosen(None))

    def search(
        self,
        query: str,
        limit: int = 10,
        mode: str = "any",
        scope: Scope | str | None = None,
        *,
        method: str = "hybrid",
    ) -> builtins.list[Hit]:
        """Notes best matching `query`, one hit per note with its best chunk's snippet.

        `mode`: any word (default), all words, or the exact phrase. `method`: hybrid
        (default; lexical only when no embedder is available), lexical or vector.
        Private notes are never indexed, so never returned.
        """
        held = self._sync.held()
        hits = self._retriever.search(
            self._chosen(scope), query, limit=limit + len(held), mode=mode, method=method
        )
        return [h for h in hits if (h.scope, h.note_id) not in held][:limit]

    def retrieve(
        self,
        query: str,
        limit: int = 10,
        mode: str = "any",
        scope: Scope | str | None = None,
        *,
        method: str = "hybrid",
    ) -> builtins.list[Chunk]:
        """Chunks best matching `query` with note id, revision, chunk hash and byte offsets."""
        held = self._sync.held()
        chunks = self._retriever.retrieve(
            self._chosen(scope), query, limit=limit + 4 * len(held), mode=mode, method=method
        )
        return [c for c in chunks if (c.scope, c.note_id) not in held][:limit]

    def reindex(self, progress: Progress | None = None) -> ReindexStats:
        """Rebuild the search index from the files; returns once every chunk is embedded."""
        return self._retriever.reindex(self._chosen(None), progress)

    def history(self, id: str, *, scope: Scope | str | None = None) -> builtins.list[HistoryEntry]:
        """Every version of a note recorded on this machine, oldest first."""
        validate_id(id)
        for store in self._chosen(scope):
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

    def diff(self, id: str, a: str | None = None, b: str | None = None) -> str:
        """A unified diff between two revisions (default: `b`'s previous version and `b`).

        `b` defaults to the current version.
        """
        revs = [e.revision for e in self.history(id) if e.revision]
        if not revs:
            raise NotFound(f"no stored versions of note {id}")
        right = self.read(id, b) if b else self._find(id)[1]
        if a:
            left = self.read(id, a)
        else:
            right_rev = revision_of(self._store_bytes(id, b))
            if right_rev in revs:  # the version recorded just before b, not the latest other one
                revs = revs[: len(revs) - 1 - revs[::-1].index(right_rev)]
            older = [r for r in revs if r != right_rev]
            if not older:
                return ""
            left = self.read(id, older[-1])
        return "".join(
            difflib.unified_diff(
                _display(left).splitlines(keepends=True),
                _display(right).splitlines(keepends=True),
                fromfile=f"{id} (a)",
                tofile=f"{id} (b)",
            )
        )

    def _store_bytes(self, note_id: str, revision: str | None) -> bytes:
        if revision:
            store, rev = self._revision(note_id, revision, None)
            return store.history.read(rev)
        store, _ = self._find(note_id)
        return store.directory.read_bytes(note_id) or b""

    def links(self, id: str) -> LinkReport:
        """Outgoing links (resolved project first, then user), backlinks and dangling links."""
        _, note = self._find(id)
        notes = self._all_notes()
        index = {(n.scope, n.id): n for n in notes}
        outgoing = tuple(self._resolve_link(t, index) for t in note.links)
        backlinks = tuple(
            Link(n.id, n.scope, n.summary) for n in notes if id in n.links and n.id != id
        )
        return LinkReport(id, outgoing, backlinks)

    # -- agent integration (§4) ---------------------------------------------------------

    def guidance(self) -> str:
        """The shipped text that tells an agent when a note is worth writing and when not."""
        return GUIDANCE

    def prompt_index(self) -> str:
        """§4.1: one line per note, newest first, within `memory.indexChars`; rest counted."""
        return prompt_index(self._agent_notes(), self.settings.index_chars)

    def recall(
        self,
        message: str,
        history: Sequence[Mapping[str, Any]] = (),
        *,
        is_subagent: bool = False,
    ) -> Recall:
        """§4.2: the notes to attach to a user message; never raises (failures are logged).

        `history` holds the conversation's earlier messages as dicts; ids recalled into
        them (``metadata["memdir"]["recalled"]``) are not attached again. Store the
        returned `metadata` on the message and show `label`.
        """
        if is_subagent or not self.settings.recall.enabled:
            return Recall()
        try:
            notes = self._agent_notes()
            found = self._recaller.recall(
                message, notes, self.settings.recall, exclude=recalled_ids(history)
            )
        except Exception:
            _recall_log.exception("recall failed; the message goes on without recalled notes")
            return Recall()
        if not found.count:
            return found
        attached = [n for n in notes if n.id in found.note_ids]
        for store in self._chosen(None):
            ids = [n.id for n in attached if n.scope is store.scope]
            try:
                self._retriever.usage.record(store.state_key, ids)
            except Exception:
                _recall_log.warning("cannot record recall statistics", exc_info=True)
        return found

    def extract(
        self,
        conversation: Sequence[Mapping[str, Any]],
        llm: ChatClient | None = None,
        *,
        state: ExtractionState | None = None,
        reason: Reason = "stop",
        is_subagent: bool = False,
        force: bool = False,
        discard: int | None = None,
    ) -> ExtractionResult:
        """One extraction pass (§4.3) over the unread part of `conversation`; see memdir.extract."""
        return extract(
            self,
            conversation,
            llm,
            state=state,
            reason=reason,
            is_subagent=is_subagent,
            force=force,
            discard=discard,
        )


def _display(note: Note) -> str:
    head = [f"summary: {note.summary}"]
    if note.type is not None:
        head.append(f"type: {note.type.value}")
    head.append(f"tags: {', '.join(note.tags)}")
    if note.supersedes:
        head.append(f"supersedes: {', '.join(note.supersedes)}")
    return "\n".join(head) + "\n\n" + (note.body + "\n" if note.body else "")
