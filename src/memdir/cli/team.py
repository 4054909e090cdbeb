"""CLI commands for teams (§12): create one, see it, change its members, share a project."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import click

from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, fmt_ms
from memdir.core.vocab import TeamRole, choices
from memdir.errors import InvalidInput

if TYPE_CHECKING:
    from memdir import Memory
    from memdir.sync.protocol import TeamDoc, TeamEvent

__all__ = ["print_team", "team_group"]


def _memory() -> Memory:
    memory: Memory = click.get_current_context().obj.memory()
    return memory


def _emit(doc: TeamDoc, as_json: bool, said: str, *, history: bool = False) -> None:
    if as_json:
        emit_json(doc.model_dump(mode="json", exclude={"quotas"}))
        return
    if said:
        console.print(said, markup=False)
    if doc.members:
        title = f"team {doc.team} (you: {doc.you})"
        print_team(title, doc.members, doc.revoked, doc.history if history else ())
        _print_keys(doc)


def _print_keys(doc: TeamDoc) -> None:
    """An encrypted team's key state: its epoch, and each member's key fingerprint (to
    compare with them over another channel) and whether they hold the current key."""
    from memdir.sync.teamkeys import key_status

    status = key_status(doc)
    if status is None:
        return
    pending = "; a member left: the next writer's sync starts a new one" if status.renew else ""
    console.print(f"end-to-end encrypted: key epoch {status.epoch}{pending}", markup=False)
    for member, (fingerprint, held) in sorted(status.members.items()):
        if fingerprint is None:
            state = "no member key yet (enrolled at their next sync)"
        else:
            state = f"key {fingerprint}" + ("" if held else ", waiting for the current key")
        console.print(f"  {member:<24} {state}", markup=False)


def print_team(
    title: str,
    members: Mapping[str, str],
    revoked: Iterable[str],
    history: Iterable[TeamEvent],
) -> None:
    """A team for people: its members and roles, revocations, and history if given."""
    console.print(title, markup=False)
    for member, role in sorted(members.items()):
        console.print(f"  {member:<24} {role}", markup=False)
    gone = sorted(revoked)
    if gone:
        console.print("  revoked: " + ", ".join(gone), markup=False)
    for n, event in enumerate(history):
        if n == 0:
            console.print("history:", markup=False)
        given = f" as {event.role}" if event.role else ""
        line = f"  {event.seq:>4}  {fmt_ms(event.at)}  {event.actor} {event.action} "
        console.print(line + f"{event.member}{given}", markup=False)


@click.group(name="team")
def team_group() -> None:
    """Memory a team shares: members with roles, projects synced as the team's.

    A team lives on your sync server; its members have the roles owner, admin, editor
    and reader, and a project linked to it syncs its notes as the team's.

    Only the owner and admins add and remove members; an admin never makes or changes
    the owner; only the owner transfers ownership or revokes a member for good. Readers
    read the team's notes and the server refuses their writes.
    """


@team_group.command()
@click.argument("name")
@click.option(
    "--encrypted",
    is_flag=True,
    help="End-to-end encrypt the team's notes (needs this home's keyring: `memdir encrypt`).",
)
@json_option
def create(name: str, encrypted: bool, as_json: bool) -> None:
    """Create team NAME on the sync server; you become its owner.

    With --encrypted the server only ever holds the team's notes sealed: the team's key
    is wrapped for each member's own key, and a new key starts whenever a member leaves.
    """
    doc = _memory().sync.team_create(name, encrypted=encrypted)
    said = f"created {'end-to-end encrypted ' if encrypted else ''}team {name}; you are its owner"
    _emit(doc, as_json, said)


@team_group.command()
@click.argument("name")
@click.option(
    "--replace",
    is_flag=True,
    help="Replace the member key the team lists for your account (needed: say so).",
)
@json_option
def enrol(name: str, replace: bool, as_json: bool) -> None:
    """Make this home's member key yours in end-to-end encrypted team NAME.

    Needed only when this home has a keyring of its own instead of the account's (a
    sync pauses and says so). The team's keys wrapped for your old key are dropped;
    the next sync of another member who holds them wraps them for the new one. The
    server refuses while your old key alone holds some key epoch.
    """
    memory = _memory()
    if not replace:
        raise InvalidInput(
            f"this replaces the member key team {name} lists for your account: add --replace"
        )
    doc = memory.sync.team_enrol(name)
    _emit(doc, as_json, f"this home's member key is yours in team {name} now")


@team_group.command()
@click.argument("name")
@click.option("--history", is_flag=True, help="Also print every membership change (the audit).")
@json_option
def show(name: str, history: bool, as_json: bool) -> None:
    """Show team NAME: members, roles, revocations (and its history)."""
    _emit(_memory().sync.team(name), as_json, "", history=history)


def _change(
    name: str, action: str, member: str, role: str | None, as_json: bool, said: str
) -> None:
    _emit(_memory().sync.team_change(name, action, member, role), as_json, said)


@team_group.command()
@click.argument("name")
@click.argument("member")
@click.option(
    "--role",
    type=click.Choice(choices(TeamRole)),
    default=TeamRole.EDITOR.value,
    show_default=True,
    help="The new member's role (a team gets a new owner only by `transfer`).",
)
@json_option
def add(name: str, member: str, role: str, as_json: bool) -> None:
    """Add account MEMBER to team NAME (owner and admins only)."""
    _change(name, "add", member, role, as_json, f"added {member} to {name} as {role}")


@team_group.command()
@click.argument("name")
@click.argument("member")
@json_option
def remove(name: str, member: str, as_json: bool) -> None:
    """Remove MEMBER from team NAME (owner and admins; anyone may remove themself).

    What they synced before stays on their machines; they get nothing written after."""
    _change(name, "remove", member, None, as_json, f"removed {member} from {name}")


@team_group.command()
@click.argument("name")
@click.argument("member")
@click.argument("role", type=click.Choice(choices(TeamRole)))
@json_option
def role(name: str, member: str, role: str, as_json: bool) -> None:
    """Give MEMBER of team NAME another ROLE (owner and admins only)."""
    _change(name, "set_role", member, role, as_json, f"{member} is now {role} of {name}")


@team_group.command()
@click.argument("name")
@click.argument("member")
@json_option
def transfer(name: str, member: str, as_json: bool) -> None:
    """Make MEMBER the owner of team NAME; you become an admin (owner only)."""
    _change(name, "transfer", member, None, as_json, f"{member} now owns {name}")


@team_group.command()
@click.argument("name")
@click.argument("member")
@json_option
def revoke(name: str, member: str, as_json: bool) -> None:
    """Remove MEMBER from team NAME for good: never a member again (owner only)."""
    _change(name, "revoke", member, None, as_json, f"revoked {member} from {name} for good")


def _print_link(status: Any, said: str, as_json: bool) -> None:
    if as_json:
        emit_json(status)
    else:
        console.print(said, markup=False)


@team_group.command()
@click.argument("name")
@click.option(
    "--move",
    is_flag=True,
    help="These notes synced elsewhere before: sync them the new way (a first sync merges).",
)
@json_option
def link(name: str, move: bool, as_json: bool) -> None:
    """Share this project's notes with team NAME: the next `memdir sync` merges them with
    the team's, and every member's machine syncs the same notes."""
    status = _memory().sync.team_link(name, move=move)
    _print_link(status, f"this project's notes now sync as team {name}'s", as_json)


@team_group.command()
@click.option("--move", is_flag=True, help="They synced as the team's: sync them as your own.")
@json_option
def unlink(move: bool, as_json: bool) -> None:
    """Stop sharing this project's notes with its team (the notes stay here)."""
    status = _memory().sync.team_link(None, move=move)
    _print_link(status, "this project's notes now sync as your own", as_json)
