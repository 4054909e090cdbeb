"""The sealed-file format of an encrypted store (§8.2), version 1.

A sealed file is text, so that git, diff and the sync protocol carry it as they carry a
note, and a person who opens one learns what it is::

    memdir-sealed 1 note: encrypted by memdir; `memdir unlock` reads it
    <base64 of the frame, in lines of 76 characters>

The frame is ``header ‖ ciphertext``; the header (54 bytes) is

    ======  =====  ==========================================================
    offset  bytes  field
    ======  =====  ==========================================================
    0       4      magic ``MDSL``
    4       1      format version (1)
    5       1      kind: 1 note file, 2 history object, 3 backup, 4 wire (sync),
                   5 state (other machine-local copies: sync baselines, drafts)
    6       8      key id: which master key sealed it (`memdir.crypto.keys`)
    14      16     revision tag: keyed BLAKE2b of the plaintext's revision id
    30      24     nonce: random, fresh for every seal (XChaCha20: 192 bits)
    ======  =====  ==========================================================

and the ciphertext is XChaCha20-Poly1305 (IETF) of the plaintext under the sealing subkey,
with associated data ``header ‖ 0x00 ‖ context``. The context names what the file is
(the note id; for a wire revision the scope and note id), so a ciphertext moved to
another note, another kind or another key fails to open, and any changed bit of the
header, the nonce or the ciphertext fails the tag. The revision tag binds the revision:
an opener that knows which revision it wants (a history object, a backup) checks the tag
before decrypting, and every opener checks after decrypting that the plaintext is that
revision. A tag is keyed, so it confirms no guess of the content to anyone without the
key. What a sealed file does not hide: its kind, its key id, its size (± 16 bytes of tag
and the header) and, from its file name, the note id.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets
from dataclasses import dataclass
from enum import IntEnum

from memdir.errors import IntegrityError

__all__ = [
    "FIRST_LINE",
    "HEADER_BYTES",
    "Kind",
    "Opened",
    "SealKeys",
    "is_sealed",
    "key_id_of",
    "open_sealed",
    "revision_of",
    "seal",
    "sealed_kind",
]

MAGIC = b"MDSL"
VERSION = 1
NONCE_BYTES = 24
TAG_BYTES = 16
KEY_ID_BYTES = 8
HEADER_BYTES = 4 + 1 + 1 + KEY_ID_BYTES + 16 + NONCE_BYTES
#: Every sealed file begins with this; the rest of its first line says what it is.
FIRST_LINE = b"memdir-sealed 1 "
_LINE = 76


class Kind(IntEnum):
    """What a sealed file is; part of the associated data."""

    NOTE = 1
    OBJECT = 2
    BACKUP = 3
    WIRE = 4
    STATE = 5


_WORDS = {
    Kind.NOTE: "note",
    Kind.OBJECT: "history object",
    Kind.BACKUP: "backup",
    Kind.WIRE: "synced revision",
    Kind.STATE: "sync copy",
}


def revision_of(data: bytes) -> str:
    """memdir's revision id of some bytes: the SHA-256 of them, in hex."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class SealKeys:
    """The subkeys one master key gives (see `memdir.crypto.keys.subkeys`)."""

    #: Which master key: 8 bytes, stored in every header.
    key_id: bytes
    #: The XChaCha20-Poly1305 key.
    seal: bytes
    #: The BLAKE2b key of revision tags.
    tag: bytes
    #: The seed of this key's X25519 member key pair: what a team wraps its keys for (§12).
    member: bytes

    def __repr__(self) -> str:  # never key bytes in a log or a traceback
        return f"SealKeys(key_id={self.key_id.hex()})"

    def revision_tag(self, revision: str) -> bytes:
        """The keyed tag of a revision id."""
        return hashlib.blake2b(
            revision.encode("ascii"), key=self.tag, digest_size=16, person=b"memdir-rev-v1"
        ).digest()


@dataclass(frozen=True, slots=True)
class Opened:
    """What a sealed file held."""

    data: bytes
    revision: str
    kind: Kind


def _associated(header: bytes, context: str) -> bytes:
    return header + b"\x00" + context.encode("utf-8")


