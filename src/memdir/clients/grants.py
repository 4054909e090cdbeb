"""Capability grants for the MCP server: issue, list, revoke and check bearer tokens.

A grant is a random 256-bit bearer token with an access level (read, read_write,
read_write_delete), a scope (project, user or both), optionally an access level to the
agent state store (read or read_write; none unless granted — a grant recorded before the
state store had MCP tools carries no such key and gives none) and a lifetime of 1–60
minutes.
The token is written once, to a file the caller names (mode 0600); only its SHA-256
is kept in ``$MEMDIR_HOME/mcp/grants.json`` (0600, atomic writes, under a lock).
Every MCP call re-reads that file, so a revocation or an expiry takes effect on the
very next call. Tokens are compared in constant time and never logged or printed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.core import AccessLevel, Scope, choices
from memdir.errors import InvalidInput, NotFound, Refused, Remedy
from memdir.files.atomic import (
    atomic_write,
    check_private_target,
    ensure_private_dir,
    write_private,
)
from memdir.files.lock import DirLock
from memdir.memory import Memory

__all__ = [
    "GRANT_SCOPES",
    "MAX_MINUTES",
    "STATE_ACCESS",
    "Grant",
    "GrantStore",
    "issue_grant",
    "list_grants",
    "read_grant_file",
    "revoke_grant",
]

#: A grant covers one scope or both.
GRANT_SCOPES: tuple[str, ...] = (*choices(Scope), "both")
MIN_MINUTES, MAX_MINUTES = 1, 60
#: What a grant may give of the agent state store (besides nothing): it has no deletes.
STATE_ACCESS: tuple[str, ...] = (AccessLevel.READ.value, AccessLevel.READ_WRITE.value)
_FORMAT = "memdir-mcp-grant/1"
_TOKEN_BYTES = 32


def _now_ms() -> int:
    return int(time.time() * 1000)


def token_digest(token: str) -> str:
    """The SHA-256 (hex) of a bearer token: the only form a token is stored in."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Grant:
    """One capability grant as stored (no token, only its digest)."""

    id: str
    token_sha256: str
    access: str
    scope: str
    created_at: int
    expires_at: int
    revoked_at: int | None = None
    #: The agent state store access (`STATE_ACCESS`), or None: no state tools at all.
    state: str | None = None

    def problem(self, now: int) -> str | None:
        """Why this grant cannot be used at `now` (Unix ms), or None when it can."""
        if self.revoked_at is not None:
            return f"grant {self.id} was revoked"
        if now >= self.expires_at:
            return f"grant {self.id} has expired"
        return None

    def public(self) -> dict[str, object]:
        """The grant as shown to people and scripts: everything but the token digest."""
        return {
            "id": self.id,
            "access": self.access,
            "scope": self.scope,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "revoked": self.revoked_at is not None,
            "revoked_at": self.revoked_at,
            "state": self.state,
        }

    def stored(self) -> dict[str, object]:
        """The grant as grants.json holds it; without `state` when it gives none, so a
        memdir that predates the key still reads the file."""
        doc = dataclasses.asdict(self)
        if doc["state"] is None:
            del doc["state"]
        return doc


