"""The sync wire protocol (§7.3), version 1: the models shared by client and server.

Every request carries the `Memdir-Protocol` header with the client's protocol
version; a server that cannot speak it answers 426 with the range it supports, and
a client that meets a server outside its own range stops with `IncompatibleVersion`
(never guessing at a format). Every response announces the server's quotas, both in
the `Memdir-Quotas` header and, for JSON bodies, in a `quotas` field.

Revisions are the SHA-256 of a note file's exact bytes (`rev`); `hash` is the §1.1
content hash. Objects travel as UTF-8 text (note files are UTF-8 by definition).

An encrypted scope (§8.2) sends *sealed* texts (`is_sealed_text`: the first line is
``memdir-sealed 1 …``): ciphertext the server stores and returns without reading. Its
`rev` is still the SHA-256 of the text the server stores; its `hash` is the rev itself
(the server cannot compute a content hash), and its size counts against
`sealed_size_limit` instead of the body quota. The account may keep one opaque keyring
document (`GET`/`PUT /v1/keyring`, compare-and-swap on its version) so that a second
machine can join with the password; a server without that endpoint answers 404.

Errors are JSON bodies `{"error": CODE, "message": ..., ...}` with these codes:

    401 unauthorized          missing or wrong bearer token
    403 forbidden             admin endpoint without the admin key; a team change or a write
                              the caller's team role does not allow (a reader's commit)
    409 stale                 a change's `base` is not the server's current revision
                              (`ids` names them), or `version` did not match (commit-first);
                              nothing of the commit was applied
    409 case_collision        a new id differs only in case from a live note (`ids`)
    409 key_mismatch          a keyring of another key id is stored already (`PUT /v1/keyring`)
    409 conflict              a team or team member that exists already (`/v1/teams`)
    409 renew_key             an end-to-end encrypted team's text sealed with a key that is
                              not its current epoch's, or sent after a member left and
                              before a writer started the next epoch (`/v1/teams/…/keys`)
    410 account_erased        the account was erased; the server refuses it for good
    413 quota_exceeded        too many changes, notes, or a body over the size quota
    422 invalid               a malformed id, note text, or a rev that does not match its text
    422 secret_refused        a note text looks like it holds a credential (`ids` names the
                              notes; the message the kinds and lines, never the values);
                              nothing of the commit was stored
    426 incompatible_protocol the client's protocol version is not supported
    429 rate_limited          too many requests; the `Retry-After` header gives seconds

and, outside the API proper: 404 not_found, 405 method_not_allowed, 500 internal,
503 busy (with `Retry-After`). A client treats any 5xx as transient.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memdir.core import Scope
from memdir.errors import InvalidInput

__all__ = [
    "ERROR_CODES",
    "MAX_PROTOCOL",
    "MIN_PROTOCOL",
    "PROTOCOL_HEADER",
    "PROTOCOL_VERSION",
    "QUOTA_HEADER",
    "Change",
    "CommitRequest",
    "CommitResult",
    "Entry",
    "EraseRequest",
    "EraseResult",
    "ErrorBody",
    "Identity",
    "KeyringDoc",
    "KeyringPut",
    "Manifest",
    "Quotas",
    "ScopeRef",
    "Snapshot",
    "SnapshotRequest",
    "TeamAction",
    "TeamChange",
    "TeamCreate",
    "TeamDoc",
    "TeamEpoch",
    "TeamEvent",
    "TeamKeys",
    "TeamKeysChange",
    "TeamName",
    "TeamRole",
    "TeamWrap",
    "Tombstone",
    "UserName",
    "WrapFor",
    "check_team_name",
    "is_sealed_text",
    "rev_of",
    "sealed_key_id",
    "sealed_size_limit",
]

PROTOCOL_VERSION = 1
#: The protocol versions this code speaks, as client and as server.
MIN_PROTOCOL = 1
MAX_PROTOCOL = 1
PROTOCOL_HEADER = "Memdir-Protocol"
QUOTA_HEADER = "Memdir-Quotas"

ERROR_CODES = (
    "unauthorized",
    "forbidden",
    "stale",
    "case_collision",
    "key_mismatch",
    "renew_key",
    "account_erased",
    "quota_exceeded",
    "invalid",
    "secret_refused",
    "incompatible_protocol",
    "rate_limited",
    "conflict",
    "not_found",
    "method_not_allowed",
    "internal",
    "busy",
)

_HEX64 = re.compile(r"[0-9a-f]{64}")
Rev = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
NoteId = Annotated[str, Field(min_length=1, max_length=80)]
ProjectId = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{7,127}$")]
#: Account and team names (lower-case, so none share a directory on a case-folding disk).
UserName = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]
TeamName = UserName
if TYPE_CHECKING:
    ScopeName: TypeAlias = str
else:
    #: A scope on the wire: the plain value of a `memdir.core.Scope`, user first (the
    #: order of the schema and of the validation message since protocol version 1).
    ScopeName = Literal[Scope.USER.value, Scope.PROJECT.value]


#: The first bytes of a sealed text (`memdir.crypto.seal.FIRST_LINE`, repeated here so
#: the server reads no crypto module).
SEALED_PREFIX = b"memdir-sealed 1 "
#: Bytes of frontmatter a sealed text is allowed beyond the body quota.
_SEALED_ALLOWANCE = 16 * 1024
#: The largest keyring document `PUT /v1/keyring` takes.
MAX_KEYRING_BYTES = 64 * 1024


_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def check_team_name(team: str) -> str:
    """`team` if it is a valid team name, else InvalidInput (checked before it becomes
    part of a URL path or a request)."""
    if not _NAME.fullmatch(team):
        raise InvalidInput(
            f"team name {team[:70]!r} is not valid: use 1-64 lower-case letters, digits, "
            "'-' and '_', starting with a letter or digit"
        )
    return team


def rev_of(data: bytes) -> str:
    """The revision id of a note file's bytes (same as the store's history)."""
    return hashlib.sha256(data).hexdigest()


def is_sealed_text(data: bytes) -> bool:
    """Whether a note text is sealed (end-to-end encrypted): by its first line only."""
    return data.startswith(SEALED_PREFIX)


def sealed_key_id(data: bytes) -> str | None:
    """The key id (16 hex digits) a sealed text names in its header (bytes 6–14 of the
    frame after the magic, version and kind; see `memdir.crypto.seal`), None when it is
    not a sealed text or too damaged to say."""
    if not is_sealed_text(data):
        return None
    _, _, rest = data.partition(b"\n")
    first = rest.split(b"\n", 1)[0][:76]
    try:
        frame = base64.b64decode(first[: len(first) // 4 * 4], validate=True)
    except (binascii.Error, ValueError):
        return None
    return frame[6:14].hex() if len(frame) >= 14 and frame[:4] == b"MDSL" else None


def sealed_size_limit(max_body_bytes: int) -> int:
    """The largest sealed text the body quota allows: a note with a body of
    `max_body_bytes` and 16 KiB of frontmatter, sealed (base64: 4/3, in lines of 76,
    plus the header, tag and first line). Client and server check the same number."""
    frame = max_body_bytes + _SEALED_ALLOWANCE + 54 + 16
    encoded = 4 * ((frame + 2) // 3)
    return encoded + encoded // 76 + 256


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class Quotas(_Model):
    """The server's limits (§7.3 defaults). A lowered quota only blocks growth."""

    max_notes: int = Field(5000, ge=1, description="live notes per scope")
    max_changes: int = Field(500, ge=1, description="changes per commit")
    max_body_bytes: int = Field(128 * 1024, ge=1, description="UTF-8 bytes per note body")
    max_response_bytes: int = Field(
        16 * 1024 * 1024, ge=1, description="bytes of bodies per response"
    )
    tombstone_days: int = Field(90, ge=1, description="days a deletion stays in the manifest")

    def header(self) -> str:
        """The `Memdir-Quotas` header value."""
        return (
            f"notes={self.max_notes}; changes={self.max_changes}; body={self.max_body_bytes}; "
            f"response={self.max_response_bytes}; tombstone-days={self.tombstone_days}"
        )

    @classmethod
    def from_header(cls, value: str) -> Quotas:
        """Parse a `Memdir-Quotas` header (unknown keys ignored, missing ones default)."""
        names = {
            "notes": "max_notes",
            "changes": "max_changes",
            "body": "max_body_bytes",
            "response": "max_response_bytes",
            "tombstone-days": "tombstone_days",
        }
        fields: dict[str, int] = {}
        for part in value.split(";"):
            key, _, raw = part.strip().partition("=")
            if key in names and raw.strip().isdigit():
                fields[names[key]] = int(raw.strip())
        return cls.model_validate(fields)


