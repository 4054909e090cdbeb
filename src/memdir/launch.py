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
        from memdir.hooks.entry import is_hook_call
        from memdir.hooks.entry import main as hook_main

        # Help goes to click; any other hook line, even a malformed one, exits 0 (a
        # client reads exit 2 as "block the prompt").
        if is_hook_call(argv) and not {"-h", "--help"} & set(argv):
            raise SystemExit(hook_main(argv))
    from memdir.cli.main import main as cli

    cli(prog_name="memdir")
