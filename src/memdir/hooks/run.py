"""One hook call, answered (§11): the §4 loop run inside an agent client.

`answer` takes the parsed call and a way to reach the project's `Memory`, and returns what
the hook prints. It raises on failure; the entry point (`memdir.hooks.entry`) turns every
failure into "exit 0, print nothing, one log line", so the agent always goes on.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memdir.errors import Locked
from memdir.hooks.clients import HookCall, render
from memdir.hooks.sessions import Sessions, detach, log_failure
from memdir.hooks.transcripts import mark_recalled, read_transcript
from memdir.project import find_project_root

if TYPE_CHECKING:
    import threading

    from memdir import Memory

__all__ = [
    "INDEX_HEADER",
    "LOCKED_NOTICE",
    "Declined",
    "HookContext",
    "Memories",
    "answer",
    "answer_hook",
    "project_of",
]

INDEX_HEADER = (
    "Long-term memory (memdir) for this project: one line per note, newest first. "
    "Read or search notes with the memory tool; write one with remember."
)
LOCKED_NOTICE = (
    "memdir: memory is locked (encrypted store) — run `memdir unlock` to use it; "
    "until then nothing is recalled or saved"
)


@dataclass(frozen=True, slots=True)
class HookContext:
    """Where a hook runs: the memdir home and how to open a project's memory."""

    home: Path
    memory: Callable[[Path | None], Memory]
    environ: dict[str, str]
    #: Set when the store answered "locked" (a kept memory is then opened afresh).
    locked: list[bool] = field(default_factory=list)


def project_of(call: HookCall) -> Path | None:
    """The project the client works in (None: user notes only)."""
    return find_project_root(call.cwd) if call.cwd is not None else None


def _project_key(root: Path | None) -> str:
    return str(root) if root is not None else "<user>"


def answer(call: HookCall, ctx: HookContext) -> str:
    """What the hook prints for `call` ("" in the normal case)."""
    if call.subagent or call.kind == "subagent":
        return ""  # subagents recall nothing and never extract
    root = project_of(call)
    sessions = Sessions(ctx.home)
    key = sessions.key(call.client.name, call.session_id)
    if call.kind == "start":
        return _start(call, ctx, sessions, key, root)
    if call.kind == "prompt":
        return _prompt(call, ctx, sessions, key, root)
    return _extract_later(call, ctx, sessions, key, root)


def index_block(index: str) -> str:
    """The prompt index (§4.1) as the context a run starts with."""
    return f"<memory-index>\n{INDEX_HEADER}\n\n{index}\n</memory-index>"


def _locked(call: HookCall, ctx: HookContext, sessions: Sessions, key: str) -> str:
    """The locked notice, once per session; then silence."""
    ctx.locked.append(True)
    with sessions.update(key) as state:
        said = bool(state.get("lockedSaid"))
        state["lockedSaid"] = True
    return "" if said else render(call, "", LOCKED_NOTICE)


def _start(
    call: HookCall, ctx: HookContext, sessions: Sessions, key: str, root: Path | None
) -> str:
    sessions.sweep()
    memory = ctx.memory(root)
    try:
        index = memory.agent.prompt_index()
    except Locked:
        return _locked(call, ctx, sessions, key)
    notices = sessions.take_announcements(_project_key(root), None)
    with sessions.update(key) as state:
        state.pop("lockedSaid", None)
        if call.source == "compact" or call.source == "clear":
            state["compactions"] = int(state.get("compactions", 0)) + 1
        resumed = call.source in ("resume", "fork")  # a fork carries its parent's turns
        if resumed and "extraction" not in state and call.transcript:
            from memdir.extract import ExtractionState

            messages = read_transcript(call.transcript).messages
            state["extraction"] = ExtractionState.resumed(messages).to_dict()
    context = index_block(index) if not call.client.index_on_prompt else ""
    if notices:
        context += "\n" + "\n".join(f"memdir: {n}" for n in notices)
    return render(call, context, "; ".join(f"memdir: {n}" for n in notices))


def _prompt(
    call: HookCall, ctx: HookContext, sessions: Sessions, key: str, root: Path | None
) -> str:
    if not call.prompt.strip():
        notices = sessions.take_announcements(_project_key(root), key)
        return render(call, "", "; ".join(f"memdir: {n}" for n in notices))
    transcript = read_transcript(call.transcript, messages=False)
    if transcript.subagent:
        return ""  # a subagent's own transcript: it recalls nothing
    state = sessions.load(key)
    compactions = max(transcript.compactions, int(state.get("compactions", 0)))
    ledger = [e for e in state.get("attached", []) if isinstance(e, list) and len(e) == 2]
    held = set(transcript.recalled)
    held |= {str(i) for i, at in ledger if isinstance(at, int) and at >= compactions}
    memory = ctx.memory(root)
    index = ""
    try:
        found = memory.recall(call.prompt, [{"metadata": {"memdir": {"recalled": sorted(held)}}}])
        if call.client.index_on_prompt and state.get("indexAt") != compactions:
            index = index_block(memory.agent.prompt_index())
    except Locked:
        return _locked(call, ctx, sessions, key)
    if index:
        with sessions.update(key) as fresh:
            fresh["indexAt"] = compactions
    if found.count:
        with sessions.update(key) as fresh:
            kept = [
                e
                for e in fresh.get("attached", [])
                if isinstance(e, list) and len(e) == 2 and isinstance(e[1], int)
                if e[1] >= compactions
            ]
            fresh["attached"] = kept + [[i, compactions] for i in found.note_ids]
            fresh["compactions"] = compactions
    notices = sessions.take_announcements(_project_key(root), key)  # once recall is done
    block = mark_recalled(found.block, found.note_ids) if found.count else ""
    context = "\n".join([index, *(f"memdir: {n}" for n in notices), block]).strip()
    return render(call, context, "; ".join(f"memdir: {n}" for n in notices))


