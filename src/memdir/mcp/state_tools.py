"""The MCP tools of the agent state store (§8.3): check the state access, validate, make
one `State` call, format the result.

Only a grant that names state access opens these tools (`memdir.mcp.access.Access.state`):
read lists and gets tasks, goals and sessions; read_write also creates, updates and closes
them and records sessions. A caller without it is not offered them, and one that calls
anyway is refused with the grant to ask for. Arguments are checked before the SDK sees
them (an unknown argument is refused too, not ignored), with each problem said in one line.
`memdir.state` is imported, and the store (`$MEMDIR_HOME/state/state.sqlite3`, the one
`memdir state` opens) opened, on the first state call: the server's start-up pays nothing.
Every write goes through the store's no-credential guard and appends to its audit table
under the actor `mcp:<grant id>`.
"""

from __future__ import annotations

import collections
import functools
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

from memdir.core import AccessLevel
from memdir.errors import InvalidInput, MemdirError, NotFound, Refused
from memdir.mcp.access import CURRENT, Access
from memdir.mcp.failures import ErrorKind, ToolArguments, error_result, error_text
from memdir.mcp.models import (
    GoalListOut,
    GoalOut,
    SessionListOut,
    SessionOut,
    TaskListOut,
    TaskOut,
)
from memdir.mcp.state_arguments import (
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
    StrictArguments,
    Summary,
    TaskId,
    Title,
)

if TYPE_CHECKING:
    from memdir.state import State

__all__ = [
    "STATE_TOOL_NAMES",
    "StateStores",
    "StateTools",
    "register_state_tools",
    "state_refusal",
    "usable_state_tools",
]

_log = logging.getLogger(__name__)

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


def _access() -> Access:
    access = CURRENT.get()
    if access is None:  # the server sets it before every dispatch; refuse if it did not
        raise Refused("no access was resolved for this call")
    return access


def _actor(access: Access) -> str:
    return f"mcp:{access.grant_id}" if access.grant_id else "mcp"


def _cut(text: str) -> str:
    return text if len(text) <= BRIEF_NOTES else text[: BRIEF_NOTES - 1] + "…"


