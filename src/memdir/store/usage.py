"""Per-machine usage statistics: how often each note was recalled (never synced).

Kept in ``$MEMDIR_HOME/memory-usage/<state-key>.json``, outside the notes, so
recording a recall never changes a note file and never triggers a sync upload.

Reads are cached by the file's stamp: a search that ranks by usage stats the file
instead of parsing it again. A long-running host may `defer` writes: a recall then
counts in memory (reads include what is not written yet) and a worker thread writes
the counts within a second, so no recall waits for the disk; `close` writes what is
left. Statistics are worth an fsync, not a wait.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from memdir.files.atomic import atomic_write, ensure_private_dir
from memdir.files.lock import DirLock

__all__ = ["COALESCE_S", "UsageStats"]

_log = logging.getLogger(__name__)
_Data = dict[str, dict[str, int]]
_Held = tuple[int, int, bool]
#: How long a deferred write waits for more recalls to join it (seconds; the default).
COALESCE_S = 0.5


class UsageStats:
    """Recall counts per note, per scope state key."""

    def __init__(
        self, root: Path, *, lock_timeout: float = 10.0, coalesce: float = COALESCE_S
    ) -> None:
        self.root = root
        self.lock_timeout = lock_timeout
        #: How long a deferred write waits for more recalls to join it (seconds), read
        #: before each wait.
        self.coalesce = coalesce
        self._lock = threading.Lock()
        #: key → (stamp of the file, what it held), for reads.
        self._read: dict[str, tuple[tuple[int, int, int, int], _Data]] = {}
        #: key → note id → (recalls not written yet, last recall in Unix ms, whether the
        #: file held the note when it was first counted: if it no longer does when the
        #: counts are written, another process forgot it meanwhile).
        self._pending: dict[str, dict[str, _Held]] = {}
        #: key → notes forgotten here since counts of them were held (not written back).
        self._dropped: dict[str, set[str]] = {}
        self._writer: threading.Thread | None = None
        self._exists: Callable[[str, str], bool] | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._closing = False

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def _file(self, key: str) -> _Data:
        """What the file holds (cached by its stamp); {} when nothing was recorded."""
        path = self._path(key)
        try:
            st = path.stat()
        except OSError:
            return {}
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
        with self._lock:
            cached = self._read.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        data: _Data = {}
        with contextlib.suppress(OSError, ValueError):
            raw = json.loads(path.read_text("utf-8"))
            if isinstance(raw, dict):
                data = {
                    k: v
                    for k, v in raw.items()
                    if isinstance(v, dict) and isinstance(v.get("recalled"), int)
                }
        with self._lock:
            self._read[key] = (stamp, data)
        return data

    def load(self, key: str) -> dict[str, dict[str, int]]:
        """note id → {"recalled": count, "last": Unix ms}; {} when nothing was recorded.
        Counts not written yet (deferred) are included."""
        data = {k: dict(v) for k, v in self._file(key).items()}
        with self._lock:
            pending = dict(self._pending.get(key, {}))
        for note_id, (count, last, _) in pending.items():
            entry = data.setdefault(note_id, {"recalled": 0, "last": 0})
            entry["recalled"] += count
            entry["last"] = max(entry.get("last", 0), last)
        return data

    def counts(self, key: str) -> dict[str, int]:
        """note id → how often it was recalled."""
        with self._lock:
            pending = bool(self._pending.get(key))
        if not pending:
            return {k: v["recalled"] for k, v in self._file(key).items()}
        return {k: v["recalled"] for k, v in self.load(key).items()}

    def record(self, key: str, note_ids: Iterable[str]) -> None:
        """Count one recall of each note (in memory first when writes are deferred)."""
        ids = list(note_ids)
        if not ids:
            return
        now = int(time.time() * 1000)
        if self._writer is not None:
            in_file = self._file(key)
            with self._lock:
                if self._writer is not None:
                    pending = self._pending.setdefault(key, {})
                    dropped = self._dropped.setdefault(key, set())
                    for note_id in ids:
                        count, _, was = pending.get(note_id, (0, 0, note_id in in_file))
                        pending[note_id] = (count + 1, now, was)
                        dropped.discard(note_id)  # recalled again: it is there again
                    self._wake.set()
                    return
        self.write(key, {note_id: (1, now, False) for note_id in ids})

    def write(self, key: str, counts: dict[str, tuple[int, int, bool]]) -> None:
        """Add `counts` to the file of `key`, under its lock. `counts`: note id → (recalls,
        the last one in Unix ms, whether the file held the note when it was first counted).
        Counts of a note forgotten meanwhile (here, by another process, or its file gone)
        are left out."""
        ensure_private_dir(self.root)
        with DirLock(
            self.root / f".{key}.lock", timeout=self.lock_timeout, label="usage statistics"
        ):
            data = {k: dict(v) for k, v in self._file(key).items()}
            with self._lock:
                dropped = set(self._dropped.get(key, ()))
            exists = self._exists  # set by `defer`
            # Counts held while the note was forgotten (here, by another process — the file
            # lost it — or its file is gone) are not written back.
            counts = {
                i: c
                for i, c in counts.items()
                if i not in dropped
                and not (c[2] and i not in data)
                and (exists is None or exists(key, i))
            }
            if not counts:
                return
            for note_id, (count, last, _) in counts.items():
                entry = data.setdefault(note_id, {"recalled": 0, "last": 0})
                entry["recalled"] += count
                entry["last"] = max(entry.get("last", 0), last)
            atomic_write(self._path(key), json.dumps(data, sort_keys=True).encode(), mode=0o600)

    def forget(self, key: str, note_id: str) -> None:
        """Drop a forgotten note's statistics."""
        with self._lock:
            self._pending.get(key, {}).pop(note_id, None)
            if self._writer is not None or self._pending:
                self._dropped.setdefault(key, set()).add(note_id)  # the writer may hold some
        data = self._file(key)
        if note_id in data:
            with DirLock(
                self.root / f".{key}.lock", timeout=self.lock_timeout, label="usage statistics"
            ):
                data = {k: v for k, v in self._file(key).items() if k != note_id}
                atomic_write(self._path(key), json.dumps(data, sort_keys=True).encode(), mode=0o600)

    # -- deferred writes (a long-running host)

    def defer(self, exists: Callable[[str, str], bool] | None = None) -> None:
        """From now on, write recalls from a worker thread (within about a second).

        `exists(key, note_id)` tells whether a note is still there when its counts are
        written: the counts of a note forgotten meanwhile (here or by another process)
        are dropped, never written back after the forget."""
        with self._lock:
            self._exists = exists
            if self._writer is not None or self._closing:
                return
            self._writer = threading.Thread(
                target=self._run, name="memdir-usage-writer", daemon=True
            )
            self._writer.start()

    def flush(self) -> None:
        """Write every count not written yet; a disk that refuses keeps them for later."""
        with self._lock:
            pending, self._pending = self._pending, {}
        for key, counts in pending.items():
            try:
                self.write(key, counts)
            except Exception as exc:
                with self._lock:  # kept, merged with what came meanwhile
                    mine = self._pending.setdefault(key, {})
                    for note_id, (count, last, was) in counts.items():
                        more, later, _ = mine.get(note_id, (0, 0, was))
                        mine[note_id] = (count + more, max(last, later), was)
                strerror = exc.strerror if isinstance(exc, OSError) else None
                _log.warning("cannot record recall statistics: %s", strerror or exc)

    def _run(self) -> None:
        while not self._closing:
            self._wake.wait()
            if self._closing:
                return
            self._stop.wait(self.coalesce)  # let more recalls join; `close` cuts it short
            self._wake.clear()
            self.flush()

    def close(self) -> None:
        """Stop the writer (if any) and write what is left."""
        with self._lock:
            writer, self._writer = self._writer, None
            self._closing = True
        if writer is not None:
            self._stop.set()
            self._wake.set()
            writer.join(timeout=10)
        self.flush()
        with self._lock:
            self._closing = False
            self._stop.clear()
