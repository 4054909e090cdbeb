"""Fixtures for CLI tests: `memdir` run in-process against a test project and home."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memdir.cli.main import main

Invoke = Callable[..., Result]


@pytest.fixture
def cli(project: Path, home: Path) -> Invoke:
    """Run `memdir --project P --home H ARGS…` in-process; stdout and stderr kept apart."""
    runner = CliRunner()

    def invoke(*args: str, input: str | bytes | None = None) -> Result:
        return runner.invoke(
            main,
            ["--project", str(project), "--home", str(home), *args],
            input=input,
            env={"COLUMNS": "250"},
            catch_exceptions=False,
        )

    return invoke
