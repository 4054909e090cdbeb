"""Sync under faults: failing, throttling, crashing and racing servers (§7.2, §7.3, §7.4).

The machines talk to the server through `FaultProxy` (tests/fault_proxy.py) where a
test scripts what goes wrong. The directory backend is enough for most faults; the
crash and the compare-and-swap race run on both backends.
"""

from __future__ import annotations

import dataclasses
import email.utils
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fault_proxy import FaultProxy
from memdir import Memory
from memdir.core import Note, render_note
from memdir.errors import Conflict, RateLimited, SyncFailed
from memdir.sync.protocol import rev_of
from memdir.sync.replica import SyncRun

from .conftest import Machine, World, lines, report


@pytest.fixture
def proxy(world: World) -> Iterator[FaultProxy]:
    """A fault proxy in front of the test's server."""
    with FaultProxy(world.server.url) as p:
        yield p


@pytest.fixture
def pair(world: World, proxy: FaultProxy) -> tuple[Machine, Machine]:
    """Machine a behind the proxy, machine b straight to the server; both in sync."""
    a = world.machine("a", url=proxy.url)
    b = world.machine("b")
    return a, b


only_dir = pytest.mark.parametrize("backend", ["dir"])


# -- failing and throttling servers --------------------------------------------------------


@only_dir
@pytest.mark.parametrize("endpoint", ["/snapshot", "/commit"])
def test_server_errors_fail_the_pass_and_the_next_one_completes(
    world: World, proxy: FaultProxy, pair: tuple[Machine, Machine], endpoint: str
) -> None:
    a, b = pair
    n1 = a.note("Shared", lines(3))
    n2 = a.note("To delete", "x")
    world.sync(a, b)
    a.set_line(n1, 0, "edited on a")
    a.delete(n2)
    created = a.note("Created on a", "new")
    before = a.all_files()
    manifest = world.manifest(world.key("project"))

    proxy.script(endpoint, "500", times=2)  # the client tries each request twice
    with pytest.raises(SyncFailed, match="HTTP 500"):
        a.sync("project")
    assert [r.status for r in proxy.requests(endpoint)][-2:] == [500, 500]
    assert a.all_files() == before
    assert world.manifest(world.key("project")) == manifest

    # one failure is retried within the pass
    proxy.script(endpoint, "500", times=1)
    rep = report(a.sync("project"))
    assert sorted(rep.pushed) == sorted([n1, created]) and rep.deleted_there == [n2]
    assert proxy.pending() == 0
    b.sync()
    world.assert_converged(a, b)


@only_dir
@pytest.mark.parametrize("seconds", [42, 3600])
def test_429_raises_rate_limited_with_the_servers_retry_after(
    world: World, proxy: FaultProxy, pair: tuple[Machine, Machine], seconds: int
) -> None:
    a, b = pair
    a.note("Waiting note", "x")
    before = a.all_files()
    proxy.script("/snapshot", "429", retry_after=seconds)
    with pytest.raises(RateLimited) as caught:
        a.sync()
    assert caught.value.retry_after == seconds
    assert "too often" in str(caught.value)
    assert len(proxy.requests("/snapshot")) == 1  # a 429 is not retried at once
    assert a.all_files() == before
    assert report(a.sync()).pushed
    b.sync()
    world.assert_converged(a, b)


