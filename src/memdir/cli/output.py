"""Turning results into JSON or rich text on the terminal (errors: memdir.cli.errors)."""

from __future__ import annotations

import dataclasses
import enum
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console

__all__ = ["console", "emit_json", "err_console", "fmt_ms", "jsonable", "short"]

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
