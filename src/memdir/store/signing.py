"""The signed audit head: its file format, the checks on it, and the machine key that signs it.

Head. ``audit.head`` is canonical JSON (sorted keys, compact) ``{hash, key, seq, sig, ts}`` and a
newline: ``seq``/``hash`` name the log's newest entry, ``ts`` is when it was appended (Unix ms),
``key`` the signer's raw Ed25519 public key and ``sig`` its signature (hex) over ``_HEAD_DOMAIN``
followed by the canonical JSON of ``{hash, seq, ts}``. A legacy head, written before heads were
signed, is ``{hash, seq}`` alone. A copy kept elsewhere (`load_head`) may use any JSON layout.

Key. The private key is one unencrypted PKCS #8 PEM file, ``audit.key`` beside the audit log
($MEMDIR_HOME/audit, 0700), a 0600 file of this user (anything else is refused). It is read only
to sign a head or to derive its public key and never leaves this module: no function returns it,
and no message or exception carries its bytes (an unusable key is described by its path alone).
`key_id` shortens a public key for people.

Creation is crash-safe and keeps one invariant that verification relies on: ``audit.key``
exists only once a head signed by it has been written. A new key is first written (atomically)
as ``audit.key.new``, the head is signed with it and replaced, and only then is the pending key
renamed into place (`MachineKey.commit`). A crash in between leaves a pending key that checks
the head it may have signed and is adopted by the next append, so an unsigned or missing head
next to ``audit.key`` always means the head was rewritten, never that a writer was killed.
Callers serialise creation (the audit log's lock).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

# cryptography is imported where a key is made, read or checked: every command opens the
# audit log's module, and only writes and verification need the key.
if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from memdir.errors import IntegrityError, InvalidInput, disk_error
from memdir.files.atomic import TEMP_MARKER, atomic_write, fsync_dir

# fmt: off
__all__ = [
    "KEY_NAME",
    "AuditHead",
    "MachineKey",
    "head_bytes",
    "head_payload",
    "key_id",
    "load_head",
    "load_object",
    "parse_head",
    "saved_head_problems",
    "signature_problem",
    "signature_valid",
]


def key_id(public_key: str) -> str:
    """A short name for a public key (64 hex digits): 16 hex digits of its SHA-256."""
    return hashlib.sha256(bytes.fromhex(public_key)).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class AuditHead:
    """The newest entry as the head names it, signed by the machine key ``key`` at ``ts``.

    ``ts``, ``key`` and ``sig`` are all None for a legacy head, written before heads were
    signed. ``key`` is the Ed25519 public key (64 hex digits), ``sig`` the signature (128)."""

    seq: int
    hash: str
    ts: int | None = None
    key: str | None = None
    sig: str | None = None

    @property
    def signed(self) -> bool:
        """Whether the head carries a signature."""
        return self.sig is not None

    @property
    def key_id(self) -> str | None:
        """A short name of the signing key (`key_id`)."""
        return None if self.key is None else key_id(self.key)
# fmt: on

KEY_NAME = "audit.key"
_PENDING_SUFFIX = ".new"
_MAX_KEY_BYTES = 4096
_HEAD_KEYS = frozenset({"hash", "key", "seq", "sig", "ts"})
#: Prefixed to what a head signature covers, so it can never be mistaken for another message.
_HEAD_DOMAIN = b"memdir audit head v1\n"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX128 = re.compile(r"[0-9a-f]{128}")


def _is_int(value: object) -> TypeGuard[int]:
    return type(value) is int  # not bool


def _canonical(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def load_object(raw: bytes, what: str) -> dict[str, Any]:
    """A JSON object from `raw`; ValueError naming `what` when it is not one."""
    try:
        obj = json.loads(raw.decode())
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise ValueError(f"{what} is not valid JSON") from exc
    if not isinstance(obj, dict):
        raise ValueError(f"{what} is not a JSON object")
    return obj


def signature_valid(public_key: str, payload: bytes, signature: str) -> bool:
    """Whether ``signature`` (hex) is the Ed25519 signature of ``payload`` by ``public_key``."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key)).verify(
            bytes.fromhex(signature), payload
        )
    except (InvalidSignature, ValueError):
        return False
    return True


