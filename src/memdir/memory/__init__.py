"""The `Memory` facade: the one API that the CLI, MCP server, web page and sync use.

A composition root: `Memory` builds its collaborators from the settings and each
public method is a short delegation to one of them.

- `stores` (`Stores`): the project and user scopes, their backups and audit log, lookup;
- `notebook` (`Notebook`): remember, supersede, read, list, history, diff, links;
- `maintenance` (`Maintenance`): forget, backups, restore, doctor, audit verification;
- `agent` (`AgentView`): the prompt index and per-message recall;
- `tidying` (`Tidying`): the tidy-up list (§6) and this machine's dismissals;
- `merging` (`Merging`): merge plans and applying them (§6);
- `consolidation` (`Consolidation`): the opt-in automatic merging pass (§6);
- `encryption` (`Encryption`): encryption at rest, unlock and lock (§8.2);
- `retrieval` (`memdir.retrieve.Retriever`): the search indexes and the embedder;
- `replica` (`memdir.sync.replica.Replica`): this machine's sync state and passes;
- `Asking` (`memdir.memory.asking`, built per call): grounded answers (§10).

The retriever and the replica are built on first use, so a command that only lists
notes imports neither numpy nor the HTTP client. Injection points, the way httpx
takes a transport: `embedder`, `sync_transport`, `clock` and `chat`.
"""

from __future__ import annotations

import builtins
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.answer.check import Answer
from memdir.config import Settings, load_settings
from memdir.core import Note, NoteType, Scope, parse_choice, parse_scope
from memdir.core.links import LinkReport
from memdir.core.vocab import FindingKind, KeepSide, SearchMethod, SearchMode
from memdir.guidance import GUIDANCE
from memdir.memory.agent import AgentView
from memdir.memory.consolidating import AutoConsolidator, Consolidation, ConsolidationReport
from memdir.memory.encryption import Encryption
from memdir.memory.exporting import ExportReport
from memdir.memory.importing import ImportReport
from memdir.memory.maintenance import (
    DoctorReport,
    ForgetPlan,
    ForgetResult,
    Maintenance,
    RestoreResult,
)
from memdir.memory.merging import Merging
from memdir.memory.notes import Notebook
from memdir.memory.stores import Stores, state_home
from memdir.memory.syncing import background_sync, commit_batch
from memdir.memory.tidying import DismissResult, Tidying
from memdir.store import BackupRecord, SaveOutcome, UsageStats
from memdir.store.audit import AuditVerification
from memdir.store.notes import CurrentNote, HistoryEntry, SupersedeResult, WriteResult
from memdir.store.signing import AuditHead
from memdir.tidy.findings import Finding
from memdir.tidy.merge import MergePlan, MergeResult

if TYPE_CHECKING:
    import httpx

    from memdir.embed import Embedder
    from memdir.extract import ChatClient, ExtractionResult, ExtractionState, Reason
    from memdir.retrieve import (
        Chunk,
        Hit,
        Neighbour,
        Progress,
        Recall,
        ReindexStats,
        Retriever,
        SearchFilter,
    )
    from memdir.retrieve.background import VectorFiller
    from memdir.sync.batch import BatchResult
    from memdir.sync.replica import ConflictView, Replica, Resolution, SyncRun, SyncStatus
    from memdir.sync.scheduler import SyncCoordinator

__all__ = ["Memory"]


def _now_ms() -> int:
    return int(time.time() * 1000)


#: "Not given": the configured embedder is used (None turns vectors off).
_CONFIGURED: Any = object()


