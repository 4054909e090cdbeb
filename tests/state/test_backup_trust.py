"""Backups are authenticated by this machine's key, guarded row by row, and a restore never
rewrites the audit table's past (issue 24: an edited backup injected a credential and
rolled the audit history back)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memdir.cli.main import main
from memdir.errors import (
    EXIT_INTEGRITY,
    EXIT_OK,
    EXIT_REFUSED,
    Conflict,
    IntegrityError,
    SecretRefused,
)
from memdir.state import State, manifest_sum
from memdir.store.audit import AuditLog
from memdir.store.signing import MachineKey

from .conftest import Clock

TOKEN = "ghp_Zq7abcdefghijklmnopqrstuvwxyz0123456"


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


def _edit(backup: Path, *statements: str, resum: bool = True) -> None:
    """Change the backup's database with SQL and, as an attacker would, recompute every sum."""
    db = backup / "state.sqlite3"
    with sqlite3.connect(db) as conn:
        for sql in statements:
            conn.execute(sql)
    conn.close()
    if resum:
        data = db.read_bytes()
        manifest = json.loads((backup / "manifest.json").read_text())
        manifest["files"]["state.sqlite3"] = {
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
        }
        _write_manifest(backup, manifest)


def _write_manifest(backup: Path, manifest: dict[str, object]) -> None:
    manifest["manifest_sha256"] = manifest_sum(manifest)
    (backup / "manifest.json").write_text(json.dumps(manifest))


def _manifest(backup: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((backup / "manifest.json").read_text())
    return loaded


def _refused_and_unchanged(
    state: State, backup: Path, match: str, *, accept_foreign: bool = False
) -> IntegrityError:
    before = _snapshot(state)
    with pytest.raises(IntegrityError, match=match) as refused:
        state.restore(backup, accept_foreign=accept_foreign)
    assert "nothing was changed" in str(refused.value)
    assert _snapshot(state) == before
    assert state.path is not None
    assert not (state.path.parent / "pre-restore").exists()
    return refused.value


@pytest.fixture
def other(tmp_path: Path) -> Callable[..., State]:
    """A store on "another machine": its own home, so its own key."""

    def make(name: str = "other") -> State:
        home = tmp_path / f"{name}-home"
        return State.open(home / "state" / "state.sqlite3", home=home, actor="elsewhere")

    return make


# -- the signature ---------------------------------------------------------------------------


def test_an_edited_row_with_recomputed_sums_is_refused(sqlite_state: State, tmp_path: Path) -> None:
    task_id = _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "b")
    sqlite_state.add_task("after the backup")
    _edit(tmp_path / "b", f"UPDATE state_tasks SET title = 'edited' WHERE id = '{task_id}'")
    error = _refused_and_unchanged(sqlite_state, tmp_path / "b", "signature does not verify")
    assert "changed after it was made" in str(error)
    # Accepting foreign backups does not accept a broken signature.
    _refused_and_unchanged(
        sqlite_state, tmp_path / "b", "signature does not verify", accept_foreign=True
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [("rows", {"tasks": 9}), ("created_at", 1), ("key", "ab" * 32), ("sig", "cd" * 64)],
)
def test_an_edited_manifest_is_refused(
    sqlite_state: State, tmp_path: Path, field: str, value: object
) -> None:
    _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "b")
    manifest = _manifest(tmp_path / "b")
    manifest[field] = value
    _write_manifest(tmp_path / "b", manifest)
    _refused_and_unchanged(sqlite_state, tmp_path / "b", "signature does not verify")
    with pytest.raises(IntegrityError):
        sqlite_state.check_backup(tmp_path / "b", accept_foreign=True)


def test_a_backup_from_another_machine_is_refused_unless_accepted(
    sqlite_state: State, tmp_path: Path, other: Callable[..., State]
) -> None:
    _fill(sqlite_state)
    with other() as elsewhere:
        for i in range(8):  # a longer history than this store's: none of it comes in
            elsewhere.set_meta("counter", str(i))
        moved = elsewhere.add_task("made elsewhere")
        info = elsewhere.backup(tmp_path / "b")
    assert info.authenticated and info.key_id
    error = _refused_and_unchanged(
        sqlite_state, tmp_path / "b", "not authenticated by this machine's key"
    )
    assert f"signed by key {info.key_id}" in str(error)
    assert "accepting it explicitly as foreign" in str(error)
    checked = sqlite_state.check_backup(tmp_path / "b", accept_foreign=True)
    assert (checked.authenticated, checked.key_id) == (False, info.key_id)
    history = sqlite_state.audit()
    restored = sqlite_state.restore(tmp_path / "b", accept_foreign=True)
    assert sqlite_state.get_task(moved.id).title == "made elsewhere"
    assert restored.authenticated is False and restored.audit_imported == 0
    assert restored.audit_not_imported == 9
    # The other machine's audit entries are not imported; the restore is recorded as foreign.
    after = sqlite_state.audit()
    assert after[1:] == history
    assert (after[0].seq, after[0].action, after[0].actor) == (
        history[0].seq + 1,
        "state.restore.foreign",
        "agent-a",
    )


