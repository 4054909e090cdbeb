"""Helpers of the issue-15 (encryption at rest) review: a short runtime directory for the
unlock agent's socket, a home, a git project, and a scan for distinctive plaintext."""

from __future__ import annotations

from pathlib import Path

import pytest

from files import files_holding
from memdir import Memory

PASSWORD = b"review horse battery staple"
#: Words in the review's notes and nowhere else.
WORDS = ("ocelotvermilion", "gondolaturmeric", "yttriumlagoon", "pangolinsaffron")


@pytest.fixture
def rhome(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("MEMDIR_HOME", str(path))
    return path


def make_project(tmp_path: Path, name: str = "project") -> Path:
    path = tmp_path / name
    (path / ".git").mkdir(parents=True)
    return path


@pytest.fixture
def rproject(tmp_path: Path) -> Path:
    return make_project(tmp_path)


def open_memory(project: Path, home: Path) -> Memory:
    return Memory.open(project, home=home, embedder=None)


def hits(*roots: Path, words: tuple[str, ...] = WORDS) -> list[str]:
    """Files under `roots` holding any of `words` (bytes, any case)."""
    return files_holding(roots, words)
