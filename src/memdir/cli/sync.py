"""CLI commands about sync: one pass now, status, the switch, sign-in, conflicts and resolving."""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from memdir.cli.errors import Outcome
from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, fmt_ms
from memdir.core.vocab import KeepSide, Scope, choices
from memdir.errors import EXIT_CONFLICT, EXIT_REFUSED, InvalidInput

if TYPE_CHECKING:
    from memdir import Memory, SyncRun, SyncStatus

__all__ = ["sync"]

_TOKEN_ENV = "MEMDIR_SYNC_TOKEN"


def _memory() -> Memory:
    memory: Memory = click.get_current_context().obj.memory()
    return memory


@click.group(invoke_without_command=True)
@click.option(
    "--scope",
    type=click.Choice(choices(Scope)),
    default=None,
    help="Sync only this scope (default: both).",
)
@json_option
@click.pass_context
def sync(ctx: click.Context, scope: str | None, as_json: bool) -> Outcome | None:
    """Run one sync pass now (see also: status, on, off, login, conflicts, resolve).

    Exit codes: 0 done, 4 sync off / signed out / refused / a scope paused (bound to
    another account), 5 conflicts were found, 8 the server could not be reached or
    failed (no note is lost; run it again later).
    """
    if ctx.invoked_subcommand is not None:
        return None
    result = _memory().sync.run(scope)
    if as_json:
        emit_json(result)
    else:
        _print_run(result)
    if result.conflicts:
        return Outcome(EXIT_CONFLICT)
    if result.paused:
        return Outcome(EXIT_REFUSED)
    return None


def _print_run(result: SyncRun) -> None:
    for report in result.reports:
        if report.unchanged or not (report.changed or report.conflicts or report.held):
            console.print(f"{report.scope}: up to date", markup=False)
            continue
        parts = [
            f"{len(ids)} {label}"
            for label, ids in (
                ("downloaded", report.pulled),
                ("uploaded", report.pushed),
                ("merged", report.merged),
                ("deleted here", report.deleted_here),
                ("deleted on the server", report.deleted_there),
                ("conflicts", report.conflicts),
            )
            if ids
        ]
        console.print(f"{report.scope}: " + ", ".join(parts or ["nothing moved"]), markup=False)
        for note_id, reason in report.held.items():
            console.print(f"  held back {note_id}: {reason}", markup=False, style="yellow")
        if report.conflicts:
            console.print(
                "  see them with `memdir sync conflicts`; settle each with "
                "`memdir sync resolve ID --keep local|server|both` or `--edit`",
                markup=False,
            )
    for scope, reason in result.paused.items():
        console.print(f"{scope}: paused — {reason}", markup=False, style="yellow")


def _print_status(status: SyncStatus) -> None:
    if status.server is None:
        # Switched on but with nowhere to go: nothing is synced, and the step is a sign-in.
        console.print(
            "not syncing: not signed in to a sync server — notes are kept on this machine "
            "only. To sync, run `memdir sync login --server URL` (a memdir sync server: "
            "`memdir server`)"
            + ("" if status.enabled else "; sync is also switched off (`memdir sync on`)"),
            markup=False,
        )
        return
    if status.enabled:
        console.print(f"syncing as {status.user} at {status.server}", markup=False)
    else:
        console.print(
            f"sync is off: signed in as {status.user} at {status.server}, but notes stay "
            "on this machine (`memdir sync on` resumes)",
            markup=False,
        )
    from rich.table import Table

    table = Table()
    for col in ("scope", "bound to", "last sync", "version", "conflicts", "state"):
        table.add_column(col, overflow="fold")
    for s in status.scopes:
        table.add_row(
            s.scope,
            escape(s.bound_to or "-"),
            fmt_ms(s.last_sync) if s.last_sync else "never",
            str(s.version) if s.version is not None else "-",
            str(s.conflicts),
            escape(f"paused: {s.paused}" if s.paused else "ok"),
        )
    console.print(table)


@sync.command()
@json_option
def status(as_json: bool) -> None:
    """Show whether sync is on, the account, and each scope's state."""
    result = _memory().sync.status()
    if as_json:
        emit_json(result)
    else:
        _print_status(result)


@sync.command(name="on")
@json_option
def switch_on(as_json: bool) -> None:
    """Turn sync on (persisted across restarts and sign-ins)."""
    result = _memory().sync.switch(True)
    if as_json:
        emit_json(result)
    else:
        console.print("sync is on", markup=False)


@sync.command(name="off")
@json_option
def switch_off(as_json: bool) -> None:
    """Turn sync off: no cloud requests; notes keep working locally."""
    result = _memory().sync.switch(False)
    if as_json:
        emit_json(result)
    else:
        console.print("sync is off; notes keep working locally", markup=False)


