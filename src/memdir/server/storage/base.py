"""The storage interface of the sync server: immutable note revisions plus one manifest per scope.

Notes belong to an *owner*: a user name, or `+<team>` for a team's notes (`team_owner`;
`+` is never part of a user name, so the two cannot collide). A backend stores, per owner
and scope key (`user` or `project/<id>`):

- immutable revisions, addressed by (note id, rev) where rev is the SHA-256 of the bytes;
  writing one that exists is a no-op (the bytes are the same by construction);
- one `Manifest`, replaced atomically by compare-and-swap on its version: a swap from
  `expected` succeeds only if the stored version is still `expected` (0: no manifest yet);
- an erase marker per user, written before any of the user's data is deleted, after
  which every request of that user is refused;
- at most one keyring document per user (opaque bytes with the key id they name and a
  version), replaced by compare-and-swap on that version, deleted with the account;
- at most one policy document per team (opaque bytes and a version), created at version 1
  by a swap from 0 and replaced by compare-and-swap on its version like the keyring.

Erase markers and keyrings belong to users only: a team owner is never erased
(`is_erased("+<team>")` is False), and erasing user `acme` leaves team `acme` alone.

Backends know nothing of quotas, tokens or validation: `memdir.server.rules` does that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, runtime_checkable

from memdir.sync.protocol import Manifest

__all__ = [
    "ListedServerDocuments",
    "ServerDocuments",
    "Storage",
    "StoredKeyring",
    "StoredObject",
    "StoredTeam",
]

#: (note id, rev, bytes) of one revision to store.
StoredObject = tuple[str, str, bytes]
#: (version, key id, bytes) of a user's stored keyring document.
StoredKeyring = tuple[int, str, bytes]
#: (version, bytes) of a team's stored policy document.
StoredTeam = tuple[int, bytes]


class Storage(Protocol):
    """What the sync server needs from a backend. Every method is safe to call from threads."""

    def manifest(self, owner: str, scope: str) -> Manifest:
        """The scope's current manifest (an empty one with version 0 when there is none)."""
        ...

    def objects(self, owner: str, scope: str, wanted: Mapping[str, str]) -> dict[str, bytes]:
        """The bytes of the revisions in `wanted` (rev -> note id); missing ones are left out."""
        ...

    def put_objects(self, owner: str, scope: str, objects: Iterable[StoredObject]) -> None:
        """Store revisions durably (before the manifest that names them is swapped in)."""
        ...

    def swap_manifest(self, owner: str, scope: str, expected: int, manifest: Manifest) -> bool:
        """Replace the manifest if its version is still `expected`; False when it moved on."""
        ...

    def keyring(self, user: str) -> StoredKeyring | None:
        """The user's keyring document, None when none is stored."""
        ...

    def swap_keyring(self, user: str, expected: int, key_id: str, doc: bytes) -> bool:
        """Store the keyring document as version `expected + 1` if the stored version is
        still `expected` (0: none); False when it moved on, or the account is erased."""
        ...

    def team(self, team: str) -> StoredTeam | None:
        """The team's policy document, None when no such team exists."""
        ...

    def swap_team(self, team: str, expected: int, doc: bytes) -> bool:
        """Store the team's policy document as version `expected + 1` if the stored version
        is still `expected` (0: no team yet, i.e. create); False when it moved on."""
        ...

    def mark_erased(self, user: str) -> None:
        """Write the user's erase marker (idempotent)."""
        ...

    def is_erased(self, user: str) -> bool:
        """True once the user's erase marker exists; always False for a team owner."""
        ...

    def erase(self, user: str) -> None:
        """Delete every manifest and revision of the user; the marker stays."""
        ...

    def close(self) -> None:
        """Release connections and handles."""
        ...


@runtime_checkable
class ServerDocuments(Protocol):
    """The server's own versioned documents (its accounts), kept in a backend that several
    server replicas share (PostgreSQL, S3). The directory backend keeps its accounts in
    the data directory's `accounts.json` instead, as it always has."""

    def server_document(self, name: str) -> StoredTeam | None:
        """(version, bytes) of the document `name`, None when there is none."""
        ...

    def server_document_stamp(self, name: str) -> str | None:
        """A token that changes whenever the document `name` does (cheap: no body), None
        when there is none."""
        ...

    def swap_server_document(self, name: str, expected: int, doc: bytes) -> bool:
        """Store `name` as version `expected + 1` if still at `expected` (0: none)."""
        ...


@runtime_checkable
class ListedServerDocuments(ServerDocuments, Protocol):
    """Server documents that can also be listed by name and deleted (to prune the OAuth
    state): PostgreSQL and S3. A separate protocol so that `ServerDocuments` alone (all the
    accounts need) stays enough for `isinstance` checks of stores that keep only accounts."""

    def server_document_names(self, prefix: str) -> list[str]:
        """The names of the stored documents that start with `prefix`, sorted."""
        ...

    def delete_server_document(self, name: str, version: int | None = None) -> bool:
        """Delete the document `name` (with `version`: only while it is at that version);
        whether one was deleted. PostgreSQL checks the version in the delete itself; S3
        reads it just before (a change landing in between is lost, so only documents no
        one changes any more are deleted by version there)."""
        ...
