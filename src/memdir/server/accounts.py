"""The sync server's accounts: users with bearer tokens and one admin key, stored hashed.

With the directory backend everything lives in ``<data>/accounts.json`` (mode 0600,
atomic writes, changed under a lock). With PostgreSQL or S3 it is one document in the
backend (`ServerDocuments`), changed by compare-and-swap on its version, so several
server replicas share the accounts and nothing else (§12); the first time such a
backend is used, an ``accounts.json`` in the data directory is copied into it once
(`open_accounts`), and the file is not read again.

A token or key exists in clear only once: when it is issued, to be written to a file
the operator names (`write_secret`, mode 0600). Only SHA-256 digests are kept, compared
in constant time. The server reads the accounts again when they change, so `memdir
server user add/remove` takes effect without a restart.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.errors import Busy, Conflict, NotFound, Refused
from memdir.files.atomic import atomic_write, ensure_private_dir, write_private
from memdir.files.lock import DirLock
from memdir.server.storage.base import ServerDocuments, Storage
from memdir.server.storage.directory import validate_user

__all__ = ["IN_BACKEND", "Account", "Accounts", "open_accounts", "token_digest", "write_secret"]

log = logging.getLogger(__name__)

_FORMAT = "memdir-server-accounts/1"
_TOKEN_BYTES = 32
_DOCUMENT = "accounts"
#: Compare-and-swap races a change of the accounts retries before it reports busy.
_SWAP_ATTEMPTS = 8


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


#: Written in a data directory whose server keeps its accounts in the backend, so that the
#: directory-backend commands refuse rather than edit a file the server does not read.
IN_BACKEND = "accounts.in-backend"


def open_accounts(data_dir: Path, storage: Storage) -> Accounts:
    """The accounts of a server over `storage`: in the backend when it keeps server
    documents (PostgreSQL, S3; the data directory is marked so), else in `data_dir`'s file."""
    if isinstance(storage, ServerDocuments):
        marker = data_dir / IN_BACKEND
        if not marker.exists():
            ensure_private_dir(data_dir)
            atomic_write(
                marker,
                b"The accounts of this server live in its storage backend: manage them with "
                b"`memdir server user ... --backend postgres|s3`.\n",
                mode=0o600,
            )
        return Accounts(data_dir, store=storage)
    return Accounts(data_dir)


def _parse(raw: bytes, where: object) -> dict[str, Any]:
    try:
        doc = json.loads(raw)
        if not isinstance(doc, dict) or not isinstance(doc.get("users"), dict):
            raise ValueError("no users")
    except ValueError as exc:
        raise Refused(f"{where} is damaged ({exc}); no token is valid") from None
    return doc


def _empty() -> dict[str, Any]:
    return {"format": _FORMAT, "users": {}, "admin_key_sha256": None}


