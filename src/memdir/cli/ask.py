"""The CLI command that answers a question from the notes: ask (§10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape

from memdir.cli.errors import Outcome
from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, short
from memdir.core.vocab import Scope, choices
from memdir.errors import EXIT_NOT_FOUND, EXIT_REFUSED

if TYPE_CHECKING:
    from memdir import Memory
    from memdir.answer.check import Answer

__all__ = ["ask"]

#: Exit codes of the outcomes other than an answer (an error keeps its own code).
EXIT_CODES = {"insufficient_evidence": EXIT_NOT_FOUND, "refused": EXIT_REFUSED}


@click.command()
@click.argument("question")
@click.option(
    "--scope", type=click.Choice(choices(Scope)), default=None, help="Ask only this scope's notes."
)
@json_option
def ask(question: str, scope: str | None, as_json: bool) -> Outcome | None:
    """Answer a question from the notes, each claim citing the passage it rests on.

    Only the question and the passages found go to the configured model (llm.url,
    llm.model), as untrusted data; an answer citing anything else is refused. With no
    relevant passage no model is asked. Exit 0: answered; 3: insufficient evidence;
    4: the model's answer was refused; 1: no model configured, or it failed.
    """
    memory: Memory = click.get_current_context().obj.memory()
    answer = memory.ask(question, scope=scope)
    if as_json:
        emit_json(answer)
    else:
        _show(answer)
    code = EXIT_CODES.get(answer.status.value)
    return Outcome(code) if code is not None else None


def _show(answer: Answer) -> None:
    if answer.status.value != "answered":
        console.print(f"{answer.status.value.replace('_', ' ')}: {escape(answer.reason or '')}")
        return
    for claim in answer.claims:
        console.print(claim.text, markup=False, highlight=False)
        for c in claim.citations:
            console.print(
                f"  [dim]↳ {c.note_id} rev {short(c.revision)} bytes {c.start}–{c.end}[/]"
            )
    console.print(
        f"[dim]{answer.chunks_sent} passages sent to {escape(answer.model or 'the model')}[/]"
    )
