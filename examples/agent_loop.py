"""A minimal agent loop with memdir memory, against any OpenAI-compatible chat model.

What it shows, in order:

1. the system prompt = memdir's guidance + the prompt index (one line per note, §4.1);
2. each user message gets the notes recalled for it (§4.2) attached in its own block,
   while the history keeps the user's own words and the recall metadata;
3. the model may call two tools, ``memory_search`` and ``memory_write``, mapped to
   ``Memory.search`` and ``Memory.remember`` (the credential guard refuses secrets);
4. at the end of the run, one extraction pass (§4.3) — if the user config switched
   ``memory.autoExtract.onStop`` on, or ``--extract`` forces it — and its announcement.

Run (the key is read from the environment variable you name, never passed on the line)::

    export OPENAI_API_KEY=...
    python examples/agent_loop.py --url https://api.openai.com/v1 --model gpt-4o-mini \\
        --key-env OPENAI_API_KEY --project . "What do you remember about our deploys?"

    # a local model (plain HTTP is allowed to loopback only):
    python examples/agent_loop.py --url http://127.0.0.1:11434/v1 --model llama3.2

With no message arguments it reads one message per line from standard input.
Defaults come from MEMDIR_LLM_URL, MEMDIR_LLM_MODEL and MEMDIR_LLM_KEY_ENV.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from memdir import Memory
from memdir.errors import MemdirError
from memdir.extract import ExtractionState, HttpChatClient

MAX_TOOL_ROUNDS = 6

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "memory_search",
            "description": "Search long-term memory notes; returns ids, summaries and snippets.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 20},
                },
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "memory_write",
            "description": (
                "Write a long-term memory note (or update note `id`). One fact per note; "
                "never secrets."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "summary": {"type": "string", "description": "one line stating the fact"},
                    "body": {"type": "string", "description": "why, and how to apply it"},
                    "type": {
                        "type": "string",
                        "enum": ["user", "feedback", "project", "reference"],
                    },
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "id": {"type": "string", "description": "only to update an existing note"},
                },
                "required": ["summary"],
            },
        },
    },
]


def system_prompt(memory: Memory) -> str:
    """memdir's guidance followed by the prompt index."""
    return (
        "You are a helpful assistant with long-term memory.\n\n"
        f"{memory.agent.guidance()}\n"
        f"Memory notes (summary, id, type):\n{memory.agent.prompt_index()}"
    )


def run_tool(memory: Memory, name: str, raw_arguments: str) -> str:
    """One tool call mapped to the Memory API; errors go back to the model as text."""
    try:
        args = json.loads(raw_arguments or "{}")
        if not isinstance(args, dict):
            raise ValueError("arguments must be a JSON object")
        if name == "memory_search":
            hits = memory.search(str(args["query"]), limit=int(args.get("limit", 5)))
            return json.dumps(
                [{"id": h.note_id, "summary": h.summary, "snippet": h.snippet} for h in hits]
            )
        if name == "memory_write":
            result = memory.remember(
                str(args["summary"]),
                body=args.get("body"),
                type=args.get("type"),
                tags=args.get("tags"),
                id=args.get("id"),
            )
            return json.dumps(
                {
                    "id": result.note.id,
                    "created": result.created,
                    "likely_duplicate_of": result.duplicate_of,
                    "dangling_links": list(result.dangling_links),
                }
            )
        return json.dumps({"error": f"unknown tool {name}"})
    except (MemdirError, KeyError, ValueError, TypeError) as exc:
        return json.dumps({"error": str(exc)})


def answer(
    memory: Memory,
    client: HttpChatClient,
    history: list[dict[str, Any]],
    text: str,
) -> str:
    """Send one user message (with its recalled notes) and run tool calls to an answer."""
    recall = memory.recall(text, history)
    if recall.label:
        print(f"  ({recall.label})", file=sys.stderr)
    # The history keeps the user's words and the recall metadata (so a note is not
    # attached twice); the model sees the recalled block in front of them.
    history.append({"role": "user", "content": text, "metadata": recall.metadata})
    wire = [{"role": "system", "content": system_prompt(memory)}]
    wire += [_to_wire(m) for m in history[:-1]]
    wire.append({"role": "user", "content": f"{recall.block}\n\n{text}" if recall.block else text})
    for _ in range(MAX_TOOL_ROUNDS):
        message = client.message(wire, tools=TOOLS)
        calls = message.get("tool_calls") or []
        content = message.get("content") or ""
        assistant = {"role": "assistant", "content": content}
        if calls:
            assistant["tool_calls"] = calls
        wire.append(assistant)
        history.append(assistant)
        if not calls:
            return str(content)
        for call in calls:
            function = call.get("function", {})
            result = run_tool(memory, str(function.get("name")), function.get("arguments", ""))
            tool_message = {"role": "tool", "tool_call_id": call.get("id"), "content": result}
            wire.append(tool_message)
            history.append(tool_message)
    return "(stopped: too many tool calls in a row)"


def _to_wire(message: dict[str, Any]) -> dict[str, Any]:
    """A history message as the chat API takes it (without memdir's metadata)."""
    return {k: v for k, v in message.items() if k != "metadata"}


def messages_from(args: argparse.Namespace) -> Iterator[str]:
    if args.message:
        yield from args.message
        return
    for line in sys.stdin:
        if line.strip():
            yield line.rstrip("\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message", nargs="*", help="user messages (default: stdin lines)")
    parser.add_argument("--url", default=os.environ.get("MEMDIR_LLM_URL"))
    parser.add_argument("--model", default=os.environ.get("MEMDIR_LLM_MODEL"))
    parser.add_argument(
        "--key-env",
        default=os.environ.get("MEMDIR_LLM_KEY_ENV"),
        help="NAME of the environment variable holding the API key",
    )
    parser.add_argument("--project", default=".", help="project directory (default: .)")
    parser.add_argument("--home", default=None, help="MEMDIR_HOME (default: env or ~/.memdir)")
    parser.add_argument(
        "--extract", action="store_true", help="extract at the end even if onStop is off"
    )
    args = parser.parse_args(argv)
    if not args.url or not args.model:
        parser.error("--url and --model are required (or MEMDIR_LLM_URL / MEMDIR_LLM_MODEL)")

    # Each run is a new conversation, so no pass has read any of it yet. A host that keeps
    # a session across runs persists `result.state.to_dict()` with the session's messages.
    state = ExtractionState()
    with (
        Memory.open(args.project, home=args.home) as memory,
        HttpChatClient(args.url, args.model, api_key_env=args.key_env) as client,
    ):
        history: list[dict[str, Any]] = []
        for text in messages_from(args):
            print(f"> {text}")
            print(answer(memory, client, history, text))
        result = memory.agent.extract(history, client, state=state, force=args.extract)
        if result.error:
            print(f"extraction: {result.error}", file=sys.stderr)
        elif result.skipped:
            print(f"extraction skipped: {result.skipped}", file=sys.stderr)
        for dropped in result.dropped:
            print(f"extraction dropped notes[{dropped.index}]: {dropped.reason}", file=sys.stderr)
        if result.announcement:
            print(result.announcement)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
