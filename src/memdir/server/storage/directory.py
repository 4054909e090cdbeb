"""The sync server's directory backend: revisions as files, manifests swapped under a lock.

Layout under `root` (§7.3)::

    users/<user>/ERASED                                   erase marker (written first)
    users/<user>/keyring.json                             the keyring document (§8.2)
    users/<user>/.lock                                    writers share it, erase takes it alone
    users/<user>/memory/manifest.json                     scope `user`
    users/<user>/memory/objects/<note-id>/<rev>.md
    users/<user>/projects/<project-id>/memory/...         scope `project/<project-id>`
    teams/<team>/policy.json                              the team's policy document
    teams/<team>/.lock                                    as a user's, for the team's notes
    teams/<team>/memory/...                               the team's notes, laid out as a
    teams/<team>/projects/<project-id>/memory/...         user's (owner `+<team>`)

Notes belong to an *owner*: a user name, or `+<team>` for a team (`team_owner`); `+` is
never part of a user name, so the two cannot meet. Erase markers and keyrings are the
users' alone: a team owner is never erased.

Revisions are immutable and content-addressed, so writing one twice writes the same
bytes. A manifest is replaced by compare-and-swap: under an exclusive `DirLock` on the
scope directory the stored version is read, compared with `expected`, and the new
manifest written atomically (temp file, fsync, rename, directory fsync).

Writers (`put_objects`, `swap_manifest`) hold a shared `flock` on the owner's lock file
and check the erase marker under it; `erase` holds it exclusively. So once `erase`
has run, no write that started before the marker can land afterwards: it either
finished before the deletion or sees the marker and does nothing (a swap then
reports False, and the rules find the account erased).

The keyring and a team's policy are versioned documents (a JSON envelope holding the
version beside the bytes), each replaced by compare-and-swap under its own `DirLock`.

Every name that becomes a path is validated first: user and team names, scope keys, note
ids and revisions cannot climb out of `root`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import shutil
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from memdir.core import validate_id
from memdir.errors import Busy, InvalidInput
from memdir.files.atomic import atomic_write, fsync_dir
from memdir.files.lock import DirLock
from memdir.server.storage.base import StoredKeyring, StoredObject, StoredTeam
from memdir.sync.protocol import Manifest, is_rev, rev_of

__all__ = [
    "TEAM_PATTERN",
    "USER_PATTERN",
    "DirectoryStorage",
    "is_team_owner",
    "owner_path",
    "pack_document",
    "team_owner",
    "unpack_document",
    "validate_owner",
    "validate_scope_key",
    "validate_team",
    "validate_user",
]

#: Account names: lower-case, so two accounts never share a directory on a case-folding disk.
USER_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
#: Team names: the same shape as account names (a team lives apart, under `teams/`).
TEAM_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
#: What marks an owner as a team: `+<team>` (never a user name, which has no `+`).
_TEAM_MARK = "+"
_PROJECT_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{7,127}")
_MARKER = "ERASED"
_USER_LOCK = ".lock"
_KEYRING = "keyring.json"
_POLICY = "policy.json"
_LOCK_TIMEOUT = 30.0
_POLL_SECONDS = 0.01


def _valid_name(kind: str, name: object, pattern: re.Pattern[str]) -> str:
    if not isinstance(name, str) or not pattern.fullmatch(name):
        raise InvalidInput(
            f"{kind} name {str(name)[:70]!r} is not valid: use 1-64 lower-case letters, "
            "digits, '-' and '_', starting with a letter or digit"
        )
    return name


def validate_user(user: object) -> str:
    """Return `user` if it is a valid account name, else raise InvalidInput."""
    return _valid_name("user", user, USER_PATTERN)


def validate_team(team: object) -> str:
    """Return `team` if it is a valid team name, else raise InvalidInput."""
    return _valid_name("team", team, TEAM_PATTERN)


def team_owner(team: str) -> str:
    """The owner under which the team's notes are stored: `+<team>`."""
    return _TEAM_MARK + validate_team(team)


def validate_owner(owner: object) -> str:
    """Return `owner` if it is a user name or a team owner `+<team>`, else raise InvalidInput."""
    if isinstance(owner, str) and owner.startswith(_TEAM_MARK):
        validate_team(owner.removeprefix(_TEAM_MARK))
        return owner
    return validate_user(owner)


def is_team_owner(owner: object) -> bool:
    """True for a team owner `+<team>`, False for a user name (InvalidInput for neither)."""
    return validate_owner(owner).startswith(_TEAM_MARK)


