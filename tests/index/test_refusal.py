"""The index on a disk that refuses writes: a failed refresh rolls back whole and says what it
missed, opening never deletes the index, and stand-ins (read-only, in memory) answer queries.

The faults are real: a small tmpfs filled to the last byte or remounted read-only (root
only, as CI runs), and a file-size limit (RLIMIT_FSIZE) that fails SQLite's writes part
way through a refresh without root.
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from disks import fill
from disks import tmpfs as mounted
from memdir.core import Note, render_note
from memdir.index.db import SearchIndex
from memdir.index.query import analyse
from memdir.index.refusal import refusal
from memdir.index.schema import open_index

OLD = time.time_ns() - 3600 * 1_000_000_000  # files at rest long before they are indexed
Stamp = tuple[int, int, int, int]
_root_only = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mount") is None, reason="mounting a tmpfs needs root"
)


class Source:
    """A note directory in memory, with stamps of files at rest."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[Stamp, bytes]] = {}
        self._ino = 1000

    def note(self, note_id: str, summary: str, body: str = "") -> None:
        data = render_note(Note(id=note_id, summary=summary, body=body, created_at=1, updated_at=2))
        self._ino += 1
        self.files[note_id] = ((len(data), OLD + self._ino, self._ino, OLD + self._ino), data)

    def remove(self, note_id: str) -> None:
        del self.files[note_id]

    def stamps(self) -> tuple[dict[str, Stamp], int]:
        return {k: v[0] for k, v in self.files.items()}, 0

    def stamps_of(self, note_ids: Iterable[str]) -> dict[str, Stamp]:
        now = self.stamps()[0]
        return {i: now[i] for i in note_ids if i in now}

    def read_bytes(self, note_id: str) -> bytes | None:
        item = self.files.get(note_id)
        return item[1] if item else None


def _found(index: SearchIndex, text: str) -> set[str]:
    match = analyse(text).match
    assert match is not None
    hits = index.lexical(match, 1000)
    return {row.note_id for row in index.chunks(cid for cid, _ in hits).values()}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs of its own, unmounted afterwards."""
    with mounted(tmp_path / "tiny") as mount:
        yield mount


def remount(mount: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(mount)], check=True)


def _deploy_notes(source: Source) -> None:
    source.note("staging", "Deploys go through staging", "The staging cluster first.")
    source.note("rollbacks", "Rollbacks of deploys", "Ask the on-call person.")
    source.note("old", "Old deploy checklist", "Obsolete deploy steps.")


def _change_deploy_notes(source: Source) -> None:
    source.note("rollbacks", "Rollbacks of deploys", "Ask the release manager.")
    source.remove("old")
    source.note("hand", "Deploys written by hand", "Edited in an editor.")


@_root_only
def test_a_refresh_the_full_disk_refuses_rolls_back_and_names_what_the_index_is_behind_on(
    tmpfs: Path,
) -> None:
    path = tmpfs / "index.sqlite3"
    source = Source()
    _deploy_notes(source)
    index = SearchIndex(path)
    index.refresh(source)
    _change_deploy_notes(source)
    for i in range(300):  # more than one batch, none of which fits
        source.note(f"bulk-{i:03}", f"Bulk deploy note {i}", "deploy words " * 40)
    filler = fill(tmpfs)

    with pytest.raises(sqlite3.OperationalError) as raised:
        index.refresh(source)
    assert refusal(raised.value, path) == "the disk is full"
    # Rolled back whole: the index answers as before, and knows what it no longer matches.
    assert _found(index, "deploy") == {"staging", "rollbacks", "old"}
    assert "release" not in " ".join(r.text for r in index.chunks(range(1, 100)).values())
    behind = index.behind(source)
    assert behind.changed == {"rollbacks", "hand"} | {f"bulk-{i:03}" for i in range(300)}
    assert behind.removed == {"old"}

    filler.unlink()  # room again: no transaction, lock or log was left behind
    index.refresh(source)
    assert index.behind(source).ids == frozenset()
    assert index.disagreements(source) == []
    assert "release" in " ".join(r.text for r in index.chunks(range(1, 1000)).values())
    index.close()


@_root_only
def test_deletions_the_full_disk_refuses_are_still_known(tmpfs: Path) -> None:
    path = tmpfs / "index.sqlite3"
    source = Source()
    _deploy_notes(source)
    index = SearchIndex(path)
    index.refresh(source)
    source.remove("old")  # only a deletion: the one write the refresh needs is refused
    filler = fill(tmpfs)
    with pytest.raises(sqlite3.OperationalError) as raised:
        index.refresh(source)
    assert refusal(raised.value, path) == "the disk is full"
    assert index.behind(source).removed == {"old"}
    with pytest.raises(sqlite3.OperationalError):
        index.refresh(source)  # tried again, not taken as done
    filler.unlink()
    assert index.refresh(source).removed == 1
    assert index.note_ids() == {"staging", "rollbacks"}
    index.close()


@_root_only
def test_opening_on_a_full_disk_keeps_the_index_and_reads_it_read_only(tmpfs: Path) -> None:
    path = tmpfs / "index.sqlite3"
    source = Source()
    _deploy_notes(source)
    index = SearchIndex(path)
    index.refresh(source)
    index.close()
    before = _digest(path)
    filler = fill(tmpfs)

    with pytest.raises(sqlite3.OperationalError) as raised:
        open_index(path)  # SQLite cannot make its shared-memory file: not damage
    assert refusal(raised.value, path) == "the disk is full"
    assert _digest(path) == before  # the index was not deleted as if damaged

    stand_in = SearchIndex(path, stand_in=True)
    assert stand_in.stand_in == "read-only"
    assert _found(stand_in, "deploy") == {"staging", "rollbacks", "old"}
    assert stand_in.check(full=True) is None
    _change_deploy_notes(source)
    with pytest.raises(sqlite3.OperationalError) as raised:
        stand_in.refresh(source)
    assert refusal(raised.value, path) == "the disk is full"
    assert stand_in.behind(source).ids == {"rollbacks", "hand", "old"}
    stand_in.close()

    filler.unlink()
    index = SearchIndex(path)
    assert index.rebuilt is False and index.stand_in is None
    assert index.note_ids() == {"staging", "rollbacks", "old"}
    index.close()


@_root_only
def test_a_read_only_file_system_is_read_and_never_written(tmpfs: Path) -> None:
    path = tmpfs / "index.sqlite3"
    source = Source()
    _deploy_notes(source)
    index = SearchIndex(path)
    index.refresh(source)
    index.close()
    before = sorted(p.name for p in tmpfs.iterdir()), _digest(path)
    _change_deploy_notes(source)
    remount(tmpfs, "ro")
    try:
        with pytest.raises(OSError) as raised:  # the lock file cannot even be opened
            SearchIndex(path)
        assert refusal(raised.value, path) == "the file system is read-only"
        stand_in = SearchIndex(path, stand_in=True)
        assert stand_in.stand_in == "read-only"
        with pytest.raises(sqlite3.OperationalError) as failed:
            stand_in.refresh(source)
        assert refusal(failed.value, path) == "the file system is read-only"
        assert _found(stand_in, "deploy") == {"staging", "rollbacks", "old"}
        assert stand_in.behind(source).ids == {"rollbacks", "hand", "old"}
        assert stand_in.check(full=True) is None
        stand_in.close()
    finally:
        remount(tmpfs, "rw")
    assert (sorted(p.name for p in tmpfs.iterdir()), _digest(path)) == before


@_root_only
def test_with_no_index_and_no_room_the_stand_in_is_built_in_memory(tmpfs: Path) -> None:
    path = tmpfs / "index" / "project.sqlite3"
    source = Source()
    _deploy_notes(source)
    remount(tmpfs, "ro")
    try:
        with pytest.raises(OSError) as raised:
            SearchIndex(path)
        assert refusal(raised.value, path) == "the file system is read-only"
        stand_in = SearchIndex(path, stand_in=True)
        assert stand_in.stand_in == "memory"
        stats = stand_in.refresh(source)
        assert stats.added == 3
        assert _found(stand_in, "deploy") == {"staging", "rollbacks", "old"}
        stand_in.close()
    finally:
        remount(tmpfs, "rw")
    assert list(tmpfs.iterdir()) == []


@pytest.fixture
def file_size_limit() -> Iterator[Callable[[int | None], None]]:
    """Set RLIMIT_FSIZE with `limit(bytes)`: writes past it fail (SIGXFSZ ignored)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    def limit(size: int | None) -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft if size is None else size, hard))

    try:
        yield limit
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


