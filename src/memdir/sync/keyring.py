"""The keyring of an encrypted home through the sync server, so a second machine can join (§8.2).

The account keeps one keyring document on the server (`GET`/`PUT /v1/keyring`): the
keyring JSON — the master key wrapped by the password's Argon2id key and by the
recovery key, the salt, the parameters, the key id; no secret in clear. A machine that
syncs an encrypted scope publishes its keyring when the server has none
(`publish_keyring`); a machine without a keyring fetches it when it unlocks
(`fetch_keyring`), and the password (or the recovery key) opens it there.

What this machine last exchanged with the server (the document's version and the
SHA-256 of the keyring it then had) is kept in ``memory-sync/keyring-state.json``, so a
new password wrap (`memdir passwd`) travels one way only: a keyring changed here since
is put over the version it was exchanged at; a server keyring changed by another
machine, while this one's is unchanged, replaces this one's (same key id: the same
master key, a new password). Both changed, or another key id: neither is touched and a
warning is logged. A keyring exchanged already is looked at again at most hourly, so a
sync pass does not cost a request more each time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.crypto.keys import Keyring
from memdir.errors import MemdirError, Refused
from memdir.files.atomic import atomic_write, ensure_private_dir
from memdir.store.sealing import load_keyring, save_keyring
from memdir.sync.account import SyncAccount

if TYPE_CHECKING:
    import httpx

    from memdir.sync.client import SyncClient

__all__ = ["fetch_keyring", "publish_keyring", "remember_keyring"]

log = logging.getLogger("memdir.sync")
_STATE = "keyring-state.json"
#: How long a keyring exchanged with the server is trusted to be current there.
_RECHECK_SECONDS = 3600.0
_NO_ENDPOINT = (
    "the sync server at %s cannot hold the keyring (an older server): encrypted notes "
    "still sync as ciphertext, but a second machine must be given the keyring file by hand"
)


def _digest(ring: Keyring) -> str:
    return hashlib.sha256(ring.to_json()).hexdigest()


def _remembered(root: Path) -> tuple[int, str, float] | None:
    """(version, digest of the keyring, when) of the last exchange with the server."""
    try:
        doc = json.loads((root / _STATE).read_bytes())
        return int(doc["version"]), str(doc["keyring"]), float(doc.get("checked", 0))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember_keyring(root: Path, version: int, ring: Keyring) -> None:
    """Record that this machine's keyring is `ring`, exchanged at `version` of the server's."""
    ensure_private_dir(root)
    doc = {"version": version, "keyring": _digest(ring), "checked": time.time()}
    atomic_write(root / _STATE, json.dumps(doc).encode() + b"\n", mode=0o600)


def fetch_keyring(
    root: Path, transport: httpx.BaseTransport | None = None
) -> tuple[Keyring, int] | None:
    """The account's keyring from the sync server this machine is signed in to, with its
    version (None: signed out, or the server keeps none). Nothing is saved here: the
    caller saves it once the password opened it, then calls `remember_keyring`."""
    credentials = SyncAccount(root).credentials()
    if credentials is None:
        return None
    from memdir.sync.client import SyncClient

    with SyncClient(credentials.server, credentials.token, transport=transport) as client:
        found = client.keyring()
    if found is None:
        return None
    ring = Keyring.from_json(found.keyring.encode("utf-8"))
    if ring.key_id.hex() != found.key_id:
        raise Refused("the sync server's keyring names another key id than it holds")
    return ring, found.version


def publish_keyring(client: SyncClient, home: Path) -> None:
    """Give the server this home's keyring when it has none (or a new password wrap made
    here); take the server's when another machine changed the password. Failures are
    logged, never raised: the keyring is for joining machines, not for this sync."""
    from memdir.sync.client import Absent, Stale
    from memdir.sync.protocol import KeyringPut

    root = home / "memory-sync"
    try:
        ring = load_keyring(home)
        if ring is None:
            return
        key_id = ring.key_id.hex()
        seen = _remembered(root)
        fresh = seen is not None and time.time() - seen[2] < _RECHECK_SECONDS
        if fresh and seen is not None and seen[1] == _digest(ring):
            return  # exchanged already, and nothing changed here since
        found = client.keyring()
        if found is not None and found.key_id != key_id:
            log.warning(
                "the sync server keeps the keyring of another key (%s) than this home's "
                "(%s); it is left as it is",
                found.key_id,
                key_id,
            )
            return
        theirs = None if found is None else Keyring.from_json(found.keyring.encode("utf-8"))
        if theirs == ring:
            assert found is not None
            remember_keyring(root, found.version, ring)
            return
        if found is not None and theirs is not None:
            if seen is None or (seen[0] != found.version and seen[1] != _digest(ring)):
                log.warning(
                    "the keyring here and the one on the sync server were both changed "
                    "(two password changes); neither is replaced: run `memdir passwd` again"
                )
                return
            if seen[0] != found.version:  # another machine's new password wrap
                save_keyring(home, theirs)
                remember_keyring(root, found.version, theirs)
                return
        expected = 0 if found is None else found.version
        text = ring.to_json().decode("utf-8")
        stored = client.put_keyring(KeyringPut(expected=expected, key_id=key_id, keyring=text))
        remember_keyring(root, stored.version, ring)
    except Absent:
        log.info(_NO_ENDPOINT, client.origin)
    except Stale:
        log.info("the sync server's keyring changed meanwhile; the next sync looks again")
    except MemdirError as exc:
        log.warning("the keyring was not published to the sync server: %s", exc)
