"""The `memdir` CLI through the real stack: human output and exit codes (§5)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memdir.cli.main import main

Invoke = Callable[..., Result]

AWS_KEY = "AKIA" + "Q7W2E9R4T6Y8U1I3"


def created_id(result: Result) -> str:
    match = re.search(r"^(?:created|updated|unchanged) (\S+) ", result.stdout, re.MULTILINE)
    assert match, result.output
    return match.group(1)


def remember(cli: Invoke, summary: str, *args: str) -> str:
    result = cli("remember", summary, *args)
    assert result.exit_code == 0, result.output
    return created_id(result)


# --- remember -------------------------------------------------------------------------------


def test_remember_with_body_option(cli: Invoke, project: Path) -> None:
    result = cli("remember", "Pricing cards use fills", "--body", "Fill, not border.")
    assert result.exit_code == 0, result.output
    note_id = created_id(result)
    assert result.stdout.startswith(f"created {note_id} (project)")
    path = project / "MEMORY" / f"{note_id}.md"
    assert str(path) in result.stdout
    assert path.read_text("utf-8").endswith("Fill, not border.\n")


def test_remember_with_body_file(cli: Invoke, project: Path, tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    body.write_text("From a file.\n\nSecond paragraph — ünïcode.\n", encoding="utf-8")
    note_id = remember(cli, "File body", "--body-file", str(body))
    text = (project / "MEMORY" / f"{note_id}.md").read_text("utf-8")
    assert text.endswith("From a file.\n\nSecond paragraph — ünïcode.\n")


@pytest.mark.parametrize("args", [("-",), ("--body-file", "-")])
def test_remember_body_from_stdin(cli: Invoke, project: Path, args: tuple[str, ...]) -> None:
    result = cli("remember", "Stdin body", *args, input="piped in\n")
    assert result.exit_code == 0, result.output
    note_id = created_id(result)
    assert (project / "MEMORY" / f"{note_id}.md").read_text("utf-8").endswith("piped in\n")


def test_remember_invalid_utf8_body_file_is_a_usage_error(
    cli: Invoke, project: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"caf\xe9 latin-1\n")
    result = cli("remember", "Bad bytes", "--body-file", str(bad))
    assert result.exit_code == 2
    assert "UTF-8" in result.stderr
    assert not (project / "MEMORY").exists()
    stdin = cli("remember", "Bad bytes", "-", input=b"\xff\xfe")
    assert stdin.exit_code == 2


def test_remember_missing_body_file(cli: Invoke, tmp_path: Path) -> None:
    result = cli("remember", "Nope", "--body-file", str(tmp_path / "missing.md"))
    assert result.exit_code == 2
    assert "cannot read" in result.stderr


def test_remember_body_given_twice_is_a_usage_error(cli: Invoke) -> None:
    result = cli("remember", "Twice", "-", "--body", "x", input="y")
    assert result.exit_code == 2
    assert "once" in result.stderr


def test_remember_type_tags_scope_id(cli: Invoke, project: Path, home: Path) -> None:
    note_id = remember(cli, "Prefers tabs", "--type", "user", "--tags", "style, editor")
    assert (home / "memory" / "user" / f"{note_id}.md").is_file()
    remember(cli, "Explicit", "--id", "explicit-id", "--scope", "user", "--type", "project")
    assert (home / "memory" / "user" / "explicit-id.md").is_file()
    again = cli("remember", "Explicit", "--id", "explicit-id")
    assert again.exit_code == 0
    assert again.stdout.startswith("unchanged explicit-id")
    updated = cli("remember", "Explicit, edited", "--id", "explicit-id")
    assert updated.stdout.startswith("updated explicit-id (user)")


def test_remember_reports_duplicate_nearest_and_dangling(cli: Invoke) -> None:
    first = remember(cli, "Pricing cards use fills", "--body", "Cards separated by fill.")
    result = cli(
        "remember",
        "Pricing cards use fills instead",
        "--body",
        "Cards separated by fill. See [[missing-id]].",
    )
    assert result.exit_code == 0
    assert f"likely duplicate of {first}" in result.stdout
    assert f"near: {first}" in result.stdout
    assert "[[missing-id]]" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("remember", "x", "--id", "../x"),
        ("remember", "x", "--id", "Note-A"),
        ("remember", "two\nlines"),
        ("remember", "x", "--type", "opinion"),
        ("remember", "x", "--scope", "global"),
        ("read", "../etc/passwd"),
        ("list", "--type", "bogus"),
        ("search", "x", "--mode", "regex"),
        ("nonsense-command",),
    ],
)
def test_usage_errors_exit_2(cli: Invoke, project: Path, args: tuple[str, ...]) -> None:
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert not (project / "MEMORY").exists()


def test_project_option_must_exist(home: Path, tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    result = CliRunner().invoke(
        main, ["--project", str(missing), "--home", str(home), "remember", "x"]
    )
    assert result.exit_code == 2
    assert not missing.exists()


def test_secret_refused_exit_4_without_leaking(cli: Invoke, project: Path, home: Path) -> None:
    result = cli("remember", "Deploy", "--body", f"line one\nkey {AWS_KEY}\n")
    assert result.exit_code == 4
    assert "AWS access key" in result.stderr and "line 2" in result.stderr
    output = result.stdout + result.stderr
    secret = AWS_KEY[4:]
    for i in range(len(secret) - 3):
        assert secret[i : i + 4] not in output
    for root in (project, home):
        for path in root.rglob("*"):
            assert not path.is_file() or b"Q7W2E9" not in path.read_bytes()


def test_limit_refused_exit_4(cli: Invoke, project: Path) -> None:
    (project / ".memdir").mkdir()
    (project / ".memdir" / "config.toml").write_text("[memory]\nmaxNoteBytes = 10\n")
    result = cli("remember", "Too long", "--body", "x" * 11)
    assert result.exit_code == 4
    assert "10" in result.stderr


def test_config_error_exit_2(cli: Invoke, project: Path) -> None:
    (project / ".memdir").mkdir()
    (project / ".memdir" / "config.toml").write_text("[memory]\nbogusKey = 1\n")
    result = cli("list")
    assert result.exit_code == 2
    assert "memory.bogusKey" in result.stderr
    assert not (project / "MEMORY").exists()


def test_conflict_exit_5(cli: Invoke, project: Path) -> None:
    remember(cli, "Seed")
    (project / "MEMORY" / "Foo.md").write_bytes(b'---\n{"summary":"x"}\n---\n')
    result = cli("remember", "Clash", "--id", "foo")
    assert result.exit_code == 5
    assert "Foo.md" in result.stderr
    assert not (project / "MEMORY" / "foo.md").exists()


def test_busy_exit_6(cli: Invoke, project: Path) -> None:
    remember(cli, "Seed")
    (project / ".memdir" / "config.toml").write_text("[memory]\nlockTimeoutSeconds = 0.2\n")
    lock = project / "MEMORY" / ".memdir.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import fcntl, os, sys, time
                fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)
                fcntl.flock(fd, fcntl.LOCK_EX)
                print("locked", flush=True)
                sys.stdin.read()
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        result = cli("remember", "Blocked", "--body", "x")
        assert result.exit_code == 6
        assert "another memdir process" in result.stderr
        assert cli("list").exit_code == 0  # readers never block
    finally:
        holder.communicate("")
    assert cli("remember", "Unblocked", "--body", "x").exit_code == 0


# --- read, list, search ---------------------------------------------------------------------


def test_read_and_revision(cli: Invoke, home: Path) -> None:
    note_id = remember(cli, "Readable [note]", "--body", "first [bold]body[/bold]", "--tags", "a")
    remember(cli, "Readable [note]", "--body", "second body", "--id", note_id)
    result = cli("read", note_id)
    assert result.exit_code == 0
    assert "Readable [note]" in result.stdout
    assert f"id {note_id}" in result.stdout
    assert "tags a" in result.stdout
    assert "second body" in result.stdout
    history = cli("history", note_id, "--json")
    first_rev = json.loads(history.stdout)[0]["revision"]
    old = cli("read", note_id, "--revision", first_rev[:8])
    assert old.exit_code == 0
    assert "first [bold]body[/bold]" in old.stdout


def test_read_not_found_exit_3(cli: Invoke) -> None:
    remember(cli, "Seed")
    result = cli("read", "no-such-note")
    assert result.exit_code == 3
    assert "no note no-such-note" in result.stderr
    assert cli("read", "no-such-note", "--revision", "abcd").exit_code == 3
    assert cli("history", "no-such-note").exit_code == 3
    assert cli("links", "no-such-note").exit_code == 3
    assert cli("forget", "no-such-note", "--yes").exit_code == 3
    assert cli("backups", "restore", "20990101T000000000000Z-x-0000").exit_code == 3


def test_list_with_filters(cli: Invoke) -> None:
    empty = cli("list")
    assert empty.exit_code == 0 and "no notes yet" in empty.stdout
    a = remember(cli, "Alpha decision", "--type", "project", "--tags", "arch")
    b = remember(cli, "Beta preference", "--type", "user", "--tags", "style")
    everything = cli("list")
    assert a in everything.stdout and b in everything.stdout
    assert everything.stdout.index(b) < everything.stdout.index(a)  # newest first
    users = cli("list", "--scope", "user")
    assert b in users.stdout and a not in users.stdout
    typed = cli("list", "--type", "project")
    assert a in typed.stdout and b not in typed.stdout
    tagged = cli("list", "--tag", "style")
    assert b in tagged.stdout and a not in tagged.stdout


def test_list_warns_about_notes_above_max_notes(cli: Invoke, project: Path) -> None:
    for i in range(3):
        remember(cli, f"Note {i}")
    (project / ".memdir" / "config.toml").write_text("[memory]\nmaxNotes = 2\n")
    result = cli("list")
    assert result.exit_code == 0
    assert "maxNotes" in result.stderr and "1 notes above" in result.stderr
    assert result.stderr.count("maxNotes") == 1


def test_search(cli: Invoke) -> None:
    a = remember(cli, "Pricing cards use fills", "--body", "separated by whitespace")
    b = remember(cli, "Vacuum the database", "--body", "weekly maintenance")
    result = cli("search", "whitespace", "--method", "lexical")
    assert result.exit_code == 0
    assert a in result.stdout and b not in result.stdout
    assert "no matching notes" in cli("search", "zzzunmatched", "--method", "lexical").stdout
    hybrid = cli("search", "whitespace")
    assert hybrid.exit_code == 0 and hybrid.stdout.index(a) < hybrid.stdout.find(b)
    phrase = cli("search", "weekly maintenance", "--mode", "phrase")
    assert b in phrase.stdout and a not in phrase.stdout
    assert cli("search", "x", "--limit", "0").exit_code == 2


# --- history, diff, links -------------------------------------------------------------------


def test_history_and_diff(cli: Invoke, project: Path) -> None:
    note_id = remember(cli, "Diffed", "--body", "keep\nold line")
    remember(cli, "Diffed", "--body", "keep\nnew line", "--id", note_id)
    history = cli("history", note_id)
    assert history.exit_code == 0
    assert history.stdout.count("write") == 2
    assert "●" in history.stdout
    diff = cli("diff", note_id)
    assert diff.exit_code == 0
    assert "-old line" in diff.stdout and "+new line" in diff.stdout
    revs = [e["revision"] for e in json.loads(cli("history", note_id, "--json").stdout)]
    explicit = cli("diff", note_id, revs[1][:8], revs[0][:8])
    assert "+old line" in explicit.stdout and "-new line" in explicit.stdout
    same = cli("diff", note_id, revs[0][:8], revs[0][:8])
    assert "no differences" in same.stdout
    # an external edit shows up as a new, current version
    path = project / "MEMORY" / f"{note_id}.md"
    path.write_bytes(path.read_bytes().replace(b"new line", b"hand-edited line"))
    history = cli("history", note_id)
    assert "observed" in history.stdout
    assert "+hand-edited line" in cli("diff", note_id).stdout
    assert "hand-edited line" in cli("read", note_id).stdout


def test_links(cli: Invoke) -> None:
    target = remember(cli, "Target note")
    source = remember(cli, "Source note", "--body", f"See [[{target}]] and [[missing-id]].")
    out = cli("links", source)
    assert out.exit_code == 0
    assert f"→ {target} (project) Target note" in out.stdout
    assert "→ missing-id (dangling)" in out.stdout
    back = cli("links", target)
    assert f"← {source} (project) Source note" in back.stdout
    lonely = remember(cli, "Lonely")
    assert "no links" in cli("links", lonely).stdout


# --- forget and backups ---------------------------------------------------------------------


def test_forget_needs_confirmation_without_a_tty(cli: Invoke, project: Path) -> None:
    note_id = remember(cli, "Forget me", "--body", "ephemeral zebra")
    path = project / "MEMORY" / f"{note_id}.md"
    result = cli("forget", note_id)
    assert result.exit_code == 2
    assert f"forget {note_id}" in result.stdout
    assert "keeps a backup" in result.stdout
    assert "--yes" in result.stderr
    assert path.is_file()
    declined = cli("forget", note_id, input="n\n")
    assert declined.exit_code == 2 and path.is_file()


def test_forget_with_yes_and_restore(cli: Invoke, project: Path) -> None:
    note_id = remember(cli, "Forget me", "--body", "ephemeral zebra")
    path = project / "MEMORY" / f"{note_id}.md"
    original = path.read_bytes()
    result = cli("forget", note_id, "--yes")
    assert result.exit_code == 0, result.output
    assert f"forgot {note_id}" in result.stdout
    assert not path.exists()
    assert cli("read", note_id).exit_code == 3
    assert "no matching notes" in cli("search", "zebra", "--method", "lexical").stdout
    assert note_id not in cli("search", "zebra").stdout
    backup_id = re.search(r"backup (\S+) \(restore with", result.stdout)
    assert backup_id
    listing = cli("backups")
    assert listing.exit_code == 0
    assert backup_id.group(1) in listing.stdout and "forget" in listing.stdout
    restored = cli("backups", "restore", backup_id.group(1))
    assert restored.exit_code == 0
    assert f"restored {note_id}" in restored.stdout
    assert path.read_bytes() == original


def test_restore_over_newer_version_mentions_its_backup(cli: Invoke) -> None:
    note_id = remember(cli, "Versioned", "--body", "one")
    forgot = cli("forget", note_id, "--yes", "--json")
    backup_id = json.loads(forgot.stdout)["backup"]["id"]
    remember(cli, "Versioned", "--body", "two", "--id", note_id)
    restored = cli("backups", "restore", backup_id)
    assert restored.exit_code == 0
    assert "the version it replaced is backup" in restored.stdout
    listing = cli("backups")
    assert "replaced by restore" in listing.stdout


def test_restore_from_other_project_is_refused(cli: Invoke, home: Path, tmp_path: Path) -> None:
    note_id = remember(cli, "Elsewhere", "--body", "x")
    backup_id = json.loads(cli("forget", note_id, "--yes", "--json").stdout)["backup"]["id"]
    other = tmp_path / "other"
    other.mkdir()
    result = CliRunner().invoke(
        main, ["--project", str(other), "--home", str(home), "backups", "restore", backup_id]
    )
    assert result.exit_code == 4
    assert "--project" in result.stderr
    assert not (other / "MEMORY" / f"{note_id}.md").exists()


def test_forget_purge(cli: Invoke, project: Path, home: Path) -> None:
    note_id = remember(cli, "Purge me", "--body", "ephemeral narwhal")
    remember(cli, "Purge me", "--body", "ephemeral narwhal, v2", "--id", note_id)
    result = cli("forget", note_id, "--yes", "--purge")
    assert result.exit_code == 0, result.output
    assert "purges 2 stored versions" in result.stdout
    assert "history scrubbed" in result.stdout
    for root in (project, home):
        for path in root.rglob("*"):
            assert not path.is_file() or b"narwhal" not in path.read_bytes(), path
    assert "no backups" in cli("backups").stdout


def test_backups_show_paths_literally(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "[red]client work"
    project.mkdir()
    base = ["--project", str(project), "--home", str(home)]
    runner = CliRunner(env={"COLUMNS": "400"})
    created = runner.invoke(main, [*base, "remember", "Bracketed", "--json"])
    note_id = json.loads(created.stdout)["note"]["id"]
    assert runner.invoke(main, [*base, "forget", note_id, "--yes"]).exit_code == 0
    listing = runner.invoke(main, [*base, "backups"])
    assert str(project / "MEMORY") in listing.stdout


def test_no_backups(cli: Invoke) -> None:
    result = cli("backups")
    assert result.exit_code == 0 and "no backups" in result.stdout


# --- doctor, audit, demo --------------------------------------------------------------------


def test_doctor_healthy_and_unhealthy(cli: Invoke, project: Path) -> None:
    remember(cli, "Healthy note", "--body", "fine")
    healthy = cli("doctor")
    assert healthy.exit_code == 0, healthy.output
    assert "all notes are healthy" in healthy.stdout
    bad = project / "MEMORY" / "broken.md"
    bad.write_bytes(b"---\n{oops\n---\n")
    dangling = remember(cli, "Dangles", "--body", "[[nowhere-yet]]")
    sick = cli("doctor")
    assert sick.exit_code == 1
    assert "broken.md" in sick.stdout and "left untouched" in sick.stdout
    assert f"{dangling} → [[nowhere-yet]]" in sick.stdout
    assert bad.read_bytes() == b"---\n{oops\n---\n"


def test_audit_verify_and_tamper(cli: Invoke, home: Path) -> None:
    remember(cli, "Audited one", "--body", "x")
    remember(cli, "Audited two", "--body", "y")
    ok = cli("audit", "verify")
    assert ok.exit_code == 0
    assert "audit log intact" in ok.stdout
    log = home / "audit" / "audit.jsonl"
    lines = log.read_text("utf-8").splitlines(keepends=True)
    lines[0] = lines[0].replace('"write"', '"delete"')
    log.write_text("".join(lines), encoding="utf-8")
    broken = cli("audit", "verify")
    assert broken.exit_code == 7
    assert "damaged" in broken.stdout


def test_demo(cli: Invoke, home: Path) -> None:
    result = cli("demo")
    assert result.exit_code == 0, result.output
    for step in ("remember", "recall", "credential guard", "forget", "audit"):
        assert step in result.stdout
    assert "likely duplicate" in result.stdout
    assert "refused" in result.stdout
    assert not list(home.iterdir())  # the demo uses its own throw-away home


def test_help_runs_without_touching_disk(project: Path, home: Path) -> None:
    result = CliRunner().invoke(main, ["--project", str(project), "--home", str(home), "--help"])
    assert result.exit_code == 0
    assert "Exit codes" in result.stdout
    assert list(project.iterdir()) == [] and list(home.iterdir()) == []


def test_home_from_environment(project: Path, home: Path) -> None:
    env = {"MEMDIR_HOME": str(home), "COLUMNS": "250"}
    runner = CliRunner()
    result = runner.invoke(
        main, ["--project", str(project), "remember", "Mine", "--type", "user"], env=env
    )
    assert result.exit_code == 0, result.output
    assert len(list((home / "memory" / "user").glob("*.md"))) == 1


@pytest.fixture
def in_dir(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (project / "sub").mkdir()
    (project / ".git").mkdir()
    monkeypatch.chdir(project / "sub")
    return project


def test_project_defaults_to_the_enclosing_project(in_dir: Path, home: Path) -> None:
    result = CliRunner().invoke(main, ["--home", str(home), "remember", "From a subdir"])
    assert result.exit_code == 0, result.output
    assert len(list((in_dir / "MEMORY").glob("*.md"))) == 1


def test_forget_purge_scrubs_what_an_earlier_forget_left(cli: Invoke) -> None:
    assert cli("remember", "Deploys go through staging", "--id", "deploys").exit_code == 0
    assert cli("forget", "deploys", "--yes").exit_code == 0
    done = cli("forget", "deploys", "--purge", "--yes")
    assert done.exit_code == 0, done.output
    assert "gone already" in done.output and "history scrubbed" in done.output
    again = cli("forget", "deploys", "--purge", "--yes")
    assert again.exit_code == 3  # nothing left to scrub