class ScopeRef(_Model):
    """Which logical scope a request is about: the user's notes or one project's.

    With `team`, a project's notes shared by that team's members (§12): the server
    keeps them in the team's space and checks the caller's role first."""

    kind: ScopeName
    project: ProjectId | None = None
    team: TeamName | None = None

    @model_validator(mode="after")
    def _project_iff_kind(self) -> ScopeRef:
        if (self.kind == Scope.PROJECT) != (self.project is not None):
            raise ValueError("`project` is required for kind=project and only there")
        if self.team is not None and self.kind != Scope.PROJECT:
            raise ValueError("a team shares project notes: `team` needs kind=project")
        return self

    @property
    def key(self) -> str:
        """A storage key: `user` or `project/<id>`."""
        return self.kind if self.kind == Scope.USER else f"{self.kind}/{self.project}"


class Entry(_Model):
    """A live note in the manifest."""

    rev: Rev
    hash: Rev
    size: int = Field(ge=0, description="bytes of the note file")
    updated_at: int = Field(ge=0, description="server time of the change, Unix ms")


class Tombstone(_Model):
    """A deleted note: the revision that was deleted and when."""

    rev: Rev
    deleted_at: int = Field(ge=0, description="server time of the deletion, Unix ms")


class Manifest(_Model):
    """One scope's manifest; `version` goes up by one with every accepted commit (0: empty)."""

    version: int = Field(0, ge=0)
    notes: dict[str, Entry] = Field(default_factory=dict)
    tombstones: dict[str, Tombstone] = Field(default_factory=dict)


