"""The agent clients' own transcripts, read back: the conversation since the last
compaction and the notes recall attached to it.

Three formats, told apart by their content rather than by the client that named them:

- Claude Code: JSON lines with ``type`` ``user``/``assistant`` (``message.role``,
  ``message.content``, ``uuid``), ``isSidechain`` for a subagent's lines, ``isMeta`` for
  the CLI's own notices, and a compaction as a ``system`` line of subtype
  ``compact_boundary`` followed by a user line marked ``isCompactSummary``;
- Codex rollout files: JSON lines ``{"type": …, "payload": …}`` whose ``response_item``
  messages carry ``input_text``/``output_text`` blocks, and a ``compacted`` line per
  compaction;
- Gemini CLI chat files: one JSON object with ``messages`` of type ``user``/``gemini``.

Hook output the client records (Claude Code keeps it as an attachment line, Codex as a
message) still holds memdir's ``<recalled-memory>`` blocks: their ``## summary [[id]]``
headings say which notes are attached while the lines that carry them remain. A
transcript is read from its end when it is very large; only the part after the last
compaction matters.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Transcript", "read_transcript", "recalled_in_text", "strip_recalled"]

#: At most this much of a transcript is read (its end: what follows the last compaction).
MAX_BYTES = 64 * 1024 * 1024
_OPEN, _CLOSE = "<recalled-memory>", "</recalled-memory>"
_BLOCK = re.compile(re.escape(_OPEN) + r".*?" + re.escape(_CLOSE), re.S)
_HEADING = re.compile(r"^## .*\[\[([^\[\]\s]+)\]\]\s*$", re.M)
#: Messages a client puts in the user's role that the user never wrote (Codex's context).
_INJECTED = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<session_context>",
)
_CLAUDE_COMPACTION = (b'"compact_boundary"', b'"isCompactSummary":true')
_CODEX_COMPACTION = b'"type":"compacted"'


@dataclass(slots=True)
class Transcript:
    """What a transcript holds since its last compaction."""

    #: Messages as ``{"role", "content", "id"}`` dicts (user turns and replies, in order).
    messages: list[dict[str, Any]] = field(default_factory=list)
    #: Note ids recalled into lines that are still in the conversation.
    recalled: set[str] = field(default_factory=set)
    #: How many compactions the transcript records (all of it, not only the tail read).
    compactions: int = 0
    #: The format it was read as ("claude", "codex", "gemini"), "" when unreadable/empty.
    kind: str = ""
    #: Whether it marks itself a subagent's (Codex session meta, Claude sidechain only).
    subagent: bool = False


_ESCAPED_OPEN = html.escape(_OPEN)
#: Gemini CLI wraps hook output in ``<hook_context>`` (escaped) inside the user's message.
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>", re.S)


def recalled_in_text(text: str) -> set[str]:
    """The note ids of every ``<recalled-memory>`` block in `text` (also HTML-escaped, as
    Gemini CLI records hook output)."""
    if _ESCAPED_OPEN in text:
        text = html.unescape(text)
    if _OPEN not in text:
        return set()
    return {m for block in _BLOCK.findall(text) for m in _HEADING.findall(block)}


def strip_recalled(text: str) -> str:
    """`text` without memdir's recalled blocks and the hook output a client folded into
    the user's message (never fed back into extraction)."""
    if "<hook_context>" in text:
        text = _HOOK_CONTEXT.sub("", text)
    return _BLOCK.sub("", text).strip() if _OPEN in text else text.strip()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _recalled_in(value: Any) -> set[str]:
    found: set[str] = set()
    for text in _strings(value):
        found |= recalled_in_text(text)
    return found


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block.get("text")
            for block in content
            if isinstance(block, dict) and block.get("type") in (None, "text", "input_text")
        ]
        parts += [
            block.get("text")
            for block in content
            if isinstance(block, dict) and block.get("type") == "output_text"
        ]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _read_tail(path: Path, limit: int | None) -> tuple[bytes, bool]:
    """The file's bytes up to `limit` (its last MAX_BYTES when more) and whether it was cut."""
    with path.open("rb") as fh:
        size = fh.seek(0, 2)
        if limit is not None:
            size = min(size, max(0, limit))
        start = max(0, size - MAX_BYTES)
        fh.seek(start)
        data = fh.read(size - start)
    if start:
        cut = data.find(b"\n")
        data = data[cut + 1 :] if cut >= 0 else b""
    return data, bool(start)


def _lines(data: bytes) -> Iterator[dict[str, Any]]:
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except (UnicodeDecodeError, ValueError):
            continue  # a line being written, or damage: the rest still counts
        if isinstance(line, dict):
            yield line


