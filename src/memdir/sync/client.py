"""The HTTP side of the sync client: one typed call per endpoint, server answers mapped to errors.

The httpx transport is injectable (tests pass a MockTransport or a real server's URL).
A token never appears in an error message, and no httpx exception (which holds the
request headers) is chained. Transient failures (network errors, timeouts, 5xx) are
tried once more after a short pause, then raised as `SyncFailed`; a 429 is raised at
once as `RateLimited` with the server's Retry-After, so the scheduler can pause.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from memdir._version import __version__
from memdir.errors import (
    Conflict,
    IncompatibleVersion,
    InvalidInput,
    LimitExceeded,
    NotFound,
    RateLimited,
    Refused,
    Remedy,
    SecretRefused,
    SyncFailed,
    SyncRefused,
)
from memdir.outbound import backoff, detail, endpoint, redact_key, retry_after
from memdir.sync.protocol import (
    MAX_PROTOCOL,
    MIN_PROTOCOL,
    PROTOCOL_HEADER,
    PROTOCOL_VERSION,
    QUOTA_HEADER,
    CommitRequest,
    CommitResult,
    Identity,
    KeyringDoc,
    KeyringPut,
    Quotas,
    Snapshot,
    SnapshotRequest,
    TeamChange,
    TeamCreate,
    TeamDoc,
    TeamKeysChange,
    check_team_name,
)

__all__ = ["Absent", "SecretInCommit", "Stale", "SyncClient", "Transfer", "origin_of"]

_M = TypeVar("_M", bound=BaseModel)
_TRIES = 2
_TIMEOUT = httpx.Timeout(30.0, connect=10.0)


class Stale(Exception):
    """A commit was refused because the server's state moved on (409); nothing was applied."""

    def __init__(self, message: str, ids: tuple[str, ...], version: int | None) -> None:
        super().__init__(message)
        self.ids = ids
        self.version = version


