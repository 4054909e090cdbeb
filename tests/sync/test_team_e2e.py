"""End-to-end encrypted team notes (§12) across members' machines, against a real server.

Three accounts, each on a machine of their own with an encrypted memdir home (the member
key comes from its keyring): the owner creates the team encrypted, adds an editor and a
reader, and every machine links the project. The server stores only sealed texts; a
member's machine enrols its key at its first sync and gets the team's key at the next
sync of a member who has it; removing a member starts a new key epoch, so what is
written after is sealed under a key the removed member never had.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli.main import main
from memdir.core import Scope
from memdir.crypto.seal import is_sealed
from memdir.crypto.team import MemberKey, new_epoch_key
from memdir.errors import Locked, NotFound
from memdir.server.storage.directory import team_owner
from memdir.sync.client import SyncClient
from memdir.sync.protocol import TeamKeys, TeamKeysChange, WrapFor, is_sealed_text, sealed_key_id

from .conftest import Machine, World

PASSWORD = b"correct horse battery staple"
SECRET_WORD = "quokkaviolet"


@pytest.fixture(autouse=True)
def _agents(runtime: Path) -> Path:
    """Every test here: a short private XDG_RUNTIME_DIR for the unlock agents."""
    return runtime


def member(world: World, base: str, scopes: list[Scope] | None) -> tuple[Machine, str]:
    """A machine signed in as a new account of this test, with its `scopes` (None: all)
    encrypted; its account name."""
    _, token = world.add_user(base)
    machine = world.machine(base, signed_in=False)
    machine.memory.sync.login(world.server.url, token)
    machine.memory.crypto.encrypt(PASSWORD, scopes)
    return machine, world.user.replace("alice", base)


def server_texts(world: World, team: str) -> dict[str, bytes]:
    """Every live text of the team's project space on the server, by note id."""
    with world.server.storage() as storage:
        manifest = storage.manifest(team_owner(team), world.key("project"))
        wanted = {e.rev: i for i, e in manifest.notes.items()}
        objects = storage.objects(team_owner(team), world.key("project"), wanted)
    return {wanted[rev]: data for rev, data in objects.items()}


def test_an_encrypted_team_shares_sealed_notes_and_a_removal_starts_a_new_key(
    world: World,
) -> None:
    team = "e" + world.user.removeprefix("alice")
    owner = world.machine("owner")
    owner.memory.crypto.encrypt(PASSWORD, [Scope.USER])
    # The editor's project notes rest in plain text on its disk, the reader's sealed.
    editor, eddy = member(world, "eddy", [Scope.USER])
    reader, rita = member(world, "rita", None)

    made = owner.memory.sync.team_create(team, encrypted=True)
    assert made.keys is not None and [e.epoch for e in made.keys.epochs] == [1]
    owner.memory.sync.team_change(team, "add", eddy, "editor")
    owner.memory.sync.team_change(team, "add", rita, "reader")
    for machine in (owner, editor, reader):
        machine.memory.sync.team_link(team)

    first = owner.note("Deploy keys", f"Rotate the {SECRET_WORD} key monthly.")
    run = owner.sync()
    assert not run.paused, run.paused

    # A member's first sync enrols their key; no one has shared the team's key yet.
    for machine in (editor, reader):
        run = machine.sync()
        assert "project" in run.locked and "shared" in run.paused["project"]
        assert not machine.has(first)
    # The owner's next sync wraps the key for both; then they read the note.
    owner.sync()
    for machine in (editor, reader):
        run = machine.sync()
        assert not run.paused, run.paused
        assert SECRET_WORD in machine.read(first).body
    assert is_sealed(reader.files("project")[first])
    assert SECRET_WORD.encode() in editor.files("project")[first]

    # What the server holds is sealed, under epoch 1's key, and holds no word of a note.
    texts = server_texts(world, team)
    epoch1 = owner.memory.sync.team(team).keys.epochs[0].key_id  # type: ignore[union-attr]
    assert texts and all(
        is_sealed_text(t) and SECRET_WORD.encode() not in t for t in texts.values()
    )
    assert {sealed_key_id(t) for t in texts.values()} == {epoch1}

    # The editor's writes reach everyone; the reader's stay on the reader's machine.
    second = editor.note("On-call", "Rita, then Eddy.")
    editor.sync()
    owner.sync()
    reader.sync()
    assert owner.has(second) and reader.has(second)
    mine = reader.note("Reader's idea", "Ship on Fridays.")
    run = reader.sync()
    (report,) = [r for r in run.reports if r.scope == "project"]
    assert "reader" in report.held[mine]

    # Removing eddy starts epoch 2 at the owner's next sync; what is written after is
    # sealed under it, wrapped for the owner and rita only.
    owner.memory.sync.team_change(team, "remove", eddy)
    assert owner.memory.sync.team(team).keys.renew  # type: ignore[union-attr]
    later = owner.note("Freeze", f"No deploys in December; the {SECRET_WORD} vault is shut.")
    run = owner.sync()
    assert not run.paused, run.paused
    keys = owner.memory.sync.team(team).keys
    assert keys is not None and not keys.renew
    assert [e.epoch for e in keys.epochs] == [1, 2]
    assert set(keys.epochs[1].wraps) == {world.user, rita}
    assert eddy in keys.epochs[0].wraps  # what eddy had, eddy keeps
    assert sealed_key_id(server_texts(world, team)[later]) == keys.epochs[1].key_id

    reader.sync()
    assert SECRET_WORD in reader.read(later).body
    run = editor.sync()
    assert "member" in run.paused["project"] and not editor.has(later)
    assert editor.has(first) and editor.has(second)  # kept, as documented

    # Even holding the server's text of the later note and every wrap the server keeps
    # for him, eddy's key opens nothing of it.
    eddy_key = MemberKey(editor.memory.stores.sealer.keys())  # type: ignore[union-attr]
    with world.server.storage() as storage:
        found = storage.team(team)
    assert found is not None
    stored = TeamKeys.model_validate(json.loads(found[1])["keys"])
    held = [(e, e.wraps[eddy].box) for e in stored.epochs if eddy in e.wraps]
    opened = {eddy_key.open(team, e.epoch, e.key_id, box or "").key_id for e, box in held}
    assert opened == {epoch1}
    assert sealed_key_id(server_texts(world, team)[later]) not in opened


