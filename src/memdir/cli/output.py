"""Turning results into JSON or rich text on the terminal (errors: memdir.cli.errors)."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click
from rich.console import Console

from memdir.cli.errors import note_json_flag

__all__ = ["console", "emit_json", "err_console", "fmt_ms", "json_option", "jsonable", "short"]

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

P = ParamSpec("P")
R = TypeVar("R")


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


def json_option(func: Callable[P, R]) -> Callable[P, R]:
    """Add `--json` (machine-readable output, errors included) to a command."""
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        callback=note_json_flag,
        help="Print machine-readable JSON on stdout.",
    )(func)