class SecretInCommit(SecretRefused):
    """Raised when the sync server refused a commit (422 `secret_refused`): a note looks like it
    holds a credential. Nothing of the commit was stored; `ids` names the notes."""

    def __init__(self, message: str, ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.ids = ids


class _Unprocessable(SyncFailed):
    """422: the server found the request malformed (a SyncFailed, as it always was)."""


class Absent(SyncFailed):
    """Raised when the server answered 404: no such document, or no such endpoint (an older
    server)."""


@dataclass(slots=True)
class Transfer:
    """Bytes and requests moved by a client so far (for status and benchmarks)."""

    requests: int = 0
    sent: int = 0
    received: int = 0


def origin_of(url: str) -> str:
    """The normalised origin (`scheme://host[:port]`) of a server URL."""
    parsed = httpx.URL(url)
    default = {"http": 80, "https": 443}.get(parsed.scheme)
    port = f":{parsed.port}" if parsed.port is not None and parsed.port != default else ""
    host = parsed.host if ":" not in parsed.host else f"[{parsed.host}]"
    return f"{parsed.scheme}://{host}{port}"


def _retry_seconds(value: str | None) -> float:
    """Retry-After (seconds or an HTTP date) as seconds, up to a day; default 60.

    Not capped like a model API's: the scheduler honours a long pause by the server.
    """
    seconds = retry_after(value, cap=24 * 3600.0)
    return 60.0 if seconds is None else seconds


class SyncClient:
    """A signed-in connection to one sync server."""

    def __init__(
        self,
        server: str,
        token: str,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        timeout: httpx.Timeout = _TIMEOUT,
    ) -> None:
        try:
            base, _ = endpoint(server, "v1", what="sync server", key_setting="sync login")
        except ValueError as exc:
            raise SyncRefused(str(exc)) from None
        self.server = server
        self.origin = origin_of(server)
        self._base = base
        self._token = token
        self._sleep = sleep
        self.quotas = Quotas()
        self.transfer = Transfer()
        self._http = httpx.Client(
            transport=transport,
            timeout=timeout,
            follow_redirects=False,
            headers={
                "Authorization": f"Bearer {token}",
                PROTOCOL_HEADER: str(PROTOCOL_VERSION),
                "User-Agent": f"memdir/{__version__}",
            },
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- endpoints -------------------------------------------------------------------

    def identity(self) -> Identity:
        """Who the token belongs to; checks that both sides speak a common protocol."""
        identity = self._call("GET", "memory/identity", None, Identity)
        if identity.protocol < MIN_PROTOCOL or identity.min_protocol > MAX_PROTOCOL:
            raise IncompatibleVersion(
                self._version_message(identity.min_protocol, identity.protocol)
            )
        return identity

    def snapshot(self, request: SnapshotRequest) -> Snapshot:
        """The scope's manifest and the texts of revisions not in `request.have`."""
        return self._call("POST", "memory/snapshot", request, Snapshot)

    def commit(self, request: CommitRequest) -> CommitResult:
        """Apply a batch of changes; `Stale` when the server moved on (nothing applied)."""
        return self._call("POST", "memory/commit", request, CommitResult)

    def keyring(self) -> KeyringDoc | None:
        """The account's keyring document; None when the server keeps none (or is too old
        to keep one: it has no such endpoint)."""
        try:
            return self._call("GET", "keyring", None, KeyringDoc)
        except Absent:
            return None

    def put_keyring(self, request: KeyringPut) -> KeyringDoc:
        """Store the keyring document (`Stale` when its version moved on, `Refused` when
        another key's keyring is stored, `Absent` when the server has no such endpoint)."""
        return self._call("PUT", "keyring", request, KeyringDoc)

    # -- teams (§12) -------------------------------------------------------------------

    def create_team(self, team: str, keys: TeamKeysChange | None = None) -> TeamDoc:
        """Create a team with this account as its owner (`Conflict` when the name is taken);
        end-to-end encrypted with `keys` (the owner's public key and epoch 1)."""
        return self._team_call("POST", "teams", TeamCreate(team=check_team_name(team), keys=keys))

    def team(self, team: str, *, history: bool = True) -> TeamDoc:
        """A team this account is a member of (`NotFound` for any other name); without
        `history`, only its members and roles."""
        params = None if history else {"history": "false"}
        return self._team_call("GET", f"teams/{check_team_name(team)}", None, params)

    def change_team(self, team: str, change: TeamChange) -> TeamDoc:
        """One membership change (`SyncRefused` when the role does not allow it, `Stale`
        when the team changed since `change.parent` was read)."""
        return self._team_call("POST", f"teams/{check_team_name(team)}/changes", change)

    def change_team_keys(self, team: str, change: TeamKeysChange) -> TeamDoc:
        """Enrol, start an epoch or share wrapped keys of an encrypted team (`Stale` when its
        keys changed since `change.expected` was read; InvalidInput when the server finds
        the change malformed, Conflict when it does not fit the team)."""
        try:
            return self._team_call("POST", f"teams/{check_team_name(team)}/keys", change)
        except _Unprocessable as exc:
            raise InvalidInput(str(exc)) from None

    def _team_call(
        self,
        method: str,
        path: str,
        body: BaseModel | None,
        params: dict[str, str] | None = None,
    ) -> TeamDoc:
        try:
            return self._call(method, path, body, TeamDoc, params)
        except Absent as exc:
            if str(exc).endswith(": Not Found"):  # no such route: a server before teams
                raise NotFound(
                    f"the sync server at {self.origin} does not support teams (upgrade it)"
                ) from None
            raise NotFound(str(exc)) from None

    # -- plumbing ----------------------------------------------------------------------

    def _version_message(self, low: int, high: int) -> str:
        return (
            f"the sync server at {self.origin} speaks protocol versions {low}–{high}; this "
            f"memdir {__version__} speaks {MIN_PROTOCOL}–{MAX_PROTOCOL}. Upgrade whichever "
            "side is older; nothing was sent or changed"
        )

    def _call(
        self,
        method: str,
        path: str,
        body: BaseModel | None,
        model: type[_M],
        params: dict[str, str] | None = None,
    ) -> _M:
        url = self._base.copy_with(path=self._base.path + "/" + path)
        if params:
            url = url.copy_merge_params(params)
        content = None if body is None else body.model_dump_json().encode("utf-8")
        headers = {"Content-Type": "application/json"} if content is not None else {}
        for attempt in range(_TRIES):
            try:
                self.transfer.requests += 1
                self.transfer.sent += len(content or b"")
                response = self._http.request(method, url, content=content, headers=headers)
                response.read()
            except httpx.HTTPError as exc:
                failure = f"{type(exc).__name__}"
                text = str(exc)
                if text and self._token not in text:
                    failure += f": {text}"
                message = f"cannot reach the sync server at {self.origin} ({failure})"
            else:
                self.transfer.received += len(response.content)
                self._note_quotas(response)
                if response.status_code < 500:
                    return self._answer(response, model)
                message = (
                    f"the sync server at {self.origin} failed with HTTP {response.status_code}"
                    f"{detail(response, self._token)}"
                )
            if attempt + 1 < _TRIES:
                self._sleep(backoff(attempt))
        raise SyncFailed(message + "; no note is lost, and sync will retry")

    def _note_quotas(self, response: httpx.Response) -> None:
        header = response.headers.get(QUOTA_HEADER)
        if header:
            self.quotas = Quotas.from_header(header)
        served = response.headers.get(PROTOCOL_HEADER)
        if served is not None and served.strip().isdigit():
            version = int(served)
            if response.status_code != 426 and not MIN_PROTOCOL <= version <= MAX_PROTOCOL:
                raise IncompatibleVersion(self._version_message(version, version))

    def _answer(self, response: httpx.Response, model: type[_M]) -> _M:
        status = response.status_code
        if 200 <= status < 300:
            try:
                return model.model_validate_json(response.content)
            except ValidationError:
                raise SyncFailed(
                    f"the sync server at {self.origin} sent an answer memdir cannot read "
                    f"(HTTP {status}); nothing was changed"
                ) from None
        payload = self._error_payload(response)
        code = str(payload.get("error", ""))
        text = detail(response, self._token)
        said = payload.get("message")
        if code and isinstance(said, str) and said.strip():
            # a memdir server's own words (the code alone says less)
            said = "".join(c if c.isprintable() else " " for c in redact_key(said, self._token))
            text = f": {said.strip()[:500]}"
        if status == 429:
            wait = _retry_seconds(response.headers.get("Retry-After"))
            raise RateLimited(
                f"syncing too often: the server at {self.origin} asks to wait {wait:.0f} s",
                retry_after=wait,
            )
        if status == 401:
            raise SyncRefused(
                f"the sync server at {self.origin} did not accept the token",
                hint=Remedy.SYNC_LOGIN,
            )
        if status == 410 or code == "account_erased":
            raise SyncRefused(
                f"the account was erased on the sync server at {self.origin}; sync is stopped "
                "for it and local notes are kept"
            )
        if status == 403:
            raise SyncRefused(f"the sync server at {self.origin} refused the request{text}")
        if status == 426 or code == "incompatible_protocol":
            supported = [int(v) for v in payload.get("supported", []) if isinstance(v, int)]
            low, high = (min(supported), max(supported)) if supported else (0, 0)
            raise IncompatibleVersion(self._version_message(low, high))
        if status == 422 and code == "secret_refused":
            ids = tuple(str(i) for i in payload.get("ids", []) if isinstance(i, str))
            raise SecretInCommit(
                f"the sync server at {self.origin} refused to store a note that looks like it "
                f"holds a credential ({', '.join(ids) or 'unnamed'}){text}",
                ids,
            )
        if status == 409:
            ids = tuple(str(i) for i in payload.get("ids", []) if isinstance(i, str))
            version = payload.get("version")
            if code == "case_collision":
                raise Refused(f"the sync server refused the commit{text}")
            if code == "conflict":
                raise Conflict(f"the sync server at {self.origin} refused the request{text}")
            if code == "renew_key":
                raise Conflict(f"the sync server refused the commit{text}")
            if code == "key_mismatch":
                raise Refused(
                    f"the sync server at {self.origin} keeps another key's keyring for this "
                    f"account{text}; it was not replaced"
                )
            raise Stale(
                f"the server changed meanwhile{text}",
                ids,
                version if isinstance(version, int) else None,
            )
        if status == 413:
            raise LimitExceeded(f"the sync server's quota refused the request{text}")
        if status == 404:
            raise Absent(f"the sync server at {self.origin} answered HTTP 404{text}")
        if status in (301, 302, 303, 307, 308):
            raise SyncRefused(
                f"the sync server at {self.origin} answered with a redirect; memdir does not "
                "follow redirects with a token — check the server URL"
            )
        if status == 422:
            raise _Unprocessable(f"the sync server at {self.origin} refused the request{text}")
        raise SyncFailed(f"the sync server at {self.origin} answered HTTP {status}{text}")

    @staticmethod
    def _error_payload(response: httpx.Response) -> dict[str, Any]:
        try:
            payload = response.json()
        except ValueError:
            return {}
        return payload if isinstance(payload, dict) else {}
