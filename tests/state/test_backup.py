"""Backups with SQLite's online backup API and restores that verify first and keep a copy."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memdir.errors import IntegrityError, NotFound, Refused
from memdir.state import State


def _fill(state: State) -> str:
    goal = state.add_goal("goal")
    task = state.add_task("before the backup", goal_id=goal.id, fields={"area": "x"})
    state.record_session("agent-a", "one")
    state.set_meta("model", "small")
    return task.id


def _snapshot(state: State) -> tuple[object, ...]:
    return (
        state.list_tasks(include_closed=True),
        state.list_goals(include_closed=True),
        state.list_sessions(),
        state.list_meta(),
        state.audit(),
    )


def test_backup_writes_the_database_and_a_manifest(sqlite_state: State, tmp_path: Path) -> None:
    _fill(sqlite_state)
    info = sqlite_state.backup(tmp_path / "b")
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["format"] == "memdir-state-backup"
    assert manifest["files"]["state.sqlite3"]["sha256"] == info.sha256
    assert info.rows == {"tasks": 1, "goals": 1, "sessions": 1, "audit": 4, "meta": 1}
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["manifest.json", "state.sqlite3"]
    for path in (tmp_path / "b").iterdir():
        assert path.stat().st_mode & 0o777 == 0o600
    checked = sqlite_state.check_backup(tmp_path / "b")
    assert checked.sha256 == info.sha256
    assert checked.authenticated and checked.key_id == info.key_id is not None
    assert sqlite_state.audit(limit=1)[0].action == "state.backup"


def test_backup_refuses_a_directory_that_is_not_empty(sqlite_state: State, tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "other").write_text("x")
    with pytest.raises(Refused, match="not empty"):
        sqlite_state.backup(tmp_path / "b")


def test_restore_brings_the_backup_back_and_keeps_a_pre_restore_copy(
    sqlite_state: State, tmp_path: Path
) -> None:
    task_id = _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "b")
    before = _snapshot(sqlite_state)
    later = sqlite_state.add_task("after the backup")
    sqlite_state.update_task(task_id, title="changed later")
    info = sqlite_state.restore(tmp_path / "b")
    assert sqlite_state.get_task(task_id).title == "before the backup"
    with pytest.raises(NotFound):
        sqlite_state.get_task(later.id)
    now = _snapshot(sqlite_state)
    assert now[:4] == before[:4]
    # The audit table keeps what happened after the backup and records the restore.
    assert [e.action for e in sqlite_state.audit(limit=3)] == [
        "state.restore",
        "task.update",
        "task.add",
    ]
    assert (info.authenticated, info.audit_imported, info.audit_not_imported) == (True, 0, 0)
    # The store as it was is a verifiable backup of its own, and restores.
    assert sqlite_state.check_backup(info.pre_restore).rows["tasks"] == 2
    sqlite_state.restore(info.pre_restore)
    assert sqlite_state.get_task(later.id).title == "after the backup"
    assert sqlite_state.get_task(task_id).title == "changed later"
    assert sqlite_state.path is not None
    with sqlite3.connect(sqlite_state.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_second_connection_sees_the_restored_store(
    sqlite_state: State, sqlite_path: Path, tmp_path: Path
) -> None:
    task_id = _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "b")
    sqlite_state.close_task(task_id)
    with State.open(sqlite_path) as other:
        assert other.get_task(task_id).closed_at is not None
        sqlite_state.restore(tmp_path / "b")
        assert other.get_task(task_id).closed_at is None


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def _truncate(path: Path, offset: int) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def _drop(path: Path, offset: int) -> None:
    path.unlink()


def _garble(path: Path, offset: int) -> None:
    path.write_text("{not json")


@pytest.mark.parametrize(
    ("damage", "name", "reason"),
    [
        (_flip, "state.sqlite3", "SHA-256 of state.sqlite3 does not match"),
        (_truncate, "state.sqlite3", "bytes, the manifest says"),
        (_drop, "state.sqlite3", "state.sqlite3 is missing"),
        (_drop, "manifest.json", "manifest.json is missing"),
        (_garble, "manifest.json", "cannot be read as JSON"),
        (_flip, "manifest.json", "damaged"),
    ],
    ids=["flipped-byte", "truncated", "no-database", "no-manifest", "bad-json", "manifest-byte"],
)
def test_a_damaged_backup_is_refused_and_nothing_changes(
    sqlite_state: State, tmp_path: Path, damage: object, name: str, reason: str
) -> None:
    _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "b")
    sqlite_state.add_task("after the backup")
    before = _snapshot(sqlite_state)
    assert callable(damage)
    # Byte 100 of the database is in its header page; a manifest's byte 30 is in a value.
    damage(tmp_path / "b" / name, 30 if name == "manifest.json" else 100)
    with pytest.raises(IntegrityError, match=reason) as refused:
        sqlite_state.restore(tmp_path / "b")
    assert "nothing was changed" in str(refused.value)
    assert _snapshot(sqlite_state) == before
    assert sqlite_state.path is not None
    assert not (sqlite_state.path.parent / "pre-restore").exists()


def test_a_backup_whose_manifest_matches_another_file_is_refused(
    sqlite_state: State, tmp_path: Path
) -> None:
    _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "a")
    sqlite_state.add_task("more")
    sqlite_state.backup(tmp_path / "b")
    (tmp_path / "b" / "manifest.json").write_bytes((tmp_path / "a" / "manifest.json").read_bytes())
    with pytest.raises(IntegrityError):
        sqlite_state.restore(tmp_path / "b")


def test_a_valid_sum_over_a_file_that_is_no_state_store_is_refused(
    sqlite_state: State, tmp_path: Path
) -> None:
    _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "b")
    import hashlib

    db = tmp_path / "b" / "state.sqlite3"
    db.write_bytes(b"not a database at all" * 100)
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    data = db.read_bytes()
    manifest["files"]["state.sqlite3"] = {
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
    }
    (tmp_path / "b" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IntegrityError, match="its own SHA-256"):
        sqlite_state.restore(tmp_path / "b")
    from memdir.state import manifest_sum

    manifest["manifest_sha256"] = manifest_sum(manifest)
    (tmp_path / "b" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IntegrityError, match="signature does not verify"):
        sqlite_state.restore(tmp_path / "b")
    # Even accepted as foreign (the signature stripped), it is still no SQLite database.
    del manifest["sig"], manifest["key"]
    manifest["manifest_sha256"] = manifest_sum(manifest)
    (tmp_path / "b" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IntegrityError, match="not a SQLite database"):
        sqlite_state.restore(tmp_path / "b", accept_foreign=True)


def test_restore_from_nowhere_is_not_found(sqlite_state: State, tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        sqlite_state.restore(tmp_path / "absent")


def test_postgresql_backups_are_refused_clearly(pg_database_dsn: str, tmp_path: Path) -> None:
    with State.open_postgres(pg_database_dsn) as state:
        with pytest.raises(Refused, match="pg_dump"):
            state.backup(tmp_path / "b")
        with pytest.raises(Refused, match="pg_dump"):
            state.restore(tmp_path / "b")
