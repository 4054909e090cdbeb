"""Malformed and unknown MCP requests, answered as a client can rely on (issue 24).

Raw JSON-RPC to the real `memdir mcp serve`, over stdio and HTTP, in both protocol eras
(the handshake era and 2026-07-28, whose requests take another path through the SDK):
a request that is not a well-formed call gets its JSON-RPC code (-32602, -32601), never
the SDK's code 0, and a message in memdir's `kind: message (next step)` form, never a
Python message; every tool refuses an argument it does not take, naming it; a refusal by
access says what was refused, why, and which grant would do; an HTTP server pinned to
its --grant-file says so in its 401.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_helpers import Raw, make_grant, memdir_command
from mcp_types import CallToolRequestParams
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import ValidationError

from memdir import Memory
from memdir.mcp.protocol import translated
from memdir.mcp.tools import TOOLS, Tool

MODERN = "2026-07-28"
ERAS = ("2025-11-25", MODERN)
#: `kind: message (next step)`: one of memdir's kinds, a message, a parenthesised step.
FORM = re.compile(
    r"^(invalid|not_found|refused|conflict|busy|disk|damaged|unavailable|internal): "
    r"\S.* \(.+\)$",
    re.DOTALL,
)
NOTE_TOOLS = [t.name for t in TOOLS if not t.state]


def _envelope(version: str = MODERN) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
    }


def _open(raw: Raw, era: str) -> Raw:
    """`raw` ready for requests of `era` (a handshake, or none for 2026-07-28)."""
    if era != MODERN:
        init = raw.request(
            "initialize",
            {
                "protocolVersion": era,
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        )
        assert init["result"]["protocolVersion"] == era
        raw.notify("notifications/initialized")
    return raw


def _ask(raw: Raw, era: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One request of `era` (2026-07-28 carries its envelope in `_meta`)."""
    return raw.request(method, {**params, "_meta": _envelope()} if era == MODERN else params)


def _error(answer: dict[str, Any], code: int) -> str:
    """The message of a JSON-RPC error with `code`, checked to be in memdir's form."""
    assert "error" in answer, answer
    error = answer["error"]
    assert error["code"] == code, error
    message: str = error["message"]
    assert FORM.match(message), message
    for python in ("Traceback", "dictionary update", "Unknown ", "Invalid request parameters"):
        assert python not in message, message
    return message


def _tool_text(answer: dict[str, Any]) -> str:
    """The text of a tool error (isError), checked to be in memdir's form."""
    result = answer["result"]
    assert result["isError"] is True, result
    text: str = result["content"][0]["text"]
    assert FORM.match(text), text
    return text


def _takes(tool: Tool) -> str:
    return ", ".join(tool.parameters().parameters)


@dataclass
class Home:
    project: Path
    home: Path
    memory: Memory
    grants: dict[str, tuple[str, str, Path]]  # name → (grant id, token, file)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Home]:
    root = tmp_path_factory.mktemp("protocol-errors")
    home, project = root / "home", root / "project"
    home.mkdir()
    project.mkdir()
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    memory = Memory.open(project, home=home)
    grants = {}
    for name, kwargs in {
        "all": {"write": True, "delete": True, "state": "read_write"},
        "read": {},
        "write": {"write": True},
        "other": {},
    }.items():
        out = root / f"{name}.grant"
        grant_id, token = make_grant(memory, out, **kwargs)
        grants[name] = (grant_id, token, out)
    try:
        yield Home(project, home, memory, grants)
    finally:
        memory.close()


@pytest.fixture(scope="module")
def everything(home: Home) -> Iterator[Raw]:
    """A stdio server under a grant that may call every tool (state ones included)."""
    raw = Raw(home.project, home.home, "--grant-file", str(home.grants["all"][2]))
    try:
        yield _open(raw, "2025-11-25")
    finally:
        raw.close()


@pytest.fixture(scope="module")
def modern(home: Home) -> Iterator[Raw]:
    """The same, spoken 2026-07-28 (no handshake)."""
    raw = Raw(home.project, home.home, "--grant-file", str(home.grants["all"][2]))
    try:
        yield raw
    finally:
        raw.close()