class StateTools:
    """The state tool functions of one server, bound to its `StateStores`."""

    def __init__(self, stores: StateStores) -> None:
        self.stores = stores

    def _state(self, *, write: bool) -> State:
        access = _access()
        access.require_state(write)
        return self.stores.get(_actor(access))

    # -- tasks ----------------------------------------------------------------------------

    def state_task_list(
        self,
        status: Annotated[Status | None, Field(description="Only tasks of this status.")] = None,
        goal_id: Annotated[GoalId | None, Field(description="Only tasks of this goal.")] = None,
        include_closed: IncludeClosed = False,
        limit: Limit = 50,
    ) -> TaskListOut:
        tasks = self._state(write=False).list_tasks(
            status=status, goal_id=goal_id, include_closed=include_closed, limit=limit + 1
        )
        shown = [TaskOut.of(t).model_copy(update={"notes": _cut(t.notes)}) for t in tasks[:limit]]
        return TaskListOut(tasks=shown, truncated=len(tasks) > limit)

    def state_task_get(self, id: TaskId) -> TaskOut:
        return TaskOut.of(self._state(write=False).get_task(id))

    def state_task_create(
        self,
        title: Title,
        notes: Notes = "",
        priority: Priority = 0,
        status: Annotated[Status, Field(description="Default: open.")] = "open",
        goal_id: Annotated[GoalId | None, Field(description="The goal it serves.")] = None,
        fields: Fields = None,
    ) -> TaskOut:
        task = self._state(write=True).add_task(
            title, notes=notes, priority=priority, status=status, goal_id=goal_id, fields=fields
        )
        return TaskOut.of(task)

    def state_task_update(
        self,
        id: TaskId,
        title: Title | None = None,
        notes: Notes | None = None,
        priority: Priority | None = None,
        status: Annotated[Status | None, Field(description="done or dropped closes it.")] = None,
        goal_id: Annotated[GoalId | None, Field(description="Move it to this goal.")] = None,
        fields: Fields = None,
    ) -> TaskOut:
        _something(
            title=title,
            notes=notes,
            priority=priority,
            status=status,
            goal_id=goal_id,
            fields=fields,
        )
        task = self._state(write=True).update_task(
            id,
            title=title,
            notes=notes,
            priority=priority,
            status=status,
            goal_id=goal_id,
            fields=fields,
        )
        return TaskOut.of(task)

    def state_task_close(self, id: TaskId, status: CloseStatus = "done") -> TaskOut:
        return TaskOut.of(self._state(write=True).close_task(id, status=status))

    # -- goals ----------------------------------------------------------------------------

    def state_goal_list(
        self,
        status: Annotated[Status | None, Field(description="Only goals of this status.")] = None,
        include_closed: IncludeClosed = False,
        limit: Limit = 50,
    ) -> GoalListOut:
        goals = self._state(write=False).list_goals(
            status=status, include_closed=include_closed, limit=limit + 1
        )
        shown = [GoalOut.of(g).model_copy(update={"notes": _cut(g.notes)}) for g in goals[:limit]]
        return GoalListOut(goals=shown, truncated=len(goals) > limit)

    def state_goal_get(self, id: GoalId) -> GoalOut:
        return GoalOut.of(self._state(write=False).get_goal(id))

    def state_goal_create(
        self,
        title: Title,
        notes: Notes = "",
        priority: Priority = 0,
        status: Annotated[Status, Field(description="Default: open.")] = "open",
        fields: Fields = None,
    ) -> GoalOut:
        goal = self._state(write=True).add_goal(
            title, notes=notes, priority=priority, status=status, fields=fields
        )
        return GoalOut.of(goal)

    def state_goal_update(
        self,
        id: GoalId,
        title: Title | None = None,
        notes: Notes | None = None,
        priority: Priority | None = None,
        status: Annotated[Status | None, Field(description="done or dropped closes it.")] = None,
        fields: Fields = None,
    ) -> GoalOut:
        _something(title=title, notes=notes, priority=priority, status=status, fields=fields)
        goal = self._state(write=True).update_goal(
            id, title=title, notes=notes, priority=priority, status=status, fields=fields
        )
        return GoalOut.of(goal)

    def state_goal_close(self, id: GoalId, status: CloseStatus = "done") -> GoalOut:
        return GoalOut.of(self._state(write=True).close_goal(id, status=status))

    # -- sessions -------------------------------------------------------------------------

    def state_session_record(
        self,
        agent: Agent,
        summary: Summary = "",
        started_at: Annotated[Millis | None, Field(description="Default: now.")] = None,
        ended_at: Annotated[Millis | None, Field(description="When it ended, if it has.")] = None,
        fields: Fields = None,
    ) -> SessionOut:
        session = self._state(write=True).record_session(
            agent, summary, started_at=started_at, ended_at=ended_at, fields=fields
        )
        return SessionOut.of(session)

    def state_session_list(
        self,
        agent: Annotated[Agent | None, Field(description="Only this agent's sessions.")] = None,
        limit: Limit = 50,
    ) -> SessionListOut:
        sessions = self._state(write=False).list_sessions(agent=agent, limit=limit + 1)
        shown = [
            SessionOut.of(s).model_copy(update={"summary": _cut(s.summary)})
            for s in sessions[:limit]
        ]
        return SessionListOut(sessions=shown, truncated=len(sessions) > limit)


def _something(**given: object) -> None:
    """Refuse an update that changes nothing (the store would still audit it as a write)."""
    if all(value is None or value == {} for value in given.values()):
        raise InvalidInput("nothing to change: give at least one of " + ", ".join(given))


# -- registration -----------------------------------------------------------------------

_READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_ADD = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
#: An update replaces values the store keeps no history of.
_REPLACE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
_CLOSE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