def owner_path(owner: object) -> str:
    """Where an owner's notes live, relative to a backend's root: `users/<user>` or
    `teams/<team>`."""
    if is_team_owner(owner):
        return f"teams/{str(owner).removeprefix(_TEAM_MARK)}"
    return f"users/{owner}"


def pack_document(version: int, doc: bytes, *, body: str, **fields: str) -> bytes:
    """A versioned document as stored: a JSON object of `version`, `fields` and `doc` as
    text under `body`. Bytes that are not UTF-8 ride as surrogate escapes, so any bytes
    come back from `unpack_document` as they went in."""
    envelope = {"version": version, **fields, body: doc.decode("utf-8", "surrogateescape")}
    return json.dumps(envelope).encode("ascii")


def unpack_document(raw: bytes, *, body: str) -> tuple[int, dict[str, Any], bytes]:
    """(version, the whole envelope, the document's bytes) of what `pack_document` wrote."""
    envelope = json.loads(raw)
    doc = str(envelope[body]).encode("utf-8", "surrogateescape")
    return int(envelope["version"]), envelope, doc


def validate_scope_key(scope: object) -> str:
    """Return `scope` if it is `user` or `project/<project-id>`, else raise InvalidInput."""
    if scope == "user":
        return scope
    project = scope.removeprefix("project/") if isinstance(scope, str) else ""
    if project != scope and _PROJECT_PATTERN.fullmatch(project):
        return str(scope)
    raise InvalidInput(f"scope {str(scope)[:80]!r} is not `user` or `project/<project-id>`")


def _validate_rev(rev: object) -> str:
    if not isinstance(rev, str) or not is_rev(rev):
        raise InvalidInput(f"revision {str(rev)[:80]!r} is not 64 lower-case hex digits")
    return rev


def _make_dirs(directory: Path) -> None:
    """Create `directory` and missing parents (mode 0700), each creation made durable."""
    missing: list[Path] = []
    path = directory
    while not path.is_dir():
        missing.append(path)
        path = path.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        fsync_dir(path.parent)


class _SharedLock:
    """A `flock` on one file, shared or exclusive, polled until a timeout (then Busy)."""

    def __init__(self, path: Path, *, exclusive: bool) -> None:
        self._path = path
        self._mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        self._fd = -1

    def __enter__(self) -> _SharedLock:
        deadline = time.monotonic() + _LOCK_TIMEOUT
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        while True:
            try:
                fcntl.flock(fd, self._mode | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
                    os.close(fd)
                    raise
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise Busy(f"the account lock {self._path} is held too long") from None
                time.sleep(_POLL_SECONDS)
            else:
                self._fd = fd
                return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)


