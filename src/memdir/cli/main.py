"""The `memdir` command group: global options, the command registry, and where a `Memory` opens.

Commands are registered by name (`COMMANDS`) and imported only when run, so start-up
pays for click and the one command's module, nothing else; `memdir --help` imports no
command module at all. Errors become exit codes in `memdir.cli.group.MemdirGroup`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from memdir._version import __version__
from memdir.cli.group import CommandSpec, MemdirGroup

if TYPE_CHECKING:
    from memdir.core.vocab import WriteEvent
    from memdir.memory import Memory

__all__ = ["COMMANDS", "AppContext", "main"]

#: Every top-level command: where it lives and the first paragraph of its help (a test
#: keeps the two equal), so that listing commands imports none of them.
COMMANDS: dict[str, CommandSpec] = {
    name: CommandSpec(f"memdir.cli.{target}", summary)
    for name, target, summary in (
        (
            "ask",
            "ask:ask",
            "Answer a question from the notes, each claim citing the passage it rests on.",
        ),
        ("audit", "audit:audit", "The append-only, hash-chained audit log."),
        (
            "backups",
            "backups:backups",
            "List the latest fifty backups (or restore one: `memdir backups restore ID`).",
        ),
        (
            "demo",
            "demo:demo",
            "Remember a few notes in a temporary project, recall them, show a backup and a forget.",
        ),
        (
            "decrypt",
            "crypto:decrypt",
            "Convert encrypted notes, history and backups back to plain files.",
        ),
        (
            "diff",
            "notes:diff",
            "Differences between two revisions (default: previous → current).",
        ),
        (
            "doctor",
            "doctor:doctor",
            "Check the note directories; exit 1 when something needs attention.",
        ),
        (
            "encrypt",
            "crypto:encrypt",
            "Encrypt the notes, their history and backups at rest (resumes one that was stopped).",
        ),
        (
            "export",
            "transfer:export",
            "Write the notes to a tar.gz, a zip or a folder you can read anywhere (with an index; "
            "`memdir import OUT --from memdir` reads it back).",
        ),
        (
            "extract",
            "agent:extract",
            "Extract notes from a conversation (a JSON list of messages) with the configured "
            "model.",
        ),
        (
            "forget",
            "notes:forget",
            "Remove a note after showing what will go (asks first unless --yes).",
        ),
        ("history", "notes:history", "Every version of a note kept on this machine."),
        (
            "import",
            "transfer:import_notes",
            "Import the memory of another system: Claude Code, Codex, basic-memory, the MCP memory "
            "server, mem0, a Markdown folder, a memdir export or note folder.",
        ),
        (
            "index",
            "agent:index_command",
            "Print the prompt index an agent gets at the start of a run.",
        ),
        ("links", "notes:links", "A note's links, backlinks and dangling links."),
        ("list", "notes:list_notes", "List notes, most recently updated first."),
        (
            "lock",
            "crypto:lock",
            "Lock the encrypted notes now: the key and the in-memory index are wiped.",
        ),
        (
            "hook",
            "hooks:hook",
            "Answer an agent client's hook: its JSON on stdin, its output on stdout.",
        ),
        (
            "hooks",
            "hooks:hooks_group",
            "Memory that arrives by itself: hooks for Claude Code, Codex, Gemini CLI and Cursor.",
        ),
        (
            "mcp",
            "mcp:mcp_group",
            "The MCP server for agents: serve it, grant access, set up clients.",
        ),
        (
            "passwd",
            "crypto:passwd",
            "Change the password (the notes are not re-encrypted: it wraps the same key).",
        ),
        ("read", "notes:read", "Show a note, or one of its past revisions."),
        (
            "recall",
            "agent:recall",
            "Show which notes would be attached to MESSAGE (usually none).",
        ),
        (
            "reindex",
            "search:reindex",
            "Rebuild the search index from the note files (and embed every chunk).",
        ),
        (
            "remember",
            "notes:remember",
            "Create or update a note (pass - to read the body from stdin).",
        ),
        (
            "retrieve",
            "search:retrieve",
            "Find chunks of notes, with revision, chunk hash and byte offsets in the file.",
        ),
        (
            "search",
            "search:search",
            "Find notes by words and meaning; one line per note with its best snippet.",
        ),
        (
            "server",
            "server:server_group",
            "Run a memdir sync server and manage its accounts.",
        ),
        (
            "state",
            "state:state",
            "The agent state store: tasks, goals, sessions, audit, meta and verified backups.",
        ),
        (
            "supersede",
            "notes:supersede",
            "Mark note OLD_ID as replaced by NEW_ID (both of one scope).",
        ),
        (
            "sync",
            "sync:sync",
            "Run one sync pass now (see also: status, on, off, login, conflicts, resolve).",
        ),
        (
            "team",
            "team:team_group",
            "Memory a team shares: members with roles, projects synced as the team's.",
        ),
        (
            "tidy",
            "tidy:tidy",
            "List what needs tidying: same topic, broken links, missing files, unused, too long, "
            "contradictions (then: dismiss, merge, apply, auto).",
        ),
        (
            "ui",
            "ui:ui",
            "Serve the memory page on 127.0.0.1 and open it (read, search, edit, tidy, sync).",
        ),
        (
            "unlock",
            "crypto:unlock",
            "Unlock the encrypted notes until IDLE seconds pass without use (default 15 minutes).",
        ),
    )
}


class AppContext:
    """Global options; opens the `Memory` on first use so `--help` never touches disk."""

    def __init__(self, project: Path | None, home: Path | None) -> None:
        self.project = project
        self.home = home
        self._memory: Memory | None = None
        self._shown = 0
        #: The note writes and removals this invocation made ("write deploys-021"), so that
        #: an error after them (printing the result, a later scope) can say they happened.
        self.done: list[str] = []

    def memory(self) -> Memory:
        """The Memory for this invocation (config errors surface here, before any write)."""
        if self._memory is None:
            # Imported here: the facade pulls in the whole stack, which `--help` never needs.
            from memdir.config import load_settings
            from memdir.memory import Memory
            from memdir.project import find_project_root

            root = self.project.resolve() if self.project else find_project_root(Path.cwd())
            settings = load_settings(home=self.home, project_root=root)
            self._memory = Memory(settings)
            for scope in self._memory.scopes:
                self._memory.stores.store(scope).on_change(self._note_done)
            self.show_warnings()
        return self._memory

    def _note_done(self, note_id: str, event: WriteEvent) -> None:
        self.done.append(f"{event.value} {note_id}")

    def show_warnings(self) -> None:
        """Print warnings not shown yet (some, like notes above maxNotes, arise while working)."""
        if self._memory is None:
            return
        from memdir.cli.output import err_console

        for warning in self._memory.warnings[self._shown :]:
            err_console.print(f"warning: {warning}", markup=False, style="yellow")
        self._shown = len(self._memory.warnings)


@click.group(
    cls=MemdirGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
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
    8 the sync server could not be reached or failed,
    9 the disk refused (full, read-only, I/O error, permission).
    """
    ctx.obj = AppContext(project, home)
    ctx.call_on_close(ctx.obj.show_warnings)