@pytest.mark.parametrize("how", ["stripped", "version-1"])
def test_a_backup_without_a_signature_is_refused_unless_accepted(
    sqlite_state: State, tmp_path: Path, how: str
) -> None:
    _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "b")
    manifest = _manifest(tmp_path / "b")
    del manifest["key"], manifest["sig"]
    if how == "version-1":
        manifest["version"] = 1
    _write_manifest(tmp_path / "b", manifest)
    _refused_and_unchanged(sqlite_state, tmp_path / "b", "carries no signature")
    assert sqlite_state.restore(tmp_path / "b", accept_foreign=True).authenticated is False


def test_a_restore_still_works_after_the_key_signed_an_audit_head(
    sqlite_state: State, home: Path, tmp_path: Path
) -> None:
    # The first backup makes the machine key (pending); the note store's audit log adopts it.
    _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "b")
    log = AuditLog(home / "audit")
    log.append("backup", detail="a note store backup")
    report = log.verify()
    assert report.ok and report.signature == "signed", report.problems
    assert (home / "audit" / "audit.key").is_file()
    assert sqlite_state.restore(tmp_path / "b").authenticated
    sqlite_state.backup(tmp_path / "c")
    log.append("backup", detail="another")
    assert log.verify().ok
    assert sqlite_state.check_backup(tmp_path / "c").authenticated


# -- the guard over every restored row -------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "table", "where"),
    [
        (f"INSERT INTO state_meta VALUES ('deploy', '{TOKEN}', 1)", "state_meta", "key 'deploy'"),
        (
            f"UPDATE state_tasks SET notes = 'use {TOKEN} to push'",
            "state_tasks",
            "notes",
        ),
        (
            'UPDATE state_tasks SET fields = \'{"db_password": "hunter2"}\'',
            "state_tasks",
            "db_password",
        ),
        (
            f"INSERT INTO state_sessions VALUES ('{TOKEN}', 'a', 1, NULL, '', '{{}}')",
            "state_sessions",
            "a row whose id itself looks like a credential",
        ),
        (
            f"INSERT INTO state_audit VALUES (99, 1, '{TOKEN}', 'task.add', 't-1')",
            "state_audit",
            "seq 99",
        ),
    ],
    ids=["meta-value", "task-notes", "field-name", "session-id", "audit-actor"],
)
def test_a_backup_holding_a_credential_is_refused_without_echoing_it(
    sqlite_state: State, tmp_path: Path, other: Callable[..., State], sql: str, table: str,
    where: str,
) -> None:  # fmt: skip
    _fill(sqlite_state)
    with other() as elsewhere:
        _fill(elsewhere)
        count = elsewhere.counts()["audit"]
        assert elsewhere.path is not None
        with sqlite3.connect(elsewhere.path) as conn:
            conn.execute(sql.replace("99", str(count + 1)))
        conn.close()
        elsewhere.backup(tmp_path / "b")
    before = _snapshot(sqlite_state)
    with pytest.raises(SecretRefused) as refused:
        sqlite_state.restore(tmp_path / "b", accept_foreign=True)
    message = str(refused.value)
    assert table in message and where.replace("99", str(count + 1)) in message
    assert "nothing was changed" in message
    assert "Zq7" not in message and "hunter2" not in message
    assert _snapshot(sqlite_state) == before


