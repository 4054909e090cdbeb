"""Background sync: a long-running process uploads its writes and picks up the server's."""

from __future__ import annotations

import time
from collections.abc import Callable

from .conftest import Pair


def _wait(condition: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_write_is_uploaded_by_the_coordinator_and_switch_off_stops_it(pair: Pair) -> None:
    a, b = pair.a, pair.b
    coordinator = a.sync.background(debounce=0.05)
    coordinator.start()
    try:
        note_id = a.remember("Written while the background sync runs", scope="user").note.id

        def arrived() -> bool:
            b.sync.run()
            return any(n.id == note_id for n in b.notes.list(scope="user"))

        assert _wait(arrived), coordinator.status()
        assert all(s.last_error is None for s in coordinator.status().values())

        a.sync.switch(False)
        coordinator.set_enabled(False)
        a.remember("Written while sync is off", scope="user")
        time.sleep(0.5)
        b.sync.run()
        assert not any(n.summary == "Written while sync is off" for n in b.notes.list(scope="user"))
    finally:
        coordinator.stop()


def test_pulls_do_not_schedule_an_upload(pair: Pair) -> None:
    a, b = pair.a, pair.b
    b.remember("From the other machine", scope="user")
    b.sync.run()
    coordinator = a.sync.background(debounce=0.05)
    touched: list[str] = []
    original = coordinator.touch

    def recording_touch(key: str) -> None:
        touched.append(key)
        original(key)

    coordinator.touch = recording_touch  # type: ignore[method-assign]
    try:
        run = a.sync.run()
        assert run.reports[-1].pulled
        assert touched == []
        a.remember("A local write", scope="user")
        assert touched == ["user"]
    finally:
        coordinator.stop()
