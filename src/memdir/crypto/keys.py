"""The keyring of an encrypted store (§8.2): a random master key, wrapped twice.

One keyring per memdir home (``$MEMDIR_HOME/crypto/keyring.json``, 0600) holds:

- the master key (32 random bytes) wrapped by the password's key: Argon2id (libsodium's
  ``argon2id13``: 64 MiB, 3 iterations, parallelism 1) of the password with a random
  16-byte salt gives the key-encryption key, and XChaCha20-Poly1305 seals the master key
  under it;
- the same master key wrapped by the recovery key: 32 random bytes shown once, at
  `memdir encrypt`, as ``MDRK-`` and 13 groups of four base32 letters; being random it
  needs no stretching (BLAKE2b of it is its key-encryption key).

Changing the password (`memdir passwd`) re-wraps the master key with a new salt; no
content is re-encrypted. The master key never leaves memory: it is handed to the unlock
agent. It gives subkeys by keyed BLAKE2b with a distinct personalisation each: the
sealing key, the revision-tag key, and the key id (8 bytes naming the master key in every
sealed header and in the keyring, checked after unwrapping).

This module is pure: it builds and reads the keyring's JSON; the store writes the file.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import secrets
from dataclasses import dataclass, replace
from typing import Any

import nacl.exceptions
import nacl.pwhash.argon2id as argon2id
from nacl.bindings import (
    crypto_aead_xchacha20poly1305_ietf_decrypt,
    crypto_aead_xchacha20poly1305_ietf_encrypt,
)

from memdir.crypto.seal import NONCE_BYTES, SealKeys
from memdir.errors import IntegrityError, InvalidInput, WrongPassword

__all__ = [
    "KDF_MEMLIMIT",
    "KDF_OPSLIMIT",
    "KEY_BYTES",
    "Keyring",
    "derive_kek",
    "new_recovery_key",
    "parse_recovery_key",
    "subkeys",
]

KEY_BYTES = 32
SALT_BYTES = argon2id.SALTBYTES  # 16
KDF_OPSLIMIT = 3
KDF_MEMLIMIT = 64 * 1024 * 1024
_FORMAT = "memdir-keyring"
_VERSION = 1
_RECOVERY_PREFIX = "MDRK"
#: The most a keyring may ask of Argon2id (ours asks 3 and 64 MiB).
MAX_OPSLIMIT = 16
MAX_MEMLIMIT = 1 << 30
#: Passwords longer than this are refused (a file of a gigabyte is not a password).
MAX_PASSWORD_BYTES = 4096


def derive_kek(
    password: bytes, salt: bytes, *, opslimit: int = KDF_OPSLIMIT, memlimit: int = KDF_MEMLIMIT
) -> bytes:
    """The key-encryption key of a password: Argon2id (parallelism 1, libsodium's only)."""
    if len(salt) != SALT_BYTES:
        raise InvalidInput(f"an Argon2id salt must be {SALT_BYTES} bytes")
    return argon2id.kdf(KEY_BYTES, password, salt, opslimit=opslimit, memlimit=memlimit)


def _blake(data: bytes, key: bytes, person: bytes, size: int = KEY_BYTES) -> bytes:
    return hashlib.blake2b(data, key=key, digest_size=size, person=person).digest()


def subkeys(master: bytes) -> SealKeys:
    """The sealing subkeys of a master key."""
    if len(master) != KEY_BYTES:
        raise InvalidInput("a master key is 32 bytes")
    return SealKeys(
        key_id=_blake(b"key-id", master, b"memdir-keyid-v1", 8),
        seal=_blake(b"seal", master, b"memdir-seal-v1"),
        tag=_blake(b"tag", master, b"memdir-tag-v1"),
        member=_blake(b"member", master, b"memdir-member-v1"),
    )


def new_recovery_key() -> tuple[str, bytes]:
    """A fresh recovery key: (the text to show the user, its 32 bytes)."""
    raw = secrets.token_bytes(KEY_BYTES)
    return format_recovery_key(raw), raw


def format_recovery_key(raw: bytes) -> str:
    """``MDRK-`` and thirteen groups of four base32 letters (256 bits)."""
    letters = base64.b32encode(raw).decode("ascii").rstrip("=")
    return "-".join([_RECOVERY_PREFIX, *(letters[i : i + 4] for i in range(0, len(letters), 4))])


def parse_recovery_key(text: str) -> bytes:
    """The bytes of a recovery key as the user typed it (case, spaces and dashes free)."""
    letters = "".join(ch for ch in text.upper() if ch.isalnum())
    if letters.startswith(_RECOVERY_PREFIX):
        letters = letters[len(_RECOVERY_PREFIX) :]
    try:
        raw = base64.b32decode(letters + "=" * (-len(letters) % 8))
    except (binascii.Error, ValueError):
        raise WrongPassword("that is not a recovery key (MDRK- and base32 letters)") from None
    if len(raw) != KEY_BYTES:
        raise WrongPassword("that is not a recovery key: it has the wrong length")
    return raw


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(value: object, what: str) -> bytes:
    if not isinstance(value, str):
        raise IntegrityError(f"the keyring's {what} is missing")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise IntegrityError(f"the keyring's {what} is not base64") from None


def _wrap(kek: bytes, master: bytes, slot: str, key_id: bytes) -> bytes:
    nonce = secrets.token_bytes(NONCE_BYTES)
    ad = f"{_FORMAT} {_VERSION} {slot} {key_id.hex()}".encode()
    return nonce + crypto_aead_xchacha20poly1305_ietf_encrypt(master, ad, nonce, kek)


def _unwrap(kek: bytes, wrapped: bytes, slot: str, key_id: bytes) -> bytes | None:
    ad = f"{_FORMAT} {_VERSION} {slot} {key_id.hex()}".encode()
    try:
        return crypto_aead_xchacha20poly1305_ietf_decrypt(
            wrapped[NONCE_BYTES:], ad, wrapped[:NONCE_BYTES], kek
        )
    except nacl.exceptions.CryptoError:
        return None


def _recovery_kek(raw: bytes) -> bytes:
    return _blake(raw, b"", b"memdir-recov-v1")


def check_password(password: bytes) -> bytes:
    """A password as the keyring takes it: not empty, not huge."""
    if not password:
        raise InvalidInput("the password is empty")
    if len(password) > MAX_PASSWORD_BYTES:
        raise InvalidInput(f"the password is longer than {MAX_PASSWORD_BYTES} bytes")
    return password


@dataclass(frozen=True, slots=True)
class Keyring:
    """A store's wrapped master key (what ``keyring.json`` holds; no secret in clear)."""

    key_id: bytes
    salt: bytes
    opslimit: int
    memlimit: int
    by_password: bytes
    by_recovery: bytes
    created_ms: int

    def __repr__(self) -> str:
        return f"Keyring(key_id={self.key_id.hex()})"

    @classmethod
    def create(cls, password: bytes, now_ms: int) -> tuple[Keyring, bytes, str]:
        """A new keyring: (keyring, master key, recovery key text to show once)."""
        master = secrets.token_bytes(KEY_BYTES)
        text, raw = new_recovery_key()
        key_id = subkeys(master).key_id
        salt = secrets.token_bytes(SALT_BYTES)
        kek = derive_kek(check_password(password), salt)
        ring = cls(
            key_id=key_id,
            salt=salt,
            opslimit=KDF_OPSLIMIT,
            memlimit=KDF_MEMLIMIT,
            by_password=_wrap(kek, master, "password", key_id),
            by_recovery=_wrap(_recovery_kek(raw), master, "recovery", key_id),
            created_ms=now_ms,
        )
        return ring, master, text

    def _checked(self, master: bytes | None) -> bytes:
        if master is None or subkeys(master).key_id != self.key_id:
            raise WrongPassword("the password does not open this store's keyring")
        return master

    def open_with_password(self, password: bytes) -> bytes:
        """The master key (WrongPassword when the password is not this keyring's)."""
        kek = derive_kek(
            check_password(password), self.salt, opslimit=self.opslimit, memlimit=self.memlimit
        )
        return self._checked(_unwrap(kek, self.by_password, "password", self.key_id))

    def open_with_recovery(self, text: str) -> bytes:
        """The master key from the recovery key (WrongPassword when it is not this one's)."""
        raw = parse_recovery_key(text)
        master = _unwrap(_recovery_kek(raw), self.by_recovery, "recovery", self.key_id)
        if master is None or subkeys(master).key_id != self.key_id:
            raise WrongPassword("that recovery key does not open this store's keyring")
        return master

    def with_password(self, master: bytes, password: bytes) -> Keyring:
        """This keyring with the master key wrapped by a new password (a new salt)."""
        self._checked(master)
        salt = secrets.token_bytes(SALT_BYTES)
        kek = derive_kek(check_password(password), salt)
        return replace(
            self,
            salt=salt,
            opslimit=KDF_OPSLIMIT,
            memlimit=KDF_MEMLIMIT,
            by_password=_wrap(kek, master, "password", self.key_id),
        )

    def to_json(self) -> bytes:
        """The keyring file's bytes."""
        doc = {
            "format": _FORMAT,
            "version": _VERSION,
            "keyId": self.key_id.hex(),
            "created": self.created_ms,
            "password": {
                "kdf": "argon2id13",
                "opslimit": self.opslimit,
                "memlimit": self.memlimit,
                "salt": _b64(self.salt),
                "wrapped": _b64(self.by_password),
            },
            "recovery": {"kdf": "blake2b", "wrapped": _b64(self.by_recovery)},
        }
        return json.dumps(doc, indent=2).encode() + b"\n"

    @classmethod
    def from_json(cls, data: bytes) -> Keyring:
        """A keyring from its file (IntegrityError when it is not a whole one)."""
        try:
            doc: Any = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            raise IntegrityError("the keyring is not JSON (damaged)") from None
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise IntegrityError("the keyring is not a memdir keyring")
        if doc.get("version") != _VERSION:
            raise IntegrityError(
                f"the keyring is of version {doc.get('version')!r}, which this memdir cannot read"
            )
        pw, rec = doc.get("password"), doc.get("recovery")
        if not isinstance(pw, dict) or not isinstance(rec, dict):
            raise IntegrityError("the keyring lacks its password or recovery slot")
        ops, mem = pw.get("opslimit"), pw.get("memlimit")
        if pw.get("kdf") != "argon2id13" or not isinstance(ops, int) or not isinstance(mem, int):
            raise IntegrityError("the keyring's key derivation is not Argon2id")
        # The file is not authenticated before the key is derived: bound the cost it can
        # ask for (a tampered file must not make unlock allocate gigabytes or run for long).
        if not (1 <= ops <= MAX_OPSLIMIT and 8192 <= mem <= MAX_MEMLIMIT):
            raise IntegrityError(
                f"the keyring's Argon2id parameters are out of range (at most {MAX_OPSLIMIT} "
                f"iterations and {MAX_MEMLIMIT >> 20} MiB)"
            )
        try:
            key_id = bytes.fromhex(str(doc.get("keyId")))
        except ValueError:
            key_id = b""
        salt = _unb64(pw.get("salt"), "salt")
        wrapped = [
            _unb64(pw.get("wrapped"), "password slot"),
            _unb64(rec.get("wrapped"), "recovery slot"),
        ]
        if len(key_id) != 8 or len(salt) != SALT_BYTES:
            raise IntegrityError("the keyring's key id or salt has the wrong length")
        if any(len(w) != NONCE_BYTES + KEY_BYTES + 16 for w in wrapped):
            raise IntegrityError("the keyring's wrapped key has the wrong length")
        created = doc.get("created")
        return cls(
            key_id=key_id,
            salt=salt,
            opslimit=ops,
            memlimit=mem,
            by_password=wrapped[0],
            by_recovery=wrapped[1],
            created_ms=created if isinstance(created, int) else 0,
        )
