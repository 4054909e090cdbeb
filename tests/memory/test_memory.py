"""Tests for the `Memory` facade as a whole: opening (config validated first), search
delegation and the context manager."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memdir import ConfigError, InvalidInput, Memory, Scope

from .helpers import write_project_config


def test_search(memory: Memory) -> None:
    a = memory.remember("Pricing cards use fills", "separated by whitespace")
    memory.remember("Unrelated", "database vacuum")
    hits = memory.search("whitespace", method="lexical")
    assert [h.note_id for h in hits] == [a.note.id]
    assert hits[0].scope is Scope.PROJECT
    assert hits[0].match == "words"
    assert memory.search("nothingmatches", method="lexical") == []
    # Hybrid search also finds notes by meaning; the note with the word ranks first.
    hybrid = memory.search("whitespace")
    assert hybrid[0].note_id == a.note.id and hybrid[0].match == "both"
    with pytest.raises(InvalidInput):
        memory.search("x", mode="regex")
    with pytest.raises(InvalidInput):
        memory.search("x", limit=0)


def test_unknown_config_key_refused_before_anything_is_created(project: Path, home: Path) -> None:
    write_project_config(project, "[memory]\nmaxNote = 3\n")
    with pytest.raises(ConfigError, match=r"memory\.maxNote"):
        Memory.open(project, home=home)
    assert not (project / "MEMORY").exists()
    assert not (home / "memory").exists()
    assert sorted(p.name for p in (project / ".memdir").iterdir()) == ["config.toml"]


def test_invalid_config_value_is_refused(project: Path, home: Path) -> None:
    write_project_config(project, '[memory]\nmaxNoteBytes = "big"\n')
    with pytest.raises(ConfigError, match="maxNoteBytes"):
        Memory.open(project, home=home)
    assert not (project / "MEMORY").exists()


def test_context_manager(project: Path, home: Path) -> None:
    with Memory.open(project, home=home) as memory:
        memory.remember("Inside", "body")
    assert len(Memory.open(project, home=home).notes.list()) == 1


def test_collaborators_built_on_first_use_are_built_once(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.retrieve import Retriever

    built: list[object] = []
    original = Retriever.__init__

    def slow_init(self: Retriever, *args: object, **kwargs: object) -> None:
        time.sleep(0.05)  # widen the window in which two threads could both build one
        built.append(self)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Retriever, "__init__", slow_init)
    seen: list[object] = []
    threads = [
        threading.Thread(target=lambda: seen.append((memory.index.retriever, memory.sync.replica)))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(built) == 1
    assert len({id(r) for r, _ in seen}) == 1 and len({id(s) for _, s in seen}) == 1


def test_reopen_keeps_the_injected_embedder(memory: Memory) -> None:
    lexical = Memory(memory.settings, embedder=None)
    with lexical.reopen() as again:
        assert again.index.retriever.embedder is None