def _read_token(token_file: Path | None) -> str:
    if token_file is not None and str(token_file) == "-":
        return sys.stdin.readline().strip()
    if token_file is not None:
        try:
            return token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"cannot read the token file {token_file}: {exc}") from None
    env = os.environ.get(_TOKEN_ENV)
    if env:
        return env.strip()
    if not sys.stdin.isatty():
        raise InvalidInput(
            f"no token: give --token-file FILE or set {_TOKEN_ENV} (a token is never taken "
            "as a command-line argument)"
        )
    value: str = click.prompt("sync token", hide_input=True, err=True)
    return value.strip()


@sync.command()
@click.option("--server", required=True, help="Sync server URL (https://, or http:// to loopback).")
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    default=None,
    help=f"File holding the token, - for stdin (else ${_TOKEN_ENV}, else a hidden prompt).",
)
@json_option
def login(server: str, token_file: Path | None, as_json: bool) -> None:
    """Sign in to a sync server; the token is checked, then stored with mode 0600."""
    result = _memory().sync.login(server, _read_token(token_file))
    if as_json:
        emit_json(result)
    else:
        console.print(f"signed in as {result.user} at {result.server}", markup=False)


@sync.command()
@json_option
def logout(as_json: bool) -> None:
    """Forget the stored sign-in (notes, the switch and scope bindings stay)."""
    removed = _memory().sync.logout()
    if as_json:
        emit_json({"signedOut": removed})
    else:
        console.print("signed out" if removed else "was not signed in", markup=False)


def _diff(old: str | None, new: str | None, a: str, b: str) -> str:
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True), a, b
    )
    return "".join(lines) or "(no difference)\n"


@sync.command()
@click.option("--full", is_flag=True, help="Print the three versions whole instead of diffs.")
@json_option
def conflicts(full: bool, as_json: bool) -> None:
    """Show notes held back by a conflict: baseline, this machine and the server."""
    views = _memory().sync.conflicts()
    if as_json:
        emit_json(views)
        return
    if not views:
        console.print("no sync conflicts", markup=False)
        return
    for v in views:
        console.rule(f"{v.id} ({v.scope})")
        for reason in v.reasons:
            console.print(f"- {reason}", markup=False)
        if full:
            for label, text in (
                ("baseline", v.baseline),
                ("this machine", v.local),
                ("server", v.server),
            ):
                console.print(f"--- {label} ---", markup=False, style="bold")
                console.print(text if text is not None else "(deleted)", markup=False)
        else:
            console.print(_diff(v.baseline, v.local, "baseline", "this machine"), markup=False)
            console.print(_diff(v.baseline, v.server, "baseline", "server"), markup=False)
    console.print(
        "settle each with `memdir sync resolve ID --keep local|server|both` or `--edit`",
        markup=False,
    )


def _edit(draft: str, scratch: Path | None) -> str | None:
    """The draft as edited in $EDITOR; the editor's file goes in `scratch` (an encrypted
    store's: the private runtime folder, in memory on most systems) instead of /tmp."""
    import tempfile

    saved = tempfile.tempdir
    tempfile.tempdir = str(scratch) if scratch is not None else saved
    try:
        return click.edit(draft, extension=".md", require_save=True)
    finally:
        tempfile.tempdir = saved


@sync.command()
@click.argument("note_id", metavar="ID")
@click.option(
    "--keep",
    type=click.Choice(choices(KeepSide)),
    default=None,
    help="local: this machine's; server: the server's; both: the server's as a new note.",
)
@click.option("--edit", is_flag=True, help="Merge by hand in $EDITOR, starting from a draft.")
@click.option(
    "--scope",
    type=click.Choice(choices(Scope)),
    default=None,
    help="The scope of the note (default: project first, then user).",
)
@json_option
def resolve(note_id: str, keep: str | None, edit: bool, scope: str | None, as_json: bool) -> None:
    """Settle a conflict on this machine; the next `memdir sync` uploads the outcome."""
    memory = _memory()
    if edit == (keep is not None):
        raise InvalidInput("give exactly one of --keep local|server|both or --edit")
    text: str | None = None
    if edit:
        draft = memory.sync.draft(note_id, scope)
        edited = _edit(draft, memory.crypto.scratch_dir())
        if edited is None:
            raise InvalidInput("the editor was closed without saving; nothing was changed")
        text = edited
    result = memory.sync.resolve(note_id, keep, text=text, scope=scope)
    if as_json:
        emit_json(result)
        return
    console.print(f"{result.id}: kept {result.kept}", markup=False)
    if result.new_id:
        console.print(f"  the server's version is now note {result.new_id}", markup=False)
    for backup_id in result.backup_ids:
        console.print(f"  set aside in backup {backup_id}", markup=False)
    console.print("  run `memdir sync` to upload it", markup=False)