class GrantStore:
    """The grants of one memdir home (``<home>/mcp/grants.json``)."""

    def __init__(
        self, home: Path, *, clock: Callable[[], int] = _now_ms, lock_timeout: float = 10.0
    ) -> None:
        self.directory = home / "mcp"
        self.path = self.directory / "grants.json"
        self._clock = clock
        self._lock_timeout = lock_timeout

    def now(self) -> int:
        """The store's clock (Unix ms); injectable for tests."""
        return self._clock()

    def _lock(self) -> DirLock:
        ensure_private_dir(self.directory)
        return DirLock(self.directory / ".lock", timeout=self._lock_timeout, label="the MCP grants")

    def load(self) -> list[Grant]:
        """Every grant on record, oldest first (expired and revoked ones included)."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        try:
            data = json.loads(raw)
            grants = [Grant(**item) for item in data["grants"]]
            if any(g.state is not None and g.state not in STATE_ACCESS for g in grants):
                raise ValueError("a state access memdir does not know")
            return grants
        except (ValueError, KeyError, TypeError) as exc:
            raise Refused(
                f"{self.path} is damaged ({type(exc).__name__}); no grant is valid"
            ) from None

    def _save(self, grants: list[Grant]) -> None:
        doc = {"format": _FORMAT, "grants": [g.stored() for g in grants]}
        data = json.dumps(doc, indent=2, sort_keys=True).encode("utf-8") + b"\n"
        atomic_write(self.path, data, mode=0o600)

    def create(
        self, minutes: int, access: str, scope: str, state: str | None = None
    ) -> tuple[Grant, str]:
        """Record a new grant and return it with its token (the only time the token exists);
        `state` is its access to the agent state store (None: none)."""
        if isinstance(minutes, bool) or not MIN_MINUTES <= minutes <= MAX_MINUTES:
            raise InvalidInput(
                f"a grant lives {MIN_MINUTES} to {MAX_MINUTES} minutes, not {minutes!r}"
            )
        if access not in choices(AccessLevel):
            raise InvalidInput(f"access must be one of {', '.join(choices(AccessLevel))}")
        if scope not in GRANT_SCOPES:
            raise InvalidInput(f"scope must be one of {', '.join(GRANT_SCOPES)}")
        if state is not None and state not in STATE_ACCESS:
            raise InvalidInput(
                f"state access must be one of {', '.join(STATE_ACCESS)} (or none), not {state!r}"
            )
        token = secrets.token_urlsafe(_TOKEN_BYTES)
        now = self.now()
        grant = Grant(
            id="g-" + secrets.token_hex(6),
            token_sha256=token_digest(token),
            access=access,
            scope=scope,
            created_at=now,
            expires_at=now + minutes * 60_000,
            state=state,
        )
        with self._lock():
            grants = self.load()
            # Drop grants that ended more than a day ago so the file stays small.
            grants = [g for g in grants if g.expires_at > now - 86_400_000]
            self._save([*grants, grant])
        return grant, token

    def revoke(self, grant_id: str) -> Grant:
        """Revoke a grant at once; revoking twice keeps the first time."""
        with self._lock():
            grants = self.load()
            for i, grant in enumerate(grants):
                if grant.id == grant_id:
                    if grant.revoked_at is None:
                        grant = dataclasses.replace(grant, revoked_at=self.now())
                        grants[i] = grant
                        self._save(grants)
                    return grant
        raise NotFound(f"no grant {grant_id}")

    def authenticate(self, token: str) -> Grant | None:
        """The grant a token belongs to (whatever its state), or None; constant-time compare."""
        digest = token_digest(token)
        found: Grant | None = None
        for grant in self.load():
            if hmac.compare_digest(grant.token_sha256, digest):
                found = grant
        return found

    def validate(self, token: str, grant_id: str | None = None) -> Grant:
        """The usable grant of `token`, re-read from disk; Refused if unknown, expired, revoked."""
        grant = self.authenticate(token)
        if grant is None or (grant_id is not None and grant.id != grant_id):
            raise Refused("the MCP capability grant is not valid")
        problem = grant.problem(self.now())
        if problem is not None:
            raise Refused(problem, hint=Remedy.MCP_GRANT)
        return grant


def _access_for(write: bool, delete: bool) -> AccessLevel:
    if delete:
        return AccessLevel.READ_WRITE_DELETE
    return AccessLevel.READ_WRITE if write else AccessLevel.READ


def issue_grant(
    memory: Memory,
    *,
    minutes: int,
    write: bool = False,
    delete: bool = False,
    scope: str = "both",
    state: str | None = None,
    out: Path,
    force: bool = False,
    store: GrantStore | None = None,
) -> Grant:
    """Create a grant, write its bearer capability to `out` (0600) and audit it.

    `state` (read or read_write) opens the agent state store's MCP tools to it; without
    it the grant gives none. Refuses to overwrite `out` unless `force`. The token is
    never returned or printed.
    """
    store = store or GrantStore(memory.settings.home, lock_timeout=memory.settings.lock_timeout)
    check_private_target(out, force=force)
    access = _access_for(write, delete)
    grant, token = store.create(minutes, access, scope, state)
    capability = {
        "format": _FORMAT,
        "grant_id": grant.id,
        "token": token,
        "access": grant.access,
        "scope": grant.scope,
        "expires_at": grant.expires_at,
        **({"state": grant.state} if grant.state is not None else {}),
        "header": "Authorization: Bearer <token>",
    }
    data = json.dumps(capability, indent=2).encode("utf-8") + b"\n"
    write_private(out, data, force=force)
    detail = f"{access} scope={scope}" + (f" state={state}" if state is not None else "")
    memory.audit.append("grant", grant_id=grant.id, detail=detail)
    return grant


def revoke_grant(memory: Memory, grant_id: str, *, store: GrantStore | None = None) -> Grant:
    """Revoke a grant (immediate) and audit it."""
    store = store or GrantStore(memory.settings.home, lock_timeout=memory.settings.lock_timeout)
    grant = store.revoke(grant_id)
    memory.audit.append("revoke", grant_id=grant.id, detail=grant.access)
    return grant


def read_grant_file(path: Path) -> tuple[str, str]:
    """The (grant id, token) held in a capability file written by `memdir mcp grant`."""
    try:
        doc: Any = json.loads(path.read_bytes())
        grant_id, token = doc["grant_id"], doc["token"]
    except OSError as exc:
        raise InvalidInput(f"cannot read the grant file {path}: {exc.strerror}") from None
    except (ValueError, KeyError, TypeError):
        raise InvalidInput(f"{path} is not a memdir grant file") from None
    if not isinstance(grant_id, str) or not isinstance(token, str):
        raise InvalidInput(f"{path} is not a memdir grant file")
    return grant_id, token


def list_grants(memory: Memory, *, store: GrantStore | None = None) -> list[Grant]:
    """Every grant on record (no tokens exist anywhere to list), oldest first."""
    store = store or GrantStore(memory.settings.home, lock_timeout=memory.settings.lock_timeout)
    return store.load()
