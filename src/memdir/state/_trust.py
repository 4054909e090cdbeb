"""Authenticated state backups: this machine's audit key signs each backup's manifest.

The key is the one that signs the note store's audit head (`memdir.store.signing`,
``$MEMDIR_HOME/audit/audit.key``, Ed25519): it never leaves this machine, so a backup whose
database or manifest was edited — even with every SHA-256 recomputed — or that was made on
another machine does not verify here. The signature covers a domain string and the
manifest's canonical JSON without ``key``, ``sig`` and ``manifest_sha256`` (an Ed25519
signature verifies under one public key only, so the key named needs no cover of its own).

A backup made before backups were signed (format version 1), one whose signature is missing
or one signed by another key is *foreign*: refused unless the caller accepts it explicitly.
A signature that does not verify under the key the backup names is never accepted: the
backup was changed after it was made.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.files.atomic import ensure_private_dir
from memdir.files.lock import DirLock

# memdir.store is imported where a key is used: opening a state store never needs it.
if TYPE_CHECKING:
    from memdir.store.signing import MachineKey

__all__ = ["BackupKey", "Trust", "key_id", "manifest_payload", "sign_manifest", "trust_of"]

#: Prefixed to what a backup signature covers, so it is never mistaken for an audit head's.
_DOMAIN = b"memdir state backup v2\n"
_UNSIGNED_FIELDS = frozenset({"key", "sig", "manifest_sha256"})
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX128 = re.compile(r"[0-9a-f]{128}")


class BackupKey:
    """This machine's key in ``<audit_dir>/audit.key``, shared with the audit log's head.

    `sign` makes the key when there is none yet, under the audit log's lock (the same
    ``audit.lock`` its appends take), as a pending key that the log's next append adopts —
    so the log's rule that ``audit.key`` exists only once a head it signed was written holds.
    """

    __slots__ = ("_directory", "_lock_timeout", "_machine_key")

    def __init__(self, audit_dir: Path, *, lock_timeout: float = 10.0) -> None:
        self._directory = Path(audit_dir)
        self._lock_timeout = lock_timeout
        self._machine_key: MachineKey | None = None

    def __repr__(self) -> str:
        return f"BackupKey({str(self._directory)!r})"

    @property
    def _key(self) -> MachineKey:
        if self._machine_key is None:
            from memdir.store.signing import KEY_NAME, MachineKey

            self._machine_key = MachineKey(self._directory / KEY_NAME)
        return self._machine_key

    def public_key(self) -> str | None:
        """This machine's public key (64 hex digits); None when it has none yet."""
        return self._key.public_key()

    def sign(self, payload: bytes) -> tuple[str, str]:
        """(public key, signature) over `payload`, both hex."""
        if self._key.committed():
            return self._key.sign(payload)
        ensure_private_dir(self._directory)
        with DirLock(
            self._directory / "audit.lock", timeout=self._lock_timeout, label="the audit log"
        ):
            return self._key.sign(payload)


def key_id(public_key: str) -> str:
    """A short name for a public key (`memdir.store.signing.key_id`)."""
    from memdir.store.signing import key_id as short

    return short(public_key)


def manifest_payload(manifest: dict[str, Any]) -> bytes:
    """The bytes a backup signature covers."""
    rest = {k: v for k, v in manifest.items() if k not in _UNSIGNED_FIELDS}
    canonical = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return _DOMAIN + canonical.encode()


def sign_manifest(manifest: dict[str, Any], key: BackupKey) -> None:
    """Add ``key`` (the public key) and ``sig`` to `manifest`."""
    public, sig = key.sign(manifest_payload(manifest))
    manifest.update(key=public, sig=sig)


@dataclass(frozen=True, slots=True)
class Trust:
    """How a backup's signature stands: `authenticated` by this machine's key, or the reason
    it is not (`problem`); `acceptable` says whether a caller may accept it as foreign."""

    authenticated: bool
    key_id: str | None
    problem: str | None = None
    acceptable: bool = True


def trust_of(manifest: dict[str, Any], machine: str | None) -> Trust:
    """Check the manifest's signature against this machine's public key `machine`."""
    from memdir.store.signing import signature_valid

    key, sig = manifest.get("key"), manifest.get("sig")
    if manifest.get("version") == 1 or (key is None and sig is None):
        return Trust(False, None, "it carries no signature (made before backups were signed)")
    if not isinstance(key, str) or not _HEX64.fullmatch(key):
        return Trust(False, None, "its manifest names a malformed key", acceptable=False)
    if not isinstance(sig, str) or not _HEX128.fullmatch(sig):
        return Trust(False, key_id(key), "its manifest carries a malformed signature", False)
    if not signature_valid(key, manifest_payload(manifest), sig):
        why = "its signature does not verify: it was changed after it was made"
        return Trust(False, key_id(key), why, acceptable=False)
    if machine is None:
        why = f"it is signed by key {key_id(key)}, but this machine has no key yet"
        return Trust(False, key_id(key), why)
    if key != machine:
        why = (
            f"it is signed by key {key_id(key)}, not by this machine's key {key_id(machine)} "
            "(made on another machine, or re-signed by someone else)"
        )
        return Trust(False, key_id(key), why)
    return Trust(True, key_id(key))
