"""The `memdir` CLI's `--json` output: one parseable document per command, errors included."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memdir.cli.main import main

AWS_KEY = "AKIA" + "Q7W2E9R4T6Y8U1I3"


@pytest.fixture
def run(project: Path, home: Path) -> Callable[..., tuple[Result, Any]]:
    """Invoke `memdir … ARGS --json`; return the result and its parsed stdout."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> tuple[Result, Any]:
        result = runner.invoke(
            main,
            ["--project", str(project), "--home", str(home), *args, "--json"],
            input=input,
            catch_exceptions=False,
        )
        return result, json.loads(result.stdout)

    return invoke


Run = Callable[..., tuple[Result, Any]]


def remember(run: Run, summary: str, *args: str) -> dict[str, Any]:
    result, doc = run("remember", summary, *args)
    assert result.exit_code == 0, result.output
    assert isinstance(doc, dict)
    return doc


def assert_error(result: Result, doc: Any, type_: str, code: int) -> str:
    assert result.exit_code == code
    # "hint" (the next command to run, rendered by the CLI) only when the error has one.
    assert set(doc["error"]) - {"hint"} == {"type", "message", "exitCode"}
    assert isinstance(doc["error"].get("hint", ""), str)
    assert doc["error"]["type"] == type_
    assert doc["error"]["exitCode"] == code
    message = doc["error"]["message"]
    assert isinstance(message, str) and message
    return message


# --- remember -------------------------------------------------------------------------------


def test_remember_json(run: Run, project: Path) -> None:
    doc = remember(run, "Pricing cards use fills", "--body", "Fill.", "--tags", "a, b,a")
    note = doc["note"]
    assert doc["created"] is True and doc["changed"] is True
    assert note["summary"] == "Pricing cards use fills"
    assert note["body"] == "Fill."
    assert note["tags"] == ["a", "b"]
    assert note["scope"] == "project"
    assert note["path"] == str(project / "MEMORY" / f"{note['id']}.md")
    assert len(note["hash"]) == 64 and len(doc["revision"]) == 64
    assert doc["nearest"] == [] and doc["likely_duplicate"] is False
    assert doc["dangling_links"] == [] and doc["duplicate_of"] is None
    assert note["created_at"] == note["updated_at"]


def test_remember_json_stdin_duplicate_and_dangling(run: Run) -> None:
    first = remember(run, "Cards use fills", "--body", "Separated by fill and whitespace.")
    result, doc = run(
        "remember",
        "Cards use fills",
        "-",
        input="Separated by fill and whitespace. [[todo-note]]\n",
    )
    assert result.exit_code == 0
    assert doc["likely_duplicate"] is True
    assert doc["duplicate_of"] == first["note"]["id"]
    assert doc["nearest"][0]["note_id"] == first["note"]["id"]
    assert 0.8 <= doc["nearest"][0]["score"] <= 1
    assert doc["dangling_links"] == ["todo-note"]


def test_remember_update_json(run: Run, tmp_path: Path) -> None:
    body = tmp_path / "b.md"
    body.write_text("v1")
    first = remember(run, "Versioned", "--body-file", str(body), "--type", "reference")
    note_id = first["note"]["id"]
    same = remember(run, "Versioned", "--id", note_id)
    assert same["created"] is False and same["changed"] is False
    assert same["revision"] == first["revision"]
    body.write_text("v2")
    second = remember(run, "Versioned", "--body-file", str(body), "--id", note_id)
    assert second["changed"] is True
    assert second["note"]["type"] == "reference"
    assert second["note"]["created_at"] == first["note"]["created_at"]
    assert second["note"]["updated_at"] > first["note"]["updated_at"]


@pytest.mark.parametrize(
    ("args", "type_", "code"),
    [
        (("remember", "x", "--id", "../x"), "InvalidInput", 2),
        (("remember", "x", "--id", "con"), "InvalidInput", 2),
        (("remember", "   "), "InvalidInput", 2),
        (("read", "no-such-note"), "NotFound", 3),
        (("history", "no-such-note"), "NotFound", 3),
        (("diff", "no-such-note"), "NotFound", 3),
        (("links", "no-such-note"), "NotFound", 3),
        (("forget", "no-such-note", "--yes"), "NotFound", 3),
        (("backups", "restore", "20990101T000000000000Z-x-0000"), "NotFound", 3),
        (("backups", "restore", "../etc"), "InvalidInput", 2),
    ],
)
def test_errors_are_json(run: Run, args: tuple[str, ...], type_: str, code: int) -> None:
    result, doc = run(*args)
    assert_error(result, doc, type_, code)