def _extract_later(
    call: HookCall, ctx: HookContext, sessions: Sessions, key: str, root: Path | None
) -> str:
    """Compaction, stop, end: start a background extraction when the user's config asks;
    the agent never waits for the model."""
    limit: int | None = None
    if call.kind == "compact":
        transcript = read_transcript(call.transcript, messages=False)
        with sessions.update(key) as state:
            state["compactions"] = max(transcript.compactions, int(state.get("compactions", 0)))
            state["compactions"] += 1
            state["attached"] = []
        if call.transcript:  # the part about to go: the transcript as it is now
            try:
                limit = Path(call.transcript).stat().st_size
            except OSError:
                limit = None
    settings = ctx.memory(root).settings
    wanted = (
        settings.auto_extract.on_compaction
        if call.kind == "compact"
        else (settings.auto_extract.on_stop)
    )
    if not wanted or not call.transcript:
        return ""
    if not settings.llm.url:
        log_failure(
            ctx.home,
            call.client.name,
            call.event,
            "extraction is on but no model is configured ([llm] url in the user config)",
        )
        return ""
    spawn_extraction(ctx, call, key, root, limit)
    return ""


def spawn_extraction(
    ctx: HookContext, call: HookCall, key: str, root: Path | None, limit: int | None
) -> None:
    """Run `memdir.hooks.background` detached: it outlives the hook and the agent's wait."""
    argv = [
        sys.executable,
        "-m",
        "memdir.hooks.background",
        "--home",
        str(ctx.home),
        "--client",
        call.client.name,
        "--event",
        call.event,
        "--session",
        key,
        "--transcript",
        str(call.transcript),
        "--reason",
        "compaction" if call.kind == "compact" else "stop",
    ]
    if root is not None:
        argv += ["--project", str(root)]
    if limit is not None:
        argv += ["--limit", str(limit)]
    env = dict(ctx.environ)
    env["MEMDIR_HOME"] = str(ctx.home)
    detach(argv, env, root if root is not None else ctx.home)


#: Seconds the warm server waits for another hook of the same project before it declines.
LOCK_WAIT = 2.0


class Declined(Exception):
    """The warm server will not answer this hook (the client answers it in-process)."""


def _encrypted(memory: Memory) -> bool:
    status = memory.crypto.status()
    return status.keyring or any(s.state != "plain" for s in status.scopes)


class Memories(Protocol):
    """Kept memories (the warm server): one per project, each with its lock."""

    def memory(self, root: Path | None) -> tuple[Memory, threading.Lock]: ...

    def forget(self, root: Path | None) -> None: ...

    def decline(self, root: Path | None) -> None: ...


def answer_hook(
    home: Path,
    client: str,
    event: str,
    stdin: bytes,
    environ: Mapping[str, str],
    *,
    memory: Memories | None = None,
) -> str:
    """What the hook prints; every failure is logged and answered with ""."""
    from memdir.hooks.sessions import log_failure

    name = client or "?"
    try:
        from memdir.hooks.clients import parse_call

        call = parse_call(stdin, event, client or None, environ)
        name = call.client.name
        opened: list[Memory] = []
        if memory is None:

            def open_memory(root: Path | None) -> Memory:
                from memdir import Memory

                opened.append(Memory.open(root, home=home))
                return opened[-1]

            try:
                return answer(call, HookContext(home, open_memory, dict(environ)))
            finally:
                for item in opened:
                    with contextlib.suppress(Exception):
                        item.close()
        root = project_of(call)
        kept, lock = memory.memory(root)
        if not lock.acquire(timeout=LOCK_WAIT):
            raise Declined("another hook of this project is still being answered")
        try:
            if _encrypted(kept):
                # Decrypted notes live no longer than the unlock agent keeps the key:
                # never in a process that outlives a lock. Answered in-process instead.
                memory.decline(root)
                raise Declined("an encrypted store is not kept warm")
            ctx = HookContext(home, lambda _: kept, dict(environ))
            try:
                out = answer(call, ctx)
            except BaseException:
                memory.forget(root)  # a failure may leave it damaged: open afresh next time
                raise
        finally:
            lock.release()
        if ctx.locked:
            memory.forget(root)  # reopened after an unlock, not from a locked state
        return out
    except Declined:
        raise
    except Exception as exc:
        from memdir.errors import MemdirError

        detail = str(exc) if isinstance(exc, MemdirError | ValueError) else repr(exc)
        log_failure(home, name, event or "?", f"{type(exc).__name__}: {detail}")
        return ""
