"""The OAuth server's shared state: one small versioned JSON document per entry, swapped by CAS.

Every entry (a pending authorization request, a code, an access or refresh token, a
token family, a registered client, a cached client metadata document) is one document
named ``oauth-<kind>-<digest>``, where the digest is the SHA-256 of the entry's key (a
code or token is never stored in clear, only found by its digest). A consumed or revoked
entry is swapped to a body that says so, by compare-and-swap on its version, which is
also what makes single use hold across server replicas (of two replicas redeeming one
code, only one swap wins). Entries expired for more than a day (`GRACE`), and registered
clients never approved within a day, are deleted by `OAuthState.prune`: a missing code,
token or family is refused exactly as an expired or revoked one.

With a backend that keeps server documents (PostgreSQL, S3) the documents live there;
with the directory backend they are files under ``<data>/oauth`` (atomic writes, swaps
under a lock), with the same semantics (`DocumentStore`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from memdir.errors import Busy
from memdir.files.atomic import atomic_write, ensure_private_dir
from memdir.files.lock import DirLock
from memdir.server.storage.base import ListedServerDocuments, ServerDocuments

__all__ = [
    "GRACE",
    "BackendDocuments",
    "DirectoryDocuments",
    "DocumentStore",
    "Entry",
    "Kind",
    "OAuthState",
    "digest",
]

log = logging.getLogger(__name__)

#: The kinds of entry and the letter each one's document names carry.
Kind = Literal["request", "code", "access", "refresh", "family", "client", "cimd"]
_LETTERS: dict[str, str] = {
    "request": "r",
    "code": "c",
    "access": "a",
    "refresh": "f",
    "family": "g",
    "client": "k",
    "cimd": "m",
}
#: Hex digits of the key's SHA-256 kept in a name: the S3 backend takes names of at most
#: 64 characters (``oauth-x-`` plus 56 digits, i.e. 224 bits).
_DIGITS = 56
_NAME = re.compile(r"oauth-[a-z]-[0-9a-f]{56}")
#: Compare-and-swap races an update retries before it reports busy.
_SWAP_ATTEMPTS = 8
#: Seconds an expired (or spent) entry is kept before `OAuthState.prune` deletes it.
GRACE = 86400.0


def digest(secret: str) -> str:
    """The SHA-256 (hex) of a code, token or key."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class DocumentStore(Protocol):
    """Versioned documents by name: read, swap by compare-and-swap (0: create), list, delete."""

    def get(self, name: str) -> tuple[int, bytes] | None:
        """(version, bytes) of `name`, None when there is none."""
        ...

    def swap(self, name: str, expected: int, data: bytes) -> bool:
        """Store `name` as version `expected + 1` if still at `expected`; False otherwise."""
        ...

    def names(self, prefix: str) -> list[str]:
        """The names of the stored documents starting with `prefix`."""
        ...

    def delete(self, name: str, expected: int) -> bool:
        """Delete `name` if it is still at version `expected`; False when it changed."""
        ...


class BackendDocuments:
    """Documents in a storage backend that several replicas share (PostgreSQL, S3)."""

    def __init__(self, backend: ServerDocuments) -> None:
        self.backend = backend

    def get(self, name: str) -> tuple[int, bytes] | None:
        """(version, bytes) of `name`, None when there is none."""
        return self.backend.server_document(name)

    def swap(self, name: str, expected: int, data: bytes) -> bool:
        """Store `name` as version `expected + 1` if still at `expected`."""
        return self.backend.swap_server_document(name, expected, data)

    def names(self, prefix: str) -> list[str]:
        """The names starting with `prefix`; none when the backend cannot list them."""
        if not isinstance(self.backend, ListedServerDocuments):
            return []
        return self.backend.server_document_names(prefix)

    def delete(self, name: str, expected: int) -> bool:
        """Delete `name` if it is still at version `expected` (PostgreSQL checks it in the
        delete; S3 just before, so `prune` deletes only entries nobody changes any more)."""
        if not isinstance(self.backend, ListedServerDocuments):
            return False
        return self.backend.delete_server_document(name, expected)


class DirectoryDocuments:
    """Documents as files ``<root>/<name>.json`` (mode 0600), swapped under one lock."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def get(self, name: str) -> tuple[int, bytes] | None:
        """(version, bytes) of `name`, None when there is none."""
        try:
            raw = (self.root / f"{name}.json").read_bytes()
        except FileNotFoundError:
            return None
        version, _, data = raw.partition(b"\n")
        return int(version), data

    def swap(self, name: str, expected: int, data: bytes) -> bool:
        """Store `name` as version `expected + 1` if still at `expected`."""
        ensure_private_dir(self.root)
        with DirLock(self.root / ".lock", timeout=10.0, label="the OAuth state"):
            found = self.get(name)
            if (0 if found is None else found[0]) != expected:
                return False
            body = str(expected + 1).encode("ascii") + b"\n" + data
            atomic_write(self.root / f"{name}.json", body, mode=0o600)
        return True

    def names(self, prefix: str) -> list[str]:
        """The names starting with `prefix`, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(p.name[: -len(".json")] for p in self.root.glob(f"{prefix}*.json"))

    def delete(self, name: str, expected: int) -> bool:
        """Delete `name` if it is still at version `expected` (under the lock)."""
        with DirLock(self.root / ".lock", timeout=10.0, label="the OAuth state"):
            found = self.get(name)
            if found is None or found[0] != expected:
                return False
            with contextlib.suppress(FileNotFoundError):
                (self.root / f"{name}.json").unlink()
        return True


