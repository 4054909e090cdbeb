"""The sync server's rules (§7.3) over any `Storage`: snapshots, all-or-nothing commits, erase.

The HTTP app authenticates and then makes one call here; every refusal is a
`Rejection` carrying the status and protocol error code the app sends back.

A commit is validated in two passes. What depends only on the request (ids, note
texts, revisions, duplicates, the change quota) is checked once. What depends on the
manifest (stale bases, the commit-first `version`, case collisions, the note and body
quotas) is checked against the manifest that is about to be replaced; the new
revisions are stored, then the manifest is swapped by compare-and-swap on its
version. A lost race re-reads the manifest and checks again, so a commit is applied
whole against exactly the manifest it was checked against, or not at all.

A sealed text (an end-to-end encrypted scope, §8.2) is ciphertext: it is checked for
its form (a ``memdir-sealed 1`` first line, then base64 lines) and its rev, never
parsed; the credential guard cannot see into it (the client's guard ran before it was
sealed); its manifest `hash` is its rev, and its size counts against
`sealed_size_limit` of the body quota. Plain texts keep every check.

The account's keyring document (`keyring`, `put_keyring`) is stored as it is, never
read: a put is a compare-and-swap on its version, and one naming another key id than
the stored one is refused, so two machines never replace each other's key silently.
"""

from __future__ import annotations

import importlib
import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir import __version__
from memdir.core import Note, parse_note, validate_id
from memdir.core.vocab import StorageBackend, choices
from memdir.errors import InvalidInput, MemdirError, ParseError
from memdir.server.rejection import Rejection
from memdir.server.storage.base import Storage, StoredObject
from memdir.server.teams import TeamRules
from memdir.sync.protocol import (
    MAX_PROTOCOL,
    MIN_PROTOCOL,
    Change,
    CommitRequest,
    CommitResult,
    Entry,
    EraseResult,
    Identity,
    KeyringDoc,
    KeyringPut,
    Manifest,
    Quotas,
    ScopeRef,
    Snapshot,
    SnapshotRequest,
    Tombstone,
    is_sealed_text,
    rev_of,
    sealed_size_limit,
)

__all__ = [
    "SERVER_NAME",
    "Rejection",
    "SyncRules",
    "now_ms",
    "open_storage",
    "redact_dsn",
]

SERVER_NAME = f"memdir/{__version__}"
_DAY_MS = 86_400_000
#: Lost compare-and-swap races a commit re-checks before it reports `stale`.
_SWAP_ATTEMPTS = 8

log = logging.getLogger(__name__)


def now_ms() -> int:
    """The wall clock in Unix milliseconds (the default clock of the rules)."""
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class _Put:
    """A put that passed the request-only checks."""

    id: str
    base: str | None
    rev: str
    data: bytes
    #: The parsed note; None for a sealed text, which the server cannot read.
    note: Note | None

    @property
    def hash(self) -> str:
        """The manifest's content hash: the rev stands in for a sealed text's."""
        return self.rev if self.note is None else self.note.hash


#: A sealed text as a server can check it without a key: the first line, then base64.
_SEALED_FORM = re.compile(rb"memdir-sealed 1 [\x20-\x7e]{1,200}\n(?:[A-Za-z0-9+/=]{1,76}\n)+")


def _invalid(message: str, ids: Iterable[str] = ()) -> Rejection:
    return Rejection(422, "invalid", message, ids=ids)


def _check_put(change: Change) -> _Put:
    """Check one put against itself: id, text, revision."""
    assert change.text is not None and change.rev is not None  # guaranteed by Change
    try:
        data = change.text.encode("utf-8")
    except UnicodeEncodeError:
        raise _invalid(f"the text of {change.id} is not valid Unicode", [change.id]) from None
    if rev_of(data) != change.rev:
        raise _invalid(f"rev of {change.id} is not the SHA-256 of its text", [change.id])
    if is_sealed_text(data):
        if not _SEALED_FORM.fullmatch(data):
            raise _invalid(f"the sealed text of {change.id} is not in the sealed form", [change.id])
        return _Put(change.id, change.base, change.rev, data, None)
    try:
        note = parse_note(data, file_id=change.id)
    except (ParseError, InvalidInput) as exc:
        raise _invalid(f"note {change.id} cannot be parsed: {exc}", [change.id]) from None
    if note.id != change.id:
        raise _invalid(f"note text says id {note.id!r}, the change {change.id!r}", [change.id])
    return _Put(change.id, change.base, change.rev, data, note)


