"""The sync server's accounts: users with bearer tokens and one admin key, stored hashed.

Everything lives in ``<data>/accounts.json`` (mode 0600, atomic writes, changed under
a lock), whatever the storage backend. A token or key exists in clear only once: when
it is issued, to be written to a file the operator names (`write_secret`, mode 0600).
The file keeps only SHA-256 digests, compared in constant time. The server re-reads
the file when it changes, so `memdir server user add/remove` takes effect without a
restart.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.errors import Conflict, NotFound, Refused
from memdir.files.atomic import atomic_write, ensure_private_dir, write_private
from memdir.files.lock import DirLock
from memdir.server.storage.directory import validate_user

__all__ = ["Account", "Accounts", "token_digest", "write_secret"]

_FORMAT = "memdir-server-accounts/1"
_TOKEN_BYTES = 32


def token_digest(secret: str) -> str:
    """The SHA-256 (hex) of a token or key: the only form one is stored in."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def write_secret(path: Path, secret: str, *, force: bool) -> None:
    """Write a token or key to `path`, mode 0600; an existing file only with `force`."""
    write_private(path, secret.encode("utf-8") + b"\n", force=force)


@dataclass(frozen=True, slots=True)
class Account:
    """One user as stored: a name, the digest of its token, and when it was made."""

    name: str
    token_sha256: str
    created_at: int

    def public(self) -> dict[str, object]:
        """The account as shown to people and scripts (no digest)."""
        return {"name": self.name, "created_at": self.created_at}


class Accounts:
    """The accounts file of one server data directory."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.path = data_dir / "accounts.json"
        self._cache_lock = threading.Lock()
        self._cache: tuple[tuple[int, int, int], dict[str, Any]] | None = None

    def _lock(self) -> DirLock:
        ensure_private_dir(self.data_dir)
        return DirLock(self.data_dir / ".accounts.lock", timeout=10.0, label="the accounts")

    def _load(self) -> dict[str, Any]:
        """The file's document, re-read only when it changed on disk."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return {"format": _FORMAT, "users": {}, "admin_key_sha256": None}
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        with self._cache_lock:
            if self._cache is not None and self._cache[0] == stamp:
                return self._cache[1]
        try:
            doc = json.loads(self.path.read_bytes())
            if not isinstance(doc, dict) or not isinstance(doc.get("users"), dict):
                raise ValueError("no users")
        except ValueError as exc:
            raise Refused(f"{self.path} is damaged ({exc}); no token is valid") from None
        with self._cache_lock:
            self._cache = (stamp, doc)
        return doc

    def _save(self, doc: dict[str, Any]) -> None:
        data = json.dumps(doc, indent=2, sort_keys=True).encode("utf-8") + b"\n"
        atomic_write(self.path, data, mode=0o600)

    def users(self) -> list[Account]:
        """Every account, by name."""
        users: dict[str, dict[str, Any]] = self._load()["users"]
        return [
            Account(name, str(u["token_sha256"]), int(u.get("created_at", 0)))
            for name, u in sorted(users.items())
        ]

    def exists(self, name: str) -> bool:
        """Whether an account of that name exists."""
        return name in self._load()["users"]

    def add_user(self, name: str, *, rotate: bool = False) -> str:
        """Add a user (or, with `rotate`, replace an existing user's token); return the token."""
        validate_user(name)
        token = secrets.token_urlsafe(_TOKEN_BYTES)
        with self._lock():
            doc = dict(self._load())
            users = dict(doc["users"])
            if name in users and not rotate:
                raise Conflict(f"user {name!r} exists; pass --rotate to issue a new token")
            if name not in users and rotate:
                raise NotFound(f"no user {name!r} to rotate")
            users[name] = {
                "token_sha256": token_digest(token),
                "created_at": int(time.time() * 1000),
            }
            doc["users"] = users
            doc["format"] = _FORMAT
            self._save(doc)
        return token

    def remove_user(self, name: str) -> None:
        """Remove a user; its token stops working at once (its data stays: see erase)."""
        with self._lock():
            doc = dict(self._load())
            users = dict(doc["users"])
            if users.pop(name, None) is None:
                raise NotFound(f"no user {name!r}")
            doc["users"] = users
            self._save(doc)

    def authenticate(self, token: str) -> str | None:
        """The user whose token this is, or None. Every digest is compared, in constant time."""
        digest = token_digest(token)
        found: str | None = None
        for account in self.users():
            if hmac.compare_digest(digest, account.token_sha256):
                found = account.name
        return found

    def set_admin_key(self) -> str:
        """Issue a new admin key (the old one stops working); return it."""
        key = secrets.token_urlsafe(_TOKEN_BYTES)
        with self._lock():
            doc = dict(self._load())
            doc["admin_key_sha256"] = token_digest(key)
            doc["format"] = _FORMAT
            self._save(doc)
        return key

    def is_admin(self, key: str) -> bool:
        """True when `key` is the admin key (False when none was set)."""
        stored = self._load().get("admin_key_sha256")
        if not isinstance(stored, str):
            return False
        return hmac.compare_digest(token_digest(key), stored)
