"""When an extraction pass runs (§4.3) and which messages it reads: onStop, onCompaction, resume.

The host keeps an `ExtractionState` per session (JSON via `to_dict`/`from_dict`): how far
the last pass read. A pass reads only what lies beyond it, so a resumed session counts
from where it resumed and nothing is read (or paid for) twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from memdir.config import AutoExtractSettings

__all__ = [
    "ExtractionState",
    "Reason",
    "Window",
    "is_user_turn",
    "message_id",
    "message_text",
    "plan_window",
]

Reason = Literal["stop", "compaction"]
_TOOL_RESULT_KEYS = ("toolResult", "tool_result", "isToolResult", "is_tool_result")


@dataclass(frozen=True, slots=True)
class ExtractionState:
    """How far the passes of one session have read: a message count and the last message's id.

    `read_count` is the number of leading messages already read; `last_id`, when messages
    carry ids, names the last of them, so the position survives compaction and resumes
    that change the list's length.
    """

    read_count: int = 0
    last_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable record for the host to persist."""
        return {"readCount": self.read_count, "lastId": self.last_id}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ExtractionState:
        """The state `to_dict` wrote; anything malformed reads as 'nothing read yet'."""
        if not isinstance(data, Mapping):
            return cls()
        count = data.get("readCount", 0)
        last = data.get("lastId")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            count = 0
        return cls(count, last if isinstance(last, str) and last else None)

    @classmethod
    def resumed(cls, conversation: Sequence[Mapping[str, Any]]) -> ExtractionState:
        """For a session resumed without a stored state: count only what comes after now."""
        last = message_id(conversation[-1]) if conversation else None
        return cls(len(conversation), last)

    def start(self, conversation: Sequence[Mapping[str, Any]]) -> int:
        """The index of the first message no pass has read.

        By id when the last read message is still there; when it carried an id that is
        gone (compacted away), everything left is unread; otherwise by count.
        """
        if self.last_id is not None:
            for index in range(len(conversation) - 1, -1, -1):
                if message_id(conversation[index]) == self.last_id:
                    return index + 1
            if any(message_id(m) is not None for m in conversation):
                return 0
        return min(self.read_count, len(conversation))

    def compacted(self, discarded: int, added: int = 0) -> ExtractionState:
        """The state once the host dropped `discarded` leading messages and put `added` first.

        Needed only when messages carry no ids (with ids the position is found again).
        """
        return ExtractionState(max(0, self.read_count - discarded) + added, self.last_id)

    def after(self, conversation: Sequence[Mapping[str, Any]], end: int) -> ExtractionState:
        """The state once a pass has read `conversation[:end]`."""
        return ExtractionState(end, message_id(conversation[end - 1]) if end > 0 else None)


@dataclass(frozen=True, slots=True)
class Window:
    """The messages one pass reads, `conversation[start:end]`, or why no pass runs."""

    start: int
    end: int
    user_turns: int
    skipped: str | None = None


def message_id(message: Mapping[str, Any]) -> str | None:
    """A message's id (`id`, or `metadata.id`), if it has one."""
    raw = message.get("id")
    if raw is None:
        meta = message.get("metadata")
        raw = meta.get("id") if isinstance(meta, Mapping) else None
    return raw if isinstance(raw, str) and raw else None


def message_text(message: Mapping[str, Any]) -> str:
    """A message's text: a string `content`, or the text blocks of a list of blocks."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
        parts = [
            block["text"]
            for block in content
            if isinstance(block, Mapping)
            and block.get("type") in ("text", None)
            and isinstance(block.get("text"), str)
        ]
        return "\n".join(parts)
    return ""


def _is_tool_result(message: Mapping[str, Any]) -> bool:
    meta = message.get("metadata")
    if isinstance(meta, Mapping) and any(meta.get(k) for k in _TOOL_RESULT_KEYS):
        return True
    if message.get("tool_call_id") is not None or message.get("tool_use_id") is not None:
        return True
    content = message.get("content")
    return (
        isinstance(content, Sequence)
        and not isinstance(content, str | bytes | bytearray)
        and any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content)
    )


def is_user_turn(message: Mapping[str, Any]) -> bool:
    """A real user message: role user, some text, not a tool result."""
    if not isinstance(message, Mapping) or message.get("role") != "user":
        return False
    return bool(message_text(message).strip()) and not _is_tool_result(message)


def plan_window(
    conversation: Sequence[Mapping[str, Any]],
    state: ExtractionState,
    settings: AutoExtractSettings,
    *,
    reason: Reason,
    is_subagent: bool,
    force: bool,
    discard: int | None,
) -> Window:
    """Which messages a pass reads, or a `skipped` reason when none runs.

    onStop reads everything unread once `min_user_turns` real user messages are among it;
    onCompaction reads the unread part of the first `discard` messages (those about to be
    dropped; default all), however short. `force` ignores the switches and the minimum.
    """
    total = len(conversation)
    end = total if reason == "stop" or discard is None else max(0, min(discard, total))
    start = min(state.start(conversation), end)
    turns = sum(1 for m in conversation[start:end] if is_user_turn(m))

    def skip(why: str) -> Window:
        return Window(start, end, turns, why)

    if is_subagent:
        return skip("extraction never runs in a subagent")
    if reason not in ("stop", "compaction"):
        return skip(f"unknown trigger {reason!r}")
    if not force:
        switched_on = settings.on_stop if reason == "stop" else settings.on_compaction
        key = "onStop" if reason == "stop" else "onCompaction"
        if not switched_on:
            return skip(f"memory.autoExtract.{key} is off (switch it on in the user config)")
        if reason == "stop" and turns < settings.min_user_turns:
            return skip(
                f"{turns} new user message{'s' if turns != 1 else ''} since the last pass; "
                f"memory.autoExtract.minUserTurns is {settings.min_user_turns}"
            )
    if start >= end or not any(message_text(m).strip() for m in conversation[start:end]):
        return skip("nothing new since the last pass")
    return Window(start, end, turns)
