"""End-to-end encrypted teams (§12) when things go wrong: a key replaced while only a
removed member shares an epoch, a server that makes a plain team of an encrypted
create, the server unreachable, a member enrolling a key nothing can be sealed for.
(From a second hostile review; each docstring says what used to go wrong.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.core import Scope
from memdir.crypto.keys import subkeys
from memdir.crypto.team import MemberKey
from memdir.errors import InvalidInput, SyncFailed
from memdir.server.rules import Rejection
from memdir.sync.client import SyncClient
from memdir.sync.protocol import TeamKeysChange, WrapFor

from .conftest import World
from .test_team_e2e import run_cli, server_texts
from .test_team_e2e_edges import MEMBERS, PASSWORD, _keys_change, _remove, _rules, member


@pytest.fixture(autouse=True)
def _agents(runtime: Path) -> Path:
    return runtime


# -- fix 1: `team enrol --replace` is refused only while *your* wrap alone holds an epoch


def test_a_new_member_key_is_refused_when_only_removed_members_share_the_epoch(
    tmp_path: Path,
) -> None:
    """olga (owner) shared epoch 1 with eddy; eddy is removed; no writer has synced since
    (the epoch has ended, none started yet). olga's other machine, with a keyring of its
    own, enrols a new key: epoch 1 has two wraps (olga's, removed eddy's), so the guard
    `len(epoch.wraps) == 1` lets it through and drops olga's wrap. No current member
    holds epoch 1 any more: every note of it is lost for the team (only the removed
    member could still open it)."""
    rules = _rules(tmp_path)
    _keys_change(rules, "eddy", public_key=MEMBERS["eddy"].public)
    keys = rules.teams.show("olga", "acme").keys
    assert keys is not None
    epoch1 = MEMBERS["olga"].open(
        "acme", 1, keys.epochs[0].key_id, keys.epochs[0].wraps["olga"].box or ""
    )
    wrap = WrapFor(
        epoch=1,
        member="eddy",
        key=MEMBERS["eddy"].public,
        box=epoch1.wrap_for("acme", MEMBERS["eddy"].public),
    )
    _keys_change(rules, "olga", wraps=[wrap.model_dump()])
    _remove(rules, "olga", "eddy")

    other_home = MemberKey(subkeys(b"\x09" * 32))  # olga's second home, own keyring
    assert other_home.public not in {m.public for m in MEMBERS.values()}
    with pytest.raises(Rejection):
        _keys_change(rules, "olga", public_key=other_home.public)
    after = rules.teams.show("olga", "acme").keys
    assert after is not None
    members = rules.teams.show("olga", "acme").members
    holders = [m for m in after.epochs[0].wraps if m in members]
    assert holders, f"epoch 1 is held by no current member: {sorted(after.epochs[0].wraps)}"


# -- fix 2: an encrypted create that comes back plain is remembered as encrypted


def test_an_encrypted_create_answered_plain_still_sends_nothing_in_plain_text(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An older server ignores `keys` and makes a plain team. `create --encrypted` fails
    saying "Nothing is sent to the team from this machine" — but it raised before
    `mark_team_encrypted`, so linking the team and syncing uploads the notes in plain
    text to a team the user asked to be end-to-end encrypted."""
    team = "o" + world.user.removeprefix("alice")
    owner = world.machine("owner")
    owner.memory.crypto.encrypt(PASSWORD, [Scope.USER])  # project notes rest plain
    real = SyncClient.create_team

    def older_server(self: SyncClient, name: str, keys: TeamKeysChange | None = None):  # type: ignore[no-untyped-def]
        return real(self, name, None)  # what a server without encrypted teams does

    monkeypatch.setattr(SyncClient, "create_team", older_server)
    with pytest.raises(SyncFailed, match="Nothing is sent to the team from this machine"):
        owner.memory.sync.team_create(team, encrypted=True)
    monkeypatch.undo()

    owner.memory.sync.team_link(team)
    secret = owner.note("Vault", "The quokkaviolet vault opens with 4711.")
    run = owner.sync()
    texts = server_texts(world, team)
    leaked = b"quokkaviolet" in texts.get(secret, b"")
    assert not leaked, f"uploaded in plain text after the failed encrypted create ({run.paused})"