class Identity(_Model):
    """`GET /v1/memory/identity`: who the token belongs to and what the server speaks."""

    user: str
    server: str = Field(description="server software and version")
    protocol: int
    min_protocol: int
    quotas: Quotas


class SnapshotRequest(_Model):
    """`POST /v1/memory/snapshot`: the manifest, plus the texts the client lacks."""

    scope: ScopeRef
    have: list[Rev] = Field(default_factory=list, description="revisions the client holds")
    known_version: int | None = Field(
        None, description="the version the client last saw: if still current, `unchanged` is set"
    )
    objects: bool = Field(True, description="false: the manifest only, no texts (a cheap probe)")
    lists: bool = Field(True, description="false: the texts only, no manifest lists")


class Snapshot(_Model):
    """A scope's manifest and the texts of revisions not in `have` (up to the response quota)."""

    version: int
    unchanged: bool = Field(False, description="manifest still at known_version; lists omitted")
    notes: dict[str, Entry] = Field(default_factory=dict)
    tombstones: dict[str, Tombstone] = Field(default_factory=dict)
    objects: dict[str, str] = Field(default_factory=dict, description="rev -> note file text")
    truncated: bool = Field(
        False, description="more texts are missing: ask again with a larger have"
    )
    quotas: Quotas


class Change(_Model):
    """One note change. `base` is the server revision the change was made against (None: new)."""

    id: NoteId
    op: Literal["put", "delete"]
    base: Rev | None = None
    rev: Rev | None = Field(None, description="put: SHA-256 of the UTF-8 text")
    text: str | None = Field(None, description="put: the whole note file")

    @model_validator(mode="after")
    def _put_has_text(self) -> Change:
        if self.op == "put" and (self.text is None or self.rev is None):
            raise ValueError("a put needs `rev` and `text`")
        if self.op == "delete" and (self.text is not None or self.base is None):
            raise ValueError("a delete needs `base` and no `text`")
        return self


