"""Fixtures for encrypted stores: a short runtime directory for the unlock agent's socket
(AF_UNIX paths are short), and every agent a test started locked at teardown."""

from __future__ import annotations

from pathlib import Path

import pytest

from files import files_holding
from memdir import Memory

#: Words that appear in the test notes and nowhere else: a plaintext scan looks for them.
SECRET_WORDS = ("quokkaviolet", "marmaladeheliotrope", "zanzibarcobalt", "fjordpistachio")


@pytest.fixture
def enc_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("MEMDIR_HOME", str(path))
    return path


def make_project(tmp_path: Path, name: str = "project") -> Path:
    """A git project directory `name` under `tmp_path`."""
    path = tmp_path / name
    (path / ".git").mkdir(parents=True)
    return path


@pytest.fixture
def enc_project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


def open_memory(project: Path, home: Path) -> Memory:
    return Memory.open(project, home=home, embedder=None)


def seed(memory: Memory) -> None:
    """Notes in both scopes, with history (an edit) and a backup (a forget)."""
    memory.remember(
        "Deploy checklist", body=f"The {SECRET_WORDS[0]} protocol uses port 7431.", id="deploy"
    )
    memory.remember(
        "Deploy checklist",
        body=f"The {SECRET_WORDS[0]} protocol uses port 7432 since March.",
        id="deploy",
    )
    memory.remember("Theme", body=f"Prefers {SECRET_WORDS[1]} colours.", id="theme", scope="user")
    memory.remember("Old plan", body=f"The {SECRET_WORDS[2]} plan was dropped.", id="old-plan")
    memory.forget("old-plan")


def plaintext_hits(*roots: Path, words: tuple[str, ...] = SECRET_WORDS) -> list[str]:
    """Files under `roots` holding any of `words`, the secret words by default (as bytes,
    any case)."""
    return files_holding(roots, words)