def test_a_credential_in_a_signed_backup_is_refused_too(
    sqlite_state: State, tmp_path: Path
) -> None:
    # Written around the guard (straight into the file), then backed up and signed here.
    _fill(sqlite_state)
    assert sqlite_state.path is not None
    with sqlite3.connect(sqlite_state.path) as conn:
        conn.execute(f"INSERT INTO state_meta VALUES ('push', '{TOKEN}', 1)")
    conn.close()
    sqlite_state.backup(tmp_path / "b")
    with sqlite3.connect(sqlite_state.path) as conn:
        conn.execute("DELETE FROM state_meta WHERE key = 'push'")
    conn.close()
    where = r"\(GitHub token\) in state_meta, key 'push', value;"
    with pytest.raises(SecretRefused, match=where) as refused:
        sqlite_state.restore(tmp_path / "b")
    assert "Zq7" not in str(refused.value)
    assert [m.key for m in sqlite_state.list_meta()] == ["model"]


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("UPDATE state_tasks SET status = 'finished'", "state_tasks holds values of the wrong"),
        ("UPDATE state_tasks SET priority = 'high'", "state_tasks holds values of the wrong"),
        ("UPDATE state_goals SET fields = '[1]'", "not a JSON object of text"),
        ("INSERT INTO state_audit VALUES (50, 1, 'a', 'task.add', 't-1')", "sequence has gaps"),
        ("UPDATE state_schema SET version = 2", "schema version is 2"),
        ("ALTER TABLE state_meta ADD COLUMN extra TEXT", "does not have this schema's columns"),
    ],
    ids=["status", "priority", "fields", "audit-gap", "schema", "columns"],
)
def test_rows_the_store_cannot_read_back_are_refused(
    sqlite_state: State, tmp_path: Path, other: Callable[..., State], sql: str, reason: str
) -> None:
    _fill(sqlite_state)
    with other() as elsewhere:
        _fill(elsewhere)
        assert elsewhere.path is not None
        with sqlite3.connect(elsewhere.path) as conn:
            conn.execute(sql)
        conn.close()
        elsewhere.backup(tmp_path / "b")
    _refused_and_unchanged(sqlite_state, tmp_path / "b", reason, accept_foreign=True)


# -- the audit table's past ------------------------------------------------------------------


def test_a_restore_appends_to_the_audit_table_and_never_rewrites_it(
    sqlite_state: State, tmp_path: Path
) -> None:
    _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "b")
    for i in range(3):
        sqlite_state.add_task(f"later {i}")
    history = sqlite_state.audit()
    info = sqlite_state.restore(tmp_path / "b")
    after = sqlite_state.audit()
    assert after[1:] == history
    assert after[0].seq == history[0].seq + 1 and after[0].action == "state.restore"
    assert sorted(e.seq for e in after) == list(range(1, len(after) + 1))
    assert (info.audit_imported, info.audit_not_imported) == (0, 0)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE state_audit SET actor = 'someone-else'",
        # The history rolled back: the backup's entries renumbered from 1 after the first.
        "DELETE FROM state_audit WHERE seq > 1",
    ],
    ids=["actor-rewritten", "seq-back"],
)
def test_a_backup_with_another_audit_history_cannot_rewrite_this_one(
    sqlite_state: State, tmp_path: Path, other: Callable[..., State], sql: str
) -> None:
    _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "signed")
    # The edited history can only come in unauthenticated: re-signed elsewhere, accepted.
    with other() as elsewhere:
        assert elsewhere.path is not None
        elsewhere.close()
        (tmp_path / "signed" / "state.sqlite3").replace(elsewhere.path)
        with sqlite3.connect(elsewhere.path) as conn:
            conn.execute(sql)
        conn.close()
    with other() as elsewhere:
        elsewhere.backup(tmp_path / "b")
    sqlite_state.add_task("after")
    history = sqlite_state.audit()
    info = sqlite_state.restore(tmp_path / "b", accept_foreign=True)
    after = sqlite_state.audit()
    assert after[1:] == history
    assert {e.actor for e in after} == {"agent-a"}
    assert after[0].seq == history[0].seq + 1
    assert info.audit_imported == 0


def test_the_audit_history_of_another_store_on_this_machine_is_not_imported(
    sqlite_state: State, tmp_path: Path, home: Path, clock: Clock
) -> None:
    with State.open(tmp_path / "second.sqlite3", home=home, actor="second", clock=clock) as two:
        for i in range(6):  # longer than this store's history, and another one
            two.add_task(f"in the second store {i}")
        two.backup(tmp_path / "b")
    _fill(sqlite_state)
    history = sqlite_state.audit()
    info = sqlite_state.restore(tmp_path / "b")
    assert info.authenticated and info.audit_imported == 0 and info.audit_not_imported == 6
    assert sqlite_state.audit()[1:] == history


