"""A team's project notes across members' machines, against a real server (§12).

Three accounts, each on a machine of their own with their own clone of the project:
the owner, an editor and a reader. The project is linked to the team on each machine;
notes then sync between all of them through the team's space on the server, the
reader's changes stay on the reader's machine, and a removed member gets nothing more.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memdir import Memory
from memdir.cli.main import main
from memdir.errors import Conflict, NotFound
from memdir.server.storage.directory import team_owner

from .conftest import Machine, World


def member(world: World, base: str) -> Machine:
    """A machine signed in as a new account of this test."""
    _, token = world.add_user(base)
    machine = world.machine(base, signed_in=False)
    machine.memory.sync.login(world.server.url, token)
    return machine


def cli(machine: Machine, *args: str) -> dict[str, object]:
    result = CliRunner().invoke(
        main,
        ["--project", str(machine.project), "--home", str(machine.home), *args, "--json"],
        env={"COLUMNS": "250", "MEMDIR_SYNC_TOKEN": None},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def project_ids(machine: Machine) -> set[str]:
    return set(machine.files("project"))


def test_a_team_shares_project_notes_by_role(world: World) -> None:
    team = "t" + world.user.removeprefix("alice")
    owner = world.machine("owner")
    editor, reader = member(world, "eddy"), member(world, "rita")
    eddy = world.user.replace("alice", "eddy")
    rita = world.user.replace("alice", "rita")

    # The owner's project notes synced as their own before there was a team.
    owner.note("Deploys go out on Tuesdays", "The release train leaves at 10:00.")
    world.sync(owner)
    personal = world.manifest(world.key("project"))
    assert len(personal.notes) == 1

    made = cli(owner, "team", "create", team)
    assert made["you"] == "owner"
    cli(owner, "team", "add", team, eddy, "--role", "editor")
    shown = cli(owner, "team", "add", team, rita, "--role", "reader")
    assert shown["members"] == {world.user: "owner", eddy: "editor", rita: "reader"}

    # Linking notes that synced elsewhere moves them only when asked to.
    with pytest.raises(Conflict, match="--move"):
        owner.memory.sync.team_link(team)
    owner.memory.sync.team_link(team, move=True)
    for machine in (editor, reader):
        machine.memory.sync.team_link(team)
    world.settle(owner, editor)
    assert project_ids(editor) == project_ids(owner)

    # The editor's edits reach everyone; the owner's own space is left as it was.
    (first,) = project_ids(owner)
    editor.edit(first, lambda body: body + "\nHotfixes go out any day.")
    editor.note("On-call rota", "Rita, then Eddy.")
    world.settle(editor, owner)
    reader.sync()
    assert owner.files("project") == editor.files("project") == reader.files("project")
    with world.server.storage() as storage:
        shared = storage.manifest(team_owner(team), world.key("project"))
    assert shared.notes.keys() == project_ids(owner)
    assert b"Hotfixes" in reader.files("project")[first]
    assert world.manifest(world.key("project")) == personal

    # The reader's change stays on the reader's machine, said so, and reaches no one.
    mine = reader.note("Reader's idea", "Ship on Fridays.")
    run = reader.sync()
    (report,) = [r for r in run.reports if r.scope == "project"]
    assert "reader" in report.held[mine]
    assert reader.has(mine) and not owner.has(mine)
    world.sync(owner)
    assert not owner.has(mine)

    # A removed member is refused from then on, and keeps what they had.
    kept = editor.files("project")
    cli(owner, "team", "remove", team, eddy)
    later = owner.note("Freeze", "No deploys in the last week of December.")
    world.sync(owner)
    run = editor.sync()
    assert "team" in run.paused["project"] and "member" in run.paused["project"]
    assert editor.files("project") == kept and not editor.has(later)
    with pytest.raises(NotFound, match="member"):
        editor.memory.sync.team(team)

    audit = cli(owner, "team", "show", team)
    actions = [(e["action"], e["member"]) for e in audit["history"]]  # type: ignore[union-attr, index]
    assert actions[-1] == ("remove", eddy)


def test_a_non_member_linking_a_project_is_paused_and_nothing_moves(world: World) -> None:
    team = "u" + world.user.removeprefix("alice")
    owner = world.machine("owner")
    owner.memory.sync.team_create(team)
    stranger = member(world, "nina")
    note = stranger.note("Mine alone")
    stranger.memory.sync.team_link(team)
    run = stranger.sync()
    assert "project" in run.paused
    assert stranger.has(note)
    owner.memory.sync.team_link(team)
    world.sync(owner)
    assert not owner.has(note)


def test_moving_notes_resets_them_for_another_process_of_the_machine(world: World) -> None:
    """A second process on the same home (an MCP server, the page) sees `--move` at its
    next pass: it never pushes the old state into the space the notes left."""
    team = "v" + world.user.removeprefix("alice")
    owner = world.machine("owner")
    other = Memory.open(owner.project, home=owner.home)
    try:
        kept = owner.note("Kept note", "one")
        dropped = owner.note("Dropped note", "two")
        world.sync(owner)
        other.sync.run()
        owner.memory.sync.team_create(team)
        editor = member(world, "eddy")
        owner.memory.sync.team_change(team, "add", world.user.replace("alice", "eddy"), "editor")
        owner.memory.sync.team_link(team, move=True)
        editor.memory.sync.team_link(team)
        world.settle(owner, editor)
        editor.delete(dropped)
        world.settle(editor, owner)
        assert not owner.has(dropped)
        owner.memory.sync.team_link(None, move=True)
        other.sync.run()  # its cached state was reset in place: a first sync, no deletion
        own = world.manifest(world.key("project"))
        assert {kept, dropped} <= own.notes.keys() and not own.tombstones
    finally:
        other.close()


def test_only_the_account_the_notes_synced_as_can_move_them(world: World) -> None:
    team = "w" + world.user.removeprefix("alice")
    machine = world.machine("shared")
    machine.note("Alice's private note")
    world.sync(machine)
    _, token = world.add_user("bob")
    machine.memory.sync.login(world.server.url, token)
    machine.memory.sync.team_create(team)
    with pytest.raises(Conflict, match="only that account"):
        machine.memory.sync.team_link(team, move=True)
    with world.server.storage() as storage:
        assert storage.manifest(team_owner(team), world.key("project")).notes == {}


def test_a_readers_edit_of_a_note_the_team_changed_is_held_not_hidden(world: World) -> None:
    team = "r" + world.user.removeprefix("alice")
    owner = world.machine("owner")
    reader = member(world, "rita")
    owner.memory.sync.team_create(team)
    owner.memory.sync.team_change(team, "add", world.user.replace("alice", "rita"), "reader")
    for machine in (owner, reader):
        machine.memory.sync.team_link(team)
    note = owner.note("Release notes", "line one\nline two\nline three")
    world.sync(owner, reader)
    reader.set_line(note, 0, "reader's tweak")
    owner.set_line(note, 2, "line three, changed by the owner")
    world.sync(owner)
    run = reader.sync()
    (report,) = [r for r in run.reports if r.scope == "project"]
    assert report.conflicts == [note]
    (held,) = reader.memory.sync.conflicts()
    assert "reader" in " ".join(held.reasons)
    reader.memory.sync.resolve(note, "server")
    reader.sync()
    assert reader.files("project")[note] == owner.files("project")[note]


def test_bad_input_is_a_clear_error(world: World) -> None:
    machine = world.machine("m")
    for args in (
        ("team", "add", "acme", "Bad Name", "--role", "reader"),
        ("team", "show", "../x"),
        ("team", "revoke", "acme", "Bad!"),
    ):
        result = CliRunner().invoke(
            main, ["--project", str(machine.project), "--home", str(machine.home), *args]
        )
        assert result.exit_code != 0 and "Traceback" not in result.output, result.output
        assert "not valid" in result.output or "not a team change" in result.output


def test_notes_with_changes_not_synced_yet_are_not_moved(world: World) -> None:
    """A pending edit or forgotten note would be lost to the space the notes leave."""
    team = "p" + world.user.removeprefix("alice")
    owner = world.machine("owner")
    note = owner.note("Draft", "first")
    gone = owner.note("Secret-ish", "to forget")
    world.sync(owner)
    owner.memory.sync.team_create(team)
    owner.edit(note, lambda body: body + "\nmore")
    with pytest.raises(Conflict, match="not synced yet"):
        owner.memory.sync.team_link(team, move=True)
    world.sync(owner)
    owner.memory.forget(gone, scope="project", purge=True)
    with pytest.raises(Conflict, match="not synced yet"):
        owner.memory.sync.team_link(team, move=True)
    world.sync(owner)
    owner.memory.sync.team_link(team, move=True)
    world.sync(owner)
    with world.server.storage() as storage:
        shared = storage.manifest(team_owner(team), world.key("project"))
    assert set(shared.notes) == {note}
