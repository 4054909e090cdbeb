"""CLI commands for agent hosts: the prompt index, per-message recall, extraction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memdir.cli.errors import Outcome
from memdir.cli.options import json_option
from memdir.cli.output import console, echo, emit_json
from memdir.errors import EXIT_REFUSED, InvalidInput, Refused

if TYPE_CHECKING:
    from memdir import Memory

__all__ = ["extract", "index_command", "recall"]


def _memory() -> Memory:
    memory: Memory = click.get_current_context().obj.memory()
    return memory


def _messages(path: Path | None) -> list[dict[str, Any]]:
    if path is None:
        return []
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput(f"cannot read a JSON list of messages from {path}: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(m, dict) for m in data):
        raise InvalidInput(f"{path} must hold a JSON list of message objects")
    return data


@click.command(name="index")
@json_option
def index_command(as_json: bool) -> None:
    """Print the prompt index an agent gets at the start of a run."""
    memory = _memory()
    text = memory.agent.prompt_index()
    if as_json:
        emit_json({"index": text, "guidance": memory.agent.guidance()})
    else:
        echo(text)


@click.command()
@click.argument("message")
@click.option(
    "--history",
    "history_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="JSON list of earlier messages (their metadata says what was already recalled).",
)
@json_option
def recall(message: str, history_file: Path | None, as_json: bool) -> None:
    """Show which notes would be attached to MESSAGE (usually none)."""
    result = _memory().recall(message, _messages(history_file))
    if as_json:
        emit_json(result)
    elif not result.count:
        console.print("nothing recalled")
    else:
        console.print(result.label)
        echo(result.block)


@click.command()
@click.argument("conversation", type=click.Path(dir_okay=False, path_type=Path))
@json_option
def extract(conversation: Path, as_json: bool) -> Outcome | None:
    """Extract notes from a conversation (a JSON list of messages) with the configured model.

    Exit 0: done (also when nothing was worth saving); 1: no model configured, or it
    failed; 4: the model's answer was refused.
    """
    result = _memory().agent.extract(_messages(conversation), force=True)
    if as_json:
        emit_json(result)
        return Outcome(result.error_exit) if result.error else None
    if result.error:
        if result.error_exit == EXIT_REFUSED:
            raise Refused(result.error)
        from memdir.extract import ChatFailed  # no model, or it failed: as `ask` says it

        raise ChatFailed(result.error)
    console.print(result.announcement or "nothing worth saving")
    for item in result.dropped:
        console.print(f"  dropped: {item.reason}", markup=False)
    return None
