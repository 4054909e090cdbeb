"""`memdir hook EVENT`: the entry point agent clients run, built to never break them.

It reads the client's JSON on stdin, asks the warm server of the memdir home (started on
demand, see `memdir.hooks.warm`) or answers in-process, prints the client's output, and
exits 0 — also on every failure (locked store, damaged index, full disk, no model,
malformed input, an unknown event, a deadline passed), which leaves one line in
``$MEMDIR_HOME/logs/hooks.log`` and prints nothing. It imports neither click nor the
memory stack unless it answers in-process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see memdir/__init__)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from types import FrameType
    from typing import NoReturn

__all__ = ["home_of", "is_hook_call", "main", "parse_argv", "run"]

#: Seconds a hook may take before it gives up silently (MEMDIR_HOOK_DEADLINE overrides):
#: under the 10 s timeout `memdir hooks install` writes, so the client never kills it.
DEADLINE = 8.0
#: Seconds to wait for the warm server's answer.
WARM_TIMEOUT = 5.0

USAGE = """\
Usage: memdir hook [--client NAME] EVENT

  Answer an agent client's hook: read its JSON on stdin, print its output.

  EVENT is the client's event name (SessionStart, UserPromptSubmit, PreCompact, Stop,
  SessionEnd, BeforeAgent, AfterAgent, sessionStart, beforeSubmitPrompt, …). NAME is
  claude-code, codex, gemini or cursor (default: told from the input). Always exits 0;
  failures go to $MEMDIR_HOME/logs/hooks.log. Set up with `memdir hooks install`.
"""


def home_of(explicit: str | None, environ: Mapping[str, str]) -> Path:
    """The memdir home: --home, else $MEMDIR_HOME, else ~/.memdir (as memdir.config)."""
    value = explicit or environ.get("MEMDIR_HOME", "").strip()
    return Path(value).expanduser().resolve() if value else Path.home() / ".memdir"


def is_hook_call(argv: Sequence[str]) -> bool:
    """Whether the command line is ``[--home H] [--project P] hook …``."""
    args = list(argv)
    while args and args[0] in ("--home", "--project") and len(args) > 1:
        args = args[2:]
    while args and args[0].startswith(("--home=", "--project=")):
        args = args[1:]
    return bool(args) and args[0] == "hook"


def parse_argv(argv: Sequence[str]) -> tuple[str | None, str | None, str] | None:
    """(home, client, event) from ``[--home H] [--project P] hook [--client C] EVENT``;
    None when the arguments are not a hook call this parser knows (click takes over)."""
    args = list(argv)
    home = client = None
    while args and args[0] != "hook":
        if args[0] in ("--home", "--project") and len(args) > 1:
            home = args[1] if args[0] == "--home" else home
            args = args[2:]
        elif args[0].startswith(("--home=", "--project=")):
            home = args[0].split("=", 1)[1] if args[0].startswith("--home=") else home
            args = args[1:]
        else:
            return None
    if not args:
        return None
    args = args[1:]
    event: str | None = None
    while args:
        head = args.pop(0)
        if head == "--client" and args:
            client = args.pop(0)
        elif head.startswith("--client="):
            client = head.split("=", 1)[1]
        elif head.startswith("-") or event is not None:
            return None
        else:
            event = head
    return (home, client, event) if event else None


def _deadline(home: Path, client: str, event: str) -> None:
    def expired(signum: int, frame: FrameType | None) -> NoReturn:
        from memdir.hooks.sessions import log_failure

        log_failure(home, client or "?", event, "gave up at the hook deadline; printed nothing")
        os._exit(0)

    try:
        seconds = float(os.environ.get("MEMDIR_HOOK_DEADLINE", "") or DEADLINE)
    except ValueError:
        seconds = DEADLINE
    signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, max(0.1, seconds))


def run(home: Path, client: str | None, event: str) -> int:
    """Answer one hook call on this process's stdin and stdout; always 0."""
    environ = dict(os.environ)
    _deadline(home, client or "", event)
    try:
        stdin = sys.stdin.buffer.read((8 << 20) + 1)
    except (OSError, ValueError):
        stdin = b""
    out: str | None = None
    if environ.get("MEMDIR_HOOK_WARM", "1") != "0":
        from memdir.hooks.warm import ask, ensure_started, socket_for

        try:
            path = socket_for(home, environ)
        except Exception:
            path = None
        if path is not None:
            # The whole environment: the background extraction it may start needs the
            # model's key variable (the socket is private to this user).
            out = ask(path, client or "", event, stdin, environ, WARM_TIMEOUT)
            if out is None:
                with contextlib.suppress(Exception):
                    ensure_started(home, environ)
    if out is None:
        from memdir.hooks.run import answer_hook

        out = answer_hook(home, client or "", event, stdin, environ)
    if out:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    signal.setitimer(signal.ITIMER_REAL, 0)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``memdir [--home H] hook [--client C] EVENT``; None-returning callers exit with it."""
    args = list(sys.argv[1:] if argv is None else argv)
    parsed = parse_argv(args)
    if parsed is None:  # a client's hook line gone wrong: say so, never block the agent
        from memdir.hooks.sessions import log_failure

        sys.stderr.write(USAGE)
        line = " ".join(args)[:300]
        log_failure(home_of(None, os.environ), "?", "?", f"not a hook command line: {line}")
        return 0
    home_arg, client, event = parsed
    return run(home_of(home_arg, os.environ), client, event)
