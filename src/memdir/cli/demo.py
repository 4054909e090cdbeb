"""`memdir demo`: a guided tour on a throw-away project — remember, recall, back up, forget."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json
from memdir.core import Scope
from memdir.errors import SecretRefused

__all__ = ["demo"]

_NOTES = [
    (
        "Pricing cards use fills, not borders",
        "Cards on the pricing page are separated by fill and whitespace.\n\n"
        "**Why:** the outlines were the loudest thing on a page of numbers.\n\n"
        "**How to apply:** keep the border declared but transparent. See [[{layout}]].",
        "feedback",
        "design, pricing, ui",
    ),
    (
        "Pricing layout is a three-column grid",
        "The pricing page uses a three-column grid that collapses to one column below 720px.",
        "project",
        "design, pricing, layout",
    ),
    (
        "Prefers short answers with code first",
        "The user reads code before prose: lead with the snippet, explain after.",
        "user",
        "style, answers",
    ),
]


def _scope_name(scope: Scope | None) -> str:
    return scope.value if scope else "dangling"


def _step(title: str, quiet: bool) -> None:
    if not quiet:
        from rich.rule import Rule

        console.print(Rule(title, align="left"))


@click.command()
@click.option(
    "--keep", is_flag=True, help="Keep the demo project and home instead of deleting them."
)
@json_option
def demo(keep: bool, as_json: bool) -> None:
    """Remember a few notes in a temporary project, recall them, show a backup and a forget."""
    from memdir.config import load_settings
    from memdir.memory import Memory

    base = Path(tempfile.mkdtemp(prefix="memdir-demo-"))
    report: dict[str, Any] = {"project": str(base / "project"), "home": str(base / "home")}
    try:
        (base / "project").mkdir()
        memory = Memory(load_settings(home=base / "home", project_root=base / "project"))
        quiet = as_json
        _step("1. remember", quiet)
        layout = memory.remember(_NOTES[1][0], _NOTES[1][1], type=_NOTES[1][2], tags=_NOTES[1][3])
        fills = memory.remember(
            _NOTES[0][0],
            _NOTES[0][1].format(layout=layout.note.id),
            type=_NOTES[0][2],
            tags=_NOTES[0][3],
        )
        pref = memory.remember(_NOTES[2][0], _NOTES[2][1], type=_NOTES[2][2], tags=_NOTES[2][3])
        for r in (layout, fills, pref):
            if not quiet:
                console.print(
                    f"  {_scope_name(r.note.scope):7} {r.note.id}: {escape(r.note.summary)}"
                )
        dup = memory.remember(
            "Pricing cards use fills instead of borders",
            "Cards on the pricing page are separated by fill and whitespace, not by outlines.",
            tags="design, pricing, ui",
        )
        if not quiet:
            console.print(
                f"  a near-copy was flagged as a likely duplicate of {dup.duplicate_of}"
                if dup.likely_duplicate
                else "  (near-copy not flagged)"
            )
        report["remembered"] = [layout.note.id, fills.note.id, pref.note.id, dup.note.id]
        report["duplicateFlagged"] = dup.likely_duplicate

        _step("2. recall", quiet)
        hits = memory.search("how should pricing cards be separated?", limit=3)
        for h in hits:
            if not quiet:
                console.print(f"  {h.score:.2f} {h.note_id}: {escape(h.summary)}")
        report["recalled"] = [h.note_id for h in hits]
        linked = memory.notes.links(fills.note.id)
        if not quiet:
            for link in linked.outgoing:
                console.print(
                    f"  {fills.note.id} links to {link.target} ({_scope_name(link.scope)})"
                )

        _step("3. edit and history", quiet)
        memory.remember(
            fills.note.summary,
            fills.note.body + "\n\nApplies to the annual toggle too.",
            id=fills.note.id,
        )
        versions = memory.notes.history(fills.note.id)
        if not quiet:
            console.print(f"  {fills.note.id} has {len(versions)} versions; diff:")
            console.print(memory.notes.diff(fills.note.id), markup=False)
        report["versions"] = len(versions)

        _step("4. the credential guard", quiet)
        try:
            memory.remember("Deploy key", "token: ghp_" + "x9Y8z7W6v5U4" * 3)
            report["secretRefused"] = False
        except SecretRefused as exc:
            report["secretRefused"] = True
            if not quiet:
                console.print(f"  {escape(str(exc))}")

        _step("5. forget, backup, restore", quiet)
        gone = memory.forget(dup.note.id)
        if not quiet:
            console.print(f"  forgot {gone.note_id}; verified: {', '.join(gone.checks)}")
        backup = memory.backups()[0]
        if not quiet:
            console.print(f"  backup {backup.id} ({backup.reason})")
        restored = memory.backups.restore(backup.id)
        if not quiet:
            console.print(f"  restored {restored.note.id}")
        memory.forget(dup.note.id, purge=True)
        if not quiet:
            console.print(f"  purged {dup.note.id} from history and backups")
        report["backup"] = backup.id

        _step("6. audit", quiet)
        audit = memory.audit.verify()
        report["auditOk"] = audit.ok
        report["auditEntries"] = audit.entries
        if not quiet:
            console.print(f"  audit log: {audit.entries} entries, intact={audit.ok}")
            where = f"kept in {base}" if keep else "the demo project was deleted"
            console.print(f"\ndone — {where}. Try `memdir remember` in your own project.")
        if as_json:
            emit_json(report)
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
