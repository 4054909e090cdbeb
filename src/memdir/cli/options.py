"""Options shared by commands: ``--json``, which also tells the error map which form to use.

Kept light at import time (click only): the root group reads `wants_json` on every call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

import click

__all__ = ["json_option", "wants_json"]

P = ParamSpec("P")
R = TypeVar("R")

_JSON_KEY = "memdir.cli.json"


def _note_json_flag(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    # The contexts of one command line share `meta`; the innermost --json parsed wins, so
    # `memdir sync --json status` answers an error of `status` in status's own form.
    ctx.meta[_JSON_KEY] = value
    return value


def json_option(func: Callable[P, R]) -> Callable[P, R]:
    """Add `--json` (machine-readable output, errors included) to a command."""
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        callback=_note_json_flag,
        help="Print machine-readable JSON on stdout.",
    )(func)


def wants_json(ctx: click.Context) -> bool:
    """True when the command being run (the innermost parsed so far) was given ``--json``."""
    return bool(ctx.meta.get(_JSON_KEY, False))
