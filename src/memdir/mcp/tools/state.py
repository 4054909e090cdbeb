"""The MCP tools of the agent state store (§8.3): check the state access, validate, make
one `State` call, format the result.

Only a grant that names state access opens these tools (`memdir.mcp.access.Access.state`):
read lists and gets tasks, goals and sessions; read_write also creates, updates and closes
them and records sessions. A caller without it is not offered them, and one that calls
anyway is refused with the grant to ask for. Arguments are checked before the SDK sees
them (an unknown argument is refused too, not ignored), with each problem said in one line
(`memdir.mcp.tools.state_arguments`).
`memdir.state` is imported, and the store (`$MEMDIR_HOME/state/state.sqlite3`, the one
`memdir state` opens) opened, on the first state call: the server's start-up pays nothing.
Every write goes through the store's no-credential guard and appends to its audit table
under the actor `mcp:<grant id>`.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp_types import ToolAnnotations
from pydantic import Field

from memdir.core import AccessLevel
from memdir.errors import InvalidInput, MemdirError, NotFound
from memdir.mcp.access import Access
from memdir.mcp.failures import ErrorKind, error_text
from memdir.mcp.models import (
    GoalListOut,
    GoalOut,
    SessionListOut,
    SessionOut,
    TaskListOut,
    TaskOut,
)
from memdir.mcp.tools.record import ADDS, READS, REPLACES, SETS, Tool, caller
from memdir.mcp.tools.state_arguments import (
    Agent,
    CloseStatus,
    Fields,
    GoalId,
    IncludeClosed,
    Limit,
    Millis,
    Notes,
    Priority,
    Status,
    Summary,
    TaskId,
    Title,
)

if TYPE_CHECKING:
    from memdir.state import State

__all__ = [
    "BRIEF_NOTES",
    "TOOLS",
    "StateStores",
    "state_error_text",
    "state_goal_close",
    "state_goal_create",
    "state_goal_get",
    "state_goal_list",
    "state_goal_update",
    "state_session_list",
    "state_session_record",
    "state_task_close",
    "state_task_create",
    "state_task_get",
    "state_task_list",
    "state_task_update",
]

#: Notes longer than this are cut in lists (the get tools return them whole).
BRIEF_NOTES = 280
#: Open connections kept (one per actor, i.e. per grant), the least recently used closed.
KEEP_OPEN = 4

# -- the store --------------------------------------------------------------------------


class StateStores:
    """The agent state store of one memdir home, opened on the first state call with one
    connection per actor (the audit table records who wrote); `close` closes them all."""

    def __init__(self, home: Path, *, path: Path | None = None, keep: int = KEEP_OPEN) -> None:
        self.home = home
        #: The SQLite file (None: ``<home>/state/state.sqlite3``, as for `memdir state`).
        self.path = path
        self._keep = max(1, keep)
        self._open: collections.OrderedDict[str, State] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, actor: str) -> State:
        """The store opened as `actor` (opening it on first use)."""
        with self._lock:
            state = self._open.pop(actor, None)
            if state is None:
                from memdir.state import State

                state = State.open(self.path, home=self.home, actor=actor)
            self._open[actor] = state
            while len(self._open) > self._keep:  # calls run one at a time: none is in use
                self._open.popitem(last=False)[1].close()
            return state

    def close(self) -> None:
        """Close every open connection (a later call opens the store again)."""
        with self._lock:
            while self._open:
                self._open.popitem()[1].close()


def _opened(stores: StateStores, *, write: bool) -> State:
    """The store, as the caller's actor, once its state access allows the call."""
    access = caller()
    access.require_state(write)
    return stores.get(_actor(access))


def _actor(access: Access) -> str:
    return f"mcp:{access.grant_id}" if access.grant_id else "mcp"


def _cut(text: str) -> str:
    return text if len(text) <= BRIEF_NOTES else text[: BRIEF_NOTES - 1] + "…"


def _something(**given: object) -> None:
    """Refuse an update that changes nothing (the store would still audit it as a write)."""
    if all(value is None or value == {} for value in given.values()):
        raise InvalidInput("nothing to change: give at least one of " + ", ".join(given))


def state_error_text(exc: MemdirError) -> str:
    """A state error as `memdir.mcp.failures` says it; not found names the tools that give
    the ids (the note tools' next step would send the agent the wrong way)."""
    if isinstance(exc, NotFound) and exc.hint is None:
        return f"{ErrorKind.NOT_FOUND}: {exc} (state_task_list and state_goal_list give the ids)"
    return error_text(exc)


