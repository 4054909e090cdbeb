"""The keys of an end-to-end encrypted team (§12): member key pairs, epoch keys, wraps.

A team's notes travel sealed (`memdir.crypto.seal`) with the team's *epoch key*: 32
random bytes that give the usual subkeys (`memdir.crypto.keys.subkeys`), so its key id
is derived from the key itself and a key cannot be passed off under another epoch's id.
A new epoch (a new random key) starts whenever a member leaves or is removed; the
earlier keys stay with the members that had them, for the notes sealed under them.

Each member has an X25519 key pair derived from their own home's master key (the
``member`` subkey), so it needs no new secret to keep: their public key is enrolled in
the team, and each epoch key is *wrapped* for each member's public key with a libsodium
sealed box. A wrap binds the team, the epoch and the key id into what it seals, so a
wrap moved to another team or epoch does not open as it.

This module is pure: it makes and opens key material; the sync client moves it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets

from memdir.crypto.keys import KEY_BYTES, subkeys
from memdir.crypto.seal import SealKeys
from memdir.errors import IntegrityError

__all__ = [
    "EpochKey",
    "MemberKey",
    "fingerprint",
    "new_epoch_key",
    "usable_public_key",
    "wrap_for",
]

_WRAP_MAGIC = b"memdir-team-key 1\x00"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise IntegrityError(f"{what} is not base64") from None


def fingerprint(public_key: str) -> str:
    """A short form of a member's public key to compare aloud: 8 groups of 4 hex digits."""
    digest = hashlib.sha256(_unb64(public_key, "a member key")).hexdigest()[:32]
    return " ".join(digest[i : i + 4] for i in range(0, 32, 4))


class MemberKey:
    """One member's X25519 key pair, from their home's unlocked keys."""

    def __init__(self, keys: SealKeys) -> None:
        from nacl.public import PrivateKey

        self._private = PrivateKey(keys.member)
        #: The public key as the team stores it (base64 of 32 bytes).
        self.public = _b64(bytes(self._private.public_key))

    def __repr__(self) -> str:
        return f"MemberKey(public={self.public})"

    def open(self, team: str, epoch: int, key_id: str, wrap: str) -> EpochKey:
        """The epoch key in `wrap`; IntegrityError when it is not one for this key, team,
        epoch and key id."""
        from nacl.exceptions import CryptoError
        from nacl.public import SealedBox

        where = f"the wrapped key of epoch {epoch} of team {team}"
        try:
            payload = SealedBox(self._private).decrypt(_unb64(wrap, where))
        except CryptoError:
            raise IntegrityError(f"{where} does not open with this home's member key") from None
        bound = _binding(team, epoch)
        if not payload.startswith(bound) or len(payload) != len(bound) + KEY_BYTES:
            raise IntegrityError(f"{where} was made for another team or epoch")
        key = EpochKey(epoch, payload[len(bound) :])
        if key.key_id != key_id:
            raise IntegrityError(f"{where} holds another key than the epoch names ({key_id})")
        return key


class EpochKey:
    """One epoch's key of a team: the raw key (to wrap) and its sealing subkeys."""

    def __init__(self, epoch: int, raw: bytes) -> None:
        self.epoch = epoch
        self._raw = raw
        #: The subkeys notes are sealed with.
        self.keys = subkeys(raw)
        #: The key id (16 hex digits) every text sealed under it names.
        self.key_id = self.keys.key_id.hex()

    def __repr__(self) -> str:  # never key bytes in a log or a traceback
        return f"EpochKey(epoch={self.epoch}, key_id={self.key_id})"

    def wrap_for(self, team: str, public_key: str) -> str:
        """This key sealed for a member's public key (base64)."""
        return wrap_for(team, self.epoch, self._raw, public_key)


def _binding(team: str, epoch: int) -> bytes:
    return _WRAP_MAGIC + team.encode("utf-8") + b"\x00" + str(epoch).encode("ascii") + b"\x00"


def new_epoch_key(epoch: int) -> EpochKey:
    """A fresh random key for `epoch`."""
    return EpochKey(epoch, secrets.token_bytes(KEY_BYTES))


def wrap_for(team: str, epoch: int, raw: bytes, public_key: str) -> str:
    """`raw` (an epoch key) sealed for `public_key`, bound to the team and the epoch;
    IntegrityError for a key nothing can be sealed for (not 32 bytes, a low-order point)."""
    from nacl.exceptions import CryptoError
    from nacl.exceptions import RuntimeError as SodiumError
    from nacl.public import PublicKey, SealedBox

    recipient = _unb64(public_key, "a member key")
    if len(recipient) != 32:
        raise IntegrityError("a member key is 32 bytes")
    try:
        return _b64(SealedBox(PublicKey(recipient)).encrypt(_binding(team, epoch) + raw))
    except (CryptoError, SodiumError):
        raise IntegrityError("a member key is not a usable X25519 public key") from None


def usable_public_key(public_key: str) -> bool:
    """Whether something can be sealed for `public_key` (a server checks an enrolment)."""
    try:
        wrap_for("check", 1, bytes(KEY_BYTES), public_key)
    except IntegrityError:
        return False
    return True
