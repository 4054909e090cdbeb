"""A member machine's side of an end-to-end encrypted team's keys (§12).

Before each sync pass of an encrypted team's notes, `team_sealing` brings the team's keys
on the server up to date as far as this member can, then opens what it holds:

1. **enrol**: this home's member public key (derived from its unlocked master key,
   `memdir.crypto.team.MemberKey`) is the one the team lists for this account;
2. **renew**: when a member left since the current epoch began (`renew`), a writer's
   machine starts the next epoch (a fresh random key) wrapped for every remaining member
   who has enrolled a key, so a removed member can read nothing written after;
3. **share**: every epoch key this machine holds is wrapped for each current member who
   has enrolled a key and lacks it (a new member, one with a new home key);
4. **open**: the epoch keys wrapped for this member's key.

Each change is made against the keys version read (`expected`); when another member's
machine changed them meanwhile, they are read again and the steps redone. A member whose
key nobody has shared yet (just added; their key enrolled at this sync) waits: the
scope pauses with that said, until another member's machine syncs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memdir.errors import Conflict, IntegrityError, InvalidInput, Locked
from memdir.sync.protocol import TeamDoc, TeamKeys, TeamKeysChange, WrapFor
from memdir.sync.teams import WRITERS

if TYPE_CHECKING:
    from memdir.crypto.seal import SealKeys
    from memdir.crypto.team import EpochKey, MemberKey
    from memdir.sync.client import SyncClient

__all__ = [
    "KeyStatus",
    "TeamSealing",
    "first_epoch",
    "key_status",
    "replace_member_key",
    "team_sealing",
]

log = logging.getLogger("memdir.sync")
#: Rounds of read-change-write against other members' machines changing the keys too.
_ATTEMPTS = 4
#: Wraps sent in one change (the request's limit).
_MAX_WRAPS = 4096


@dataclass
class TeamSealing:
    """The epoch keys this machine holds for one encrypted team."""

    team: str
    #: Epoch number → key (only those wrapped for this member's key).
    held: dict[int, EpochKey] = field(default_factory=dict)
    #: The current epoch's number.
    current: int = 0

    def __repr__(self) -> str:
        return f"TeamSealing(team={self.team}, held={sorted(self.held)}, current={self.current})"

    def sealing_keys(self) -> SealKeys:
        """The keys new texts are sealed with: the current epoch's."""
        key = self.held.get(self.current)
        if key is None:  # team_sealing pauses the scope before this can happen
            raise Locked(_waiting(self.team, self.current))
        return key.keys

    def opening_keys(self, key_id: bytes | None) -> SealKeys:
        """The keys that open a text naming `key_id`; Locked when this member holds none."""
        for key in self.held.values():
            if key.keys.key_id == key_id:
                return key.keys
        shown = key_id.hex() if key_id is not None else "an unreadable key id"
        raise Locked(
            f"its text on the server is sealed under a key ({shown}) no member has shared "
            f"with this account; another member's next sync shares it, if one still holds it"
        )


def _other_key(team: str, enrolled: str, mine: str) -> str:
    from memdir.crypto.team import fingerprint

    return (
        f"team {team} lists another member key for your account ({fingerprint(enrolled)}) than "
        f"this memdir home's ({fingerprint(mine)}): this home has a keyring of its own, not "
        "the account's. Nothing of the team was sent or written. Use the account's keyring "
        f"(`memdir unlock` on a home without one fetches it), or `memdir team enrol {team} "
        "--replace` to make this home's key yours in the team (another member's sync then "
        "wraps the team's keys for it)"
    )


def replace_member_key(client: SyncClient, team: str, home: SealKeys) -> TeamDoc:
    """Enrol this home's member key for the caller in `team`, replacing the one enrolled
    (its wraps are dropped; the server refuses when no one else holds some epoch)."""
    from memdir.crypto.team import MemberKey

    public = MemberKey(home).public
    for _ in range(_ATTEMPTS):
        doc = client.team(team, history=False)
        if doc.keys is None:
            raise InvalidInput(f"team {team} is not end-to-end encrypted: it has no member keys")
        from memdir.sync.client import Stale

        try:
            return client.change_team_keys(
                team, TeamKeysChange(expected=doc.keys.version, public_key=public)
            )
        except Stale:
            continue
    raise Conflict(f"the keys of team {team} kept changing; try again")


def _waiting(team: str, epoch: int) -> str:
    return (
        f"team {team}'s notes are end-to-end encrypted, and no member has shared key epoch "
        f"{epoch} with this account yet: another member's next sync does (this machine's key "
        "is enrolled); nothing was sent or written"
    )


@dataclass(frozen=True)
class KeyStatus:
    """An encrypted team's key state as people read it (`memdir team show`, the page)."""

    epoch: int
    #: A member left since the epoch began: the next writer's sync starts a new one.
    renew: bool
    #: Member → (their key's fingerprint, None before they enrolled; whether the current
    #: epoch's key is wrapped for that key).
    members: dict[str, tuple[str | None, bool]]

    def as_json(self) -> dict[str, object]:
        """The JSON form (no key material: fingerprints only)."""
        return {
            "epoch": self.epoch,
            "renew": self.renew,
            "members": {
                m: {"fingerprint": f, "has_current_key": held}
                for m, (f, held) in sorted(self.members.items())
            },
        }


