"""The agent state store's MCP tools through the real stack: the server memdir builds (its
access middleware, argument checks and tool wrappers) driven by the official MCP client,
in process and over stdio, with grants issued as `memdir mcp grant` issues them."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_helpers import make_grant, memdir_command, stdio_params

from mcp import Client
from memdir import Memory
from memdir.cli.main import main as cli
from memdir.clients.grants import GrantStore, read_grant_file
from memdir.errors import Remedy
from memdir.mcp.access import Gate
from memdir.mcp.failures import ErrorKind, remedy_text
from memdir.mcp.server import build_server
from memdir.mcp.tools import STATE_TOOL_NAMES, TOOL_NAMES
from memdir.mcp.tools.state import StateStores
from memdir.mcp.tools.state_arguments import MAX_FIELD_VALUE, MAX_FIELDS, MAX_TITLE
from memdir.state import State

AWS_KEY = "AKIAZQ7ABCDEFGHIJKLM"
GITHUB_TOKEN = "ghp_" + "Zq7RtY2mKp9LwX4vB8nC3dF6gH1jS5aE0uIo"


class Served:
    """An in-process MCP server over one memory, under the access of a grant (or none)."""

    def __init__(self, memory: Memory, tmp_path: Path, config: str = "read_write") -> None:
        self.memory = memory
        self.tmp_path = tmp_path
        self.config = config
        self.states = StateStores(memory.settings.home)
        self.grant_id: str | None = None

    def client(self, grant: dict[str, Any] | None = None, *, registered: bool = True) -> Client:
        fixed = None
        if grant is not None:
            out = self.tmp_path / f"grant-{len(list(self.tmp_path.glob('grant-*')))}"
            self.grant_id, _ = make_grant(self.memory, out, **grant)
            fixed = read_grant_file(out)
        store = GrantStore(self.memory.settings.home)
        gate = Gate(self.config, store, fixed=fixed)
        return Client(build_server(self.memory, gate, self.states if registered else None))

    def state(self) -> State:
        return State.open(home=self.memory.settings.home, actor="test")


@pytest.fixture
def served(memory: Memory, tmp_path: Path) -> Iterator[Served]:
    s = Served(memory, tmp_path)
    try:
        yield s
    finally:
        s.states.close()


async def call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    return bool(result.is_error), (text if result.is_error else result.structured_content)


async def ok(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    err, out = await call(client, name, args)
    assert not err, (name, out)
    assert isinstance(out, dict)
    return out


async def fails(client: Client, name: str, args: dict[str, Any]) -> str:
    err, text = await call(client, name, args)
    assert err, (name, text)
    assert isinstance(text, str) and text.split(":", 1)[0] in {k.value for k in ErrorKind}
    assert "Traceback" not in text and "validation error" not in text, text
    return text


RW = {"state": "read_write"}


def test_state_tools_are_offered_only_under_a_grant_with_state(served: Served) -> None:
    async def names(grant: dict[str, Any] | None) -> list[str]:
        async with served.client(grant) as client:
            return [t.name for t in (await client.list_tools()).tools]

    async def main() -> None:
        assert await names(None) == list(TOOL_NAMES)  # the user's own client, no grant
        plain = await names({"write": True})
        assert not set(plain) & set(STATE_TOOL_NAMES)
        reading = await names({"state": "read"})
        assert [n for n in reading if n.startswith("state_")] == [
            "state_task_list",
            "state_task_get",
            "state_goal_list",
            "state_goal_get",
            "state_session_list",
        ]
        everything = await names({"write": True, "delete": True, **RW})
        assert everything == [*TOOL_NAMES, *STATE_TOOL_NAMES]  # one fixed order
        async with served.client(RW) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in STATE_TOOL_NAMES:
            tool = tools[name]
            assert tool.output_schema is not None and tool.input_schema["type"] == "object"
            a = tool.annotations
            assert a is not None and None not in (a.read_only_hint, a.destructive_hint)
            assert ("read_write." in (tool.description or "")) != bool(a.read_only_hint)
        assert tools["state_task_update"].annotations.destructive_hint is True  # type: ignore[union-attr]
        assert tools["state_task_create"].annotations.destructive_hint is False  # type: ignore[union-attr]
        title = tools["state_task_create"].input_schema["properties"]["title"]
        assert title["maxLength"] == MAX_TITLE and title["minLength"] == 1
        status = tools["state_task_create"].input_schema["properties"]["status"]
        assert status["enum"] == ["open", "active", "blocked", "done", "dropped"]

    anyio.run(main)


def test_without_the_grant_calls_are_refused_naming_the_grant(served: Served) -> None:
    async def main() -> list[str]:
        texts = []
        async with served.client(None) as client:
            texts.append(await fails(client, "state_task_list", {}))
        async with served.client({"write": True, "delete": True}) as client:
            texts.append(await fails(client, "state_task_create", {"title": "A task"}))
            texts.append(await fails(client, "state_goal_get", {"id": "g-12345678"}))
        return texts

    no_grant, no_state, no_state_read = anyio.run(main)
    assert no_grant.startswith(
        "refused: this MCP connection (no grant) gives no access to the agent state store; "
        "it needs a grant with state access read; nothing was read"
    )
    assert no_state.startswith(f"refused: grant {served.grant_id} gives no access to the agent")
    assert "state access read_write; nothing was written" in no_state
    assert "state access read; nothing was read" in no_state_read
    for text in (no_grant, no_state, no_state_read):
        assert text.endswith(f"({remedy_text(Remedy.MCP_GRANT)})")
    with served.state() as state:
        assert state.list_tasks() == [] and state.audit() == []


def test_a_server_that_can_never_give_state_access_registers_no_state_tool(
    served: Served,
) -> None:
    # As `serve` builds a stdio server without a grant (or with one that gives no state).
    async def main() -> tuple[list[str], str, str]:
        async with served.client(None, registered=False) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            refused = await fails(client, "state_task_create", {"title": "x"})
            # Access is checked first: a malformed call is refused the same way.
            malformed = await fails(client, "state_task_get", {"id": 5})
        return names, refused, malformed

    names, refused, malformed = anyio.run(main)
    assert names == list(TOOL_NAMES)
    assert refused.startswith("refused: this MCP connection (no grant) gives no access")
    assert "state access read_write" in refused and "Unknown tool" not in refused
    assert malformed.startswith("refused: ") and "state access read;" in malformed
    assert not (served.memory.settings.home / "state").exists()  # nothing opened it


def test_a_read_grant_lists_and_gets_but_cannot_write(served: Served) -> None:
    with served.state() as state:
        goal = state.add_goal("Ship the importer", notes="n" * 1000)
        task = state.add_task("Write the tests", goal_id=goal.id, fields={"area": "importers"})

    async def main() -> None:
        async with served.client({"state": "read"}) as client:
            listed = await ok(client, "state_task_list", {})
            assert [t["id"] for t in listed["tasks"]] == [task.id]
            assert listed["tasks"][0]["fields"] == {"area": "importers"}
            goals = await ok(client, "state_goal_list", {})
            assert len(goals["goals"][0]["notes"]) == 280  # lists cut notes; get gives them whole
            assert goals["goals"][0]["notes"].endswith("…")
            whole = await ok(client, "state_goal_get", {"id": goal.id})
            assert whole["notes"] == "n" * 1000
            text = await fails(client, "state_task_update", {"id": task.id, "title": "Other"})
            assert text.startswith("refused: the agent state store is read-only on this MCP")
            assert "needs a grant with state access read_write" in text
            await fails(client, "state_task_close", {"id": task.id})
            await fails(client, "state_session_record", {"agent": "planner"})

    anyio.run(main)
    with served.state() as state:
        assert state.get_task(task.id).title == "Write the tests"
        assert [e.action for e in state.audit()] == ["task.add", "goal.add"]


def test_tasks_and_goals_round_trip(served: Served) -> None:
    async def main() -> None:
        async with served.client(RW) as client:
            goal = await ok(client, "state_goal_create", {"title": "Ship", "priority": 1})
            assert goal["id"].startswith("g-") and goal["status"] == "open"
            first = await ok(
                client,
                "state_task_create",
                {"title": "Tests", "goal_id": goal["id"], "fields": {"area": "importers"}},
            )
            second = await ok(client, "state_task_create", {"title": "Docs", "priority": 5})
            assert first["goal_id"] == goal["id"] and first["closed_at"] is None
            listed = await ok(client, "state_task_list", {})
            assert [t["id"] for t in listed["tasks"]] == [second["id"], first["id"]]
            assert listed["truncated"] is False
            one = await ok(client, "state_task_list", {"limit": 1})
            assert [t["id"] for t in one["tasks"]] == [second["id"]] and one["truncated"]
            of_goal = await ok(client, "state_task_list", {"goal_id": goal["id"]})
            assert [t["id"] for t in of_goal["tasks"]] == [first["id"]]

            updated = await ok(
                client,
                "state_task_update",
                {
                    "id": first["id"],
                    "status": "active",
                    "notes": "half done",
                    "fields": {"area": ""},
                },
            )
            assert (updated["status"], updated["notes"], updated["fields"]) == (
                "active",
                "half done",
                {},
            )
            got = await ok(client, "state_task_get", {"id": first["id"]})
            assert got == updated
            closed = await ok(client, "state_task_close", {"id": first["id"]})
            assert closed["status"] == "done" and closed["closed_at"] is not None
            dropped = await ok(
                client, "state_task_close", {"id": second["id"], "status": "dropped"}
            )
            assert dropped["status"] == "dropped"
            assert (await ok(client, "state_task_list", {}))["tasks"] == []
            everything = await ok(client, "state_task_list", {"include_closed": True})
            assert {t["id"] for t in everything["tasks"]} == {first["id"], second["id"]}
            done = await ok(client, "state_task_list", {"status": "done"})
            assert [t["id"] for t in done["tasks"]] == [first["id"]]

            renamed = await ok(client, "state_goal_update", {"id": goal["id"], "title": "Ship it"})
            assert renamed["title"] == "Ship it" and renamed["priority"] == 1
            await ok(client, "state_goal_close", {"id": goal["id"]})
            assert (await ok(client, "state_goal_list", {}))["goals"] == []
            goals = await ok(client, "state_goal_list", {"include_closed": True})
            assert [g["title"] for g in goals["goals"]] == ["Ship it"]

            session = await ok(
                client,
                "state_session_record",
                {"agent": "planner", "summary": "planned", "started_at": 1000, "ended_at": 2000},
            )
            assert session["id"].startswith("s-") and session["ended_at"] == 2000
            await ok(client, "state_session_record", {"agent": "coder"})
            mine = await ok(client, "state_session_list", {"agent": "planner"})
            assert [s["id"] for s in mine["sessions"]] == [session["id"]]
            assert len((await ok(client, "state_session_list", {}))["sessions"]) == 2

    anyio.run(main)


def test_the_audit_table_records_the_mcp_writes_under_the_grant(served: Served) -> None:
    async def main() -> tuple[str, str]:
        async with served.client(RW) as client:
            task = await ok(client, "state_task_create", {"title": "Audit me"})
            await ok(client, "state_task_update", {"id": task["id"], "priority": 3})
            await ok(client, "state_task_close", {"id": task["id"]})
            session = await ok(client, "state_session_record", {"agent": "planner"})
            await ok(client, "state_task_list", {})  # reads append nothing
        return task["id"], session["id"]

    task_id, session_id = anyio.run(main)
    with served.state() as state:
        entries = state.audit()
    assert [(e.action, e.object_id) for e in reversed(entries)] == [
        ("task.add", task_id),
        ("task.update", task_id),
        ("task.close", task_id),
        ("session.record", session_id),
    ]
    assert {e.actor for e in entries} == {f"mcp:{served.grant_id}"}


def test_the_guard_refusal_names_the_key_never_the_value(served: Served) -> None:
    async def main() -> list[str]:
        async with served.client(RW) as client:
            task = await ok(client, "state_task_create", {"title": "Deploy"})
            return [
                await fails(client, "state_task_create", {"title": "Deploy", "notes": AWS_KEY}),
                await fails(
                    client, "state_task_create", {"title": "x", "fields": {"password": "hunter22"}}
                ),
                await fails(
                    client,
                    "state_task_update",
                    {"id": task["id"], "fields": {"note": f"use {GITHUB_TOKEN}"}},
                ),
                await fails(client, "state_goal_create", {"title": f"rotate {GITHUB_TOKEN}"}),
                await fails(client, "state_session_record", {"agent": "a", "summary": AWS_KEY}),
            ]

    texts = anyio.run(main)
    for text in texts:
        assert text.startswith("refused: the credential guard found a secret: "), text
        assert AWS_KEY not in text and GITHUB_TOKEN not in text and "hunter22" not in text
    assert "(notes, line 1)" in texts[0]
    assert "the field 'password' names a credential" in texts[1]
    assert "field note" in texts[2] and "title" in texts[3] and "summary" in texts[4]
    with served.state() as state:
        assert [t.title for t in state.list_tasks()] == ["Deploy"]
        assert state.get_task(state.list_tasks()[0].id).fields == {}
        assert [e.action for e in state.audit()] == ["task.add"]
        assert state.list_goals() == [] and state.list_sessions() == []
    raw = b"".join(p.read_bytes() for p in (served.memory.settings.home / "state").iterdir())
    assert AWS_KEY.encode() not in raw and GITHUB_TOKEN.encode() not in raw


def test_unknown_ids_are_not_found(served: Served) -> None:
    async def main() -> list[str]:
        async with served.client(RW) as client:
            task = await ok(client, "state_task_create", {"title": "Real"})
            return [
                await fails(client, "state_task_get", {"id": "t-00000000"}),
                await fails(client, "state_task_update", {"id": "t-00000000", "title": "x"}),
                await fails(client, "state_task_close", {"id": "t-00000000"}),
                await fails(client, "state_goal_get", {"id": "g-00000000"}),
                await fails(client, "state_goal_update", {"id": "g-00000000", "priority": 1}),
                await fails(client, "state_goal_close", {"id": "g-00000000"}),
                await fails(client, "state_task_create", {"title": "x", "goal_id": "g-00000000"}),
                await fails(client, "state_task_update", {"id": task["id"], "goal_id": "g-0000"}),
            ]

    texts = anyio.run(main)
    assert texts[0] == (
        "not_found: no task 't-00000000' in the state store "
        "(state_task_list and state_goal_list give the ids)"
    )
    for text in texts:
        assert text.startswith("not_found: no "), text
        assert "memory_search" not in text
    assert "no goal 'g-00000000'" in texts[6] and "no goal 'g-0000'" in texts[7]
    with served.state() as state:
        assert [t.title for t in state.list_tasks()] == ["Real"]
        assert state.list_tasks()[0].goal_id is None


@pytest.mark.parametrize(
    ("tool", "arguments", "said"),
    [
        ("state_task_create", {}, "invalid: title: required"),
        ("state_task_create", {"title": ""}, "invalid: title: cannot be empty"),
        ("state_task_create", {"title": "  "}, "invalid: title: cannot be empty"),
        (
            "state_task_create",
            {"title": "x" * (MAX_TITLE + 1)},
            f"invalid: title: longer than {MAX_TITLE} characters",
        ),
        ("state_task_create", {"title": 5}, "invalid: title: expected a string"),
        (
            "state_task_create",
            {"title": "x", "priority": "high"},
            "invalid: priority: expected an integer from -1000000 to 1000000",
        ),
        (
            "state_task_create",
            {"title": "x", "priority": True},
            "invalid: priority: expected an integer from -1000000 to 1000000",
        ),
        (
            "state_task_create",
            {"title": "x", "status": "finished"},
            "invalid: status: expected 'open', 'active', 'blocked', 'done' or 'dropped'",
        ),
        (
            "state_task_create",
            {"title": "x", "colour": "red"},
            "invalid: unknown argument 'colour' (state_task_create takes title, notes, "
            "priority, status, goal_id, fields)",
        ),
        (
            "state_task_create",
            {"title": "x", "fields": ["a"]},
            "invalid: fields: expected an object of named text fields, or null",
        ),
        (
            "state_task_create",
            {"title": "x", "fields": {"area": 3}},
            "invalid: fields.area: expected a string (field values are text)",
        ),
        (
            "state_task_create",
            {"title": "x", "fields": {"area": "v" * (MAX_FIELD_VALUE + 1)}},
            f"invalid: fields.area: longer than {MAX_FIELD_VALUE} characters",
        ),
        (
            "state_task_create",
            {"title": "x", "fields": {f"k{i}": "v" for i in range(MAX_FIELDS + 1)}},
            f"invalid: fields: at most {MAX_FIELDS} fields",
        ),
        (
            "state_task_create",
            {"title": "x", "fields": {" ": "v"}},
            "invalid: fields: a field name cannot be empty",
        ),
        (
            "state_task_create",
            {"title": "x", "goal_id": "t-12345678"},
            "invalid: goal_id: expected a goal id such as g-1a2b3c4d (state_goal_list gives them)",
        ),
        (
            "state_task_get",
            {"id": "../../etc/passwd"},
            "invalid: id: expected a task id such as t-1a2b3c4d (state_task_list gives them)",
        ),
        ("state_task_get", {"id": ["t-12345678"]}, "invalid: id: expected a string"),
        (
            "state_task_update",
            {"id": "t-12345678"},
            "invalid: nothing to change: give at least one of title, notes, priority, status, "
            "goal_id, fields",
        ),
        (
            "state_task_close",
            {"id": "t-12345678", "status": "open"},
            "invalid: status: expected 'done' or 'dropped'",
        ),
        ("state_task_list", {"limit": 0}, "invalid: limit: expected an integer from 1 to 200"),
        (
            "state_task_list",
            {"include_closed": "sometimes"},
            "invalid: include_closed: expected true or false",
        ),
        (
            "state_session_record",
            {"agent": "a", "started_at": -1},
            "invalid: started_at: expected an integer from 0 to 253402300799999, or null",
        ),
        (
            "state_session_record",
            {"agent": "a", "started_at": 5, "ended_at": 1},
            "invalid: a session cannot end before it starts",
        ),
    ],
)
def test_a_malformed_call_is_one_clear_line(
    served: Served, tool: str, arguments: dict[str, Any], said: str
) -> None:
    async def main() -> str:
        async with served.client(RW) as client:
            return await fails(client, tool, arguments)

    assert anyio.run(main) == said
    with served.state() as state:
        assert state.audit() == []


def test_a_revoked_grant_is_refused_at_the_next_call(served: Served) -> None:
    async def main() -> str:
        async with served.client(RW) as client:
            await ok(client, "state_task_create", {"title": "Before"})
            assert served.grant_id is not None
            GrantStore(served.memory.settings.home).revoke(served.grant_id)
            return await fails(client, "state_task_create", {"title": "After"})

    text = anyio.run(main)
    assert text.startswith("refused: ") and "revoked" in text
    with served.state() as state:
        assert [t.title for t in state.list_tasks()] == ["Before"]


def test_over_stdio_the_server_uses_the_store_memdir_state_uses(
    env: tuple[Path, Path], memory: Memory, tmp_path: Path
) -> None:
    project, home = env
    grant = tmp_path / "state.grant"
    grant_id, _ = make_grant(memory, grant, state="read_write")
    runner = CliRunner()
    base = ["--project", str(project), "--home", str(home), "state"]
    added = runner.invoke(cli, [*base, "goal", "add", "From the CLI", "--json"])
    assert added.exit_code == 0, added.output
    goal_id = json.loads(added.output)["id"]

    async def main() -> dict[str, Any]:
        async with Client(stdio_params(project, home)) as client:  # no grant: no state tools
            assert not {t.name for t in (await client.list_tools()).tools} & set(STATE_TOOL_NAMES)
            text = await fails(client, "state_goal_list", {})
            assert text.startswith("refused: this MCP connection (no grant) gives no access")
        async with Client(stdio_params(project, home, "--grant-file", str(grant))) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert set(STATE_TOOL_NAMES) <= names
            goals = await ok(client, "state_goal_list", {})
            assert [g["id"] for g in goals["goals"]] == [goal_id]
            text = await fails(client, "state_task_create", {"title": "x", "notes": AWS_KEY})
            assert AWS_KEY not in text
            return await ok(client, "state_task_create", {"title": "From MCP", "goal_id": goal_id})

    task = anyio.run(main)
    listed = runner.invoke(cli, [*base, "task", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [t["id"] for t in json.loads(listed.output)] == [task["id"]]
    audit = runner.invoke(cli, [*base, "audit", "--json"])
    assert audit.exit_code == 0, audit.output
    actors = [(e["actor"], e["action"]) for e in json.loads(audit.output)]
    assert actors == [(f"mcp:{grant_id}", "task.add"), ("cli", "goal.add")]


def test_over_http_each_bearer_gets_the_state_access_of_its_grant(
    env: tuple[Path, Path], memory: Memory, tmp_path: Path
) -> None:
    project, home = env
    _, with_state = make_grant(memory, tmp_path / "s.grant", write=True, state="read_write")
    _, without = make_grant(memory, tmp_path / "n.grant", write=True)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    stderr = tmp_path / "stderr.log"
    args = ["--project", str(project), "--home", str(home), "mcp", "serve", "--http"]
    with stderr.open("w") as err:
        proc = subprocess.Popen(
            [*memdir_command(), *args, f"127.0.0.1:{port}"],
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
            env={"MEMDIR_HOME": str(home), "PATH": "/usr/bin:/bin"},
        )

    def client(token: str) -> Client:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        return Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http))

    async def main() -> None:
        async with client(without) as plain:
            names = {t.name for t in (await plain.list_tools()).tools}
            assert not names & set(STATE_TOOL_NAMES) and "memory_write" in names
            text = await fails(plain, "state_task_create", {"title": "x"})
            assert "gives no access to the agent state store" in text
        async with client(with_state) as stated:
            names = {t.name for t in (await stated.list_tools()).tools}
            assert set(STATE_TOOL_NAMES) <= names
            await ok(stated, "state_task_create", {"title": "Over HTTP"})

    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("server did not start: " + stderr.read_text()) from None
                time.sleep(0.05)
        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    with State.open(home=home) as state:
        assert [t.title for t in state.list_tasks()] == ["Over HTTP"]
    assert "Traceback" not in stderr.read_text()


def test_a_crash_is_an_internal_error_that_tells_nothing(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(actor: str) -> State:
        raise RuntimeError("/home/someone/secret-path exploded")

    monkeypatch.setattr(served.states, "get", broken)

    async def main() -> str:
        async with served.client(RW) as client:
            return await fails(client, "state_task_list", {})

    text = anyio.run(main)
    assert text.startswith("internal: state_task_list failed unexpectedly")
    assert "secret-path" not in text