def _claude(data: bytes, out: Transcript, *, messages: bool) -> None:
    out.kind = "claude"
    out.compactions = sum(data.count(marker) for marker in _CLAUDE_COMPACTION[:1])
    start = max(data.rfind(marker) for marker in _CLAUDE_COMPACTION)
    if start >= 0:
        data = data[data.find(b"\n", start) + 1 :] if data.find(b"\n", start) >= 0 else b""
    if not messages:  # the prompt hook: only the lines that carry a block
        for raw in data.splitlines():
            if _OPEN.encode() in raw:
                out.recalled |= _recalled_in(next(_lines(raw), None))
        return
    main = side = 0
    for line in _lines(data):
        out.recalled |= _recalled_in(line) if _OPEN in json.dumps(line) else set()
        kind = line.get("type")
        if kind not in ("user", "assistant"):
            continue
        if line.get("isSidechain"):
            side += 1
            continue
        main += 1
        if line.get("isMeta") or line.get("isCompactSummary"):
            continue
        message = line.get("message")
        if not isinstance(message, dict):
            continue
        role = message.get("role", kind)
        content = message.get("content")
        entry: dict[str, Any] = {"role": role, "content": strip_recalled(_text_of(content))}
        if _has_tool_result(content):
            entry["tool_use_id"] = "tool"
        if isinstance(line.get("uuid"), str):
            entry["id"] = line["uuid"]
        if entry["content"] or entry.get("tool_use_id"):
            out.messages.append(entry)
    out.subagent = side > 0 and main == 0  # a subagent's own transcript file


def _codex(data: bytes, out: Transcript, *, messages: bool) -> None:
    out.kind = "codex"
    out.compactions = data.count(_CODEX_COMPACTION)
    start = data.rfind(_CODEX_COMPACTION)
    if start >= 0:
        data = data[data.find(b"\n", start) + 1 :] if data.find(b"\n", start) >= 0 else b""
    for number, line in enumerate(_lines(data)):
        kind, payload = line.get("type"), line.get("payload")
        if not isinstance(payload, dict):
            continue
        if kind == "session_meta":
            source = json.dumps(payload.get("source", ""))
            out.subagent = "subagent" in source
        if _OPEN in json.dumps(payload):
            out.recalled |= _recalled_in(payload)
        if not messages or kind != "response_item" or payload.get("type") != "message":
            continue
        role = payload.get("role")
        if role not in ("user", "assistant"):
            continue
        text = _text_of(payload.get("content"))
        if role == "user" and text.lstrip().startswith(_INJECTED):
            continue
        text = strip_recalled(text)
        if text:
            stamp = line.get("timestamp")
            out.messages.append(
                {"role": role, "content": text, "id": f"{stamp or ''}#{number}:{len(text)}"}
            )


def _gemini_items(data: bytes) -> list[dict[str, Any]]:
    """Gemini CLI's messages: one JSON document (older releases) or JSON lines of records
    and ``{"$set": …}`` patches (a patch of ``messages`` replaces the list)."""
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        doc = None
    if isinstance(doc, dict):
        items = doc.get("messages")
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
    out: list[dict[str, Any]] = []
    for line in _lines(data):
        patch = line.get("$set")
        if isinstance(patch, dict):
            if isinstance(patch.get("messages"), list):
                out = [i for i in patch["messages"] if isinstance(i, dict)]
            continue
        if "type" in line and "id" in line:
            out = [i for i in out if i.get("id") != line["id"]]
            out.append(line)
    return out


def _gemini(data: bytes, out: Transcript, *, messages: bool) -> None:
    out.kind = "gemini"
    head = next(_lines(data[: data.find(b"\n") if b"\n" in data else 0]), None)
    out.subagent = head is not None and head.get("kind") == "subagent"
    for item in _gemini_items(data):
        out.recalled |= _recalled_in(item.get("content"))
        kind = item.get("type")
        if not messages or kind not in ("user", "gemini", "model"):
            continue
        content = item.get("content")
        if isinstance(content, dict):
            content = [content]
        text = strip_recalled(_text_of(content))
        if text and not (kind == "user" and text.startswith(_INJECTED)):
            entry: dict[str, Any] = {"role": "user" if kind == "user" else "assistant"}
            entry["content"] = text
            if isinstance(item.get("id"), str):
                entry["id"] = item["id"]
            out.messages.append(entry)


def read_transcript(
    path: str | Path | None, *, messages: bool = True, limit: int | None = None
) -> Transcript:
    """The transcript at `path` since its last compaction; an empty one when there is no
    such file or it cannot be read. With ``messages=False`` only the recalled ids and the
    compaction count are read (what a prompt hook needs, fast). `limit`: read the file as
    it was at that size (an append-only transcript before a compaction was written)."""
    out = Transcript()
    if not path:
        return out
    try:
        data, _ = _read_tail(Path(path), limit)
    except OSError:
        return out
    first = next(_lines(data[: data.find(b"\n") if b"\n" in data else len(data)]), None)
    # Gemini CLI: JSON lines opening with the session record, or one pretty-printed
    # document (older releases: its first line alone is no JSON object).
    gemini = first is None or "sessionId" in first or "$set" in first
    if gemini and data.strip():
        _gemini(data, out, messages=messages)
    elif first is not None and "payload" in first and "timestamp" in first:
        _codex(data, out, messages=messages)
    elif data.strip():
        _claude(data, out, messages=messages)
    return out