@only_dir
def test_429_with_an_http_date_retry_after_is_honoured(
    world: World, proxy: FaultProxy, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    when = email.utils.formatdate(time.time() + 600, usegmt=True)
    proxy.script("/snapshot", "429", retry_after=when)
    with pytest.raises(RateLimited) as caught:
        a.sync()
    assert caught.value.retry_after is not None
    assert 590 <= caught.value.retry_after <= 601


@only_dir
@pytest.mark.server_args("--rate-limit", "1", "--rate-burst", "3")
def test_the_servers_own_rate_limit_raises_rate_limited(
    world: World, proxy: FaultProxy, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair  # signing in took one request of the burst
    a.note("Project note", "p")
    with pytest.raises(RateLimited) as caught:
        a.sync()
        a.sync()
    refusals = [r for r in proxy.log if r.status == 429]
    assert len(refusals) == 1, (proxy.log, caught.value)
    refused = refusals[0]
    assert caught.value.retry_after == float(refused.headers["retry-after"])
    assert 1 <= caught.value.retry_after <= 60


@only_dir
@pytest.mark.parametrize("drops", [1, 2])
def test_a_commit_applied_whose_answer_is_lost_converges(
    world: World, proxy: FaultProxy, pair: tuple[Machine, Machine], drops: int
) -> None:
    """The server applied the commit but the client never heard back (once, or twice)."""
    a, b = pair
    n1 = a.note("Edited on both", lines(6))
    n2 = a.note("Deleted on a", "x")
    world.sync(a, b)
    a.set_line(n1, 0, "line 0 edited on a")
    a.delete(n2)
    created = a.note("Created on a", "new on a")
    key = world.key("project")
    version = world.manifest(key).version

    seen = len(proxy.requests("/commit"))
    proxy.script("/commit", "drop", times=drops)
    if drops == 1:
        a.sync("project")  # the retried commit is stale; the pass starts over and agrees
    else:
        with pytest.raises(SyncFailed):
            a.sync("project")
    manifest = world.manifest(key)
    assert manifest.version == version + 1  # applied exactly once
    assert set(manifest.notes) == {n1, created} and n2 in manifest.tombstones
    commits = proxy.requests("/commit")[seen:]
    # dropped once: the client's retry of the same commit is refused as stale (409)
    assert [c.status for c in commits] == ([None, 409] if drops == 1 else [None, None])

    # b builds on the applied commit before a hears of it
    b.sync()
    b.set_line(n1, 5, "line 5 edited on b")
    b.sync()
    world.settle(a, b)
    files = world.assert_converged(a, b)["project"]
    assert set(files) == {n1, created}  # no duplicate, the deletion holds
    body = a.read(n1).body
    assert "line 0 edited on a" in body and "line 5 edited on b" in body
    assert a.memory.sync.conflicts() == [] and b.memory.sync.conflicts() == []


@only_dir
def test_a_commit_overtaken_in_flight_starts_over_and_merges(
    world: World, proxy: FaultProxy, pair: tuple[Machine, Machine]
) -> None:
    a, b = pair
    nid = a.note("Shared", lines(8))
    world.sync(a, b)
    a.set_line(nid, 0, "line 0 from a")
    b.set_line(nid, 7, "line 7 from b")
    seen = len(proxy.requests("/commit"))
    arrived = threading.Event()
    proxy.script("/commit", "delay", seconds=1.0, before=arrived.set)
    runs: list[SyncRun] = []

    def sync_a() -> None:
        with Memory.open(a.project, home=a.home) as memory:
            runs.append(memory.sync.run("project"))

    thread = threading.Thread(target=sync_a)
    thread.start()
    assert arrived.wait(30)
    b.sync()  # b's commit lands while a's is held in flight
    thread.join(timeout=60)
    assert len(runs) == 1
    assert report(runs[0]).merged == [nid]
    # a's first commit was refused as stale; the pass started over and merged
    assert [c.status for c in proxy.requests("/commit")[seen:]] == [409, 200]
    world.settle(a, b)
    body = world.assert_converged(a, b)["project"][nid].decode()
    assert "line 0 from a" in body and "line 7 from b" in body


# -- commit-first batches under races and lost answers -------------------------------------


@only_dir
def test_commit_first_batch_refused_when_the_server_moves_between_check_and_commit(
    world: World, proxy: FaultProxy, pair: tuple[Machine, Machine]
) -> None:
    a, b = pair
    n1 = a.note("Duplicate one", "one")
    n2 = a.note("Duplicate two", "two")
    unrelated = a.note("Unrelated", "u")
    world.sync(a, b)

    def b_commits_meanwhile() -> None:
        with Memory.open(b.project, home=b.home) as other:
            other.remember("Unrelated", body="u edited on b", id=unrelated, scope="project")
            other.sync.run("project")

    key = world.key("project")
    proxy.script("/commit", "pass", before=b_commits_meanwhile)
    before = a.all_files()
    merged = dataclasses.replace(a.read(n1), body="one\ntwo")
    with pytest.raises(Conflict):
        a.memory.sync.commit_batch({n1: merged, n2: None}, scope="project")
    assert a.all_files() == before
    manifest = world.manifest(key)
    assert {n1, n2} <= manifest.notes.keys() and not manifest.tombstones
    assert manifest.notes[n1].rev == rev_of(before["project"][n1])
    world.settle(a, b)
    world.assert_converged(a, b)


@only_dir
def test_commit_first_batch_whose_answer_is_lost_arrives_with_the_next_sync(
    world: World, proxy: FaultProxy, pair: tuple[Machine, Machine]
) -> None:
    a, b = pair
    n1 = a.note("Duplicate one", "one")
    n2 = a.note("Duplicate two", "two")
    world.sync(a, b)
    before = a.all_files()
    proxy.script("/commit", "drop", times=2)
    merged = dataclasses.replace(a.read(n1), body="one\ntwo")
    with pytest.raises(SyncFailed):
        a.memory.sync.commit_batch({n1: merged, n2: None}, scope="project")
    assert a.all_files() == before  # nothing written here before the server said yes
    world.settle(a, b)
    files = world.assert_converged(a, b)["project"]
    assert set(files) == {n1}
    assert a.read(n1).body == "one\ntwo"
    assert a.backed_up(before["project"][n2], "sync")


# -- aborting a pass -------------------------------------------------------------------


@only_dir
def test_an_aborted_pass_keeps_what_was_done_and_the_next_pass_finishes(
    world: World, proxy: FaultProxy, pair: tuple[Machine, Machine]
) -> None:
    a, b = pair
    created = a.note("Written before the abort", "x")
    abort = threading.Event()
    proxy.script("/snapshot", "pass", before=abort.set)
    with pytest.raises(SyncFailed, match="switched off"):
        a.memory.sync.run("project", abort=abort)
    assert proxy.requests("/commit") == []
    assert a.has(created)
    assert report(a.sync("project")).pushed == [created]
    b.sync()
    world.assert_converged(a, b)


@only_dir
@pytest.mark.server_args("--max-changes", "1")
def test_switching_off_elsewhere_stops_the_background_pass_in_flight(
    world: World, proxy: FaultProxy, pair: tuple[Machine, Machine]
) -> None:
    """§7.1: `memdir sync off` (the switch file) stops the pass between requests."""
    a, _ = pair
    for i in range(3):
        a.note(f"Chunked note {i}", f"note {i}")  # three commits of one change each
    arrived, switched = threading.Event(), threading.Event()

    def hold_the_first_commit() -> None:
        arrived.set()
        switched.wait(10)

    proxy.script("/commit", "pass", before=hold_the_first_commit)
    coordinator = a.memory.sync.background()
    coordinator.start()
    try:
        assert arrived.wait(30)
        with Memory.open(a.project, home=a.home) as other:  # `memdir sync off` elsewhere
            other.sync.switch(False)
        switched.set()
        project = next(k for k in coordinator.status() if k.startswith("project"))

        def ended() -> bool:
            return coordinator.status()[project].state != "syncing"

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not ended():
            time.sleep(0.02)
        assert ended()
        state = coordinator.status()[project]
        assert state.state == "off" and state.last_error is None  # switched off: no failure
    finally:
        switched.set()
        coordinator.stop()
    # the commit in flight may land (the server accepted it), but no further one is sent
    assert len(proxy.requests("/commit")) == 1
    assert len(world.manifest(world.key("project")).notes) == 1


# -- a crashing server ---------------------------------------------------------------------


def _write_notes(directory: Path, count: int, prefix: str) -> dict[str, bytes]:
    """Write `count` note files straight into a directory (as an editor or git would)."""
    directory.mkdir(parents=True, exist_ok=True)
    out = {}
    for i in range(count):
        note = Note(
            id=f"{prefix}-{i:04d}",
            summary=f"Bulk note {i} of {prefix}",
            body=f"bulk body {i}\n" + "filler text\n" * 500,
            created_at=1_700_000_000_000 + i,
            updated_at=1_700_000_000_000 + i,
        )
        data = render_note(note)
        (directory / f"{note.id}.md").write_bytes(data)
        out[note.id] = data
    return out


def _inserting(world: World) -> bool:
    """True while the server's PostgreSQL storage is inserting revisions."""
    import psycopg

    assert world.server.dsn is not None
    with psycopg.connect(world.server.dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND state = 'active' AND query LIKE 'INSERT INTO memdir_revisions%'"
        ).fetchone()
    return bool(row and row[0])


def _objects_on_disk(world: World) -> int:
    return sum(1 for p in (world.server.data / "users").rglob("objects/*/*.md"))


@pytest.mark.own_server
def test_server_killed_mid_commit_restarts_and_everything_converges(
    world: World, proxy: FaultProxy, backend: str
) -> None:
    a = world.machine("a", url=proxy.url)
    b = world.machine("b", url=proxy.url)
    a.note("Small note first", "x")
    world.sync(a, b)
    bulk = _write_notes(a.directory("project"), 400, "bulk")
    key = world.key("project")
    version = world.manifest(key).version
    killed = threading.Event()

    def kill_mid_commit() -> None:
        # The commit request is about to reach the server: kill it while it works.
        def killer() -> None:
            deadline = time.monotonic() + 10
            if backend == "dir":
                while _objects_on_disk(world) < 60 and time.monotonic() < deadline:
                    time.sleep(0.002)
            else:
                while not _inserting(world) and time.monotonic() < deadline:
                    pass
            world.server.kill()
            killed.set()

        threading.Thread(target=killer, daemon=True).start()

    proxy.script("/commit", "pass", before=kill_mid_commit)
    failure: list[BaseException] = []

    def upload() -> None:
        try:
            with Memory.open(a.project, home=a.home) as memory:
                memory.sync.run("project")
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=upload)
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert killed.wait(10)
    assert len(failure) == 1 and isinstance(failure[0], SyncFailed), failure
    assert a.files("project").keys() >= bulk.keys()  # nothing local lost

    proxy.upstream = world.server.url
    world.server.start()  # same data, same port
    world.check_intact([key])
    after_crash = world.manifest(key)
    assert after_crash.version in (version, version + 1)  # the commit is whole or absent
    assert len(after_crash.notes) in (1, 401)

    world.settle(a, b)
    files = world.assert_converged(a, b)["project"]
    for note_id, data in bulk.items():
        assert files[note_id] == data
    assert len(files) == 401


# -- many machines racing at one server --------------------------------------------------


MACHINES = 4
PASSES = 25


@dataclasses.dataclass
class RaceLog:
    """What one racing machine did."""

    created: dict[str, str] = dataclasses.field(default_factory=dict)  # id -> body
    slots: dict[int, str] = dataclasses.field(default_factory=dict)  # shared line -> text
    replaced: list[bytes] = dataclasses.field(default_factory=list)  # versions a pull replaced
    retries: int = 0
    errors: list[str] = dataclasses.field(default_factory=list)


def _race(machine: Machine, index: int, shared: str, log: RaceLog, go: threading.Barrier) -> None:
    try:
        with Memory.open(machine.project, home=machine.home) as memory:
            directory = memory.stores.directory("project")
            go.wait(timeout=30)
            for p in range(PASSES):
                slot = index * PASSES + p
                text = f"slot {slot}: written by machine {index} in pass {p}"
                note = memory.read(shared)
                body = note.body.split("\n")
                body[2 * slot] = text
                memory.remember(note.summary, body="\n".join(body), id=shared, scope="project")
                log.slots[slot] = text
                made = memory.remember(
                    f"Race note {index}-{p}", body=f"made by {index} in pass {p}", scope="project"
                )
                log.created[made.note.id] = f"made by {index} in pass {p}"
                before = (directory / f"{shared}.md").read_bytes()
                for attempt in range(10):
                    try:
                        run = memory.sync.run("project")
                        break
                    except SyncFailed as exc:  # e.g. the server kept changing: try again
                        log.retries += 1
                        if attempt == 9:
                            raise
                        log.errors.append(str(exc))
                assert not run.conflicts, run
                after = (directory / f"{shared}.md").read_bytes()
                if after != before:
                    log.replaced.append(before)
    except BaseException as exc:  # reported by the main thread
        log.errors.append(f"FATAL {type(exc).__name__}: {exc}")
        raise


def test_racing_commits_lose_nothing(world: World) -> None:
    """4 machines x 25 passes, each editing a line of one shared note and adding a note."""
    machines = [world.machine(f"m{i}") for i in range(MACHINES)]
    # every racing line is separated by an untouched line, so edits never touch
    slots = MACHINES * PASSES
    body = "\n".join(
        f"slot {i // 2}: empty" if i % 2 == 0 else f"separator {i // 2}" for i in range(2 * slots)
    )
    shared = machines[0].note("Shared race note", body)
    world.settle(*machines)
    for machine in machines:
        machine.memory.close()  # each racing thread opens its own
    logs = [RaceLog() for _ in machines]
    go = threading.Barrier(MACHINES)
    threads = [
        threading.Thread(target=_race, args=(m, i, shared, logs[i], go))
        for i, m in enumerate(machines)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    fatal = [e for log in logs for e in log.errors if e.startswith("FATAL")]
    assert not fatal, fatal
    for machine in machines:
        machine.reopen()

    world.settle(*machines)
    files = world.assert_converged(*machines)["project"]
    # every edit is present, exactly once
    final = machines[0].read(shared).body.split("\n")
    for i, log in enumerate(logs):
        for slot, text in log.slots.items():
            assert final[2 * slot] == text, (i, slot)
    assert len(final) == 2 * slots
    # every note made is there once, and nothing else
    made = {nid: text for log in logs for nid, text in log.created.items()}
    assert len(made) == MACHINES * PASSES
    assert set(files) == set(made) | {shared}
    summaries = [n.summary for n in machines[0].memory.notes.list(scope="project")]
    assert len(summaries) == len(set(summaries))
    for nid, text in made.items():
        assert machines[0].read(nid).body == text
    # every local version a pull replaced is in that machine's backups
    for machine, log in zip(machines, logs, strict=True):
        kept = {data for _, reason, data in machine.backups() if reason.startswith("sync")}
        missing = [v for v in log.replaced if v not in kept]
        assert not missing, f"{machine}: {len(missing)} replaced versions not backed up"
    manifest = world.manifest(world.key("project"))
    assert manifest.version >= MACHINES * PASSES
    assert set(manifest.notes) == set(files)


# -- two processes of one machine syncing at once ------------------------------------------


@only_dir
def test_two_passes_of_one_machine_at_once_lose_nothing(world: World) -> None:
    """A background pass (the MCP host) and `memdir sync` of the same home run together."""
    a, b = world.machine("a"), world.machine("b")
    body = "\n".join(f"slot {i // 2}" if i % 2 == 0 else f"sep {i // 2}" for i in range(40))
    shared = a.note("Shared by both machines", body)
    world.settle(a, b)
    for machine in (a, b):
        machine.memory.close()
    errors: list[str] = []
    made: list[str] = []
    go = threading.Barrier(3)

    def writer_and_syncer() -> None:
        with Memory.open(a.project, home=a.home) as memory:
            go.wait(30)
            for i in range(12):
                made.append(memory.remember(f"Made on a {i}", body=f"a {i}").note.id)
                try:
                    memory.sync.run("project")
                except SyncFailed as exc:
                    errors.append(f"a1: {exc}")

    def background() -> None:
        with Memory.open(a.project, home=a.home) as memory:
            go.wait(30)
            for _ in range(12):
                try:
                    memory.sync.run("project")
                except SyncFailed as exc:
                    errors.append(f"a2: {exc}")

    def other_machine() -> None:
        with Memory.open(b.project, home=b.home) as memory:
            go.wait(30)
            for i in range(10):
                note = memory.read(shared)
                lines_ = note.body.split("\n")
                lines_[2 * i] = f"slot {i} edited on b"
                memory.remember(note.summary, body="\n".join(lines_), id=shared, scope="project")
                made.append(memory.remember(f"Made on b {i}", body=f"b {i}").note.id)
                memory.sync.run("project")

    threads = [threading.Thread(target=f) for f in (writer_and_syncer, background, other_machine)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    a.reopen()
    b.reopen()
    world.settle(a, b)
    files = world.assert_converged(a, b)["project"]
    assert set(files) == set(made) | {shared}
    body_now = a.read(shared).body.split("\n")
    assert all(body_now[2 * i] == f"slot {i} edited on b" for i in range(10))
    assert a.memory.sync.conflicts() == [] and b.memory.sync.conflicts() == []