class CommitRequest(_Model):
    """`POST /v1/memory/commit`: apply every change or none.

    `version`, when given, must equal the manifest's version (commit-first batches);
    every change's `base` is always checked against the current manifest.
    """

    scope: ScopeRef
    version: int | None = None
    changes: list[Change] = Field(min_length=1)


class CommitResult(_Model):
    """The manifest after an accepted commit, with the entries the commit set."""

    version: int
    notes: dict[str, Entry] = Field(default_factory=dict)
    tombstones: dict[str, Tombstone] = Field(default_factory=dict)
    quotas: Quotas


class EraseRequest(_Model):
    """`POST /v1/admin/erase`: erase one account (marker first, then its data)."""

    user: str


class EraseResult(_Model):
    """What an erase did."""

    user: str
    erased: bool
    quotas: Quotas


KeyId = Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]


class KeyringDoc(_Model):
    """`GET /v1/keyring` (and the answer to a `PUT`): the account's keyring document.

    The document is the keyring JSON (`memdir.crypto.keys`): the master key wrapped by
    a password key and by a recovery key, the salt and Argon2id parameters, the key id.
    It holds no secret in clear; the server stores it as it is and never reads it."""

    version: int = Field(ge=1, description="goes up by one with every accepted PUT")
    key_id: KeyId
    keyring: str = Field(description="the keyring JSON, opaque to the server")
    quotas: Quotas


class KeyringPut(_Model):
    """`PUT /v1/keyring`: store the keyring if the stored version is still `expected`
    (0: none stored). A keyring of another key id is refused (409 `key_mismatch`); the
    same key id with a new password wrap replaces it."""

    expected: int = Field(ge=0)
    key_id: KeyId
    keyring: str = Field(min_length=2, max_length=MAX_KEYRING_BYTES)


TeamRole = Literal["owner", "admin", "editor", "reader"]
TeamAction = Literal["create", "add", "remove", "set_role", "transfer", "revoke"]


class TeamEvent(_Model):
    """One entry of a team's policy history: who did what to whom, and when (never content).

    The history is linear: `prev` is the hash of the entry before (64 zeros for the
    first), `hash` the SHA-256 of this entry's canonical JSON without it
    (`memdir.server.teams.event_hash`)."""

    seq: int = Field(ge=1)
    at: int = Field(ge=0, description="server time, Unix ms")
    actor: UserName
    action: TeamAction
    member: UserName
    role: TeamRole | None = None
    prev: Rev
    hash: Rev


#: A member's X25519 public key (`memdir.crypto.team`), base64 of 32 bytes.
MemberPublicKey = Annotated[str, Field(pattern=r"^[A-Za-z0-9+/]{43}=$")]
#: An epoch key in a libsodium sealed box for one member key, base64.
WrapBox = Annotated[str, Field(pattern=r"^[A-Za-z0-9+/]{40,600}={0,2}$")]
#: The most key epochs one change names (a team has one per member who left, plus one).
MAX_EPOCHS = 20_001


class TeamWrap(_Model):
    """One epoch key wrapped for one member (opaque to the server)."""

    key: MemberPublicKey = Field(description="the member key it was wrapped for")
    box: WrapBox | None = Field(
        default=None, description="the sealed box (shown only to the member it is for)"
    )
    by: UserName = Field(description="the member whose machine wrapped it")


