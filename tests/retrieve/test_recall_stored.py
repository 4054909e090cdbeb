"""A first recall of an unwatched process scores most notes by the terms the index stores
(their files are not read) and must give exactly what reading every file gives — and
never score a note as it was before an edit."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir import Memory
from memdir.store.notedir import NoteDirectory

from .recall_cases import CASES, NOTES, remember_all


@pytest.fixture(autouse=True)
def quick_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    """A racy window of 20 ms (the real one is 2 s)."""
    monkeypatch.setattr("memdir.index.rows.RACY_NS", 20_000_000)


def _settle() -> None:
    time.sleep(0.05)


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    with Memory.open(project, home=home) as memory:
        remember_all(memory)
        memory.search("anything", method="lexical")  # the index holds every note now
        _settle()
        memory.search("anything", method="lexical")  # and trusts their stamps
    yield project, home


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The note files parsed one by one (`NoteDirectory.read`)."""
    calls: list[str] = []
    real = NoteDirectory.read

    def counting(self: NoteDirectory, note_id: str) -> object:
        calls.append(note_id)
        return real(self, note_id)

    monkeypatch.setattr(NoteDirectory, "read", counting)
    return calls


def _first_recall(project: Path, home: Path, message: str) -> tuple[str, tuple[str, ...]]:
    with Memory.open(project, home=home) as memory:
        got = memory.recall(message)
    return got.block, got.note_ids


def _read_all_recall(project: Path, home: Path, message: str) -> tuple[str, tuple[str, ...]]:
    with Memory.open(project, home=home) as memory:
        memory.notes.list()  # every file read: the Recaller then works from the notes whole
        memory.agent.notes()
        recaller_warm = memory.recall("a message that primes the recaller")
        del recaller_warm
        got = memory.recall(message)
    return got.block, got.note_ids


def test_it_gives_what_reading_every_file_gives(filled: tuple[Path, Path]) -> None:
    project, home = filled
    for message, _ in CASES:
        assert _first_recall(project, home, message) == _read_all_recall(project, home, message), (
            message
        )


def test_it_reads_only_the_notes_it_shows(filled: tuple[Path, Path], reads: list[str]) -> None:
    project, home = filled
    message = next(m for m, expected in CASES if expected)
    _, ids = _first_recall(project, home, message)
    assert ids
    assert set(reads) <= set(ids) | _linked(ids)
    assert len(reads) < len(NOTES) / 2


def _linked(ids: tuple[str, ...]) -> set[str]:
    import re

    out: set[str] = set()
    for note in NOTES:
        if note.id in ids:
            out |= set(re.findall(r"\[\[([^\]]+)\]\]", note.body))
    return out


def test_an_edit_since_the_index_is_scored_as_it_is_now(
    filled: tuple[Path, Path], reads: list[str]
) -> None:
    project, home = filled
    message, expected = next((m, e) for m, e in CASES if e)
    assert expected in _first_recall(project, home, message)[1]
    path = project / "MEMORY" / f"{expected}.md"
    text = path.read_text(encoding="utf-8")
    head, _, _ = text.partition("\n---\n")
    # The note now says something else entirely (the same size and mtime, even).
    before = path.stat()
    body = "Nothing of the sort here."
    path.write_text(f"{head}\n---\n{body}\n", encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    block, ids = _first_recall(project, home, message)
    assert block == _read_all_recall(project, home, message)[0]
    assert expected not in ids
    assert expected in reads  # read from its file, not scored by what was stored


def test_a_removed_note_and_a_new_one_are_seen(filled: tuple[Path, Path]) -> None:
    project, home = filled
    message, expected = next((m, e) for m, e in CASES if e)
    (project / "MEMORY" / f"{expected}.md").unlink()
    assert expected not in _first_recall(project, home, message)[1]
    with Memory.open(project, home=home) as memory:
        memory.remember("Quokka colony", "The quokka colony lives on Rottnest island.")
    _, ids = _first_recall(project, home, "where does the quokka colony live?")
    assert any(i.startswith("quokka-colony") for i in ids)


def test_no_index_or_a_damaged_one_reads_every_file(filled: tuple[Path, Path]) -> None:
    project, home = filled
    message = next(m for m, e in CASES if e)
    expected = _read_all_recall(project, home, message)
    for db in (home / "index").glob("*.sqlite3"):
        db.write_bytes(b"not a database" * 100)
    assert _first_recall(project, home, message) == expected
    for db in (home / "index").glob("*.sqlite3*"):
        db.unlink()
    assert _first_recall(project, home, message) == expected