def _secret_places(note: Note) -> str | None:
    """The kinds and places (never the values) of what the credential guard finds in the
    note's summary, body, tags and other frontmatter; None when it finds nothing. The
    same fields and wording as a local write's check, so a refusal reads the same."""
    # The guard's lexicons take a while to compile: only a server that commits pays for them.
    from memdir.guard import scan_fields

    fields = {"summary": note.summary, "body": note.body, "tags": " ".join(note.tags)}
    for key, value in note.extra:
        fields[f"frontmatter {key}"] = value if isinstance(value, str) else repr(value)
    found = scan_fields(fields)
    if not found:
        return None
    seen = dict.fromkeys(f"{f.kind} ({name}, line {f.line})" for name, f in found)
    return ", ".join(seen) or "a credential"


def _check_secrets(puts: Sequence[_Put]) -> None:
    """Refuse the whole commit when any note text looks like it holds a credential (§7.3).

    A client's guard should have held such a note back; this one catches an older or
    different client, so a secret never reaches the storage.
    """
    found: dict[str, str] = {}
    for put in puts:
        if put.note is None:
            continue  # sealed: nothing the server could read (the client's guard ran)
        where = _secret_places(put.note)
        if where is not None:
            found[put.id] = where
    if found:
        listing = "; ".join(f"note {note_id}: {where}" for note_id, where in sorted(found.items()))
        raise Rejection(
            422,
            "secret_refused",
            f"the commit carries what looks like a credential ({listing}); nothing of the "
            "commit was stored — remove the secret and sync again",
            ids=found,
        )


def _rev_in(notes: dict[str, Entry], note_id: str) -> str | None:
    entry = notes.get(note_id)
    return entry.rev if entry is not None else None


