"""The declarative record of one MCP tool, and what every tool module shares.

Each tool module writes its handler — a plain function whose first parameter is what it
works on (the `Memory`, or the agent `StateStores` for a state tool) and whose other
parameters are the tool's arguments — and, right after it, a `Tool` saying its name,
description, annotations and the access it needs. `memdir.mcp.tools.TOOLS` lists every
record once, in the order `tools/list` shows them; `memdir.mcp.registry` registers them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_types import ToolAnnotations

from memdir.core import AccessLevel
from memdir.errors import MemdirError, Refused
from memdir.mcp.access import CURRENT, Access
from memdir.mcp.failures import error_text

__all__ = ["ADDS", "DELETES", "READS", "REPLACES", "SETS", "WRITES", "Tool", "caller"]

#: Reads only, and the same call answers the same.
READS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
#: Writes a note (a backup and the history keep what it replaced).
WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
#: Deletes notes (backed up first).
DELETES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
#: Adds a new item to the agent state store.
ADDS = WRITES
#: Replaces values the agent state store keeps no history of.
REPLACES = DELETES
#: Sets a value that a second call leaves as it is (closing a task).
SETS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


@dataclass(frozen=True, slots=True)
class Tool:
    """One MCP tool: its handler and everything the server says about it.

    `handler(context, **arguments)` makes the call; its signature without `context` is
    the tool's input schema (and its checked arguments), its return annotation the output
    schema. `access` is what the caller needs: of the notes, or — a `state` tool — of the
    agent state store; an argument the handler does not take is refused, never dropped
    (`memdir.mcp.failures.ToolArguments`). `explain` says a memdir error as the tool's
    error text.
    """

    name: str
    handler: Callable[..., Any]
    description: str
    annotations: ToolAnnotations
    access: AccessLevel
    state: bool = False
    explain: Callable[[MemdirError], str] = error_text

    @property
    def title(self) -> str:
        """The name as words (``memory_read`` → ``memory read``)."""
        return self.name.replace("_", " ")

    def parameters(self) -> inspect.Signature:
        """The handler's signature without its context, annotations evaluated: what the
        input schema, the output schema and the argument checks are made from."""
        signature = inspect.signature(self.handler, eval_str=True)
        return signature.replace(parameters=list(signature.parameters.values())[1:])

    def usable(self, access: Access) -> bool:
        """Whether `access` may call this tool (a caller is offered only those)."""
        return access.allows(self.access, state=self.state)

    def refusal(self, access: Access) -> str | None:
        """Why `access` may not call this state tool (a tool error's text), or None: it
        may, or this tool checks its own access when called (the note tools do, saying
        what was not written or removed)."""
        if not self.state:
            return None
        try:
            access.require_state(write=self.access is not AccessLevel.READ)
        except Refused as exc:
            return error_text(exc)
        return None


def caller() -> Access:
    """The access of the call being served (set by the server before any dispatch)."""
    access = CURRENT.get()
    if access is None:  # the server sets it before every dispatch; refuse if it did not
        raise Refused("no access was resolved for this call")
    return access
