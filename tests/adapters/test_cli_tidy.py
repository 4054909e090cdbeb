"""`memdir tidy` and `memdir tidy dismiss` through the real stack (issue 11, §6): every kind
of finding, the `--kind` and `--scope` filters, the `--json` shape, dismissals and their
return after an edit, and the exit code of an unknown finding."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from memdir.core.vocab import FindingKind
from memdir.errors import EXIT_NOT_FOUND, EXIT_USAGE

Invoke = Callable[..., Result]

KINDS = {k.value for k in FindingKind}


@pytest.fixture(autouse=True)
def _lexical(home: Path) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')


def _json(result: Result, code: int = 0) -> Any:
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def _remember(cli: Invoke, summary: str, *extra: str) -> str:
    note_id: str = _json(cli("remember", summary, *extra, "--json"))["note"]["id"]
    return note_id


@pytest.fixture
def planted(cli: Invoke, project: Path) -> dict[str, list[list[str]]]:
    """A finding of every kind; kind -> the note ids of each finding (the contradicting pair
    is on one topic too)."""
    dup = [
        _remember(cli, "Use pnpm for package management", "--body", "pnpm only."),
        _remember(cli, "Package management uses pnpm", "--body", "Not npm."),
    ]
    contra = [
        _remember(cli, "Deploy timeout is 30 seconds", "--body", "It times out after 30 s."),
        _remember(cli, "Deploy timeout is 60 seconds", "--body", "It times out after 60 s."),
    ]
    broken = _remember(cli, "Pricing page layout", "--body", "See [[pricing-grid-a91]].")
    missing = _remember(cli, "Where the code lives", "--body", "Entry point `src/app.py`.")
    long = _remember(cli, "A very long note", "--body", "word " * 2000)
    unused = _remember(cli, "An old decision", "--body", "Nobody reads it.")
    path = project / "MEMORY" / f"{unused}.md"
    doc = path.read_text("utf-8").split("\n")
    front = json.loads(doc[1])
    old_ms = int(time.time() * 1000) - 400 * 86_400_000
    front["createdAt"] = front["updatedAt"] = old_ms
    path.write_text("\n".join([doc[0], json.dumps(front), *doc[2:]]), "utf-8")
    os.utime(path, (old_ms / 1000, old_ms / 1000))
    return {
        "same_topic": sorted([sorted(contra), sorted(dup)]),
        "contradiction": [sorted(contra)],
        "broken_link": [[broken]],
        "missing_file": [[missing]],
        "too_long": [[long]],
        "unused": [[unused]],
    }


def test_every_kind_is_listed_as_json(cli: Invoke, planted: dict[str, list[list[str]]]) -> None:
    findings = _json(cli("tidy", "--json"))
    assert isinstance(findings, list)
    for f in findings:
        assert {"id", "kind", "notes", "reason", "scope", "hashes"} <= set(f)
        assert f["kind"] in KINDS and re.match(r"^[a-z_]+-[0-9a-f]{12}$", f["id"])
        assert f["id"].startswith(f["kind"] + "-")
        assert isinstance(f["reason"], str) and "\n" not in f["reason"] and f["reason"]
        assert f["scope"] == "project"
    by_kind: dict[str, list[list[str]]] = {}
    for f in findings:
        by_kind.setdefault(f["kind"], []).append(sorted(f["notes"]))
    assert {kind: sorted(groups) for kind, groups in by_kind.items()} == planted
    contra = next(f for f in findings if f["kind"] == "contradiction")
    assert contra["reason"] == '"Deploy timeout is 30 seconds" vs "Deploy timeout is 60 seconds"'
    # Stable: the same ids on the next run.
    assert _json(cli("tidy", "--json")) == findings


def test_the_human_listing(cli: Invoke, planted: dict[str, list[list[str]]]) -> None:
    result = cli("tidy")
    assert result.exit_code == 0, result.output
    assert "links to [[pricing-grid-a91]], which names no note" in result.stdout
    assert "names src/app.py, which does not exist in the project" in result.stdout
    assert "7 findings; hide one with: memdir tidy dismiss ID" in result.stdout
    assert planted["too_long"][0][0] in result.stdout


def test_nothing_to_tidy(cli: Invoke) -> None:
    result = cli("tidy")
    assert result.exit_code == 0 and result.stdout.strip() == "nothing to tidy"
    assert _json(cli("tidy", "--json")) == []


def test_kind_filter_repeats_and_scope_filter(
    cli: Invoke, planted: dict[str, list[list[str]]]
) -> None:
    only = _json(cli("tidy", "--kind", "too_long", "--json"))
    assert [f["kind"] for f in only] == ["too_long"]
    two = _json(cli("tidy", "--kind", "unused", "--kind", "broken_link", "--json"))
    assert [f["kind"] for f in two] == ["broken_link", "unused"]
    _remember(cli, "User link", "--body", "[[nowhere-b2]]", "--scope", "user")
    user = _json(cli("tidy", "--scope", "user", "--json"))
    assert [(f["kind"], f["scope"]) for f in user] == [("broken_link", "user")]
    bad = cli("tidy", "--kind", "duplicates")
    assert bad.exit_code == EXIT_USAGE
    assert "same_topic" in bad.stderr


def test_dismiss_hides_a_finding_until_its_note_changes(
    cli: Invoke, planted: dict[str, list[list[str]]]
) -> None:
    (broken,) = _json(cli("tidy", "--kind", "broken_link", "--json"))
    result = cli("tidy", "dismiss", broken["id"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"dismissed {broken['id']}"
    assert _json(cli("tidy", "--kind", "broken_link", "--json")) == []
    assert len(_json(cli("tidy", "--json"))) == 6
    again = _json(cli("tidy", "dismiss", broken["id"], "--json"))
    assert again["changed"] is False and again["finding"]["id"] == broken["id"]
    # Edit the note: the finding is back, with a new id.
    ((note_id,),) = planted["broken_link"]
    _remember(cli, "Pricing page layout", "--id", note_id, "--body", "See [[pricing-grid-a91]]!")
    (back,) = _json(cli("tidy", "--kind", "broken_link", "--json"))
    assert back["notes"] == [note_id] and back["id"] != broken["id"]


def test_dismissing_an_unknown_finding_is_not_found(cli: Invoke) -> None:
    result = cli("tidy", "dismiss", "broken_link-0123456789ab")
    assert result.exit_code == EXIT_NOT_FOUND
    assert "no finding broken_link-0123456789ab" in result.stderr
    as_json = cli("tidy", "dismiss", "nonsense", "--json")
    assert as_json.exit_code == EXIT_NOT_FOUND
    assert "no finding nonsense" in as_json.output


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mount") is None, reason="a bind mount needs root"
)
def test_a_read_only_index_still_lists_findings(cli: Invoke, project: Path, home: Path) -> None:
    dup = sorted(
        [
            _remember(cli, "Use pnpm for package management", "--body", "pnpm only."),
            _remember(cli, "Package management uses pnpm", "--body", "Not npm."),
        ]
    )
    broken = _remember(cli, "Pricing page layout", "--body", "See [[pricing-grid-a91]].")
    index = home / "index"
    assert index.is_dir()
    subprocess.run(["mount", "--bind", str(index), str(index)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(index)], check=True)
        # Edited by hand since the index was last updated: the index cannot take it in.
        note = project / "MEMORY" / f"{broken}.md"
        note.write_text(note.read_text("utf-8").replace("grid-a91", "grid-b22"), "utf-8")
        env = {**os.environ, "MEMDIR_HOME": str(home), "COLUMNS": "250"}
        done = subprocess.run(
            [sys.executable, "-m", "memdir", "--project", str(project), "tidy", "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    finally:
        subprocess.run(["umount", "-l", str(index)], check=False)
    assert done.returncode == 0, done.stderr
    found = {f["kind"]: f for f in json.loads(done.stdout)}
    assert sorted(found["same_topic"]["notes"]) == dup
    assert "[[pricing-grid-b22]]" in found["broken_link"]["reason"]
    assert "cannot be updated" in done.stderr and "same-topic" in done.stderr
