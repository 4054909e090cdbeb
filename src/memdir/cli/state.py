"""`memdir state`: the agent state store's tasks, goals, sessions, audit, meta and backups."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memdir.cli.errors import ErrorWithDetails, Outcome, confirmation_needed
from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, fmt_ms, print_columns
from memdir.core.vocab import ItemStatus, choices
from memdir.errors import EXIT_ERROR, IntegrityError, InvalidInput, MemdirError

if TYPE_CHECKING:
    from memdir import State
    from memdir.state import BackupInfo, Goal, Task

__all__ = ["state"]


class _Opened:
    """The group's options; the store opens on first use so `--help` touches no disk."""

    def __init__(self, path: Path | None, actor: str) -> None:
        self.path = path
        self.actor = actor
        self.store: State | None = None

    def open(self) -> State:
        if self.store is None:
            from memdir import State

            home = click.get_current_context().find_root().obj.home
            self.store = State.open(self.path, home=home, actor=self.actor)
            click.get_current_context().find_root().call_on_close(self.store.close)
        return self.store


def _state() -> State:
    opened: _Opened = click.get_current_context().find_object(_Opened)  # type: ignore[assignment]
    return opened.open()


def _fields(pairs: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidInput(f"a field is KEY=VALUE, not {pair!r}")
        out[key.strip()] = value
    return out


@click.group()
@click.option(
    "--file",
    "path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The SQLite file (default: $MEMDIR_HOME/state/state.sqlite3).",
)
@click.option("--actor", default="cli", show_default=True, help="The name the audit table records.")
@click.pass_context
def state(ctx: click.Context, path: Path | None, actor: str) -> None:
    """The agent state store: tasks, goals, sessions, audit, meta and verified backups.

    Structured application state for an agent, kept apart from notes. Every write is
    refused when a key name or value looks like a credential (the message names the key
    or the kind, never the value) and appends an entry to the audit table.
    """
    ctx.obj = _Opened(path, actor)


def _item_lines(items: Sequence[Task | Goal]) -> None:
    if not items:
        console.print("none")
        return
    rows = [(i.id, i.status.value, str(i.priority), i.title) for i in items]
    print_columns(("id", "status", "priority", "title"), rows, flexible=(3,))


def _item_detail(item: Task | Goal) -> None:
    console.print(f"{item.id}  {item.title}", markup=False)
    console.print(f"  status    {item.status.value}", markup=False)
    console.print(f"  priority  {item.priority}", markup=False)
    goal = getattr(item, "goal_id", None)
    if goal:
        console.print(f"  goal      {goal}", markup=False)
    console.print(f"  created   {fmt_ms(item.created_at)}", markup=False)
    console.print(f"  updated   {fmt_ms(item.updated_at)}", markup=False)
    if item.closed_at is not None:
        console.print(f"  closed    {fmt_ms(item.closed_at)}", markup=False)
    for key, value in sorted(item.fields.items()):
        console.print(f"  {key} = {value}", markup=False)
    if item.notes:
        console.print(item.notes, markup=False)


def _show(value: Any, as_json: bool, text: Callable[[], None]) -> None:
    if as_json:
        emit_json(value)
    else:
        text()


_field_option = click.option(
    "--field", "fields", multiple=True, metavar="KEY=VALUE", help="A named field (repeatable)."
)
# Checked by the store (InvalidInput, exit 2), not a click.Choice; the help lists the
# statuses of memdir.core.vocab.ItemStatus.
_status_option = click.option(
    "--status", default=None, metavar="STATUS", help=f"One of: {', '.join(choices(ItemStatus))}."
)


def _item_group(kind: str) -> click.Group:
    """`task` or `goal`: add, update, list, show, close (the same shape for both)."""
    tasks = kind == "task"
    plural = f"{kind}s"

    @click.group(name=kind, help=f"The agent's {plural}: add, update, list, show, close.")
    def group() -> None:
        pass

    def api(verb: str) -> Callable[..., Any]:
        method: Callable[..., Any] = getattr(_state(), f"{verb}_{kind}")
        return method

    goal_option = click.option("--goal", "goal_id", help="The goal this task serves (its id).")

    def with_goal(func: Callable[..., Any]) -> Callable[..., Any]:
        return goal_option(func) if tasks else func

    @group.command(help=f"Create a {kind}; print its id.")
    @click.argument("title")
    @click.option("--notes", default="", help="Free-text notes.")
    @click.option("--priority", type=int, default=0, help="Higher comes first (default 0).")
    @_status_option
    @with_goal
    @_field_option
    @json_option
    def add(
        title: str,
        notes: str,
        priority: int,
        status: str | None,
        fields: Sequence[str],
        as_json: bool,
        goal_id: str | None = None,
    ) -> None:
        extra = {"goal_id": goal_id} if tasks else {}
        item = api("add")(
            title,
            notes=notes,
            priority=priority,
            status=status or "open",
            fields=_fields(fields),
            **extra,
        )
        _show(item, as_json, lambda: console.print(f"added {item.id}", markup=False))

    @group.command(
        help=f"Change a {kind}'s title, notes, priority, status or fields.\n\n"
        "A field given as KEY= (empty) is removed."
    )
    @click.argument("item_id", metavar="ID")
    @click.option("--title", default=None, help="A new title.")
    @click.option("--notes", default=None, help="New notes (replacing the old).")
    @click.option("--priority", type=int, default=None, help="A new priority.")
    @_status_option
    @with_goal
    @_field_option
    @json_option
    def update(
        item_id: str,
        title: str | None,
        notes: str | None,
        priority: int | None,
        status: str | None,
        fields: Sequence[str],
        as_json: bool,
        goal_id: str | None = None,
    ) -> None:
        extra = {"goal_id": goal_id} if tasks else {}
        item = api("update")(
            item_id,
            title=title,
            notes=notes,
            priority=priority,
            status=status,
            fields=_fields(fields),
            **extra,
        )
        _show(item, as_json, lambda: console.print(f"updated {item.id}", markup=False))

    @group.command(name="list", help=f"List open {plural}, highest priority first.")
    @_status_option
    @with_goal
    @click.option("--all", "include_closed", is_flag=True, help="Include closed ones.")
    @click.option("--limit", type=click.IntRange(min=0), default=None, help="At most N.")
    @json_option
    def list_items(
        status: str | None,
        include_closed: bool,
        limit: int | None,
        as_json: bool,
        goal_id: str | None = None,
    ) -> None:
        extra = {"goal_id": goal_id} if tasks else {}
        method: Callable[..., Any] = getattr(_state(), f"list_{plural}")
        items = method(status=status, include_closed=include_closed, limit=limit, **extra)
        _show(items, as_json, lambda: _item_lines(items))

    @group.command(help=f"Show one {kind} with its fields and notes.")
    @click.argument("item_id", metavar="ID")
    @json_option
    def show(item_id: str, as_json: bool) -> None:
        item = api("get")(item_id)
        _show(item, as_json, lambda: _item_detail(item))

    @group.command(help=f"Close a {kind} as done (or --dropped).")
    @click.argument("item_id", metavar="ID")
    @click.option("--dropped", is_flag=True, help="Closed without being done.")
    @json_option
    def close(item_id: str, dropped: bool, as_json: bool) -> None:
        item = api("close")(item_id, status="dropped" if dropped else "done")
        _show(item, as_json, lambda: console.print(f"closed {item.id} ({item.status.value})"))

    return group


state.add_command(_item_group("task"))
state.add_command(_item_group("goal"))


@state.group()
def session() -> None:
    """Agent sessions: record one, list them."""


@session.command()
@click.argument("agent")
@click.option("--summary", default="", help="What the session did.")
@click.option("--started", type=int, default=None, help="Start, Unix milliseconds (default: now).")
@click.option("--ended", type=int, default=None, help="End, Unix milliseconds.")
@_field_option
@json_option
def record(
    agent: str,
    summary: str,
    started: int | None,
    ended: int | None,
    fields: Sequence[str],
    as_json: bool,
) -> None:
    """Record one session of AGENT."""
    item = _state().record_session(
        agent, summary, started_at=started, ended_at=ended, fields=_fields(fields)
    )
    _show(item, as_json, lambda: console.print(f"recorded {item.id}", markup=False))


@session.command(name="list")
@click.option("--agent", default=None, help="Only this agent's sessions.")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="At most N.")
@json_option
def list_sessions(agent: str | None, limit: int | None, as_json: bool) -> None:
    """List sessions, most recent first."""
    items = _state().list_sessions(agent=agent, limit=limit)

    def text() -> None:
        rows = [(s.id, fmt_ms(s.started_at), s.agent, s.summary) for s in items]
        print_columns(("id", "started", "agent", "summary"), rows, flexible=(3,))

    _show(items, as_json, text if items else lambda: console.print("none"))


