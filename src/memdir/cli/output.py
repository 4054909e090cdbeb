"""Turning results into JSON or rich text on the terminal (errors: memdir.cli.errors)."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click
from rich.cells import cell_len, set_cell_size
from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import TaskID

__all__ = [
    "console",
    "emit_json",
    "err_console",
    "fmt_ms",
    "jsonable",
    "print_columns",
    "progress_bar",
    "short",
]

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def jsonable(value: Any) -> Any:
    """Plain JSON data from results: dataclasses (with their `hash`, `dangling` and `ok`),
    enums, paths, tuples."""
    from memdir.core.plain import plain

    return plain(value, properties=("hash", "dangling", "ok"))


def emit_json(value: Any) -> None:
    """Print a JSON document on stdout."""
    click.echo(json.dumps(jsonable(value), ensure_ascii=False, indent=2))


def fmt_ms(ms: int) -> str:
    """A Unix-ms timestamp as local-free UTC text."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def short(rev: str | None) -> str:
    """A revision shortened for people."""
    return rev[:12] if rev else "—"


#: The narrowest a shrinking column gets, and the space between columns.
_MIN_FLEX = 12
_GAP = "  "


def print_columns(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    flexible: Collection[int] = (),
    out: Console | None = None,
) -> None:
    """Print plain text in aligned columns, one line per row; on a terminal, fitted to its
    width.

    Columns not in `flexible` (ids, scopes, times) keep their full width and are never
    wrapped or cut, so an id can always be copied whole; on a terminal the `flexible`
    ones (summaries, tags) shrink to fit and end in "…" (piped, they stay whole). A line
    whose fixed columns alone are wider than the console is longer than the console
    rather than cut. Text only, no markup: a thousand rows take milliseconds where a rich
    Table spent ~0.4 s on its layout.
    """
    target = out or console
    cells = [[_one_line(c) for c in row] for row in rows]
    widths = [cell_len(h) for h in header]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], cell_len(c))
    # Piped output keeps every column whole (for grep and scripts); a terminal fits.
    fit = target.is_terminal
    flex = sorted((i for i in flexible if fit and i < len(widths)), key=lambda i: widths[i])
    fixed = sum(w for i, w in enumerate(widths) if i not in flex)
    room = target.width - fixed - len(_GAP) * (len(widths) - 1)
    for left, i in enumerate(flex):
        share = room // (len(flex) - left)
        widths[i] = min(widths[i], max(share, _MIN_FLEX, cell_len(header[i])))
        room -= widths[i]
    last = len(widths) - 1

    def line(row: Sequence[str]) -> str:
        parts = []
        for i, c in enumerate(row):
            fitted = c if cell_len(c) <= widths[i] else set_cell_size(c, widths[i] - 1) + "…"
            parts.append(fitted if i == last else set_cell_size(fitted, widths[i]))
        return _GAP.join(parts).rstrip()

    target.print(line(header), markup=False, highlight=False, style="bold")
    if cells:
        target.print("\n".join(line(row) for row in cells), markup=False, highlight=False)


def _one_line(text: str) -> str:
    return " ".join(text.split()) if any(c in text for c in "\n\r\t") else text


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A transient progress bar on stderr fed by `(phase, done, total)` calls (None when
    `enabled` is False, e.g. with --json)."""
    if not enabled:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
    )
    tasks: dict[str, TaskID] = {}

    def update(phase: str, done: int, total: int) -> None:
        label = {
            "index": "indexing notes",
            "embed": "embedding chunks",
            "import": "importing notes",
            "export": "exporting notes",
        }.get(phase, phase)
        if phase not in tasks:
            tasks[phase] = bar.add_task(label, total=total)
        bar.update(tasks[phase], completed=done, total=total)

    with bar:
        yield update