def key_status(doc: TeamDoc) -> KeyStatus | None:
    """The key state of `doc`'s team (None: not end-to-end encrypted)."""
    from memdir.crypto.team import fingerprint

    if doc.keys is None:
        return None
    current = doc.keys.epochs[-1]
    members: dict[str, tuple[str | None, bool]] = {}
    for member in doc.members:
        public = doc.keys.public.get(member)
        wrap = current.wraps.get(member)
        held = public is not None and wrap is not None and wrap.key == public
        members[member] = (None if public is None else fingerprint(public), held)
    return KeyStatus(current.epoch, doc.keys.renew, members)


def first_epoch(team: str, user: str, home: SealKeys) -> TeamKeysChange:
    """What creates an encrypted team: the owner's member key and epoch 1 wrapped for it."""
    from memdir.crypto.team import MemberKey, new_epoch_key

    member = MemberKey(home)
    key = new_epoch_key(1)
    wrap = WrapFor(epoch=1, member=user, key=member.public, box=key.wrap_for(team, member.public))
    return TeamKeysChange(expected=0, public_key=member.public, new_epoch=key.key_id, wraps=[wrap])


def team_sealing(client: SyncClient, doc: TeamDoc, user: str, home: SealKeys) -> TeamSealing:
    """The keys of `doc`'s encrypted team this member holds, after enrolling, renewing and
    sharing what this machine can (see the module). Locked when the current epoch's key
    is not shared with this member yet."""
    from memdir.crypto.team import MemberKey

    member = MemberKey(home)
    team = doc.team
    for _ in range(_ATTEMPTS):
        keys = doc.keys
        if keys is None:
            raise InvalidInput(f"team {team} is not end-to-end encrypted")
        change, held = _plan(team, doc, keys, user, member)
        if change is None:
            current = len(keys.epochs)
            if current not in held:
                raise Locked(_waiting(team, current))
            return TeamSealing(team, held, current)
        from memdir.sync.client import Stale

        try:
            doc = client.change_team_keys(team, change)
        except Stale:
            doc = client.team(team, history=False)  # another member's machine: read again
    raise Conflict(f"the keys of team {team} kept changing under this sync; sync again")


def _plan(
    team: str, doc: TeamDoc, keys: TeamKeys, user: str, member: MemberKey
) -> tuple[TeamKeysChange | None, dict[int, EpochKey]]:
    """(the change to send, None when nothing; the epoch keys this member holds now)."""
    from memdir.crypto.team import new_epoch_key

    enrolled_key = keys.public.get(user)
    if enrolled_key is None:
        return TeamKeysChange(expected=keys.version, public_key=member.public), {}
    if enrolled_key != member.public:
        raise Conflict(_other_key(team, enrolled_key, member.public))
    held: dict[int, EpochKey] = {}
    broken: list[int] = []
    for epoch in keys.epochs:
        wrap = epoch.wraps.get(user)
        if wrap is None or wrap.box is None or wrap.key != member.public:
            continue
        try:
            held[epoch.epoch] = member.open(team, epoch.epoch, epoch.key_id, wrap.box)
        except IntegrityError as exc:  # a wrap someone made wrong: never trusted, dropped
            log.warning("team %s: %s (made by %s); it is dropped", team, exc, wrap.by)
            broken.append(epoch.epoch)
    if broken:  # another member's next sync wraps the key again
        return TeamKeysChange(expected=keys.version, drop_own=broken), held
    wrapped = {
        (e.epoch, m) for e in keys.epochs for m, w in e.wraps.items() if w.key == keys.public.get(m)
    }
    enrolled = {m: keys.public[m] for m in doc.members if m in keys.public}
    new_epoch = None
    if keys.renew and doc.you in WRITERS:
        fresh = new_epoch_key(len(keys.epochs) + 1)
        new_epoch = fresh.key_id
        held[fresh.epoch] = fresh
        log.info("team %s: a member left; starting key epoch %d", team, fresh.epoch)
    wraps: list[WrapFor] = []
    for number, key in sorted(held.items(), reverse=True):  # a new epoch's first
        for name, public in sorted(enrolled.items()):
            if (number, name) in wrapped:
                continue
            try:
                box = key.wrap_for(team, public)
            except IntegrityError as exc:  # a key enrolled wrong: that member is skipped
                log.warning("team %s: no key is wrapped for %s: %s", team, name, exc)
                continue
            wraps.append(WrapFor(epoch=number, member=name, key=public, box=box))
    if new_epoch is None and not wraps:
        return None, held
    # Past the request's limit, the rest goes at the next round.
    change = TeamKeysChange(expected=keys.version, new_epoch=new_epoch, wraps=wraps[:_MAX_WRAPS])
    return change, held
