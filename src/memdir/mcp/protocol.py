"""How the MCP server answers a request it cannot serve: a JSON-RPC error whose message is
memdir's `kind: message (next step)`, never the SDK's or Python's own words.

The MCP specification (server/tools "Error Handling", 2025-06-18 and 2025-11-25) makes a
request that is not a well-formed call a protocol error: an unknown tool, prompt or
resource, `arguments` that are not an object, parameters that do not fit the method's
schema are JSON-RPC -32602 (invalid params); an unknown method is -32601; a failure of the
server itself -32603. What a tool's arguments hold — a wrong type, an argument the tool
does not take — is input validation, answered as a tool error (`isError`, see
`memdir.mcp.failures`) so that the model can correct its call.

`check_request` looks at a request before the SDK does; `translated` rewords whatever
error the SDK raised for one (the middleware in `memdir.mcp.server` runs both).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from pydantic import ValidationError

from memdir.errors import ErrorKind

__all__ = ["Offered", "check_request", "internal_error", "translated", "unknown_tool"]

_log = logging.getLogger(__name__)

#: The SDK's words for parameters it would not take, said without detail (mcp 2.3 uses
#: them only for a request that came before the handshake finished).
_GENERIC_INVALID = "Invalid request parameters"


@dataclass(frozen=True, slots=True)
class Offered:
    """What a caller may ask for by name: the tools its access may call (in the order
    `tools/list` shows them), and the server's prompts and resources."""

    tools: tuple[str, ...]
    prompts: tuple[str, ...]
    resources: tuple[str, ...]


def _shown(value: object) -> str:
    """A name the caller sent, quoted and cut short (it may be anything)."""
    return repr(value[:80] if isinstance(value, str) else value)[:90]


def _type_name(value: object) -> str:
    """What JSON type `value` is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _listed(names: Iterable[str]) -> str:
    shown = list(names)
    if not shown:
        return "none"
    return ", ".join(shown)


def _invalid(text: str, data: Any = None) -> MCPError:
    return MCPError(INVALID_PARAMS, f"{ErrorKind.INVALID}: {text}", data)


def check_request(
    method: str,
    params: Mapping[str, Any] | None,
    offered: Offered,
    tools: Mapping[str, tuple[str, ...]],
) -> None:
    """Raise the JSON-RPC error for a `tools/call`, `prompts/get` or `resources/read`
    that names nothing this server has, or whose arguments are not an object.

    `tools` maps every tool of memdir to the arguments it takes: a tool there that this
    caller may not call passes, since its own refusal says why (and which grant would do).
    """
    params = params or {}
    if method == "tools/call":
        name = params.get("name")
        if not isinstance(name, str):
            raise _invalid(
                f"tools/call needs the name of a tool (a string), not {_type_name(name)} "
                f"(the tools this connection may call: {_listed(offered.tools)})"
            )
        if name not in tools:
            raise unknown_tool(name, offered)
        takes = tools[name]
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise _invalid(
                f"the arguments of {name} must be an object of named arguments, not "
                f"{_type_name(arguments)} ({name} takes {_listed(takes)}, "
                'e.g. {"arguments": {"' + (takes[0] if takes else "name") + '": …}})',
                {"tool": name},
            )
    elif method == "prompts/get":
        name = params.get("name")
        if isinstance(name, str) and name not in offered.prompts:
            raise MCPError(
                INVALID_PARAMS,
                f"{ErrorKind.NOT_FOUND}: no prompt {_shown(name)} on this server (its prompts "
                f"are {_listed(offered.prompts)}; prompts/list describes them)",
                {"prompt": name[:200]},
            )
        arguments = params.get("arguments")
        if isinstance(name, str) and arguments:  # memdir's prompts take none
            given = list(arguments) if isinstance(arguments, dict) else []
            said = f", not {', '.join(_shown(k) for k in given[:5])}" if given else ""
            raise _invalid(
                f"the prompt {name} takes no arguments{said} (call prompts/get with its name only)",
                {"prompt": name},
            )
    elif method == "resources/read":
        uri = params.get("uri")
        if isinstance(uri, str) and uri not in offered.resources:
            raise MCPError(
                INVALID_PARAMS,
                f"{ErrorKind.NOT_FOUND}: no resource {_shown(uri)} on this server (its "
                f"resources are {_listed(offered.resources)}; resources/list describes them)",
                {"uri": uri[:2000]},
            )


def unknown_tool(name: str, offered: Offered) -> MCPError:
    """The JSON-RPC error for a call of a tool this server does not have."""
    return MCPError(
        INVALID_PARAMS,
        f"{ErrorKind.NOT_FOUND}: no tool {_shown(name)} on this server (the tools this "
        f"connection may call: {_listed(offered.tools)}; tools/list describes them)",
        {"tool": name[:200]},
    )


def translated(method: str, exc: MCPError | ValidationError) -> MCPError:
    """The error the SDK raised for `method`, said as memdir says errors (its code kept)."""
    if isinstance(exc, ValidationError):
        return _invalid(
            f"the parameters of {method} do not fit the MCP schema: "
            + "; ".join(dict.fromkeys(_problem(err) for err in exc.errors()[:5]))
            + f" (see the MCP specification for {method})"
        )
    code, message, data = exc.code, exc.message, exc.data
    if message.split(":", 1)[0] in {kind.value for kind in ErrorKind}:
        return exc  # already said memdir's way
    if code == METHOD_NOT_FOUND:
        return MCPError(
            code,
            f"{ErrorKind.NOT_FOUND}: this server has no method {_shown(method)} at the "
            "protocol revision in use (tools/list, resources/list and prompts/list say what "
            "it offers)",
            data,
        )
    if code == INVALID_PARAMS and message == _GENERIC_INVALID:
        return _invalid(
            f"{method} came before the connection's handshake finished (send initialize, "
            "then notifications/initialized, then call again)",
            data or None,
        )
    if code == INVALID_PARAMS:
        return _invalid(message, data)
    if code in (0, INTERNAL_ERROR):
        return internal_error(method)
    return exc


def internal_error(method: str) -> MCPError:
    """The JSON-RPC error for a failure memdir did not expect (the log has the details)."""
    return MCPError(
        INTERNAL_ERROR,
        f"{ErrorKind.INTERNAL}: {method} failed unexpectedly; nothing more is said here "
        "(the server's log, its standard error, has the details)",
    )


def _problem(err: Mapping[str, Any]) -> str:
    """One pydantic error about request parameters as `where: what was expected`."""
    # Union members and model names appear in the path: keep the field names only.
    loc = [str(p) for p in err.get("loc", ()) if not str(p)[:1].isupper() and "[" not in str(p)]
    where = ".".join(loc) or "params"
    kind = str(err.get("type", ""))
    expected = {
        "missing": "required",
        "string_type": "expected a string",
        "int_type": "expected an integer",
        "int_parsing": "expected an integer",
        "bool_type": "expected true or false",
        "dict_type": "expected an object",
        "model_type": "expected an object",
        "model_attributes_type": "expected an object",
        "list_type": "expected a list",
        "url_parsing": "expected a URI",
        "url_type": "expected a URI",
    }.get(kind)
    if expected is None:
        msg = str(err.get("msg", "not valid"))
        expected = msg[:1].lower() + msg[1:]
    return f"{where}: {expected}"
