"""Two processes writing one store at once (SQLite file, PostgreSQL database): every write
lands and the audit table's sequence has no gap and no duplicate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memdir.state import State

WRITER = """
import sys
from memdir.state import State
backend, where, actor, n = sys.argv[1:5]
opened = State.open(where, actor=actor) if backend == "sqlite" else State.open_postgres(
    where, actor=actor
)
with opened as state:
    for i in range(int(n)):
        task = state.add_task(f"{actor} {i}")
        state.update_task(task.id, priority=i)
        state.set_meta(f"last-{actor}", str(i))
"""


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_writer_processes(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if backend == "sqlite":
        where = str(tmp_path / "state.sqlite3")
        opened = State.open(where)
    else:
        where = request.getfixturevalue("pg_database_dsn")
        opened = State.open_postgres(where)
    opened.close()  # the schema exists before both start
    n = 60
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, backend, where, name, str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name in ("writer-a", "writer-b")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    with State.open(where) if backend == "sqlite" else State.open_postgres(where) as state:
        tasks = state.list_tasks(limit=None)
        assert len(tasks) == 2 * n
        entries = state.audit()
        assert sorted(e.seq for e in entries) == list(range(1, 6 * n + 1))
        assert {e.actor for e in entries} == {"writer-a", "writer-b"}
        assert state.get_meta("last-writer-a").value == str(n - 1)
