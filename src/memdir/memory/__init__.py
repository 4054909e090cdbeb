"""`Memory`: the one API that the CLI, MCP server, web page, hooks and sync use.

A composition root: `Memory` builds one collaborator per noun from the settings and
holds no verbs of its own. Each noun owns its verbs and its result types:

- `notes` (`Notebook`): remember, supersede, read, read_current, list, history, diff, links;
- `index` (`Index`): search, retrieve, reindex, nearest notes, background embedding;
- `upkeep` (`Maintenance`): plan_forget, forget (verified), doctor;
- `backups` (`BackupShelf`): called, the latest backups; restore;
- `audit` (`memdir.store.AuditLog`): verify, head, append;
- `tidy` (`Tidying`): the tidy-up findings (§6) and this machine's dismissals;
- `merges` (`Merging`): plan, apply, merge;  `consolidation`: the automatic pass (§6);
- `importer` / `exporter`: other systems' memories in (§5), archives out;
- `crypto` (`Encryption`): encryption at rest, unlock, lock, passwd (§8.2);
- `sync` (`Sync`): passes, status, sign-in, conflicts, batches, the coordinator (§7);
- `agent` (`AgentView`): prompt index, recall, extraction, guidance (§4);
- `answers` (`Asking`): grounded answers (§10);  `stores`: scopes, directories, lookup.

The names §5 fixes (`remember`, `read`, `list`, `search`, `retrieve`, `history`, `diff`,
`links`, `forget`, `backups()`, `restore`, `reindex`, `doctor`, `prompt_index`, `recall`,
`ask`) are the nouns' own methods. The retriever, the sync replica, `importer`, `exporter`
and `answers` are built on first use, so listing notes loads no numpy, HTTP client or
guard. Injected as httpx takes a transport: `embedder`, `sync_transport`, `clock`, `chat`.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.config import Settings, load_settings
from memdir.core import Scope
from memdir.memory.agent import AgentView
from memdir.memory.backups import BackupShelf
from memdir.memory.consolidating import Consolidation
from memdir.memory.encryption import Encryption
from memdir.memory.maintenance import Maintenance
from memdir.memory.merging import Merging
from memdir.memory.notes import Notebook
from memdir.memory.searching import CONFIGURED, Index
from memdir.memory.stores import Stores, state_home
from memdir.memory.syncing import Sync
from memdir.memory.tidying import Tidying
from memdir.store import UsageStats

if TYPE_CHECKING:
    import httpx

    from memdir.answer.check import Answer
    from memdir.embed import Embedder
    from memdir.extract import ChatClient
    from memdir.memory.asking import Asking
    from memdir.memory.exporting import Exporter
    from memdir.memory.importing import Importer

__all__ = ["Memory"]


def _now_ms() -> int:
    return int(time.time() * 1000)


class Memory:
    """Long-term memory of one project plus the user's own notes.

    Open with `Memory.open(project_dir)`; every call re-reads what changed on disk
    first, so edits made in an editor or by `git pull` are seen at once.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Callable[[], int] = _now_ms,
        embedder: Embedder | None = CONFIGURED,
        sync_transport: httpx.BaseTransport | None = None,
        chat: ChatClient | None = None,
    ) -> None:
        self.settings = settings
        self.warnings: builtins.list[str] = list(settings.warnings)
        #: Unix milliseconds now: every timestamp this memory writes comes from it.
        self.clock = clock
        self._injected = (embedder, sync_transport, chat)
        self._chat = chat
        self.home = home = state_home(settings, self._warn)
        self.stores = stores = Stores(settings, home, self._warn)
        self.usage = UsageStats(home / "memory-usage", lock_timeout=settings.lock_timeout)
        self.sync = Sync(
            settings, stores, home=home, clock=clock, transport=sync_transport, reopen=self.reopen
        )
        held = self.sync.held
        self.index = index = Index(
            settings,
            stores,
            self.usage,
            home=home,
            warn=self._warn,
            held=held,
            images=lambda: self.crypto,
            embedder=embedder,
        )
        retriever = lambda: self.index.retriever  # noqa: E731 - built on first use
        replica = lambda: self.sync.replica  # noqa: E731 - built on first use
        self.crypto = Encryption(settings, stores, home, retriever, clock, lambda: self.index.built)
        self.notes = notes = Notebook(stores, clock=clock, nearest=self.index.nearest)
        self.upkeep = upkeep = Maintenance(
            settings,
            stores,
            retriever=retriever,
            replica=replica,
            warn=self._warn,
            warnings=self.warnings,
        )
        #: Callable: `backups(limit=50)` lists the latest, newest first (§5 `m.backups()`).
        self.backups = backups = BackupShelf(stores)
        self.audit = stores.audit
        self.tidy = Tidying(
            settings,
            stores,
            self.usage,
            retriever=retriever,
            chat=self.chat_client,
            clock=clock,
            warn=self._warn,
        )
        self.merges = Merging(settings, stores, sync=self.sync, chat=self.chat_client, clock=clock)
        self.consolidation = Consolidation(
            settings, stores, self.tidy, self.merges, held=held, clock=clock, reopen=self.reopen
        )
        self.agent = AgentView(settings, stores, self.usage, held=held, home=home, host=self,
                               chat=chat, warm_search=index.warm_search)  # fmt: skip
        # The names §5 fixes, as the nouns' own methods: each signature is written once.
        self.remember, self.read, self.list = notes.remember, notes.read, notes.list
        self.history, self.diff, self.links = notes.history, notes.diff, notes.links
        self.search, self.retrieve, self.reindex = index.search, index.retrieve, index.reindex
        self.forget, self.doctor, self.restore = upkeep.forget, upkeep.doctor, backups.restore
        self.prompt_index, self.recall = self.agent.prompt_index, self.agent.recall

    @classmethod
    def open(
        cls,
        project_dir: str | Path | None = ".",
        home: str | Path | None = None,
        *,
        embedder: Embedder | None = CONFIGURED,
        sync_transport: httpx.BaseTransport | None = None,
        chat: ChatClient | None = None,
    ) -> Memory:
        """Open the memory of the project at `project_dir` (None: user notes only); `home`
        defaults to `$MEMDIR_HOME` or `~/.memdir`. Config is read and validated here first."""
        root = Path(project_dir).resolve() if project_dir is not None else None
        settings = load_settings(home=Path(home) if home is not None else None, project_root=root)
        return cls(settings, embedder=embedder, sync_transport=sync_transport, chat=chat)

    def reopen(self) -> Memory:
        """Another `Memory` on the same settings and injections (for work in another thread)."""
        embedder, transport, chat = self._injected
        return Memory(
            self.settings, clock=self.clock, embedder=embedder, sync_transport=transport, chat=chat
        )

    def close(self) -> None:
        """Close the index and sync databases, end the watches, write pending recall counts."""
        for store in self.stores.chosen(None):
            store.directory.unwatch()
        self.crypto.close()
        self.usage.close()
        self.index.close()
        self.sync.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @cached_property
    def importer(self) -> Importer:
        """Imports of other systems' memories (§5)."""
        from memdir.memory.importing import Importer

        return Importer(self.settings, self.stores, clock=self.clock, warn=self._warn)

    @cached_property
    def exporter(self) -> Exporter:
        """Exports of the notes as an archive or a folder."""
        from memdir.memory.exporting import Exporter

        return Exporter(self.stores, clock=self.clock)

    @cached_property
    def answers(self) -> Asking:
        """Grounded answers from the notes (§10)."""
        from memdir.memory.asking import Asking

        return Asking(
            self.settings,
            self.stores.audit,
            retrieve=lambda q, n, s: self.index.retrieve(q, limit=n, scope=s),
            chat=self.chat_client,
            read=lambda c: self.stores.store(c.scope).directory.read_bytes(c.note_id),  # sealed too
        )

    def ask(self, question: str, *, scope: Scope | str | None = None) -> Answer:
        """§5's `m.ask`: `answers.ask` (the answer module is loaded on first use)."""
        return self.answers.ask(question, scope=scope)

    @property
    def scopes(self) -> tuple[Scope, ...]:
        """The scopes open, project first."""
        return self.stores.scopes

    def chat_client(self) -> ChatClient:
        """The chat client given to the constructor, else the `[llm]` endpoint's."""
        if self._chat is not None:
            return self._chat
        from memdir.extract.llm import client_from_settings

        return client_from_settings(self.settings.llm)

    def watch_files(self) -> dict[Scope, str | None]:
        """In a long-lived host: watch the note directories, so that a query looks only at
        the files changed since the last one (edits made outside memdir are still never
        served stale; see `memdir.store.watch`), and wipe what it holds of encrypted notes
        as soon as they are locked. Returns, per scope, why its directory is not watched
        (None: it is, or will be once it exists). `close` ends the watches."""
        self.crypto.watch_lock()
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

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
