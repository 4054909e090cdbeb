"""Turning results into JSON or rich tables, and errors into messages and exit codes."""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from functools import wraps
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click
from rich.console import Console
from rich.text import Text

from memdir.errors import MemdirError, exit_code_for

__all__ = ["console", "err_console", "fmt_ms", "json_option", "jsonable", "run", "short"]

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
    """Add `--json` (machine-readable output) to a command."""
    return click.option(
        "--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout."
    )(func)


def run(func: Callable[P, R]) -> Callable[P, R]:
    """Run a command body, turning memdir errors into a message and their exit code."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        as_json = bool(kwargs.get("as_json"))
        try:
            return func(*args, **kwargs)
        except MemdirError as exc:
            code = exit_code_for(exc)
            if as_json:
                emit_json(
                    {"error": {"type": type(exc).__name__, "message": str(exc), "exitCode": code}}
                )
            else:
                err_console.print(Text.assemble(("error: ", "bold red"), str(exc)))
            sys.exit(code)

    return wrapper
