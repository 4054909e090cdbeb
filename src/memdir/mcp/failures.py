"""How a failed MCP tool call reads: its kind first, memdir's message once, the next step.

A failing call is a tool error (`isError`) whose text begins with its kind — `invalid:`,
`not_found:`, `refused:`, `conflict:`, `busy:`, `disk:`, `damaged:`, `unavailable:` or
`internal:` (`memdir.errors.ErrorKind`, which the web page's API shares; every memdir
error class has one) — then memdir's message and what the agent can do next in MCP terms:
a tool to call, or a step to ask the user for. Arguments are checked against each tool's
own signature before the SDK sees them, so a wrong type reads `invalid: limit: expected an
integer from 1 to 50`, not a pydantic dump. (A request that is no well-formed call at
all — an unknown tool, `arguments` that are not an object — is a JSON-RPC error instead:
`memdir.mcp.protocol`.)
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ValidationError, create_model

from memdir.errors import ErrorKind, MemdirError, Remedy, SecretRefused, kind_of

if TYPE_CHECKING:
    from memdir.mcp.tools.record import Tool

__all__ = [
    "ErrorKind",
    "ToolArguments",
    "error_result",
    "error_text",
    "kind_of",
    "remedy_text",
]


#: What an agent can do about an error, in its own terms (the CLI says it as a command).
_REMEDIES: dict[Remedy, str] = {
    Remedy.SYNC_LOGIN: "ask the user to sign in to a sync server (`memdir sync login`)",
    Remedy.SYNC_ON: "ask the user to turn sync on (`memdir sync on`) if they want it",
    Remedy.SYNC_NOW: "ask the user to run `memdir sync`, then call this tool again",
    Remedy.DOCTOR: "ask the user to run `memdir doctor`, which names the file and the fix",
    Remedy.BACKUPS: "ask the user to list the backups (`memdir backups`)",
    Remedy.AUDIT_VERIFY: "ask the user to check the audit log (`memdir audit verify`)",
    Remedy.MCP_GRANT: "ask the user for a new grant (`memdir mcp grant`)",
    Remedy.OTHER_PROJECT: "it belongs to another project: ask the user to work there",
    Remedy.UPGRADE: "ask the user to upgrade memdir",
    Remedy.UNLOCK: "ask the user to unlock the encrypted notes (`memdir unlock`), then call again",
}

#: What to do next when the error carries no remedy of its own, by kind.
_NEXT: dict[ErrorKind, str] = {
    ErrorKind.NOT_FOUND: "memory_search finds notes and their ids",
    ErrorKind.CONFLICT: "call memory_read again and retry with what it returns now",
    ErrorKind.BUSY: "another memdir process is writing: call the tool again in a moment",
    ErrorKind.DISK: "ask the user to run `memdir doctor`",
    ErrorKind.DAMAGED: "ask the user to run `memdir doctor`, which names the file and the fix",
    ErrorKind.UNAVAILABLE: "call the tool again later",
    ErrorKind.INTERNAL: "the server's log (its standard error) has the details",
}


def remedy_text(hint: Remedy) -> str:
    """The agent-facing sentence for a remedy."""
    return _REMEDIES[hint]


def error_text(exc: MemdirError) -> str:
    """`kind: message (what to do next)`: memdir's message (which never holds a secret)
    once — without a kind it may already start with — and the agent's next step."""
    kind = kind_of(exc)
    message = str(exc) or type(exc).__name__
    for word in (kind.value, "refused", "not found", "invalid input"):
        message = message.removeprefix(f"{word}: ")
    if isinstance(exc, SecretRefused):
        message = f"the credential guard found a secret: {message}"
    nxt = remedy_text(exc.hint) if exc.hint is not None else _NEXT.get(kind)
    return f"{kind}: {message}" + (f" ({nxt})" if nxt else "")


def error_result(text: str) -> CallToolResult:
    """A tool error whose text is `text` (which begins with its kind)."""
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