def _public_hex(private: Ed25519PrivateKey) -> str:
    from cryptography.hazmat.primitives import serialization

    raw = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return raw.hex()


class MachineKey:
    """The Ed25519 key in ``path`` (0600): `sign` creates it when missing, readers never do."""

    __slots__ = ("path", "pending_path")

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.pending_path = self.path.with_name(self.path.name + _PENDING_SUFFIX)

    def __repr__(self) -> str:
        return f"MachineKey({str(self.path)!r})"

    def committed(self) -> bool:
        """Whether ``audit.key`` exists, which means a head signed by it was written."""
        return self.path.exists() or self.path.is_symlink()

    def public_key(self) -> str | None:
        """The public key heads are checked against (the pending one before the first commit);
        None when this machine has no key yet. IntegrityError when the key file is unusable."""
        private = self._load(self.path)
        if private is None:
            private = self._load(self.pending_path)
        return None if private is None else _public_hex(private)

    def sign(self, payload: bytes) -> tuple[str, str]:
        """(public key, signature), both hex, over ``payload``; creates a pending key if none.

        Call `commit` once the signed head is durable."""
        private = self._load(self.path) or self._load(self.pending_path) or self._create()
        return _public_hex(private), private.sign(payload).hex()

    def commit(self) -> None:
        """Move a pending key into place (after the first head it signed was written)."""
        if self.committed() or not self.pending_path.exists():
            return
        self.pending_path.replace(self.path)
        fsync_dir(self.path.parent)

    def _create(self) -> Ed25519PrivateKey:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        directory = self.path.parent
        # Temp files of a creation that was killed hold keys nobody uses: remove them.
        for stale in directory.glob(f".{self.pending_path.name}{TEMP_MARKER}*"):
            with contextlib.suppress(OSError):
                stale.unlink()
        private = Ed25519PrivateKey.generate()
        data = private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        atomic_write(self.pending_path, data, mode=0o600)
        return private

    def _load(self, path: Path) -> Ed25519PrivateKey | None:
        """The key in ``path``; None when there is none. Never puts key bytes in a message."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if disk_error(exc) is not None:
                raise  # the disk refused (an I/O error, no access): a disk error, not tampering
            reason = exc.strerror or type(exc).__name__
            raise IntegrityError(f"cannot read the audit key {path}: {reason}") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_KEY_BYTES:
                raise IntegrityError(f"the audit key {path} is not a key file (replaced)")
            if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
                mode = stat.S_IMODE(info.st_mode)
                raise IntegrityError(
                    f"the audit key {path} must be a 0600 file of this user "
                    f"(mode {mode:04o}, owner uid {info.st_uid})"
                )
            data = os.read(fd, _MAX_KEY_BYTES + 1)
        finally:
            os.close(fd)
        from cryptography.exceptions import UnsupportedAlgorithm
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        try:
            private = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm):
            private = None
        if not isinstance(private, Ed25519PrivateKey):
            raise IntegrityError(
                f"the audit key {path} is not an Ed25519 private key (replaced or corrupted)"
            )
        return private


def head_payload(seq: int, digest: str, ts: int) -> bytes:
    """The bytes a head signature covers."""
    return _HEAD_DOMAIN + _canonical({"hash": digest, "seq": seq, "ts": ts})


def head_bytes(head: AuditHead) -> bytes:
    obj: dict[str, object] = {"seq": head.seq, "hash": head.hash}
    if head.sig is not None:
        obj.update(ts=head.ts, key=head.key, sig=head.sig)
    return _canonical(obj) + b"\n"


def parse_head(raw: bytes, *, what: str = "head file", canonical: bool = True) -> AuditHead:
    """A head from the head file (canonical) or a copy kept elsewhere (any JSON layout; null
    stands for a missing signature); ValueError says what is wrong."""
    obj = load_object(raw, what)
    if unknown := set(obj) - _HEAD_KEYS:
        raise ValueError(f"{what} has unknown keys: {', '.join(sorted(unknown))}")
    seq, digest = obj.get("seq"), obj.get("hash")
    if not _is_int(seq) or seq < 1 or not isinstance(digest, str) or not _HEX64.fullmatch(digest):
        raise ValueError(f"{what} does not name a valid seq and hash")
    ts, key, sig = obj.get("ts"), obj.get("key"), obj.get("sig")
    if ts is not None and (not _is_int(ts) or ts < 0):
        raise ValueError(f"{what} has a malformed time")
    if key is not None and (not isinstance(key, str) or not _HEX64.fullmatch(key)):
        raise ValueError(f"{what} names a malformed public key")
    if sig is not None and (not isinstance(sig, str) or not _HEX128.fullmatch(sig)):
        raise ValueError(f"{what} carries a malformed signature")
    if not (ts is None and key is None and sig is None) and None in (ts, key, sig):
        raise ValueError(f"{what} carries only part of a signature")
    head = AuditHead(seq, digest, ts, key, sig)
    if canonical and head_bytes(head) != raw:
        raise ValueError(f"{what} is not in canonical form")
    return head


def signature_problem(head: AuditHead, machine: str | None, committed: bool) -> str | None:
    """What is wrong with the head's signature, checked against this machine's key."""
    if head.sig is None:
        if committed:
            return (
                "head file is unsigned, but this machine's audit key signed earlier heads "
                "(head rewritten, or appended to after it was)"
            )
        return None
    assert head.key is not None and head.ts is not None  # _parse_head: all or nothing
    if machine is None:
        return (
            f"head file is signed by key {key_id(head.key)}, but this machine has no audit key "
            "(key file deleted)"
        )
    if head.key != machine:
        return (
            f"head file is signed by key {key_id(head.key)}, not by this machine's key "
            f"{key_id(machine)} (head rewritten or key file replaced)"
        )
    if not signature_valid(machine, head_payload(head.seq, head.hash, head.ts), head.sig):
        return "head file signature does not verify (head edited or rewritten)"
    return None


def load_head(path: Path) -> AuditHead:
    """A head kept elsewhere (``memdir audit head --json``, or a copy of ``audit.head``).

    InvalidInput when the file cannot be read or does not hold a head."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read the saved head {path}: {exc.strerror}") from None
    try:
        return parse_head(raw, what=f"saved head {path}", canonical=False)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None


