"""CLI commands about notes: remember, supersede, read, list, history, diff, links, forget."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from memdir.cli.errors import ErrorWithDetails, Outcome, confirmation_needed
from memdir.cli.options import json_option
from memdir.cli.output import console, echo, emit_json, fmt_ms, print_columns, short
from memdir.core.vocab import NoteType, Scope, choices
from memdir.errors import EXIT_ERROR, InvalidInput

if TYPE_CHECKING:
    from memdir import Memory, Note, SupersedeResult, WriteResult

__all__ = [
    "diff",
    "forget",
    "history",
    "links",
    "list_notes",
    "read",
    "remember",
    "supersede",
]

_TYPES = click.Choice(choices(NoteType))
_SCOPES = click.Choice(choices(Scope))


def _memory() -> Memory:
    app = click.get_current_context().obj
    memory: Memory = app.memory()
    return memory


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{source} is not valid UTF-8 (byte {exc.start}); nothing was written"
        ) from None


def _read_body(body: str | None, body_file: str | None, stdin_marker: str | None) -> str | None:
    given = [x for x in (body, body_file, stdin_marker) if x is not None]
    if len(given) > 1:
        raise InvalidInput("give the body once: --body TEXT, --body-file FILE or - for stdin")
    if stdin_marker is not None:
        if stdin_marker != "-":
            raise InvalidInput(
                f"unexpected argument {stdin_marker!r} (use - to read the body from stdin)"
            )
        return _decode(sys.stdin.buffer.read(), "standard input")
    if body_file is not None:
        if body_file == "-":
            return _decode(sys.stdin.buffer.read(), "standard input")
        try:
            return _decode(Path(body_file).read_bytes(), body_file)
        except OSError as exc:
            raise InvalidInput(f"cannot read {body_file}: {exc.strerror}") from None
    return body


def _ids(raw: str | None) -> tuple[str, ...] | None:
    """Comma- or space-separated note ids ("" gives none: clears the list on update)."""
    if raw is None:
        return None
    return tuple(dict.fromkeys(part for part in raw.replace(",", " ").split()))


def _show_note(note: Note) -> None:
    meta = [f"[bold]{escape(note.summary)}[/]", f"id {note.id}"]
    if note.type:
        meta.append(f"type {note.type.value}")
    if note.tags:
        meta.append("tags " + escape(", ".join(note.tags)))
    meta.append(f"{note.scope.value if note.scope else '?'} · updated {fmt_ms(note.updated_at)}")
    if note.supersedes:
        meta.append("supersedes " + ", ".join(note.supersedes))
    if note.private:
        meta.append("private (never indexed, recalled or shown over MCP)")
    console.print("\n".join(meta))
    if note.body:
        console.print()
        console.print(note.body, markup=False)


def _show_write(result: WriteResult) -> None:
    verb = "created" if result.created else ("updated" if result.changed else "unchanged")
    console.print(
        f"{verb} [bold]{result.note.id}[/] ({result.note.scope.value if result.note.scope else ''})"
    )
    console.print(f"  {result.note.path}", markup=False)
    if result.note.supersedes:
        console.print(f"  supersedes {', '.join(result.note.supersedes)}")
    if result.note.private:
        console.print("  private: kept out of search, recall, the prompt index and MCP")
    if result.likely_duplicate:
        console.print(
            f"[yellow]likely duplicate of {result.duplicate_of}[/] — consider updating it instead"
        )
    for n in result.nearest:
        console.print(f"  near: {n.note_id} ({n.score:.2f}) {escape(n.summary)}")
    for target in result.dangling_links:
        console.print(
            f"  [yellow]link to a note that does not exist yet:[/] {escape(f'[[{target}]]')}"
        )


def _note_rows(notes: list[Note]) -> list[tuple[str, ...]]:
    return [
        (
            n.id,
            n.scope.value if n.scope else "",
            n.type.value if n.type else "—",
            n.summary,
            ", ".join(n.tags),
            fmt_ms(n.updated_at),
        )
        for n in notes
    ]


@click.command()
@click.argument("summary")
@click.argument("stdin_marker", required=False, metavar="[-]")
@click.option("--body", default=None, help="The note's body (Markdown).")
@click.option("--body-file", default=None, help="Read the body from FILE (- for stdin).")
@click.option("--type", "type_", type=_TYPES, default=None, help="Note type.")
@click.option("--tags", default=None, help="Comma- or space-separated tags.")
@click.option("--scope", type=_SCOPES, default=None, help="Where the note lives (default by type).")
@click.option(
    "--id",
    "note_id",
    default=None,
    help="Update this note (or create it with this id); the exact id, never a prefix.",
)
@click.option(
    "--supersedes",
    default=None,
    metavar="ID[,ID]",
    help="Notes of the same scope this one replaces (on update: the whole list; '' clears it).",
)
@click.option(
    "--private/--no-private",
    default=None,
    help="Keep the note out of search, recall, the prompt index and MCP (on update: "
    "unchanged unless given).",
)
@json_option
def remember(
    summary: str,
    stdin_marker: str | None,
    body: str | None,
    body_file: str | None,
    type_: str | None,
    tags: str | None,
    scope: str | None,
    note_id: str | None,
    supersedes: str | None,
    private: bool | None,
    as_json: bool,
) -> None:
    """Create or update a note (pass - to read the body from stdin)."""
    text = _read_body(body, body_file, stdin_marker)
    result = _memory().remember(
        summary,
        text,
        type=type_,
        tags=tags,
        scope=scope,
        id=note_id,
        supersedes=_ids(supersedes),
        private=private,
    )
    if as_json:
        emit_json(result)
    else:
        _show_write(result)


@click.command()
@click.argument("old_id", metavar="OLD_ID")
@click.option("--by", "new_id", required=True, metavar="NEW_ID", help="The note that replaces it.")
@click.option(
    "--scope", type=_SCOPES, default=None, help="The notes' scope (default: where NEW_ID is)."
)
@json_option
def supersede(old_id: str, new_id: str, scope: str | None, as_json: bool) -> None:
    """Mark note OLD_ID as replaced by NEW_ID (both of one scope).

    The old note stays on disk and in history; recall and the prompt index leave it
    out, and search marks it "superseded by NEW_ID" and ranks NEW_ID above it.
    """
    result = _memory().notes.supersede(old_id, by=new_id, scope=scope)
    if as_json:
        emit_json(result)
    else:
        _show_supersede(result)


def _show_supersede(result: SupersedeResult) -> None:
    old, new = result.old, result.new
    if not result.changed:
        console.print(f"{new.id} already supersedes {old.id}; nothing was changed")
        return
    console.print(
        f"[bold]{old.id}[/] ({escape(old.summary)}) is now superseded by "
        f"[bold]{new.id}[/] ({escape(new.summary)}) in the {result.scope.value} scope"
    )
    console.print(f"  {new.path}", markup=False)
    console.print("  recall and the prompt index leave the old note out; it stays in history")


@click.command()
@click.argument("note_id", metavar="ID")
@click.option(
    "--revision", default=None, help="A past revision (hex prefix, see `memdir history`)."
)
@json_option
def read(note_id: str, revision: str | None, as_json: bool) -> None:
    """Show a note, or one of its past revisions."""
    note = _memory().read(note_id, revision)
    if as_json:
        emit_json(note)
    else:
        _show_note(note)


@click.command(name="list")
@click.option("--scope", type=_SCOPES, default=None, help="Only notes of this scope.")
@click.option("--type", "type_", type=_TYPES, default=None, help="Only notes of this type.")
@click.option("--tag", default=None, help="Only notes carrying this tag (case-insensitive).")
@json_option
def list_notes(scope: str | None, type_: str | None, tag: str | None, as_json: bool) -> None:
    """List notes, most recently updated first."""
    notes = _memory().notes.list(scope=scope, type=type_, tag=tag)
    if as_json:
        emit_json(notes)
    elif not notes:
        console.print("no notes yet — add one with `memdir remember SUMMARY --body TEXT`")
    else:
        header = ("id", "scope", "type", "summary", "tags", "updated")
        print_columns(header, _note_rows(notes), flexible=(3, 4))


@click.command()
@click.argument("note_id", metavar="ID")
@json_option
def history(note_id: str, as_json: bool) -> None:
    """Every version of a note kept on this machine."""
    entries = _memory().notes.history(note_id)
    if as_json:
        emit_json(entries)
        return
    from rich.table import Table

    table = Table()
    for col in ("revision", "time", "event", "current"):
        table.add_column(col)
    for e in entries:
        table.add_row(short(e.revision), fmt_ms(e.ts), e.event, "●" if e.current else "")
    console.print(table)


@click.command()
@click.argument("note_id", metavar="ID")
@click.argument("rev_a", required=False)
@click.argument("rev_b", required=False)
@json_option
def diff(note_id: str, rev_a: str | None, rev_b: str | None, as_json: bool) -> None:
    """Differences between two revisions (default: previous → current)."""
    text = _memory().notes.diff(note_id, rev_a, rev_b)
    if as_json:
        emit_json({"id": note_id, "a": rev_a, "b": rev_b, "diff": text})
    elif not text:
        console.print("no differences")
    else:
        echo(text, nl=not text.endswith("\n"))


@click.command()
@click.argument("note_id", metavar="ID")
@json_option
def links(note_id: str, as_json: bool) -> None:
    """A note's links, backlinks and dangling links."""
    report = _memory().notes.links(note_id)
    if as_json:
        emit_json(report)
        return
    for link in report.outgoing:
        where = link.scope.value if link.scope else "[yellow]dangling[/]"
        console.print(f"→ {link.target} ({where}) {escape(link.summary or '')}")
    for link in report.backlinks:
        console.print(
            f"← {link.target} ({link.scope.value if link.scope else ''}) "
            f"{escape(link.summary or '')}"
        )
    if not report.outgoing and not report.backlinks:
        console.print("no links")