def test_a_lost_store_gets_its_history_back_from_a_signed_backup(
    sqlite_state: State, tmp_path: Path, home: Path
) -> None:
    _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "b")
    history = sqlite_state.audit()  # the backup's own entry is not in the backup
    with State.open(tmp_path / "new.sqlite3", home=home, actor="agent-b") as fresh:
        info = fresh.restore(tmp_path / "b")
        assert info.audit_imported == len(history) - 1
        restored = fresh.audit()
        assert restored[1:] == history[1:]
        assert (restored[0].seq, restored[0].action, restored[0].actor) == (
            len(history),
            "state.restore",
            "agent-b",
        )
        assert fresh.list_tasks() == sqlite_state.list_tasks()


def test_a_write_during_the_restore_makes_it_give_up(
    sqlite_state: State, sqlite_path: Path, home: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    _fill(sqlite_state)
    sqlite_state.backup(tmp_path / "b")
    sign = MachineKey.sign
    written: list[str] = []

    def sign_after_a_write(key: MachineKey, payload: bytes) -> tuple[str, str]:
        # The pre-restore copy is being signed: another process writes meanwhile.
        if not written:
            with State.open(sqlite_path, home=home, actor="intruder") as other:
                written.append(other.add_task("during the restore").id)
        return sign(key, payload)

    monkeypatch.setattr(MachineKey, "sign", sign_after_a_write)
    with pytest.raises(Conflict, match="written to while the restore ran"):
        sqlite_state.restore(tmp_path / "b")
    assert sqlite_state.get_task(written[0]).title == "during the restore"
    assert sqlite_state.audit(limit=1)[0].actor == "intruder"
    assert sqlite_state.path is not None
    assert list((sqlite_state.path.parent / "pre-restore").iterdir()) == []
    sqlite_state.restore(tmp_path / "b")
    assert sqlite_state.audit(limit=1)[0].action == "state.restore"


# -- the command line ------------------------------------------------------------------------


def _cli(home: Path, *args: str) -> Result:
    return CliRunner().invoke(
        main,
        ["--home", str(home), "state", "--actor", "tester", *args],
        env={"COLUMNS": "250"},
        catch_exceptions=False,
    )


def test_the_cli_refuses_edited_foreign_and_secret_backups(
    home: Path, tmp_path: Path, other: Callable[..., State]
) -> None:
    assert _cli(home, "task", "add", "kept").exit_code == EXIT_OK
    assert _cli(home, "backup", str(tmp_path / "ok")).exit_code == EXIT_OK
    round_trip = _cli(home, "restore", str(tmp_path / "ok"), "--yes")
    assert round_trip.exit_code == EXIT_OK and "restored from" in round_trip.stdout

    _edit(tmp_path / "ok", "UPDATE state_tasks SET title = 'edited'")
    edited = _cli(home, "restore", str(tmp_path / "ok"), "--yes")
    assert edited.exit_code == EXIT_INTEGRITY
    assert "signature does not verify" in edited.stderr
    assert "nothing was changed" in edited.stderr and "Traceback" not in edited.stderr
    assert "--accept-foreign" not in edited.stderr

    with other() as elsewhere:
        elsewhere.add_task("made elsewhere")
        elsewhere.backup(tmp_path / "foreign")
        assert elsewhere.path is not None
        with sqlite3.connect(elsewhere.path) as conn:
            conn.execute(f"INSERT INTO state_meta VALUES ('deploy', '{TOKEN}', 1)")
        conn.close()
        elsewhere.backup(tmp_path / "secret")
    foreign = _cli(home, "restore", str(tmp_path / "foreign"), "--yes", "--json")
    assert foreign.exit_code == EXIT_INTEGRITY
    error = json.loads(foreign.stdout)["error"]
    assert error["type"] == "IntegrityError"
    assert "not authenticated by this machine's key" in error["message"]
    assert "run again with --accept-foreign" in error["message"]
    accepted = _cli(home, "restore", str(tmp_path / "foreign"), "--yes", "--accept-foreign")
    assert accepted.exit_code == EXIT_OK, accepted.output
    assert "accepted as foreign" in accepted.stdout
    listed = json.loads(_cli(home, "task", "list", "--json").stdout)
    assert [t["title"] for t in listed] == ["made elsewhere"]

    secret = _cli(home, "restore", str(tmp_path / "secret"), "--yes", "--accept-foreign")
    assert secret.exit_code == EXIT_REFUSED
    assert "state_meta" in secret.stderr and "Zq7" not in secret.stdout + secret.stderr
    actions = [e["action"] for e in json.loads(_cli(home, "audit", "--json").stdout)]
    assert actions[:2] == ["state.restore.foreign", "state.restore"]
