"""The SQLite file: where it lives, mode 0600, WAL, and an audit table nothing rewrites."""

from __future__ import annotations

import re
import sqlite3
import stat
from pathlib import Path

import pytest

import memdir.state
from memdir.state import State, default_state_path


def test_the_default_path_is_under_memdir_home(home: Path) -> None:
    assert default_state_path() == home / "state" / "state.sqlite3"
    with State.open() as opened:
        opened.add_task("x")
    assert (home / "state" / "state.sqlite3").is_file()


def test_the_file_and_its_sidecars_are_private_and_in_wal_mode(sqlite_state: State) -> None:
    sqlite_state.add_task("x")
    path = sqlite_state.path
    assert path is not None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for sidecar in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        if sidecar.exists():
            assert stat.S_IMODE(sidecar.stat().st_mode) == 0o600
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_an_existing_file_is_narrowed_to_0600(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    path.touch(mode=0o644)
    path.chmod(0o644)
    with State.open(path):
        pass
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_no_code_updates_or_deletes_the_audit_table() -> None:
    package = Path(memdir.state.__file__).parent
    source = "\n".join(p.read_text(encoding="utf-8") for p in package.glob("*.py"))
    assert "INSERT INTO state_audit" in source
    assert not re.search(r"(UPDATE|DELETE FROM|REPLACE INTO)\s+state_audit", source, re.I)
    assert not re.search(r"DROP\s+TABLE", source, re.I)
    public = {name for name in dir(State) if not name.startswith("_")}
    assert not {n for n in public if "audit" in n} - {"audit"}


def test_a_newer_schema_is_refused(sqlite_path: Path) -> None:
    with State.open(sqlite_path):
        pass
    with sqlite3.connect(sqlite_path) as conn:
        conn.execute("UPDATE state_schema SET version = 99")
    from memdir.errors import Refused

    with pytest.raises(Refused, match="schema version 99"):
        State.open(sqlite_path)
