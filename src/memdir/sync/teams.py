"""Team policy (§12): members with roles, and a linear history every change appends to.

Shared by the server (which decides) and the client (which can check what it is shown).
The rules are the vault rules of the source design:

| change | who may make it |
|---|---|
| add a member (admin, editor or reader) | owner, admin |
| remove a member (never the owner) | owner, admin; any member removes themself |
| change a role among admin, editor, reader (never the owner's) | owner, admin |
| transfer ownership to a member | owner only; the old owner becomes an admin |
| revoke a member or former member (for good: the set only grows) | owner only |

So there is exactly one owner at every point of the history; an admin never makes or
changes an owner and never touches the revocation set; a revoked account is never a
member again. Readers read the team's notes; the server refuses their writes.

The history is the audit: who (`actor`), what (`action`, `member`, `role`) and when
(`at`), never a note's content. Entry `n` names the hash of entry `n - 1` (`prev`), so
the history is one line: a change is made against the head its author saw (`parent`),
and one made against an older head — a replayed request among them — is refused.
`replay` checks a whole history (the chain, each hash — which covers the team's name —
and that each entry was allowed by the state before it) and is what both sides use to
read one. The history holds at most `MAX_HISTORY` entries, except that removing and
revoking are always possible (each needs an earlier add, so the history stays bounded).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memdir.sync.protocol import TeamEvent

__all__ = [
    "GENESIS",
    "MAX_HISTORY",
    "WRITERS",
    "PolicyRefused",
    "TeamState",
    "event_hash",
    "next_event",
    "replay",
]

#: The `prev` of a history's first entry.
GENESIS = "0" * 64
#: Entries a team's history may hold (each is ~250 bytes of JSON).
MAX_HISTORY = 20_000
#: Roles that may write the team's notes.
WRITERS = frozenset({"owner", "admin", "editor"})
_MANAGERS = frozenset({"owner", "admin"})
_ROLES = ("owner", "admin", "editor", "reader")


class PolicyRefused(Exception):
    """A change the rules do not allow (or a caller who is no member): status and code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def event_hash(
    *,
    team: str,
    seq: int,
    at: int,
    actor: str,
    action: str,
    member: str,
    role: str | None,
    prev: str,
) -> str:
    """The SHA-256 of an entry's canonical JSON (its `hash` field left out), bound to the
    team's name, so one team's history copied to another does not replay there."""
    fields: dict[str, Any] = {
        "team": team,
        "action": action,
        "actor": actor,
        "at": at,
        "member": member,
        "prev": prev,
        "role": role,
        "seq": seq,
    }
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


@dataclass(frozen=True, slots=True)
class TeamState:
    """A team as its history leaves it."""

    team: str
    members: dict[str, str] = field(default_factory=dict)
    revoked: frozenset[str] = frozenset()
    history: tuple[TeamEvent, ...] = ()

    @property
    def head(self) -> str:
        """The hash of the last entry (GENESIS before the first)."""
        return self.history[-1].hash if self.history else GENESIS

    @property
    def owner(self) -> str | None:
        """The one owner (None only before the team is created)."""
        owners = [m for m, role in self.members.items() if role == "owner"]
        return owners[0] if owners else None

    def role_of(self, user: str) -> str:
        """The user's role; PolicyRefused 404 for anyone who is no member."""
        role = self.members.get(user)
        if role is None:
            raise PolicyRefused(404, "not_found", f"no team {self.team!r} you are a member of")
        return role