def test_a_refresh_cut_short_part_way_keeps_whole_batches_and_knows_the_rest(
    tmp_path: Path, file_size_limit: Callable[[int | None], None]
) -> None:
    path = tmp_path / "index.sqlite3"
    source = Source()
    source.note("first", "The first deploy note", "Kept.")
    index = SearchIndex(path)
    index.refresh(source)
    for i in range(600):
        source.note(f"bulk-{i:03}", f"Bulk deploy note {i}", f"deploy {i} " * 60)
    wal = Path(f"{path}-wal")
    limit = file_size_limit
    # Room for about one batch of 200 notes in the log, not for three.
    limit(wal.stat().st_size + 3 * 1024 * 1024 // 2)
    try:
        with pytest.raises(sqlite3.OperationalError) as raised:
            index.refresh(source)
        assert refusal(raised.value, path) is not None
        indexed = index.note_ids()
        behind = index.behind(source)
    finally:
        limit(None)
    assert 1 < len(indexed) < 601, "the limit should cut the refresh part way"
    # What the index holds is whole notes; what it lacks is exactly what `behind` names.
    assert behind.changed == set(source.files) - indexed
    assert behind.removed == frozenset()
    assert sorted(index.disagreements(source)) == sorted(
        f"note {n} is not in the index" for n in behind.changed
    )
    index.refresh(source)
    assert index.behind(source).ids == frozenset()
    assert index.note_ids() == set(source.files)
    index.close()


def test_errors_that_are_not_the_disk_refusing_are_not_refusals(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.sqlite3")
    with pytest.raises(sqlite3.OperationalError) as syntax:
        conn.execute("SELEC 1")
    conn.close()
    assert refusal(syntax.value, tmp_path) is None
    bad = tmp_path / "garbage.sqlite3"
    bad.write_bytes(b"not a database at all " * 400)
    with pytest.raises(sqlite3.DatabaseError) as damaged:
        sqlite3.connect(bad).execute("SELECT * FROM sqlite_master")
    assert refusal(damaged.value, bad) is None
    with pytest.raises(FileNotFoundError) as missing:
        (tmp_path / "nothing-here").read_bytes()
    assert refusal(missing.value, tmp_path) is None