def _server(era: str, everything: Raw, modern: Raw) -> Raw:
    return modern if era == MODERN else everything


# -- stdio: malformed calls -------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("arguments", "said"), [("deploys", "a string"), (["deploys"], "a list"), (5, "a number")]
)
def test_arguments_that_are_not_an_object_are_invalid_params(
    everything: Raw, modern: Raw, era: str, arguments: object, said: str
) -> None:
    raw = _server(era, everything, modern)
    answer = _ask(raw, era, "tools/call", {"name": "memory_search", "arguments": arguments})
    message = _error(answer, -32602)
    assert message.startswith(
        "invalid: the arguments of memory_search must be an object of named arguments, "
        f"not {said} (memory_search takes query, mode, scope, type, tags, limit"
    )


@pytest.mark.parametrize("era", ERAS)
def test_an_unknown_tool_is_invalid_params_naming_the_tools(
    everything: Raw, modern: Raw, era: str
) -> None:
    raw = _server(era, everything, modern)
    answer = _ask(raw, era, "tools/call", {"name": "memory_nope", "arguments": {}})
    message = _error(answer, -32602)
    assert message.startswith("not_found: no tool 'memory_nope' on this server (")
    listed = message.split("may call: ", 1)[1].split(";", 1)[0].split(", ")
    assert listed == [t.name for t in TOOLS]  # this grant may call every tool
    assert answer["error"]["data"] == {"tool": "memory_nope"}


@pytest.mark.parametrize("era", ERAS)
def test_an_unknown_prompt_and_resource_are_invalid_params(
    everything: Raw, modern: Raw, era: str
) -> None:
    raw = _server(era, everything, modern)
    prompt = _error(_ask(raw, era, "prompts/get", {"name": "nope"}), -32602)
    assert prompt == (
        "not_found: no prompt 'nope' on this server (its prompts are memory_index, "
        "memory_guidance; prompts/list describes them)"
    )
    answer = _ask(raw, era, "resources/read", {"uri": "memdir://nope"})
    resource = _error(answer, -32602)
    assert resource.startswith("not_found: no resource 'memdir://nope' on this server (")
    assert "memdir://prompt-index" in resource
    assert answer["error"]["data"] == {"uri": "memdir://nope"}
    with_arguments = _ask(
        raw, era, "prompts/get", {"name": "memory_index", "arguments": {"a": "b"}}
    )
    assert _error(with_arguments, -32602).startswith(
        "invalid: the prompt memory_index takes no arguments, not 'a' (call prompts/get"
    )
    # The known ones are still served.
    assert "result" in _ask(raw, era, "prompts/get", {"name": "memory_guidance"})
    assert "result" in _ask(raw, era, "resources/read", {"uri": "memdir://guidance"})


@pytest.mark.parametrize("era", ERAS)
def test_an_unknown_method_is_method_not_found(everything: Raw, modern: Raw, era: str) -> None:
    raw = _server(era, everything, modern)
    message = _error(_ask(raw, era, "memory/nope", {}), -32601)
    assert message.startswith("not_found: this server has no method 'memory/nope'")


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("method", "params", "said"),
    [
        ("tools/list", {"cursor": 5}, "cursor: expected a string"),
        ("resources/read", {}, "uri: required"),
        ("prompts/get", {"name": "memory_index", "arguments": "x"}, "takes no arguments"),
        ("tools/call", {"name": 3}, "tools/call needs the name of a tool (a string), not a"),
        ("tools/call", {"arguments": {}}, "tools/call needs the name of a tool"),
    ],
)
def test_parameters_that_do_not_fit_are_said_plainly(
    everything: Raw, modern: Raw, era: str, method: str, params: dict[str, Any], said: str
) -> None:
    raw = _server(era, everything, modern)
    message = _error(_ask(raw, era, method, params), -32602)
    assert message.startswith("invalid: ") and said in message, message


