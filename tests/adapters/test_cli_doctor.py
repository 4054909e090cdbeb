"""`memdir doctor [--deep]` through the real CLI: exit codes, what is named, what is not."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from conftest import Invoke


def _seed(cli: Invoke) -> None:
    for args in (
        ("remember", "Versioned", "--body", "First body.", "--id", "versioned"),
        ("remember", "Versioned", "--body", "Second body.", "--id", "versioned"),
        ("remember", "Doomed", "--body", "Doomed body.", "--id", "doomed"),
        ("forget", "doomed", "--yes"),
        ("search", "body"),
    ):
        result = cli(*args)
        assert result.exit_code == 0, result.output


def test_deep_doctor_of_a_healthy_home_exits_0(cli: Invoke) -> None:
    _seed(cli)
    result = cli("doctor", "--deep")
    assert result.exit_code == 0, result.output
    assert "verified" in result.stdout
    report = json.loads(cli("doctor", "--deep", "--json").stdout)
    assert report["ok"] is True and report["deep"] is True
    assert report["integrity"] == [] and report["index"] == []


def test_deep_doctor_names_an_edited_history_object_and_exits_7(cli: Invoke, home: Path) -> None:
    _seed(cli)
    obj = sorted((home / "memory-history").rglob("objects/*/*.md"))[0]
    obj.write_bytes(obj.read_bytes() + b"\nHIDDEN PAYLOAD")
    assert cli("doctor").exit_code == 0  # plain doctor stays fast: it reads no history
    result = cli("doctor", "--deep")
    assert result.exit_code == 7
    assert obj.name in result.stdout.replace("\n", "")
    assert "HIDDEN" not in result.output
    report = json.loads(cli("doctor", "--deep", "--json").stdout)
    assert report["ok"] is False and len(report["integrity"]) == 1


def test_restore_of_an_edited_backup_exits_7_and_read_of_an_edited_revision_too(
    cli: Invoke, home: Path
) -> None:
    _seed(cli)
    [backup] = json.loads(cli("backups", "--json").stdout)
    md = Path(backup["path"])
    md.write_bytes(md.read_bytes().replace(b"Doomed body", b"HIDDEN PAYLOAD"))
    result = cli("backups", "restore", backup["id"])
    assert result.exit_code == 7
    assert backup["id"] in result.stderr and "HIDDEN" not in result.output
    assert cli("doctor", "--deep").exit_code == 7


def test_doctor_reports_a_damaged_index_and_exits_1(cli: Invoke, home: Path) -> None:
    _seed(cli)
    [path] = (home / "index").glob("project-*.sqlite3")
    conn = sqlite3.connect(path)  # as when the last process exits: all pages in the file
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(path.read_bytes())
    assert len(data) > 4096
    data[100:] = b"\xff" * (len(data) - 100)  # the 100-byte header kept
    path.write_bytes(bytes(data))
    result = cli("doctor")
    assert result.exit_code == 1
    assert "damaged" in result.stdout and "rebuilt" in result.stdout
    searched = cli("search", "body", "--json")
    assert searched.exit_code == 0, searched.output
    assert {h["note_id"] for h in json.loads(searched.stdout)} == {"versioned"}
    assert cli("reindex").exit_code == 0
    assert cli("doctor", "--deep").exit_code == 0


def test_search_over_a_damaged_index_answers_with_one_warning(cli: Invoke, home: Path) -> None:
    _seed(cli)
    before = json.loads(cli("search", "body", "--json").stdout)
    [path] = (home / "index").glob("project-*.sqlite3")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(path.read_bytes())
    data[100:] = b"\xff" * (len(data) - 100)
    path.write_bytes(bytes(data))
    result = cli("search", "body", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == before
    assert result.stderr.count("damaged") == 1
