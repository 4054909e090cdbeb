"""The arguments of the state tools (`memdir.mcp.tools.state`): their types, bounds and
checks, each problem said in one line (`invalid: fields.area: longer than 10000
characters`); an argument a tool does not take is refused, as for every tool
(`memdir.mcp.failures.ToolArguments`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema

from memdir.core.vocab import ItemStatus, choices

__all__ = [
    "MAX_FIELDS",
    "MAX_FIELD_NAME",
    "MAX_FIELD_VALUE",
    "MAX_LIST",
    "MAX_MS",
    "MAX_NAME",
    "MAX_PRIORITY",
    "MAX_TEXT",
    "MAX_TITLE",
    "STATUSES",
    "Agent",
    "CloseStatus",
    "Fields",
    "GoalId",
    "IncludeClosed",
    "Limit",
    "Millis",
    "Notes",
    "Priority",
    "Status",
    "Summary",
    "TaskId",
    "Title",
]

#: The statuses of tasks and goals, and those that close one.
STATUSES = choices(ItemStatus)
_CLOSED = tuple(status.value for status in ItemStatus if status.closed)

MAX_TITLE = 1_000
#: The store's own limit on notes and summaries.
MAX_TEXT = 100_000
MAX_NAME = 200
MAX_FIELDS = 50
MAX_FIELD_NAME = 100
MAX_FIELD_VALUE = 10_000
MAX_PRIORITY = 1_000_000
#: 9999-12-31T23:59:59.999Z in Unix milliseconds.
MAX_MS = 253_402_300_799_999
MAX_LIST = 200


def _one_of(names: tuple[str, ...]) -> Callable[[str], str]:
    listed = ", ".join(repr(n) for n in names[:-1]) + f" or {names[-1]!r}"

    def check(value: str) -> str:
        if value not in names:
            raise ValueError(f"expected {listed}")
        return value

    return check


def _item_id(prefix: str, what: str, lister: str) -> Callable[[str], str]:
    pattern = re.compile(rf"{prefix}-[0-9A-Za-z]{{1,60}}")

    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(
                f"expected a {what} id such as {prefix}-1a2b3c4d ({lister} gives them)"
            )
        return value

    return check


def _text(limit: int, *, required: bool) -> Callable[[str], str]:
    def check(value: str) -> str:
        if required and not value.strip():
            raise ValueError("cannot be empty")
        if len(value) > limit:
            raise ValueError(f"longer than {limit} characters")
        return value

    return check


def _integer(low: int, high: int) -> Callable[[object], object]:
    """Refuse true and false where an integer is asked for (pydantic would take them as 1, 0)."""

    def check(value: object) -> object:
        if isinstance(value, bool):
            raise ValueError(f"expected an integer from {low} to {high}")
        return value

    return check


def _field_value(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a string (field values are text)")
    if len(value) > MAX_FIELD_VALUE:
        raise ValueError(f"longer than {MAX_FIELD_VALUE} characters")
    return value


def _mapping(value: object) -> object:
    if value is not None and not isinstance(value, dict):
        raise ValueError("expected an object of named text fields, or null")
    return value


def _fields(value: dict[str, str] | None) -> dict[str, str] | None:
    if value is None:
        return None
    if len(value) > MAX_FIELDS:
        raise ValueError(f"at most {MAX_FIELDS} fields")
    for key in value:
        if not key.strip():
            raise ValueError("a field name cannot be empty")
        if len(key) > MAX_FIELD_NAME:
            raise ValueError(f"a field name is at most {MAX_FIELD_NAME} characters")
    return value


def _bounds(limit: int, *, required: bool) -> dict[str, Any]:
    """The schema bounds of a string argument (checked by `_text`, which says them plainly)."""
    return {"maxLength": limit, **({"minLength": 1} if required else {})}


_STATUS_SCHEMA = Field(json_schema_extra={"enum": list(STATUSES)})
Status = Annotated[str, _STATUS_SCHEMA, AfterValidator(_one_of(STATUSES))]
CloseStatus = Annotated[
    str,
    Field(description="done (the default) or dropped", json_schema_extra={"enum": list(_CLOSED)}),
    AfterValidator(_one_of(_CLOSED)),
]
TaskId = Annotated[
    str,
    Field(description="A task id (from state_task_list)."),
    AfterValidator(_item_id("t", "task", "state_task_list")),
]
GoalId = Annotated[
    str,
    Field(description="A goal id (from state_goal_list)."),
    AfterValidator(_item_id("g", "goal", "state_goal_list")),
]
Title = Annotated[
    str,
    Field(
        description="One line: what is to be done or reached.",
        json_schema_extra=_bounds(MAX_TITLE, required=True),
    ),
    AfterValidator(_text(MAX_TITLE, required=True)),
]
Notes = Annotated[
    str,
    Field(
        description="Free-text notes (Markdown).",
        json_schema_extra=_bounds(MAX_TEXT, required=False),
    ),
    AfterValidator(_text(MAX_TEXT, required=False)),
]
Priority = Annotated[
    int,
    Field(ge=-MAX_PRIORITY, le=MAX_PRIORITY, description="Higher comes first (default 0)."),
    BeforeValidator(_integer(-MAX_PRIORITY, MAX_PRIORITY)),
]
# Checked before pydantic's own type check, so a wrong type is said plainly too.
FieldValue = Annotated[
    str,
    WithJsonSchema({"type": "string", "maxLength": MAX_FIELD_VALUE}),
    BeforeValidator(_field_value),
]
Fields = Annotated[
    dict[str, FieldValue] | None,
    Field(
        description=(
            "Named text fields (never credentials: a secret-sounding name or value is refused). "
            "On update they are merged; an empty value removes the field."
        ),
        json_schema_extra={"maxProperties": MAX_FIELDS},
    ),
    BeforeValidator(_mapping),
    AfterValidator(_fields),
]
Agent = Annotated[
    str,
    Field(description="The agent's name.", json_schema_extra=_bounds(MAX_NAME, required=True)),
    AfterValidator(_text(MAX_NAME, required=True)),
]
Summary = Annotated[
    str,
    Field(description="What the session did.", json_schema_extra=_bounds(MAX_TEXT, required=False)),
    AfterValidator(_text(MAX_TEXT, required=False)),
]
Millis = Annotated[
    int,
    Field(ge=0, le=MAX_MS, description="Unix milliseconds."),
    BeforeValidator(_integer(0, MAX_MS)),
]
Limit = Annotated[
    int,
    Field(ge=1, le=MAX_LIST, description="At most this many (default 50)."),
    BeforeValidator(_integer(1, MAX_LIST)),
]
IncludeClosed = Annotated[bool, Field(description="Also done and dropped ones (default: open).")]
