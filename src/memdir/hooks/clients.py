"""The agent clients whose hooks memdir answers: their event names, what their hook input
holds, and the output each documents for adding context (sources in docs/hooks.md).

Every event maps to one of memdir's kinds:

- ``start``: a run starts (the prompt index, waiting announcements);
- ``prompt``: the user sent a message (recall, or nothing);
- ``compact``: history is about to be compacted (extraction of the part going away);
- ``stop``/``end``: the agent finished its answer or the session ended (extraction);
- ``subagent``: a subagent stopped (never anything).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.clients.hooks import HOOK_CLIENTS, HookSpec, Kind

__all__ = [
    "CLIENTS",
    "HookCall",
    "HookClient",
    "HookInputError",
    "Kind",
    "client_for",
    "parse_call",
    "render",
]

#: The most stdin a hook reads (a hook input is a few kilobytes; a prompt can be long).
MAX_INPUT = 8 << 20
#: A client's hook vocabulary is its install spec (memdir.clients.hooks): one table.
HookClient = HookSpec
CLIENTS: dict[str, HookClient] = HOOK_CLIENTS


class HookInputError(ValueError):
    """The hook input cannot be used (not JSON, an unknown client or event)."""


def client_for(name: str) -> HookClient:
    """The client named `name` (HookInputError for an unknown one)."""
    try:
        return CLIENTS[name]
    except KeyError:
        raise HookInputError(
            f"unknown client {name!r} (choose from {', '.join(sorted(CLIENTS))})"
        ) from None


@dataclass(frozen=True, slots=True)
class HookCall:
    """One hook invocation, read from the client's input."""

    client: HookClient
    event: str
    kind: Kind
    session_id: str
    transcript: str | None
    cwd: Path | None
    prompt: str = ""
    #: Why a run starts ("startup", "resume", "clear", "compact"), when the client says.
    source: str = ""
    subagent: bool = False


def _text(payload: Mapping[str, Any], *names: str) -> str:
    for name in names:
        value = payload.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def _guess(payload: Mapping[str, Any], event: str) -> HookClient:
    """The client, from its input when the command line does not say."""
    if "cursor_version" in payload or "conversation_id" in payload or event[:1].islower():
        return CLIENTS["cursor"]
    if CLIENTS["gemini"].kind(event) and not CLIENTS["claude-code"].kind(event):
        return CLIENTS["gemini"]
    path = _text(payload, "transcript_path")
    if "/.codex/" in path or "turn_id" in payload:
        return CLIENTS["codex"]
    if "/.gemini/" in path:
        return CLIENTS["gemini"]
    return CLIENTS["claude-code"]


def _session(payload: Mapping[str, Any]) -> str:
    """The session's id as the client names it (a number counts too; none: "default")."""
    for name in ("session_id", "conversation_id", "sessionId"):
        value = payload.get(name)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return "default"


def _prompt(payload: Mapping[str, Any]) -> str:
    text = _text(payload, "prompt", "user_prompt", "message")
    if text:
        return text
    request = payload.get("llm_request")  # Gemini's model-level events
    if isinstance(request, Mapping):
        for message in reversed(request.get("messages") or []):
            if isinstance(message, Mapping) and message.get("role") == "user":
                return _text(message, "content")
    return ""


def parse_call(
    stdin: bytes, event: str, client: str | None, environ: Mapping[str, str] | None = None
) -> HookCall:
    """The hook call in `stdin` (the client's JSON) for `event` (as the command line names
    it, or the input's ``hook_event_name``); HookInputError when it cannot be used."""
    environ = os.environ if environ is None else environ
    if len(stdin) > MAX_INPUT:
        raise HookInputError(f"the hook input is over {MAX_INPUT >> 20} MiB")
    try:
        payload = json.loads(stdin.decode("utf-8")) if stdin.strip() else {}
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookInputError(f"the hook input is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise HookInputError("the hook input is not a JSON object")
    event = event or _text(payload, "hook_event_name")
    spec = client_for(client) if client else _guess(payload, event)
    kind = spec.kind(event)
    if kind is None:
        raise HookInputError(f"{spec.title} has no event {event!r} that memdir answers")
    cwd_text = _text(payload, "cwd")
    roots = payload.get("workspace_roots")
    if not cwd_text and isinstance(roots, list) and roots and isinstance(roots[0], str):
        cwd_text = roots[0]
    if not cwd_text:
        cwd_text = next((environ[v] for v in spec.project_vars if environ.get(v)), "")
    subagent = kind == "subagent" or bool(_text(payload, "agent_id", "parent_session_id"))
    return HookCall(
        client=spec,
        event=event,
        kind=kind,
        session_id=_session(payload),
        transcript=_text(payload, "transcript_path", "transcriptPath") or None,
        cwd=Path(cwd_text) if cwd_text else None,
        prompt=_prompt(payload),
        source=_text(payload, "source", "reason", "trigger"),
        subagent=subagent,
    )


def render(call: HookCall, context: str, notice: str) -> str:
    """The client's output: `context` added for the model, `notice` shown to the user;
    "" when there is neither (the normal case: the client goes on unchanged)."""
    if not context and not notice:
        return ""
    from memdir.guard import redact

    # Notes written by hand never passed the guard: nothing a hook prints holds a credential.
    context, notice = redact(context), redact(notice)
    out: dict[str, Any] = {}
    if call.client.shape == "flat":  # Cursor
        if call.kind == "start" and context:
            out["additional_context"] = context
        if call.kind == "prompt":
            out["continue"] = True
            if context:  # not in Cursor's documented output; builds that read it use it
                out["additional_context"] = context
        elif notice:
            out["user_message"] = notice
        return json.dumps(out, ensure_ascii=False) if out else ""
    if context and call.kind in ("start", "prompt"):
        out["hookSpecificOutput"] = {"hookEventName": call.event, "additionalContext": context}
    if notice:
        out["systemMessage"] = notice
    return json.dumps(out, ensure_ascii=False) if out else ""
