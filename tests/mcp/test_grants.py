"""Capability grants: issue, store only digests, list, revoke, expire, and the CLI around them."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir import Memory
from memdir.cli.main import main
from memdir.clients.grants import GrantStore, issue_grant, read_grant_file, revoke_grant
from memdir.errors import InvalidInput, NotFound, Refused
from memdir.mcp.access import Gate
from memdir.mcp.tools import TOOL_NAMES, usable_tools


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_issue_writes_private_capability_and_stores_digest(memory: Memory, tmp_path: Path) -> None:
    out = tmp_path / "cap.json"
    grant = issue_grant(memory, minutes=5, write=True, out=out)
    grant_id, token = read_grant_file(out)
    assert grant_id == grant.id and len(token) >= 43  # 256 bits, base64url
    assert _mode(out) == 0o600
    store = GrantStore(memory.settings.home)
    assert _mode(store.path) == 0o600
    raw = store.path.read_text()
    assert token not in raw and grant.token_sha256 in raw
    assert grant.access == "read_write" and grant.scope == "both"
    assert store.validate(token).id == grant.id
    with pytest.raises(Refused):
        store.validate(token + "x")
    with pytest.raises(Refused, match="exists"):
        issue_grant(memory, minutes=5, out=out)
    issue_grant(memory, minutes=5, out=out, force=True)
    assert read_grant_file(out)[1] != token and _mode(out) == 0o600


@pytest.mark.parametrize("minutes", [0, 61, -1])
def test_lifetime_bounds(memory: Memory, tmp_path: Path, minutes: int) -> None:
    with pytest.raises(InvalidInput):
        issue_grant(memory, minutes=minutes, out=tmp_path / "g")
    assert not (tmp_path / "g").exists()


def test_expiry_and_revocation(memory: Memory, tmp_path: Path) -> None:
    now = [1_000_000]
    store = GrantStore(memory.settings.home, clock=lambda: now[0])
    grant = issue_grant(memory, minutes=1, out=tmp_path / "g", store=store)
    token = read_grant_file(tmp_path / "g")[1]
    assert store.validate(token).id == grant.id
    now[0] += 60_000
    with pytest.raises(Refused, match="expired"):
        store.validate(token)
    now[0] -= 30_000
    revoke_grant(memory, grant.id, store=store)
    with pytest.raises(Refused, match="revoked"):
        store.validate(token)
    with pytest.raises(NotFound):
        store.revoke("g-nothere")


def test_gate_narrows_config_and_delete_needs_delete_grant(memory: Memory, tmp_path: Path) -> None:
    store = GrantStore(memory.settings.home)
    issue_grant(memory, minutes=5, delete=True, scope="user", out=tmp_path / "d")
    fixed = read_grant_file(tmp_path / "d")
    wide = Gate("read_write_delete", store, fixed=fixed).resolve(None)
    assert (wide.level, wide.can_delete, wide.scope) == ("read_write_delete", True, "user")
    narrow = Gate("read", store, fixed=fixed).resolve(None)
    assert (narrow.level, narrow.can_delete) == ("read", False)
    with pytest.raises(Refused):
        wide.scope_for("project")
    assert wide.scope_for(None) == "user"
    plain = Gate("read_write").resolve(None)
    assert plain.can_delete and plain.grant_id is None
    with pytest.raises(Refused, match="confirm"):
        plain.require_delete("memory_delete", False)
    with pytest.raises(Refused):
        Gate("read_write", store, require_bearer=True).resolve({})


def test_the_tools_offered_follow_the_resolved_access(memory: Memory, tmp_path: Path) -> None:
    store = GrantStore(memory.settings.home)
    read_only = {"memory_write", "memory_delete", "memory_merge"}
    for name, kwargs, config, hidden in [
        ("r", {}, "read_write_delete", read_only),
        ("w", {"write": True}, "read_write_delete", {"memory_delete", "memory_merge"}),
        ("d", {"delete": True}, "read_write_delete", set()),
        ("d2", {"delete": True}, "read", read_only),  # the config caps the grant
    ]:
        issue_grant(memory, minutes=5, out=tmp_path / name, **kwargs)  # type: ignore[arg-type]
        access = Gate(config, store, fixed=read_grant_file(tmp_path / name)).resolve(None)
        assert usable_tools(access) == set(TOOL_NAMES) - hidden, name
    assert usable_tools(Gate("read").resolve(None)) == set(TOOL_NAMES) - read_only


def test_cli_grant_list_revoke(memory: Memory, tmp_path: Path) -> None:
    home, project = memory.settings.home, memory.settings.project_root
    assert project is not None
    base = ["--project", str(project), "--home", str(home), "mcp"]
    runner = CliRunner()
    out = tmp_path / "cli.grant"
    r = runner.invoke(
        main, [*base, "grant", "--minutes", "10", "--write", "--out", str(out), "--json"]
    )
    assert r.exit_code == 0, r.output
    token = read_grant_file(out)[1]
    shown = json.loads(r.output)
    assert token not in r.output and shown["access"] == "read_write"
    r = runner.invoke(main, [*base, "grant", "--minutes", "10", "--out", str(out)])
    assert r.exit_code == 4  # exists, no --force
    r = runner.invoke(main, [*base, "grant", "--minutes", "61", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and not (tmp_path / "x").exists()
    r = runner.invoke(main, [*base, "grants", "--json"])
    assert r.exit_code == 0 and token not in r.output
    listed = json.loads(r.output)
    assert [g["id"] for g in listed] == [shown["id"]] and not listed[0]["revoked"]
    assert "token_sha256" not in r.output
    r = runner.invoke(main, [*base, "revoke", shown["id"], "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["revoked"]
    r = runner.invoke(main, [*base, "revoke", "g-unknown"])
    assert r.exit_code == 3
    log = (home / "audit" / "audit.jsonl").read_text()
    entries = [json.loads(line) for line in log.splitlines()]
    assert [e["action"] for e in entries] == ["grant", "revoke"]
    assert all(e["fields"]["grant_id"] == shown["id"] for e in entries)
    assert token not in log
