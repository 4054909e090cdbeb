"""Turning results into JSON or rich text on the terminal (errors: memdir.cli.errors)."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import TaskID

__all__ = [
    "console",
    "emit_json",
    "err_console",
    "fmt_ms",
    "jsonable",
    "progress_bar",
    "short",
]

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def jsonable(value: Any) -> Any:
    """Plain JSON data from results: dataclasses, enums, paths, tuples."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in ("hash", "dangling", "ok"):
            attr = getattr(type(value), name, None)
            if isinstance(attr, property):
                out[name] = jsonable(getattr(value, name))
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    return value


def emit_json(value: Any) -> None:
    """Print a JSON document on stdout."""
    click.echo(json.dumps(jsonable(value), ensure_ascii=False, indent=2))


def fmt_ms(ms: int) -> str:
    """A Unix-ms timestamp as local-free UTC text."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def short(rev: str | None) -> str:
    """A revision shortened for people."""
    return rev[:12] if rev else "—"


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
    )

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
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
