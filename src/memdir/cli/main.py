"""The `memdir` command group: global options and the one place a `Memory` is opened."""

from __future__ import annotations

from pathlib import Path

import click

from memdir import __version__
from memdir.cli.output import err_console
from memdir.config import load_settings
from memdir.memory import Memory
from memdir.store import find_project_root

__all__ = ["AppContext", "main"]


class AppContext:
    """Global options; opens the `Memory` on first use so `--help` never touches disk."""

    def __init__(self, project: Path | None, home: Path | None) -> None:
        self.project = project
        self.home = home
        self._memory: Memory | None = None
        self._shown = 0

    def memory(self) -> Memory:
        """The Memory for this invocation (config errors surface here, before any write)."""
        if self._memory is None:
            root = self.project.resolve() if self.project else find_project_root(Path.cwd())
            settings = load_settings(home=self.home, project_root=root)
            self._memory = Memory(settings)
            self.show_warnings()
        return self._memory

    def show_warnings(self) -> None:
        """Print warnings not shown yet (some, like notes above maxNotes, arise while working)."""
        if self._memory is None:
            return
        for warning in self._memory.warnings[self._shown :]:
            err_console.print(f"warning: {warning}", markup=False, style="yellow")
        self._shown = len(self._memory.warnings)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--project",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Project directory (default: the project containing the current directory).",
)
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="memdir home for user notes and machine-local state (default: $MEMDIR_HOME or ~/.memdir).",
)
@click.version_option(__version__, prog_name="memdir")
@click.pass_context
def main(ctx: click.Context, project: Path | None, home: Path | None) -> None:
    """memdir — long-term memory for AI agents and the people who work with them.

    Notes are Markdown files: project notes in <project>/MEMORY/, your own notes
    in $MEMDIR_HOME/memory/user/. Every command takes --json for scripts.

    Exit codes: 0 ok, 1 error, 2 usage or invalid input, 3 not found,
    4 refused (credential guard, limits, permissions), 5 conflict,
    6 busy (another writer holds the lock), 7 verification failed,
    8 the sync server could not be reached or failed.
    """
    ctx.obj = AppContext(project, home)
    ctx.call_on_close(ctx.obj.show_warnings)


def _register() -> None:
    from memdir.cli import (
        agent,
        audit,
        backups,
        demo,
        doctor,
        mcp,
        notes,
        search,
        server,
        sync,
    )

    for module in (notes, search, agent, backups, doctor, audit, demo, mcp, sync, server):
        module.register(main)


_register()
