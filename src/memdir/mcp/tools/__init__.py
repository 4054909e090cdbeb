"""The memdir MCP tools, one module per noun, each a handler with its record beside it.

- `search`: memory_search, memory_retrieve;
- `ask`: memory_ask (a grounded answer);
- `notes`: memory_read, memory_read_revision, memory_history, memory_diff, memory_links,
  memory_write, memory_delete;
- `tidy`: memory_tidy, memory_merge;
- `state`: the agent state store's tasks, goals and sessions (state_*).

A handler validates, checks the caller's access, makes one `Memory` (or `State`) call and
formats the result; a failing call is a tool error whose text begins with its kind
(`memdir.mcp.failures`). `TOOLS` lists every record once, in the order `tools/list`
shows them; `memdir.mcp.registry` registers them with the server.
"""

from __future__ import annotations

from memdir.mcp.access import Access
from memdir.mcp.tools import ask, notes, search, state, tidy
from memdir.mcp.tools.record import Tool

__all__ = ["STATE_TOOL_NAMES", "TOOLS", "TOOL_NAMES", "Tool", "tool_named", "usable_tools"]

#: Every tool, in the order a caller is offered them: the note tools, then the state tools.
TOOLS: tuple[Tool, ...] = (
    search.SEARCH,
    search.RETRIEVE,
    ask.ASK,
    notes.READ,
    notes.READ_REVISION,
    notes.HISTORY,
    notes.DIFF,
    notes.LINKS,
    tidy.TIDY,
    notes.WRITE,
    notes.DELETE,
    tidy.MERGE,
    *state.TOOLS,
)
_BY_NAME = {tool.name: tool for tool in TOOLS}

#: The note tools (every server has them; a bundle's manifest lists them).
TOOL_NAMES: tuple[str, ...] = tuple(t.name for t in TOOLS if not t.state)
#: The tools of the agent state store (only a grant with state access is offered them).
STATE_TOOL_NAMES: tuple[str, ...] = tuple(t.name for t in TOOLS if t.state)


def tool_named(name: str) -> Tool | None:
    """The tool called `name`, or None."""
    return _BY_NAME.get(name)


def usable_tools(access: Access) -> frozenset[str]:
    """The tools `access` may call: a read-only caller is not offered write or delete, and
    only a grant with state access is offered the state tools (read: the reading ones)."""
    return frozenset(t.name for t in TOOLS if t.usable(access))