# -- fix 6: a team's pause is not an outage


@pytest.mark.own_server
@pytest.mark.parametrize("encrypted", [True, False], ids=["encrypted", "plain"])
def test_an_unreachable_server_is_exit_8_not_a_team_pause(world: World, encrypted: bool) -> None:
    """`memdir sync` documents exit 8 for "the server could not be reached". With the
    project linked to a team (encrypted or not), `_team_check` now catches every
    MemdirError, so the outage becomes `run.paused` and the CLI exits 4 ("paused")."""
    team = ("u" if encrypted else "v") + world.user.removeprefix("alice")
    owner = world.machine("owner")
    owner.memory.crypto.encrypt(PASSWORD, [Scope.USER])
    owner.memory.sync.team_create(team, encrypted=encrypted)
    owner.memory.sync.team_link(team)
    owner.note("Runbook", "Step one.")
    assert not owner.sync().paused
    world.server.stop()
    try:
        code, out = run_cli(owner, "sync", "--scope", "project")
    finally:
        world.server.start()
    assert code == 8, (code, out)


@pytest.mark.own_server
def test_the_background_sync_retries_a_team_after_an_outage(world: World) -> None:
    """The §7.2 coordinator (`Sync.background`, used by the MCP server) turns a scope in
    `run.paused` into SyncRefused, which stops that directory until someone calls
    `sync_now`. A network blip during a team's pass is such a pause now, so the team's
    notes stop syncing in the background for good instead of being retried."""
    team = "b" + world.user.removeprefix("alice")
    owner = world.machine("owner")
    owner.memory.crypto.encrypt(PASSWORD, [Scope.USER])
    owner.memory.sync.team_create(team, encrypted=True)
    owner.memory.sync.team_link(team)
    owner.note("Runbook", "Step one.")
    assert not owner.sync().paused
    coordinator = owner.memory.sync.background()
    key = next(k for k, s in owner.memory.sync.replica.keys().items() if s is Scope.PROJECT)
    world.server.stop()
    try:
        coordinator.sync_now(key)
        coordinator.tick()
        state = coordinator.status()[key]
    finally:
        world.server.start()
    assert state.state != "refused", state  # an outage is retried ("error"), not refused


# -- fix 6: a team's key error pauses that team only, whatever it is


def test_a_member_enrolling_a_low_order_key_does_not_crash_everyone_elses_sync(
    world: World,
) -> None:
    """The server accepts any 32 bytes as a member key. eddy enrols the all-zero X25519
    point; the owner's next sync wraps the team's key for him (`_plan` → `wrap_for`),
    libsodium refuses the low-order point and `nacl.exceptions.RuntimeError` (no
    MemdirError) escapes `Sync.run`: the owner's whole sync fails — their own notes
    included — and `memdir sync` ends in a traceback. Every key-holding member's does."""
    team = "z" + world.user.removeprefix("alice")
    owner = world.machine("owner")
    owner.memory.crypto.encrypt(PASSWORD, [Scope.USER])
    _, eddy, token = member(world, "eddy")
    owner.memory.sync.team_create(team, encrypted=True)
    owner.memory.sync.team_change(team, "add", eddy, "editor")
    owner.memory.sync.team_link(team)
    assert not owner.sync().paused
    with SyncClient(world.server.url, token) as client:
        keys = client.team(team).keys
        assert keys is not None
        with pytest.raises(InvalidInput, match="usable X25519"):
            client.change_team_keys(
                team, TeamKeysChange(expected=keys.version, public_key="A" * 43 + "=")
            )
    mine = owner.note("Personal", "The owner's own note.", scope="user")
    code, out = run_cli(owner, "sync")  # asserts: no exception other than SystemExit
    assert "Traceback" not in out, out
    assert world.manifest("user").notes.get(mine) is not None, (code, out)