class ToolArguments:
    """The arguments of each tool, checked against its handler's own signature (the one
    its input schema is made from), with each problem said in one short line. Every tool
    refuses an argument it does not take, naming it: a misspelt name would otherwise be
    dropped silently and the call would do something else."""

    def __init__(self) -> None:
        self._models: dict[str, tuple[type[BaseModel], dict[str, Any]]] = {}
        self._takes: dict[str, tuple[str, ...]] = {}

    @classmethod
    def of(cls, tools: Iterable[Tool]) -> ToolArguments:
        """A checker of the arguments of every tool in `tools`."""
        checker = cls()
        for tool in tools:
            checker.add(tool)
        return checker

    def add(self, tool: Tool) -> None:
        """Check the arguments of `tool` against the parameters of its handler."""
        fields: dict[str, Any] = {}
        parameters = tool.parameters().parameters
        for param in parameters.values():
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (param.annotation, default)
        model = create_model(f"{tool.name}_arguments", **fields)
        self._models[tool.name] = (model, model.model_json_schema().get("properties", {}))
        self._takes[tool.name] = tuple(parameters)

    def takes(self, name: str) -> tuple[str, ...]:
        """The names of the arguments tool `name` takes (none for no tool of ours)."""
        return self._takes.get(name, ())

    def problem(self, name: str, arguments: Mapping[str, Any] | None) -> str | None:
        """`invalid: argument: what was expected` for arguments the tool cannot take (None:
        they are fine, or `name` is no tool of ours: the SDK answers that)."""
        entry = self._models.get(name)
        if entry is None:
            return None
        known = self._takes[name]
        unknown = [k for k in (arguments or {}) if k not in known]
        if unknown:
            listed = ", ".join(repr(k[:40]) for k in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            takes = ", ".join(known) or "no arguments"
            word = "argument" if len(unknown) == 1 else "arguments"
            return f"{ErrorKind.INVALID}: unknown {word} {listed}{more} ({name} takes {takes})"
        model, properties = entry
        given = dict(arguments or {})
        for key, value in given.items():  # as the SDK does: JSON text for a non-string field
            field = model.model_fields.get(key)
            if field is None or field.annotation is str or not isinstance(value, str):
                continue
            with contextlib.suppress(ValueError, RecursionError):
                parsed = json.loads(value)
                if not isinstance(parsed, str | int | float):
                    given[key] = parsed
        try:
            model.model_validate(given)
        except ValidationError as exc:
            said = dict.fromkeys(_said(err, properties) for err in exc.errors())
            return f"{ErrorKind.INVALID}: " + "; ".join(said)
        return None


def _said(err: Mapping[str, Any], properties: Mapping[str, Any]) -> str:
    """One validation error as `argument: what was expected`."""
    loc = [str(p) for p in err.get("loc", ())]
    where = loc[0] if loc else "arguments"
    where += "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in loc[1:])
    if err.get("type") == "missing":
        return f"{where}: required"
    if err.get("type") == "value_error":  # memdir's own check: its message says it
        return f"{where}: {str(err.get('msg', '')).removeprefix('Value error, ')}"
    prop = properties.get(loc[0], {}) if loc else {}
    if len(loc) > 1:  # an item of a list
        prop = _array(prop).get("items", {})
    return f"{where}: expected {_expected(prop)}"


def _array(prop: Mapping[str, Any]) -> Mapping[str, Any]:
    """The array schema of a property (itself, or its non-null option)."""
    if prop.get("type") == "array":
        return prop
    return next((o for o in prop.get("anyOf", ()) if o.get("type") == "array"), {})


def _expected(prop: Mapping[str, Any]) -> str:
    """What a JSON-schema property accepts, in words."""
    options = prop.get("anyOf")
    if options:
        words = [_expected(o) for o in options if o.get("type") != "null"]
        return ", or ".join(words + (["null"] if len(words) < len(options) else []))
    if "enum" in prop:
        return "one of " + ", ".join(repr(v) for v in prop["enum"])
    kind = prop.get("type")
    if kind == "integer":
        low, high = prop.get("minimum"), prop.get("maximum")
        if low is not None and high is not None:
            return f"an integer from {low} to {high}"
        return "an integer" + (f" of at least {low}" if low is not None else "")
    if kind == "array":
        low, high = prop.get("minItems"), prop.get("maxItems")
        size = f"{low} to {high} " if low is not None and high is not None else ""
        size = size or (f"at most {high} " if high is not None else "")
        item = prop.get("items", {})
        kind = "strings" if item.get("type") == "string" else "integers"
        kind = kind if item.get("type") in ("string", "integer") else "values"
        listed = f" ({_expected(item)})" if "enum" in item else ""
        return f"a list of {size}{kind}{listed}"
    return {"string": "a string", "boolean": "true or false", "number": "a number"}.get(
        str(kind), "a valid value"
    )
