"""Team policy (§12): the vault rules as a table, their invariants over random histories,
and a history that was tampered with."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.sync.protocol import TeamEvent
from memdir.sync.teams import GENESIS, PolicyRefused, TeamState, event_hash, next_event, replay

USERS = ("olga", "adam", "eddy", "rita", "nina")


def team_of(members: dict[str, str], revoked: frozenset[str] = frozenset()) -> TeamState:
    """A team with these members (built through its own history)."""
    owner = next(m for m, r in members.items() if r == "owner")
    _, state = next_event(TeamState("acme"), owner, "create", owner, "owner", 1)
    for member, role in members.items():
        if member != owner:
            _, state = next_event(state, owner, "add", member, role, 2)
    for member in revoked:
        _, state = next_event(state, owner, "revoke", member, None, 3)
    return state


BASE = {"olga": "owner", "adam": "admin", "eddy": "editor", "rita": "reader"}

# (actor, action, member, role) -> the status refusing it, or None when allowed.
ROLE_TABLE = [
    # adding: owner and admin only, never as owner, never a revoked account
    ("olga", "add", "nina", "admin", None),
    ("adam", "add", "nina", "admin", None),
    ("adam", "add", "nina", "reader", None),
    ("eddy", "add", "nina", "reader", 403),
    ("rita", "add", "nina", "reader", 403),
    ("olga", "add", "nina", "owner", 403),
    ("adam", "add", "nina", "owner", 403),
    ("olga", "add", "eddy", "reader", 409),
    ("nina", "add", "nina", "editor", 404),
    # removing: owner and admin; anyone but the owner leaves; the owner is never removed
    ("olga", "remove", "eddy", None, None),
    ("adam", "remove", "eddy", None, None),
    ("adam", "remove", "adam", None, None),
    ("rita", "remove", "rita", None, None),
    ("eddy", "remove", "rita", None, 403),
    ("rita", "remove", "eddy", None, 403),
    ("adam", "remove", "olga", None, 403),
    ("olga", "remove", "olga", None, 403),
    ("olga", "remove", "nina", None, 404),
    # roles: admin changes admin/editor/reader, never to or from owner
    ("olga", "set_role", "rita", "editor", None),
    ("adam", "set_role", "rita", "admin", None),
    ("adam", "set_role", "adam", "reader", None),
    ("adam", "set_role", "olga", "admin", 403),
    ("adam", "set_role", "eddy", "owner", 403),
    ("olga", "set_role", "eddy", "owner", 403),
    ("eddy", "set_role", "rita", "editor", 403),
    ("olga", "set_role", "eddy", "editor", 409),
    # transfer: the owner only, to a member
    ("olga", "transfer", "rita", None, None),
    ("adam", "transfer", "eddy", None, 403),
    ("olga", "transfer", "nina", None, 404),
    ("olga", "transfer", "olga", None, 409),
    # revocation: the owner only, and only ever growing
    ("olga", "revoke", "eddy", None, None),
    ("olga", "revoke", "nina", None, 404),
    ("adam", "revoke", "eddy", None, 403),
    ("olga", "revoke", "olga", None, 403),
]


@pytest.mark.parametrize(("actor", "action", "member", "role", "refused"), ROLE_TABLE)
def test_the_vault_rules(
    actor: str, action: str, member: str, role: str | None, refused: int | None
) -> None:
    state = team_of(BASE)
    if refused is None:
        event, after = next_event(state, actor, action, member, role, 10)
        assert event.actor == actor and event.seq == len(state.history) + 1
        assert list(after.members.values()).count("owner") == 1
    else:
        with pytest.raises(PolicyRefused) as refusal:
            next_event(state, actor, action, member, role, 10)
        assert refusal.value.status == refused
        assert refusal.value.message


def test_a_transfer_keeps_exactly_one_owner_and_the_old_owner_stays_as_admin() -> None:
    _, after = next_event(team_of(BASE), "olga", "transfer", "rita", None, 10)
    assert after.owner == "rita" and after.members["olga"] == "admin"
    with pytest.raises(PolicyRefused):  # the old owner has no owner's powers left
        next_event(after, "olga", "revoke", "eddy", None, 11)


def test_a_revoked_account_is_never_a_member_again() -> None:
    _, after = next_event(team_of(BASE), "olga", "revoke", "eddy", None, 10)
    assert "eddy" not in after.members and "eddy" in after.revoked
    for actor in ("olga", "adam"):
        with pytest.raises(PolicyRefused) as refusal:
            next_event(after, actor, "add", "eddy", "reader", 11)
        assert refusal.value.status == 403 and "revoked" in refusal.value.message


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[str, str, str, str | None]]:
    actions = st.sampled_from(["add", "remove", "set_role", "transfer", "revoke"])
    roles = st.sampled_from(["owner", "admin", "editor", "reader", None])
    steps = st.tuples(st.sampled_from(USERS), actions, st.sampled_from(USERS), roles)
    return draw(st.lists(steps, max_size=60))


@settings(max_examples=300, deadline=None)
@given(histories())
def test_any_history_keeps_the_invariants(steps: list[tuple[str, str, str, str | None]]) -> None:
    """Whatever is tried, allowed or not: one owner, revoked and members apart, the
    revocation set only grows, and the history replays to the same state."""
    _, state = next_event(TeamState("acme"), "olga", "create", "olga", "owner", 0)
    for at, (actor, action, member, role) in enumerate(steps, start=1):
        before = state
        try:
            _, state = next_event(state, actor, action, member, role, at)
        except PolicyRefused:
            continue
        assert list(state.members.values()).count("owner") == 1
        assert not (state.revoked & state.members.keys())
        assert before.revoked <= state.revoked
        if state.revoked != before.revoked:
            assert before.members.get(actor) == "owner"
        if state.owner != before.owner:
            assert action == "transfer" and before.members[actor] == "owner"
    again = replay("acme", state.history)
    assert again == state


def _forged(event: TeamEvent, **changes: object) -> TeamEvent:
    return event.model_copy(update=changes)


def test_a_tampered_history_is_refused_at_the_entry_that_is_out_of_line() -> None:
    state = team_of(BASE)
    history = list(state.history)
    assert replay("acme", history) == state
    # a role changed in place: the hash no longer matches
    promoted = [*history[:-1], _forged(history[-1], role="admin")]
    with pytest.raises(ValueError, match="does not match its hash"):
        replay("acme", promoted)
    # the same change re-hashed: the chain still holds, but a reader may not make it
    fields = {"seq": 5, "at": 9, "actor": "rita", "action": "set_role", "member": "rita"}
    fields |= {"role": "admin", "prev": history[-1].hash}
    digest = event_hash(team="acme", **fields)  # type: ignore[arg-type]
    forged = TeamEvent.model_validate({**fields, "hash": digest})
    with pytest.raises(ValueError, match="not allowed"):
        replay("acme", [*history, forged])
    # an entry dropped from the middle, or the first one replayed at the end
    with pytest.raises(ValueError, match="does not follow"):
        replay("acme", [history[0], *history[2:]])
    with pytest.raises(ValueError, match="does not follow"):
        replay("acme", [*history, history[0]])
    assert history[0].prev == GENESIS


def test_a_history_copied_to_another_team_does_not_replay_there() -> None:
    history = team_of(BASE).history
    with pytest.raises(ValueError, match="does not match its hash"):
        replay("beta", history)


def test_a_former_member_can_be_revoked_and_one_never_added_cannot() -> None:
    _, state = next_event(team_of(BASE), "olga", "remove", "eddy", None, 10)
    _, state = next_event(state, "olga", "revoke", "eddy", None, 11)
    assert "eddy" in state.revoked
    with pytest.raises(PolicyRefused) as refusal:
        next_event(state, "olga", "revoke", "nobody", None, 12)
    assert refusal.value.status == 404


def test_a_full_history_still_lets_the_owner_remove_and_revoke(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rogue admin filling the history does not lock themself in."""
    import memdir.sync.teams as teams

    state = team_of({"olga": "owner", "mal": "admin"})
    monkeypatch.setattr(teams, "MAX_HISTORY", len(state.history) + 4)
    for at in range(2):
        _, state = next_event(state, "mal", "add", "nina", "reader", at)
        _, state = next_event(state, "mal", "remove", "nina", None, at)
    with pytest.raises(PolicyRefused) as full:
        next_event(state, "mal", "add", "nina", "reader", 5)
    assert full.value.status == 413
    _, state = next_event(state, "olga", "remove", "mal", None, 6)
    _, state = next_event(state, "olga", "revoke", "mal", None, 7)
    assert state.members == {"olga": "owner"} and "mal" in state.revoked