def test_a_request_before_the_handshake_says_so(env: tuple[Path, Path]) -> None:
    raw = Raw(*env)
    try:
        message = _error(raw.request("tools/list"), -32602)
    finally:
        raw.close()
    assert message.startswith("invalid: tools/list came before the connection's handshake")


# -- stdio: arguments a tool does not take ----------------------------------------------


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_tool_refuses_an_argument_it_does_not_take(everything: Raw, tool: Tool) -> None:
    answer = everything.request("tools/call", {"name": tool.name, "arguments": {"colour": "red"}})
    assert _tool_text(answer) == (
        f"invalid: unknown argument 'colour' ({tool.name} takes {_takes(tool)})"
    )
    both = everything.request(
        "tools/call", {"name": tool.name, "arguments": {"colour": "red", "size": 9}}
    )
    assert _tool_text(both).startswith(f"invalid: unknown arguments 'colour', 'size' ({tool.name}")


def test_a_misspelt_argument_is_not_dropped(everything: Raw, home: Home) -> None:
    answer = everything.request(
        "tools/call",
        {"name": "memory_write", "arguments": {"summary": "Never written", "tag": ["x"]}},
    )
    assert _tool_text(answer).startswith("invalid: unknown argument 'tag' (memory_write takes ")
    assert all(n.summary != "Never written" for n in home.memory.notes.list())
    search = everything.request(
        "tools/call", {"name": "memory_search", "arguments": {"query": "x", "colour": "red"}}
    )
    assert _tool_text(search) == (
        "invalid: unknown argument 'colour' (memory_search takes query, mode, scope, type, "
        "tags, limit)"
    )


# -- stdio: what a grant refuses, and why -----------------------------------------------


def test_a_read_only_grant_says_what_it_refused_and_which_grant_would_do(home: Home) -> None:
    note = home.memory.remember("A note a read grant cannot delete", "body").note.id
    grant_id, _, grant_file = home.grants["read"]
    raw = _open(Raw(home.project, home.home, "--grant-file", str(grant_file)), "2025-11-25")
    try:
        delete = raw.request(
            "tools/call", {"name": "memory_delete", "arguments": {"id": note, "confirm": True}}
        )
        write = raw.request(
            "tools/call", {"name": "memory_write", "arguments": {"summary": "Never written"}}
        )
        merge = raw.request(
            "tools/call", {"name": "memory_merge", "arguments": {"ids": [note, note]}}
        )
        unknown = raw.request("tools/call", {"name": "memory_nope", "arguments": {}})
    finally:
        raw.close()
    step = "(ask the user for a new grant (`memdir mcp grant`))"
    assert _tool_text(delete) == (
        f"refused: memory_delete deletes notes, which is not allowed: grant {grant_id} is "
        f"read-only; it needs a grant issued with --write --delete; nothing was removed {step}"
    )
    assert _tool_text(write) == (
        f"refused: memory_write writes notes, which is not allowed: grant {grant_id} is "
        f"read-only; it needs a grant issued with --write; nothing was written {step}"
    )
    assert _tool_text(merge).startswith(
        f"refused: memory_merge deletes notes, which is not allowed: grant {grant_id}"
    )
    # An unknown tool names only what this grant may call.
    offered = _error(unknown, -32602).split("may call: ", 1)[1].split(";", 1)[0].split(", ")
    assert "memory_search" in offered
    assert not {"memory_write", "memory_delete", "memory_merge"} & set(offered)
    assert not any(name.startswith("state_") for name in offered)
    assert home.memory.read(note)


def test_a_write_grant_says_it_was_issued_without_delete(home: Home) -> None:
    note = home.memory.remember("A note a write grant cannot delete", "body").note.id
    grant_id, _, grant_file = home.grants["write"]
    raw = _open(Raw(home.project, home.home, "--grant-file", str(grant_file)), "2025-11-25")
    try:
        delete = raw.request(
            "tools/call", {"name": "memory_delete", "arguments": {"id": note, "confirm": True}}
        )
    finally:
        raw.close()
    text = _tool_text(delete)
    assert text.startswith(
        f"refused: memory_delete deletes notes, which is not allowed: grant {grant_id} was "
        "issued without --delete; it needs a grant issued with --write --delete; nothing was "
        "removed ("
    )
    assert "nothing was written" not in text
    assert home.memory.read(note)