class SyncRules:
    """The server side of the sync protocol, stateless between calls apart from `storage`."""

    def __init__(
        self,
        storage: Storage,
        quotas: Quotas | None = None,
        clock: Callable[[], int] = now_ms,
        *,
        known_user: Callable[[str], bool] | None = None,
    ) -> None:
        self.storage = storage
        self.quotas = quotas if quotas is not None else Quotas()
        self._clock = clock
        #: Teams (§12); `known_user` says whether an account exists (None: any name does).
        self.teams = TeamRules(
            storage,
            self.quotas,
            known_user=known_user or (lambda _: True),
            check_user=self._check_user,
            clock=clock,
        )

    # -- helpers -------------------------------------------------------------------------

    def _check_user(self, user: str) -> None:
        try:
            erased = self.storage.is_erased(user)
        except InvalidInput as exc:
            raise _invalid(str(exc)) from None
        if erased:
            raise Rejection(410, "account_erased", f"the account {user!r} was erased")

    def _owner(self, user: str, scope: ScopeRef, *, write: bool) -> str:
        """Whose space the scope lives in: the user's own, or a team's the user may use."""
        if scope.team is None:
            return user
        return self.teams.access(user, scope.team, write=write)

    def _live_tombstones(self, manifest: Manifest, now: int) -> dict[str, Tombstone]:
        cutoff = now - self.quotas.tombstone_days * _DAY_MS
        return {k: t for k, t in manifest.tombstones.items() if t.deleted_at >= cutoff}

    # -- requests ------------------------------------------------------------------------

    def identity(self, user: str) -> Identity:
        """Who `user` is to this server, and what the server speaks and allows."""
        self._check_user(user)
        return Identity(
            user=user,
            server=SERVER_NAME,
            protocol=MAX_PROTOCOL,
            min_protocol=MIN_PROTOCOL,
            quotas=self.quotas,
        )

    def snapshot(self, user: str, request: SnapshotRequest) -> Snapshot:
        """The scope's manifest and, up to the response quota, the texts not in `have`."""
        self._check_user(user)
        key = request.scope.key
        user = self._owner(user, request.scope, write=False)
        manifest = self.storage.manifest(user, key)
        if request.known_version is not None and request.known_version == manifest.version:
            return Snapshot(version=manifest.version, unchanged=True, quotas=self.quotas)
        have = set(request.have)
        budget = self.quotas.max_response_bytes
        wanted: dict[str, str] = {}
        used = 0
        truncated = False
        for note_id in sorted(manifest.notes) if request.objects else ():
            entry = manifest.notes[note_id]
            if entry.rev in have:
                continue
            # Always send one, so a client progresses even past a note bigger than the budget.
            if wanted and used + entry.size > budget:
                truncated = True
                continue
            wanted[entry.rev] = note_id
            used += entry.size
        found = self.storage.objects(user, key, wanted) if wanted else {}
        for rev in wanted.keys() - found.keys():
            log.error("storage lacks revision %s of %s in %s/%s", rev, wanted[rev], user, key)
        return Snapshot(
            version=manifest.version,
            notes=dict(manifest.notes) if request.lists else {},
            tombstones=self._live_tombstones(manifest, self._clock()) if request.lists else {},
            objects={rev: data.decode("utf-8") for rev, data in found.items()},
            truncated=truncated,
            quotas=self.quotas,
        )

    def commit(self, user: str, request: CommitRequest) -> CommitResult:
        """Apply every change or none; raise Rejection saying why when none."""
        self._check_user(user)
        caller, user = user, self._owner(user, request.scope, write=True)
        quotas = self.quotas
        changes = request.changes
        if len(changes) > quotas.max_changes:
            raise Rejection(
                413,
                "quota_exceeded",
                f"{len(changes)} changes in one commit; the quota is {quotas.max_changes}",
            )
        seen: set[str] = set()
        dupes: set[str] = set()
        for change in changes:
            (dupes if change.id in seen else seen).add(change.id)
        if dupes:
            raise _invalid("a commit names each note once", dupes)
        for change in changes:
            try:
                validate_id(change.id)
            except InvalidInput as exc:
                raise _invalid(str(exc), [change.id]) from None
        puts = [_check_put(c) for c in changes if c.op == "put"]
        if request.scope.team is not None:
            # A plain team's notes travel plain (one member's key would lock the others
            # out); an encrypted team's are sealed under its current key epoch (§12).
            texts = {p.id: (p.data if p.note is None else None) for p in puts}
            self.teams.check_texts(request.scope.team, texts)
        _check_secrets(puts)
        deletes = [c for c in changes if c.op == "delete"]
        key = request.scope.key
        stored = False
        for _ in range(_SWAP_ATTEMPTS):
            current = self.storage.manifest(user, key)
            now = self._clock()
            result, manifest = self._apply(user, key, request, current, puts, deletes, now)
            if not stored:
                objects: list[StoredObject] = [(p.id, p.rev, p.data) for p in puts]
                self.storage.put_objects(user, key, objects)
                stored = True
            if self.storage.swap_manifest(user, key, current.version, manifest):
                return result
            self._check_user(caller)
        raise Rejection(
            409,
            "stale",
            "the manifest kept changing under the commit; sync and try again",
            version=self.storage.manifest(user, key).version,
        )

    def _apply(
        self,
        user: str,
        key: str,
        request: CommitRequest,
        current: Manifest,
        puts: Sequence[_Put],
        deletes: Sequence[Change],
        now: int,
    ) -> tuple[CommitResult, Manifest]:
        """Check the commit against `current`; return the result and the next manifest."""
        quotas = self.quotas
        if request.version is not None and request.version != current.version:
            raise Rejection(
                409,
                "stale",
                f"the manifest is at version {current.version}, not {request.version}",
                version=current.version,
            )
        live = current.notes
        stale = [c.id for c in request.changes if c.base != _rev_in(live, c.id)]
        if stale:
            raise Rejection(
                409,
                "stale",
                "some changes were made against an older revision",
                ids=stale,
                version=current.version,
            )
        folded = {note_id.casefold(): note_id for note_id in live}
        collisions: set[str] = set()
        for put in puts:
            if put.id in live:
                continue
            other = folded.setdefault(put.id.casefold(), put.id)
            if other != put.id:
                collisions |= {put.id, other}
        if collisions:
            raise Rejection(
                409, "case_collision", "note ids may not differ only in case", ids=collisions
            )
        self._check_bodies(user, key, current, puts)
        before = len(live)
        after = before + sum(p.id not in live for p in puts) - len(deletes)
        if after > quotas.max_notes and after > before:
            raise Rejection(
                413,
                "quota_exceeded",
                f"the commit would leave {after} notes; the quota is {quotas.max_notes}",
            )
        notes = dict(live)
        tombstones = self._live_tombstones(current, now)
        set_notes: dict[str, Entry] = {}
        set_tombstones: dict[str, Tombstone] = {}
        for put in puts:
            entry = Entry(rev=put.rev, hash=put.hash, size=len(put.data), updated_at=now)
            notes[put.id] = set_notes[put.id] = entry
            tombstones.pop(put.id, None)
        for delete in deletes:
            gone = notes.pop(delete.id)
            tombstone = Tombstone(rev=gone.rev, deleted_at=now)
            tombstones[delete.id] = set_tombstones[delete.id] = tombstone
        manifest = Manifest(version=current.version + 1, notes=notes, tombstones=tombstones)
        result = CommitResult(
            version=manifest.version, notes=set_notes, tombstones=set_tombstones, quotas=quotas
        )
        return result, manifest

    def _check_bodies(self, user: str, key: str, current: Manifest, puts: Sequence[_Put]) -> None:
        """Refuse bodies over the quota, unless no larger than the server's version (no growth)."""
        limit = self.quotas.max_body_bytes
        sealed_limit = sealed_size_limit(limit)
        too_big: list[str] = []
        for put in puts:
            if put.note is not None or len(put.data) <= sealed_limit:
                continue
            entry = current.notes.get(put.id)
            if len(put.data) > (entry.size if entry is not None else 0):
                too_big.append(put.id)  # a sealed text may shrink towards the quota
        over = [p for p in puts if p.note is not None and p.note.body_bytes > limit]
        if not over and not too_big:
            return
        wanted = {current.notes[p.id].rev: p.id for p in over if p.id in current.notes}
        old = self.storage.objects(user, key, wanted) if wanted else {}
        for put in over:
            assert put.note is not None
            entry = current.notes.get(put.id)
            data = old.get(entry.rev) if entry else None
            try:
                previous = (
                    parse_note(data, file_id=put.id).body_bytes
                    if data is not None and not is_sealed_text(data)
                    else 0
                )
            except ParseError:
                previous = 0
            if put.note.body_bytes > previous:
                too_big.append(put.id)
        if too_big:
            raise Rejection(
                413,
                "quota_exceeded",
                f"note bodies over the quota of {limit} bytes (and larger than before)",
                ids=too_big,
            )

    # -- the keyring document ----------------------------------------------------------

    def keyring(self, user: str) -> KeyringDoc:
        """The account's keyring document; 404 `not_found` when none is stored."""
        self._check_user(user)
        found = self.storage.keyring(user)
        if found is None:
            raise Rejection(404, "not_found", "this account keeps no keyring on the server")
        version, key_id, doc = found
        return KeyringDoc(
            version=version, key_id=key_id, keyring=doc.decode("utf-8"), quotas=self.quotas
        )

    def put_keyring(self, user: str, request: KeyringPut) -> KeyringDoc:
        """Store the keyring if the stored version is still `request.expected`.

        409 `key_mismatch` when a keyring of another key id is stored (never replaced);
        409 `stale` when the version moved on (another machine changed it meanwhile)."""
        self._check_user(user)
        found = self.storage.keyring(user)
        if found is not None and found[1] != request.key_id:
            raise Rejection(
                409,
                "key_mismatch",
                f"this account keeps the keyring of key {found[1]} on the server; a keyring "
                f"of another key ({request.key_id}) is not stored over it",
                version=found[0],
            )
        current = 0 if found is None else found[0]
        if request.expected != current:
            raise Rejection(
                409,
                "stale",
                f"the stored keyring is at version {current}, not {request.expected}",
                version=current,
            )
        doc = request.keyring.encode("utf-8")
        if not self.storage.swap_keyring(user, current, request.key_id, doc):
            raise Rejection(
                409, "stale", "the keyring changed meanwhile", version=self._keyring_version(user)
            )
        return KeyringDoc(
            version=current + 1, key_id=request.key_id, keyring=request.keyring, quotas=self.quotas
        )

    def _keyring_version(self, user: str) -> int:
        found = self.storage.keyring(user)
        return 0 if found is None else found[0]

    def erase(self, user: str) -> EraseResult:
        """Erase an account: the marker first (requests are refused from then on), then data."""
        try:
            self.storage.mark_erased(user)
        except InvalidInput as exc:
            raise _invalid(str(exc)) from None
        self.storage.erase(user)
        return EraseResult(user=user, erased=True, quotas=self.quotas)