@state.command()
@click.option("--object", "object_id", default=None, help="Only entries about this id or key.")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="At most N entries, newest first.",
)
@json_option
def audit(object_id: str | None, limit: int, as_json: bool) -> None:
    """Read the append-only audit table: time, actor, action and object of every write.

    It never holds the values written.
    """
    entries = _state().audit(object_id=object_id, limit=limit)

    def text() -> None:
        rows = [(str(e.seq), fmt_ms(e.ts), e.actor, e.action, e.object_id) for e in entries]
        print_columns(("seq", "time", "actor", "action", "object"), rows, flexible=(2,))

    _show(entries, as_json, text if entries else lambda: console.print("none"))


@state.group()
def meta() -> None:
    """Meta keys and values: get, set, list."""


@meta.command(name="get")
@click.argument("key")
@json_option
def meta_get(key: str, as_json: bool) -> None:
    """Print the value of KEY (exit 3 when it is unset)."""
    entry = _state().get_meta(key)
    _show(entry, as_json, lambda: click.echo(entry.value))


@meta.command(name="set")
@click.argument("key")
@click.argument("value")
@json_option
def meta_set(key: str, value: str, as_json: bool) -> None:
    """Set KEY to VALUE."""
    entry = _state().set_meta(key, value)
    _show(entry, as_json, lambda: console.print(f"set {entry.key}", markup=False))