def test_secret_error_json(run: Run, project: Path, home: Path) -> None:
    result, doc = run("remember", "Keys", "--body", f"first\nsecond\nkey={AWS_KEY}")
    message = assert_error(result, doc, "SecretRefused", 4)
    assert "line 3" in message
    for i in range(4, len(AWS_KEY) - 3):
        assert AWS_KEY[i : i + 4] not in result.stdout + result.stderr
    assert not (project / "MEMORY").exists()


def test_limit_and_conflict_errors_json(run: Run, project: Path) -> None:
    (project / ".memdir").mkdir()
    (project / ".memdir" / "config.toml").write_text("[memory]\nmaxNotes = 1\n")
    remember(run, "Only one allowed")
    result, doc = run("remember", "Second")
    assert "maxNotes" in assert_error(result, doc, "LimitExceeded", 4)
    (project / ".memdir" / "config.toml").write_text("")
    (project / "MEMORY" / "Upper.md").write_bytes(b"")
    result, doc = run("remember", "Clash", "--id", "upper")
    assert "Upper.md" in assert_error(result, doc, "Conflict", 5)


def test_config_error_json(run: Run, project: Path) -> None:
    (project / ".memdir").mkdir()
    (project / ".memdir" / "config.toml").write_text("[memory]\nmaxNoteByte = 1\n")
    result, doc = run("list")
    assert "memory.maxNoteByte" in assert_error(result, doc, "ConfigError", 2)


# --- read, list, search, history, diff, links ------------------------------------------------


def test_read_and_revision_json(run: Run) -> None:
    first = remember(run, "Readable", "--body", "one")
    note_id = first["note"]["id"]
    second = remember(run, "Readable", "--body", "two", "--id", note_id)
    _, note = run("read", note_id)
    assert note["id"] == note_id and note["body"] == "two"
    assert note["hash"] == second["note"]["hash"]
    _, old = run("read", note_id, "--revision", first["revision"][:10])
    assert old["body"] == "one" and old["hash"] == first["note"]["hash"]
    result, doc = run("read", note_id, "--revision", "0000ffff")
    assert_error(result, doc, "NotFound", 3)


def test_list_json_filters(run: Run) -> None:
    _, empty = run("list")
    assert empty == []
    a = remember(run, "Alpha", "--type", "project", "--tags", "arch")["note"]["id"]
    b = remember(run, "Beta", "--type", "user", "--tags", "style")["note"]["id"]
    c = remember(run, "Gamma", "--scope", "user", "--tags", "arch")["note"]["id"]
    _, everything = run("list")
    assert [n["id"] for n in everything] == [c, b, a]
    _, users = run("list", "--scope", "user")
    assert [n["id"] for n in users] == [c, b]
    _, typed = run("list", "--type", "user")
    assert [n["id"] for n in typed] == [b]
    _, tagged = run("list", "--tag", "arch")
    assert [n["id"] for n in tagged] == [c, a]
    _, both = run("list", "--tag", "arch", "--scope", "project")
    assert [n["id"] for n in both] == [a]


def test_search_json(run: Run, project: Path) -> None:
    a = remember(run, "Pricing cards", "--body", "fills and whitespace")["note"]["id"]
    remember(run, "Database", "--body", "vacuum weekly")
    _, hits = run("search", "whitespace", "--method", "lexical")
    assert [h["note_id"] for h in hits] == [a]
    hit = hits[0]
    assert hit["scope"] == "project"
    assert hit["path"] == str(project / "MEMORY" / f"{a}.md")
    assert "whitespace" in hit["snippet"]
    assert hit["score"] > 0
    _, none = run("search", "whitespace vacuum", "--mode", "all")
    assert none == []
    _, limited = run("search", "whitespace vacuum", "--limit", "1")
    assert len(limited) == 1


def test_history_and_diff_json(run: Run, project: Path) -> None:
    first = remember(run, "Diffed", "--body", "keep\nold")
    note_id = first["note"]["id"]
    second = remember(run, "Diffed", "--body", "keep\nnew", "--id", note_id)
    _, history = run("history", note_id)
    assert [e["revision"] for e in history] == [first["revision"], second["revision"]]
    assert [e["current"] for e in history] == [False, True]
    assert [e["event"] for e in history] == ["write", "write"]
    assert set(history[0]) == {"revision", "ts", "event", "hash", "current"}
    _, diff = run("diff", note_id)
    assert diff["id"] == note_id
    assert "-old" in diff["diff"] and "+new" in diff["diff"]
    _, explicit = run("diff", note_id, first["revision"][:8], second["revision"][:8])
    assert explicit["a"] == first["revision"][:8]
    assert explicit["diff"] == diff["diff"]
    # an external edit is a new current version at once
    path = project / "MEMORY" / f"{note_id}.md"
    path.write_bytes(path.read_bytes().replace(b"new", b"edited by hand"))
    _, history = run("history", note_id)
    assert len(history) == 3
    assert history[-1]["event"] == "observed" and history[-1]["current"] is True
    _, note = run("read", note_id)
    assert note["body"] == "keep\nedited by hand"


