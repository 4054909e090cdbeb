"""The open index databases of one `Retriever`, one per scope: on disk, a stand-in when the
disk refuses, or — for an encrypted note directory — in memory only.

An encrypted directory's index never touches the disk (§8.2): it is an SQLite database in
memory, filled from the decrypted notes. So that a short-lived command does not rebuild it
(and re-embed every chunk) each time, its image is kept by the unlock agent between
commands (`IndexImages`): taken when the index is opened, given back when it is closed,
and wiped with the key on lock. A directory that becomes encrypted while its index is open
on disk (`memdir encrypt` in another process) has that index dropped at the next use.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from memdir.core import Scope
from memdir.errors import DiskError, MemdirError, Remedy
from memdir.index.db import SearchIndex
from memdir.index.refusal import refusal
from memdir.index.schema import index_file, remove_index
from memdir.store.notes import ScopeStore

__all__ = ["IndexImages", "IndexPool"]


class IndexImages(Protocol):
    """Where in-memory indexes of encrypted scopes are kept between processes."""

    def get(self, name: str) -> bytes | None:
        """The image kept under `name` (None: none, or the store is locked)."""
        ...

    def put(self, name: str, data: bytes) -> None:
        """Keep `data` under `name` (dropped quietly when the store is locked)."""
        ...


def _elapsed(since: float | None) -> float:
    return math.inf if since is None else time.monotonic() - since


class IndexPool:
    """The index of each scope, opened on first use."""

    def __init__(self, home: Path, warn: Callable[[str], None]) -> None:
        self.home = home
        self._warn = warn
        self._indexes: dict[str, SearchIndex] = {}
        #: The scope of each index file, for warnings about it.
        self._scopes: dict[Path, Scope] = {}
        #: Why each scope's index is a stand-in, and since when, by state key.
        self.stand_ins: dict[str, tuple[str, float]] = {}
        #: Where encrypted scopes' in-memory indexes are kept (None: nowhere; rebuilt).
        self.images: IndexImages | None = None
        #: The generation of each in-memory index when it was opened or last kept.
        self._kept: dict[str, int] = {}

    def is_open(self, key: str) -> bool:
        """Whether the index of the scope with state key `key` is open."""
        return key in self._indexes

    def path(self, store: ScopeStore) -> Path:
        """Where a scope's index database lives (never written for an encrypted scope)."""
        return index_file(self.home, store.state_key)

    def damaged(self, path: Path, reason: str) -> None:
        """Say that the index at `path` was damaged and rebuilt."""
        scope = self._scopes.get(path)
        whose = f"of the {scope.value} notes " if scope is not None else ""
        self._warn(
            f"the search index {whose}was damaged ({reason}); it was rebuilt from the note files"
        )

    def open(
        self, store: ScopeStore, *, quiet: bool, writing: bool, retry_after: float
    ) -> SearchIndex:
        """The index of a scope; see `Retriever._open`."""
        key = store.state_key
        encrypted = store.directory.encrypted()
        index = self._indexes.get(key)
        if index is not None and index.memory != encrypted:
            # Encrypted (or decrypted) since it was opened: that index is no longer the one.
            self._drop(key, index, keep=False)
            index = None
        if index is not None and index.stand_in is not None:
            since = self.stand_ins.get(key, ("", None))[1]
            if writing or _elapsed(since) >= retry_after:
                # Try the index file again. The stand-in is not closed: a query of another
                # thread may still be reading it (its connection closes once unreferenced).
                del self._indexes[key]
                index = None
        if index is not None:
            return index
        path = self.path(store)
        self._scopes[path] = store.scope
        if encrypted:
            index = self._in_memory(store)
        else:
            try:
                index = SearchIndex(path)
                self.stand_ins.pop(key, None)
            except Exception as exc:  # the disk refusing is told apart by `refusal`
                reason = refusal(exc, path)
                if reason is None:
                    raise
                if writing:
                    raise DiskError(
                        f"{reason}: the search index {path} cannot be written",
                        hint=Remedy.DOCTOR,
                    ) from exc
                index = SearchIndex(path, stand_in=True)
                self.stand_ins[key] = (reason, time.monotonic())
        self._indexes[key] = index
        if index.damage is not None and not quiet:
            self.damaged(path, index.damage)
        return index

    def _in_memory(self, store: ScopeStore) -> SearchIndex:
        image = None
        if self.images is not None:
            with contextlib.suppress(MemdirError):
                image = self.images.get(_name(store.state_key))
        index = SearchIndex(self.path(store), memory=True, image=image)
        self._kept[store.state_key] = index.writes if image is not None else -1
        return index

    def _drop(self, key: str, index: SearchIndex, *, keep: bool) -> None:
        if keep:
            self._keep(key, index)
        del self._indexes[key]
        self._kept.pop(key, None)
        index.close()

    def _keep(self, key: str, index: SearchIndex) -> None:
        """Give an in-memory index's image to the agent when it changed since opened."""
        if not index.memory or self.images is None or self._kept.get(key) == index.writes:
            return
        with contextlib.suppress(MemdirError, OSError):
            self.images.put(_name(key), index.image())
            self._kept[key] = index.writes

    def discard(self, store: ScopeStore) -> None:
        """Close a scope's index and remove its file (encrypt: nothing plain stays behind)."""
        key = store.state_key
        index = self._indexes.get(key)
        if index is not None:
            self._drop(key, index, keep=False)
        remove_index(self.path(store))

    def drop_memory(self) -> None:
        """Close the in-memory indexes without keeping them (the store was locked)."""
        for key, index in list(self._indexes.items()):
            if index.memory:
                self._drop(key, index, keep=False)

    def keep_all(self) -> None:
        """Give every changed in-memory index to the agent (at exit, after a batch)."""
        for key, index in list(self._indexes.items()):
            self._keep(key, index)

    def close(self) -> None:
        """Keep the in-memory indexes, then close every index."""
        for key, index in list(self._indexes.items()):
            self._drop(key, index, keep=True)
        self._indexes.clear()


def _name(state_key: str) -> str:
    return f"index/{state_key}"
