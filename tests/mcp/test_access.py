"""Tests for `mcp/access.py`: what an MCP request may do, and how a grant narrows the config."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.clients.grants import GrantStore
from memdir.core import AccessLevel
from memdir.errors import InvalidInput, Refused, Remedy
from memdir.mcp.access import Access, Gate, bearer_token

READ, WRITE, DELETE = AccessLevel


def test_read_only_access_refuses_writes_and_deletes() -> None:
    access = Access(READ, grant_id="g-1")
    why = "which is not allowed: grant g-1 is read-only"
    with pytest.raises(Refused, match=f"memory_write writes notes, {why}; .* --write;"):
        access.require_write("memory_write")
    with pytest.raises(Refused, match=f"memory_delete deletes notes, {why}; .* --write --delete;"):
        access.require_delete("memory_delete", True)
    with pytest.raises(Refused, match="grant g-1 was issued without --delete"):
        Access(WRITE, grant_id="g-1").require_delete("memory_delete", True)


def test_delete_needs_the_right_and_an_explicit_confirm() -> None:
    Access(WRITE).require_write("memory_write")
    with pytest.raises(Refused, match=r"mcp\.access is read_write in the memdir config"):
        Access(WRITE).require_delete("memory_delete", True)
    deleting = Access(DELETE, can_delete=True)
    with pytest.raises(Refused, match="confirm: true"):
        deleting.require_delete("memory_delete", False)
    with pytest.raises(Refused, match="confirm: true"):
        deleting.require_delete("memory_delete", "yes")  # type: ignore[arg-type]
    deleting.require_delete("memory_delete", True)


def test_scope_for_and_covers() -> None:
    both = Access(READ)
    assert both.scope_for(None) is None
    assert both.scope_for("user") == "user"
    assert both.covers("project") and both.covers(None)
    user_only = Access(READ, scope="user")
    assert user_only.scope_for(None) == "user"
    assert user_only.scope_for("user") == "user"
    with pytest.raises(Refused, match="user scope only"):
        user_only.scope_for("project")
    assert user_only.covers("user") and not user_only.covers("project")
    with pytest.raises(InvalidInput):
        both.scope_for("global")


@pytest.mark.parametrize(
    ("headers", "token"),
    [
        ({"authorization": "Bearer abc"}, "abc"),
        ({"authorization": "bearer   abc  "}, "abc"),
        ({"authorization": "Basic abc"}, None),
        ({"authorization": "Bearer "}, None),
        ({"authorization": ""}, None),
        ({}, None),
        (None, None),
    ],
)
def test_bearer_token(headers: dict[str, str] | None, token: str | None) -> None:
    assert bearer_token(headers) == token


@pytest.mark.parametrize(
    ("config", "level", "can_delete"),
    [("read", READ, False), ("read_write", WRITE, True), ("read_write_delete", DELETE, True)],
)
def test_without_a_grant_the_config_applies(
    config: str, level: AccessLevel, can_delete: bool
) -> None:
    assert Gate(config).resolve(None) == Access(level, "both", can_delete)


def test_an_unknown_config_level_is_refused() -> None:
    with pytest.raises(ValueError):
        Gate("admin")


@pytest.mark.parametrize(
    ("config", "granted", "level", "can_delete"),
    [
        ("read_write_delete", "read_write_delete", DELETE, True),
        ("read_write_delete", "read_write", WRITE, False),
        ("read_write", "read_write_delete", WRITE, True),
        ("read", "read_write_delete", READ, False),
        ("read_write_delete", "read", READ, False),
    ],
)
def test_a_grant_is_capped_by_the_config(
    tmp_path: Path, config: str, granted: str, level: AccessLevel, can_delete: bool
) -> None:
    store = GrantStore(tmp_path)
    grant, token = store.create(10, granted, "project")
    gate = Gate(config, store, require_bearer=True)
    access = gate.resolve({"authorization": f"Bearer {token}"})
    assert access == Access(level, "project", can_delete, grant.id)


def test_a_bearer_server_refuses_requests_without_a_valid_grant(tmp_path: Path) -> None:
    store = GrantStore(tmp_path)
    gate = Gate("read_write", store, require_bearer=True)
    with pytest.raises(Refused, match="Bearer"):
        gate.resolve({})
    with pytest.raises(Refused, match="Bearer"):
        Gate("read_write", None, require_bearer=True).resolve({"authorization": "Bearer x"})
    with pytest.raises(Refused, match="not valid"):
        gate.resolve({"authorization": "Bearer not-a-grant"})


def test_a_fixed_grant_is_re_read_on_every_call(tmp_path: Path) -> None:
    now = [1_000_000]
    store = GrantStore(tmp_path, clock=lambda: now[0])
    grant, token = store.create(10, "read_write", "user")
    other, other_token = store.create(10, "read_write", "user")
    gate = Gate("read_write_delete", store, fixed=(grant.id, token))
    assert gate.resolve(None) == Access(WRITE, "user", False, grant.id)
    bearer = Gate("read_write", store, fixed=(grant.id, token), require_bearer=True)
    with pytest.raises(Refused, match="not valid"):
        bearer.resolve({"authorization": f"Bearer {other_token}"})  # another grant's token
    store.revoke(grant.id)
    with pytest.raises(Refused) as info:
        gate.resolve(None)
    assert info.value.hint is Remedy.MCP_GRANT
    now[0] += 11 * 60_000
    with pytest.raises(Refused):
        Gate("read", store, fixed=(other.id, other_token)).resolve(None)
