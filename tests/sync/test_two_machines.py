"""Sync between machines through a real server, for both storage backends (§7, §2 backups).

Every test drives `Memory` objects on separate MEMDIR_HOMEs and git clones of one
project against a `memdir server serve` subprocess (see conftest.py).
"""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Callable

import httpx
import pytest

from fault_proxy import FaultProxy
from memdir import Memory
from memdir.core import Scope, render_note
from memdir.errors import (
    Conflict,
    InvalidInput,
    LimitExceeded,
    NotFound,
    SyncFailed,
    SyncRefused,
)
from memdir.sync.baseline import Baseline, RemoteEntry
from memdir.sync.comparison import PassReport
from memdir.sync.protocol import Entry, rev_of
from memdir.sync.replica import SyncRun
from sync_server import admin_key, auth_headers

from .conftest import SCOPES, Machine, Server, World, lines, report

#: For tests of the client's logic, where the storage backend makes no difference.
only_dir = pytest.mark.parametrize("backend", ["dir"])


# -- one-sided changes --------------------------------------------------------------------


def test_create_edit_delete_propagate_both_ways_in_both_scopes(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    ids = {
        scope: a.note(f"Deploys go through staging ({scope})", lines(3), scope=scope)
        for scope in SCOPES
    }
    run_a, run_b = world.sync(a, b)
    for scope, nid in ids.items():
        assert report(run_a, scope).pushed == [nid]
        assert report(run_b, scope).pulled == [nid]
        assert b.files(scope) == a.files(scope) == {nid: a.files(scope)[nid]}

    # edits on b reach a; a's replaced versions are backed up
    on_a = {scope: a.files(scope)[nid] for scope, nid in ids.items()}
    for scope, nid in ids.items():
        b.set_line(nid, 1, f"line 1 edited on b ({scope})", scope=scope)
    run_b, run_a = world.sync(b, a)
    for scope, nid in ids.items():
        assert report(run_b, scope).pushed == [nid]
        assert report(run_a, scope).pulled == [nid]
        assert f"line 1 edited on b ({scope})" in a.read(nid, scope).body
        assert a.files(scope) == b.files(scope)
        assert a.backed_up(on_a[scope], "sync")

    # notes created on b reach a
    created = {
        scope: b.note(f"Release notes live in CHANGES.md ({scope})", "b", scope=scope)
        for scope in SCOPES
    }
    world.sync(b, a)
    for scope, nid in created.items():
        assert a.files(scope)[nid] == b.files(scope)[nid]

    # deletions on a reach b; b's copies are backed up
    on_b = {scope: b.files(scope)[nid] for scope, nid in ids.items()}
    for scope, nid in ids.items():
        a.delete(nid, scope)
    run_a, run_b = world.sync(a, b)
    for scope, nid in ids.items():
        assert report(run_a, scope).deleted_there == [nid]
        assert report(run_b, scope).deleted_here == [nid]
        assert not b.has(nid, scope)
        assert b.backed_up(on_b[scope], "sync")
        assert nid in world.manifest(world.key(scope)).tombstones

    # deletions on b reach a
    for scope, nid in created.items():
        b.delete(nid, scope)
    world.sync(b, a)
    for scope in SCOPES:
        assert a.files(scope) == b.files(scope) == {}
    world.assert_converged(a, b)


def test_a_fresh_checkout_carrying_the_notes_downloads_only_what_differs(world: World) -> None:
    """Project notes committed to git arrive with a clone: same bytes agree, older ones clash."""
    a = world.machine("a")
    same = a.note("Committed with the code", lines(4))
    older = a.note("Committed, then edited", lines(4))
    a.sync()
    committed = a.files("project")
    a.set_line(older, 0, "line 0 edited after the commit")
    a.sync()
    with FaultProxy(world.server.url) as proxy:
        c = world.machine("c", project_files=committed, url=proxy.url)
        rep = report(c.sync("project"))
        assert not rep.pulled and not rep.pushed
        (listing,) = proxy.requests("/snapshot")
        assert rev_of(committed[same]) in listing.json()["have"]
        assert list(listing.answer_json()["objects"]) == [rev_of(a.files("project")[older])]
        # without a baseline copy the two versions of `older` cannot be merged: a conflict
        assert rep.conflicts == [older]
        assert c.files("project") == committed
        c.memory.sync.resolve(older, "server")
        assert c.backed_up(committed[older], "sync conflict")
        world.settle(a, c)
        world.assert_converged(a, c)


# -- both sides changed --------------------------------------------------------------------


def test_edits_in_separate_lines_merge_and_both_sides_are_backed_up(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    nid = a.note("Release checklist", lines(8))
    world.sync(a, b)
    a_version = a.set_line(nid, 0, "line 0 edited on a")
    b_version = b.set_line(nid, 7, "line 7 edited on b")
    run_a, run_b, run_a2 = world.sync(a, b, a)[:3]
    assert report(run_a).pushed == [nid]
    assert report(run_b).merged == [nid] and not report(run_b).conflicts
    assert report(run_a2).pulled == [nid]
    for machine in (a, b):
        body = machine.read(nid).body
        assert "line 0 edited on a" in body and "line 7 edited on b" in body
        assert "line 3" in body
    world.assert_converged(a, b)
    # b merged: the server's version (a's) and its own were backed up first
    assert b.backed_up(a_version, "sync")
    assert b.backed_up(b_version, "sync")
    # a's own version was replaced by the merged one pulled from the server
    assert a.backed_up(a_version, "sync")


def test_tags_merge_as_sets_and_fields_come_from_the_side_that_changed_them(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    tagged = a.note("Tagged note", "body", tags=["keep", "y"])
    fields = a.note("Old summary", lines(3), scope="user")
    world.sync(a, b)
    a.edit(tagged, tags=["keep", "y", "x"])
    b.edit(tagged, tags=["keep"])
    a.edit(fields, summary="New summary from a", scope="user")
    b.set_line(fields, 2, "line 2 from b", scope="user")
    world.sync(a, b, a)
    for machine in (a, b):
        assert set(machine.read(tagged).tags) == {"keep", "x"}
        note = machine.read(fields, "user")
        assert note.summary == "New summary from a"
        assert note.body == "line 0\nline 1\nline 2 from b"
    world.assert_converged(a, b)


def test_edit_against_delete_keeps_the_edit_both_ways(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    n1 = a.note("Edited on a, deleted on b", lines(3))
    n2 = a.note("Edited on b, deleted on a", lines(3))
    world.sync(a, b)
    edited = {n1: a.set_line(n1, 1, "line 1 edited on a"), n2: b.set_line(n2, 1, "edited on b")}
    b.delete(n1)
    a.delete(n2)
    # a syncs first: the edit of n1 reaches the server before b's deletion, and a's
    # deletion of n2 reaches it before b's edit
    world.sync(a, b)
    world.settle(a, b)
    files = world.assert_converged(a, b)
    assert files["project"] == edited


# -- conflicts -----------------------------------------------------------------------------


@dataclasses.dataclass
class Clash:
    nid: str
    base: bytes
    a_version: bytes
    b_version: bytes


def make_clashes(world: World, a: Machine, b: Machine, n: int) -> list[Clash]:
    """Same-line edits of `n` notes on a and b; a synced first, so b holds the conflicts."""
    ids = [a.note(f"Database choice {i}", "We use:\nPostgres 15\nfor everything") for i in range(n)]
    other = a.note("Other note", "x")
    world.sync(a, b)
    clashes = []
    for nid in ids:
        base = a.files("project")[nid]
        a_version = a.set_line(nid, 1, "Postgres 16")
        b_version = b.set_line(nid, 1, "SQLite")
        clashes.append(Clash(nid, base, a_version, b_version))
    a.set_line(other, 0, "x edited on a")
    fresh = b.note("A note b wrote meanwhile", "hello")
    a.sync()
    run = b.sync()
    rep = report(run)
    assert sorted(rep.conflicts) == sorted(ids)
    assert run.conflicts == n
    # a conflict holds back only its own note
    assert rep.pulled == [other] and rep.pushed == [fresh]
    assert b.read(other).body == "x edited on a"
    key = world.key("project")
    manifest = world.manifest(key)
    views = {v.id: v for v in b.memory.sync.conflicts()}
    assert views.keys() == set(ids)
    for clash in clashes:
        assert b.files("project")[clash.nid] == clash.b_version
        assert manifest.notes[clash.nid].rev == rev_of(clash.a_version)
        view = views[clash.nid]
        assert view.scope == "project" and view.reasons
        assert view.baseline == clash.base.decode()
        assert view.local == clash.b_version.decode()
        assert view.server == clash.a_version.decode()
    status = {s.scope: s for s in b.memory.sync.status().scopes}
    assert status["project"].conflicts == n and status["user"].conflicts == 0
    # another pass keeps holding them, uploads nothing, and a is not disturbed
    rep = report(b.sync())
    assert sorted(rep.conflicts) == sorted(ids) and not rep.pushed
    assert world.manifest(key) == manifest
    a.sync()
    assert a.has(fresh)
    for clash in clashes:
        assert a.files("project")[clash.nid] == clash.a_version
    return clashes


def _without_markers(draft: str, replacement: str) -> str:
    out, inside = [], False
    for line in draft.split("\n"):
        if line.startswith("<<<<<<< "):
            inside = True
            out.append(replacement)
        elif line.startswith(">>>>>>> "):
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def test_same_line_edits_conflict_and_every_resolution_converges(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    local, server, both, edit = make_clashes(world, a, b, 4)

    # wrong ways to resolve change nothing
    with pytest.raises(InvalidInput):
        b.memory.sync.resolve(local.nid)
    with pytest.raises(InvalidInput):
        b.memory.sync.resolve(local.nid, "local", text="x")
    with pytest.raises(InvalidInput):
        b.memory.sync.resolve(local.nid, "mine")
    with pytest.raises(NotFound):
        a.memory.sync.resolve(local.nid, "local")  # a has no conflict
    draft = b.memory.sync.draft(edit.nid)
    assert "<<<<<<< " in draft and ">>>>>>> " in draft
    assert "Postgres 16" in draft and "SQLite" in draft
    with pytest.raises(InvalidInput, match="marker"):
        b.memory.sync.resolve(edit.nid, text=draft)
    assert len(b.memory.sync.conflicts()) == 4
    assert b.files("project")[edit.nid] == edit.b_version

    # keep this machine's: the server's version is set aside
    resolution = b.memory.sync.resolve(local.nid, "local")
    assert resolution.kept == "local" and resolution.new_id is None
    assert len(resolution.backup_ids) == 1
    assert b.backed_up(local.a_version, "sync conflict")
    assert b.files("project")[local.nid] == local.b_version

    # take the server's: this machine's version is set aside
    resolution = b.memory.sync.resolve(server.nid, "server")
    assert resolution.kept == "server" and resolution.new_id is None
    assert b.files("project")[server.nid] == server.a_version
    assert b.backed_up(server.b_version, "sync conflict")

    # keep both: the server's becomes a new note beside this machine's
    resolution = b.memory.sync.resolve(both.nid, "both")
    new_id = resolution.new_id
    assert new_id is not None and new_id != both.nid
    assert b.files("project")[both.nid] == both.b_version
    assert b.read(new_id).body == "We use:\nPostgres 16\nfor everything"

    # merge by hand
    edited = _without_markers(draft, "Postgres 16, SQLite in tests")
    resolution = b.memory.sync.resolve(edit.nid, text=edited)
    assert resolution.kept == "edited"
    assert b.read(edit.nid).body == "We use:\nPostgres 16, SQLite in tests\nfor everything"
    assert b.backed_up(edit.a_version, "sync conflict")
    assert b.backed_up(edit.b_version, "sync conflict")
    assert b.memory.sync.conflicts() == []

    world.settle(b, a)
    files = world.assert_converged(a, b)["project"]
    assert files[local.nid] == local.b_version
    assert files[server.nid] == server.a_version
    assert files[both.nid] == both.b_version
    assert b"Postgres 16\n" in files[new_id]
    assert b"Postgres 16, SQLite in tests" in files[edit.nid]
    # a's versions replaced by b's outcomes were backed up there
    for clash in (local, both, edit):
        assert a.backed_up(clash.a_version, "sync")
    assert a.memory.sync.conflicts() == []


# -- offline -------------------------------------------------------------------------------


@pytest.mark.own_server
def test_offline_edits_on_both_sides_reconcile(world: World, two: tuple[Machine, Machine]) -> None:
    a, b = two
    n = [a.note(f"Shared note {i}", lines(6, f"n{i}")) for i in range(7)]
    u = a.note("User note", lines(3, "u"), scope="user")
    world.sync(a, b)
    world.server.stop()

    a.set_line(n[0], 0, "n0 edited on a")
    a.delete(n[1])
    a_new = a.note("Created on a while offline", "a new")
    a_user_new = a.note("User note created on a offline", "a user", scope="user")
    a.set_line(n[4], 0, "n4 line 0 edited on a")
    a.delete(n[5])
    a.set_line(u, 0, "u line 0 edited on a", scope="user")

    b.set_line(n[2], 2, "n2 edited on b")
    b.delete(n[3])
    b_new = b.note("Created on b while offline", "b new")
    b.set_line(n[4], 5, "n4 line 5 edited on b")
    b.set_line(n[5], 1, "n5 edited on b against a's delete")
    b.edit(n[6], summary="Shared note 6, renamed on b")
    b.set_line(u, 2, "u line 2 edited on b", scope="user")

    before = {m.name: m.all_files() for m in (a, b)}
    for machine in (a, b):
        with pytest.raises(SyncFailed):
            machine.sync()
        assert machine.all_files() == before[machine.name]  # nothing local changed

    world.server.start()
    world.settle(a, b)
    files = world.assert_converged(a, b)
    project = files["project"]
    assert set(project) == {n[0], n[2], n[4], n[5], n[6], a_new, b_new}
    assert b"n0 edited on a" in project[n[0]]
    assert b"n2 edited on b" in project[n[2]]
    assert b"n4 line 0 edited on a" in project[n[4]] and b"n4 line 5 edited on b" in project[n[4]]
    assert b"n5 edited on b against a's delete" in project[n[5]]
    assert a.read(n[6]).summary == "Shared note 6, renamed on b"
    assert set(files["user"]) == {u, a_user_new}
    user_body = a.read(u, "user").body
    assert "u line 0 edited on a" in user_body and "u line 2 edited on b" in user_body


# -- tombstones ----------------------------------------------------------------------------


@pytest.mark.server_args("--tombstone-days", "1")
def test_tombstones_inside_and_past_the_window(world: World) -> None:
    a, b = world.machine("a"), world.machine("b")
    nid = a.note("Old decision", "to be deleted")
    kept = a.note("Still valid", "stays")
    world.sync(a, b)
    deleted_version = a.files("project")[nid]
    a.delete(nid)
    a.sync()
    key = world.key("project")
    assert nid in world.manifest(key).tombstones

    # inside the window: a machine holding exactly the deleted version (no baseline) deletes it
    c = world.machine("c", project_files={nid: deleted_version})
    rep = report(c.sync())
    assert rep.deleted_here == [nid] and not rep.pushed
    assert not c.has(nid) and c.has(kept)
    assert c.backed_up(deleted_version, "sync")
    assert nid not in world.manifest(key).notes

    # the tombstone falls out of the window (the server keeps one day)
    world.age_tombstones(key, days=2)
    listing = world.snapshot(key)
    assert nid not in listing["tombstones"] and nid not in listing["notes"]

    # b still has a baseline of the note: its absence on the server is a deletion
    rep = report(b.sync())
    assert rep.deleted_here == [nid] and not rep.pushed
    assert not b.has(nid)
    assert b.backed_up(deleted_version, "sync")

    # d carries the note without a baseline and no tombstone says otherwise: uploaded as new
    d = world.machine("d", project_files={nid: deleted_version})
    rep = report(d.sync())
    assert rep.pushed == [nid]
    world.settle(a, b, c, d)
    files = world.assert_converged(a, b, c, d)
    assert files["project"][nid] == deleted_version


@only_dir
@pytest.mark.server_args("--tombstone-days", "1")
def test_a_cached_tombstone_past_the_window_does_not_delete_a_new_copy(world: World) -> None:
    a = world.machine("a")
    nid = a.note("Deleted long ago", "old")
    a.sync()
    deleted_version = a.files("project")[nid]
    a.delete(nid)
    a.sync()
    c = world.machine("c")
    c.sync()  # c now remembers the manifest, tombstone included
    key = world.key("project")
    world.age_tombstones(key, days=2)  # time passes; the manifest version does not move
    assert world.snapshot(key)["tombstones"] == {}
    # ...on c as well: its cached copy of the manifest ages with it
    cached = Baseline(c.home / "memory-sync" / f"project-{world.project_id}.sqlite")
    with cached.transaction():
        for note_id, entry in cached.remote().items():
            if entry.deleted_at is not None:
                aged = RemoteEntry(entry.rev, entry.deleted_at - 2 * 86_400_000)
                cached.set_remote(note_id, aged)
    cached.close()
    # the note comes back with a checkout (say, `git pull` of an old branch): a machine
    # that never saw the tombstone uploads it as new (see the test above) — and so should c
    (c.directory("project") / f"{nid}.md").write_bytes(deleted_version)
    rep = report(c.sync())
    assert rep.pushed == [nid] and not rep.deleted_here
    assert c.has(nid)
    world.settle(a, c)
    world.assert_converged(a, c)


def test_tombstone_stays_inside_the_window(world: World) -> None:
    """With the default window, a machine that was away still gets the deletion."""
    a, b = world.machine("a"), world.machine("b")
    nid = a.note("Deleted while b was away", "x")
    world.sync(a, b)
    a.delete(nid)
    a.sync()
    world.age_tombstones(world.key("project"), days=30)
    c = world.machine("c", project_files={nid: b.files("project")[nid]})
    assert report(c.sync()).deleted_here == [nid]
    assert report(b.sync()).deleted_here == [nid]
    world.assert_converged(a, b, c)


# -- binding -------------------------------------------------------------------------------


def test_scope_bound_to_first_account_and_origin_pauses_elsewhere(
    world: World, make_server: Callable[[], Server]
) -> None:
    a = world.machine("a")
    a.note("Project note", "p")
    a.note("User note", "u", scope="user")
    a.sync()
    alice_url = world.server.url
    keys = [world.key(s) for s in SCOPES]
    alice_before = {k: world.manifest(k) for k in keys}

    bob_name, bob = world.add_user("bob")
    a.memory.sync.login(alice_url, bob)
    written = a.note("Written while signed in as bob", "b")
    run = a.sync()
    assert run.reports == [] and set(run.paused) == set(SCOPES)
    for reason in run.paused.values():
        assert "alice" in reason and "bob" in reason
    status = a.memory.sync.status()
    assert status.user == bob_name
    for scope in status.scopes:
        assert scope.paused is not None and f"{world.user} at {alice_url}" in scope.paused
        assert scope.bound_to == f"{world.user} at {alice_url}"
    for key in keys:
        assert world.manifest(key, user=bob_name).version == 0
        assert world.manifest(key) == alice_before[key]

    other = make_server()
    a.memory.sync.login(other.url, other.tokens["alice"])
    run = a.sync()
    assert run.reports == [] and set(run.paused) == set(SCOPES)
    assert all(other.url in reason for reason in run.paused.values())
    for key in keys:
        assert other.manifest(key).version == 0

    # signed in as the bound account again, sync goes on
    a.memory.sync.login(alice_url, world.token)
    run = a.sync()
    assert not run.paused
    assert report(run).pushed == [written]


# -- commit-first batches ------------------------------------------------------------------


def test_commit_batch_goes_to_the_server_first(world: World, two: tuple[Machine, Machine]) -> None:
    a, b = two
    n1 = a.note("Alpha", "alpha")
    n2 = a.note("Beta", "beta")
    n3 = a.note("Gamma", "gamma")
    world.sync(a, b)
    key = world.key("project")
    version = world.manifest(key).version
    old_n1, old_n2 = a.files("project")[n1], a.files("project")[n2]

    merged = dataclasses.replace(a.read(n1), body="alpha\nbeta (merged in)")
    result = a.memory.sync.commit_batch({n1: merged, n2: None}, scope="project")
    assert result.version == version + 1
    assert result.written == [n1] and result.deleted == [n2]
    manifest = world.manifest(key)
    assert manifest.version == version + 1
    assert manifest.notes[n1].rev == rev_of(a.files("project")[n1])
    assert n2 in manifest.tombstones and n2 not in manifest.notes
    assert not a.has(n2)
    assert a.backed_up(old_n1, "consolidation") and a.backed_up(old_n2, "consolidation")
    run = a.sync()
    assert not report(run).changed  # already in sync
    b.sync()
    world.assert_converged(a, b)
    assert b.read(n1).body == "alpha\nbeta (merged in)"

    # a note changed on the server since: Conflict, nothing written here or there
    b.set_line(n3, 0, "gamma edited on b")
    b.sync()
    before, manifest = a.all_files(), world.manifest(key)
    gamma = dataclasses.replace(a.read(n3), body="gamma (batch)")
    with pytest.raises(Conflict):
        a.memory.sync.commit_batch({n1: None, n3: gamma}, scope="project")
    assert a.all_files() == before
    assert world.manifest(key) == manifest

    # with sync off the batch is written here only, and syncs later like any edit
    a.sync()
    a.memory.sync.switch(False)
    manifest = world.manifest(key)
    gamma = dataclasses.replace(a.read(n3), body="gamma (batch while off)")
    result = a.memory.sync.commit_batch({n3: gamma}, scope="project")
    assert result.version is None and result.written == [n3]
    assert a.read(n3).body == "gamma (batch while off)"
    assert world.manifest(key) == manifest
    a.memory.sync.switch(True)
    assert report(a.sync()).pushed == [n3]
    b.sync()
    world.assert_converged(a, b)


# -- the switch and quiet passes -----------------------------------------------------------


def test_switch_off_makes_no_request_and_persists(world: World) -> None:
    with FaultProxy(world.server.url) as proxy:
        a = world.machine("a", url=proxy.url)
        a.note("Before the switch", "x")
        a.sync()
        seen = len(proxy.log)
        assert not a.memory.sync.switch(False).enabled
        written = a.note("Written while sync is off", "y")
        with pytest.raises(SyncRefused, match="off"):
            a.sync()
        a.reopen()  # persisted across restarts
        assert not a.memory.sync.status().enabled
        with pytest.raises(SyncRefused):
            a.sync()
        assert len(proxy.log) == seen
        a.memory.sync.logout()
        a.memory.sync.login(proxy.url, world.token)  # and sign-ins
        assert not a.memory.sync.status().enabled
        seen = len(proxy.log)
        with pytest.raises(SyncRefused):
            a.sync()
        assert len(proxy.log) == seen
        assert a.memory.sync.switch(True).enabled
        assert report(a.sync()).pushed == [written]
        assert len(proxy.log) > seen


def test_a_pass_with_nothing_changed_is_one_small_request_per_scope(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    for i in range(20):
        a.note(f"Big project note {i}", f"{i} " + "lorem ipsum " * 300)
    for i in range(5):
        a.note(f"Big user note {i}", f"{i} " + "dolor sit " * 300, scope="user")
    world.sync(a, b)
    for machine in (a, b):
        run = machine.sync()
        assert {r.scope for r in run.reports} == set(SCOPES)
        for rep in run.reports:
            assert rep.unchanged and not rep.changed
            assert rep.requests == 1
            assert rep.bytes_received < 1024  # no note texts
            assert rep.bytes_sent < 1024 * 8
    world.assert_converged(a, b)


# -- server quotas and the credential guard ------------------------------------------------


@pytest.mark.server_args("--max-changes", "2", "--max-response-bytes", "2000")
def test_commits_split_to_the_change_quota_and_listings_to_the_response_quota(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    ids = [a.note(f"Quota note {i}", f"{i} " + "x" * 600) for i in range(7)]
    rep = report(a.sync())
    assert sorted(rep.pushed) == sorted(ids)
    assert rep.requests == 1 + 4  # one listing, then commits of 2, 2, 2 and 1
    assert world.manifest(world.key("project")).version == 4
    rep = report(b.sync())
    assert sorted(rep.pulled) == sorted(ids)
    assert rep.requests >= 4  # each answer carries about two notes
    world.assert_converged(a, b)
    # a commit-first batch must go in one piece: over the change quota it is refused whole
    before = a.all_files()
    with pytest.raises(LimitExceeded):
        a.memory.sync.commit_batch({nid: None for nid in ids[:3]}, scope="project")
    assert a.all_files() == before
    assert world.manifest(world.key("project")).version == 4


@pytest.mark.server_args("--max-notes", "3", "--max-body-bytes", "200")
def test_notes_over_the_server_quotas_stay_on_this_machine(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    small = [a.note(f"Small note {i}", f"small {i}") for i in range(4)]
    big = a.note("Big note", "y" * 500)
    rep = report(a.sync())
    assert len(rep.pushed) == 3 and set(rep.pushed) < set(small)
    (left,) = set(small) - set(rep.pushed)
    assert set(rep.held) == {left, big}
    assert "limit" in rep.held[big] and "limit" in rep.held[left]
    assert a.has(big) and a.has(left)  # held, not lost
    rep = report(a.sync())  # held again, quietly
    assert set(rep.held) == {left, big} and not rep.pushed
    b.sync()
    assert set(b.files("project")) == set(small) - {left}
    # room again: the held note goes up (a lowered quota only blocks growth)
    a.delete(rep_first := sorted(set(small) - {left})[0])
    world.sync(a, a, b)
    assert set(b.files("project")) == set(small) - {rep_first}
    assert not b.has(big)


def test_a_pulled_note_holding_a_secret_is_refused(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    nid = a.note("Deploy notes", "ordinary")
    world.sync(a, b)
    # A secret another client uploaded: the server refuses it now, so it is put into the
    # storage directly, as a server from before that refusal would have stored it.
    note = dataclasses.replace(a.read(nid), body="token ghp_Q7hZ2kLm9XwPq4RtYv8NbC3dFgHj6KsAe1Uo")
    data = render_note(note)
    text = data.decode()
    key = world.key("project")
    base = world.manifest(key).notes[nid].rev
    response = httpx.post(
        f"{world.server.url}/v1/memory/commit",
        json={
            "scope": {"kind": "project", "project": world.project_id},
            "changes": [{"id": nid, "op": "put", "base": base, "rev": rev_of(data), "text": text}],
        },
        headers=auth_headers(world.token),
        timeout=30,
    )
    assert response.status_code == 422 and response.json()["error"] == "secret_refused"
    with world.server.storage() as storage:
        current = storage.manifest(world.user, key)
        storage.put_objects(world.user, key, [(nid, rev_of(data), data)])
        entry = Entry(rev=rev_of(data), hash=note.hash, size=len(data), updated_at=1)
        notes = {**current.notes, nid: entry}
        swapped = current.model_copy(update={"version": current.version + 1, "notes": notes})
        assert storage.swap_manifest(world.user, key, current.version, swapped)
    other = a.note("Unrelated note", "fine")
    a.sync()
    before = b.files("project")[nid]
    rep = report(b.sync())
    assert nid in rep.held and "GitHub token" in rep.held[nid]
    assert "ghp_" not in rep.held[nid]
    assert b.files("project")[nid] == before  # nothing written
    assert rep.pulled == [other]
    assert not any(b"ghp_" in data for _, _, data in b.backups())


# -- more ways both sides move (directory backend: the client's logic, not the storage) ----


@only_dir
def test_an_erased_account_is_refused_and_local_notes_stay(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    nid = a.note("Kept locally after the erase", "x")
    world.sync(a, b)
    key = admin_key(world.server.data)
    response = httpx.post(
        f"{world.server.url}/v1/admin/erase",
        json={"user": world.user},
        headers=auth_headers(key),
        timeout=30,
    )
    assert response.status_code == 200, response.text
    before = {m.name: m.all_files() for m in (a, b)}
    a.note("Written after the erase", "y")
    for machine in (a, b):
        with pytest.raises(SyncRefused, match="erased"):
            machine.sync()
    assert b.all_files() == before["b"] and a.has(nid)
    for scope in SCOPES:
        manifest = world.manifest(world.key(scope))
        assert manifest.version == 0 and not manifest.notes


@only_dir
def test_identical_edits_and_deletions_on_both_sides_agree(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    same = a.note("Edited the same way on both", lines(3))
    gone = a.note("Deleted on both", "x")
    world.sync(a, b)
    a.set_line(same, 1, "the same new line")
    b.set_line(same, 1, "the same new line")
    a.delete(gone)
    b.delete(gone)
    run_b = world.sync(a, b)[1]
    assert not report(run_b).conflicts and not report(run_b).held
    world.settle(a, b)
    files = world.assert_converged(a, b)["project"]
    assert set(files) == {same}
    assert a.read(same).body == "line 0\nthe same new line\nline 2"


@only_dir
def test_a_held_conflict_follows_the_servers_newer_version(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    (clash,) = make_clashes(world, a, b, 1)
    newest = a.set_line(clash.nid, 2, "for everything, said again on a")
    a.sync()
    assert report(b.sync()).conflicts == [clash.nid]
    (view,) = b.memory.sync.conflicts()
    assert view.server == newest.decode()
    b.memory.sync.resolve(clash.nid, "local")
    assert b.backed_up(newest, "sync conflict")
    world.settle(b, a)
    files = world.assert_converged(a, b)["project"]
    assert files[clash.nid] == clash.b_version
    assert a.backed_up(newest, "sync")


@only_dir
def test_an_unreadable_note_file_is_never_deleted_or_overwritten(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    broken = a.note("Will be broken by hand on a", lines(3))
    fine = a.note("Stays fine", "fine")
    world.sync(a, b)
    garbage = b"---\n{not json at all\n---\nbody\n"
    (a.directory("project") / f"{broken}.md").write_bytes(garbage)
    b.set_line(broken, 0, "edited on b meanwhile")
    b.set_line(fine, 0, "fine, edited on b")
    b.sync()
    rep = report(a.sync())
    assert broken in rep.held and "doctor" in rep.held[broken]
    assert rep.pulled == [fine]
    assert a.files("project")[broken] == garbage  # left alone
    assert broken in world.manifest(world.key("project")).notes  # not deleted there
    rep = report(a.sync())
    assert not rep.pushed and not rep.deleted_there and not rep.pulled
    assert a.files("project")[broken] == garbage
    b.sync()
    assert broken in b.files("project")


@only_dir
def test_a_pull_held_back_is_retried_once_the_local_file_is_fixed(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    broken = a.note("Will be broken by hand on a", lines(3))
    world.sync(a, b)
    good = a.files("project")[broken]
    (a.directory("project") / f"{broken}.md").write_bytes(b"---\n{not json\n---\nbody\n")
    b.set_line(broken, 0, "edited on b meanwhile")
    b.sync()
    assert broken in report(a.sync()).held
    # fixed by hand, back to the version both sides agreed on: b's edit should now arrive
    (a.directory("project") / f"{broken}.md").write_bytes(good)
    a.sync()
    assert "edited on b meanwhile" in a.read(broken).body
    world.assert_converged(a, b)


@only_dir
def test_hand_written_files_travel_byte_for_byte(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    a.note("Something to start the project directory", "x")
    data = (
        b'---\n{"summary":"Written in an editor","tags":["hand"],"x-custom":{"kept":true},'
        b'"createdAt":1700000000000,"updatedAt":1700000000000}\n---\r\n'
        + "Caf\u00e9 \u2014 line one\r\nline two without a final newline".encode()
    )
    (a.directory("project") / "written-in-an-editor-1a2.md").write_bytes(data)
    world.sync(a, b)
    assert b.files("project")["written-in-an-editor-1a2"] == data
    world.assert_converged(a, b)


@only_dir
def test_a_restored_backup_syncs_like_any_local_edit(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    nid = a.note("Restore me", lines(3))
    world.sync(a, b)
    original = a.files("project")[nid]
    b.set_line(nid, 0, "changed on b")
    world.sync(b, a)
    (record,) = [r for r in a.memory.backups(limit=None) if r.note_id == nid]
    assert record.reason is not None and record.reason.startswith("sync")
    a.memory.backups.restore(record.id)
    assert a.files("project")[nid] == original
    assert report(a.sync()).pushed == [nid]
    assert report(b.sync()).pulled == [nid]
    assert b.files("project")[nid] == original
    world.assert_converged(a, b)


@only_dir
def test_forget_purge_deletes_everywhere_and_keeps_no_copy_for_sync(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    nid = a.note("Purge me", "a distinctive purgeable sentence")
    world.sync(a, b)
    a.memory.forget(nid, purge=True, scope="project")
    assert not a.memory.sync.replica.holds_copy(Scope.PROJECT, nid)
    assert report(a.sync()).deleted_there == [nid]  # the deletion goes up, nothing comes back
    assert not a.has(nid)
    assert report(b.sync()).deleted_here == [nid]
    world.assert_converged(a, b)


@only_dir
def test_user_notes_are_shared_by_projects_and_project_notes_are_not(world: World) -> None:
    a = world.machine("a")
    b = world.machine("b")
    other_origin = world.root / "other-origin"
    other_origin.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", str(other_origin)], check=True)
    (other_origin / "README.md").write_text("another project entirely\n")
    subprocess.run([*git, "-C", str(other_origin), "add", "README.md"], check=True)
    subprocess.run([*git, "-C", str(other_origin), "commit", "-q", "-m", "other"], check=True)
    with Memory.open(other_origin, home=a.home) as other:
        in_other = other.remember("Only in the other project", body="o", scope="project").note.id
        shared = other.remember("User note written there", body="u", scope="user").note.id
        run = other.sync.run()
        assert report(run).pushed == [in_other] and report(run, "user").pushed == [shared]
    mine = a.note("Only in this project", "p")
    run = a.sync()
    assert report(run).pushed == [mine]
    assert report(run, "user").unchanged or not report(run, "user").changed  # synced once
    b.sync()
    assert set(b.files("project")) == {mine}
    assert set(b.files("user")) == {shared}
    world.assert_converged(a, b)


# -- the reports of a run ------------------------------------------------------------------------


def test_sync_run_counts_the_conflicts_of_every_scope() -> None:
    run = SyncRun(
        reports=[
            PassReport("project", conflicts=["a", "b"]),
            PassReport("user", conflicts=["c"]),
            PassReport("other"),
        ]
    )
    assert run.conflicts == 3
    assert SyncRun().conflicts == 0


@pytest.mark.parametrize("field", ["pulled", "pushed", "merged", "deleted_here", "deleted_there"])
def test_a_pass_changed_when_anything_moved(field: str) -> None:
    assert not PassReport("project", conflicts=["x"], requests=3).changed
    assert PassReport("project", **{field: ["n"]}).changed  # type: ignore[arg-type]