@meta.command(name="list")
@json_option
def meta_list(as_json: bool) -> None:
    """List every meta key and value."""
    entries = _state().list_meta()

    def text() -> None:
        print_columns(("key", "value"), [(e.key, e.value) for e in entries], flexible=(1,))

    _show(entries, as_json, text if entries else lambda: console.print("none"))


@state.command()
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@json_option
def backup(directory: Path, as_json: bool) -> None:
    """Back the store up into DIR (new or empty) with a signed SHA-256 manifest.

    Uses SQLite's online backup API, so writers may keep working meanwhile. The manifest
    is signed with this machine's key (the audit log's, $MEMDIR_HOME/audit/audit.key),
    so only this machine can restore the backup without --accept-foreign.
    """
    info = _state().backup(directory)

    def text() -> None:
        console.print(f"backed up to {info.directory} (sha256 {info.sha256[:12]})", markup=False)

    _show(info, as_json, text)


def _checked(directory: Path, accept_foreign: bool) -> BackupInfo:
    """The backup verified; a refusal that --accept-foreign would lift says so."""
    try:
        return _state().check_backup(directory, accept_foreign=accept_foreign)
    except IntegrityError as refused:
        if accept_foreign:
            raise
        try:
            _state().check_backup(directory, accept_foreign=True)
        except MemdirError:
            raise refused from None
        raise IntegrityError(
            f"{refused} (if you moved it here yourself: run again with --accept-foreign)"
        ) from None


@state.command()
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (for scripts).")
@click.option(
    "--accept-foreign",
    is_flag=True,
    help="Accept a backup not signed by this machine's key (one you moved from another "
    "machine, or made before backups were signed); every other check still runs and its "
    "audit entries are not imported.",
)
@json_option
def restore(directory: Path, yes: bool, accept_foreign: bool, as_json: bool) -> Outcome | None:
    """Replace the store's tasks, goals, sessions and meta with the backup in DIR.

    Asks first unless --yes. The manifest, its signature by this machine's key, the file's
    SHA-256 and every row (no credentials) are verified first: a damaged, edited or foreign
    backup is refused (exit 7), one holding a credential too (exit 4), and nothing changes.
    The audit table keeps its past; the restore is appended to it. The store as it was is
    kept as a backup under state/pre-restore/.
    """
    checked = _checked(directory, accept_foreign)
    if not as_json:
        counts = ", ".join(f"{n} {k}" for k, n in checked.rows.items())
        console.print(f"backup of {fmt_ms(checked.created_at)}: {counts}", markup=False)
        if not checked.authenticated:
            signer = f"key {checked.key_id}" if checked.key_id else "no key"
            console.print(
                f"warning: not signed by this machine's key (signed by {signer}); "
                "accepted as foreign",
                markup=False,
            )
    if not yes:
        if as_json or not sys.stdin.isatty():
            raise ErrorWithDetails(
                confirmation_needed("restore", as_json=as_json),
                backup=checked,
                confirmed=False,
            )
        if not click.confirm("Replace the state store with this backup?", default=False):
            console.print("nothing was changed")
            return Outcome(EXIT_ERROR)
    info = _state().restore(directory, accept_foreign=accept_foreign)

    def text() -> None:
        console.print(f"restored from {info.source}", markup=False)
        console.print(f"  the store as it was is in {info.pre_restore}", markup=False)
        if info.audit_imported:
            console.print(f"  {info.audit_imported} audit entries appended", markup=False)
        if info.audit_not_imported:
            console.print(
                f"  {info.audit_not_imported} audit entries of the backup were not imported "
                "(this store's audit history is kept as it was)",
                markup=False,
            )

    _show(info, as_json, text)
    return None
