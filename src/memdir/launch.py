"""The `memdir` console command: a hook call (`memdir hook EVENT`, run by agent clients
before every message) goes straight to `memdir.hooks.entry` without importing click or
the command registry; everything else is the click application (`memdir.cli.main`)."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Run the `memdir` command line."""
    argv = sys.argv[1:]
    if "hook" in argv[:5]:
        from memdir.hooks.entry import parse_argv

        if (parsed := parse_argv(argv)) is not None:
            import os

            from memdir.hooks.entry import home_of, run

            home, client, event = parsed
            raise SystemExit(run(home_of(home, os.environ), client, event))
    from memdir.cli.main import main as cli

    cli(prog_name="memdir")
