"""The CLI's one error map: memdir errors and command outcomes to messages and exit codes.

`MemdirGroup.invoke` (memdir.cli.group) is the only caller of `report_error` and the
only place an exit code is chosen; commands never call `sys.exit`. A command either
returns normally (exit 0), returns an `Outcome` carrying a non-zero code (doctor found
problems, a sync pass left conflicts), or raises a `MemdirError` — or an
`ErrorWithDetails` when its JSON error document carries more than the error.

Whether the command was asked for ``--json`` is recorded in the click context's shared
`meta` by the ``--json`` option itself (memdir.cli.options), so the map answers in the
form the failing command was asked for, whichever subcommand it is.

Kept light at import time (no rich, no Memory): the group imports it on every call.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, assert_never

from memdir.errors import InvalidInput, MemdirError, Remedy, exit_code_for

__all__ = [
    "ErrorWithDetails",
    "Outcome",
    "error_document",
    "render_hint",
    "report_error",
]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a command returns when it ends without an error but with a non-zero exit code."""

    code: int


def confirmation_needed(action: str, *, as_json: bool) -> InvalidInput:
    """The error of a command that must ask first but cannot: with --json, or when stdin is
    not a terminal (a pipe, a script), it says so and names --yes."""
    why = "with --json" if as_json else "when not run from a terminal"
    return InvalidInput(f"{action} needs --yes {why}: it cannot ask for confirmation here")


class ErrorWithDetails(Exception):
    """Raised by a command to report `error` with more fields beside the JSON error object."""

    def __init__(self, error: MemdirError, **details: Any) -> None:
        super().__init__(str(error))
        self.error = error
        self.details = details


def render_hint(hint: Remedy) -> str:
    """The CLI's wording of a remedy: the command to run next."""
    match hint:
        case Remedy.SYNC_LOGIN:
            return "run `memdir sync login --server URL`"
        case Remedy.SYNC_ON:
            return "turn it on with `memdir sync on`"
        case Remedy.SYNC_NOW:
            return "run `memdir sync` and try again"
        case Remedy.DOCTOR:
            return "see `memdir doctor`"
        case Remedy.BACKUPS:
            return "see `memdir backups`"
        case Remedy.AUDIT_VERIFY:
            return "run `memdir audit verify`"
        case Remedy.MCP_GRANT:
            return "ask the user for a new grant (`memdir mcp grant`)"
        case Remedy.OTHER_PROJECT:
            return "run it from that project (`memdir --project DIR …`)"
        case Remedy.UPGRADE:
            return "upgrade memdir"
        case Remedy.UNLOCK:
            return "run `memdir unlock`"
        case _:
            assert_never(hint)


def _hint(error: MemdirError) -> str | None:
    hint: Remedy | None = getattr(error, "hint", None)
    return render_hint(hint) if hint is not None else None


def error_document(error: MemdirError) -> dict[str, Any]:
    """The JSON error object: type, message, exit code, and the rendered hint if any."""
    doc: dict[str, Any] = {
        "type": type(error).__name__,
        "message": str(error),
        "exitCode": exit_code_for(error),
    }
    hint = _hint(error)
    if hint is not None:
        doc["hint"] = hint
    return doc


def report_error(
    error: MemdirError, *, as_json: bool, details: Mapping[str, Any] | None = None
) -> int:
    """Print `error` (JSON on stdout, or "error: …" on stderr) and return its exit code.

    Both forms go through `memdir.cli.output`: control and bidirectional formatting
    characters in the message are shown visibly, or escaped in JSON."""
    # rich is imported here, not at module level: `memdir --help` never needs it.
    from rich.text import Text

    from memdir.cli.output import emit_json, err_console, neutralise

    hint = _hint(error)
    # A message may quote a note, a file name or an archive member: shown, never obeyed.
    message = neutralise(f"{error} ({hint})" if hint is not None else str(error))
    try:
        if as_json:
            emit_json({"error": error_document(error), **(details or {})})
        else:
            err_console.print(Text.assemble(("error: ", "bold red"), message))
    except OSError:
        # The output itself is what failed (stdout on a full disk, a closed pipe): the
        # message goes to stderr, plainly, if that still works; the exit code says it anyway.
        with contextlib.suppress(OSError):
            sys.stderr.write(f"error: {message}\n")
            sys.stderr.flush()
    return exit_code_for(error)