def _check(state: TeamState, actor: str, action: str, member: str, role: str | None) -> None:
    """Raise PolicyRefused unless `actor` may make this change in `state`."""
    team = state.team
    if action == "create":
        if state.history:
            raise PolicyRefused(409, "conflict", f"team {team!r} exists")
        if member != actor or role != "owner":
            raise PolicyRefused(422, "invalid", "a team is created by its owner")
        return
    if action in ("add", "set_role") and role not in _ROLES:
        raise PolicyRefused(422, "invalid", f"{action} needs a role: {', '.join(_ROLES)}")
    if action not in ("add", "remove", "set_role", "transfer", "revoke"):
        raise PolicyRefused(422, "invalid", f"{action!r} is not a team change")
    mine = state.role_of(actor)
    current = state.members.get(member)
    if action == "transfer":
        if mine != "owner":
            raise PolicyRefused(403, "forbidden", "only the owner transfers ownership")
        if current is None:
            raise PolicyRefused(404, "not_found", f"{member!r} is not a member of {team!r}")
        if member == actor:
            raise PolicyRefused(409, "conflict", f"{member!r} is the owner already")
        return
    if action == "revoke":
        if mine != "owner":
            raise PolicyRefused(
                403, "forbidden", "only the owner revokes; the revocation set is the owner's"
            )
        if member == actor:
            raise PolicyRefused(403, "forbidden", "the owner cannot revoke themself")
        if member in state.revoked:
            raise PolicyRefused(409, "conflict", f"{member!r} is revoked already")
        if not any(e.member == member for e in state.history):
            raise PolicyRefused(404, "not_found", f"{member!r} was never a member of {team!r}")
        return
    if action == "remove" and member == actor and mine != "owner":
        return  # anyone but the owner may leave
    if mine not in _MANAGERS:
        raise PolicyRefused(
            403, "forbidden", f"you are {_a(mine)} of {team!r}: only the owner and admins do that"
        )
    if action == "add":
        if member in state.revoked:
            raise PolicyRefused(
                403, "forbidden", f"{member!r} was revoked from {team!r}; revocation is for good"
            )
        if current is not None:
            raise PolicyRefused(409, "conflict", f"{member!r} is {_a(current)} of {team!r}")
    elif current is None:
        raise PolicyRefused(404, "not_found", f"{member!r} is not a member of {team!r}")
    elif current == "owner":
        raise PolicyRefused(
            403,
            "forbidden",
            "the owner is never removed or given another role; the owner transfers ownership",
        )
    elif action == "set_role" and role == current:
        raise PolicyRefused(409, "conflict", f"{member!r} is {_a(current)} already")
    if role == "owner":
        raise PolicyRefused(403, "forbidden", "a team gets a new owner only by a transfer")


def _a(role: str) -> str:
    return f"an {role}" if role[0] in "aeiou" else f"a {role}"


def _apply(state: TeamState, event: TeamEvent) -> TeamState:
    members = dict(state.members)
    revoked = state.revoked
    if event.action in ("create", "add", "set_role"):
        assert event.role is not None
        members[event.member] = event.role
    elif event.action == "remove":
        del members[event.member]
    elif event.action == "transfer":
        members[event.actor] = "admin"
        members[event.member] = "owner"
    elif event.action == "revoke":
        members.pop(event.member, None)
        revoked = revoked | {event.member}
    return TeamState(state.team, members, revoked, (*state.history, event))


def next_event(
    state: TeamState, actor: str, action: str, member: str, role: str | None, at: int
) -> tuple[TeamEvent, TeamState]:
    """The entry `actor`'s change appends and the state after it; PolicyRefused if not allowed."""
    _check(state, actor, action, member, role)
    if len(state.history) >= MAX_HISTORY and action not in ("remove", "revoke"):
        # Removing and revoking stay possible past the cap (each needs an earlier add, so
        # the history stays bounded): a full history never locks a member in.
        raise PolicyRefused(
            413, "quota_exceeded", f"team {state.team!r} has {MAX_HISTORY} changes, the most kept"
        )
    if action == "transfer":
        role = "owner"
    elif action in ("remove", "revoke"):
        role = None
    seq = len(state.history) + 1
    digest = event_hash(
        team=state.team,
        seq=seq,
        at=at,
        actor=actor,
        action=action,
        member=member,
        role=role,
        prev=state.head,
    )
    event = TeamEvent.model_validate(
        {
            "seq": seq,
            "at": at,
            "actor": actor,
            "action": action,
            "member": member,
            "role": role,
            "prev": state.head,
            "hash": digest,
        }
    )
    return event, _apply(state, event)


def replay(team: str, history: Iterable[TeamEvent]) -> TeamState:
    """The state a history leaves; ValueError naming the first entry that is out of line
    (a broken chain, a wrong hash, or a change the rules did not allow)."""
    state = TeamState(team)
    for event in history:
        digest = event_hash(
            team=team,
            seq=event.seq,
            at=event.at,
            actor=event.actor,
            action=event.action,
            member=event.member,
            role=event.role,
            prev=event.prev,
        )
        where = f"team {team!r} history entry {event.seq}"
        if event.seq != len(state.history) + 1 or event.prev != state.head:
            raise ValueError(f"{where} does not follow entry {len(state.history)}")
        if digest != event.hash:
            raise ValueError(f"{where} does not match its hash")
        try:
            expected, state = next_event(
                state, event.actor, event.action, event.member, event.role, event.at
            )
        except PolicyRefused as exc:
            raise ValueError(f"{where} was not allowed: {exc.message}") from None
        if expected.hash != event.hash:
            raise ValueError(f"{where} records another change than it names")
    return state
