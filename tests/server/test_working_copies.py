"""The remote MCP endpoint's working copies (§12): derived from storage, synced through the
rules in-process, dropped when they hold anything storage lacks, never closed while in use."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memdir.core import AccessLevel
from memdir.errors import Refused
from memdir.mcp.access import CURRENT, Access, Place
from memdir.mcp.copies import sweep
from memdir.mcp.remote import Mirrors
from memdir.server.inprocess import rules_transport
from memdir.server.rules import SyncRules
from memdir.server.storage.directory import DirectoryStorage

PROJECT = "working-copy-0001"


class Switch:
    """Commits fail while `down` is set (the storage backend is unreachable)."""

    def __init__(self) -> None:
        self.down = False


@pytest.fixture
def rules(tmp_path: Path) -> SyncRules:
    return SyncRules(DirectoryStorage(tmp_path / "storage"))


@pytest.fixture
def switch() -> Switch:
    return Switch()


@pytest.fixture
def mirrors(tmp_path: Path, rules: SyncRules, switch: Switch) -> Iterator[Mirrors]:
    def transport_for(user: str) -> httpx.BaseTransport:
        inner = rules_transport(rules, user)

        def handle(request: httpx.Request) -> httpx.Response:
            if switch.down and request.url.path.endswith("/commit"):
                raise httpx.ConnectError("the backend is down")
            return inner.handle_request(request)

        return httpx.MockTransport(handle)

    copies = Mirrors(tmp_path / "copies", transport_for, keep=1, embedder=None)
    yield copies
    copies.close()


def as_(account: str, project: str | None = PROJECT) -> Access:
    place = Place(account, project)
    return Access(AccessLevel.READ_WRITE, "both" if project else "user", place=place)


def stored(rules: SyncRules, account: str) -> set[str]:
    return set(rules.storage.manifest(account, f"project/{PROJECT}").notes)


def test_a_write_is_stored_before_the_call_ends(mirrors: Mirrors, rules: SyncRules) -> None:
    token = CURRENT.set(as_("alice"))
    try:
        with mirrors.opened() as memory:
            note = memory.notes.remember("Backups run nightly", scope="project").note
        assert stored(rules, "alice") == {note.id}
        assert stored(rules, "bob") == set()  # another account's space is untouched
    finally:
        CURRENT.reset(token)


def test_a_change_that_cannot_be_stored_drops_the_copy(
    mirrors: Mirrors, rules: SyncRules, switch: Switch
) -> None:
    token = CURRENT.set(as_("alice"))
    try:
        with mirrors.opened() as memory:
            kept = memory.notes.remember("Kept note", scope="project").note
        switch.down = True
        with (
            pytest.raises(Refused, match=r"may not have been stored \(the storage backend"),
            mirrors.opened() as memory,
        ):
            memory.notes.remember("Lost to the outage", scope="project")
        assert not mirrors.directory(Place("alice", PROJECT)).exists()
        switch.down = False
        with mirrors.opened() as memory:  # built again from storage: what it holds
            assert {n.id for n in memory.notes.list(scope="project")} == {kept.id}
        assert stored(rules, "alice") == {kept.id}
    finally:
        CURRENT.reset(token)


def test_a_copy_in_use_is_not_evicted(mirrors: Mirrors) -> None:
    """keep=1: other places' calls evict idle copies only, never one a call is using."""
    entered, leave = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def long_call() -> None:
        CURRENT.set(as_("alice"))
        try:
            with mirrors.opened() as memory:
                entered.set()
                leave.wait(60)
                memory.notes.remember("Written after the others came", scope="project")
        except BaseException as exc:
            failures.append(exc)

    worker = threading.Thread(target=long_call)
    worker.start()
    assert entered.wait(60)
    token = CURRENT.set(as_("bob"))
    try:
        for account in ("bob", "carol"):
            CURRENT.set(as_(account))
            with mirrors.opened() as memory:
                memory.notes.remember(f"{account}'s note", scope="project")
    finally:
        CURRENT.reset(token)
        leave.set()
        worker.join(60)
    assert failures == []


def test_a_call_without_a_remote_place_is_refused(mirrors: Mirrors) -> None:
    token = CURRENT.set(Access(AccessLevel.READ))
    try:
        with pytest.raises(Refused, match="no remote access"), mirrors.opened():
            pass
    finally:
        CURRENT.reset(token)


def test_sweep_keeps_only_the_accounts_given(mirrors: Mirrors, rules: SyncRules) -> None:
    for account in ("alice", "bob"):
        token = CURRENT.set(as_(account))
        try:
            with mirrors.opened() as memory:
                memory.notes.remember(f"{account} was here", scope="project")
        finally:
            CURRENT.reset(token)
    mirrors.close()
    assert sweep(mirrors.root, ["alice", "bob", "carol"], lambda name: False) == 0
    assert sweep(mirrors.root, ["alice"], lambda name: False) == 1
    assert mirrors.directory(Place("alice", PROJECT)).exists()
    assert not mirrors.directory(Place("bob", PROJECT)).exists()
    assert stored(rules, "bob")  # only the copy went: storage keeps bob's notes
    assert sweep(mirrors.root, ["alice"], lambda name: name == "alice") == 1
    assert not mirrors.directory(Place("alice", PROJECT)).exists()