def test_a_locked_member_syncs_nothing_of_the_team_and_says_so(world: World) -> None:
    team = "l" + world.user.removeprefix("alice")
    owner = world.machine("owner")
    owner.memory.crypto.encrypt(PASSWORD, [Scope.USER])
    owner.memory.sync.team_create(team, encrypted=True)
    owner.memory.sync.team_link(team)
    note = owner.note("Runbook", "Page the on-call first.")
    owner.sync()
    assert owner.memory.crypto.lock() is True
    changed = owner.edit(note, lambda body: body + "\nThen the lead.")
    del changed
    run = owner.sync()
    assert "project" in run.locked
    assert server_texts(world, team)[note]  # the earlier text, untouched
    owner.memory.crypto.unlock(PASSWORD)
    run = owner.sync()
    assert not run.paused, run.paused


def test_without_a_keyring_no_encrypted_team_is_made(world: World) -> None:
    team = "k" + world.user.removeprefix("alice")
    plain = world.machine("plain")
    with pytest.raises(Locked, match="keyring"):
        plain.memory.sync.team_create(team, encrypted=True)
    with pytest.raises(NotFound, match="member"):
        plain.memory.sync.team(team)


def run_cli(machine: Machine, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        main,
        ["--project", str(machine.project), "--home", str(machine.home), *args],
        env={"COLUMNS": "250", "MEMDIR_SYNC_TOKEN": None},
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_the_cli_makes_and_shows_an_encrypted_team(world: World) -> None:
    team = "c" + world.user.removeprefix("alice")
    plain = world.machine("plain")
    code, out = run_cli(plain, "team", "create", team, "--encrypted")
    assert code != 0 and "keyring" in out and "Traceback" not in out
    plain.memory.crypto.encrypt(PASSWORD, [Scope.USER])
    code, out = run_cli(plain, "team", "create", team, "--encrypted", "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert [e["epoch"] for e in doc["keys"]["epochs"]] == [1]
    code, out = run_cli(plain, "team", "show", team)
    assert code == 0 and "end-to-end encrypted: key epoch 1" in out, out
    assert re.search(rf"{world.user}\s+key ([0-9a-f]{{4}} ){{7}}[0-9a-f]{{4}}", out), out


def test_a_wrap_made_wrong_is_dropped_and_wrapped_again(world: World) -> None:
    """A member who wraps garbage for another (here: a key of no epoch) delays them by a
    sync, no more: their machine drops the wrap that does not open, the next sync of a
    member who holds the key wraps it again."""
    team = "w" + world.user.removeprefix("alice")
    owner = world.machine("owner")
    owner.memory.crypto.encrypt(PASSWORD, [Scope.USER])
    owner.memory.sync.team_create(team, encrypted=True)
    editor, eddy = member(world, "eddy", [Scope.USER])
    reader, rita = member(world, "rita", [Scope.USER])
    owner.memory.sync.team_change(team, "add", eddy, "editor")
    owner.memory.sync.team_change(team, "add", rita, "reader")
    for machine in (owner, editor, reader):
        machine.memory.sync.team_link(team)
    first = owner.note("Runbook", "Page the on-call first.")
    reader.sync()  # rita enrols
    keys = owner.memory.sync.team(team).keys
    assert keys is not None
    public = keys.public[rita]
    garbage = new_epoch_key(1).wrap_for(team, public)
    with SyncClient(world.server.url, world.server.tokens[eddy]) as client:
        change = TeamKeysChange(
            expected=keys.version,
            wraps=[WrapFor(epoch=1, member=rita, key=public, box=garbage)],
        )
        client.change_team_keys(team, change)

    run = reader.sync()  # does not open: dropped, and rita waits
    assert "project" in run.locked and not reader.has(first)
    keys = owner.memory.sync.team(team).keys
    assert keys is not None and rita not in keys.epochs[0].wraps
    owner.sync()  # wraps it again
    run = reader.sync()
    assert not run.paused, run.paused
    assert reader.read(first).summary == "Runbook"
