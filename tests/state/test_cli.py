"""`memdir state …` through the real CLI (in-process): output, --json, exit codes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memdir.cli.main import main
from memdir.errors import (
    EXIT_INTEGRITY,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_USAGE,
)

Invoke = Callable[..., Result]


@pytest.fixture
def cli(home: Path) -> Invoke:
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(
            main,
            ["--home", str(home), "state", "--actor", "tester", *args],
            env={"COLUMNS": "250"},
            catch_exceptions=False,
        )

    return invoke


def ok(result: Result) -> Any:
    assert result.exit_code == EXIT_OK, result.output + result.stderr
    return json.loads(result.stdout)


def test_tasks_from_add_to_close(cli: Invoke, home: Path) -> None:
    goal = ok(cli("goal", "add", "ship", "--json"))
    task = ok(
        cli("task", "add", "docs", "--goal", goal["id"], "--priority", "3",
            "--field", "area=docs", "--json")
    )  # fmt: skip
    assert (task["goal_id"], task["fields"], task["status"]) == (
        goal["id"],
        {"area": "docs"},
        "open",
    )
    assert (home / "state" / "state.sqlite3").is_file()
    updated = ok(
        cli("task", "update", task["id"], "--status", "active", "--field", "area=", "--json")
    )
    assert updated["status"] == "active" and updated["fields"] == {}
    listed = ok(cli("task", "list", "--goal", goal["id"], "--json"))
    assert [t["id"] for t in listed] == [task["id"]]
    text = cli("task", "list")
    assert task["id"] in text.stdout and "docs" in text.stdout
    assert ok(cli("task", "show", task["id"], "--json"))["title"] == "docs"
    shown = cli("task", "show", task["id"])
    assert "status    active" in shown.stdout
    closed = ok(cli("task", "close", task["id"], "--dropped", "--json"))
    assert closed["status"] == "dropped"
    assert ok(cli("task", "list", "--json")) == []
    assert len(ok(cli("task", "list", "--all", "--json"))) == 1
    assert ok(cli("goal", "close", goal["id"], "--json"))["status"] == "done"
    assert ok(cli("goal", "list", "--all", "--json"))[0]["id"] == goal["id"]


def test_sessions_meta_and_audit(cli: Invoke) -> None:
    session = ok(cli("session", "record", "agent-a", "--summary", "did it", "--json"))
    assert ok(cli("session", "list", "--agent", "agent-a", "--json"))[0]["id"] == session["id"]
    ok(cli("meta", "set", "model", "small", "--json"))
    assert cli("meta", "get", "model").stdout == "small\n"
    assert ok(cli("meta", "list", "--json"))[0]["key"] == "model"
    entries = ok(cli("audit", "--json"))
    assert [(e["actor"], e["action"]) for e in entries] == [
        ("tester", "meta.set"),
        ("tester", "session.record"),
    ]
    assert "session.record" in cli("audit").stdout


@pytest.mark.parametrize(
    ("args", "code", "kind"),
    [
        (("task", "show", "t-nope"), EXIT_NOT_FOUND, "NotFound"),
        (("meta", "get", "absent"), EXIT_NOT_FOUND, "NotFound"),
        (("task", "add", "x", "--field", "novalue"), EXIT_USAGE, "InvalidInput"),
        (("task", "add", "x", "--field", "api_key=Zq7abc"), EXIT_REFUSED, "SecretRefused"),
        (("meta", "set", "db_password", "Zq7abc"), EXIT_REFUSED, "SecretRefused"),
        (("task", "add", "password: Zq7hunter2horse"), EXIT_REFUSED, "SecretRefused"),
    ],
)
def test_errors_are_clear_json_with_exit_codes(
    cli: Invoke, args: tuple[str, ...], code: int, kind: str
) -> None:
    result = cli(*args, "--json")
    assert result.exit_code == code
    error = json.loads(result.stdout)["error"]
    assert error["type"] == kind
    assert "Zq7" not in result.stdout + result.stderr
    plain = cli(*args)
    assert plain.exit_code == code
    assert "Traceback" not in plain.stderr and plain.stderr.startswith("error:")
    assert "Zq7" not in plain.stdout + plain.stderr


def test_backup_and_restore(cli: Invoke, tmp_path: Path) -> None:
    task = ok(cli("task", "add", "kept", "--json"))
    backup = ok(cli("backup", str(tmp_path / "b"), "--json"))
    assert len(backup["sha256"]) == 64
    later = ok(cli("task", "add", "later", "--json"))
    refused = cli("restore", str(tmp_path / "b"), "--json")
    assert refused.exit_code == EXIT_USAGE
    assert json.loads(refused.stdout)["confirmed"] is False
    restored = ok(cli("restore", str(tmp_path / "b"), "--yes", "--json"))
    assert Path(restored["pre_restore"]).is_dir()
    assert [t["id"] for t in ok(cli("task", "list", "--json"))] == [task["id"]]
    assert cli("task", "show", later["id"]).exit_code == EXIT_NOT_FOUND
    db = tmp_path / "b" / "state.sqlite3"
    data = bytearray(db.read_bytes())
    data[200] ^= 0xFF
    db.write_bytes(bytes(data))
    damaged = cli("restore", str(tmp_path / "b"), "--yes")
    assert damaged.exit_code == EXIT_INTEGRITY
    assert "does not match" in damaged.stderr and "nothing was changed" in damaged.stderr
    text = cli("restore", str(restored["pre_restore"]), "--yes")
    assert text.exit_code == EXIT_OK and "restored from" in text.stdout
    assert {t["id"] for t in ok(cli("task", "list", "--json"))} == {task["id"], later["id"]}


def test_a_file_option_chooses_another_store(home: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere.sqlite3"
    result = CliRunner().invoke(
        main, ["--home", str(home), "state", "--file", str(other), "goal", "add", "g", "--json"]
    )
    assert result.exit_code == EXIT_OK, result.output
    assert other.is_file() and not (home / "state").exists()


def test_the_status_option_checks_the_status(cli: Invoke) -> None:
    result = cli("task", "add", "x", "--status", "finished", "--json")
    assert result.exit_code == EXIT_USAGE
    assert "unknown status 'finished'" in json.loads(result.stdout)["error"]["message"]
