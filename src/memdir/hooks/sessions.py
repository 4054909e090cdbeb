"""What hooks keep between calls, under ``$MEMDIR_HOME/hooks/``: one small JSON file per
client session, announcements waiting for the next message of a project, and the hook log.

A session file holds the extraction position (`memdir.extract.ExtractionState` as a dict),
the notes this session attached and at which compaction (the ledger for clients whose
transcript does not record hook output), and whether "memory is locked" was said. Every
read-modify-write holds an flock on the file's own lock, so the prompt hook and a
background extraction never lose each other's update. Files are 0600 and written
atomically; a damaged one reads as a fresh session.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memdir.files import ensure_private_dir
from memdir.files.sockets import path_lock

__all__ = [
    "Sessions",
    "detach",
    "hooks_dir",
    "log_failure",
    "log_path",
]

#: The hook log is rotated (one previous file kept) beyond this size.
LOG_BYTES = 1 << 20
#: Session files untouched this long are removed at a run start.
SESSION_DAYS = 30


def hooks_dir(home: Path) -> Path:
    """Where hook state lives."""
    return home / "hooks"


def log_path(home: Path) -> Path:
    """The hook log: one line per failure."""
    return home / "logs" / "hooks.log"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:24]


def log_failure(home: Path, client: str, event: str, message: str) -> None:
    """Append one line to the hook log (credentials redacted); never raises."""
    try:
        from memdir.guard import redact

        line = " ".join(redact(f"{client} {event}: {message}").split())[:2000]
        path = log_path(home)
        ensure_private_dir(path.parent)
        with contextlib.suppress(OSError):
            if path.stat().st_size > LOG_BYTES:
                path.replace(path.with_name(path.name + ".1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, f"{stamp} {line}\n".encode())
        finally:
            os.close(fd)
    except Exception:
        pass


class Sessions:
    """The hook state of one memdir home."""

    def __init__(self, home: Path) -> None:
        self.root = hooks_dir(home)

    def key(self, client: str, session_id: str) -> str:
        """The file name stem of a client's session (its id hashed: ids never name files)."""
        return f"{client}-{_digest(client, session_id)}"

    def _path(self, key: str) -> Path:
        return self.root / "sessions" / f"{key}.json"

    @contextlib.contextmanager
    def _locked(self, path: Path) -> Iterator[None]:
        """An exclusive flock on ``PATH.lock`` (its folder made private first)."""
        ensure_private_dir(path.parent)
        with path_lock(path):
            yield

    @staticmethod
    def _read(path: Path) -> dict[str, Any]:
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError, UnicodeDecodeError):
            return {}
        return data if isinstance(data, dict) else {}

    @staticmethod
    def _write(path: Path, data: dict[str, Any]) -> None:
        """Replace the file whole (a reader never sees half of it) without fsync: this is
        bookkeeping a hook writes on every message, and losing the last change to a power
        cut costs at most one note attached twice."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, json.dumps(data, sort_keys=True).encode())
        finally:
            os.close(fd)
        tmp.replace(path)

    def load(self, key: str) -> dict[str, Any]:
        """A session's state ({} for a new or unreadable one)."""
        return self._read(self._path(key))

    @contextlib.contextmanager
    def update(self, key: str) -> Iterator[dict[str, Any]]:
        """The session's state, written back when the block ends without an error."""
        path = self._path(key)
        with self._locked(path):
            data = self._read(path)
            yield data
            data["touched"] = int(time.time())
            self._write(path, data)

    @contextlib.contextmanager
    def pass_lock(self, key: str) -> Iterator[None]:
        """Held for a whole extraction pass: one pass at a time per session."""
        with self._locked(self.root / "sessions" / f"{key}.extract"):
            yield

    # -- announcements, per project -----------------------------------------------------

    def _board(self, project: str) -> Path:
        return self.root / "announce" / f"{_digest(project)}.json"

    def announce(self, project: str, session_key: str, text: str) -> None:
        """Keep `text` for the next message of the session (or the project's next run)."""
        path = self._board(project)
        with self._locked(path):
            data = self._read(path)
            raw = data.get("items")
            items = [i for i in raw if isinstance(i, dict)][-20:] if isinstance(raw, list) else []
            items.append({"session": session_key, "text": text, "at": int(time.time())})
            self._write(path, {"items": items})

    def take_announcements(self, project: str, session_key: str | None) -> list[str]:
        """The waiting announcements of a session (None: of every session), now removed."""
        path = self._board(project)
        if not path.exists():
            return []
        with self._locked(path):
            data = self._read(path)
            raw = data.get("items")
            items = [i for i in raw if isinstance(i, dict)] if isinstance(raw, list) else []
            mine = [i for i in items if session_key is None or i.get("session") == session_key]
            if not mine:
                return []
            self._write(path, {"items": [i for i in items if i not in mine]})
        return [str(i.get("text", "")) for i in mine if i.get("text")]

    def sweep(self) -> None:
        """Remove session files untouched for `SESSION_DAYS` days (their empty lock files
        stay: removing one that another process holds would let two passes run at once)."""
        folder = self.root / "sessions"
        cutoff = time.time() - SESSION_DAYS * 86400
        with contextlib.suppress(OSError):
            for path in folder.glob("*.json"):  # never a lock file: one may be held
                with contextlib.suppress(OSError):
                    if path.stat().st_mtime < cutoff:
                        path.unlink()


def detach(argv: list[str], env: dict[str, str], cwd: Path) -> None:
    """Start `argv` (one of memdir's own modules) in its own session, so that it outlives
    the hook and the client never waits for it."""
    import subprocess

    subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env=env,
        cwd=str(cwd),
    )