class Memory:
    """Long-term memory of one project plus the user's own notes.

    Open with `Memory.open(project_dir)`; every method re-reads what changed on
    disk first, so edits made in an editor or by `git pull` are seen at once.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Callable[[], int] = _now_ms,
        embedder: Embedder | None = _CONFIGURED,
        sync_transport: httpx.BaseTransport | None = None,
        chat: ChatClient | None = None,
    ) -> None:
        self.settings = settings
        self.warnings: builtins.list[str] = list(settings.warnings)
        self._clock = clock
        self._embedder = embedder
        self._sync_transport = sync_transport
        self._chat = chat
        self._retriever: Retriever | None = None
        self._replica: Replica | None = None
        # Collaborators built on first use are built once, whichever thread asks first.
        self._building = threading.Lock()
        home = state_home(settings, self._warn)
        self.home = home
        self.stores = Stores(settings, home, self._warn)
        self.encryption = Encryption(
            settings, self.stores, home, lambda: self.retrieval, clock, self._retriever_built
        )
        self.usage = UsageStats(home / "memory-usage", lock_timeout=settings.lock_timeout)
        self.notebook = Notebook(self.stores, clock=clock, nearest=self._nearest)
        self.maintenance = Maintenance(
            settings,
            self.stores,
            retriever=lambda: self.retrieval,
            replica=lambda: self.replica,
            warn=self._warn,
            warnings=self.warnings,
        )
        self.agent = AgentView(settings, self.stores, self.usage, held=self._held, home=home)
        self.tidying = Tidying(
            settings,
            self.stores,
            self.usage,
            retriever=lambda: self.retrieval,
            clock=clock,
            warn=self._warn,
        )
        self.merging = Merging(
            settings, self.stores, replica=lambda: self.replica, chat=self._chat_client, clock=clock
        )
        self.consolidation = Consolidation(
            settings, self.stores, self.tidying, self.merging, held=self._held, clock=clock
        )

    @classmethod
    def open(
        cls,
        project_dir: str | Path | None = ".",
        home: str | Path | None = None,
        *,
        embedder: Embedder | None = _CONFIGURED,
        sync_transport: httpx.BaseTransport | None = None,
        chat: ChatClient | None = None,
    ) -> Memory:
        """Open the memory of the project at `project_dir` (None: user notes only); `home`
        defaults to `$MEMDIR_HOME` or `~/.memdir`. Config is read and validated here first."""
        root = Path(project_dir).resolve() if project_dir is not None else None
        settings = load_settings(home=Path(home) if home is not None else None, project_root=root)
        return cls(settings, embedder=embedder, sync_transport=sync_transport, chat=chat)

    def close(self) -> None:
        """Close the index and sync databases, end the watches, write pending recall counts."""
        for store in self.stores.chosen(None):
            store.directory.unwatch()
        self.encryption.close()
        self.usage.close()
        if self._retriever is not None:
            self._retriever.close()
        if self._replica is not None:
            self._replica.close()

    def reopen(self) -> Memory:
        """Another `Memory` on the same settings and injections (for work in another thread)."""
        return Memory(
            self.settings,
            clock=self._clock,
            embedder=self._embedder,
            sync_transport=self._sync_transport,
            chat=self._chat,
        )

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- collaborators built on first use -------------------------------------------------

    @property
    def retrieval(self) -> Retriever:
        """The search indexes and embedder (built on first use)."""
        with self._building:
            if self._retriever is None:
                from memdir.retrieve import Retriever

                retriever = Retriever(
                    self.home,
                    self.settings.embed,
                    usage=self.usage,
                    warn=self._warn,
                    images=self.encryption,
                )
                if self._embedder is not _CONFIGURED:
                    retriever.use_embedder(self._embedder)
                self._retriever = retriever
            return self._retriever

    @property
    def replica(self) -> Replica:
        """This machine's sync state for the open scopes (built on first use)."""
        with self._building:
            if self._replica is None:
                from memdir.store import ensure_project_id
                from memdir.sync.replica import Replica

                root = self.settings.project_root
                self._replica = Replica(
                    self.home / "memory-sync",
                    self.stores.by_scope,
                    (lambda: ensure_project_id(root)) if root is not None else None,
                    clock=self._clock,
                    lock_timeout=max(self.settings.lock_timeout, 30.0),
                    transport=self._sync_transport,
                )
            return self._replica

    def _chat_client(self) -> ChatClient:
        """The chat client given to the constructor, else the `[llm]` endpoint's."""
        if self._chat is not None:
            return self._chat
        from memdir.extract.llm import client_from_settings

        return client_from_settings(self.settings.llm)

    def _retriever_built(self) -> bool:
        return self._retriever is not None

    def _held(self) -> set[tuple[Scope, str]]:
        return self.replica.held()

    def _nearest(self, note: Note) -> Sequence[Neighbour]:
        return self.retrieval.nearest(self.stores.chosen(None), note, limit=3)

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    # -- scopes -------------------------------------------------------------------------

    def file_stamps(
        self, scope: Scope | str | None = None
    ) -> dict[Scope, dict[str, tuple[int, int, int, int]]]:
        """(size, mtime_ns, inode, ctime_ns) of every note file of `scope` (None: each
        open scope), by id, without reading any file: what a long-lived page polls to see
        that a note changed here, in another process or in an editor."""
        return {s.scope: s.directory.stamps()[0] for s in self.stores.chosen(scope)}

    def watch_files(self) -> dict[Scope, str | None]:
        """In a long-lived host: watch the note directories, so that a query looks only at
        the files changed since the last one (edits made outside memdir are still never
        served stale; see `memdir.store.watch`), and wipe what it holds of encrypted notes
        as soon as they are locked. Returns, per scope, why its directory is not watched
        (None: it is, or will be once it exists). `close` ends the watches."""
        self.encryption.watch_lock()
        return self.stores.watch()

    def defer_usage_writes(self) -> None:
        """In a long-lived host: recall statistics are written by a worker thread within
        about a second, so no recall waits for the disk; `close` writes what is left.
        Counts of a note forgotten meanwhile are dropped."""
        stores = {s.state_key: s for s in self.stores.chosen(None)}

        def exists(key: str, note_id: str) -> bool:
            store = stores.get(key)
            return store is not None and store.directory.file_for(note_id).exists()

        self.usage.defer(exists)

    def embed_in_background(self) -> VectorFiller[str] | None:
        """In a long-lived host: fill missing vectors in a worker thread from now on, so no
        query waits for the embedder (None: vectors are off); `close` stops it."""
        return self.retrieval.embed_in_background()

    @property
    def scopes(self) -> tuple[Scope, ...]:
        """The scopes available, project first."""
        return self.stores.scopes

    def directory(self, scope: Scope | str) -> Path:
        """The note directory of a scope."""
        return self.stores.store(parse_scope(scope) or Scope.PROJECT).path

    # -- notes --------------------------------------------------------------------------

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
        """
        return self.notebook.remember(
            summary,
            body,
            type,
            tags,
            scope,
            id,
            supersedes=supersedes,
            private=private,
            expect_revision=expect_revision,
            backup_reason=backup_reason,
        )

    def supersede(self, old: str, *, by: str, scope: Scope | str | None = None) -> SupersedeResult:
        """Mark note `old` as replaced by note `by`: one write adds `old` to `by`'s supersedes.

        `old` stays on disk and in history but is left out of recall and the prompt index,
        and search marks it and ranks `by` above it. Both notes must be in one scope
        (`scope`, None: wherever `by` is, project first). Raises InvalidInput for the same
        id twice, NotFound for an unknown note, Refused across scopes or for a cycle (`old`
        already supersedes `by`, directly or through other notes); when `by` already
        supersedes `old`, nothing is written and `changed` is False.
        """
        return self.notebook.supersede(old, by, scope)

    def save_over(
        self, note: Note, *, scope: Scope, revision: str, backup_reason: str
    ) -> SaveOutcome:
        """Replace a note only if its file is still at `revision` (else Conflict); backs up."""
        return self.notebook.save_over(
            note, scope=scope, revision=revision, backup_reason=backup_reason
        )

    def read(
        self, id: str, revision: str | None = None, *, scope: Scope | str | None = None
    ) -> Note:
        """A note by id (project scope first), or one of its past revisions."""
        return self.notebook.read(id, revision, scope)

    def read_current(self, id: str, scope: Scope | str | None = None) -> CurrentNote:
        """A note as it is on disk now, with the revision of exactly those bytes."""
        return self.notebook.read_current(id, scope)

    def list(
        self,
        scope: Scope | str | None = None,
        type: NoteType | str | None = None,
        tag: str | None = None,
    ) -> builtins.list[Note]:
        """Notes, most recently updated first, filtered by scope, type and tag."""
        return self.notebook.list(scope, type, tag)

    def history(self, id: str, *, scope: Scope | str | None = None) -> builtins.list[HistoryEntry]:
        """Every version of a note recorded on this machine, oldest first."""
        return self.notebook.history(id, scope)

    def diff(
        self,
        id: str,
        a: str | None = None,
        b: str | None = None,
        *,
        scope: Scope | str | None = None,
    ) -> str:
        """A unified diff between two revisions (default: `b`'s previous version and `b`, by
        default the current one); the note is looked up in `scope` (None: project, then user)."""
        return self.notebook.diff(id, a, b, scope)

    def links(
        self, id: str, *, scope: Scope | str | None = None, hide_private: bool = False
    ) -> LinkReport:
        """Outgoing links (resolved project first, then user), backlinks and dangling links.

        The note is looked up in `scope` (None: project, then user). Links to notes outside
        `scope` or (with `hide_private`) to private notes are shown without their scope and
        summary; such notes are not listed as backlinks.
        """
        return self.notebook.links(id, scope=scope, hide_private=hide_private)

    # -- search -------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int = 10,
        mode: SearchMode | str = SearchMode.ANY,
        scope: Scope | str | None = None,
        *,
        method: SearchMethod | str = SearchMethod.HYBRID,
        type: NoteType | str | Iterable[NoteType | str] | None = None,
        tags: Iterable[str] | None = None,
    ) -> builtins.list[Hit]:
        """Notes best matching `query`, one hit per note with its best chunk's snippet.

        `mode`: any word (default), all words, or the exact phrase. `method`: hybrid
        (default; lexical only when no embedder is available), lexical or vector.
        `type` and `tags` (all of them) filter inside the search. Private notes are
        never indexed, so never returned; notes held by a sync conflict neither. A
        superseded note is marked (`Hit.superseded_by`) and ranks right below the note
        that supersedes it when both match.
        """
        return self.retrieval.search(
            self.stores.chosen(scope),
            query,
            limit=limit,
            mode=mode,
            method=method,
            filter=self._filter(type, tags),
        )

    def retrieve(
        self,
        query: str,
        limit: int = 10,
        mode: SearchMode | str = SearchMode.ANY,
        scope: Scope | str | None = None,
        *,
        method: SearchMethod | str = SearchMethod.HYBRID,
        type: NoteType | str | Iterable[NoteType | str] | None = None,
        tags: Iterable[str] | None = None,
    ) -> builtins.list[Chunk]:
        """Chunks best matching `query` with note id, revision, chunk hash and byte offsets."""
        return self.retrieval.retrieve(
            self.stores.chosen(scope),
            query,
            limit=limit,
            mode=mode,
            method=method,
            filter=self._filter(type, tags),
        )

    def _filter(
        self,
        type: NoteType | str | Iterable[NoteType | str] | None,
        tags: Iterable[str] | None,
    ) -> SearchFilter:
        from memdir.retrieve import SearchFilter

        names = () if type is None else (type,) if isinstance(type, str) else tuple(type)
        wanted = tuple(n for n in names if n != "")  # "" is "untyped": no restriction
        return SearchFilter(
            types=frozenset(parse_choice(NoteType, n, "type") for n in wanted) or None,
            tags=frozenset(tags or ()),
            exclude=frozenset(self._held()),
        )

    def reindex(self, progress: Progress | None = None) -> ReindexStats:
        """Rebuild the search index from the files; returns once every chunk is embedded."""
        return self.retrieval.reindex(self.stores.chosen(None), progress)

    # -- upkeep -------------------------------------------------------------------------

    def plan_forget(
        self, id: str, purge: bool = False, *, scope: Scope | str | None = None
    ) -> ForgetPlan:
        """What `forget` would remove; show it to the user before confirming."""
        return self.maintenance.plan_forget(id, purge, scope)

    def forget(
        self,
        id: str,
        purge: bool = False,
        *,
        scope: Scope | str | None = None,
        expect_hash: str | None = None,
    ) -> ForgetResult:
        """Remove a note (the API call is the confirmation) and verify it is gone. Without
        `purge` the removed version stays in the backups so a mistake can be undone; with
        `purge` its history and backups are scrubbed as well."""
        return self.maintenance.forget(id, purge, scope, expect_hash)

    def backups(self, limit: int | None = 50) -> builtins.list[BackupRecord]:
        """The latest backups, newest first."""
        return self.maintenance.backups(limit)

    def restore(self, backup_id: str) -> RestoreResult:
        """Put a backup back in the directory it came from, backing up a newer version first."""
        return self.maintenance.restore(backup_id)

    def doctor(self, deep: bool = False) -> DoctorReport:
        """Unparseable files (never modified), dangling links, limits, damaged search indexes
        and warnings; `deep` also verifies every history object, backup and audit entry, and
        that each index holds exactly what the files hold (slower)."""
        return self.maintenance.doctor(deep)

    def audit_verify(self, against: Path | None = None) -> AuditVerification:
        """Check the audit log's hash chain, its signed head and, if given, a head kept elsewhere
        (a file printed by `audit_head`): a rollback to an older log is detected against it."""
        return self.maintenance.audit_verify(against)

    def audit_head(self) -> AuditHead:
        """The audit log's head, signed by this machine's key; raises if it does not verify."""
        return self.maintenance.audit_head()

    def tidy(
        self,
        kinds: FindingKind | str | Iterable[FindingKind | str] | None = None,
        scope: Scope | str | None = None,
        *,
        hide_private: bool = False,
        confirm_with_llm: bool = False,
    ) -> builtins.list[Finding]:
        """The tidy-up list (§6): findings of `kinds` (None: all six) in `scope` (None: every
        open scope, project first), without those dismissed on this machine.

        Each finding has a stable id (its kind and the hashes of its notes), the note ids
        and a one-line reason. With `hide_private`, findings about private notes are left
        out (what an MCP caller may see). With `confirm_with_llm`, the `[llm]` model checks
        each contradiction: those it rejects are left out, the others carry its verdict.
        """
        findings = self.tidying.findings(kinds, scope, hide_private=hide_private)
        if confirm_with_llm:
            findings = self.tidying.confirmed(findings, self._chat_client())
        return findings

    def dismiss(self, finding_id: str) -> DismissResult:
        """Leave a finding out of `tidy` on this machine until one of its notes is edited.
        NotFound for an id `tidy` does not list now (unknown, or a note changed); dismissing
        a finding twice changes nothing (`changed` False)."""
        return self.tidying.dismiss(finding_id)

    def import_from(
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
        from memdir.memory.importing import Importer

        importer = Importer(self.settings, self.stores, clock=self._clock, warn=self._warn)
        return importer.run(Path(path), kind, scope, dry_run=dry_run, progress=progress)

    def export(
        self,
        out: str | Path,
        *,
        scope: Scope | str | None = None,
        format: str | None = None,
        progress: Progress | None = None,
    ) -> ExportReport:
        """Write the notes of `scope` (None: both) to `out` as a tar.gz, a zip or a plain
        folder (`format`, None: from the name) with an index; `import_from(out, "memdir")`
        gives back the same ids, hashes and timestamps. `out` must not exist yet."""
        from memdir.memory.exporting import export

        return export(
            self.stores, Path(out), scope=scope, format=format, clock=self._clock, progress=progress
        )

    def plan_merge(
        self,
        ids: Iterable[str],
        *,
        draft: str = "concat",
        summary: str | None = None,
        body: str | None = None,
        scope: Scope | str | None = None,
    ) -> MergePlan:
        """A plan to merge notes `ids` of one scope into the oldest (§6); changes nothing.

        The plan holds each original's revision and hash, and the draft of the merged
        note: ``concat`` (every original, repeats said once) or ``llm`` (the `[llm]`
        model's, checked as untrusted). `summary` and `body` replace the draft's.
        """
        return self.merging.plan(ids, draft=draft, summary=summary, body=body, scope=scope)

    def apply_merge(self, plan: MergePlan) -> MergeResult:
        """Apply a merge plan: the oldest note's id is kept with the draft as its content,
        the others are deleted, `[[deleted-id]]` links in the scope point at the kept note,
        every changed note is backed up and the merge is audited; with sync on it goes to
        the server first. Refused with nothing changed if any original changed since."""
        return self.merging.apply(plan)

    def merge(
        self,
        ids: Iterable[str],
        *,
        draft: str = "concat",
        summary: str | None = None,
        body: str | None = None,
        scope: Scope | str | None = None,
    ) -> MergeResult:
        """Plan and apply a merge in one step (see `plan_merge` and `apply_merge`)."""
        return self.apply_merge(
            self.plan_merge(ids, draft=draft, summary=summary, body=body, scope=scope)
        )

    def consolidate(
        self, *, force: bool = False, stop: threading.Event | None = None
    ) -> ConsolidationReport:
        """Run the automatic consolidation pass (§6) over the scopes that are due: merge
        same-topic notes (concatenated drafts, at most `maxMergesPerPass`), never notes in
        a sync conflict or notes that contradict each other. Off unless
        `memory.consolidate.auto` is on; `force` runs it now over every scope regardless.
        A set `stop` ends the pass before its next merge."""
        return self.consolidation.run(force=force, stop=stop)

    def background_consolidation(
        self, *, first_delay: float = 10.0, check_every: float = 600.0
    ) -> AutoConsolidator | None:
        """A thread that runs `consolidate` whenever it is due, each pass on a `Memory` of
        its own; the caller starts and stops it. None when the pass is switched off."""
        if not self.settings.consolidate.auto:
            return None
        return AutoConsolidator(
            self.reopen,
            self.consolidation.next_due,
            self._clock,
            first_delay=first_delay,
            check_every=check_every,
        )

    def audit_record(
        self, action: str, *, grant_id: str | None = None, detail: str | None = None
    ) -> None:
        """Append an event that happened outside the note store (a grant, a revoke)."""
        self.stores.audit.append(action, grant_id=grant_id, detail=detail)

    def ask(self, question: str, *, scope: Scope | str | None = None) -> Answer:
        """§10: answer `question` from the notes of `scope` (None: both), every claim citing a
        chunk sent to the `[llm]` model; without evidence no model is called. Audited."""
        from memdir.memory.asking import Asking

        def retrieve(q: str, n: int, s: Scope | str | None) -> builtins.list[Chunk]:
            return self.retrieve(q, limit=n, scope=s)

        asking = Asking(self.settings, self.stores.audit, retrieve=retrieve, chat=self._chat_client)
        return asking.ask(question, scope)

    # -- agent integration (§4) ---------------------------------------------------------

    def guidance(self) -> str:
        """The shipped text that tells an agent when a note is worth writing and when not."""
        return GUIDANCE

    def prompt_index(self) -> str:
        """§4.1: one line per note, newest first, within `memory.indexChars`; rest counted."""
        return self.agent.prompt_index()

    def recall(
        self,
        message: str,
        history: Sequence[Mapping[str, Any]] = (),
        *,
        is_subagent: bool = False,
    ) -> Recall:
        """§4.2: the notes to attach to a user message; raises only `Locked` (logs the rest).

        `history` holds the conversation's earlier messages as dicts; ids recalled into
        them (``metadata["memdir"]["recalled"]``) are not attached again. Store the
        returned `metadata` on the message and show `label`.
        """
        return self.agent.recall(message, history, is_subagent=is_subagent)

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
        """One extraction pass (§4.3) over the unread part of `conversation` (memdir.extract);
        `llm` defaults to the chat client given to the constructor, else the `[llm]` endpoint."""
        from memdir.extract import extract

        return extract(
            self,
            conversation,
            llm if llm is not None else self._chat,
            state=state,
            reason=reason,
            is_subagent=is_subagent,
            force=force,
            discard=discard,
        )

    # -- sync (§7) ----------------------------------------------------------------------

    def sync(
        self, scope: Scope | str | None = None, *, abort: threading.Event | None = None
    ) -> SyncRun:
        """One sync pass now (both scopes unless `scope`); `abort` stops it between requests."""
        chosen = parse_scope(scope) if scope is not None else None
        return self.replica.run((chosen,) if chosen is not None else None, abort=abort)

    def sync_status(self) -> SyncStatus:
        """Whether sync is on, the account, and each scope's state."""
        return self.replica.status()

    def sync_login(self, server: str, token: str) -> SyncStatus:
        """Check `token` with the server at `server` and store it (0600) for later passes."""
        return self.replica.login(server, token)

    def sync_logout(self) -> bool:
        """Remove the stored sign-in; False when there was none."""
        return self.replica.logout()

    def sync_switch(self, on: bool) -> SyncStatus:
        """Turn sync on or off for this user on this machine (persisted)."""
        return self.replica.set_enabled(on)

    def sync_conflicts(self) -> builtins.list[ConflictView]:
        """Every note held back by a sync conflict, with its three versions."""
        return self.replica.conflicts()

    def sync_draft(self, id: str, scope: Scope | str | None = None) -> str:
        """A merged draft of a conflicted note (conflict markers where the sides clash)."""
        return self.replica.draft(id, parse_scope(scope) if scope is not None else None)

    def sync_resolve(
        self,
        id: str,
        keep: KeepSide | str | None = None,
        *,
        text: str | None = None,
        scope: Scope | str | None = None,
    ) -> Resolution:
        """Settle a conflict: keep `local`, `server` or `both`, or write the edited `text`."""
        chosen = parse_scope(scope) if scope is not None else None
        return self.replica.resolve(id, keep=keep, text=text, scope=chosen)

    def commit_batch(
        self,
        writes: Mapping[str, Note | None],
        *,
        scope: Scope | str,
        reason: str = "consolidation",
    ) -> BatchResult:
        """Write a batch nobody reviews note by note (note id -> note, None: delete). With
        sync on for the scope, the batch goes to the server first, checked against the
        manifest version, and is written here only once accepted (§7.3); otherwise it is
        written here directly. Replaced and deleted versions are backed up."""
        chosen = parse_scope(scope) or Scope.PROJECT
        return commit_batch(self.replica, self.stores, writes, chosen, reason)

    def background_sync(
        self, *, budget_per_minute: int = 8, debounce: float = 3.0
    ) -> SyncCoordinator:
        """A §7.2 coordinator for this process's scopes; the caller starts and stops it.

        Writes through this `Memory` schedule an upload about three seconds later; each
        pass runs on a `Memory` of its own in the coordinator's thread. The budget counts
        passes: a pass is one request when nothing changed and two or three otherwise,
        so eight passes keep the process near twenty requests a minute.
        """
        return background_sync(
            self.replica,
            self.stores,
            self.reopen,
            budget_per_minute=budget_per_minute,
            debounce=debounce,
        )
