"""`memdir supersede` and `memdir remember --supersedes/--private` through the real stack:
human output, `--json`, and the exit code of every refusal (issue 11, §1.1)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from files import snapshot
from memdir.errors import EXIT_NOT_FOUND, EXIT_REFUSED, EXIT_USAGE

Invoke = Callable[..., Result]

RESULT_FIELDS = {"old", "new", "changed", "revision", "scope"}


def _json(result: Result, code: int = 0) -> Any:
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def _remember(cli: Invoke, summary: str, *extra: str) -> dict[str, Any]:
    doc: dict[str, Any] = _json(cli("remember", summary, *extra, "--json"))["note"]
    return doc


def _frontmatter(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text("utf-8").split("\n")[1])
    return doc


@pytest.fixture
def pair(cli: Invoke) -> tuple[str, str]:
    old = _remember(cli, "Releases ship on Fridays", "--body", "Release every friday.")
    new = _remember(cli, "Releases ship on Tuesdays", "--body", "No friday release any more.")
    return old["id"], new["id"]


#: What a refused command must leave as it was (the search index is derived, and a read
#: may refresh it).
KEPT = ("memory", "memory-history", "memory-backups", "audit")


def _state(project: Path, home: Path) -> dict[str, bytes]:
    return snapshot(project / "MEMORY", *(home / name for name in KEPT))


# --- memdir supersede ---------------------------------------------------------------------


def test_supersede_human_output(cli: Invoke, project: Path, pair: tuple[str, str]) -> None:
    old, new = pair
    result = cli("supersede", old, "--by", new)
    assert result.exit_code == 0, result.output
    assert f"{old} (Releases ship on Fridays) is now superseded by {new}" in result.stdout
    assert "project scope" in result.stdout
    assert str(project / "MEMORY" / f"{new}.md") in result.stdout
    assert _frontmatter(project / "MEMORY" / f"{new}.md")["supersedes"] == [old]
    assert "supersedes" not in _frontmatter(project / "MEMORY" / f"{old}.md")
    shown = cli("read", new)
    assert f"supersedes {old}" in shown.stdout


def test_supersede_json_and_the_no_op(
    cli: Invoke, project: Path, home: Path, pair: tuple[str, str]
) -> None:
    old, new = pair
    doc = _json(cli("supersede", old, "--by", new, "--json"))
    assert set(doc) == RESULT_FIELDS
    assert doc["changed"] is True and doc["scope"] == "project"
    assert doc["old"]["id"] == old and doc["new"]["id"] == new
    assert doc["new"]["supersedes"] == [old]
    before = _state(project, home)
    again = _json(cli("supersede", old, "--by", new, "--json"))
    assert again["changed"] is False and again["revision"] == doc["revision"]
    human = cli("supersede", old, "--by", new)
    assert human.exit_code == 0
    assert f"{new} already supersedes {old}; nothing was changed" in human.stdout
    assert _state(project, home) == before


def test_supersede_keeps_history_and_a_backup(cli: Invoke, pair: tuple[str, str]) -> None:
    old, new = pair
    cli("supersede", old, "--by", new)
    history = _json(cli("history", new, "--json"))
    assert len(history) == 2 and history[-1]["current"]
    backups = _json(cli("backups", "--json"))
    assert [(b["note_id"], b["reason"]) for b in backups] == [(new, "supersede")]
    assert len(_json(cli("history", old, "--json"))) == 1


def test_superseded_notes_are_marked_in_search_ranked_below_and_left_out_of_the_index(
    cli: Invoke, pair: tuple[str, str]
) -> None:
    old, new = pair
    message = "When do releases ship, on fridays?"
    assert old in _json(cli("recall", message, "--json"))["note_ids"]
    first = _json(cli("search", "friday release", "--method", "lexical", "--json"))
    assert [h["note_id"] for h in first] == [old, new]  # the old note matches better
    cli("supersede", old, "--by", new)
    hits = _json(cli("search", "friday release", "--method", "lexical", "--json"))
    ids = [h["note_id"] for h in hits]
    assert ids.index(new) < ids.index(old)
    assert {h["note_id"]: h["superseded_by"] for h in hits} == {old: new, new: None}
    table = cli("search", "friday release", "--method", "lexical")
    assert f"(superseded by {new})" in table.stdout
    index = _json(cli("index", "--json"))["index"]
    assert f"[[{new}]]" in index and f"[[{old}]]" not in index
    recalled = _json(cli("recall", message, "--json"))
    assert old not in recalled["note_ids"]
    assert _json(cli("read", old, "--json"))["id"] == old  # still there


def _error(result: Result, code: int, type_: str) -> str:
    doc = _json(result, code)
    assert doc["error"]["type"] == type_ and doc["error"]["exitCode"] == code
    message: str = doc["error"]["message"]
    return message


@pytest.mark.parametrize(
    ("args", "code", "type_", "words"),
    [
        (("OLD", "--by", "OLD"), EXIT_USAGE, "InvalidInput", "itself"),
        (("OLD", "--by", "missing-note"), EXIT_NOT_FOUND, "NotFound", "missing-note"),
        (("missing-note", "--by", "NEW"), EXIT_NOT_FOUND, "NotFound", "missing-note"),
        (("../x", "--by", "NEW"), EXIT_USAGE, "InvalidInput", "must not contain"),
        (("OLD", "--by", "Bad-Id"), EXIT_USAGE, "InvalidInput", "lower-case"),
    ],
)
def test_supersede_refusals(
    cli: Invoke,
    project: Path,
    home: Path,
    pair: tuple[str, str],
    args: tuple[str, ...],
    code: int,
    type_: str,
    words: str,
) -> None:
    old, new = pair
    argv = [{"OLD": old, "NEW": new}.get(a, a) for a in args]
    before = _state(project, home)
    assert words in _error(cli("supersede", *argv, "--json"), code, type_)
    human = cli("supersede", *argv)
    assert human.exit_code == code
    assert human.stderr.startswith("error: ") and words in human.stderr
    assert _state(project, home) == before


def test_supersede_refuses_cycles(
    cli: Invoke, project: Path, home: Path, pair: tuple[str, str]
) -> None:
    old, new = pair
    third = _remember(cli, "Releases ship on Wednesdays")["id"]
    cli("supersede", old, "--by", new)
    cli("supersede", new, "--by", third)
    before = _state(project, home)
    for a, b in ((new, old), (third, old)):  # direct, and through `new`
        message = _error(cli("supersede", a, "--by", b, "--json"), EXIT_REFUSED, "Refused")
        assert "cycle" in message and f"{a} already supersedes {b}" in message
    assert _state(project, home) == before


def test_supersede_refuses_notes_of_two_scopes(cli: Invoke, project: Path, home: Path) -> None:
    mine = _remember(cli, "I review on mornings", "--type", "user")["id"]
    ours = _remember(cli, "Reviews happen in the afternoon", "--type", "project")["id"]
    before = _state(project, home)
    message = _error(cli("supersede", mine, "--by", ours, "--json"), EXIT_REFUSED, "Refused")
    assert "own scope" in message
    assert cli("supersede", ours, "--by", mine).exit_code == EXIT_REFUSED
    assert _state(project, home) == before


def test_supersede_scope(cli: Invoke) -> None:
    old = _remember(cli, "I prefer tabs", "--type", "user")["id"]
    new = _remember(cli, "I prefer spaces", "--type", "user")["id"]
    missing = cli("supersede", old, "--by", new, "--scope", "project", "--json")
    assert "user scope" not in _error(missing, EXIT_NOT_FOUND, "NotFound")
    assert _json(cli("supersede", old, "--by", new, "--scope", "user", "--json"))["scope"] == "user"


def test_supersede_needs_by(cli: Invoke, pair: tuple[str, str]) -> None:
    result = cli("supersede", pair[0])
    assert result.exit_code == EXIT_USAGE
    assert "--by" in result.stderr


# --- memdir remember --supersedes / --private ----------------------------------------------


def test_remember_supersedes_and_private(cli: Invoke, project: Path, pair: tuple[str, str]) -> None:
    old, new = pair
    result = cli("remember", "Releases ship any weekday", "--supersedes", f"{old}, {new}")
    assert result.exit_code == 0, result.output
    assert f"supersedes {old}, {new}" in result.stdout
    newest = _remember(cli, "Releases ship any weekday", "--supersedes", f"{old},{new}")
    assert newest["supersedes"] == [old, new]
    hidden = cli("remember", "My release notes", "--private")
    assert "private" in hidden.stdout
    secret = _remember(cli, "Private release notes", "--private")
    assert secret["private"] is True
    path = project / "MEMORY" / f"{secret['id']}.md"
    assert _frontmatter(path)["private"] is True
    kept = _remember(cli, "Private release notes", "--id", secret["id"], "--body", "edited")
    assert kept["private"] is True  # not given: unchanged
    public = _remember(cli, "Private release notes", "--id", secret["id"], "--no-private")
    assert public["private"] is False and "private" not in _frontmatter(path)


def test_remember_supersedes_update_replaces_or_clears_the_list(
    cli: Invoke, pair: tuple[str, str]
) -> None:
    old, new = pair
    assert _remember(cli, "Releases ship on Tuesdays", "--id", new, "--supersedes", old)[
        "supersedes"
    ] == [old]
    assert _remember(cli, "Releases ship on Tuesdays", "--id", new, "--body", "x")[
        "supersedes"
    ] == [old]
    assert (
        _remember(cli, "Releases ship on Tuesdays", "--id", new, "--supersedes", "")["supersedes"]
        == []
    )


@pytest.mark.parametrize(
    ("supersedes", "code", "type_", "words"),
    [
        ("missing-note", EXIT_NOT_FOUND, "NotFound", "missing-note"),
        ("Bad", EXIT_USAGE, "InvalidInput", "lower-case"),
        ("a/b", EXIT_USAGE, "InvalidInput", "must not contain"),
        ("USER", EXIT_REFUSED, "Refused", "own scope"),
        ("NEW", EXIT_USAGE, "InvalidInput", "itself"),
    ],
)
def test_remember_supersedes_refusals(
    cli: Invoke,
    project: Path,
    home: Path,
    pair: tuple[str, str],
    supersedes: str,
    code: int,
    type_: str,
    words: str,
) -> None:
    _, new = pair
    user = _remember(cli, "Releases are my job", "--type", "user")["id"]
    value = {"USER": user, "NEW": new}.get(supersedes, supersedes)
    before = _state(project, home)
    argv = ("remember", "Releases ship on Tuesdays", "--id", new, "--supersedes", value)
    assert words in _error(cli(*argv, "--json"), code, type_)
    assert cli(*argv).exit_code == code
    assert _state(project, home) == before


def test_remember_refuses_a_cycle(cli: Invoke, pair: tuple[str, str]) -> None:
    old, new = pair
    cli("supersede", old, "--by", new)
    result = cli("remember", "Releases ship on Fridays", "--id", old, "--supersedes", new)
    assert result.exit_code == EXIT_REFUSED
    assert "cycle" in result.stderr
