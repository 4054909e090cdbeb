"""Messages a newcomer meets (issue 25): one "error:" form for click's usage errors and
memdir's own, --yes named when a command cannot ask, and an untyped note's type shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli.main import main


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MEMDIR_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(main, list(args), input=input)

    return invoke


@pytest.mark.parametrize(
    "args",
    [("read",), ("read", ""), ("read", "../x"), ("forget",), ("--bogus",), ("read", "Bad ID")],
    ids=str,
)
def test_every_usage_or_id_error_says_error_in_one_form(run, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    result = run(*args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if "rror:" in line]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr


def test_forget_in_a_pipe_names_yes(run) -> None:  # type: ignore[no-untyped-def]
    note = run("remember", "A user fact", "--json")
    assert note.exit_code == 0, note.output
    result = run("forget", "a-user-fact", input="y\n")
    assert result.exit_code == 2
    assert "forget needs --yes when not run from a terminal" in result.stderr


def test_an_untyped_note_shows_a_dash_as_its_type(run) -> None:  # type: ignore[no-untyped-def]
    assert run("remember", "A user fact").exit_code == 0
    row = next(line for line in run("list").stdout.splitlines() if "A user fact" in line)
    assert row.split()[1:3] == ["user", "—"]


def test_long_commands_leave_no_blank_line_on_stderr_off_a_terminal(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert run("remember", "A user fact").exit_code == 0
    for args in (("reindex",), ("export", str(tmp_path / "out.tar.gz"))):
        result = run(*args)
        assert result.exit_code == 0, result.output
        lines = result.stderr.splitlines()
        assert all(line.startswith("warning: no project here") for line in lines), lines
