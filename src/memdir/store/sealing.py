"""Which note directories are encrypted, and the one object that seals and opens their files.

An encrypted note directory holds a marker, ``.memdir-encrypted`` (JSON: the key id of the
master key and a state), beside its notes; it travels with the directory (a git
repository, a copy), so whoever finds the directory knows what it holds. The states:

- ``encrypting``: `memdir encrypt` is converting it (killed, it resumes): files are sealed
  as they are written, and both sealed and plain files are read;
- ``encrypted``: every write is sealed; a plain note file found there (put there by hand)
  is read as it is and sealed by the next write or `memdir encrypt`;
- ``decrypting``: `memdir decrypt` is converting it back: writes are plain, both are read.

`Sealer` is shared by every directory of one memdir home: one keyring per home. It asks its
key source for the keys on every use (the unlock agent: a lock or the inactivity timeout
takes effect at once, and each use counts as activity); a locked store raises `Locked`.
The keyring file itself is ``$MEMDIR_HOME/crypto/keyring.json`` (`keyring_path`).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from memdir.crypto.seal import Kind, SealKeys, is_sealed, open_sealed, seal
from memdir.errors import IntegrityError, Refused, Remedy
from memdir.files.atomic import atomic_write, ensure_private_dir, fsync_dir, remove_durably

if TYPE_CHECKING:
    from memdir.crypto.keys import Keyring

__all__ = [
    "MARKER",
    "Marker",
    "Sealer",
    "keyring_path",
    "load_keyring",
    "read_marker",
    "remove_keyring",
    "remove_marker",
    "save_keyring",
    "write_marker",
]

MARKER = ".memdir-encrypted"
_FORMAT = "memdir-encrypted"
State = Literal["encrypting", "encrypted", "decrypting"]
_STATES = ("encrypting", "encrypted", "decrypting")


@dataclass(frozen=True, slots=True)
class Marker:
    """What a note directory's encryption marker says."""

    key_id: str
    state: State
    #: A copy of the keyring (the master key wrapped by the password and by the recovery
    #: key; nothing in clear), so that the folder opens in another memdir home (a clone,
    #: a new machine) with the password or the recovery key. None: the marker has none.
    keyring: bytes | None = None

    @property
    def seals(self) -> bool:
        """Whether writes are sealed (not while decrypting)."""
        return self.state != "decrypting"


def read_marker(directory: Path) -> Marker | None:
    """The directory's marker; None when it is not encrypted. IntegrityError when the
    marker is there but damaged (the directory is then neither safely plain nor sealed)."""
    path = directory / MARKER
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        doc = json.loads(raw)
        key_id, state = doc["keyId"], doc["state"]
        ok = doc.get("format") == _FORMAT and isinstance(key_id, str) and len(key_id) == 16
        int(key_id, 16)
    except (ValueError, KeyError, TypeError, AttributeError):
        ok = False
    if not ok or state not in _STATES:
        raise IntegrityError(
            f"the encryption marker {path} is damaged: memdir cannot tell whether the notes "
            "there are sealed",
            hint=Remedy.DOCTOR,
        )
    ring = doc.get("keyring")
    copy = json.dumps(ring).encode() if isinstance(ring, dict) else None
    return Marker(key_id, state, copy)


def write_marker(directory: Path, marker: Marker) -> None:
    """Write (or replace) the directory's marker durably."""
    doc: dict[str, object] = {
        "format": _FORMAT,
        "version": 1,
        "keyId": marker.key_id,
        "state": marker.state,
    }
    if marker.keyring is not None:
        doc["keyring"] = json.loads(marker.keyring)
    atomic_write(directory / MARKER, json.dumps(doc, indent=1).encode() + b"\n", mode=0o644)


def remove_marker(directory: Path) -> None:
    """Remove the marker durably (the directory is plain again)."""
    remove_durably(directory / MARKER)


def keyring_path(home: Path) -> Path:
    """Where a memdir home keeps its keyring."""
    return home / "crypto" / "keyring.json"


def load_keyring(home: Path) -> Keyring | None:
    """The home's keyring; None when it has none (never encrypted here)."""
    try:
        data = keyring_path(home).read_bytes()
    except FileNotFoundError:
        return None
    from memdir.crypto.keys import Keyring  # libsodium's Argon2id: only for a keyring

    return Keyring.from_json(data)


def save_keyring(home: Path, ring: Keyring, *, new: bool = False) -> None:
    """Write the keyring durably, 0600 in a 0700 folder. With `new`, only if the home has
    none yet (`Refused` when another process made one meanwhile): never replaced then."""
    path = keyring_path(home)
    ensure_private_dir(path.parent)
    if not new:
        atomic_write(path, ring.to_json(), mode=0o600)
        return
    staged = path.with_name(f".{path.name}.new-{secrets.token_hex(4)}")
    atomic_write(staged, ring.to_json(), mode=0o600)
    try:
        os.link(staged, path)  # fails if one exists: two first `encrypt`s cannot both win
    except FileExistsError:
        raise Refused(f"this memdir home has a keyring already ({path})") from None
    finally:
        staged.unlink(missing_ok=True)
    fsync_dir(path.parent)


def remove_keyring(home: Path, key_id: bytes) -> None:
    """Remove the home's keyring if it is still the one of `key_id` (a first `encrypt`
    that failed before sealing anything takes back the keyring it made)."""
    ring = load_keyring(home)
    if ring is not None and ring.key_id == key_id:
        remove_durably(keyring_path(home))


class Sealer:
    """Seals and opens the files of a home's encrypted directories with its master key."""

    def __init__(self, key_id: str, keys: Callable[[], SealKeys]) -> None:
        #: The key id (16 hex digits) of the home's keyring.
        self.key_id = key_id
        self._keys = keys

    def __repr__(self) -> str:
        return f"Sealer(key_id={self.key_id})"

    def keys(self) -> SealKeys:
        """The subkeys (`Locked` when the store is locked)."""
        keys = self._keys()
        if keys.key_id.hex() != self.key_id:
            raise IntegrityError("the unlocked key is not this store's key (another keyring)")
        return keys

    def check(self, marker: Marker, directory: Path) -> None:
        """Refuse a directory sealed by another key than this home's."""
        if marker.key_id != self.key_id:
            raise IntegrityError(
                f"{directory} is encrypted with another key ({marker.key_id}) than this "
                f"memdir home's ({self.key_id}): it cannot be opened here",
            )

    def seal(self, kind: Kind, context: str, data: bytes) -> bytes:
        """`data` sealed for `context`."""
        return seal(self.keys(), data, kind=kind, context=context)

    def open(
        self,
        kind: Kind,
        context: str,
        data: bytes,
        *,
        where: str,
        revision: str | None = None,
    ) -> bytes:
        """The plaintext of a sealed file; a plain one is returned as it is."""
        if not is_sealed(data):
            return data
        return open_sealed(
            self.keys(), data, kind=kind, context=context, revision=revision, where=where
        ).data