def seal(keys: SealKeys, data: bytes, *, kind: Kind, context: str) -> bytes:
    """`data` sealed as a file of `kind` for `context` (a note id…), with a fresh nonce."""
    from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_encrypt  # libsodium: on use

    revision = revision_of(data)
    nonce = secrets.token_bytes(NONCE_BYTES)
    header = MAGIC + bytes((VERSION, int(kind))) + keys.key_id + keys.revision_tag(revision) + nonce
    sealed = crypto_aead_xchacha20poly1305_ietf_encrypt(
        data, _associated(header, context), nonce, keys.seal
    )
    body = base64.b64encode(header + sealed)
    lines = [body[i : i + _LINE] for i in range(0, len(body), _LINE)] or [b""]
    first = FIRST_LINE + _WORDS[kind].encode() + b": encrypted by memdir; `memdir unlock` reads it"
    return first + b"\n" + b"\n".join(lines) + b"\n"


def is_sealed(data: bytes) -> bool:
    """Whether `data` is a sealed file (by its first line; nothing is checked)."""
    return data.startswith(FIRST_LINE)


def _frame(data: bytes, where: str) -> bytes:
    if not is_sealed(data):
        raise IntegrityError(f"{where} is not a sealed file (no memdir-sealed first line)")
    _, _, rest = data.partition(b"\n")
    try:
        frame = base64.b64decode(b"".join(rest.split()), validate=True)
    except (binascii.Error, ValueError):
        raise IntegrityError(f"{where} is damaged: its sealed body is not base64") from None
    if len(frame) < HEADER_BYTES + TAG_BYTES:
        raise IntegrityError(f"{where} is damaged: truncated ({len(frame)} bytes of frame)")
    if frame[:4] != MAGIC:
        raise IntegrityError(f"{where} is damaged: wrong magic")
    if frame[4] != VERSION:
        raise IntegrityError(
            f"{where} is sealed in format version {frame[4]}, which this memdir cannot open"
        )
    return frame


def sealed_kind(data: bytes) -> Kind | None:
    """The kind a sealed file says it is (None when not sealed or unreadable)."""
    try:
        frame = _frame(data, "file")
        return Kind(frame[5])
    except (IntegrityError, ValueError):
        return None


def key_id_of(data: bytes) -> bytes | None:
    """The key id a sealed file names (None when not sealed or unreadable)."""
    try:
        return _frame(data, "file")[6 : 6 + KEY_ID_BYTES]
    except IntegrityError:
        return None


def open_sealed(
    keys: SealKeys,
    data: bytes,
    *,
    kind: Kind,
    context: str,
    revision: str | None = None,
    where: str = "a sealed file",
) -> Opened:
    """Open a sealed file of `kind` for `context`; with `revision`, only that revision.

    IntegrityError (with `where` in the message, never content) when it is not a sealed
    file, is damaged, was sealed by another key, for another kind, note or revision, or any
    bit of it changed."""
    frame = _frame(data, where)
    header, sealed = frame[:HEADER_BYTES], frame[HEADER_BYTES:]
    if frame[5] != int(kind):
        raise IntegrityError(f"{where} is not a sealed {_WORDS[kind]} (moved or replaced)")
    if header[6 : 6 + KEY_ID_BYTES] != keys.key_id:
        raise IntegrityError(f"{where} was sealed by another key than this store's")
    tag = header[14:30]
    if revision is not None and not secrets.compare_digest(tag, keys.revision_tag(revision)):
        raise IntegrityError(f"{where} does not hold revision {revision[:12]} (swapped)")
    import nacl.exceptions
    from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_decrypt

    nonce = header[30:HEADER_BYTES]
    try:
        plain = crypto_aead_xchacha20poly1305_ietf_decrypt(
            sealed, _associated(header, context), nonce, keys.seal
        )
    except nacl.exceptions.CryptoError:
        raise IntegrityError(
            f"{where} does not open: changed, damaged, or sealed for another note"
        ) from None
    found = revision_of(plain)
    if not secrets.compare_digest(tag, keys.revision_tag(found)):
        raise IntegrityError(f"{where} does not hold the revision its header names")
    return Opened(plain, found, kind)
