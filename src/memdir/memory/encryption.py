"""Encryption at rest for one `Memory` (§8.2): encrypt, decrypt, passwd, unlock, lock.

The keyring (`memdir.crypto.keys`) lives in the memdir home; the unlock agent
(`memdir.crypto.agent`, one per home) holds the master key and the in-memory indexes of
encrypted scopes while unlocked. Every store operation asks the agent for the key
(`AgentKeys`, reused for at most `KEY_REUSE_SECONDS` within one process), so `lock` and
the inactivity timeout take effect at once everywhere, and each use is activity.

Converting a scope (`encrypt`, `decrypt`) is resumable: the directory's marker says
``encrypting`` (or ``decrypting``) first; every file is then converted on its own, in
place and atomically (notes under the directory's write lock, a batch at a time), then
its history objects and its backups; the marker says ``encrypted`` (or goes) last. A
conversion killed half-way leaves both kinds of file, each whole, and every reader opens
both; running the command again finishes it. The scope's on-disk search index is removed
when encryption starts and again when it ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.config import Settings
from memdir.core import Scope
from memdir.errors import (
    IntegrityError,
    InvalidInput,
    Locked,
    MemdirError,
    NotFound,
    Refused,
    Remedy,
)
from memdir.files.atomic import remove_stale_temps
from memdir.memory.stores import Stores
from memdir.store import ScopeStore
from memdir.store.sealing import (
    Marker,
    Sealer,
    load_keyring,
    remove_keyring,
    remove_marker,
    save_keyring,
    write_marker,
)

if TYPE_CHECKING:
    from memdir.crypto.keys import Keyring
    from memdir.crypto.seal import SealKeys
    from memdir.retrieve import Retriever

__all__ = [
    "KEY_REUSE_SECONDS",
    "AgentImages",
    "AgentKeys",
    "EncryptReport",
    "Encryption",
    "EncryptionStatus",
    "ScopeEncryption",
]


@dataclass(frozen=True, slots=True)
class ScopeEncryption:
    """Whether one scope's notes are encrypted: ``plain``, ``encrypting`` (a conversion
    under way or killed: run encrypt again), ``encrypted`` or ``decrypting``."""

    scope: Scope
    path: Path
    state: str


@dataclass(frozen=True, slots=True)
class EncryptionStatus:
    """The encryption of a memdir home (§8.2)."""

    #: Whether this home has a keyring (was ever encrypted here).
    keyring: bool
    #: The key id (16 hex digits) of the keyring's master key.
    key_id: str | None
    #: Whether the unlock agent holds the key now.
    unlocked: bool
    #: Seconds of inactivity left before the agent locks (None: locked).
    idle_left: float | None
    scopes: tuple[ScopeEncryption, ...]


@dataclass(frozen=True, slots=True)
class EncryptReport:
    """What `encrypt` or `decrypt` converted."""

    scopes: tuple[ScopeEncryption, ...]
    notes: int
    objects: int
    backups: int
    seconds: float
    #: The recovery key of a keyring made by this call: shown once, never stored.
    recovery_key: str | None = None
    #: Files of this home that `encrypt` leaves readable: the agent state store (see
    #: docs/encryption.md, "What stays plain"). Empty for `decrypt`.
    plain: tuple[str, ...] = ()


_log = logging.getLogger("memdir.encryption")

#: How long one process reuses the key it fetched before asking the agent again.
KEY_REUSE_SECONDS = 2.0
#: Note files converted per hold of the directory's write lock.
_BATCH = 200
_LOCKED = (
    "the encrypted notes are locked: nothing was read or written. Unlock them with the "
    "password (it lasts until 15 minutes without use)"
)

Progress = Callable[[str, int, int], None]


def _agent_socket(settings: Settings, home: Path) -> Path:
    from memdir.crypto.agent import socket_path

    environ = {"XDG_RUNTIME_DIR": str(settings.runtime_dir)} if settings.runtime_dir else {}
    return socket_path(home, environ)


class AgentKeys:
    """The key source of a `Sealer`: the unlock agent, asked at most every few seconds."""

    def __init__(
        self,
        socket: Path,
        key_id: str,
        on_locked: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.socket = socket
        self.key_id = key_id
        self._on_locked = on_locked
        self._clock = clock
        self._lock = threading.Lock()
        self._cached: tuple[SealKeys, float] | None = None

    def __call__(self) -> SealKeys:
        with self._lock:
            if self._cached is not None and self._clock() - self._cached[1] < KEY_REUSE_SECONDS:
                return self._cached[0]
            from memdir.crypto.agent import AgentClient, AgentUnavailable

            try:
                raw = AgentClient(self.socket).get_key(self.key_id)
            except AgentUnavailable:
                raw = None
            if raw is not None:
                from memdir.crypto.keys import subkeys

                keys = subkeys(raw)
                self._cached = (keys, self._clock())
                return keys
            had, self._cached = self._cached, None
        if had is not None:  # locked since this process last held the key: wipe its copies
            self._on_locked()  # (outside the lock: wiping forgets the key through it)
        raise Locked(_LOCKED, hint=Remedy.UNLOCK)

    def forget(self) -> None:
        """Drop the key this process holds (after a lock)."""
        with self._lock:
            self._cached = None


class AgentImages:
    """In-memory index images kept by the unlock agent (`memdir.retrieve.IndexImages`)."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def get(self, name: str) -> bytes | None:
        from memdir.crypto.agent import AgentClient, AgentUnavailable

        try:
            found = AgentClient(self.socket).get_blob(name)
        except AgentUnavailable:
            return None
        return None if found is None else found[1]

    def put(self, name: str, data: bytes) -> None:
        from memdir.crypto.agent import AgentClient, AgentUnavailable

        with contextlib.suppress(AgentUnavailable):  # locked meanwhile: gone with the key
            AgentClient(self.socket, timeout=30.0).put_blob(name, data)