@click.command()
@click.argument("note_id", metavar="ID")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (for scripts).")
@click.option("--purge", is_flag=True, help="Also scrub the note from history and backups.")
@click.option(
    "--scope", type=_SCOPES, default=None, help="The note's scope (default: project, then user)."
)
@json_option
def forget(
    note_id: str, yes: bool, purge: bool, scope: str | None, as_json: bool
) -> Outcome | None:
    """Remove a note after showing what will go (asks first unless --yes)."""
    memory = _memory()
    plan = memory.upkeep.plan_forget(note_id, purge=purge, scope=scope)
    if not as_json:
        console.print(
            f"forget [bold]{plan.note.id}[/] ({plan.scope.value}): {escape(plan.note.summary)}"
        )
        if plan.path.exists():
            console.print(f"  removes {plan.path}", markup=False)
        else:
            console.print("  its file is gone already (forgotten before)", markup=False)
        if plan.purge:
            console.print(
                f"  purges {plan.history_versions} stored versions and {plan.backups} backups "
                "— this cannot be undone"
            )
        else:
            console.print(
                "  keeps a backup (undo with `memdir backups restore`); --purge scrubs it too"
            )
    if not yes:
        if as_json or not sys.stdin.isatty():
            # With --json, one document: the usual error object plus the plan it refers to.
            raise ErrorWithDetails(
                confirmation_needed("forget", as_json=as_json),
                plan=plan,
                confirmed=False,
            )
        if not click.confirm("Forget this note?", default=False):
            console.print("nothing was removed")
            return Outcome(EXIT_ERROR)
    result = memory.forget(plan.note.id, purge=purge, scope=plan.scope, expect_hash=plan.note.hash)
    if as_json:
        emit_json(result)
        return None
    console.print(f"forgot {result.note_id}; verified: {', '.join(result.checks)}")
    if result.backup:
        console.print(
            f"  backup {result.backup.id} "
            f"(restore with `memdir backups restore {result.backup.id}`)"
        )
    return None
