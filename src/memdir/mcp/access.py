"""What an MCP caller may do: the access level and scope of the current request, and its
access to the agent state store."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from memdir.clients.grants import GrantStore
from memdir.core import AccessLevel
from memdir.errors import InvalidInput, Refused, Remedy

__all__ = ["CURRENT", "Access", "AsyncResolver", "Gate", "Place", "Resolver", "bearer_token"]


@dataclass(frozen=True, slots=True)
class Place:
    """Whose notes a remote MCP request reaches (§12): an account's own notes and, with
    `project`, that project's notes, kept in `team`'s space when the team shares them."""

    account: str
    project: str | None = None
    team: str | None = None

    def describe(self) -> str:
        """`account alice`, `project 3f… of team acme (account alice)`."""
        if self.project is None:
            return f"the notes of account {self.account}"
        where = f" of team {self.team}" if self.team else ""
        return f"project {self.project}{where} (account {self.account})"


@dataclass(frozen=True, slots=True)
class Access:
    """The effective rights of one request: level, scope, delete right, the grant behind
    it, and the agent state store access that grant gives (None: none; read; read_write).
    `config_level` is the config's `mcp.access`, and `capped` says it lowered what the
    grant gives (a refusal then names the config, not the grant, as what to change)."""

    level: AccessLevel
    scope: str = "both"
    can_delete: bool = False
    grant_id: str | None = None
    state: AccessLevel | None = None
    # What the refusals say, not what the access is: left out of comparisons.
    config_level: AccessLevel | None = field(default=None, compare=False)
    capped: bool = field(default=False, compare=False)
    #: A remote request's place (whose notes it reaches) and its OAuth client; None for
    #: the user's own server, whose memory is the one it was started on.
    place: Place | None = None
    client: str | None = field(default=None, compare=False)

    def require_write(self, tool: str) -> None:
        """Refuse `tool` (which writes notes) unless writes are allowed."""
        if self.level is AccessLevel.READ:
            raise self._refusal(tool, "writes notes", "--write", "nothing was written")

    def require_delete(self, tool: str, confirm: bool) -> None:
        """Refuse `tool` (which deletes notes) unless deletes are allowed and the caller
        confirmed."""
        self.require_delete_right(tool)
        if confirm is not True:
            raise Refused(f"{tool} needs confirm: true — ask the user first; nothing was removed")

    def require_delete_right(self, tool: str) -> None:
        """Refuse `tool` unless deletes are allowed (a merge deletes notes too: it needs this
        right even to show its plan, and applies only with confirm)."""
        if self.level is AccessLevel.READ or not self.can_delete:
            raise self._refusal(tool, "deletes notes", "--write --delete", "nothing was removed")

    def _refusal(self, tool: str, does: str, flags: str, unchanged: str) -> Refused:
        """Why `tool` is refused, and which grant (or config) would allow it."""
        if self.place is not None:
            scopes = "write" if flags == "--write" else "write and delete"
            return Refused(
                f"{tool} {does}, which is not allowed: the OAuth token of {self.client} does "
                f"not carry the {scopes} scope{'s' if ' ' in scopes else ''}; {unchanged} "
                "(the user can approve a new authorization that includes it)"
            )
        if self.grant_id is None or self.capped:
            # The config caps every grant: only the user's config can widen it.
            config = (self.config_level or self.level).value
            cap = ", which caps any grant" if self.grant_id else ""
            return Refused(
                f"{tool} {does}, which is not allowed: this MCP server is read-only "
                f"(mcp.access is {config} in the memdir config{cap}); {unchanged} (ask the "
                "user to set mcp.access to read_write in the memdir config if they want this)"
            )
        why = "is read-only" if self.level is AccessLevel.READ else "was issued without --delete"
        return Refused(
            f"{tool} {does}, which is not allowed: grant {self.grant_id} {why}; it needs a "
            f"grant issued with {flags}; {unchanged}",
            hint=Remedy.MCP_GRANT,
        )

    def require_state(self, write: bool) -> None:
        """Refuse unless the agent state store may be read (and, with `write`, changed):
        only a grant that names state access opens it, capped by the config."""
        needed = AccessLevel.READ_WRITE if write else AccessLevel.READ
        done = "nothing was written" if write else "nothing was read"
        if self.state is None:
            holder = f"grant {self.grant_id}" if self.grant_id else "this MCP connection (no grant)"
            raise Refused(
                f"{holder} gives no access to the agent state store; it needs a grant with "
                f"state access {needed.value}; {done}",
                hint=Remedy.MCP_GRANT,
            )
        if needed.rank > self.state.rank:
            raise Refused(
                f"the agent state store is read-only on this MCP connection ({self._source()}); "
                f"changing it needs a grant with state access {needed.value}; {done}",
                hint=Remedy.MCP_GRANT,
            )

    def allows(self, needed: AccessLevel, *, state: bool = False) -> bool:
        """Whether this access reaches `needed`: of the notes (deleting also needs the
        delete right), or with `state` of the agent state store (none without a grant
        that names it)."""
        if state:
            return self.state is not None and needed.rank <= self.state.rank
        if needed is AccessLevel.READ_WRITE_DELETE:
            return self.level is not AccessLevel.READ and self.can_delete
        return needed.rank <= self.level.rank

    def scope_for(self, requested: str | None) -> str | None:
        """The scope to pass to `Memory` (None: both), refusing one the grant does not cover."""
        if requested is not None and requested not in ("project", "user"):
            raise InvalidInput("scope must be project or user")
        if self.scope == "both":
            return requested
        if requested is not None and requested != self.scope and self.place is not None:
            raise Refused(
                f"this authorization reaches {self.place.describe()} only, no project's "
                "notes: the user can approve a new one naming a project"
            )
        if requested is not None and requested != self.scope:
            raise Refused(
                f"grant {self.grant_id} covers the {self.scope} scope only, so scope "
                f"{requested!r} was refused: it needs a grant issued with --scope {requested} "
                "or --scope both",
                hint=Remedy.MCP_GRANT,
            )
        return self.scope

    def covers(self, scope: str | None) -> bool:
        """Whether a note of `scope` is visible under this access."""
        return self.scope == "both" or scope == self.scope

    def _source(self) -> str:
        return f"grant {self.grant_id}" if self.grant_id else "mcp.access in the memdir config"


#: The access of the request being handled, set by the server before any dispatch.
CURRENT: ContextVar[Access | None] = ContextVar("memdir_mcp_access", default=None)


def bearer_token(headers: Mapping[str, str] | None) -> str | None:
    """The token of an `Authorization: Bearer …` header, or None."""
    if headers is None:
        return None
    value = headers.get("authorization")
    if not value:
        return None
    kind, _, token = value.partition(" ")
    token = token.strip()
    if kind.lower() != "bearer" or not token:
        return None
    return token


class Resolver(Protocol):
    """Resolves the access of a request from its HTTP headers (None over stdio)."""

    def resolve(self, headers: Mapping[str, str] | None) -> Access:
        """The access of the request; Refused (a MemdirError) when it has none."""
        ...


@runtime_checkable
class AsyncResolver(Protocol):
    """A resolver whose work is asynchronous (the remote endpoint's token check): called on
    the event loop, never from a worker thread that would wait on the loop."""

    async def resolve_async(self, headers: Mapping[str, str] | None) -> Access:
        """The access of the request; Refused (a MemdirError) when it has none."""
        ...


class Gate:
    """Resolves the access of each request from the config and, when used, a grant.

    Without a grant (a stdio server started by the user's own client) the config's
    `mcp.access` applies: read refuses writes; read_write and read_write_delete allow
    deletes with an explicit confirm. A grant narrows that: its level is capped by the
    config, and deletes need a grant issued with --delete. The agent state store is open
    only to a grant that names state access (capped by the config as well). Every call
    re-reads the grants file, so revocation and expiry take effect on the next call.
    """

    def __init__(
        self,
        config_access: str,
        store: GrantStore | None = None,
        *,
        fixed: tuple[str, str] | None = None,
        require_bearer: bool = False,
    ) -> None:
        self.config_access = AccessLevel(config_access)
        self.store = store
        self.fixed = fixed
        self.require_bearer = require_bearer

    def resolve(self, headers: Mapping[str, str] | None) -> Access:
        """The access of a request with these HTTP headers (None over stdio); Refused if none."""
        if self.require_bearer:
            token = bearer_token(headers)
            if token is None or self.store is None:
                raise Refused("this MCP server needs an Authorization: Bearer capability grant")
            grant_id = self.fixed[0] if self.fixed else None
            return self._from_grant(token, grant_id)
        if self.fixed is not None and self.store is not None:
            grant_id, token = self.fixed
            return self._from_grant(token, grant_id)
        level = self.config_access
        return Access(level, "both", level is not AccessLevel.READ, config_level=level)

    def _from_grant(self, token: str, grant_id: str | None) -> Access:
        assert self.store is not None
        grant = self.store.validate(token, grant_id)
        granted = AccessLevel(grant.access)
        level = self.config_access.at_most(granted)
        delete = granted is AccessLevel.READ_WRITE_DELETE and level is not AccessLevel.READ
        state = self.config_access.at_most(AccessLevel(grant.state)) if grant.state else None
        capped = level.rank < granted.rank
        return Access(level, grant.scope, delete, grant.id, state, self.config_access, capped)
