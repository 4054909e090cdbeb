"""State access in the grant model: a grant gives the agent state store only when it names
it, grants on disk from before still load (and give none), the config caps it, the
tools offered follow it, and the server neither imports nor opens the store at start-up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memdir import Memory
from memdir.clients.grants import GrantStore, issue_grant, read_grant_file, token_digest
from memdir.core import AccessLevel, choices
from memdir.errors import InvalidInput, Refused, Remedy
from memdir.mcp.access import Access, Gate
from memdir.mcp.tools import STATE_TOOL_NAMES, TOOL_NAMES, usable_tools
from memdir.mcp.tools.state import StateStores

READ, WRITE, DELETE = AccessLevel
_READING = {"state_task_list", "state_task_get", "state_goal_list", "state_goal_get"}
_READING |= {"state_session_list"}


def usable_state_tools(access: Access) -> frozenset[str]:
    """The state tools `access` is offered."""
    return usable_tools(access) & frozenset(STATE_TOOL_NAMES)


def test_an_old_grants_file_still_loads_and_gives_no_state(tmp_path: Path) -> None:
    # grants.json as memdir wrote it before grants had a state key.
    token = "old-token-" + "x" * 40
    old = {
        "format": "memdir-mcp-grant/1",
        "grants": [
            {
                "access": "read_write_delete",
                "created_at": 1,
                "expires_at": 9_999_999_999_999,
                "id": "g-0123456789ab",
                "revoked_at": None,
                "scope": "both",
                "token_sha256": token_digest(token),
            }
        ],
    }
    store = GrantStore(tmp_path)
    store.directory.mkdir(parents=True)
    store.path.write_text(json.dumps(old))
    (grant,) = store.load()
    assert grant.state is None and grant.public()["state"] is None
    access = Gate("read_write_delete", store, fixed=(grant.id, token)).resolve(None)
    assert access == Access(DELETE, "both", True, grant.id)
    assert access.state is None and usable_state_tools(access) == frozenset()
    with pytest.raises(Refused) as info:
        access.require_state(write=False)
    assert info.value.hint is Remedy.MCP_GRANT
    assert "grant g-0123456789ab gives no access to the agent state store" in str(info.value)
    assert "state access read;" in str(info.value)


def test_a_grant_without_state_is_stored_as_before(tmp_path: Path) -> None:
    store = GrantStore(tmp_path)
    plain, _ = store.create(5, "read", "both")
    stated, _ = store.create(5, "read", "both", "read_write")
    stored = {g["id"]: g for g in json.loads(store.path.read_text())["grants"]}
    assert "state" not in stored[plain.id]  # an older memdir still reads the file
    assert stored[stated.id]["state"] == "read_write"
    assert {g.id: g.state for g in store.load()} == {plain.id: None, stated.id: "read_write"}


def test_a_grants_file_with_an_unknown_state_access_is_damaged(tmp_path: Path) -> None:
    store = GrantStore(tmp_path)
    store.create(5, "read", "both", "read")
    doc = json.loads(store.path.read_text())
    doc["grants"][0]["state"] = "admin"  # a hand edit: no grant is trusted then
    store.path.write_text(json.dumps(doc))
    with pytest.raises(Refused, match="is damaged"):
        store.load()


@pytest.mark.parametrize("state", ["read_write_delete", "write", "admin", ""])
def test_a_state_access_outside_read_and_read_write_is_refused(tmp_path: Path, state: str) -> None:
    with pytest.raises(InvalidInput, match="state access must be one of read, read_write"):
        GrantStore(tmp_path).create(5, "read", "both", state)
    assert not GrantStore(tmp_path).path.exists()


def test_issue_grant_writes_and_audits_the_state_access(memory: Memory, tmp_path: Path) -> None:
    out = tmp_path / "state.grant"
    grant = issue_grant(memory, minutes=5, state="read", out=out)
    assert grant.state == "read" and json.loads(out.read_text())["state"] == "read"
    plain = issue_grant(memory, minutes=5, out=tmp_path / "plain.grant")
    assert plain.state is None and "state" not in json.loads((tmp_path / "plain.grant").read_text())
    log = (memory.settings.home / "audit" / "audit.jsonl").read_text().splitlines()
    details = [json.loads(line)["fields"].get("detail") for line in log]
    assert details == ["read scope=both state=read", "read scope=both"]


@pytest.mark.parametrize(
    ("config", "granted", "state"),
    [
        ("read_write", "read_write", WRITE),
        ("read_write_delete", "read_write", WRITE),
        ("read_write", "read", READ),
        ("read", "read_write", READ),  # the config caps the grant, as for notes
    ],
)
def test_the_config_caps_the_state_access(
    tmp_path: Path, config: str, granted: str, state: AccessLevel
) -> None:
    store = GrantStore(tmp_path)
    grant, token = store.create(5, "read", "project", granted)
    access = Gate(config, store, fixed=(grant.id, token)).resolve(None)
    assert access.state is state and access.level is READ and access.scope == "project"
    bearer = Gate(config, store, require_bearer=True).resolve({"authorization": f"Bearer {token}"})
    assert bearer == access


def test_without_a_grant_there_is_no_state_access() -> None:
    for config in choices(AccessLevel):
        access = Gate(config).resolve(None)
        assert access.state is None and usable_state_tools(access) == frozenset()
        with pytest.raises(Refused, match=r"this MCP connection \(no grant\) gives no access"):
            access.require_state(write=True)


def test_the_tools_offered_follow_the_state_access(tmp_path: Path) -> None:
    store = GrantStore(tmp_path)
    for state, offered in [(None, set()), ("read", _READING), ("read_write", STATE_TOOL_NAMES)]:
        grant, token = store.create(5, "read", "both", state)
        access = Gate("read_write", store, fixed=(grant.id, token)).resolve(None)
        assert usable_state_tools(access) == set(offered), state
        # The note tools are offered as before: state access is a dimension of its own.
        assert usable_tools(access) - set(STATE_TOOL_NAMES) == set(TOOL_NAMES) - {
            "memory_write",
            "memory_delete",
            "memory_merge",
        }
    assert set(STATE_TOOL_NAMES) > _READING


def test_a_state_read_access_refuses_writes_with_the_grant_to_ask_for() -> None:
    access = Access(READ, grant_id="g-1", state=READ)
    access.require_state(write=False)
    with pytest.raises(Refused) as info:
        access.require_state(write=True)
    text = str(info.value)
    assert "read-only on this MCP connection (grant g-1)" in text
    assert "needs a grant with state access read_write" in text and "nothing was written" in text
    assert info.value.hint is Remedy.MCP_GRANT
    Access(READ, grant_id="g-2", state=WRITE).require_state(write=True)


def test_the_server_does_not_import_the_state_store_at_start_up() -> None:
    code = (
        "import sys, memdir.mcp.server\n"
        "print(sorted(m for m in sys.modules if m.startswith('memdir.state')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_store_opens_on_first_use_one_connection_per_actor(tmp_path: Path) -> None:
    stores = StateStores(tmp_path, keep=2)
    path = tmp_path / "state" / "state.sqlite3"
    assert not path.exists()
    first = stores.get("mcp:g-1")
    assert path.exists() and path.stat().st_mode & 0o777 == 0o600
    assert stores.get("mcp:g-1") is first
    first.add_task("one")
    stores.get("mcp:g-2")
    stores.get("mcp:g-3")  # beyond `keep`: the least recently used (g-1) is closed
    reopened = stores.get("mcp:g-1")
    assert reopened is not first
    assert [t.title for t in reopened.list_tasks()] == ["one"]
    stores.close()
    again = stores.get("mcp:g-1")  # a call after close opens it again
    assert again.audit()[0].actor == "mcp:g-1"
    stores.close()


def test_a_fixed_grant_file_with_state_is_read_back(memory: Memory, tmp_path: Path) -> None:
    out = tmp_path / "rw.grant"
    grant = issue_grant(memory, minutes=5, write=True, state="read_write", out=out)
    access = Gate("read_write", GrantStore(memory.settings.home), fixed=read_grant_file(out))
    resolved = access.resolve(None)
    assert (resolved.grant_id, resolved.level, resolved.state) == (grant.id, WRITE, WRITE)
    assert usable_state_tools(resolved) == set(STATE_TOOL_NAMES)


def test_the_cli_issues_a_grant_with_state_access(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from memdir.cli.main import main as cli

    project, home = tmp_path / "p", tmp_path / "h"
    project.mkdir()
    out = tmp_path / "g.grant"
    runner = CliRunner()
    base = ["--project", str(project), "--home", str(home), "mcp", "grant", "--minutes", "5"]
    made = runner.invoke(cli, [*base, "--state", "read_write", "--out", str(out), "--json"])
    assert made.exit_code == 0, made.output
    listed = runner.invoke(
        cli, ["--project", str(project), "--home", str(home), "mcp", "grants", "--json"]
    )
    assert listed.exit_code == 0, listed.output
    assert [g.get("state") for g in json.loads(listed.output)] == ["read_write"]
    bad = runner.invoke(cli, [*base, "--state", "admin", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2
