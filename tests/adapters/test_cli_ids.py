"""Ids a person can type, through the CLI: prefixes everywhere an id is taken, candidates
and suggestions with their exit codes, `backups restore NOTE_ID`, and id columns that
are never wrapped or cut at 80 or 120 columns."""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest
from click.testing import Result
from rich.console import Console

from memdir.cli import output
from memdir.cli.output import print_columns

Invoke = Callable[..., Result]

LONG_A = "a" * 70 + "-pricing1"  # 79 characters
LONG_B = "b" * 71 + "-deploys9"  # 80 characters: the longest id there is


def remember(cli: Invoke, summary: str, *args: str) -> str:
    result = cli("remember", summary, *args, "--json")
    assert result.exit_code == 0, result.output
    note_id: str = json.loads(result.stdout)["note"]["id"]
    return note_id


@pytest.fixture
def seeded(cli: Invoke) -> Invoke:
    remember(cli, "Deploys go out on Tuesdays", "--id", "deploys-tuesday", "--body", "Freeze.")
    remember(cli, "Pricing cards use fills", "--id", "pricing-cards-fills")
    remember(cli, "Pricing page layout", "--id", "pricing-layout")
    return cli


def test_every_command_taking_an_id_takes_a_prefix(seeded: Invoke) -> None:
    read = seeded("read", "dep", "--json")
    assert read.exit_code == 0 and json.loads(read.stdout)["id"] == "deploys-tuesday"
    assert seeded("history", "dep").exit_code == 0
    remember(seeded, "Deploys go out on Tuesdays", "--id", "deploys-tuesday", "--body", "Later.")
    diff = seeded("diff", "dep")
    assert diff.exit_code == 0 and "+Later." in diff.stdout
    links = seeded("links", "pricing-l", "--json")
    assert links.exit_code == 0 and json.loads(links.stdout)["note_id"] == "pricing-layout"
    sup = seeded("supersede", "pricing-l", "--by", "pricing-c")
    assert sup.exit_code == 0, sup.output
    assert "pricing-layout" in sup.stdout and "pricing-cards-fills" in sup.stdout
    gone = seeded("forget", "dep", "--yes")
    assert gone.exit_code == 0 and "forgot deploys-tuesday" in gone.stdout


def test_remember_id_is_an_exact_id_not_a_prefix(seeded: Invoke) -> None:
    assert remember(seeded, "A new one", "--id", "pricing") == "pricing"
    assert seeded("read", "pricing", "--json").exit_code == 0  # exact wins now


def test_an_ambiguous_prefix_is_a_usage_error_listing_the_candidates(seeded: Invoke) -> None:
    result = seeded("read", "pricing")
    assert result.exit_code == 2
    assert "pricing-cards-fills  Pricing cards use fills" in result.stderr
    assert "pricing-layout  Pricing page layout" in result.stderr
    forget = seeded("forget", "pricing", "--yes")
    assert forget.exit_code == 2 and seeded("read", "pricing-layout").exit_code == 0


def test_a_typo_is_not_found_with_did_you_mean(seeded: Invoke) -> None:
    result = seeded("read", "deploys-tuesdya")
    assert result.exit_code == 3
    assert "no note deploys-tuesdya; did you mean:" in result.stderr
    assert "deploys-tuesday  Deploys go out on Tuesdays" in result.stderr
    as_json = seeded("history", "pricing-cards-fils", "--json")
    assert as_json.exit_code == 3 and "pricing-cards-fills" in as_json.stdout


def test_backups_restore_takes_a_note_id_or_prefix(seeded: Invoke) -> None:
    assert seeded("forget", "deploys-tuesday", "--yes").exit_code == 0
    restored = seeded("backups", "restore", "deploys")
    assert restored.exit_code == 0, restored.output
    assert restored.stdout.startswith("restored deploys-tuesday from backup ")
    assert seeded("read", "deploys-tuesday").exit_code == 0
    backup_id = json.loads(seeded("backups", "--json").stdout)[0]["id"]
    assert seeded("backups", "restore", backup_id).exit_code == 0  # backup ids as before
    missing = seeded("backups", "restore", "nothing-like-it")
    assert missing.exit_code == 3 and "no backup nothing-like-it" in missing.stderr


def _lines_holding_whole(text: str, *ids: str) -> bool:
    lines = text.splitlines()
    return all(any(i in line for line in lines) for i in ids)


@pytest.mark.parametrize("width", [80, 120])
def test_id_columns_never_wrap_on_a_terminal(
    cli: Invoke, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    for note_id in (LONG_A, LONG_B):
        remember(cli, "A summary long enough to be cut " * 4, "--id", note_id, "--tags", "x,y")
    assert cli("forget", LONG_A, "--yes").exit_code == 0
    buffer = io.StringIO()
    terminal = Console(file=buffer, width=width, force_terminal=True, color_system=None)
    monkeypatch.setattr(output, "console", terminal)
    assert cli("list").exit_code == 0
    listed = buffer.getvalue()
    assert _lines_holding_whole(listed, LONG_B) and "…" in listed
    assert cli("backups").exit_code == 0
    assert _lines_holding_whole(buffer.getvalue()[len(listed) :], LONG_A)


@pytest.mark.parametrize("width", [80, 120])
def test_print_columns_keeps_ids_whole_and_fits_the_rest(width: int) -> None:
    buffer = io.StringIO()
    out = Console(file=buffer, width=width, force_terminal=True, color_system=None)
    rows = [(i, "project", "summary " * 20) for i in ("short-id", "x" * 40)]
    print_columns(("id", "scope", "summary"), rows, flexible=(2,), out=out)
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 3 and all(len(line) <= width for line in lines)
    assert lines[2].startswith("x" * 40 + "  project  summary") and lines[2].endswith("…")
    # Wider fixed columns than the console: the line is longer, the id still whole.
    buffer.truncate(0)
    print_columns(("id", "summary"), [("y" * 80, "text " * 10)], flexible=(1,), out=out)
    assert "y" * 80 in buffer.getvalue()


def test_piped_columns_stay_whole(cli: Invoke) -> None:
    remember(cli, "Wide " * 40, "--id", LONG_B)
    listed = cli("list")  # CliRunner output is no terminal
    assert ("Wide " * 40).strip() in listed.stdout and LONG_B in listed.stdout


def test_list_of_a_thousand_notes_is_laid_out_without_a_rich_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A rich Table took ~0.4 s for 1,000 rows; the columns are laid out by hand instead.
    # (No timing is asserted: machines are shared. bench/startup.py measures it.)
    import rich.table

    def no_table(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("print_columns built a rich Table")

    monkeypatch.setattr(rich.table.Table, "__init__", no_table)
    buffer = io.StringIO()
    out = Console(file=buffer, width=120, force_terminal=True, color_system=None)
    rows = [
        (f"note-{i:04d}-about-deploys", "project", "project", "Deploy step " * 6, "a, b", "t")
        for i in range(1000)
    ]
    print_columns(
        ("id", "scope", "type", "summary", "tags", "updated"), rows, flexible=(3, 4), out=out
    )
    assert buffer.getvalue().count("\n") == 1001
