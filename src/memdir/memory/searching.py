"""`Memory.index`: search over the open scopes (§3), the index rebuild and the embedder.

The `Retriever` (indexes, embedder, numpy) is built on first use, so a command that only
lists notes loads none of it. Notes held back by a sync conflict are filtered out inside
every search; `type` and `tags` filter there too.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.config import Settings
from memdir.core import Note, NoteType, Scope, parse_choice
from memdir.core.vocab import SearchMethod, SearchMode
from memdir.memory.stores import Stores
from memdir.retrieve.report import current_progress, observing
from memdir.store import UsageStats

if TYPE_CHECKING:
    from memdir.embed import Embedder
    from memdir.retrieve import (
        Chunk,
        Hit,
        Neighbour,
        Progress,
        ReindexStats,
        Retriever,
        SearchFilter,
    )
    from memdir.retrieve.background import VectorFiller
    from memdir.retrieve.indexes import IndexImages

__all__ = ["CONFIGURED", "Index"]

#: "Not given": the configured embedder is used (None turns vectors off).
CONFIGURED: Any = object()

TypeChoice = NoteType | str | Iterable[NoteType | str] | None


class Index:
    """Search, retrieve, reindex and nearest notes over one memory's stores."""

    #: `with memory.index.observing(progress=show) as report:` around a search says which
    #: method it ran and streams index-building progress (`memdir.retrieve.report`).
    observing = staticmethod(observing)
    #: The progress callback of the `observing` block the caller is in (None: none).
    current_progress = staticmethod(current_progress)

    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        usage: UsageStats,
        *,
        home: Path,
        warn: Callable[[str], None],
        held: Callable[[], set[tuple[Scope, str]]],
        images: Callable[[], IndexImages],
        embedder: Embedder | None = CONFIGURED,
    ) -> None:
        self.settings = settings
        self.stores = stores
        self._usage = usage
        self._home = home
        self._warn = warn
        self._held = held
        self._images = images
        self._embedder = embedder
        self._retriever: Retriever | None = None
        self._building = threading.Lock()

    @property
    def retriever(self) -> Retriever:
        """The search indexes and the embedder (built on first use, whichever thread asks)."""
        with self._building:
            if self._retriever is None:
                from memdir.retrieve import Retriever

                retriever = Retriever(
                    self._home,
                    self.settings.embed,
                    usage=self._usage,
                    warn=self._warn,
                    images=self._images(),
                )
                if self._embedder is not CONFIGURED:
                    retriever.use_embedder(self._embedder)
                self._retriever = retriever
            return self._retriever

    @property
    def built(self) -> bool:
        """Whether the retriever was built (so it holds databases to close or wipe)."""
        return self._retriever is not None

    def close(self) -> None:
        if self._retriever is not None:
            self._retriever.close()

    def search(
        self,
        query: str,
        limit: int = 10,
        mode: SearchMode | str = SearchMode.ANY,
        scope: Scope | str | None = None,
        *,
        method: SearchMethod | str = SearchMethod.HYBRID,
        type: TypeChoice = None,
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
        return self.retriever.search(
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
        type: TypeChoice = None,
        tags: Iterable[str] | None = None,
    ) -> builtins.list[Chunk]:
        """Chunks best matching `query` with note id, revision, chunk hash and byte offsets."""
        return self.retriever.retrieve(
            self.stores.chosen(scope),
            query,
            limit=limit,
            mode=mode,
            method=method,
            filter=self._filter(type, tags),
        )

    def _filter(self, type: TypeChoice, tags: Iterable[str] | None) -> SearchFilter:
        from memdir.retrieve import SearchFilter

        names = () if type is None else (type,) if isinstance(type, str) else tuple(type)
        wanted = tuple(n for n in names if n != "")  # "" is "untyped": no restriction
        return SearchFilter(
            types=frozenset(parse_choice(NoteType, n, "type") for n in wanted) or None,
            tags=frozenset(tags or ()),
            exclude=frozenset(self._held()),
        )

    def warm_search(self, query: str, limit: int) -> builtins.list[Hit] | None:
        """A hybrid search when it needs no waiting: in a long-lived host whose vectors are
        complete (`embed_in_background`); None otherwise, or when the search fell back to
        words (vectors fell behind meanwhile). Warm recall (§4.2) ranks with it."""
        if self._retriever is None:
            return None
        stores = self.stores.chosen(None)
        if not self._retriever.vectors_ready(stores):
            return None
        with observing() as report:
            hits = self.search(query, limit=limit)
        return hits if report.method is SearchMethod.HYBRID else None

    def reindex(self, progress: Progress | None = None) -> ReindexStats:
        """Rebuild the search index from the files; returns once every chunk is embedded."""
        return self.retriever.reindex(self.stores.chosen(None), progress)

    def nearest(self, note: Note, limit: int = 3) -> Sequence[Neighbour]:
        """Existing notes closest to `note` (lexical, from the index), itself excluded."""
        return self.retriever.nearest(self.stores.chosen(None), note, limit=limit)

    def embed_in_background(self) -> VectorFiller[str] | None:
        """In a long-lived host: fill missing vectors in a worker thread from now on, so no
        query waits for the embedder (None: vectors are off); `close` stops it."""
        return self.retriever.embed_in_background()