def saved_head_problems(
    saved: AuditHead, machine: str | None, hashes: Mapping[int, str], *, key_known: bool = True
) -> list[str]:
    """Compare the log (``hashes``: seq to entry hash) and this machine's key with a head kept
    elsewhere: a rollback, or another key."""
    problems: list[str] = []
    if saved.sig is not None:
        assert saved.key is not None and saved.ts is not None  # _parse_head: all or nothing
        if not signature_valid(saved.key, head_payload(saved.seq, saved.hash, saved.ts), saved.sig):
            problems.append("the saved head's signature does not verify (the copy was edited)")
        if not key_known:
            pass  # this machine's key file is unusable, which is reported on its own
        elif machine is None:
            problems.append(
                f"the saved head was signed by key {key_id(saved.key)}, but this machine has no "
                "audit key (key file deleted)"
            )
        elif machine != saved.key:
            problems.append(
                f"the saved head was signed by key {key_id(saved.key)}, but this machine's key is "
                f"{key_id(machine)} (key file replaced)"
            )
    end = max(hashes, default=0)
    match = hashes.get(saved.seq)
    names = f"the saved head names seq {saved.seq}"
    if match is None and saved.seq > end:
        problems.append(f"{names} but the log ends at {end} (rolled back or truncated)")
    elif match is None:
        problems.append(f"{names} but the log has no entry with that seq (removed)")
    elif match != saved.hash:
        problems.append(
            f"{names} with hash {saved.hash[:12]}..., but entry {saved.seq} has hash "
            f"{match[:12]}... (log rewritten or rolled back)"
        )
    return problems
