"""Fixtures for the state store: one `State` per backend (SQLite file, fresh PostgreSQL db)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.state import State


class Clock:
    """A settable clock in Unix milliseconds, one step per call."""

    def __init__(self, start: int = 1_700_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        self.now += 1
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "state.sqlite3"


@pytest.fixture
def sqlite_state(sqlite_path: Path, home: Path, clock: Clock) -> Iterator[State]:
    """A State on a SQLite file under tmp_path; backups are signed by the key under `home`."""
    with State.open(sqlite_path, home=home, actor="agent-a", clock=clock) as opened:
        yield opened


@pytest.fixture(params=["sqlite", "postgresql"])
def state(
    request: pytest.FixtureRequest, tmp_path: Path, home: Path, clock: Clock
) -> Iterator[State]:
    """The same tests on both backends: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        path = tmp_path / "state" / "state.sqlite3"
        opened = State.open(path, home=home, actor="agent-a", clock=clock)
    else:
        dsn = request.getfixturevalue("pg_database_dsn")
        opened = State.open_postgres(dsn, actor="agent-a", clock=clock)
    try:
        yield opened
    finally:
        opened.close()
