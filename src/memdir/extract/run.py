"""One extraction pass (§4.3): trigger rules, prompt, one model call, checked application.

A pass never raises for what the model or the endpoint did: failures come back in
`ExtractionResult.error`, so a host can call it at every stop or compaction safely.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memdir.errors import EXIT_ERROR, EXIT_REFUSED, MemdirError, describe
from memdir.extract.apply import AnswerRejected, Dropped, apply_answer
from memdir.extract.host import ExtractHost
from memdir.extract.llm import ChatClient, client_from_settings
from memdir.extract.prompt import build_prompt
from memdir.extract.triggers import ExtractionState, Reason, plan_window

__all__ = ["ExtractionResult", "announcement", "extract"]


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    """What one pass did; `state` is what the host persists for the next pass."""

    state: ExtractionState
    created: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    redactions: int = 0
    warnings: tuple[str, ...] = ()
    error: str | None = None
    #: The exit code `error` means, as for `ask`: 1 no model or it failed, 4 its answer
    #: was refused (0 when there is no error).
    error_exit: int = 0
    skipped: str | None = None
    announcement: str = ""

    @property
    def ran(self) -> bool:
        """Whether the model was asked (a skipped pass costs nothing)."""
        return self.skipped is None

    @property
    def saved(self) -> int:
        """Notes created plus notes updated."""
        return len(self.created) + len(self.updated)


def announcement(saved: int) -> str:
    """The line shown at the next message: "saved N memories from this conversation"."""
    if saved <= 0:
        return ""
    return f"saved {saved} {'memory' if saved == 1 else 'memories'} from this conversation"


def extract(
    memory: ExtractHost,
    conversation: Sequence[Mapping[str, Any]],
    llm: ChatClient | None = None,
    *,
    state: ExtractionState | None = None,
    reason: Reason = "stop",
    is_subagent: bool = False,
    force: bool = False,
    discard: int | None = None,
) -> ExtractionResult:
    """Run one pass over the messages of `conversation` no pass has read, if the rules allow.

    `llm` defaults to the endpoint of the user config (`llm.*`). `discard` (compaction):
    how many leading messages are about to be dropped (default: all). `force` runs
    whatever `memory.autoExtract` says (manual use); subagents never extract.
    """
    before = state or ExtractionState()
    window = plan_window(
        conversation,
        before,
        memory.settings.auto_extract,
        reason=reason,
        is_subagent=is_subagent,
        force=force,
        discard=discard,
    )
    if window.skipped is not None:
        return ExtractionResult(before, skipped=window.skipped)
    own_client = None
    try:
        if llm is None:
            llm = own_client = client_from_settings(memory.settings.llm)
        ctx = build_prompt(memory, conversation, window.start, window.end)
        answer = llm.complete(ctx.messages, json_mode=True)
    except MemdirError as exc:
        # Not advanced: the same messages are read again by the next pass.
        return ExtractionResult(before, error=describe(exc), error_exit=exc.exit_code)
    except Exception as exc:  # a host-supplied client: its failure must not break the host
        return ExtractionResult(
            before, error=f"the model call failed: {type(exc).__name__}", error_exit=EXIT_ERROR
        )
    finally:
        if own_client is not None:
            own_client.close()
    # The model has read these messages: whatever it answered, they are not paid for again.
    after = before.after(conversation, window.end)
    try:
        applied = apply_answer(memory, ctx, answer)
    except AnswerRejected as exc:
        return ExtractionResult(after, error=str(exc), error_exit=EXIT_REFUSED)
    saved = len(applied.created) + len(applied.updated)
    return ExtractionResult(
        after,
        created=applied.created,
        updated=applied.updated,
        dropped=applied.dropped,
        redactions=applied.redactions,
        warnings=applied.warnings,
        announcement=announcement(saved),
    )