def test_a_read_only_config_names_the_setting_to_change(env: tuple[Path, Path]) -> None:
    project, home = env
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n\n[mcp]\naccess = "read"\n')
    raw = _open(Raw(project, home), "2025-11-25")
    try:
        delete = raw.request(
            "tools/call", {"name": "memory_delete", "arguments": {"id": "x", "confirm": True}}
        )
    finally:
        raw.close()
    assert _tool_text(delete) == (
        "refused: memory_delete deletes notes, which is not allowed: this MCP server is "
        "read-only (mcp.access is read in the memdir config); nothing was removed (ask the "
        "user to set mcp.access to read_write in the memdir config if they want this)"
    )


# -- HTTP -------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Http:
    url: str
    log: Path


def _serve_http(home: Home, *extra: str) -> Iterator[Http]:
    port = _free_port()
    log = home.home.parent / f"http-{port}.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [
                *memdir_command(),
                "--project",
                str(home.project),
                "--home",
                str(home.home),
                "mcp",
                "serve",
                "--http",
                f"127.0.0.1:{port}",
                *extra,
            ],
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
            env={"MEMDIR_HOME": str(home.home), "PATH": "/usr/bin:/bin"},
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("server did not start: " + log.read_text()) from None
                time.sleep(0.05)
        yield Http(f"http://127.0.0.1:{port}/mcp", log)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def http(home: Home) -> Iterator[Http]:
    """An HTTP server that takes any usable grant."""
    yield from _serve_http(home)


@pytest.fixture(scope="module")
def pinned(home: Home) -> Iterator[Http]:
    """An HTTP server started with --grant-file: it serves that grant only."""
    yield from _serve_http(home, "--grant-file", str(home.grants["read"][2]))


_ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
_NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def _post_modern(
    http: Http, token: str | None, method: str, params: dict[str, Any]
) -> httpx.Response:
    """One 2026-07-28 request, with the headers that era asks for."""
    headers = {**_ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    name = params.get(_NAMED.get(method, ""))
    if isinstance(name, str):
        headers["Mcp-Name"] = name
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": {**params, "_meta": _envelope()}}
    return httpx.post(http.url, json=body, headers=headers, timeout=30)


def _answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer of an HTTP response (plain JSON, or one SSE event)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        answer: dict[str, Any] = json.loads(data[-1])
        return answer
    parsed: dict[str, Any] = response.json()
    return parsed


def _legacy_session(http: Http, token: str) -> dict[str, str]:
    """The headers of a fresh 2025-11-25 session over HTTP."""
    auth = {**_ACCEPT, "Authorization": f"Bearer {token}"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"},
        },
    }
    opened = httpx.post(http.url, json=init, headers=auth, timeout=30)
    assert opened.status_code == 200, opened.text
    session = {
        **auth,
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "Mcp-Protocol-Version": "2025-11-25",
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx.post(http.url, json=note, headers=session, timeout=30).status_code == 202
    return session


def test_malformed_calls_over_modern_http(http: Http, home: Home) -> None:
    token = home.grants["all"][1]
    call = _post_modern(http, token, "tools/call", {"name": "memory_search", "arguments": "x"})
    assert _error(_answer(call), -32602).startswith(
        "invalid: the arguments of memory_search must be an object of named arguments, not a string"
    )
    unknown = _post_modern(http, token, "tools/call", {"name": "memory_nope", "arguments": {}})
    assert _error(_answer(unknown), -32602).startswith("not_found: no tool 'memory_nope'")
    prompt = _post_modern(http, token, "prompts/get", {"name": "nope"})
    assert _error(_answer(prompt), -32602).startswith("not_found: no prompt 'nope'")
    resource = _post_modern(http, token, "resources/read", {"uri": "memdir://nope"})
    assert _error(_answer(resource), -32602).startswith("not_found: no resource")
    method = _post_modern(http, token, "memory/nope", {})
    assert _error(_answer(method), -32601).startswith("not_found: this server has no method")
    extra = _post_modern(
        http, token, "tools/call", {"name": "memory_search", "arguments": {"query": "x", "c": 1}}
    )
    assert _tool_text(_answer(extra)).startswith("invalid: unknown argument 'c' (memory_search")


def test_malformed_calls_over_handshake_http(http: Http, home: Home) -> None:
    session = _legacy_session(http, home.grants["all"][1])

    def ask(id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
        return _answer(httpx.post(http.url, json=body, headers=session, timeout=30))

    listed = ask(2, "tools/call", {"name": "memory_search", "arguments": ["deploys"]})
    assert _error(listed, -32602).startswith(
        "invalid: the arguments of memory_search must be an object of named arguments, not a list"
    )
    assert _error(ask(3, "prompts/get", {"name": "nope"}), -32602).startswith(
        "not_found: no prompt 'nope'"
    )
    assert _error(ask(4, "tools/call", {"name": "memory_nope"}), -32602).startswith(
        "not_found: no tool 'memory_nope'"
    )


def test_a_pinned_http_server_says_why_another_grant_is_refused(pinned: Http, home: Home) -> None:
    pinned_id, pinned_token, _ = home.grants["read"]
    other_id, other_token, _ = home.grants["other"]
    refused = _post_modern(pinned, other_token, "tools/list", {})
    assert refused.status_code == 401
    assert "bearer" in refused.headers["www-authenticate"].lower()
    assert refused.text.strip() == (
        "refused: this server serves only the grant in its --grant-file, and this token is "
        "another grant's (use the token from that grant file, or ask the user to start "
        "`memdir mcp serve --http` without --grant-file, which accepts any usable grant)"
    )
    for secret in (pinned_id, pinned_token, other_id, other_token):
        assert secret not in refused.text
    # Who sends no token, or a token of no grant, learns nothing about the pinning.
    for token in (None, "not-a-grant"):
        response = _post_modern(pinned, token, "tools/list", {})
        assert response.status_code == 401
        assert response.text.strip().startswith(
            "refused: a valid capability grant is required (send Authorization: Bearer"
        )
        assert "--grant-file" not in response.text
    served = _post_modern(pinned, pinned_token, "tools/list", {})
    assert served.status_code == 200, served.text
    assert "tools" in _answer(served)["result"]


def test_no_traceback_reached_the_log(http: Http, home: Home) -> None:
    # The malformed requests above are answered, not crashed on.
    _post_modern(http, home.grants["all"][1], "tools/call", {"name": "x", "arguments": "y"})
    text = http.log.read_text()
    assert "Traceback" not in text and "dictionary update" not in text


# -- the translation of the SDK's own errors ---------------------------------------------


def test_the_sdks_errors_are_said_memdirs_way() -> None:
    # Python's message with code 0 (the SDK's catch-all) never reaches the client.
    crashed = translated("tools/call", MCPError(0, "dictionary update sequence element #0"))
    assert crashed.code == INTERNAL_ERROR
    assert crashed.message == (
        "internal: tools/call failed unexpectedly; nothing more is said here (the server's "
        "log, its standard error, has the details)"
    )
    early = translated("tools/list", MCPError(INVALID_PARAMS, "Invalid request parameters", ""))
    assert early.code == INVALID_PARAMS and "handshake" in early.message
    assert FORM.match(early.message)
    unsupported = MCPError(-32022, "Unsupported protocol version", {"supported": [MODERN]})
    assert translated("tools/list", unsupported) is unsupported  # a code of its own: kept
    ours = MCPError(INVALID_PARAMS, "not_found: no tool 'x' (…)")
    assert translated("tools/call", ours) is ours
    try:
        CallToolRequestParams.model_validate({"name": 5})
    except ValidationError as exc:
        invalid = translated("tools/call", exc)
    assert invalid.code == INVALID_PARAMS
    assert invalid.message.startswith(
        "invalid: the parameters of tools/call do not fit the MCP schema: name: expected a string"
    )
