"""The sync coordinator (§7.2): deterministic schedules on a fake clock, plus the real thread."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable

import pytest

from memdir.errors import (
    IncompatibleVersion,
    InvalidInput,
    RateLimited,
    SyncFailed,
    SyncRefused,
)
from memdir.sync.scheduler import SyncCoordinator

Behaviour = Callable[[str, threading.Event], bool]


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Passes:
    """A scripted `run_pass`: records (key, time) and runs the next queued behaviour."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.runs: list[tuple[str, float]] = []
        self.script: dict[str, list[Behaviour]] = {}
        self.changed = False

    def __call__(self, key: str, abort: threading.Event) -> bool:
        self.runs.append((key, self.clock.now))
        queued = self.script.get(key)
        if queued:
            return queued.pop(0)(key, abort)
        return self.changed

    def then(self, key: str, *behaviours: Behaviour) -> None:
        self.script.setdefault(key, []).extend(behaviours)

    def times(self, key: str) -> list[float]:
        return [t for k, t in self.runs if k == key]

    def count(self) -> int:
        return len(self.runs)


def raising(error: Exception) -> Behaviour:
    def behaviour(key: str, abort: threading.Event) -> bool:
        raise error

    return behaviour


def returning(changed: bool) -> Behaviour:
    return lambda key, abort: changed


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def passes(clock: Clock) -> Passes:
    return Passes(clock)


@pytest.fixture
def coord(clock: Clock, passes: Passes) -> SyncCoordinator:
    return SyncCoordinator(passes, enabled=lambda: True, clock=clock)


def run_until(coord: SyncCoordinator, clock: Clock, end: float, step: float = 1.0) -> None:
    """Tick once per `step` s of fake time up to and including `end`."""
    while clock.now <= end:
        coord.tick()
        clock.now += step
    clock.now = end


def settle(coord: SyncCoordinator, clock: Clock, passes: Passes) -> None:
    """Run the initial pass of every directory registered so far and forget it."""
    coord.tick()
    passes.runs.clear()


def test_a_new_directory_is_checked_at_once(coord: SyncCoordinator, passes: Passes) -> None:
    coord.add("user", always=True)
    assert coord.status()["user"].next_at == 0.0
    assert coord.tick() == 60.0
    assert passes.runs == [("user", 0.0)]
    st = coord.status()["user"]
    assert (st.state, st.last_ok_at, st.next_at, st.message) == ("idle", 0.0, 60.0, "in sync")