class TeamEpoch(_Model):
    """One key epoch of an end-to-end encrypted team."""

    epoch: int = Field(ge=1)
    key_id: KeyId = Field(description="the key id every text sealed under it names")
    by: UserName
    at: int = Field(ge=0, description="server time, Unix ms")
    after: int = Field(ge=0, description="the history entries when it began")
    wraps: dict[str, TeamWrap] = Field(default_factory=dict)


class TeamKeys(_Model):
    """The key material of an end-to-end encrypted team, as the server keeps it: member
    public keys and, per epoch, its key wrapped for each member. No key in clear."""

    version: int = Field(ge=1, description="goes up by one with every accepted change")
    public: dict[str, MemberPublicKey] = Field(default_factory=dict)
    epochs: list[TeamEpoch] = Field(min_length=1)
    renew: bool = Field(
        default=False,
        description="a member left since the current epoch began: nothing new is stored "
        "until a writer starts the next one",
    )


class WrapFor(_Model):
    """An epoch key wrapped for a member's public key `key`."""

    epoch: int = Field(ge=1)
    member: UserName
    key: MemberPublicKey
    box: WrapBox


class TeamKeysChange(_Model):
    """`POST /v1/teams/{team}/keys` (and `keys` of a create): enrol the caller's public key,
    start a new epoch (`new_epoch`: its key id; its wraps in `wraps`), share wraps of
    epochs the caller holds with members who lack them, drop the caller's own wraps that
    do not open. Made against `expected`, the version the caller read (0 at a create)."""

    expected: int = Field(ge=0)
    public_key: MemberPublicKey | None = None
    new_epoch: KeyId | None = None
    wraps: list[WrapFor] = Field(default_factory=list, max_length=4096)
    drop_own: list[int] = Field(
        default_factory=list,
        max_length=MAX_EPOCHS,
        description="epochs whose wrap for the caller does not open: dropped, so another "
        "member wraps the key again",
    )


class TeamDoc(_Model):
    """`GET /v1/teams/{team}` (and the answer to a create or a change): the team's policy."""

    team: TeamName
    head: Rev = Field(description="hash of the last history entry: the `parent` of a change")
    members: dict[str, TeamRole]
    revoked: list[str] = Field(default_factory=list, description="never again members")
    history: list[TeamEvent]
    you: TeamRole | None = Field(description="the caller's role (None: the caller just left)")
    quotas: Quotas
    keys: TeamKeys | None = Field(
        default=None, description="an end-to-end encrypted team's keys (None: a plain team)"
    )


class TeamCreate(_Model):
    """`POST /v1/teams`: create a team; the caller becomes its owner. With `keys` (the
    owner's public key and epoch 1 wrapped for it) the team is end-to-end encrypted."""

    team: TeamName
    keys: TeamKeysChange | None = None


class TeamChange(_Model):
    """`POST /v1/teams/{team}/changes`: one membership change, made against `parent`
    (the head the caller saw: a change against an older head is refused as stale, so a
    replayed change never applies twice)."""

    parent: Rev
    action: Literal["add", "remove", "set_role", "transfer", "revoke"]
    member: UserName
    role: TeamRole | None = None

    @model_validator(mode="after")
    def _role_iff_needed(self) -> TeamChange:
        if (self.action in ("add", "set_role")) != (self.role is not None):
            raise ValueError("`role` is required for add and set_role, and only there")
        return self


class ErrorBody(_Model):
    """Every error response."""

    error: str
    message: str
    ids: list[str] = Field(default_factory=list)
    version: int | None = None
    supported: list[int] = Field(default_factory=list)
    quotas: Quotas | None = None


def is_rev(value: str) -> bool:
    """True for a well-formed revision id."""
    return _HEX64.fullmatch(value) is not None
