"""Per-machine usage statistics: how often each note was recalled (never synced).

Kept in ``$MEMDIR_HOME/memory-usage/<state-key>.json``, outside the notes, so
recording a recall never changes a note file and never triggers a sync upload.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable
from pathlib import Path

from memdir.store.atomic import atomic_write, ensure_private_dir
from memdir.store.lock import DirLock

__all__ = ["UsageStats"]


class UsageStats:
    """Recall counts per note, per scope state key."""

    def __init__(self, root: Path, *, lock_timeout: float = 10.0) -> None:
        self.root = root
        self.lock_timeout = lock_timeout

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def load(self, key: str) -> dict[str, dict[str, int]]:
        """note id → {"recalled": count, "last": Unix ms}; {} when nothing was recorded."""
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self._path(key).read_text("utf-8"))
            if isinstance(data, dict):
                return {
                    k: v
                    for k, v in data.items()
                    if isinstance(v, dict) and isinstance(v.get("recalled"), int)
                }
        return {}

    def counts(self, key: str) -> dict[str, int]:
        """note id → how often it was recalled."""
        return {k: v["recalled"] for k, v in self.load(key).items()}

    def record(self, key: str, note_ids: Iterable[str]) -> None:
        """Count one recall of each note."""
        ids = list(note_ids)
        if not ids:
            return
        ensure_private_dir(self.root)
        with DirLock(
            self.root / f".{key}.lock", timeout=self.lock_timeout, label="usage statistics"
        ):
            data = self.load(key)
            now = int(time.time() * 1000)
            for note_id in ids:
                entry = data.setdefault(note_id, {"recalled": 0, "last": 0})
                entry["recalled"] += 1
                entry["last"] = now
            atomic_write(self._path(key), json.dumps(data, sort_keys=True).encode(), mode=0o600)

    def forget(self, key: str, note_id: str) -> None:
        """Drop a forgotten note's statistics."""
        data = self.load(key)
        if note_id in data:
            with DirLock(
                self.root / f".{key}.lock", timeout=self.lock_timeout, label="usage statistics"
            ):
                data = self.load(key)
                data.pop(note_id, None)
                atomic_write(self._path(key), json.dumps(data, sort_keys=True).encode(), mode=0o600)
