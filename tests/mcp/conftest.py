"""Fixtures for the MCP tests: an isolated home and project with lexical search only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir import Memory


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(project, home) with lexical search only, MEMDIR_HOME pointing at home."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    monkeypatch.setenv("MEMDIR_HOME", str(home))
    return project, home


@pytest.fixture
def memory(env: tuple[Path, Path]) -> Iterator[Memory]:
    project, home = env
    m = Memory.open(project, home=home)
    try:
        yield m
    finally:
        m.close()