def _tool(
    name: str,
    handler: Callable[..., Any],
    description: str,
    annotations: ToolAnnotations,
    access: AccessLevel,
) -> Tool:
    """A state tool's record: its own not-found text, and the grant it
    needs said at the end of its description."""
    return Tool(
        name,
        handler,
        description=f"{description} Needs a grant with state access {access.value}.",
        annotations=annotations,
        access=access,
        state=True,
        explain=state_error_text,
    )


# -- tasks ------------------------------------------------------------------------------


def state_task_list(
    stores: StateStores,
    status: Annotated[Status | None, Field(description="Only tasks of this status.")] = None,
    goal_id: Annotated[GoalId | None, Field(description="Only tasks of this goal.")] = None,
    include_closed: IncludeClosed = False,
    limit: Limit = 50,
) -> TaskListOut:
    tasks = _opened(stores, write=False).list_tasks(
        status=status, goal_id=goal_id, include_closed=include_closed, limit=limit + 1
    )
    shown = [TaskOut.of(t).model_copy(update={"notes": _cut(t.notes)}) for t in tasks[:limit]]
    return TaskListOut(tasks=shown, truncated=len(tasks) > limit)


TASK_LIST = _tool(
    "state_task_list",
    state_task_list,
    "The agent's tasks in memdir's state store: open ones (or `status`, or "
    f"`include_closed`), highest priority first, then oldest; notes cut to {BRIEF_NOTES} "
    "characters (state_task_get gives a task whole). `truncated` says more match than `limit`.",
    READS,
    AccessLevel.READ,
)


def state_task_get(stores: StateStores, id: TaskId) -> TaskOut:
    return TaskOut.of(_opened(stores, write=False).get_task(id))


TASK_GET = _tool(
    "state_task_get",
    state_task_get,
    "One task of the agent state store, whole, by id.",
    READS,
    AccessLevel.READ,
)


def state_task_create(
    stores: StateStores,
    title: Title,
    notes: Notes = "",
    priority: Priority = 0,
    status: Annotated[Status, Field(description="Default: open.")] = "open",
    goal_id: Annotated[GoalId | None, Field(description="The goal it serves.")] = None,
    fields: Fields = None,
) -> TaskOut:
    task = _opened(stores, write=True).add_task(
        title, notes=notes, priority=priority, status=status, goal_id=goal_id, fields=fields
    )
    return TaskOut.of(task)


TASK_CREATE = _tool(
    "state_task_create",
    state_task_create,
    "Create a task in the agent state store (optionally under a goal: `goal_id`); returns "
    "it with its id. Never put credentials in it: the store refuses secret-sounding field "
    "names and secret values.",
    ADDS,
    AccessLevel.READ_WRITE,
)


def state_task_update(
    stores: StateStores,
    id: TaskId,
    title: Title | None = None,
    notes: Notes | None = None,
    priority: Priority | None = None,
    status: Annotated[Status | None, Field(description="done or dropped closes it.")] = None,
    goal_id: Annotated[GoalId | None, Field(description="Move it to this goal.")] = None,
    fields: Fields = None,
) -> TaskOut:
    _something(
        title=title, notes=notes, priority=priority, status=status, goal_id=goal_id, fields=fields
    )
    task = _opened(stores, write=True).update_task(
        id,
        title=title,
        notes=notes,
        priority=priority,
        status=status,
        goal_id=goal_id,
        fields=fields,
    )
    return TaskOut.of(task)


TASK_UPDATE = _tool(
    "state_task_update",
    state_task_update,
    "Change the given parts of a task (title, notes, priority, status, goal, fields: merged, "
    "an empty value removes one); returns it. The old values are not kept.",
    REPLACES,
    AccessLevel.READ_WRITE,
)


def state_task_close(stores: StateStores, id: TaskId, status: CloseStatus = "done") -> TaskOut:
    return TaskOut.of(_opened(stores, write=True).close_task(id, status=status))


TASK_CLOSE = _tool(
    "state_task_close",
    state_task_close,
    "Close a task as done (default) or dropped; returns it.",
    SETS,
    AccessLevel.READ_WRITE,
)

# -- goals ------------------------------------------------------------------------------


def state_goal_list(
    stores: StateStores,
    status: Annotated[Status | None, Field(description="Only goals of this status.")] = None,
    include_closed: IncludeClosed = False,
    limit: Limit = 50,
) -> GoalListOut:
    goals = _opened(stores, write=False).list_goals(
        status=status, include_closed=include_closed, limit=limit + 1
    )
    shown = [GoalOut.of(g).model_copy(update={"notes": _cut(g.notes)}) for g in goals[:limit]]
    return GoalListOut(goals=shown, truncated=len(goals) > limit)


