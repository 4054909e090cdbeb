"""A background extraction pass for a hook (`python -m memdir.hooks.background …`).

Started detached by a ``compact``/``stop``/``end`` hook so the agent never waits for the
model. It holds the session's pass lock (one pass at a time per session), reads the
client's transcript (as it stood before a compaction, for ``--limit``), runs one §4.3
pass from where the last one stopped, stores the new position, and leaves "saved N
memories from this conversation" for the session's next message. Failures go to the
hook log, never to the agent.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from memdir.hooks.sessions import Sessions, log_failure
from memdir.hooks.transcripts import read_transcript

__all__ = ["main", "run_pass"]


def run_pass(
    home: Path,
    project: Path | None,
    *,
    client: str,
    event: str,
    session: str,
    transcript: str,
    reason: str,
    limit: int | None = None,
) -> str:
    """One pass; returns the announcement ("" when nothing was saved)."""
    from memdir import Memory
    from memdir.extract import ExtractionState

    sessions = Sessions(home)
    with sessions.pass_lock(session):
        read = read_transcript(transcript, limit=limit)
        if read.subagent:
            return ""
        state = ExtractionState.from_dict(sessions.load(session).get("extraction"))
        with Memory.open(project, home=home) as memory:
            result = memory.agent.extract(
                read.messages,
                state=state,
                reason="compaction" if reason == "compaction" else "stop",
            )
        with sessions.update(session) as data:
            data["extraction"] = result.state.to_dict()
        if result.error:
            log_failure(home, client, event, f"extraction failed: {result.error}")
        if result.announcement:
            key = str(project) if project is not None else "<user>"
            sessions.announce(key, session, result.announcement)
        return result.announcement


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memdir.hooks.background")
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--project", type=Path, default=None)
    parser.add_argument("--client", required=True)
    parser.add_argument("--event", required=True)
    parser.add_argument("--session", required=True)
    parser.add_argument("--transcript", required=True)
    parser.add_argument("--reason", choices=("stop", "compaction"), default="stop")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        run_pass(
            args.home,
            args.project,
            client=args.client,
            event=args.event,
            session=args.session,
            transcript=args.transcript,
            reason=args.reason,
            limit=args.limit,
        )
    except Exception as exc:
        log_failure(args.home, args.client, args.event, f"extraction: {type(exc).__name__}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
