"""`memdir tidy merge`, `memdir tidy apply` and `memdir tidy auto` through the real CLI
(issue 11, §6): merging at once or through a plan file a person edits, confirmation, bodies
from a file or stdin, stale and broken plan files, the `[llm]` draft without a model, and
the automatic pass on demand."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from files import snapshot
from memdir.errors import EXIT_CONFLICT, EXIT_USAGE

Invoke = Callable[..., Result]


@pytest.fixture(autouse=True)
def _lexical(home: Path) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')


def _json(result: Result, code: int = 0) -> Any:
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def _remember(cli: Invoke, summary: str, *extra: str) -> str:
    note_id: str = _json(cli("remember", summary, *extra, "--json"))["note"]["id"]
    return note_id


def state(project: Path, home: Path) -> dict[str, bytes]:
    """Notes, history, backups and the audit log (not the search index or lock files)."""
    return {
        k: v
        for k, v in snapshot(project, home).items()
        if "/index/" not in k and not k.endswith((".lock", "-shm", "-wal")) and v != b"<dir>"
    }


def note_path(project: Path, note_id: str) -> Path:
    return project / "MEMORY" / f"{note_id}.md"


def body(project: Path, note_id: str) -> str:
    text = note_path(project, note_id).read_text("utf-8")
    return text.split("\n---\n", 1)[1].rstrip("\n")


@pytest.fixture
def dup(cli: Invoke) -> tuple[str, str, str]:
    """Two notes on one topic (oldest first) and a note linking to the newer one."""
    old = _remember(cli, "Use pnpm for package management", "--body", "pnpm only.")
    new = _remember(cli, "Package management uses pnpm", "--body", "Not npm.")
    linker = _remember(cli, "Build notes", "--body", f"See [[{new}]].")
    return old, new, linker


def _no_traceback(result: Result) -> None:
    assert "Traceback" not in result.output and "Traceback" not in result.stderr


# -- merge at once -------------------------------------------------------------------------


def test_merge_with_yes(cli: Invoke, project: Path, dup: tuple[str, str, str]) -> None:
    old, new, linker = dup
    result = cli("tidy", "merge", new, old, "--yes")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"into {old} (the oldest); deletes {new}" in out
    assert f"merged into {old}; deleted {new}" in out
    assert f"links rewritten in {linker}" in out
    assert "3 backups made (undo one with `memdir backups restore ID`)" in out
    assert not note_path(project, new).exists()
    assert body(project, old) == "pnpm only.\n\n## Package management uses pnpm\n\nNot npm."
    assert body(project, linker) == f"See [[{old}]]."


def test_merge_with_yes_as_json(cli: Invoke, project: Path, dup: tuple[str, str, str]) -> None:
    old, new, linker = dup
    doc = _json(cli("tidy", "merge", old, new, "--yes", "--json"))
    assert doc["kept"] == old and doc["deleted"] == [new] and doc["relinked"] == [linker]
    assert len(doc["backup_ids"]) == 3 and doc["version"] is None and doc["skipped"] == []
    assert doc["plan"]["keep"] == old and doc["plan"]["scope"] == "project"
    assert [n["id"] for n in doc["plan"]["notes"]] == [old, new]
    assert doc["plan"]["draft"]["body"] == body(project, old)
    backups = _json(cli("backups", "--json"))
    assert {b["id"] for b in backups} == set(doc["backup_ids"])
    assert {b["reason"] for b in backups} == {"merge"}


def test_summary_and_body_file(
    cli: Invoke, project: Path, tmp_path: Path, dup: tuple[str, str, str]
) -> None:
    old, new, _ = dup
    text = tmp_path / "body.md"
    text.write_text("Use pnpm, never npm.\n\nLockfile: pnpm-lock.yaml.\n", "utf-8")
    result = cli("tidy", "merge", old, new, "--summary", "pnpm only", "--body-file", str(text))
    assert result.exit_code == EXIT_USAGE  # no --yes: nothing yet
    doc = _json(
        cli(
            "tidy",
            "merge",
            old,
            new,
            "--summary",
            "pnpm only",
            "--body-file",
            str(text),
            "--yes",
            "--json",
        )
    )
    assert doc["plan"]["source"] == "edited"
    assert body(project, old) == "Use pnpm, never npm.\n\nLockfile: pnpm-lock.yaml."
    front = json.loads(note_path(project, old).read_text("utf-8").split("\n")[1])
    assert front["summary"] == "pnpm only"


def test_body_from_stdin(cli: Invoke, project: Path, dup: tuple[str, str, str]) -> None:
    old, new, _ = dup
    result = cli("tidy", "merge", old, new, "--body-file", "-", "--yes", input="From stdin.\n")
    assert result.exit_code == 0, result.output
    assert body(project, old) == "From stdin."


def test_a_missing_or_binary_body_file(
    cli: Invoke, project: Path, home: Path, tmp_path: Path, dup: tuple[str, str, str]
) -> None:
    old, new, _ = dup
    before = state(project, home)
    missing = cli("tidy", "merge", old, new, "--body-file", str(tmp_path / "nope.md"), "--yes")
    assert missing.exit_code == EXIT_USAGE and "no file" in missing.stderr
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"\xff\xfe\x00bad")
    bad = cli("tidy", "merge", old, new, "--body-file", str(binary), "--yes")
    assert bad.exit_code == EXIT_USAGE and "is not UTF-8 text" in bad.stderr
    for result in (missing, bad):
        _no_traceback(result)
    assert state(project, home) == before


def test_merge_needs_confirmation_without_a_tty(
    cli: Invoke, project: Path, home: Path, dup: tuple[str, str, str]
) -> None:
    old, new, _ = dup
    before = state(project, home)
    text = cli("tidy", "merge", old, new)
    assert text.exit_code == EXIT_USAGE
    assert "merge needs --yes when not run from a terminal" in text.stderr
    assert f"into {old} (the oldest)" in text.stdout  # the plan was shown
    doc = _json(cli("tidy", "merge", old, new, "--json"), EXIT_USAGE)
    assert doc["error"]["type"] == "InvalidInput"
    assert "needs --yes with --json" in doc["error"]["message"]
    assert doc["confirmed"] is False
    assert doc["plan"]["keep"] == old and doc["plan"]["draft"]["summary"]
    assert state(project, home) == before


@pytest.mark.parametrize(
    ("ids", "code", "message"),
    [
        (("SAME", "SAME"), EXIT_USAGE, "cannot be merged with itself"),
        (("SAME",), EXIT_USAGE, "at least two different notes"),
        (("SAME", "no-such-note"), 3, "no note no-such-note"),
        (("SAME", "../etc"), EXIT_USAGE, "is not a note id"),
    ],
)
def test_bad_ids_are_clear_errors(
    cli: Invoke,
    project: Path,
    home: Path,
    dup: tuple[str, str, str],
    ids: tuple[str, ...],
    code: int,
    message: str,
) -> None:
    args = [dup[0] if i == "SAME" else i for i in ids]
    before = state(project, home)
    result = cli("tidy", "merge", *args, "--yes")
    assert result.exit_code == code and message in result.stderr
    doc = _json(cli("tidy", "merge", *args, "--yes", "--json"), code)
    assert message in doc["error"]["message"]
    _no_traceback(result)
    assert state(project, home) == before


def test_notes_of_two_scopes(cli: Invoke, project: Path, home: Path) -> None:
    a = _remember(cli, "Terse answers", "--body", "Short.")
    b = _remember(cli, "Terse answers please", "--body", "Short!", "--scope", "user")
    before = state(project, home)
    result = cli("tidy", "merge", a, b, "--yes")
    assert result.exit_code == 4 and "notes of two scopes cannot be merged" in result.stderr
    assert state(project, home) == before


def test_a_draft_holding_a_credential(
    cli: Invoke, project: Path, home: Path, dup: tuple[str, str, str]
) -> None:
    old, new, _ = dup
    before = state(project, home)
    result = cli(
        "tidy", "merge", old, new, "--body-file", "-", "--yes", input="password: hunter2-Secret!\n"
    )
    assert result.exit_code == 4 and "password" in result.stderr
    assert "hunter2" not in result.output
    assert state(project, home) == before


def test_draft_llm_without_a_model(
    cli: Invoke, project: Path, home: Path, dup: tuple[str, str, str]
) -> None:
    old, new, _ = dup
    before = state(project, home)
    result = cli("tidy", "merge", old, new, "--draft", "llm", "--yes")
    assert result.exit_code != 0
    assert "llm.url" in result.stderr
    _no_traceback(result)
    doc = _json(cli("tidy", "merge", old, new, "--draft", "llm", "--yes", "--json"), 1)
    assert "llm.url" in doc["error"]["message"]
    assert state(project, home) == before


# -- plan files ----------------------------------------------------------------------------


def test_plan_out_changes_nothing_and_writes_a_private_plan(
    cli: Invoke, project: Path, home: Path, tmp_path: Path, dup: tuple[str, str, str]
) -> None:
    old, new, _ = dup
    before = state(project, home)
    plan = tmp_path / "plan.json"
    result = cli("tidy", "merge", old, new, "--plan-out", str(plan))
    assert result.exit_code == 0, result.output
    assert f"plan written to {plan}; nothing was changed" in result.stdout
    assert state(project, home) == before
    assert stat.S_IMODE(plan.stat().st_mode) == 0o600
    doc = json.loads(plan.read_text("utf-8"))
    assert doc["format"] == "memdir-merge-plan" and doc["version"] == 1
    assert doc["keep"] == old and [n["id"] for n in doc["notes"]] == [old, new]
    assert all(len(n["revision"]) == 64 and len(n["hash"]) == 64 for n in doc["notes"])
    as_json = _json(cli("tidy", "merge", old, new, "--plan-out", str(plan), "--json"))
    assert as_json["plan_file"] == str(plan) and as_json["plan"]["keep"] == old
    assert state(project, home) == before


def test_an_edited_plan_is_applied(
    cli: Invoke, project: Path, tmp_path: Path, dup: tuple[str, str, str]
) -> None:
    old, new, linker = dup
    plan = tmp_path / "plan.json"
    assert cli("tidy", "merge", old, new, "--plan-out", str(plan)).exit_code == 0
    doc = json.loads(plan.read_text("utf-8"))
    doc["draft"]["body"] = "Edited by hand: pnpm, never npm."
    doc["draft"]["tags"] = ["tooling"]
    plan.write_text(json.dumps(doc), "utf-8")
    result = cli("tidy", "apply", str(plan), "--yes")
    assert result.exit_code == 0, result.output
    assert f"merged into {old}; deleted {new}" in result.stdout
    assert body(project, old) == "Edited by hand: pnpm, never npm."
    assert json.loads(note_path(project, old).read_text("utf-8").split("\n")[1])["tags"] == [
        "tooling"
    ]
    assert not note_path(project, new).exists()
    assert body(project, linker) == f"See [[{old}]]."
    # Applied once: the notes are gone, a second apply refuses.
    again = cli("tidy", "apply", str(plan), "--yes")
    assert again.exit_code != 0
    _no_traceback(again)


def test_apply_as_json(cli: Invoke, tmp_path: Path, dup: tuple[str, str, str]) -> None:
    old, new, _ = dup
    plan = tmp_path / "plan.json"
    assert cli("tidy", "merge", old, new, "--plan-out", str(plan)).exit_code == 0
    refused = _json(cli("tidy", "apply", str(plan), "--json"), EXIT_USAGE)
    assert "needs --yes" in refused["error"]["message"]
    doc = _json(cli("tidy", "apply", str(plan), "--yes", "--json"))
    assert doc["kept"] == old and doc["deleted"] == [new]


def test_a_stale_plan_is_refused(
    cli: Invoke, project: Path, home: Path, tmp_path: Path, dup: tuple[str, str, str]
) -> None:
    old, new, _ = dup
    plan = tmp_path / "plan.json"
    assert cli("tidy", "merge", old, new, "--plan-out", str(plan)).exit_code == 0
    _remember(cli, "Package management uses pnpm", "--id", new, "--body", "Not npm, not yarn.")
    before = state(project, home)
    result = cli("tidy", "apply", str(plan), "--yes")
    assert result.exit_code == EXIT_CONFLICT
    assert f"note {new} changed since the merge was planned" in result.stderr
    doc = _json(cli("tidy", "apply", str(plan), "--yes", "--json"), EXIT_CONFLICT)
    assert "changed since" in doc["error"]["message"]
    assert state(project, home) == before


def _plan_with_a_key(cli: Invoke, plan: Path, dup: tuple[str, str, str]) -> None:
    assert cli("tidy", "merge", dup[0], dup[1], "--plan-out", str(plan)).exit_code == 0
    doc = json.loads(plan.read_text("utf-8"))
    doc["draft"]["body"] = "aws_access_key_id = AKIAQ3EGRXNBWZ5KJH7Y"
    plan.write_text(json.dumps(doc), "utf-8")


def test_a_plan_whose_draft_now_holds_a_credential(
    cli: Invoke, project: Path, home: Path, tmp_path: Path, dup: tuple[str, str, str]
) -> None:
    plan = tmp_path / "plan.json"
    _plan_with_a_key(cli, plan, dup)
    before = state(project, home)
    result = cli("tidy", "apply", str(plan), "--yes")
    assert result.exit_code == 4 and "AWS access key" in result.stderr
    assert "AKIAQ3EGRXNBWZ5KJH7Y" not in result.stderr
    doc = _json(cli("tidy", "apply", str(plan), "--yes", "--json"), 4)
    assert doc["error"]["type"] == "SecretRefused"
    assert "AKIAQ3EGRXNBWZ5KJH7Y" not in json.dumps(doc)
    assert state(project, home) == before


def test_a_refused_credential_in_a_plan_is_not_echoed(
    cli: Invoke, tmp_path: Path, dup: tuple[str, str, str]
) -> None:
    plan = tmp_path / "plan.json"
    _plan_with_a_key(cli, plan, dup)
    result = cli("tidy", "apply", str(plan), "--yes")
    assert result.exit_code == 4
    assert "AKIAQ3EGRXNBWZ5KJH7Y" not in result.output


def _huge(path: Path) -> None:
    with path.open("wb") as f:
        f.truncate(17 << 20)  # sparse: 17 MiB of NULs, over the 16 MiB a plan may be


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (None, "no plan file"),
        (lambda p: p.write_text("{not json", "utf-8"), "is not a JSON merge plan"),
        (lambda p: p.write_bytes(b"\xff\xfe garbage \x00"), "is not a JSON merge plan"),
        (lambda p: p.write_text("[" * 100_000, "utf-8"), "is not a JSON merge plan"),
        (lambda p: p.write_text('{"a": 1}', "utf-8"), "not a merge plan"),
        (lambda p: p.write_text("null", "utf-8"), "not a merge plan"),
        (
            lambda p: p.write_text('{"format": "memdir-merge-plan", "version": 9}', "utf-8"),
            "merge plan version 9",
        ),
        (_huge, "is too large to be a merge plan"),
        (lambda p: p.mkdir(), "cannot read"),
    ],
)
def test_a_broken_plan_file_is_a_clear_error(
    cli: Invoke,
    project: Path,
    home: Path,
    tmp_path: Path,
    dup: tuple[str, str, str],
    make: Callable[[Path], object] | None,
    message: str,
) -> None:
    plan = tmp_path / "plan.json"
    if make is not None:
        make(plan)
    before = state(project, home)
    result = cli("tidy", "apply", str(plan), "--yes")
    if make is not None and plan.is_dir():
        # click refuses a directory for a file argument before the command runs.
        assert result.exit_code == EXIT_USAGE
    else:
        assert result.exit_code == EXIT_USAGE, result.output
        assert message in result.stderr
        doc = _json(cli("tidy", "apply", str(plan), "--yes", "--json"), EXIT_USAGE)
        assert message in doc["error"]["message"]
    _no_traceback(result)
    assert state(project, home) == before


def test_a_plan_with_a_traversal_id(
    cli: Invoke, project: Path, home: Path, tmp_path: Path, dup: tuple[str, str, str]
) -> None:
    old, new, _ = dup
    plan = tmp_path / "plan.json"
    assert cli("tidy", "merge", old, new, "--plan-out", str(plan)).exit_code == 0
    (project / "secret.md").write_text("not a note")
    doc = json.loads(plan.read_text("utf-8"))
    doc["notes"][1]["id"] = "../secret"
    plan.write_text(json.dumps(doc), "utf-8")
    before = state(project, home)
    result = cli("tidy", "apply", str(plan), "--yes")
    assert result.exit_code == EXIT_USAGE and "is not a note id" in result.stderr
    assert state(project, home) == before


# -- tidy auto -----------------------------------------------------------------------------


def test_auto_when_off_says_so(cli: Invoke, dup: tuple[str, str, str], project: Path) -> None:
    result = cli("tidy", "auto")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "no pass ran: memory.consolidate.auto is off"
    doc = _json(cli("tidy", "auto", "--json"))
    assert doc["ran"] is False and doc["reason"] == "memory.consolidate.auto is off"
    assert all(note_path(project, i).exists() for i in dup)


def test_auto_now_merges_planted_duplicates(
    cli: Invoke, project: Path, dup: tuple[str, str, str]
) -> None:
    old, new, linker = dup
    result = cli("tidy", "auto", "--now")
    assert result.exit_code == 0, result.output
    assert f"merged {new} into {old} (3 backups)" in result.stdout
    assert "1 merge in project" in result.stdout
    assert not note_path(project, new).exists()
    assert body(project, linker) == f"See [[{old}]]."
    backups = _json(cli("backups", "--json"))
    assert len(backups) == 3 and {b["reason"] for b in backups} == {"auto-merge"}


def test_auto_json_shape(cli: Invoke, home: Path, dup: tuple[str, str, str]) -> None:
    old, new, _ = dup
    (home / "config.toml").write_text(
        '[embed]\nprovider = "none"\n[memory.consolidate]\nauto = true\n'
    )
    doc = _json(cli("tidy", "auto", "--json"))
    assert set(doc) >= {"ran", "reason", "scopes", "merged", "skipped", "next_due"}
    assert doc["ran"] is True and doc["reason"] is None
    assert "project" in doc["scopes"]
    (merged,) = doc["merged"]
    assert merged["kept"] == old and merged["deleted"] == [new]
    assert merged["plan"]["source"] == "auto"
    assert isinstance(doc["next_due"], int)
    # Due again only after the cooldown: the next call says so.
    again = _json(cli("tidy", "auto", "--json"))
    assert again["ran"] is False and again["reason"] == "not due yet (cooldown)"
    text = cli("tidy", "auto")
    assert text.stdout.strip() == "no pass ran: not due yet (cooldown)"


#: A credential pasted into a plan file by mistake.
FAKE_TOKEN = "ghp_" + "R8xK2mQ9vL4tZ7pW1nB6cY3hJ5dF0sA2eG8u"


def _cli_plan(cli: Invoke, tmp_path: Path) -> Path:
    a = json.loads(cli("remember", "Use pnpm for packages", "--body", "pnpm.", "--json").stdout)
    b = json.loads(cli("remember", "Packages use pnpm", "--body", "Not npm.", "--json").stdout)
    plan = tmp_path / "plan.json"
    out = cli("tidy", "merge", a["note"]["id"], b["note"]["id"], "--plan-out", str(plan))
    assert out.exit_code == 0, out.output
    return plan


def test_apply_json_needing_confirmation_prints_no_credential(cli: Invoke, tmp_path: Path) -> None:
    plan = _cli_plan(cli, tmp_path)
    data = json.loads(plan.read_text("utf-8"))
    data["draft"]["body"] += f"\n\ndeploy token {FAKE_TOKEN}"  # pasted by mistake
    plan.write_text(json.dumps(data))
    shown = cli("tidy", "apply", str(plan))  # the human preview: redacted
    assert FAKE_TOKEN not in shown.output
    out = cli("tidy", "apply", str(plan), "--json")
    assert out.exit_code != 0
    assert FAKE_TOKEN not in out.output + out.stderr


def test_apply_preview_prints_no_credential_in_tags(cli: Invoke, tmp_path: Path) -> None:
    plan = _cli_plan(cli, tmp_path)
    data = json.loads(plan.read_text("utf-8"))
    data["draft"]["tags"].append(FAKE_TOKEN)
    plan.write_text(json.dumps(data))
    out = cli("tidy", "apply", str(plan))
    assert out.exit_code != 0
    assert FAKE_TOKEN not in out.output + out.stderr