def test_a_burst_of_writes_makes_one_pass_debounce_after_the_last(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("user", always=True)
    settle(coord, clock, passes)
    for t in (10.0, 11.0, 12.0):
        clock.now = t
        coord.touch("user")
        assert coord.tick() == pytest.approx(3.0)
    assert coord.status()["user"].state == "scheduled"
    clock.now = 14.9
    coord.tick()
    assert passes.runs == []
    clock.now = 15.0
    coord.tick()
    assert passes.runs == [("user", 15.0)]
    run_until(coord, clock, 70.0)
    assert passes.times("user") == [15.0]
    assert coord.status()["user"].next_at == 75.0  # then back to polling


def test_a_steady_stream_of_writes_still_syncs_within_four_debounces(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("user", always=True)
    settle(coord, clock, passes)
    clock.now = 10.0
    while clock.now <= 30.0:  # a write every 2 s, each inside the 3 s debounce
        coord.touch("user")
        coord.tick()
        clock.now += 1.0
        coord.tick()
        clock.now += 1.0
    # The first write was at 10, so the cap is 10 + 4 * 3 = 22 although writes go on.
    assert passes.times("user") == [22.0]
    # The writes from 24 to 30 form the next burst: 3 s after the last one (cap 36).
    run_until(coord, clock, 40.0)
    assert passes.times("user") == [22.0, 33.0]


def test_polling_backs_off_while_nothing_changes_and_resets_on_change_or_write(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("user", always=True)
    run_until(coord, clock, 1020.0)
    times = passes.times("user")
    assert times == [0.0, 60.0, 180.0, 420.0, 720.0, 1020.0]  # gaps 60, 120, 240, 300, 300

    passes.then("user", returning(True))  # the pass at 1320 changes something
    run_until(coord, clock, 1600.0)
    assert passes.times("user")[-4:] == [1320.0, 1380.0, 1440.0, 1560.0]  # 60, 60, 120

    clock.now = 1630.0  # the next check is due at 1800 (240 s)
    coord.touch("user")  # a local write resets the backoff too
    run_until(coord, clock, 1810.0)
    assert [t for t in passes.times("user") if t > 1600.0] == [1633.0, 1693.0]


def test_passes_stay_within_the_budget_across_all_directories(clock: Clock) -> None:
    passes = Passes(clock)
    coord = SyncCoordinator(passes, enabled=lambda: True, clock=clock, poll=1e6, max_poll=1e6)
    keys = [f"project-{i}" for i in range(25)]
    for key in keys:
        coord.add(key, always=True)
    wait = coord.tick()  # 25 directories due at once: only 20 start
    assert passes.count() == 20
    assert wait == 60.0
    waiting = [s for s in coord.status().values() if s.state == "scheduled"]
    assert len(waiting) == 5
    assert all("budget" in s.message and s.next_at == 60.0 for s in waiting)
    clock.now = 59.9
    coord.tick()
    assert passes.count() == 20
    clock.now = 60.0
    coord.tick()
    assert passes.count() == 25

    passes.runs.clear()
    for i, key in enumerate(keys):  # 25 writes to 25 directories within half a minute
        clock.now = 200.0 + i
        coord.touch(key)
        coord.tick()
    run_until(coord, clock, 259.0, step=0.5)
    assert passes.count() == 20
    run_until(coord, clock, 300.0, step=0.5)
    assert sorted(k for k, _ in passes.runs) == sorted(keys)
    starts = sorted(t for _, t in passes.runs)
    for t in starts:  # never more than 20 starts in any 60 s window
        assert sum(1 for s in starts if t - 60.0 < s <= t) <= 20


def test_a_429_pauses_every_directory_until_retry_after(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("user", always=True)
    coord.add("project", always=False)
    settle(coord, clock, passes)
    clock.now = 10.0
    passes.then("user", raising(RateLimited("too many requests", retry_after=42.0)))
    coord.touch("user")
    coord.touch("project")
    clock.now = 13.0
    assert coord.tick() == pytest.approx(42.0)
    assert passes.runs == [("user", 13.0)]  # the project was not tried after the 429
    for st in coord.status().values():
        assert st.state == "paused"
        assert st.message == "syncing too often, will retry in 42 s"
        assert "config" not in st.message
    clock.now = 30.0
    coord.sync_now()  # "sync now" does not break the pause, and says so
    coord.tick()
    assert passes.runs == [("user", 13.0)]
    assert coord.status()["project"].message == "syncing too often, will retry in 25 s"
    clock.now = 55.0
    coord.tick()
    assert sorted(passes.runs[1:]) == [("project", 55.0), ("user", 55.0)]
    assert coord.status()["user"].state == "idle"
    assert coord.status()["user"].last_error is None


def test_a_429_without_retry_after_pauses_for_a_minute(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("user", always=True)
    passes.then("user", raising(RateLimited("slow down")))
    assert coord.tick() == 60.0
    assert coord.status()["user"].message == "syncing too often, will retry in 60 s"


def test_a_transient_failure_retries_after_a_minute(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("user", always=True)
    passes.then("user", raising(SyncFailed("server unreachable")))
    coord.tick()
    st = coord.status()["user"]
    assert (st.state, st.last_error, st.next_at) == ("error", "server unreachable", 60.0)
    assert st.message == "server unreachable; will retry in 60 s"
    clock.now = 5.0
    coord.touch("user")  # writes do not hammer a failing server
    run_until(coord, clock, 59.0)
    assert passes.times("user") == [0.0]
    clock.now = 60.0
    coord.tick()
    assert passes.times("user") == [0.0, 60.0]
    st = coord.status()["user"]
    assert (st.state, st.last_error, st.last_ok_at) == ("idle", None, 60.0)


def test_a_failed_write_pass_of_an_idle_project_is_retried(clock: Clock) -> None:
    passes = Passes(clock)
    coord = SyncCoordinator(passes, enabled=lambda: True, clock=clock, linger=10.0)
    coord.add("project", always=False)
    settle(coord, clock, passes)
    clock.now = 100.0  # long after the linger: not polled, but a write must still get out
    coord.touch("project")
    passes.then("project", raising(SyncFailed("502 bad gateway")))
    run_until(coord, clock, 200.0)
    assert passes.times("project") == [103.0, 163.0]


def test_a_server_asking_for_longer_than_a_minute_is_heard(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("user", always=True)
    passes.then("user", raising(SyncFailed("503 maintenance", retry_after=120.0)))
    assert coord.tick() == 120.0


@pytest.mark.parametrize(
    "error",
    [SyncRefused("signed out"), IncompatibleVersion("server speaks protocol 3..4, we speak 1")],
)
def test_a_refused_directory_stops_until_sync_now(
    coord: SyncCoordinator, clock: Clock, passes: Passes, error: SyncRefused
) -> None:
    coord.add("user", always=True)
    coord.add("other", always=True)
    passes.then("user", raising(error))
    coord.tick()
    st = coord.status()["user"]
    assert (st.state, st.message, st.next_at) == ("refused", str(error), None)
    clock.now = 10.0
    coord.touch("user")
    run_until(coord, clock, 3600.0, step=10.0)
    assert passes.times("user") == [0.0]
    assert len(passes.times("other")) > 5  # the other directory goes on
    coord.sync_now("user")
    coord.tick()
    assert passes.times("user") == [0.0, 3600.0]
    assert coord.status()["user"].state == "idle"


def test_switching_on_clears_a_refusal(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("user", always=True)
    passes.then("user", raising(SyncRefused("sync is switched off")))
    coord.tick()
    clock.now = 500.0
    coord.set_enabled(True)
    coord.tick()
    assert passes.times("user") == [0.0, 500.0]


def test_switched_off_no_pass_starts_and_switching_on_makes_everything_due(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("user", always=True)
    coord.add("project", always=False)
    settle(coord, clock, passes)
    coord.set_enabled(False)
    clock.now = 10.0
    coord.touch("project")
    coord.sync_now("user")
    assert coord.tick() == math.inf
    run_until(coord, clock, 1000.0)
    assert passes.runs == []
    assert {s.state for s in coord.status().values()} == {"off"}
    coord.set_enabled(True)
    coord.tick()
    assert sorted(passes.runs) == [("project", 1000.0), ("user", 1000.0)]


def test_an_external_switch_counts_and_turning_it_on_makes_everything_due(
    clock: Clock, passes: Passes
) -> None:
    switch = {"on": False}
    coord = SyncCoordinator(passes, enabled=lambda: switch["on"], clock=clock)
    coord.add("user", always=True)
    coord.add("project", always=False)
    run_until(coord, clock, 3000.0, step=10.0)
    assert passes.runs == []
    assert coord.status()["user"].state == "off"
    switch["on"] = True  # e.g. `memdir sync on` in another process wrote the switch file
    coord.tick()
    assert sorted(passes.runs) == [("project", 3000.0), ("user", 3000.0)]


def test_projects_are_polled_while_in_use_and_thirty_minutes_after(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("user", always=True)
    coord.add("project", always=False)  # adding counts as use at 0
    run_until(coord, clock, 1000.0)
    clock.now = 1000.0
    coord.used("project")  # the project is still in use at 1000 s
    run_until(coord, clock, 10_000.0, step=5.0)
    project = passes.times("project")
    assert project[:6] == [0.0, 60.0, 180.0, 420.0, 720.0, 1020.0]
    assert max(project) < 1000.0 + 1800.0  # not polled once the 30 minutes are over
    assert max(project) > 1000.0 + 1800.0 - 300.0  # but polled right up to them
    assert max(passes.times("user")) > 9_500.0  # user notes always
    assert coord.status()["project"].state == "idle"
    assert coord.status()["project"].next_at is None

    clock.now = 20_000.0
    coord.sync_now("project")  # "sync now" still runs a lingering project
    coord.tick()
    assert passes.times("project")[-1] == 20_000.0
    clock.now = 20_100.0
    coord.touch("project")  # and so does a write, which also counts as use
    run_until(coord, clock, 20_200.0)
    assert passes.times("project")[-2:] == [20_103.0, 20_163.0]


def test_sync_now_runs_at_once_despite_backoff(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("a", always=True)
    coord.add("b", always=True)
    run_until(coord, clock, 800.0)
    passes.runs.clear()
    clock.now = 801.0
    coord.sync_now("a")
    coord.tick()
    assert passes.runs == [("a", 801.0)]
    clock.now = 802.0
    coord.sync_now()
    coord.tick()
    assert sorted(passes.runs[1:]) == [("a", 802.0), ("b", 802.0)]


def test_a_write_during_a_pass_is_not_lost_and_not_looped(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("user", always=True)

    def writes_during_the_pass(key: str, abort: threading.Event) -> bool:
        assert coord.status()[key].state == "syncing"
        coord.touch(key)
        return True

    passes.then("user", writes_during_the_pass)
    assert coord.tick() == pytest.approx(3.0)
    assert passes.times("user") == [0.0]
    clock.now = 3.0
    coord.tick()
    assert passes.times("user") == [0.0, 3.0]


def test_unexpected_exceptions_are_logged_and_retried_like_transient_errors(
    coord: SyncCoordinator, clock: Clock, passes: Passes, caplog: pytest.LogCaptureFixture
) -> None:
    coord.add("user", always=True)
    passes.then("user", raising(RuntimeError("bug in the client")))
    passes.then("user", raising(InvalidInput("odd note id")))
    with caplog.at_level(logging.INFO, logger="memdir.sync"):
        assert coord.tick() == 60.0
    assert "bug in the client" in caplog.text
    assert coord.status()["user"].state == "error"
    clock.now = 60.0
    assert coord.tick() == 60.0
    assert coord.status()["user"].last_error == "odd note id"
    clock.now = 120.0
    coord.tick()
    assert coord.status()["user"].state == "idle"


def test_removed_and_unknown_directories(
    coord: SyncCoordinator, clock: Clock, passes: Passes
) -> None:
    coord.add("project", always=False)
    coord.remove("project")
    coord.remove("never-added")
    assert coord.tick() == math.inf
    assert passes.runs == []
    assert coord.status() == {}
    with pytest.raises(KeyError):
        coord.touch("project")
    with pytest.raises(KeyError):
        coord.sync_now("project")


def test_invalid_settings_are_rejected(passes: Passes) -> None:
    with pytest.raises(ValueError):
        SyncCoordinator(passes, enabled=lambda: True, budget_per_minute=0)


# -- the real thread ------------------------------------------------------------------

WAIT = 10.0  # generous: these tests must pass on a loaded machine


def test_the_thread_runs_a_touched_directory_survives_errors_and_stops() -> None:
    seen: list[str] = []
    first = threading.Event()
    second = threading.Event()

    def run_pass(key: str, abort: threading.Event) -> bool:
        seen.append(key)
        if len(seen) == 1:
            first.set()
            raise RuntimeError("the first pass blows up")
        second.set()
        return False

    coord = SyncCoordinator(run_pass, enabled=lambda: True, debounce=0.05, poll=3600.0)
    coord.add("user", always=True)
    before = set(threading.enumerate())
    coord.start()
    workers = [t for t in threading.enumerate() if t not in before and t.name == "memdir-sync"]
    try:
        assert first.wait(WAIT)
        coord.sync_now("user")  # the transient wait is an hour; sync now must still run
        assert second.wait(WAIT)
        second.clear()
        coord.touch("user")
        assert second.wait(WAIT)
    finally:
        coord.stop(timeout=WAIT)
    assert len(workers) == 1
    assert not workers[0].is_alive()


def test_switching_off_aborts_the_pass_in_flight() -> None:
    started = threading.Event()
    aborts: list[threading.Event] = []

    def run_pass(key: str, abort: threading.Event) -> bool:
        aborts.append(abort)
        started.set()
        if abort.wait(WAIT):
            raise SyncFailed("request cancelled")
        return False

    coord = SyncCoordinator(run_pass, enabled=lambda: True, debounce=0.01)
    coord.add("user", always=True)
    coord.start()
    try:
        assert started.wait(WAIT)
        coord.set_enabled(False)
        assert aborts[0].wait(WAIT)
        coord.touch("user")
        coord.sync_now("user")
    finally:
        coord.stop(timeout=WAIT)
    assert len(aborts) == 1
    st = coord.status()["user"]
    assert (st.state, st.last_error) == ("off", None)  # an abort is not an error
