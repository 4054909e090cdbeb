"""The `memdir` click group: subcommands loaded on first use, and errors mapped in one place.

Subcommands are registered by name as a `CommandSpec` ("module:attribute" plus the first
paragraph of its help). `LazyCommands` is the group's `commands` mapping: a command's
module is imported only when the command is looked up (to run it, or for its own
``--help``); listing the names and the group's ``--help`` use the specs alone, so
`memdir --help` imports no command module. A test keeps each spec's summary equal to its
command's help.

`MemdirGroup.invoke` turns every `MemdirError` into its message and exit code, and an
`Outcome` a command returns into its exit code (see memdir.cli.errors). click's own usage
errors (a missing argument, an unknown option) say "error:" as memdir's errors do.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from gettext import gettext
from typing import Any

import click
import click.exceptions

from memdir.cli.errors import ErrorWithDetails, Outcome, report_error
from memdir.cli.options import wants_json
from memdir.errors import DiskError, MemdirError, disk_error

__all__ = ["CommandSpec", "LazyCommands", "MemdirGroup"]


def _messages(text: str) -> str:
    """click's message catalogue, with its "Error: …" line in memdir's one form."""
    if text == "Error: {message}":
        return "error: {message}"
    return gettext(text)


# click looks its messages up through its module's `_` (gettext, for translations): one
# hook, so every usage error of every command says "error:" like memdir's own.
setattr(click.exceptions, "_", _messages)  # noqa: B010


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """Where a subcommand lives ("memdir.cli.notes:remember") and its one-line help."""

    target: str
    summary: str

    def load(self) -> click.Command:
        """Import the command's module and return the command object."""
        module_name, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's subcommands by name; a registered one is imported when first looked up."""

    def __init__(self, specs: Mapping[str, CommandSpec]) -> None:
        self.specs = dict(specs)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        command = self._loaded.get(name)
        if command is None:
            command = self._loaded[name] = self.specs[name].load()
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._loaded.pop(name, None)
        self.specs.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._loaded or name in self.specs

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._loaded.keys() | self.specs.keys()))

    def __len__(self) -> int:
        return len(self._loaded.keys() | self.specs.keys())

    def short_help(self, name: str, limit: int) -> str:
        """The one-line help `memdir --help` shows, without importing an unloaded command."""
        command = self._loaded.get(name)
        if command is None:
            command = click.Command(name, help=self.specs[name].summary)
        return command.get_short_help_str(limit)


class MemdirGroup(click.Group):
    """The root group: lazy subcommands, and the single error-to-exit-code map."""

    def __init__(
        self, *args: Any, lazy_commands: Mapping[str, CommandSpec] | None = None, **kwargs: Any
    ) -> None:
        kwargs.setdefault("commands", LazyCommands(lazy_commands or {}))
        super().__init__(*args, **kwargs)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Like click's, but from the specs: listing commands imports none of them."""
        names = self.list_commands(ctx)
        if not names:
            return
        if not isinstance(self.commands, LazyCommands):
            super().format_commands(ctx, formatter)
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, self.commands.short_help(name, limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command line; map memdir errors and outcomes to messages and exit codes."""
        try:
            result = super().invoke(ctx)
        except ErrorWithDetails as failure:
            code = report_error(failure.error, as_json=wants_json(ctx), details=failure.details)
            ctx.exit(code)
        except MemdirError as error:
            ctx.exit(report_error(_with_done(error, ctx), as_json=wants_json(ctx)))
        except Exception as error:
            # A full, read-only or failing disk is a clear error with its own code, never a
            # traceback; anything else is a bug and surfaces as such.
            mapped = disk_error(error)
            if mapped is None:
                raise
            ctx.exit(report_error(_with_done(mapped, ctx), as_json=wants_json(ctx)))
        if isinstance(result, Outcome):
            ctx.exit(result.code)
        return result


def _with_done(error: MemdirError, ctx: click.Context) -> MemdirError:
    """A disk error that names the changes this command made and kept before it (a result
    that could not be printed, a sync whose second scope failed): the truth, all of it."""
    done: list[str] = getattr(ctx.obj, "done", None) or []
    if not done or not isinstance(error, DiskError):
        return error
    listed = ", ".join(done[:5]) + (f" and {len(done) - 5} more" if len(done) > 5 else "")
    return DiskError(f"{error} (made and kept before that: {listed})", hint=error.hint)
