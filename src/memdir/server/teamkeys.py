"""The rules of an end-to-end encrypted team's keys on the server (§12).

The server keeps a team's key material beside its history, in the same document (so a
removal and the key state it ends change together), and never a key in clear: member
public keys, and per epoch the epoch's key wrapped for each member (`memdir.crypto.team`).
What it checks, since it cannot check the cryptography:

- only a member changes anything, and only their own public key (a new one drops their
  wraps, which no longer open; refused while they alone hold some epoch's key);
- only a writer (owner, admin, editor) starts an epoch, and only once the current one
  has ended (so the epochs are the removals, plus one), with a key id never used before
  and their own wrap among its wraps;
- a wrap is for a current member and for the public key they have enrolled now; a wrap
  that exists is never replaced by another member (a wrap only ever adds a reader of
  that epoch); the member it is for may drop it when it does not open for them (one
  made wrong), so another member wraps the key again;
- the current epoch *ends* when a member leaves or is removed (`needs_renewal`): no text
  is stored until a writer has started the next, so a removed member can read nothing
  written after their removal;
- every text stored in the team's space is sealed with the current epoch's key id
  (`check_texts`); a plain text is refused.

The server is trusted to hand out the public keys the members enrolled (there is no key
transparency): `memdir team show` prints each member's key fingerprint to compare.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from memdir.server.rejection import Rejection
from memdir.sync.protocol import (
    TeamEpoch,
    TeamKeys,
    TeamKeysChange,
    TeamWrap,
    WrapFor,
    sealed_key_id,
)
from memdir.sync.teams import WRITERS, TeamState

__all__ = ["apply_keys_change", "check_stored", "check_texts", "needs_renewal", "served"]

log = logging.getLogger("memdir.server.teams")


def needs_renewal(keys: TeamKeys, state: TeamState) -> bool:
    """Whether a member left (or was removed, or revoked) since the current epoch began."""
    began = keys.epochs[-1].after
    return any(e.action in ("remove", "revoke") and e.seq > began for e in state.history)


def check_stored(keys: TeamKeys, state: TeamState) -> None:
    """ValueError unless stored keys are as this server's own changes leave them: epoch
    *i* at position *i*, every key id once, each epoch begun within the history and no
    earlier than the one before (so a removal always ends the epoch it follows)."""
    began = 0
    for position, epoch in enumerate(keys.epochs, start=1):
        if epoch.epoch != position:
            raise ValueError(f"key epoch {epoch.epoch} is stored at position {position}")
        if not began <= epoch.after <= len(state.history):
            raise ValueError(f"key epoch {epoch.epoch} begins outside the history")
        began = epoch.after
    if len({e.key_id for e in keys.epochs}) != len(keys.epochs):
        raise ValueError("a key id is used by two epochs")
    if any(w.box is None for e in keys.epochs for w in e.wraps.values()):
        raise ValueError("a stored wrap has no sealed box")


def served(keys: TeamKeys | None, state: TeamState, user: str) -> TeamKeys | None:
    """The keys as `user` is shown them: `renew` set from the history, and the sealed
    boxes of their own wraps only (of the others', who holds which epoch under which key:
    what a machine needs to share; the answer stays small as the epochs grow)."""
    if keys is None:
        return None
    epochs = [
        e.model_copy(
            update={
                "wraps": {
                    m: w if m == user else w.model_copy(update={"box": None})
                    for m, w in e.wraps.items()
                }
            }
        )
        for e in keys.epochs
    ]
    return keys.model_copy(update={"renew": needs_renewal(keys, state), "epochs": epochs})


def apply_keys_change(
    keys: TeamKeys | None,
    state: TeamState,
    user: str,
    change: TeamKeysChange,
    now: int,
    *,
    creating: bool = False,
) -> TeamKeys:
    """The keys after `user`'s `change`, or Rejection; `keys` is not modified.

    At a create (`creating`) the change must enrol the owner and start epoch 1."""
    team = state.team
    if keys is None and not creating:
        raise Rejection(
            409,
            "conflict",
            f"team {team!r} is not end-to-end encrypted (a team is encrypted when it is "
            "created: `memdir team create --encrypted`)",
        )
    if creating and (change.public_key is None or change.new_epoch is None):
        raise Rejection(422, "invalid", "an encrypted team starts with its owner's key and epoch 1")
    version = 0 if keys is None else keys.version
    if change.expected != version:
        raise Rejection(
            409,
            "stale",
            f"the keys of team {team!r} changed since you read them; read them again",
            version=version,
        )
    role = state.members.get(user)
    if role is None:
        raise Rejection(404, "not_found", f"no team {team!r} you are a member of")
    public = dict(keys.public) if keys is not None else {}
    epochs = [e.model_copy(deep=True) for e in keys.epochs] if keys is not None else []
    if change.public_key is not None and public.get(user) != change.public_key:
        from memdir.crypto.team import usable_public_key

        if not usable_public_key(change.public_key):
            raise Rejection(422, "invalid", "the member key is not a usable X25519 public key")
        public[user] = change.public_key
        for epoch in epochs:
            others = [m for m in epoch.wraps if m != user and m in state.members]
            if user in epoch.wraps and not others:
                raise Rejection(
                    409,
                    "conflict",
                    f"only your key holds key epoch {epoch.epoch} of team {team!r} among its "
                    "members: a new key would lose it for everyone; use this account's own "
                    "keyring (`memdir unlock` on a home without one fetches it from the server)",
                )
            epoch.wraps.pop(user, None)  # wrapped for the old key: no longer opens
        log.info("team %s: %s enrolled a member key", team, user)
    for number in sorted(set(change.drop_own)):
        if not 1 <= number <= len(epochs):
            raise Rejection(422, "invalid", f"team {team!r} has no key epoch {number}")
        bad = epochs[number - 1].wraps.pop(user, None)
        if bad is not None:
            log.warning(
                "team %s: %s dropped their wrap of epoch %d made by %s (it did not open)",
                team,
                user,
                number,
                bad.by,
            )
    if change.new_epoch is not None:
        if keys is not None and not needs_renewal(keys, state):
            raise Rejection(
                409,
                "stale",
                f"team {team!r}'s key epoch {len(epochs)} has not ended (no member left since "
                "it began); read the team's keys again",
            )
        epochs.append(_new_epoch(team, epochs, state, user, role, change.new_epoch, now))
    added = _add_wraps(team, epochs, state, public, user, change.wraps)
    if change.new_epoch is not None and user not in epochs[-1].wraps:
        raise Rejection(422, "invalid", "a new epoch carries its key wrapped for its maker")
    if change.new_epoch is not None:
        log.info(
            "team %s: %s started key epoch %d (%d wraps)",
            team,
            user,
            len(epochs),
            len(epochs[-1].wraps),
        )
    elif added:
        log.info("team %s: %s shared %d wrapped keys", team, user, added)
    return TeamKeys(version=version + 1, public=public, epochs=epochs)


def _new_epoch(
    team: str,
    epochs: list[TeamEpoch],
    state: TeamState,
    user: str,
    role: str,
    key_id: str,
    now: int,
) -> TeamEpoch:
    if role not in WRITERS:
        raise Rejection(
            403, "forbidden", f"you are a reader of team {team!r}: readers start no key epoch"
        )
    if any(e.key_id == key_id for e in epochs):
        raise Rejection(422, "invalid", f"key id {key_id} was used by an earlier epoch")
    return TeamEpoch(
        epoch=len(epochs) + 1, key_id=key_id, by=user, at=now, after=len(state.history)
    )


def _add_wraps(
    team: str,
    epochs: list[TeamEpoch],
    state: TeamState,
    public: dict[str, str],
    user: str,
    wraps: Iterable[WrapFor],
) -> int:
    added = 0
    for wrap in wraps:
        if not 1 <= wrap.epoch <= len(epochs):
            raise Rejection(422, "invalid", f"team {team!r} has no key epoch {wrap.epoch}")
        if wrap.member not in state.members:
            raise Rejection(  # most likely removed since the caller read the team
                409,
                "stale",
                f"{wrap.member!r} is not a member of team {team!r} (any more): no key for them; "
                "read the team again",
            )
        if public.get(wrap.member) != wrap.key:
            raise Rejection(
                409,
                "stale",
                f"the key wrapped for {wrap.member!r} is not the one they have enrolled now; "
                "read the team's keys again",
            )
        target = epochs[wrap.epoch - 1]
        if wrap.member in target.wraps:
            continue  # one wrap per member and epoch: the first stays
        target.wraps[wrap.member] = TeamWrap(key=wrap.key, box=wrap.box, by=user)
        added += 1
    return added


def check_texts(keys: TeamKeys | None, state: TeamState, texts: dict[str, bytes | None]) -> None:
    """Refuse a commit's texts (note id → text; None for a plain text) that the team's
    encryption does not allow: sealed texts in a plain team, plain texts in an encrypted
    one, and in an encrypted one any text not sealed under the current epoch's key (or
    sent while the current epoch has ended)."""
    team = state.team
    sealed = [i for i, t in texts.items() if t is not None]
    if keys is None:
        if sealed:
            raise Rejection(
                422,
                "invalid",
                f"team {team!r} is not end-to-end encrypted: its notes are not sealed "
                "with one member's key",
                ids=sealed,
            )
        return
    plain = [i for i, t in texts.items() if t is None]
    if plain:
        raise Rejection(
            422,
            "invalid",
            f"team {team!r} is end-to-end encrypted: a note in plain text is not stored",
            ids=plain,
        )
    current = keys.epochs[-1]
    unreadable = [i for i in sealed if sealed_key_id(texts[i] or b"") is None]
    if unreadable:
        raise Rejection(
            422, "invalid", "a sealed text's header is damaged: no key id", ids=unreadable
        )
    if sealed and needs_renewal(keys, state):
        raise Rejection(
            409,
            "renew_key",
            f"a member left team {team!r} since its key epoch {current.epoch} began: "
            "nothing new is stored until a writer's machine starts the next (any writer's "
            "next sync does)",
            ids=sealed,
        )
    wrong = [i for i in sealed if sealed_key_id(texts[i] or b"") != current.key_id]
    if wrong:
        raise Rejection(
            409,
            "renew_key",
            f"sealed with another key than team {team!r}'s current one (epoch "
            f"{current.epoch}, key {current.key_id}); sync again to take it",
            ids=wrong,
        )