class Encryption:
    """Encryption of the scopes of one Memory's home."""

    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        home: Path,
        retriever: Callable[[], Retriever],
        clock: Callable[[], int],
        built: Callable[[], bool] = lambda: True,
    ) -> None:
        self.settings = settings
        self.stores = stores
        self.home = home
        self._retriever = retriever
        self._built = built
        self._watch: threading.Thread | None = None
        self._stop = threading.Event()
        self._clock = clock
        self._socket: Path | None = None
        self.keys: AgentKeys | None = None
        ring = load_keyring(home)
        if ring is not None:
            self._attach(ring)
        else:  # a keyring another process makes later is taken up when first needed
            stores.find_sealer(self._late_sealer)

    @property
    def socket(self) -> Path:
        """The unlock agent's socket of this home."""
        if self._socket is None:
            self._socket = _agent_socket(self.settings, self.home)
        return self._socket

    def get(self, name: str) -> bytes | None:
        """The index image the agent keeps under `name` (`memdir.retrieve.IndexImages`)."""
        return AgentImages(self.socket).get(name) if self.keys is not None else None

    def put(self, name: str, data: bytes) -> None:
        """Give the agent an index image to keep (nothing without a keyring)."""
        if self.keys is not None:
            AgentImages(self.socket).put(name, data)

    def _attach(self, ring: Keyring) -> None:
        key_id = ring.key_id.hex()
        self.keys = AgentKeys(self.socket, key_id, self.wipe)
        self.stores.attach_sealer(Sealer(key_id, self.keys))

    def _late_sealer(self) -> Sealer | None:
        if self.keys is None:
            ring = load_keyring(self.home)
            if ring is None:
                return None
            self._attach(ring)
        return self.stores.sealer

    def wipe(self) -> None:
        """Forget what this process holds of the encrypted notes: the key, the parsed notes
        and the in-memory indexes (done when the store is found locked)."""
        if self.keys is not None:
            self.keys.forget()
        for store in self.stores.chosen(None):
            if store.directory.encrypted():
                store.directory.forget_cache()
        if self._built():  # no retriever built: no index in memory either
            self._retriever().drop_memory_indexes()

    def watch_lock(self, every: float = 2.0) -> threading.Thread | None:
        """In a long-lived host: a daemon thread that wipes what this process holds as
        soon as the agent locks (by `lock` or the inactivity timeout), not only at the
        next use. Asking the agent's status is no activity. None without a keyring."""
        if self.keys is None or self._watch is not None:
            return self._watch
        from memdir.crypto.agent import AgentClient, AgentUnavailable

        keys = self.keys

        def run() -> None:
            unlocked = True
            while not self._stop.wait(every):
                try:
                    held = keys.key_id in AgentClient(keys.socket).status().key_ids
                except AgentUnavailable:
                    held = False
                if unlocked and not held:
                    self.wipe()
                unlocked = held

        self._watch = threading.Thread(target=run, name="memdir-lock-watch", daemon=True)
        self._watch.start()
        return self._watch

    def close(self) -> None:
        """Stop the lock watch."""
        self._stop.set()

    # -- status -------------------------------------------------------------------------

    def _scope_state(self, store: ScopeStore) -> ScopeEncryption:
        marker = store.directory.marker()
        state = "plain" if marker is None else marker.state
        return ScopeEncryption(store.scope, store.path, state)

    def status(self) -> EncryptionStatus:
        """Whether this home is encrypted, unlocked, and the state of each scope."""
        ring = load_keyring(self.home)
        scopes = tuple(self._scope_state(s) for s in self.stores.chosen(None))
        if ring is None:
            return EncryptionStatus(False, None, False, None, scopes)
        from memdir.crypto.agent import AgentClient, AgentUnavailable

        key_id = ring.key_id.hex()
        try:
            status = AgentClient(self.socket).status()
        except AgentUnavailable:
            return EncryptionStatus(True, key_id, False, None, scopes)
        unlocked = key_id in status.key_ids
        idle = status.idle_left if unlocked else None
        return EncryptionStatus(True, key_id, unlocked, idle, scopes)

    # -- the key ------------------------------------------------------------------------

    def _ring(self) -> Keyring:
        ring = load_keyring(self.home)
        if ring is None:
            raise NotFound(
                f"nothing is encrypted in this memdir home ({self.home}): it has no keyring"
            )
        return ring

    def _hand_to_agent(self, ring: Keyring, master: bytes, idle_seconds: float | None) -> None:
        from memdir.crypto.agent import DEFAULT_IDLE_SECONDS, AgentUnavailable, start_agent

        idle = DEFAULT_IDLE_SECONDS if idle_seconds is None else idle_seconds
        if idle <= 0:
            raise InvalidInput("the inactivity limit must be a positive number of seconds")
        try:
            client = start_agent(self.socket, idle_seconds=idle)
            client.put_key(ring.key_id.hex(), master, idle_seconds=idle)
        except AgentUnavailable as exc:
            raise MemdirError(
                f"cannot start the unlock agent at {self.socket}: {exc}; nothing was unlocked"
            ) from None
        if self.keys is None:
            self._attach(ring)
        else:
            self.keys.forget()

    def unlock(
        self,
        password: bytes | None = None,
        *,
        recovery_key: str | None = None,
        idle_seconds: float | None = None,
    ) -> EncryptionStatus:
        """Open the keyring with the password (or the recovery key) and hand the master
        key to the unlock agent (started if need be) until `idle_seconds` without use.

        A home without a keyring that is signed in to a sync server takes the account's
        keyring from the server (a second machine joining), saved here once it opened."""
        here = load_keyring(self.home)
        fetched = self._server_keyring() if here is None else None
        copied = self._marker_keyring() if here is None and fetched is None else None
        ring = fetched[0] if fetched is not None else copied or self._ring()
        master = self._master(ring, password, recovery_key)
        if fetched is not None:
            self._joined(*fetched)
        elif copied is not None:  # a folder encrypted in another home: its keyring comes along
            save_keyring(self.home, copied, new=True)
        self._hand_to_agent(ring, master, idle_seconds)
        return self.status()

    def _marker_keyring(self) -> Keyring | None:
        """The keyring copy an open encrypted folder carries (a clone, a new machine)."""
        from memdir.crypto.keys import Keyring

        for store in self.stores.chosen(None):
            with contextlib.suppress(IntegrityError):
                marker = store.directory.marker()
                if marker is not None and marker.keyring is not None:
                    ring = Keyring.from_json(marker.keyring)
                    if ring.key_id.hex() == marker.key_id:
                        return ring
        return None

    @staticmethod
    def _master(ring: Keyring, password: bytes | None, recovery_key: str | None) -> bytes:
        if recovery_key is not None:
            return ring.open_with_recovery(recovery_key)
        if password is None:
            raise InvalidInput("a password or the recovery key is needed")
        return ring.open_with_password(password)

    def scratch_dir(self) -> Path | None:
        """Where a temporary file of note text may go (an editor's draft) when a scope is
        encrypted: the private runtime folder (0700; in memory on most systems), not the
        temp folder. None when nothing is encrypted."""
        if not any(s.directory.encrypted() for s in self.stores.chosen(None)):
            return None
        from memdir.crypto.agent import runtime_dir

        environ = {"XDG_RUNTIME_DIR": str(self.settings.runtime_dir)}
        return runtime_dir(environ if self.settings.runtime_dir else {})

    # -- the keyring through the sync server (end-to-end encrypted sync, §8.2) -------------

    def _server_keyring(self) -> tuple[Keyring, int] | None:
        """The account's keyring from the sync server (None: signed out, or it keeps none)."""
        from memdir.sync.keyring import fetch_keyring

        return fetch_keyring(self.home / "memory-sync")

    def _joined(self, ring: Keyring, version: int) -> None:
        """Keep the server's keyring here (it opened with the password or recovery key)."""
        from memdir.sync.keyring import remember_keyring

        save_keyring(self.home, ring)
        remember_keyring(self.home / "memory-sync", version, ring)

    def lock(self) -> bool:
        """End the unlock agent: the key and the in-memory indexes are wiped. False when
        it was not running."""
        from memdir.crypto.agent import AgentClient, AgentUnavailable

        self.wipe()
        try:
            return AgentClient(self.socket).lock()
        except AgentUnavailable:
            return False

    def passwd(
        self,
        new_password: bytes,
        *,
        old_password: bytes | None = None,
        recovery_key: str | None = None,
    ) -> None:
        """Wrap the master key with a new password (no content is re-encrypted)."""
        ring = self._ring()
        master = self._master(ring, old_password, recovery_key)
        changed = ring.with_password(master, new_password)
        save_keyring(self.home, changed)
        for store in self.stores.chosen(None):  # the folders' copies follow
            with contextlib.suppress(IntegrityError):
                marker = store.directory.marker()
                if marker is not None and marker.key_id == ring.key_id.hex():
                    with store.directory.lock():
                        write_marker(
                            store.path, dataclasses.replace(marker, keyring=changed.to_json())
                        )

    def _current_master(self, ring: Keyring, password: bytes | None) -> bytes:
        if password is not None:
            return ring.open_with_password(password)
        from memdir.crypto.agent import AgentClient, AgentUnavailable

        try:
            raw = AgentClient(self.socket).get_key(ring.key_id.hex())
        except AgentUnavailable:
            raw = None
        if raw is None:
            raise Locked(_LOCKED, hint=Remedy.UNLOCK)
        return raw

    def create_keyring(self, password: bytes, *, idle_seconds: float | None = None) -> str:
        """Make this home's keyring (a new master key wrapped by `password`) and unlock it;
        returns the recovery key, which is shown once and never stored. Refused when the
        home has a keyring already."""
        if load_keyring(self.home) is not None:
            raise Refused(f"this memdir home ({self.home}) has a keyring already")
        from memdir.crypto.keys import Keyring

        ring, master, recovery = Keyring.create(password, self._clock())
        save_keyring(self.home, ring, new=True)
        try:
            self._hand_to_agent(ring, master, idle_seconds)
        except BaseException:
            # Nothing is sealed under it yet: take it back, so that the next try makes a
            # keyring whose recovery key it shows (this one's would never be seen).
            remove_keyring(self.home, ring.key_id)
            raise
        return recovery

    # -- converting ---------------------------------------------------------------------

    def encrypt(
        self,
        password: bytes | None,
        scopes: Sequence[Scope] | None = None,
        *,
        progress: Progress | None = None,
        idle_seconds: float | None = None,
    ) -> EncryptReport:
        """Encrypt the chosen scopes (all open ones by default), resuming one begun before.

        Without a keyring here, `password` makes one (its recovery key is in the report,
        shown once); with one, the password or an unlocked agent gives the key. The store
        is left unlocked."""
        started = time.monotonic()
        ring = load_keyring(self.home)
        recovery = None
        if ring is None:
            if password is None:
                raise InvalidInput("encrypting needs a new password (it makes the keyring)")
            try:
                recovery = self.create_keyring(password, idle_seconds=idle_seconds)
            except Refused:  # another `encrypt` made one meanwhile: use it, with the password
                ring = self._ring()
                self._hand_to_agent(ring, ring.open_with_password(password), idle_seconds)
            ring = self._ring()
        else:
            self._hand_to_agent(ring, self._current_master(ring, password), idle_seconds)
        key_id = ring.key_id.hex()
        chosen = self._chosen(scopes)
        for store in chosen:
            marker = store.directory.marker()
            if marker is not None and marker.key_id != key_id:
                raise Refused(
                    f"{store.path} is encrypted with another key ({marker.key_id}) than this "
                    "home's: it is left as it is"
                )
        counts = [0, 0, 0]
        for store in chosen:
            with store.directory.lock():
                write_marker(store.path, Marker(key_id, "encrypting", ring.to_json()))
            self._retriever().discard_index(store)
            notes = self._convert(store, counts, progress, "encrypt")
            with store.directory.lock():
                write_marker(store.path, Marker(key_id, "encrypted", ring.to_json()))
            self._retriever().discard_index(store)
            self.stores.audit.append("encrypt", scope=store.scope.value, count=notes)
        return dataclasses.replace(
            self._report(chosen, counts, started, recovery), plain=self._plain_files()
        )

    def _plain_files(self) -> tuple[str, ...]:
        """The agent state store, when this home has one: it is never encrypted."""
        from memdir.state import default_state_path

        path = default_state_path(self.home)
        return (str(path),) if path.exists() else ()

    def decrypt(
        self, scopes: Sequence[Scope] | None = None, *, progress: Progress | None = None
    ) -> EncryptReport:
        """Decrypt the chosen encrypted scopes back to plain files (the store must be
        unlocked); resumes one begun before."""
        started = time.monotonic()
        ring = self._ring()
        self._current_master(ring, None)  # the agent holds this keyring's key: unlocked
        if self.keys is None:
            self._attach(ring)
        key_id = ring.key_id.hex()
        chosen = [s for s in self._chosen(scopes) if s.directory.marker() is not None]
        counts = [0, 0, 0]
        for store in chosen:
            with store.directory.lock():
                write_marker(store.path, Marker(key_id, "decrypting", ring.to_json()))
            notes = self._convert(store, counts, progress, "decrypt")
            with store.directory.lock():
                remove_marker(store.path)
            self.stores.audit.append("decrypt", scope=store.scope.value, count=notes)
        return self._report(chosen, counts, started)

    def _report(
        self,
        chosen: Sequence[ScopeStore],
        counts: Sequence[int],
        started: float,
        recovery: str | None = None,
    ) -> EncryptReport:
        return EncryptReport(
            tuple(self._scope_state(s) for s in chosen),
            notes=counts[0],
            objects=counts[1],
            backups=counts[2],
            seconds=time.monotonic() - started,
            recovery_key=recovery,
        )

    def _chosen(self, scopes: Sequence[Scope] | None) -> list[ScopeStore]:
        if scopes is None:
            return list(self.stores.chosen(None))
        return [self.stores.store(scope) for scope in scopes]

    def _convert(
        self, store: ScopeStore, counts: list[int], progress: Progress | None, what: str
    ) -> int:
        """Convert one scope's files, adding to `counts`; how many note files changed."""
        before = counts[0]
        directory = store.directory
        ids = sorted(directory.ids_on_disk())
        history = store.history
        revs = history.stored()
        total = len(ids) + len(revs)
        done = 0
        if progress is not None:
            progress(what, 0, total)
        with directory.lock():  # temp files of writes killed earlier may hold plain notes
            directory.clear_leftovers()
        remove_stale_temps(history.root)
        remove_stale_temps(self.stores.backups.root)
        for start in range(0, len(ids), _BATCH):
            with directory.lock():
                for note_id in ids[start : start + _BATCH]:
                    counts[0] += directory.convert(note_id)
            done += len(ids[start : start + _BATCH])
            if progress is not None:
                progress(what, done, total)
        for rev in revs:
            try:
                counts[1] += history.convert(rev)
            except IntegrityError:  # damaged and sealed already: doctor --deep names it
                _log.warning(
                    "history object %s of %s does not open; left as it is", rev[:12], store.path
                )
            done += 1
            if progress is not None and done % _BATCH == 0:
                progress(what, done, total)
        counts[2] += self.stores.backups.convert(store.scope.value, store.path)
        if progress is not None:
            progress(what, total, total)
        return counts[0] - before
