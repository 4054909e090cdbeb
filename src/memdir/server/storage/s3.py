"""The sync server's S3 backend (§7.3): revisions as immutable objects, manifests swapped by
compare-and-swap on their ETag, in any S3-compatible object store.

Layout under the bucket and an optional prefix::

    <prefix>users/<user>/ERASED                            erase marker (written first)
    <prefix>users/<user>/keyring.json                      the keyring document (§8.2)
    <prefix>users/<user>/scopes/<scope>/manifest.json      scope `user` or `project/<id>`
    <prefix>users/<user>/scopes/<scope>/objects/<note-id>/<rev>
    <prefix>teams/<team>/policy.json                       the team's policy document
    <prefix>teams/<team>/scopes/<scope>/...                the team's notes (owner `+<team>`)
    <prefix>server/accounts.json                           the server's accounts (hashed tokens)
    <prefix>rate/<sha256 of the account>.json              a rate-limit bucket all replicas share

- A revision is written once with ``If-None-Match: *``: an existing one (412) has the same
  bytes by its name, so writing twice is a no-op and never overwrites.
- A manifest (and the keyring, and a team's policy) is replaced with ``If-Match: <ETag>``
  of the version read, or ``If-None-Match: *`` when there is none: two servers racing for
  the same scope cannot both win, and the loser's swap reports False. A swap whose response
  was lost and whose retry then met 412 is told apart by reading the manifest back (its own
  bytes: it won).
- No listing in the hot path: snapshots read the manifest and fetch the revisions it
  names by key; only `erase` lists the account's keys.
- Erase writes the marker first; every request of an erased account is refused by the
  rules from then on. The object store has no locks, so a write that raced the marker is
  swept by a second pass of `erase`, and a manifest swap that finds the marker after
  writing removes what it wrote.

Credentials come from the standard AWS environment variables (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``) or the shared credentials file
(``AWS_SHARED_CREDENTIALS_FILE``, ``~/.aws/credentials``, profile ``AWS_PROFILE``) — never
from memdir's config or the command line, and never from an instance-metadata service
(no request leaves for an address the user did not name). The object store answering
5xx, throttling or timing out is retried a few times (botocore's standard mode), then
reported as `Busy` (the API's 503 with Retry-After: clients retry).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from memdir.core import validate_id
from memdir.errors import Busy, InvalidInput, MemdirError
from memdir.server.storage.base import StoredKeyring, StoredObject, StoredTeam
from memdir.server.storage.directory import (
    is_team_owner,
    owner_path,
    pack_document,
    team_owner,
    unpack_document,
    validate_scope_key,
    validate_team,
    validate_user,
)
from memdir.sync.protocol import Manifest, is_rev, rev_of

if TYPE_CHECKING:
    from botocore.client import BaseClient

__all__ = ["S3Storage"]

_MARKER = "ERASED"
_KEYRING = "keyring.json"
#: Lost compare-and-swap races a rate-limit check tries again.
_RATE_ATTEMPTS = 5
_POLICY = "policy.json"
_FETCHERS = 8
_RETRIES = 4


def _client(endpoint: str, region: str) -> BaseClient:
    try:
        import botocore.session
        from botocore.config import Config
        from botocore.credentials import (
            CredentialResolver,
            EnvProvider,
            SharedCredentialProvider,
        )
    except ImportError:
        raise MemdirError("the S3 backend needs boto3: pip install 'memdir[s3]'") from None
    session = botocore.session.get_session()
    profile = session.get_config_variable("profile") or "default"
    resolver = CredentialResolver(
        [
            EnvProvider(),
            SharedCredentialProvider(
                session.get_config_variable("credentials_file"), profile_name=profile
            ),
        ]
    )
    session.register_component("credential_provider", resolver)
    if session.get_credentials() is None:
        raise MemdirError(
            "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or put them "
            "in the shared credentials file (~/.aws/credentials or AWS_SHARED_CREDENTIALS_FILE)"
        )
    config = Config(
        retries={"max_attempts": _RETRIES, "mode": "standard"},
        connect_timeout=5,
        read_timeout=30,
        max_pool_connections=32,
        s3={"addressing_style": "path"},
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    return session.create_client("s3", endpoint_url=endpoint, region_name=region, config=config)


def _code(error: Exception) -> tuple[str, int]:
    response: Any = getattr(error, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", ""))
    status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    return code, status


def _missing(error: Exception) -> bool:
    code, status = _code(error)
    return status == 404 or code in ("NoSuchKey", "404", "NotFound")


def _precondition(error: Exception) -> bool:
    code, status = _code(error)
    # 409 ConditionalRequestConflict: a concurrent conditional write to the same key won.
    return status in (412, 409) or code in ("PreconditionFailed", "ConditionalRequestConflict")


class S3Storage:
    """`Storage` in an S3-compatible bucket; safe across threads and server processes."""

    def __init__(
        self, endpoint: str, bucket: str, *, prefix: str = "", region: str = "us-east-1"
    ) -> None:
        if prefix and (prefix.startswith("/") or ".." in prefix.split("/")):
            raise InvalidInput(f"the S3 prefix {prefix!r} must be relative, without '..'")
        self.endpoint = endpoint
        self.bucket = bucket
        self.prefix = prefix.rstrip("/") + "/" if prefix else ""
        self._s3 = _client(endpoint, region)
        from botocore.exceptions import BotoCoreError, ClientError

        self._client_error = ClientError
        self._transient: tuple[type[Exception], ...] = (BotoCoreError,)
        self._pool = ThreadPoolExecutor(_FETCHERS, thread_name_prefix="memdir-s3")
        self._call(lambda: self._s3.head_bucket(Bucket=bucket), what="open the bucket")

    def __repr__(self) -> str:
        return f"S3Storage({self.endpoint!r}, bucket={self.bucket!r}, prefix={self.prefix!r})"

    # -- keys and calls ----------------------------------------------------------------

    def _user_key(self, user: str) -> str:
        return f"{self.prefix}users/{validate_user(user)}/"

    def _team_key(self, team: str) -> str:
        return f"{self.prefix}teams/{validate_team(team)}/"

    def _scope_key(self, owner: str, scope: str) -> str:
        return f"{self.prefix}{owner_path(owner)}/scopes/{validate_scope_key(scope)}/"

    def _object_key(self, owner: str, scope: str, note_id: str, rev: str) -> str:
        if not is_rev(rev):
            raise InvalidInput(f"revision {str(rev)[:80]!r} is not 64 lower-case hex digits")
        return f"{self._scope_key(owner, scope)}objects/{validate_id(note_id)}/{rev}"

    def _call(self, run: Any, *, what: str) -> Any:
        """`run()`, with the object store's own failures as `Busy` (a 503 for clients)."""
        try:
            return run()
        except self._client_error as error:
            code, status = _code(error)
            if status >= 500 or status in (429, 0) or code in ("SlowDown", "RequestTimeout"):
                raise Busy(
                    f"the object store at {self.endpoint} did not {what} ({code or status}); "
                    "try again"
                ) from None
            raise
        except self._transient as error:
            raise Busy(
                f"the object store at {self.endpoint} did not {what} "
                f"({type(error).__name__}); try again"
            ) from None

    def _get(self, key: str, *, what: str) -> tuple[bytes, str] | None:
        """(bytes, ETag) of an object; None when there is none."""

        def run() -> tuple[bytes, str] | None:
            try:
                found = self._s3.get_object(Bucket=self.bucket, Key=key)
            except self._client_error as error:
                if _missing(error):
                    return None
                raise
            return found["Body"].read(), str(found["ETag"])

        result: tuple[bytes, str] | None = self._call(run, what=what)
        return result

    def _put_new(self, key: str, data: bytes, *, what: str) -> bool:
        """Write `key` unless it exists (If-None-Match: *); False when it did."""

        def run() -> bool:
            try:
                self._s3.put_object(Bucket=self.bucket, Key=key, Body=data, IfNoneMatch="*")
            except self._client_error as error:
                if _precondition(error):
                    return False
                raise
            return True

        done: bool = self._call(run, what=what)
        return done

    def _swap(self, key: str, etag: str | None, data: bytes, *, what: str) -> bool:
        """Replace `key` if it still has `etag` (None: if it does not exist)."""

        def run() -> bool:
            condition = {"IfMatch": etag} if etag is not None else {"IfNoneMatch": "*"}
            try:
                self._s3.put_object(Bucket=self.bucket, Key=key, Body=data, **condition)
            except self._client_error as error:
                if not _precondition(error) and not (etag is not None and _missing(error)):
                    raise
                # Lost to another writer — or our own first attempt won and only its answer
                # was lost (the retry then met our write): the stored bytes tell.
                now = self._get(key, what=what)
                return now is not None and now[0] == data
            return True

        done: bool = self._call(run, what=what)
        return done

    def _swap_document(
        self, key: str, owner: str | None, expected: int, doc: bytes, body: str, **fields: str
    ) -> bool:
        """Write the versioned document at `key` as version `expected + 1` if the stored one
        is still at `expected` (0: none) and `owner` (None: the server itself) is not erased."""
        what = f"swap {key.rsplit('/', 1)[-1]}"
        if owner is not None and self.is_erased(owner):
            return False
        found = self._get(key, what=what)
        version = 0 if found is None else unpack_document(found[0], body=body)[0]
        if version != expected:
            return False
        data = pack_document(expected + 1, doc, body=body, **fields)
        return self._swap(key, None if found is None else found[1], data, what=what)

    # -- Storage -----------------------------------------------------------------------

    def manifest(self, owner: str, scope: str) -> Manifest:
        """The scope's current manifest (version 0 and empty when there is none)."""
        found = self._get(self._scope_key(owner, scope) + "manifest.json", what="read a manifest")
        return Manifest() if found is None else Manifest.model_validate_json(found[0])

    def objects(self, owner: str, scope: str, wanted: Mapping[str, str]) -> dict[str, bytes]:
        """The bytes of the revisions in `wanted` (rev -> note id) that exist, fetched by key
        a few at a time."""
        keys = {rev: self._object_key(owner, scope, n, rev) for rev, n in wanted.items()}

        def fetch(rev: str) -> tuple[str, bytes | None]:
            found = self._get(keys[rev], what="read a revision")
            return rev, None if found is None else found[0]

        return {rev: data for rev, data in self._pool.map(fetch, keys) if data is not None}

    def put_objects(self, owner: str, scope: str, objects: Iterable[StoredObject]) -> None:
        """Store revisions durably (each written once; an existing one is left alone)."""
        items = [(self._object_key(owner, scope, n, r), r, d) for n, r, d in objects]
        for _key, rev, data in items:
            if rev_of(data) != rev:
                raise InvalidInput(f"revision {rev[:12]} does not match its bytes")
        if not items or self.is_erased(owner):
            return
        list(self._pool.map(lambda item: self._put_new(item[0], item[2], what="store"), items))

    def swap_manifest(self, owner: str, scope: str, expected: int, manifest: Manifest) -> bool:
        """Write `manifest` if the stored version is still `expected` (False otherwise)."""
        key = self._scope_key(owner, scope) + "manifest.json"
        if self.is_erased(owner):
            return False
        found = self._get(key, what="read a manifest")
        version = 0 if found is None else Manifest.model_validate_json(found[0]).version
        if version != expected:
            return False
        data = manifest.model_dump_json().encode("utf-8")
        if not self._swap(key, None if found is None else found[1], data, what="swap a manifest"):
            return False
        if self.is_erased(owner):  # erased while this swap ran: take it back
            with contextlib.suppress(Busy, self._client_error):
                self._call(
                    lambda: self._s3.delete_object(Bucket=self.bucket, Key=key), what="delete"
                )
            return False
        return True

    def keyring(self, user: str) -> StoredKeyring | None:
        """The user's keyring document."""
        found = self._get(self._user_key(user) + _KEYRING, what="read the keyring")
        if found is None:
            return None
        version, envelope, doc = unpack_document(found[0], body="keyring")
        return version, str(envelope["keyId"]), doc

    def swap_keyring(self, user: str, expected: int, key_id: str, doc: bytes) -> bool:
        """Store the keyring document as version `expected + 1` if still at `expected`."""
        key = self._user_key(user) + _KEYRING
        return self._swap_document(key, user, expected, doc, "keyring", keyId=key_id)

    def team(self, team: str) -> StoredTeam | None:
        """The team's policy document, None when no such team exists."""
        found = self._get(self._team_key(team) + _POLICY, what="read a team's policy")
        if found is None:
            return None
        version, _envelope, doc = unpack_document(found[0], body="policy")
        return version, doc

    def swap_team(self, team: str, expected: int, doc: bytes) -> bool:
        """Store the team's policy document as version `expected + 1` if still at `expected`."""
        key = self._team_key(team) + _POLICY
        return self._swap_document(key, team_owner(team), expected, doc, "policy")

    def take_token(self, bucket: str, per_minute: int, burst: int) -> float:
        """Spend a token of `bucket` (`per_minute` a minute, `burst` at most) and return 0.0,
        or the seconds until one is available. The bucket is one small object replaced by
        compare-and-swap, so every replica on this bucket draws on it; the replicas' clocks
        are assumed to agree (NTP). After a few lost races it answers as if empty for a
        moment rather than let a burst through unchecked."""
        rate = per_minute / 60.0
        name = hashlib.sha256(bucket.encode("utf-8")).hexdigest()
        key = f"{self.prefix}rate/{name}.json"
        for _ in range(_RATE_ATTEMPTS):
            found = self._get(key, what="read a rate-limit bucket")
            now = time.time()
            tokens = float(burst)
            if found is not None:
                try:
                    state = json.loads(found[0])
                    elapsed = max(0.0, now - float(state["at"]))
                    tokens = min(float(burst), float(state["tokens"]) + elapsed * rate)
                except (ValueError, KeyError, TypeError):
                    tokens = float(burst)  # a damaged bucket starts full again
            if tokens < 1.0:
                return (1.0 - tokens) / rate
            data = json.dumps({"tokens": tokens - 1.0, "at": now}).encode("ascii")
            etag = None if found is None else found[1]
            if self._swap(key, etag, data, what="spend a rate-limit token"):
                return 0.0
        return 1.0 / rate if rate else 0.0

    def server_document(self, name: str) -> StoredTeam | None:
        """(version, bytes) of the server's document `name` (its accounts), None when none."""
        found = self._get(self._server_key(name), what=f"read the server's {name}")
        if found is None:
            return None
        version, _, doc = unpack_document(found[0], body="document")
        return version, doc

    def server_document_stamp(self, name: str) -> str | None:
        """The ETag of the server's document `name` (a HEAD request), None when none."""
        key = self._server_key(name)

        def run() -> str | None:
            try:
                found = self._s3.head_object(Bucket=self.bucket, Key=key)
            except self._client_error as error:
                if _missing(error):
                    return None
                raise
            return str(found["ETag"])

        stamp: str | None = self._call(run, what=f"look at the server's {name}")
        return stamp

    def swap_server_document(self, name: str, expected: int, doc: bytes) -> bool:
        """Store the server's document `name` as version `expected + 1` if still there."""
        return self._swap_document(self._server_key(name), None, expected, doc, "document")

    def server_document_names(self, prefix: str) -> list[str]:
        """The names of the server's documents starting with `prefix`, sorted."""
        base = f"{self.prefix}server/"
        paginator = self._s3.get_paginator("list_objects_v2")
        pages = self._call(
            lambda: list(paginator.paginate(Bucket=self.bucket, Prefix=base + prefix)),
            what="list the server's documents",
        )
        keys = [str(o["Key"]) for page in pages for o in page.get("Contents", [])]
        return sorted(
            k[len(base) : -len(".json")]
            for k in keys
            if k.endswith(".json") and "/" not in k[len(base) :]
        )

    def delete_server_document(self, name: str, version: int | None = None) -> bool:
        """Delete the server's document `name` (with `version`: only if it is at that
        version when read just before); whether one was there to delete."""
        key = self._server_key(name)
        found = self.server_document(name)
        if found is None or (version is not None and found[0] != version):
            return False
        self._call(
            lambda: self._s3.delete_object(Bucket=self.bucket, Key=key),
            what=f"delete the server's {name}",
        )
        return True

    def _server_key(self, name: str) -> str:
        if not re.fullmatch(r"[a-z][a-z0-9-]{0,63}", name):
            raise InvalidInput(f"{name[:70]!r} is not a server document name")
        return f"{self.prefix}server/{name}.json"

    def mark_erased(self, user: str) -> None:
        """Write the erase marker (idempotent: an existing one is kept)."""
        stamp = str(int(time.time() * 1000)).encode("ascii") + b"\n"
        self._put_new(self._user_key(user) + _MARKER, stamp, what="mark the account erased")

    def is_erased(self, user: str) -> bool:
        """True once the user's erase marker exists; always False for a team owner."""
        if is_team_owner(user):
            return False
        key = self._user_key(user) + _MARKER

        def run() -> bool:
            try:
                self._s3.head_object(Bucket=self.bucket, Key=key)
            except self._client_error as error:
                if _missing(error):
                    return False
                raise
            return True

        erased: bool = self._call(run, what="check the erase marker")
        return erased

    def erase(self, user: str) -> None:
        """Delete every manifest, revision and keyring of the user (two sweeps, for writes
        that raced the marker); the marker stays."""
        base = self._user_key(user)
        marker = base + _MARKER
        paginator = self._s3.get_paginator("list_objects_v2")
        for _sweep in range(2):
            pages = self._call(
                lambda: list(paginator.paginate(Bucket=self.bucket, Prefix=base)),
                what="list the account",
            )
            keys = [o["Key"] for page in pages for o in page.get("Contents", [])]
            keys = [k for k in keys if k != marker]
            for start in range(0, len(keys), 1000):
                batch = [{"Key": k} for k in keys[start : start + 1000]]
                self._call(
                    lambda batch=batch: self._s3.delete_objects(
                        Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True}
                    ),
                    what="delete the account",
                )

    def close(self) -> None:
        """Stop the fetch threads and close the HTTP connections."""
        self._pool.shutdown(wait=True)
        with contextlib.suppress(Exception):
            self._s3.close()