@dataclass(frozen=True, slots=True)
class Entry:
    """One stored entry: its document's name and version, and its fields."""

    name: str
    version: int
    fields: dict[str, Any]


class OAuthState:
    """The OAuth entries over one `DocumentStore`; every method is blocking (call it from a
    worker thread in async code)."""

    def __init__(self, store: DocumentStore) -> None:
        self.store = store

    @staticmethod
    def name(kind: Kind, key: str) -> str:
        """The document name of the entry `kind` found by `key` (a code, token, id or URL)."""
        name = f"oauth-{_LETTERS[kind]}-{digest(key)[:_DIGITS]}"
        assert _NAME.fullmatch(name)
        return name

    def get(self, kind: Kind, key: str) -> Entry | None:
        """The entry, None when there is none (or its document is damaged)."""
        name = self.name(kind, key)
        found = self.store.get(name)
        if found is None:
            return None
        try:
            fields = json.loads(found[1])
            if not isinstance(fields, dict) or fields.get("kind") != kind:
                raise ValueError("not an entry of this kind")
        except ValueError as exc:
            log.error("the OAuth document %s is damaged (%s); ignored", name, exc)
            return None
        return Entry(name, found[0], fields)

    def put(self, kind: Kind, key: str, fields: dict[str, Any]) -> bool:
        """Create the entry; False when one exists already (keys are random: never in practice,
        except for a client registered or a document cached twice)."""
        return self.store.swap(self.name(kind, key), 0, _encode(kind, fields))

    def replace(self, kind: Kind, key: str, entry: Entry, fields: dict[str, Any]) -> bool:
        """Swap `entry` (as read) for `fields`; False when it changed since it was read."""
        return self.store.swap(entry.name, entry.version, _encode(kind, fields))

    def store_latest(self, kind: Kind, key: str, fields: dict[str, Any]) -> None:
        """Store `fields` whatever the entry holds now (a cache refresh)."""
        for _ in range(_SWAP_ATTEMPTS):
            found = self.get(kind, key)
            if found is None:
                if self.put(kind, key, fields):
                    return
            elif self.replace(kind, key, found, fields):
                return
        raise Busy("the OAuth state kept changing meanwhile; try again")

    def update(self, kind: Kind, key: str, change: dict[str, Any]) -> None:
        """Set `change` on the entry if it exists and does not hold it already (by CAS)."""
        for _ in range(_SWAP_ATTEMPTS):
            found = self.get(kind, key)
            if found is None or all(found.fields.get(k) == v for k, v in change.items()):
                return
            if self.replace(kind, key, found, {**found.fields, **change}):
                return
        raise Busy("the OAuth state kept changing meanwhile; try again")

    def extend(self, kind: Kind, key: str, until: float) -> None:
        """Move the entry's ``expires_at`` on to `until` (never back), if it exists."""
        for _ in range(_SWAP_ATTEMPTS):
            found = self.get(kind, key)
            if found is None or float(found.fields.get("expires_at", 0)) >= until:
                return
            if self.replace(kind, key, found, {**found.fields, "expires_at": until}):
                return
        raise Busy("the OAuth state kept changing meanwhile; try again")

    def prune(self, now: float) -> int:
        """Delete the entries expired (or spent) for more than `GRACE`: pending requests,
        codes, tokens, metadata documents cached, families whose last refresh token
        expired, and registered clients never approved; the number deleted. Blocking,
        and long on a large state: run it off the request path."""
        deleted = 0
        for name in self.store.names("oauth-"):
            if not _NAME.fullmatch(name):
                continue
            found = self.store.get(name)
            if found is None:
                continue
            try:
                fields = json.loads(found[1])
            except ValueError:
                continue  # damaged: left for a person to look at (`get` logs it)
            if isinstance(fields, dict) and _dead(fields, now):
                deleted += self.store.delete(name, found[0])
        if deleted:
            log.info("pruned %d expired OAuth entries", deleted)
        return deleted

    def claim(self, kind: Kind, key: str, entry: Entry) -> bool:
        """Mark `entry` used, once: True for the one caller whose swap won."""
        if entry.fields.get("used"):
            return False
        return self.replace(kind, key, entry, {**entry.fields, "used": True})

    def revoke_family(self, family: str) -> None:
        """Revoke a token family: every code and token issued from its grant stops working."""
        for _ in range(_SWAP_ATTEMPTS):
            found = self.get("family", family)
            if found is None or found.fields.get("revoked"):
                return
            if self.replace("family", family, found, {**found.fields, "revoked": True}):
                log.info("revoked OAuth grant family %s…", family[:8])
                return
        raise Busy("the OAuth state kept changing meanwhile; try again")


#: How long a registered client that was never approved is kept: a registration never
#: expires for its client, so one whose user comes back weeks later still works.
CLIENT_GRACE = 30 * 86400


def _dead(fields: dict[str, Any], now: float) -> bool:
    """Whether an entry is expired (or spent) for more than `GRACE` at `now`."""
    if fields.get("kind") == "client":
        created = fields.get("created_at")
        return (
            not fields.get("approved")
            and isinstance(created, int | float)
            and created + CLIENT_GRACE < now
        )
    expires = fields.get("expires_at")
    if fields.get("kind") == "family" and expires is None:
        return bool(fields.get("revoked"))  # made before families expired: only if revoked
    return isinstance(expires, int | float) and expires + GRACE < now


def _encode(kind: str, fields: dict[str, Any]) -> bytes:
    body = {**fields, "kind": kind}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")