def test_links_json(run: Run) -> None:
    target = remember(run, "Target", "--type", "user")["note"]["id"]
    source = remember(run, "Source", "--body", f"[[{target}]] [[missing-one]]")["note"]["id"]
    _, report = run("links", source)
    assert report["note_id"] == source
    assert report["outgoing"] == [
        {"target": target, "scope": "user", "summary": "Target"},
        {"target": "missing-one", "scope": None, "summary": None},
    ]
    assert report["dangling"] == ["missing-one"]
    _, back = run("links", target)
    assert back["backlinks"] == [{"target": source, "scope": "project", "summary": "Source"}]


# --- forget, backups ------------------------------------------------------------------------


def test_forget_json_without_yes_is_one_document(run: Run, project: Path) -> None:
    note_id = remember(run, "Forget me", "--body", "walrus")["note"]["id"]
    result, doc = run("forget", note_id)  # json.loads fails on two documents
    assert_error(result, doc, "InvalidInput", 2)
    assert doc["plan"]["note"]["id"] == note_id
    assert doc["plan"]["keeps_backup"] is True
    assert doc["confirmed"] is False
    assert (project / "MEMORY" / f"{note_id}.md").is_file()


def test_forget_and_restore_json(run: Run, project: Path) -> None:
    note_id = remember(run, "Forget me", "--body", "walrus")["note"]["id"]
    path = project / "MEMORY" / f"{note_id}.md"
    original = path.read_bytes()
    result, doc = run("forget", note_id, "--yes")
    assert result.exit_code == 0
    assert doc["note_id"] == note_id
    assert doc["backup"]["reason"] == "forget"
    assert doc["backup"]["origin"] == str(project / "MEMORY")
    assert "file removed" in doc["checks"]
    assert not path.exists()
    _, backups = run("backups")
    assert [b["id"] for b in backups] == [doc["backup"]["id"]]
    result, restored = run("backups", "restore", doc["backup"]["id"])
    assert result.exit_code == 0
    assert restored["note"]["id"] == note_id
    assert restored["replaced_backup"] is None
    assert path.read_bytes() == original


def test_forget_purge_json(run: Run, home: Path) -> None:
    note_id = remember(run, "Purge me", "--body", "narwhal tusk")["note"]["id"]
    result, doc = run("forget", note_id, "--yes", "--purge")
    assert result.exit_code == 0
    assert doc["backup"] is None
    assert doc["purged_versions"] == 1
    assert "history scrubbed" in doc["checks"]
    for path in home.rglob("*"):
        assert not path.is_file() or b"narwhal" not in path.read_bytes()


# --- doctor, audit, demo --------------------------------------------------------------------


def test_doctor_json(run: Run, project: Path) -> None:
    remember(run, "Fine")
    result, report = run("doctor")
    assert result.exit_code == 0
    assert report["ok"] is True
    assert report["counts"] == {"project": 1, "user": 0}
    (project / "MEMORY" / "bad.md").write_bytes(b"\xff\xfe")
    result, report = run("doctor")
    assert result.exit_code == 1
    assert report["ok"] is False
    assert [p["path"] for p in report["problems"]] == [str(project / "MEMORY" / "bad.md")]


def test_audit_verify_json(run: Run, home: Path) -> None:
    remember(run, "Audited")
    result, report = run("audit", "verify")
    assert result.exit_code == 0
    assert report["ok"] is True and report["entries"] >= 1
    log = home / "audit" / "audit.jsonl"
    log.write_bytes(log.read_bytes()[:-10] + b"tampered\n")
    result, report = run("audit", "verify")
    assert result.exit_code == 7
    assert report["ok"] is False and report["problems"]


def test_demo_json(run: Run) -> None:
    result, report = run("demo")
    assert result.exit_code == 0, result.output
    assert report["secretRefused"] is True
    assert report["auditOk"] is True
    assert report["duplicateFlagged"] is True
    assert report["versions"] == 2
    assert len(report["remembered"]) == 4
    assert not Path(report["project"]).exists()