def redact_dsn(dsn: str) -> str:
    """A DSN fit to print: any password replaced by `***` (URL and key=value forms)."""
    redacted = re.sub(r"(?i)(password\s*=\s*)('[^']*'|\S+)", r"\1***", dsn)
    return re.sub(r"^([a-z][a-z0-9+.-]*://[^:/@]*:)[^@]*@", r"\1***@", redacted)


@dataclass(frozen=True, slots=True)
class S3Location:
    """Where the S3 backend keeps a server's notes (credentials are not part of it)."""

    endpoint: str | None
    bucket: str | None
    prefix: str = ""


def open_storage(
    backend: StorageBackend | str,
    data_dir: Path,
    dsn: str | None = None,
    s3: S3Location | None = None,
) -> Storage:
    """The storage backend by name: `dir` (under `data_dir`), `postgres` (at `dsn`) or `s3`
    (the bucket `s3` names)."""
    try:
        kind = StorageBackend(backend)
    except ValueError:
        *names, last = choices(StorageBackend)
        raise InvalidInput(
            f"unknown storage backend {backend!r}; use {', '.join(names)} or {last}"
        ) from None
    if kind is StorageBackend.DIR:
        from memdir.server.storage.directory import DirectoryStorage

        return DirectoryStorage(data_dir)
    if kind is StorageBackend.S3:
        return _open_s3(s3)
    if not dsn:
        raise InvalidInput("the postgres backend needs --dsn (or MEMDIR_SERVER_DSN)")
    try:
        module = importlib.import_module("memdir.server.storage.postgres")
        storage: Storage = module.PostgresStorage(dsn)
    except ImportError as exc:
        if exc.name == "memdir.server.storage.postgres":
            raise
        raise MemdirError(
            "the PostgreSQL backend needs psycopg: pip install 'memdir[postgres]'"
        ) from None
    except MemdirError:
        raise
    except Exception as exc:
        detail = str(exc)
        for secret in re.findall(r"(?i)password\s*=\s*('[^']*'|\S+)", dsn) + re.findall(
            r"^[a-z][a-z0-9+.-]*://[^:/@]*:([^@]*)@", dsn
        ):
            detail = detail.replace(secret, "***")
        raise MemdirError(
            f"cannot open the PostgreSQL storage at {redact_dsn(dsn)}: "
            f"{type(exc).__name__}: {detail}"
        ) from None
    return storage


def _open_s3(s3: S3Location | None) -> Storage:
    if s3 is None or not s3.endpoint or not s3.bucket:
        raise InvalidInput("the s3 backend needs --s3-endpoint URL and --bucket NAME")
    if not re.match(r"^https?://[^/\s]+", s3.endpoint):
        raise InvalidInput(f"--s3-endpoint must be an http(s) URL, not {s3.endpoint[:80]!r}")
    from memdir.server.storage.s3 import S3Storage

    try:
        return S3Storage(s3.endpoint, s3.bucket, prefix=s3.prefix)
    except MemdirError:
        raise
    except Exception as exc:  # botocore: a refused signature, no such bucket, no endpoint
        code = getattr(exc, "response", {}).get("Error", {}).get("Code") or type(exc).__name__
        raise MemdirError(
            f"cannot open the S3 storage {s3.bucket!r} at {s3.endpoint}: {code}"
        ) from None
