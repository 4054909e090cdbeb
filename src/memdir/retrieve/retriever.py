"""Search over the note directories: keeping each index fresh, embedding, ranking, merging.

One `Retriever` serves every scope of a `Memory`. Before each query it refreshes
the scope's index (only changed files are read) and embeds a bounded number of
chunks that have no vector yet, so a write never waits for the embedder: a new
note is searchable lexically at once and by vector as soon as it is embedded.
A lexical search (and so `remember`'s nearest notes) never loads the embedder.
An embedder that cannot run turns vector search off with one warning; one that
fails a request leaves that query lexical, with a warning. An index found damaged
(on open or by any query) has been replaced by an empty one; the call is run again,
which refills it from the files, with one warning.

Reading goes on when the disk refuses the index's writes (full, read-only, no access):
a query whose refresh the disk refused answers from the index as it was (the failed
refresh is rolled back whole), leaving out every note the index no longer matches —
one added, changed or deleted since — with one warning saying how many it may miss;
an index that cannot even be opened for writing is read from a read-only stand-in,
or, when there is none (no index yet, or one of another schema), from one built in
memory from the files for this process, also with a warning. Such a stand-in is
opened again after `STAND_IN_SECONDS`, in case the disk has room again. Writes
(reindex, forget) still fail with the disk's error.

A long-lived host (the MCP server) calls `embed_in_background`: queries then never embed,
a worker thread fills the vectors, and while they are behind a query answers lexically at
once, with a warning (`memdir.retrieve.report` says which method ran; docs/retrieval.md).

Each query is analysed once (`memdir.index.query.analyse`) and its `SearchFilter`
goes down into the index's SQL, so a filtered search needs no over-fetch.

How often a note was recalled adds at most `USAGE_MAX_BONUS` to its score: enough
to order notes of about equal relevance, never enough to pass a chunk one place
higher in the top ranks of either list (1/61 − 1/62 ≈ 0.00026).
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from memdir.config import EmbedSettings
from memdir.core import Note, Scope
from memdir.core.vocab import SearchMethod, SearchMode
from memdir.embed import Embedder, EmbedderUnavailable, EmbeddingFailed
from memdir.errors import IntegrityError, Remedy
from memdir.index.db import IndexDamaged, RefreshStats, SearchIndex
from memdir.index.query import AnalysedQuery, SearchFilter, analyse
from memdir.index.refusal import refusal
from memdir.retrieve.arguments import checked_query, usage_bonus
from memdir.retrieve.background import VectorFiller
from memdir.retrieve.embedding import configured_embedder
from memdir.retrieve.health import index_messages
from memdir.retrieve.hits import Chunk, Hit, ReindexStats
from memdir.retrieve.hybrid import FusionParams
from memdir.retrieve.indexes import IndexImages, IndexPool
from memdir.retrieve.ranking import (
    DEFAULT_PARAMS,
    FLOOR_DEPTH,
    NO_FILTER,
    RankedChunk,
    distinctive_text,
    match_label,
    rank_chunks,
    snippet,
    superseding_first,
    weak_result,
)
from memdir.retrieve.report import current_progress, record
from memdir.retrieve.similar import NEAREST_FLOOR, Neighbour, similarity
from memdir.store.notes import ScopeStore
from memdir.store.problems import skipped_message
from memdir.store.usage import UsageStats

__all__ = [
    "QUERY_BATCH",
    "QUERY_EMBED_BUDGET",
    "STAND_IN_SECONDS",
    "Chunk",
    "Hit",
    "Progress",
    "ReindexStats",
    "Retriever",
    "usage_bonus",
]

#: Chunks a query may embed before it runs, and for how long it may (no new batch is begun
#: after that): the rest waits for the next query, a long-running host or `reindex`.
QUERY_EMBED_BUDGET = 64
QUERY_EMBED_SECONDS = 0.2
#: Chunks per model call when a query embeds: it waits for one such batch at most past
#: QUERY_EMBED_SECONDS.
QUERY_BATCH = 8
#: How long a stand-in index (or one whose vectors the disk refused) is used before the
#: index file is tried again.
STAND_IN_SECONDS = 30.0
_BATCH = 32
Progress = Callable[[str, int, int], None]
_T = TypeVar("_T")


def _elapsed(since: float | None) -> float:
    """Seconds since a `time.monotonic()` reading (infinite for None: never)."""
    return math.inf if since is None else time.monotonic() - since


class Retriever:
    """Indexes and embedder of one Memory."""

    def __init__(
        self,
        home: Path,
        embed: EmbedSettings,
        *,
        usage: UsageStats,
        warn: Callable[[str], None],
        params: FusionParams = DEFAULT_PARAMS,
        images: IndexImages | None = None,
        pool: IndexPool | None = None,
    ) -> None:
        self.home = home
        self.embed_settings = embed
        self.usage = usage
        self.params = params
        self._sink = warn
        #: The index database of each scope, opened on first use (`pool`: given one, else
        #: a new `IndexPool` under `home`).
        self.pool = pool if pool is not None else IndexPool(home, warn)
        #: Where encrypted scopes' in-memory indexes are kept between processes.
        self.images = images
        self.pool.images = images
        self._embedder: Embedder | None = None
        self._embedder_loaded = False
        self._loading = threading.Lock()
        #: When the disk last refused each scope's vectors, by state key.
        self._vectors_refused: dict[str, float] = {}
        #: The background vector filler (None: queries embed a few chunks themselves).
        self.filler: VectorFiller[str] | None = None
        #: The scopes the filler was woken for, by state key.
        self._filling: dict[str, ScopeStore] = {}
        #: One refresh of each scope at a time, by state key.
        self._refreshing: dict[str, threading.Lock] = {}
        #: Warnings of the filler's thread, said by the next query (in the caller's thread).
        self._deferred: list[str] = []
        #: The files each scope's last refresh could not read, once said (by state key).
        self._said_unreadable: dict[str, frozenset[str]] = {}

    def _warn(self, message: str) -> None:
        filler = self.filler
        if filler is not None and threading.current_thread() is filler.thread:
            self._deferred.append(message)
        else:
            self._sink(message)

    def close(self) -> None:
        """Stop the background filler and close every index database."""
        if self.filler is not None:
            self.filler.stop()
        self.pool.close()

    # -- parts --------------------------------------------------------------------------

    def index(self, store: ScopeStore) -> SearchIndex:
        """The index database of a scope (opened on first use; a stand-in when the disk
        refuses to open it for writing)."""
        return self._open(store)

    def _open(
        self, store: ScopeStore, *, quiet: bool = False, writing: bool = False
    ) -> SearchIndex:
        """The index of a scope; damage found opening it is warned about unless `quiet`
        (doctor reports it itself). When the disk refuses to open it for writing, a
        stand-in — unless `writing`, which raises the disk's error instead. An encrypted
        scope's index is in memory only (`memdir.retrieve.indexes`)."""
        return self.pool.open(store, quiet=quiet, writing=writing, retry_after=STAND_IN_SECONDS)

    def index_path(self, store: ScopeStore) -> Path:
        """Where a scope's index database lives."""
        return self.pool.path(store)

    def discard_index(self, store: ScopeStore) -> None:
        """Close a scope's index and remove its file from the disk."""
        self.pool.discard(store)

    def drop_memory_indexes(self) -> None:
        """Forget encrypted scopes' in-memory indexes (the store was locked)."""
        self.pool.drop_memory()

    def keep_indexes(self) -> None:
        """Give encrypted scopes' changed in-memory indexes to the unlock agent."""
        self.pool.keep_all()

    def _healed(self, run: Callable[[], _T]) -> _T:
        """`run()`, run once more after an index it used turned out damaged (and was
        replaced by an empty one, which the second run refills from the files)."""
        try:
            return run()
        except IndexDamaged as exc:
            self.pool.damaged(exc.path, exc.reason)
        try:
            return run()
        except IndexDamaged as exc:
            raise IntegrityError(
                f"the search index {exc.path} is damaged again right after being rebuilt "
                f"({exc.reason}); the disk may be failing",
                hint=Remedy.DOCTOR,
            ) from None

    @property
    def embedder(self) -> Embedder | None:
        """The configured embedder, or None (search is then lexical, with one warning)."""
        # Loaded once: a second thread asking meanwhile waits for the model rather than
        # searching lexically because the first one has not finished loading it.
        with self._loading:
            if not self._embedder_loaded:
                s = self.embed_settings
                if s.provider != "none":
                    try:
                        self._embedder = configured_embedder(s, self.home)
                    except EmbedderUnavailable as exc:
                        self._off(exc)
                self._embedder_loaded = True
        return self._embedder

    def _off(self, exc: EmbedderUnavailable) -> None:
        """Turn vector search off for this session: the embedder cannot run at all."""
        self._embedder = None
        self._warn(f"vector search is off, search is lexical only: {exc}")

    def usable_embedder(self) -> tuple[Embedder, str] | None:
        """The embedder and its vectors' identity, or None (with a warning) when it fails."""
        embedder = self.embedder
        if embedder is None:
            return None
        try:
            return embedder, embedder.info.id  # an HTTP embedder may ask its endpoint
        except EmbedderUnavailable as exc:
            self._off(exc)
        except EmbeddingFailed as exc:
            self._warn(f"embedding failed, search is lexical for now: {exc}")
        return None

    def vectors_ready(self, stores: Sequence[ScopeStore]) -> bool:
        """True in a long-lived host (`embed_in_background`) whose model is loaded and whose
        indexes of `stores` have every chunk embedded: a search now ranks by words and
        meaning without waiting. Says nothing (no warning) and loads no model; wakes the
        filler for the chunks still without a vector."""
        embedder = self._embedder
        if self.filler is None or not self._embedder_loaded or embedder is None:
            return False
        try:
            embedder_id = embedder.info.id
        except (EmbedderUnavailable, EmbeddingFailed):
            return False
        ready = True
        for store in stores:
            if self.index(store).pending(embedder_id, limit=1):
                self._wake(store)  # the filler may not know of them yet
                ready = False
        return ready

    def use_embedder(self, embedder: Embedder | None) -> None:
        """Replace the configured embedder (tests, benchmarks, long-running hosts)."""
        with self._loading:
            self._embedder, self._embedder_loaded = embedder, True

    def embed_in_background(self) -> VectorFiller[str] | None:
        """Fill missing vectors in a worker thread from now on (None: vectors are off by
        configuration); `close` stops it."""
        if self._embedder_loaded and self._embedder is None:
            return None
        if not self._embedder_loaded and self.embed_settings.provider == "none":
            return None
        if self.filler is None:
            self.filler = VectorFiller(self._fill_step)
            self.filler.start()
            self.filler.wake("")  # load the model now, not when the first query needs it
        return self.filler

    def _wake(self, store: ScopeStore) -> None:
        if self.filler is not None:
            self._filling[store.state_key] = store
            self.filler.wake(store.state_key)

    def _fill_step(self, key: str) -> int:
        """One batch of the filler: embed a scope's next pending chunks; 0 when none is left."""
        if key == "":
            self.usable_embedder()
            return 0
        store = self._filling.get(key)
        return 0 if store is None else self._embed_for_query(store, _BATCH)

    # -- keeping fresh ------------------------------------------------------------------

    def refresh(self, store: ScopeStore, progress: Progress | None = None) -> RefreshStats:
        """Bring a scope's index up to date; versions read from disk go to history."""
        return self._healed(lambda: self._refresh(store, progress))

    def _refresh(self, store: ScopeStore, progress: Progress | None) -> RefreshStats:
        index = self.index(store)
        report = progress or current_progress()  # an observer of a query's refresh
        step = (lambda done, total: report("index", done, total)) if report else None
        # A watched directory names the files changed since the last refresh; they alone
        # are looked at, unless another process changed the index meanwhile. Taking the
        # changes and applying them is one step, so no thread answers before they are in.
        with self._refreshing.setdefault(store.state_key, threading.Lock()):
            changed = store.directory.changes()
            only = changed if changed is not None and index.in_step() else None
            try:
                stats = index.refresh(
                    store.directory,
                    progress=step,
                    observe=lambda note_id, data, note: store.observe(note_id, data, note.hash),
                    only=only,
                )
            except BaseException:
                store.directory.forget_changes()  # not taken in: the next looks at every file
                raise
        if stats.added or stats.updated:
            self._wake(store)  # new chunks: the background filler (if any) embeds them
        unreadable = frozenset(stats.unreadable) | index.unparsed_ids()
        if unreadable and self._said_unreadable.get(store.state_key) != unreadable:
            names = [f"{note_id}.md" for note_id in unreadable]
            self._warn(skipped_message(store.scope, store.directory.path, names))
        self._said_unreadable[store.state_key] = unreadable
        return stats

    def embed_pending(
        self,
        store: ScopeStore,
        *,
        budget: int | None,
        progress: Progress | None = None,
        seconds: float | None = None,
    ) -> int:
        """Embed chunks that have no vector yet (at most `budget`, and no new batch after
        `seconds`); return how many."""
        return self._healed(lambda: self._embed_pending(store, budget, progress, seconds))

    def _embed_pending(
        self,
        store: ScopeStore,
        budget: int | None,
        progress: Progress | None,
        seconds: float | None = None,
    ) -> int:
        usable = self.usable_embedder()
        if usable is None:
            return 0
        embedder, embedder_id = usable
        index = self.index(store)
        pending = index.pending(embedder_id, limit=budget)
        done = 0
        # Against a deadline, small batches: the query waits for one at most past it.
        size = _BATCH if seconds is None else QUERY_BATCH
        until = None if seconds is None else time.monotonic() + seconds
        for start in range(0, len(pending), size):
            if until is not None and start and time.monotonic() >= until:
                break
            batch = pending[start : start + size]
            try:
                vectors = embedder.embed_documents([text for _, text in batch])
            except EmbedderUnavailable as exc:
                self._off(exc)
                break
            except EmbeddingFailed as exc:
                self._warn(f"embedding failed, search is lexical for now: {exc}")
                break
            index.put_vectors(embedder_id, [h for h, _ in batch], vectors)
            done += len(batch)
            if progress is not None:
                progress("embed", done, len(pending))
        return done

    def reindex(
        self, stores: Sequence[ScopeStore], progress: Progress | None = None
    ) -> ReindexStats:
        """Rebuild every index from the files and embed every chunk; vectors stay cached."""
        return self._healed(lambda: self._reindex(stores, progress))

    def _reindex(self, stores: Sequence[ScopeStore], progress: Progress | None) -> ReindexStats:
        import time

        started = time.perf_counter()
        notes = chunks = embedded = 0
        for store in stores:
            index = self._open(store, writing=True)
            index.clear()
            self.refresh(store, progress)
            embedded += self.embed_pending(store, budget=None, progress=progress)
            counts = index.counts()
            notes += len(index.note_ids())
            chunks += counts["chunks"]
        usable = self.usable_embedder()
        return ReindexStats(
            notes,
            chunks,
            embedded,
            usable[1] if usable else None,
            round(time.perf_counter() - started, 3),
        )

    # -- queries ------------------------------------------------------------------------

    def _query_vector(self, query: str) -> tuple[npt.NDArray[np.float32], str] | None:
        usable = self.usable_embedder()
        if usable is None:
            # embed.provider = "none" is the user's own choice: nothing to warn about.
            return None
        embedder, embedder_id = usable
        try:
            return embedder.embed_query(query), embedder_id
        except EmbedderUnavailable as exc:
            self._off(exc)
        except EmbeddingFailed as exc:
            self._warn(f"embedding the query failed, search is lexical: {exc}")
        return None

    def _prepared(
        self, stores: Sequence[ScopeStore], method: SearchMethod, filter: SearchFilter
    ) -> SearchFilter:
        """Bring each scope's index up to date for a query (and embed a few chunks unless
        lexical); `filter`, also leaving out the notes an index could not be updated on
        because the disk refused."""
        while self._deferred:  # what the background filler met, said in this thread
            self._sink(self._deferred.pop(0))
        left_out: set[tuple[Scope, str]] = set()
        for store in stores:
            refused = self._try_refresh(store)
            if refused is not None:
                left_out |= self._behind(store, refused)
                continue
            in_memory = self._in_memory(store)
            if in_memory is not None and self.index(store).note_ids():
                self._warn(in_memory)
            if method is not SearchMethod.LEXICAL and self.filler is None:
                self._embed_for_query(store, QUERY_EMBED_BUDGET)
        if not left_out:
            return filter
        return SearchFilter(filter.types, filter.tags, filter.exclude | left_out)

    def _in_memory(self, store: ScopeStore) -> str | None:
        """What to say when a scope's index is one built in memory (None: it is not)."""
        reason = self.pool.stand_ins.get(store.state_key, (None,))[0]
        if self.index(store).stand_in != "memory" or reason is None:
            return None
        return (
            f"the search index of the {store.scope.value} notes cannot be written ({reason}): "
            "searching a temporary index built in memory from the note files"
        )

    def _try_refresh(self, store: ScopeStore) -> str | None:
        """Refresh a scope's index; why the disk refused, if it did (nothing was changed)."""
        try:
            self.refresh(store)
        except Exception as exc:  # the disk refusing is told apart by `refusal`
            reason = refusal(exc, self.index_path(store))
            if reason is None:
                raise
            return reason
        return None

    def _behind(self, store: ScopeStore, reason: str) -> set[tuple[Scope, str]]:
        """The notes a scope's index (which the disk refused to update) is behind on, said
        once: they are left out rather than returned as they were."""
        found = self._healed(lambda: self.index(store).behind(store.directory))
        if found.changed:
            n = len(found.changed)
            self._warn(
                f"the search index of the {store.scope.value} notes cannot be updated "
                f"({reason}): results may miss {n} note{'s' if n != 1 else ''} added or "
                "changed since it was last updated"
            )
        return {(store.scope, note_id) for note_id in found.ids}

    def _embed_for_query(self, store: ScopeStore, budget: int) -> int:
        """Embed up to `budget` pending chunks, unless the disk refuses to store their
        vectors (a chunk without one is still found by its words); how many were."""
        index, key = self.index(store), store.state_key
        if index.stand_in == "read-only" or (
            _elapsed(self._vectors_refused.get(key)) < STAND_IN_SECONDS
        ):
            return 0
        try:
            return self.embed_pending(store, budget=budget, seconds=QUERY_EMBED_SECONDS)
        except Exception as exc:  # the disk refusing is told apart by `refusal`
            reason = refusal(exc, index.path)
            if reason is None:
                raise
            self._vectors_refused[key] = time.monotonic()
            self._warn(
                f"the search index of the {store.scope.value} notes cannot store vectors "
                f"({reason}): notes not embedded yet are found by their words only"
            )
            return 0

    def _method_for(self, stores: Sequence[ScopeStore], chosen: SearchMethod) -> SearchMethod:
        """The method a query runs now: with a background filler, lexical (and a warning)
        while the model loads or chunks have no vector yet; otherwise the one chosen."""
        record(chosen, None)
        if chosen is SearchMethod.LEXICAL or self.filler is None:
            return chosen
        if not self._embedder_loaded:  # the filler is loading the model
            self._warn("the embedding model is still loading: this search matched words only")
            record(SearchMethod.LEXICAL)
            return SearchMethod.LEXICAL
        usable = self.usable_embedder()
        if usable is None:
            return chosen  # vectors are off or failing: `_ranked` answers by words, as before
        done = total = 0
        for store in stores:
            index = self.index(store)
            if not index.pending(usable[1], limit=1):
                continue
            have, want = index.vector_progress(usable[1])
            done, total = done + have, total + want
            self._wake(store)
        if done >= total:
            return chosen
        self._warn(
            f"vectors are still being computed ({done} of {total} chunks): this search "
            "matched words only; the same search finds by meaning too once they are done"
        )
        record(SearchMethod.LEXICAL, (done, total))
        return SearchMethod.LEXICAL

    def _ranked(
        self,
        stores: Sequence[ScopeStore],
        query: AnalysedQuery,
        limit: int,
        method: SearchMethod,
        filter: SearchFilter,
    ) -> list[tuple[ScopeStore, RankedChunk]]:
        """The best chunks of every scope for `query`; call `_prepared` first."""
        if query.match is None and method is SearchMethod.LEXICAL:
            return []
        # Lexical search never touches the embedder, so a write (nearest notes) never
        # waits for a model to load.
        qv = self._query_vector(query.text) if method is not SearchMethod.LEXICAL else None
        if qv is None and method is not SearchMethod.LEXICAL:
            record(SearchMethod.LEXICAL)  # no vectors to search: by words only, if at all
        if method is SearchMethod.VECTOR and qv is None:
            return []
        out: list[tuple[ScopeStore, RankedChunk]] = []
        for store in stores:
            ranked = rank_chunks(
                self.index(store),
                query,
                limit=limit,
                method=method,
                query_vector=qv[0] if qv is not None else None,
                embedder_id=qv[1] if qv is not None else None,
                filter=filter,
                scope=store.scope,
                params=self.params,
            )
            usage = self.usage.counts(store.state_key)
            for item in ranked:
                nudged = item.score + usage_bonus(usage.get(item.row.note_id, 0))
                out.append((store, dataclasses.replace(item, score=nudged)))
        out.sort(
            key=lambda pair: (
                -pair[1].score,
                pair[0].scope.value,
                pair[1].row.note_id,
                pair[1].row.ord,
            )
        )
        return out

    def search(
        self,
        stores: Sequence[ScopeStore],
        query: str,
        *,
        limit: int,
        mode: SearchMode | str,
        method: SearchMethod | str,
        filter: SearchFilter = NO_FILTER,
    ) -> list[Hit]:
        """Notes best matching `query` among those `filter` keeps; each note appears once,
        with its best chunk. A superseded note is marked (`superseded_by`) and ranks right
        below the note superseding it when both match."""
        analysed, chosen = checked_query(query, limit, mode, method)
        return self._healed(lambda: self._search(stores, analysed, limit, chosen, filter))

    def _search(
        self,
        stores: Sequence[ScopeStore],
        analysed: AnalysedQuery,
        limit: int,
        chosen: SearchMethod,
        filter: SearchFilter,
    ) -> list[Hit]:
        prepared = self._prepared(stores, chosen, filter)
        chosen = self._method_for(stores, chosen)
        depth = max(limit, FLOOR_DEPTH)  # the floor reads as many hits at any limit
        ranked = self._ranked(stores, analysed, depth * 4, chosen, prepared)
        pool = self.params.lexical_depth + self.params.vector_depth
        per_store = Counter(s.scope for s, _ in ranked)
        notes = {(s.scope, r.row.note_id) for s, r in ranked}
        if len(notes) < depth and depth * 4 in per_store.values() and depth * 4 < pool:
            # A note with many matching chunks crowded the others out: take every
            # candidate chunk.
            ranked = self._ranked(stores, analysed, pool, chosen, prepared)
        gone = prepared.exclude - filter.exclude  # no longer as indexed: supersede nothing
        superseded = {
            store.state_key: {
                old: new
                for old, new in self.index(store).superseded().items()
                if (store.scope, new) not in gone
            }
            for store in stores
        }
        best: dict[tuple[str, str], tuple[ScopeStore, RankedChunk]] = {}
        for store, item in ranked:  # each note's best chunk, in rank order
            best.setdefault((store.state_key, item.row.note_id), (store, item))

        def newer(key: tuple[str, str]) -> tuple[str, str] | None:
            by = superseded[key[0]].get(key[1])
            return (key[0], by) if by is not None else None

        ordered = superseding_first(list(best), newer)
        weak = weak_result([best[key][1] for key in ordered[:depth]])
        chosen_keys = ordered[:limit]
        hits: list[Hit] = []
        for key in chosen_keys:
            store, item = best[key]
            hits.append(
                Hit(
                    note_id=item.row.note_id,
                    score=round(item.score, 6),
                    snippet=snippet(item.row, analysed.stems),
                    scope=store.scope,
                    path=str(store.directory.file_for(item.row.note_id)),
                    summary=item.row.summary,
                    revision=item.row.rev,
                    superseded_by=superseded[store.state_key].get(item.row.note_id),
                    match=match_label(item),
                    weak=weak,
                    type=item.row.type,
                    tags=item.row.tags,
                )
            )
        return hits

    def retrieve(
        self,
        stores: Sequence[ScopeStore],
        query: str,
        *,
        limit: int,
        mode: SearchMode | str,
        method: SearchMethod | str,
        filter: SearchFilter = NO_FILTER,
    ) -> list[Chunk]:
        """Chunks best matching `query` among the notes `filter` keeps, with note id,
        revision, hashes and byte offsets."""
        analysed, chosen = checked_query(query, limit, mode, method)
        return self._healed(lambda: self._retrieve(stores, analysed, limit, chosen, filter))

    def _retrieve(
        self,
        stores: Sequence[ScopeStore],
        analysed: AnalysedQuery,
        limit: int,
        chosen: SearchMethod,
        filter: SearchFilter,
    ) -> list[Chunk]:
        out = []
        prepared = self._prepared(stores, chosen, filter)
        chosen = self._method_for(stores, chosen)
        depth = max(limit, FLOOR_DEPTH)
        ranked = self._ranked(stores, analysed, depth, chosen, prepared)[:depth]
        weak = weak_result([item for _, item in ranked])
        for store, item in ranked[:limit]:
            path = store.directory.file_for(item.row.note_id)
            out.append(
                Chunk(
                    note_id=item.row.note_id,
                    revision=item.row.rev,
                    chunk_hash=item.row.chunk_hash,
                    start=item.row.start,
                    end=item.row.end,
                    score=round(item.score, 6),
                    source=f"{store.scope.value}:{path}",
                    scope=store.scope,
                    path=str(path),
                    text=item.row.text,
                    summary=item.row.summary,
                    match=match_label(item),
                    weak=weak,
                )
            )
        return out

    def nearest(self, stores: Sequence[ScopeStore], note: Note, limit: int = 3) -> list[Neighbour]:
        """Existing notes closest to `note` (lexical, from the index), itself excluded."""
        return self._healed(lambda: self._nearest(stores, note, limit))

    def _nearest(self, stores: Sequence[ScopeStore], note: Note, limit: int) -> list[Neighbour]:
        query = analyse(distinctive_text(note))
        kept = self._prepared(stores, SearchMethod.LEXICAL, NO_FILTER)
        ranked = self._ranked(stores, query, limit * 3 + 1, SearchMethod.LEXICAL, kept)
        out: list[Neighbour] = []
        seen: set[tuple[Scope, str]] = set()
        for store, item in ranked:
            key = (store.scope, item.row.note_id)
            if key in seen or (item.row.note_id == note.id and store.scope == note.scope):
                continue
            seen.add(key)
            other = store.get(item.row.note_id)
            if other is None:
                continue
            score = round(similarity(note, other), 4)
            if score >= NEAREST_FLOOR:
                out.append(Neighbour(other.id, other.summary, store.scope, score))
        out.sort(key=lambda n: (-n.score, n.note_id))
        return out[:limit]

    def forget(self, store: ScopeStore, note_id: str, *, scrub: bool = False) -> None:
        """Remove a note from the index, its vectors and the usage statistics."""
        self._healed(lambda: self._open(store, writing=True).forget(note_id, scrub=scrub))
        self.usage.forget(store.state_key, note_id)

    def traces(self, store: ScopeStore, note: Note) -> list[str]:
        """What in the index still returns a forgotten note (empty when nothing does)."""
        return self._healed(lambda: self._traces(store, note))

    def _traces(self, store: ScopeStore, note: Note) -> list[str]:
        self.refresh(store)
        index = self.index(store)
        found: list[str] = []
        if note.id in index.note_ids():
            found.append("the index still lists it")
        query = analyse(distinctive_text(note))
        for method in (SearchMethod.LEXICAL, SearchMethod.VECTOR):
            if method is SearchMethod.VECTOR:
                if self.usable_embedder() is None:
                    continue
                self.embed_pending(store, budget=QUERY_EMBED_BUDGET)
            ranked = self._ranked([store], query, 1000, method, NO_FILTER)
            if any(item.row.note_id == note.id for _, item in ranked):
                found.append(f"a {method} search for its distinctive terms still returns it")
        return found

    # -- health -------------------------------------------------------------------------

    def index_findings(self, store: ScopeStore, *, deep: bool = False) -> list[str]:
        """What needs saying about a scope's index: damage found now (the index is then
        rebuilt from the files) or found and repaired earlier; with `deep`, SQLite's full
        check and whether the index holds exactly what the files hold after a refresh.

        A scope that has no index yet has nothing to check unless `deep`.
        """
        path = self.index_path(store)
        if not deep and not self.pool.is_open(store.state_key) and not path.exists():
            return []
        opening = not self.pool.is_open(store.state_key)
        index = self._open(store, quiet=True)
        damaged = opening and index.damage is not None
        try:
            if deep or not opening:  # opening ran the quick check already
                index.check(full=deep)
        except IndexDamaged:
            damaged = True  # replaced by an empty one; the record below says so
        refused = self._try_refresh(store) if damaged else None  # refilled now if it can be
        found: list[str] = []
        if deep:

            def compare() -> tuple[str | None, list[str]]:
                store.directory.forget_changes()  # a deep check looks at every file
                try:
                    self._refresh(store, None)
                except Exception as exc:  # the disk refusing is told apart by `refusal`
                    if refusal(exc, path) is None:
                        raise
                    return refusal(exc, path), index.disagreements(store.directory)
                return None, index.disagreements(store.directory)

            refused, found = self._healed(compare)
        out = index_messages(
            store.scope,
            path,
            damaged_on=self._healed(index.damage_record),
            disagreements=found,
            refused=refused,
        )
        in_memory = self._in_memory(store)
        if in_memory is not None:
            out.append(in_memory)
        return out
