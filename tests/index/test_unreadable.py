"""A note file that cannot be read is that file's problem: the refresh leaves the note out
(what the index held of it included) and commits everything else, `behind` names it instead
of raising, and only errors on the index's own files are the disk refusing.

The failing reads are simulated here (any user); tests/retrieve/test_unreadable.py makes a
file genuinely unreadable to the searching user.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from memdir.core import Note, render_note
from memdir.index.db import SearchIndex
from memdir.index.query import analyse
from memdir.index.refusal import behind, refusal

OLD = time.time_ns() - 3600 * 1_000_000_000
Stamp = tuple[int, int, int, int]


class Source:
    """A note directory in memory; `unreadable` maps note ids to the error reading them raises."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[Stamp, bytes]] = {}
        self.unreadable: dict[str, OSError] = {}
        self._ino = 1000

    def note(self, note_id: str, summary: str, body: str = "", *, at: int = OLD) -> None:
        data = render_note(Note(id=note_id, summary=summary, body=body, created_at=1, updated_at=2))
        self._ino += 1
        self.files[note_id] = ((len(data), at + self._ino, self._ino, at + self._ino), data)

    def stamps(self) -> tuple[dict[str, Stamp], int]:
        return {k: v[0] for k, v in self.files.items()}, 0

    def stamps_of(self, note_ids: Iterable[str]) -> dict[str, Stamp]:
        now = self.stamps()[0]
        return {i: now[i] for i in note_ids if i in now}

    def read_bytes(self, note_id: str) -> bytes | None:
        if note_id in self.unreadable:
            raise self.unreadable[note_id]
        item = self.files.get(note_id)
        return item[1] if item else None


def denied(note_id: str) -> PermissionError:
    """What opening another user's 0600 note file raises."""
    return PermissionError(errno.EACCES, "Permission denied", f"/project/notes/{note_id}.md")


def _found(index: SearchIndex, text: str) -> dict[str, str]:
    match = analyse(text).match
    assert match is not None
    hits = index.lexical(match, 1000)
    return {row.note_id: row.text for row in index.chunks(cid for cid, _ in hits).values()}


def _deploys(source: Source) -> None:
    source.note("staging", "Deploys go through staging", "The staging cluster first.")
    source.note("rollbacks", "Rollbacks of deploys", "Ask the on-call person.")


@pytest.mark.parametrize(
    "error",
    [denied("secret"), OSError(errno.EIO, "Input/output error")],  # EIO: read(), no file name
    ids=["permission", "io-error"],
)
def test_an_unreadable_note_is_left_out_and_the_rest_is_indexed(
    tmp_path: Path, error: OSError
) -> None:
    source = Source()
    _deploys(source)
    index = SearchIndex(tmp_path / "index.sqlite3")
    index.refresh(source)
    source.note("secret", "Deploy keys of the team", "Kept from others.")
    source.unreadable["secret"] = error
    source.note("hand", "Deploys written by hand", "Edited in an editor.")

    stats = index.refresh(source)  # no rollback: the note added beside it is indexed
    assert (stats.added, stats.unreadable, stats.unchanged) == (1, ("secret",), 2)
    assert set(_found(index, "deploys")) == {"staging", "rollbacks", "hand"}
    assert index.behind(source).ids == {"secret"}  # not indexed: nothing of it to serve
    assert index.disagreements(source) == []  # doctor reports the file, not the index
    # Tried again on every refresh (making a file readable need not change its stamp),
    # without writing anything while it stays unreadable.
    writes = index.writes
    assert index.refresh(source).unreadable == ("secret",)
    assert index.writes == writes
    del source.unreadable["secret"]
    assert index.refresh(source).added == 1
    assert set(_found(index, "deploys")) == {"staging", "rollbacks", "hand", "secret"}
    index.close()


@pytest.mark.parametrize("how", ["made unreadable", "rewritten unreadable"])
def test_a_note_indexed_then_unreadable_is_dropped_not_served_as_it_was(
    tmp_path: Path, how: str
) -> None:
    source = Source()
    _deploys(source)
    # Indexed within its file system's clock tick of being written: read again each refresh.
    source.note("secret", "Deploy keys of the team", "The old keys.", at=time.time_ns())
    index = SearchIndex(tmp_path / "index.sqlite3")
    index.refresh(source)
    assert _found(index, "deploy keys")["secret"] == "The old keys."
    if how == "rewritten unreadable":
        source.note("secret", "Deploy keys of the team", "The new keys.")
    source.unreadable["secret"] = denied("secret")

    found = index.behind(source)  # reads it: named, never raised
    assert found.unreadable == {"secret"}
    assert found.changed == found.removed == frozenset()
    assert index.disagreements(source) == ["the index holds note secret, whose file cannot be read"]
    stats = index.refresh(source)
    assert stats.unreadable == ("secret",)
    assert "secret" not in index.note_ids()
    assert set(_found(index, "deploy keys")) == {"staging", "rollbacks"}
    assert index.disagreements(source) == []
    index.close()


def test_behind_names_an_unreadable_note_it_holds() -> None:
    a, b = (10, OLD, 1, OLD), (10, OLD, 2, OLD)
    known = {"a": (a, OLD + 3 * 10**9, "rev-a"), "b": (b, OLD, "rev-b")}
    stamps = {"a": a, "b": b}  # "b" was indexed too soon to trust

    def read(note_id: str) -> bytes:
        raise denied(note_id)

    found = behind(known, stamps, read, racy_ns=2_000_000_000)
    assert found.unreadable == found.ids == {"b"}


def test_only_errors_on_the_index_s_own_files_are_refusals(tmp_path: Path) -> None:
    path = tmp_path / "index" / "project.sqlite3"
    path.parent.mkdir()
    note = PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "notes" / "x.md"))
    assert refusal(note, path) is None
    listing = PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "notes"))
    assert refusal(listing, path) is None
    for own in (path, f"{path}-wal", f"{path}-shm", f"{path}.lock", path.parent, tmp_path):
        exc = PermissionError(errno.EACCES, "Permission denied", str(own))
        assert refusal(exc, path) == "permission denied", own
    relative = os.path.relpath(f"{path}-journal")
    assert refusal(OSError(errno.EROFS, "Read-only", relative), path) is not None
    assert refusal(OSError(errno.ENOSPC, "No space left on device"), path) == "the disk is full"