GOAL_LIST = _tool(
    "state_goal_list",
    state_goal_list,
    "The agent's goals in memdir's state store: open ones (or `status`, or "
    f"`include_closed`), highest priority first, then oldest; notes cut to {BRIEF_NOTES} "
    "characters (state_goal_get gives a goal whole).",
    READS,
    AccessLevel.READ,
)


def state_goal_get(stores: StateStores, id: GoalId) -> GoalOut:
    return GoalOut.of(_opened(stores, write=False).get_goal(id))


GOAL_GET = _tool(
    "state_goal_get",
    state_goal_get,
    "One goal of the agent state store, whole, by id.",
    READS,
    AccessLevel.READ,
)


def state_goal_create(
    stores: StateStores,
    title: Title,
    notes: Notes = "",
    priority: Priority = 0,
    status: Annotated[Status, Field(description="Default: open.")] = "open",
    fields: Fields = None,
) -> GoalOut:
    goal = _opened(stores, write=True).add_goal(
        title, notes=notes, priority=priority, status=status, fields=fields
    )
    return GoalOut.of(goal)


GOAL_CREATE = _tool(
    "state_goal_create",
    state_goal_create,
    "Create a goal in the agent state store; returns it with its id (tasks name it as "
    "`goal_id`). Never put credentials in it.",
    ADDS,
    AccessLevel.READ_WRITE,
)


def state_goal_update(
    stores: StateStores,
    id: GoalId,
    title: Title | None = None,
    notes: Notes | None = None,
    priority: Priority | None = None,
    status: Annotated[Status | None, Field(description="done or dropped closes it.")] = None,
    fields: Fields = None,
) -> GoalOut:
    _something(title=title, notes=notes, priority=priority, status=status, fields=fields)
    goal = _opened(stores, write=True).update_goal(
        id, title=title, notes=notes, priority=priority, status=status, fields=fields
    )
    return GoalOut.of(goal)


GOAL_UPDATE = _tool(
    "state_goal_update",
    state_goal_update,
    "Change the given parts of a goal (title, notes, priority, status, fields); returns it. "
    "The old values are not kept.",
    REPLACES,
    AccessLevel.READ_WRITE,
)


def state_goal_close(stores: StateStores, id: GoalId, status: CloseStatus = "done") -> GoalOut:
    return GoalOut.of(_opened(stores, write=True).close_goal(id, status=status))


GOAL_CLOSE = _tool(
    "state_goal_close",
    state_goal_close,
    "Close a goal as done (default) or dropped; returns it.",
    SETS,
    AccessLevel.READ_WRITE,
)

# -- sessions ---------------------------------------------------------------------------


def state_session_record(
    stores: StateStores,
    agent: Agent,
    summary: Summary = "",
    started_at: Annotated[Millis | None, Field(description="Default: now.")] = None,
    ended_at: Annotated[Millis | None, Field(description="When it ended, if it has.")] = None,
    fields: Fields = None,
) -> SessionOut:
    session = _opened(stores, write=True).record_session(
        agent, summary, started_at=started_at, ended_at=ended_at, fields=fields
    )
    return SessionOut.of(session)


SESSION_RECORD = _tool(
    "state_session_record",
    state_session_record,
    "Record one session of an agent (who, when, a summary of what it did) in the agent "
    "state store; returns it with its id.",
    ADDS,
    AccessLevel.READ_WRITE,
)


def state_session_list(
    stores: StateStores,
    agent: Annotated[Agent | None, Field(description="Only this agent's sessions.")] = None,
    limit: Limit = 50,
) -> SessionListOut:
    sessions = _opened(stores, write=False).list_sessions(agent=agent, limit=limit + 1)
    shown = [
        SessionOut.of(s).model_copy(update={"summary": _cut(s.summary)}) for s in sessions[:limit]
    ]
    return SessionListOut(sessions=shown, truncated=len(sessions) > limit)


SESSION_LIST = _tool(
    "state_session_list",
    state_session_list,
    f"Recorded agent sessions, most recent first (summaries cut to {BRIEF_NOTES} characters).",
    READS,
    AccessLevel.READ,
)

#: The state tools, in the order `tools/list` shows them.
TOOLS: tuple[Tool, ...] = (
    TASK_LIST,
    TASK_GET,
    TASK_CREATE,
    TASK_UPDATE,
    TASK_CLOSE,
    GOAL_LIST,
    GOAL_GET,
    GOAL_CREATE,
    GOAL_UPDATE,
    GOAL_CLOSE,
    SESSION_RECORD,
    SESSION_LIST,
)