class Accounts:
    """The accounts of one server: a data directory's file, or a document in `store`."""

    def __init__(self, data_dir: Path, *, store: ServerDocuments | None = None) -> None:
        self.data_dir = data_dir
        self.path = data_dir / "accounts.json"
        self.store = store
        self._cache_lock = threading.Lock()
        self._cache: tuple[object, dict[str, Any]] | None = None
        #: The backend's document as last read: (stamp, version, document).
        self._held: tuple[str, int, dict[str, Any]] | None = None

    def _cached(self, stamp: object) -> dict[str, Any] | None:
        with self._cache_lock:
            if self._cache is not None and self._cache[0] == stamp:
                return self._cache[1]
        return None

    def _remember(self, stamp: object, doc: dict[str, Any]) -> dict[str, Any]:
        with self._cache_lock:
            self._cache = (stamp, doc)
        return doc

    def _stored(self) -> tuple[int, dict[str, Any]]:
        """(version, document) from the backend; a data directory's file is copied in once.
        The body is read only when the document's stamp changed."""
        assert self.store is not None
        stamp = self.store.server_document_stamp(_DOCUMENT)
        if stamp is None:
            try:
                data: bytes | None = self.path.read_bytes()
            except FileNotFoundError:
                data = None
            if data is not None:
                _parse(data, self.path)
                if self.store.swap_server_document(_DOCUMENT, 0, data):
                    log.warning("copied the accounts of %s into the storage backend", self.path)
                    # Kept as a record, out of the way: a later backend never imports it again.
                    with contextlib.suppress(FileNotFoundError):
                        self.path.replace(self.path.with_name(self.path.name + ".imported"))
            # Read again whatever happened here: another replica sharing this data directory
            # may have copied the file in (and moved it away) since the first look.
            stamp = self.store.server_document_stamp(_DOCUMENT)
        if stamp is None:
            return 0, _empty()
        with self._cache_lock:
            held = self._held
        if held is not None and held[0] == stamp:
            return held[1], held[2]
        found = self.store.server_document(_DOCUMENT)
        if found is None:
            return 0, _empty()
        version, raw = found
        doc = _parse(raw, "the accounts document in the storage backend")
        with self._cache_lock:
            # Keyed by the stamp read before the body: a body newer than it is read again
            # at the next request, never an older one kept.
            self._held = (stamp, version, doc)
        return version, doc

    def _update(self, change: Callable[[dict[str, Any]], None]) -> None:
        """Apply `change` to a copy of the accounts and store it (atomically)."""
        if self.store is None:
            if (self.data_dir / IN_BACKEND).exists():
                raise Refused(
                    f"the accounts of the server at {self.data_dir} live in its storage "
                    "backend: pass --backend postgres --dsn … (or --backend s3 …)"
                )
            with self._lock():
                doc = dict(self._load())
                change(doc)
                doc["format"] = _FORMAT
                self._save(doc)
            return
        for _ in range(_SWAP_ATTEMPTS):
            version, current = self._stored()
            doc = dict(current)
            change(doc)
            doc["format"] = _FORMAT
            data = json.dumps(doc, indent=2, sort_keys=True).encode("utf-8") + b"\n"
            if self.store.swap_server_document(_DOCUMENT, version, data):
                return
        raise Busy("the accounts kept changing meanwhile; try again")

    def _lock(self) -> DirLock:
        ensure_private_dir(self.data_dir)
        return DirLock(self.data_dir / ".accounts.lock", timeout=10.0, label="the accounts")

    def _load(self) -> dict[str, Any]:
        """The accounts, read again only when they changed."""
        if self.store is not None:
            return self._stored()[1]
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return _empty()
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        cached = self._cached(stamp)
        if cached is not None:
            return cached
        return self._remember(stamp, _parse(self.path.read_bytes(), self.path))

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

    def token_digest_of(self, name: str) -> str | None:
        """The SHA-256 digest of `name`'s current token, None when there is no such account
        (cheap: the accounts as cached). It changes when the token is rotated, and when the
        account is removed and a new one of that name added."""
        user = self._load()["users"].get(name)
        return None if user is None else str(user["token_sha256"])

    def add_user(self, name: str, *, rotate: bool = False) -> str:
        """Add a user (or, with `rotate`, replace an existing user's token); return the token."""
        validate_user(name)
        token = secrets.token_urlsafe(_TOKEN_BYTES)

        def change(doc: dict[str, Any]) -> None:
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

        self._update(change)
        return token

    def remove_user(self, name: str) -> None:
        """Remove a user; its token stops working at once (its data stays: see erase)."""

        def change(doc: dict[str, Any]) -> None:
            users = dict(doc["users"])
            if users.pop(name, None) is None:
                raise NotFound(f"no user {name!r}")
            doc["users"] = users

        self._update(change)

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

        def change(doc: dict[str, Any]) -> None:
            doc["admin_key_sha256"] = token_digest(key)

        self._update(change)
        return key

    def is_admin(self, key: str) -> bool:
        """True when `key` is the admin key (False when none was set)."""
        stored = self._load().get("admin_key_sha256")
        if not isinstance(stored, str):
            return False
        return hmac.compare_digest(token_digest(key), stored)
