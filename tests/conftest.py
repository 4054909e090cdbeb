"""Shared fixtures: an isolated MEMDIR_HOME, a project directory and a Memory opened on both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir import Memory


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh MEMDIR_HOME (the environment variable points at it)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("MEMDIR_HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh, non-git project directory."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def memory(project: Path, home: Path) -> Iterator[Memory]:
    """`Memory.open(project, home=home)`, closed after the test."""
    m = Memory.open(project, home=home)
    try:
        yield m
    finally:
        m.close()