class DirectoryStorage:
    """`Storage` on a local directory; safe across threads and processes sharing `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __repr__(self) -> str:
        return f"DirectoryStorage({str(self.root)!r})"

    # -- paths -------------------------------------------------------------------------

    def _user_dir(self, user: str) -> Path:
        return self.root / "users" / validate_user(user)

    def _owner_dir(self, owner: str) -> Path:
        return self.root / owner_path(owner)

    def _team_dir(self, team: str) -> Path:
        return self.root / "teams" / validate_team(team)

    def _scope_dir(self, owner: str, scope: str) -> Path:
        key = validate_scope_key(scope)
        base = self._owner_dir(owner)
        if key == "user":
            return base / "memory"
        return base / "projects" / key.removeprefix("project/") / "memory"

    def _object_path(self, scope_dir: Path, note_id: str, rev: str) -> Path:
        return scope_dir / "objects" / validate_id(note_id) / f"{_validate_rev(rev)}.md"

    @contextlib.contextmanager
    def _writing(self, owner_dir: Path) -> Iterator[bool]:
        """Hold the owner's lock shared; yield False when the account is erased (write
        nothing). A team's directory never has the marker."""
        _make_dirs(owner_dir)
        with _SharedLock(owner_dir / _USER_LOCK, exclusive=False):
            yield not (owner_dir / _MARKER).exists()

    def _read_document(self, path: Path, body: str) -> tuple[int, dict[str, Any], bytes] | None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        return unpack_document(raw, body=body)

    def _swap_document(
        self, owner_dir: Path, name: str, expected: int, doc: bytes, body: str, **fields: str
    ) -> bool:
        """Write `owner_dir/name` as version `expected + 1` if the stored one is still at
        `expected` (0: none), under the owner's shared lock and the document's own DirLock."""
        path = owner_dir / name
        data = pack_document(expected + 1, doc, body=body, **fields)
        with self._writing(owner_dir) as allowed:
            if not allowed:
                return False
            label = f"{owner_dir.name}/{path.stem}"
            with DirLock(owner_dir / f".{path.stem}.lock", timeout=_LOCK_TIMEOUT, label=label):
                found = self._read_document(path, body)
                if (0 if found is None else found[0]) != expected:
                    return False
                atomic_write(path, data, mode=0o600)
                return True

    # -- Storage -----------------------------------------------------------------------

    def manifest(self, owner: str, scope: str) -> Manifest:
        """The scope's current manifest (version 0 and empty when there is none)."""
        path = self._scope_dir(owner, scope) / "manifest.json"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return Manifest()
        return Manifest.model_validate_json(data)

    def objects(self, owner: str, scope: str, wanted: Mapping[str, str]) -> dict[str, bytes]:
        """The bytes of the revisions in `wanted` (rev -> note id) that exist."""
        scope_dir = self._scope_dir(owner, scope)
        found: dict[str, bytes] = {}
        for rev, note_id in wanted.items():
            try:
                found[rev] = self._object_path(scope_dir, note_id, rev).read_bytes()
            except FileNotFoundError:
                continue
        return found

    def put_objects(self, owner: str, scope: str, objects: Iterable[StoredObject]) -> None:
        """Store revisions durably; one that exists is left alone (same bytes by its name)."""
        scope_dir = self._scope_dir(owner, scope)
        items = list(objects)
        for note_id, rev, data in items:
            self._object_path(scope_dir, note_id, rev)
            if rev_of(data) != rev:
                raise InvalidInput(f"revision {rev[:12]} of {note_id} does not match its bytes")
        with self._writing(self._owner_dir(owner)) as allowed:
            if not allowed:
                return
            for note_id, rev, data in items:
                path = self._object_path(scope_dir, note_id, rev)
                if path.exists():
                    continue
                _make_dirs(path.parent)
                atomic_write(path, data, mode=0o600)

    def swap_manifest(self, owner: str, scope: str, expected: int, manifest: Manifest) -> bool:
        """Write `manifest` if the stored version is still `expected` (False otherwise)."""
        scope_dir = self._scope_dir(owner, scope)
        data = manifest.model_dump_json().encode("utf-8")
        with self._writing(self._owner_dir(owner)) as allowed:
            if not allowed:
                return False
            _make_dirs(scope_dir)
            lock = DirLock(scope_dir / ".lock", timeout=_LOCK_TIMEOUT, label=f"{owner}/{scope}")
            with lock:
                if self.manifest(owner, scope).version != expected:
                    return False
                atomic_write(scope_dir / "manifest.json", data, mode=0o600)
                return True

    def keyring(self, user: str) -> StoredKeyring | None:
        """The user's keyring document (a JSON envelope: version, key id, the document)."""
        found = self._read_document(self._user_dir(user) / _KEYRING, "keyring")
        return None if found is None else (found[0], str(found[1]["keyId"]), found[2])

    def swap_keyring(self, user: str, expected: int, key_id: str, doc: bytes) -> bool:
        """Write the keyring document atomically if its version is still `expected`."""
        return self._swap_document(
            self._user_dir(user), _KEYRING, expected, doc, "keyring", keyId=key_id
        )

    def team(self, team: str) -> StoredTeam | None:
        """The team's policy document, None when no such team exists."""
        found = self._read_document(self._team_dir(team) / _POLICY, "policy")
        return None if found is None else (found[0], found[2])

    def swap_team(self, team: str, expected: int, doc: bytes) -> bool:
        """Write the team's policy document atomically if its version is still `expected`."""
        return self._swap_document(self._team_dir(team), _POLICY, expected, doc, "policy")

    def mark_erased(self, user: str) -> None:
        """Write the erase marker (idempotent; an existing marker is kept as it is)."""
        user_dir = self._user_dir(user)
        _make_dirs(user_dir)
        marker = user_dir / _MARKER
        if not marker.exists():
            stamp = str(int(time.time() * 1000)).encode("ascii") + b"\n"
            atomic_write(marker, stamp, mode=0o600)

    def is_erased(self, user: str) -> bool:
        """True once the user's erase marker exists; always False for a team owner."""
        if is_team_owner(user):
            return False
        return (self._user_dir(user) / _MARKER).exists()

    def erase(self, user: str) -> None:
        """Delete every manifest and revision of the user; the marker (and lock file) stay."""
        user_dir = self._user_dir(user)
        if not user_dir.is_dir():
            return
        with _SharedLock(user_dir / _USER_LOCK, exclusive=True):
            for child in user_dir.iterdir():
                if child.name in (_MARKER, _USER_LOCK):
                    continue
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
            fsync_dir(user_dir)

    def close(self) -> None:
        """Nothing to release: every call opens and closes its own files."""