_GRANT = " Needs a grant with state access read{}."
_DESCRIPTIONS: dict[str, tuple[str, ToolAnnotations]] = {
    "state_task_list": (
        "The agent's tasks in memdir's state store: open ones (or `status`, or "
        "`include_closed`), highest priority first, then oldest; notes cut to 280 characters "
        "(state_task_get gives a task whole). `truncated` says more match than `limit`.",
        _READ,
    ),
    "state_task_get": ("One task of the agent state store, whole, by id.", _READ),
    "state_task_create": (
        "Create a task in the agent state store (optionally under a goal: `goal_id`); returns "
        "it with its id. Never put credentials in it: the store refuses secret-sounding field "
        "names and secret values.",
        _ADD,
    ),
    "state_task_update": (
        "Change the given parts of a task (title, notes, priority, status, goal, fields: merged, "
        "an empty value removes one); returns it. The old values are not kept.",
        _REPLACE,
    ),
    "state_task_close": ("Close a task as done (default) or dropped; returns it.", _CLOSE),
    "state_goal_list": (
        "The agent's goals in memdir's state store: open ones (or `status`, or "
        "`include_closed`), highest priority first, then oldest; notes cut to 280 characters "
        "(state_goal_get gives a goal whole).",
        _READ,
    ),
    "state_goal_get": ("One goal of the agent state store, whole, by id.", _READ),
    "state_goal_create": (
        "Create a goal in the agent state store; returns it with its id (tasks name it as "
        "`goal_id`). Never put credentials in it.",
        _ADD,
    ),
    "state_goal_update": (
        "Change the given parts of a goal (title, notes, priority, status, fields); returns it. "
        "The old values are not kept.",
        _REPLACE,
    ),
    "state_goal_close": ("Close a goal as done (default) or dropped; returns it.", _CLOSE),
    "state_session_record": (
        "Record one session of an agent (who, when, a summary of what it did) in the agent "
        "state store; returns it with its id.",
        _ADD,
    ),
    "state_session_list": (
        "Recorded agent sessions, most recent first (summaries cut to 280 characters).",
        _READ,
    ),
}

STATE_TOOL_NAMES: tuple[str, ...] = tuple(_DESCRIPTIONS)
_READING = frozenset(n for n, (_, a) in _DESCRIPTIONS.items() if a.read_only_hint)


def usable_state_tools(access: Access) -> frozenset[str]:
    """The state tools `access` may call: none without state access, the reading ones with
    state read, all with state read_write."""
    if access.state is None:
        return frozenset()
    if access.state is AccessLevel.READ:
        return _READING
    return frozenset(STATE_TOOL_NAMES)


def state_refusal(access: Access, name: str) -> str | None:
    """Why `access` may not call the tool `name` (a tool error's text), or None: it may, or
    `name` is no state tool. The server asks before dispatch, so a caller is told which
    grant to ask for even where the state tools are not registered at all."""
    if name not in _DESCRIPTIONS:
        return None
    try:
        access.require_state(write=name not in _READING)
    except Refused as exc:
        return error_text(exc)
    return None


def _error_text(exc: MemdirError) -> str:
    """A state error as `memdir.mcp.failures` says it; not found names the tools that give
    the ids (the note tools' next step would send the agent the wrong way)."""
    if isinstance(exc, NotFound) and exc.hint is None:
        return f"{ErrorKind.NOT_FOUND}: {exc} (state_task_list and state_goal_list give the ids)"
    return error_text(exc)


def _wrap(fn: Callable[..., Any], limiter: anyio.CapacityLimiter) -> Callable[..., Any]:
    """An async tool running `fn` in a worker thread, one state call at a time (`limiter`:
    the store's connections are not shared between concurrent calls); a memdir error
    becomes a tool error that begins with its kind, anything else an `internal:` one."""

    @functools.wraps(fn)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await anyio.to_thread.run_sync(
                functools.partial(fn, *args, **kwargs), limiter=limiter
            )
        except MemdirError as exc:
            return error_result(_error_text(exc))
        except Exception:
            _log.exception("MCP tool %s failed", fn.__name__)
            return error_result(
                f"internal: {fn.__name__} failed unexpectedly; nothing more is said here "
                "(the server's log, its standard error, has the details)"
            )

    return call


def register_state_tools(
    server: MCPServer[Any], stores: StateStores, limiter: anyio.CapacityLimiter
) -> ToolArguments:
    """Add the state tools to `server`; returns the checker of their arguments."""
    tools = StateTools(stores)
    arguments = StrictArguments()
    for name, (description, hints) in _DESCRIPTIONS.items():
        fn = getattr(tools, name)
        arguments.add(name, fn)
        write = "" if hints.read_only_hint else "_write"
        server.add_tool(
            _wrap(fn, limiter),
            name=name,
            title=name.replace("_", " "),
            description=description + _GRANT.format(write),
            annotations=hints,
            structured_output=True,
        )
    return arguments
