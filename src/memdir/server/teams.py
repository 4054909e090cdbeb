"""The sync server's teams (§12): create, show and change a team; who may read and write.

A team's policy is one document in the storage backend (`Storage.team`), replaced by
compare-and-swap on its version, so every replica of the server sees the same one.
The document is the team's history (`memdir.sync.teams`); members, roles and the
revocation set are what replaying it leaves, checked on every read, so a document that
was edited by hand out of line is refused rather than trusted.

A team's notes live in the backend under the owner `+<team>` (`team_owner`), beside
and apart from every account's. `access` is the check the sync endpoints make before
touching them: a member reads, an owner, admin or editor writes, a reader's write is
refused (403), and anyone else is told there is no such team of theirs (404, whether
or not it exists). Every membership change is logged (who, what, when; never content).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable

from pydantic import ValidationError

from memdir.server.rejection import Rejection
from memdir.server.storage.base import Storage
from memdir.server.storage.directory import team_owner
from memdir.server.teamkeys import apply_keys_change, check_stored, check_texts, served
from memdir.sync.protocol import Quotas, TeamChange, TeamDoc, TeamEvent, TeamKeys, TeamKeysChange
from memdir.sync.teams import WRITERS, PolicyRefused, TeamState, next_event, replay

__all__ = ["TeamRules"]

log = logging.getLogger(__name__)

_FORMAT = "memdir-team/1"
#: Compare-and-swap races a change re-checks before it reports `stale`.
_SWAP_ATTEMPTS = 8


def _refused(exc: PolicyRefused) -> Rejection:
    return Rejection(exc.status, exc.code, exc.message)


class TeamRules:
    """Teams over one storage backend; `known_user` says whether an account exists."""

    def __init__(
        self,
        storage: Storage,
        quotas: Quotas,
        *,
        known_user: Callable[[str], bool],
        check_user: Callable[[str], None],
        clock: Callable[[], int],
    ) -> None:
        self.storage = storage
        self.quotas = quotas
        self._known_user = known_user
        #: Raises for a caller the server refuses (an erased account), before any team work.
        self._check_user = check_user
        self._clock = clock
        self._cache_lock = threading.Lock()
        self._cache: dict[str, tuple[int, TeamState, TeamKeys | None]] = {}

    def _load(self, team: str) -> tuple[int, TeamState]:
        """The stored version and state (version 0 and an empty state when none)."""
        version, state, _ = self._read(team)
        return version, state

    def _read(self, team: str) -> tuple[int, TeamState, TeamKeys | None]:
        """The stored version, state and keys (an encrypted team's; None for a plain one)."""
        found = self.storage.team(team)
        if found is None:
            return 0, TeamState(team), None
        version, raw = found
        with self._cache_lock:
            cached = self._cache.get(team)
        if cached is not None and cached[0] == version:
            return cached
        try:
            doc = json.loads(raw)
            if not isinstance(doc, dict) or doc.get("team") != team:
                raise ValueError("it names another team")
            history = [TeamEvent.model_validate(e) for e in doc.get("history", [])]
            state = replay(team, history)
            keys = None if doc.get("keys") is None else TeamKeys.model_validate(doc["keys"])
            if keys is not None:
                check_stored(keys, state)
        except (ValueError, ValidationError) as exc:
            log.error("the policy of team %s is damaged: %s", team, exc)
            raise Rejection(
                500, "internal", f"the policy of team {team!r} is damaged; see the server log"
            ) from None
        with self._cache_lock:
            self._cache[team] = (version, state, keys)
        return version, state, keys

    def _doc(
        self, state: TeamState, user: str, keys: TeamKeys | None, *, history: bool = True
    ) -> TeamDoc:
        return TeamDoc(
            team=state.team,
            head=state.head,
            members=dict(sorted(state.members.items())),
            revoked=sorted(state.revoked),
            history=list(state.history) if history else [],
            you=state.role_of(user),
            quotas=self.quotas,
            keys=served(keys, state, user),
        )

    def _store(self, version: int, state: TeamState, keys: TeamKeys | None) -> bool:
        doc: dict[str, object] = {
            "format": _FORMAT,
            "team": state.team,
            "history": [e.model_dump(mode="json") for e in state.history],
        }
        if keys is not None:
            doc["keys"] = keys.model_dump(mode="json", exclude={"renew"})
        data = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("utf-8")
        return self.storage.swap_team(state.team, version, data)

    def _append(
        self,
        user: str,
        team: str,
        action: str,
        member: str,
        role: str | None,
        parent: str | None,
        create_keys: TeamKeysChange | None = None,
    ) -> TeamDoc:
        """Check the change against the stored policy, append it, and swap the document in
        (a create with `create_keys`: an end-to-end encrypted team)."""
        self._check_user(user)
        for _ in range(_SWAP_ATTEMPTS):
            version, state, keys = self._read(team)
            if action != "create" and not state.history:
                raise Rejection(404, "not_found", f"no team {team!r} you are a member of")
            if parent is not None and parent != state.head and user in state.members:
                raise Rejection(
                    409,
                    "stale",
                    "the team changed since you read it (or this change was sent before); "
                    "read it again and decide again",
                    version=len(state.history),
                )
            try:
                event, after = next_event(state, user, action, member, role, self._clock())
            except PolicyRefused as exc:
                raise _refused(exc) from None
            if action == "add" and (not self._known_user(member) or self.storage.is_erased(member)):
                raise Rejection(404, "not_found", f"no account {member!r} on this server")
            if create_keys is not None:
                keys = apply_keys_change(None, after, user, create_keys, event.at, creating=True)
            if self._store(version, after, keys):
                log.info(
                    "team %s: %s %s %s%s (entry %d)",
                    team,
                    user,
                    action,
                    member,
                    f" as {event.role}" if event.role else "",
                    event.seq,
                )
                if user in after.members:
                    return self._doc(after, user, keys)
                return self._left(after)
            if action == "create":
                raise Rejection(409, "conflict", f"team {team!r} exists")
        raise Rejection(409, "stale", "the team kept changing under the change; try again")

    def _left(self, state: TeamState) -> TeamDoc:
        """What one who just left (or removed themself) is shown: no members, no history."""
        return TeamDoc(
            team=state.team,
            head=state.head,
            members={},
            history=[],
            you=None,
            quotas=self.quotas,
        )

    # -- requests ------------------------------------------------------------------------

    def create(self, user: str, team: str, keys: TeamKeysChange | None = None) -> TeamDoc:
        """Create `team` with `user` as its owner (end-to-end encrypted with `keys`: the
        owner's public key and epoch 1); 409 `conflict` when the name is taken."""
        team_owner(team)  # validates the name as the backend will
        return self._append(user, team, "create", user, "owner", None, keys)

    def show(self, user: str, team: str, *, history: bool = True) -> TeamDoc:
        """The team's members, revocations and (with `history`) history, for a member only."""
        self._check_user(user)
        _, state, keys = self._read(team)
        try:
            return self._doc(state, user, keys, history=history)
        except PolicyRefused as exc:
            raise _refused(exc) from None

    def change_keys(self, user: str, team: str, change: TeamKeysChange) -> TeamDoc:
        """Apply one change of an encrypted team's keys (`memdir.server.teamkeys`)."""
        self._check_user(user)
        for _ in range(_SWAP_ATTEMPTS):
            version, state, keys = self._read(team)
            if user not in state.members:
                raise Rejection(404, "not_found", f"no team {team!r} you are a member of")
            after = apply_keys_change(keys, state, user, change, self._clock())
            if self._store(version, state, after):
                return self._doc(state, user, after, history=False)
            # the document moved (a membership change): check again against it
        raise Rejection(409, "stale", "the team kept changing under the change; try again")

    def check_texts(self, team: str, texts: dict[str, bytes | None]) -> None:
        """Refuse texts the team's encryption does not allow (`teamkeys.check_texts`)."""
        _, state, keys = self._read(team)
        check_texts(keys, state, texts)

    def change(self, user: str, team: str, change: TeamChange) -> TeamDoc:
        """Apply one membership change made against `change.parent`."""
        return self._append(user, team, change.action, change.member, change.role, change.parent)

    def audit(self, team: str) -> TeamState:
        """The team as its history leaves it, for the server's operator (404 when none)."""
        _, state = self._load(team)
        if not state.history:
            raise Rejection(404, "not_found", f"no team {team!r} on this server")
        return state

    def access(self, user: str, team: str, *, write: bool) -> str:
        """The storage owner of the team's notes if `user` may read them (and write, with
        `write`); Rejection 404 for a non-member, 403 for a reader's write. The caller
        was checked (`SyncRules._check_user`) by the request that asks."""
        _, state = self._load(team)
        try:
            role = state.role_of(user)
        except PolicyRefused as exc:
            raise _refused(exc) from None
        if write and role not in WRITERS:
            raise Rejection(
                403,
                "forbidden",
                f"you are a reader of team {team!r}: readers cannot write its notes",
            )
        return team_owner(team)
