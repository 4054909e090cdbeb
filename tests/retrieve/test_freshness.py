"""No query is answered from a stale index, whatever changed a note file and however.

Every case runs twice: on a Memory whose note directories are watched (a long-lived
host: a query looks only at the files the kernel says changed) and on a plain one (a
short-lived process: every file's stamp is compared, the inode-change time included).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memdir import Memory
from memdir.index import db as index_db
from memdir.store.notedir import NoteDirectory

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/mountinfo").exists(), reason="the watch is Linux's (inotify)"
)


def _note(note_id: str, summary: str, body: str) -> bytes:
    head = f'{{"id":"{note_id}","summary":"{summary}","tags":[],"createdAt":1,"updatedAt":1}}'
    return f"---\n{head}\n---\n{body}\n".encode()


@pytest.fixture(params=["watched", "plain"])
def mem(request: pytest.FixtureRequest, project: Path, home: Path) -> Iterator[Memory]:
    m = Memory.open(project, home=home)
    m.stores.directory("project").mkdir(parents=True, exist_ok=True)
    if request.param == "watched":
        reasons = m.watch_files()
        assert reasons[m.scopes[0]] is None, reasons
    try:
        yield m
    finally:
        m.close()


@pytest.fixture
def quick_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    """A racy window of 1 ms (the real one is 2 s, for FAT's clock): files indexed more
    than 1 ms after they changed are trusted by their stamp, as old files are."""
    monkeypatch.setattr(index_db, "_RACY_NS", 1_000_000)


def _found(m: Memory, word: str) -> set[str]:
    """The notes a search finds by `word`; the notes listed (the directory's own scan,
    which recall reads) must agree."""
    found = {h.note_id for h in m.search(word, method="lexical")}
    listed = {n.id for n in m.notes.list() if word in f"{n.summary} {n.body}".casefold()}
    assert listed == found, (listed, found)
    return found


def _settle() -> None:
    time.sleep(0.01)


def test_an_in_place_edit_is_seen(mem: Memory, quick_settle: None) -> None:
    directory = mem.stores.directory("project")
    path = directory / "walrus-a1.md"
    path.write_bytes(_note("walrus-a1", "Animal", "The walrus sings at dawn."))
    assert _found(mem, "walrus") == {"walrus-a1"}
    _settle()
    assert _found(mem, "walrus") == {"walrus-a1"}  # settled: trusted by stamp now
    inode = path.stat().st_ino
    with path.open("r+b") as handle:  # the same file, rewritten and grown
        handle.write(_note("walrus-a1", "Animal", "The narwhal hums at dusk, longer now."))
    assert path.stat().st_ino == inode
    assert _found(mem, "walrus") == set()
    assert _found(mem, "narwhal") == {"walrus-a1"}


def test_an_edit_that_puts_the_old_size_and_mtime_back_is_seen(
    mem: Memory, quick_settle: None
) -> None:
    directory = mem.stores.directory("project")
    path = directory / "tick-b2.md"
    path.write_bytes(_note("tick-b2", "Tick", "the walrus sings"))
    old = time.time_ns() - 3600 * 10**9
    os.utime(path, ns=(old, old))
    assert _found(mem, "walrus") == {"tick-b2"}
    _settle()
    assert _found(mem, "walrus") == {"tick-b2"}
    before = path.stat()
    data = path.read_bytes()
    with path.open("r+b") as handle:
        handle.write(data.replace(b"walrus", b"narwhl"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # a tool keeping times
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    assert _found(mem, "walrus") == set()
    assert _found(mem, "narwhl") == {"tick-b2"}


def test_a_save_by_rename_a_new_file_moved_in_and_one_moved_out_are_seen(
    mem: Memory, quick_settle: None, tmp_path: Path
) -> None:
    directory = mem.stores.directory("project")
    (directory / "otter-c3.md").write_bytes(_note("otter-c3", "Otter", "Otters hold hands."))
    (directory / "heron-c4.md").write_bytes(_note("heron-c4", "Heron", "A heron waits."))
    assert _found(mem, "otter") == {"otter-c3"}
    _settle()
    # An editor's save: a temp file beside it, renamed over it.
    temp = directory / ".otter-c3.md.swp"
    temp.write_bytes(_note("otter-c3", "Otter", "Otters hold paws."))
    temp.replace(directory / "otter-c3.md")
    assert _found(mem, "paws") == {"otter-c3"}
    assert _found(mem, "hands") == set()
    # Moved in from elsewhere, and moved out.
    outside = tmp_path / "stork-c5.md"
    outside.write_bytes(_note("stork-c5", "Stork", "A stork brings the heron news."))
    outside.rename(directory / "stork-c5.md")
    (directory / "heron-c4.md").rename(tmp_path / "heron-c4.md")
    assert _found(mem, "heron") == {"stork-c5"}
    # Deleted.
    (directory / "stork-c5.md").unlink()
    assert _found(mem, "heron") == set()


def test_a_git_checkout_is_seen(mem: Memory, quick_settle: None, project: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("no git")

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.email=t@example.org", "-c", "user.name=t", *args],
            cwd=project,
            check=True,
            capture_output=True,
        )

    directory = mem.stores.directory("project")
    git("init", "-q", "-b", "main")
    (directory / "plan-d1.md").write_bytes(_note("plan-d1", "Plan", "We deploy on Mondays."))
    (directory / "gone-d2.md").write_bytes(_note("gone-d2", "Gone", "Only on main: walrus."))
    git("add", "-A")
    git("commit", "-q", "-m", "main")
    git("checkout", "-q", "-b", "other")
    (directory / "plan-d1.md").write_bytes(_note("plan-d1", "Plan", "We deploy on Fridays."))
    (directory / "gone-d2.md").unlink()
    (directory / "new-d3.md").write_bytes(_note("new-d3", "New", "Only on other: narwhal."))
    git("add", "-A")
    git("commit", "-q", "-m", "other")
    git("checkout", "-q", "main")
    assert _found(mem, "mondays") == {"plan-d1"}
    assert _found(mem, "walrus") == {"gone-d2"}
    _settle()
    assert _found(mem, "mondays") == {"plan-d1"}
    git("checkout", "-q", "other")
    assert _found(mem, "mondays") == set()
    assert _found(mem, "fridays") == {"plan-d1"}
    assert _found(mem, "walrus") == set()
    assert _found(mem, "narwhal") == {"new-d3"}
    git("checkout", "-q", "main")
    assert _found(mem, "mondays") == {"plan-d1"}
    assert _found(mem, "narwhal") == set()


def test_a_directory_removed_and_made_again_is_seen(mem: Memory, quick_settle: None) -> None:
    directory = mem.stores.directory("project")
    (directory / "old-e1.md").write_bytes(_note("old-e1", "Old", "The walrus of before."))
    assert _found(mem, "walrus") == {"old-e1"}
    _settle()
    shutil.rmtree(directory)
    assert _found(mem, "walrus") == set()
    directory.mkdir()
    (directory / "new-e2.md").write_bytes(_note("new-e2", "New", "The walrus of now."))
    assert _found(mem, "walrus") == {"new-e2"}
    _settle()
    (directory / "new-e2.md").write_bytes(_note("new-e2", "New", "The narwhal of now."))
    assert _found(mem, "walrus") == set()
    assert _found(mem, "narwhal") == {"new-e2"}


def test_a_note_written_by_another_memdir_process_is_seen(
    mem: Memory, quick_settle: None, project: Path, home: Path
) -> None:
    mem.remember("Walrus", "The walrus sings.")
    assert len(_found(mem, "walrus")) == 1
    _settle()
    other = Memory.open(project, home=home)
    try:
        written = other.remember("Narwhal", "The narwhal hums beside the walrus.")
        assert len(_found(other, "walrus")) == 2  # that process indexed it too
    finally:
        other.close()
    assert written.note.id in _found(mem, "narwhal")
    assert len(_found(mem, "walrus")) == 2


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The scopes whose every note file was stat'ed (a whole listing), one per listing."""
    calls: list[str] = []
    real = NoteDirectory._entries

    def counting(self: NoteDirectory, links: list[Any] | None = None) -> list[Any]:
        calls.append(self.scope.value)
        return real(self, links)

    monkeypatch.setattr(NoteDirectory, "_entries", counting)
    return calls


def test_a_watched_directory_is_not_listed_per_query(
    project: Path, home: Path, listings: list[str]
) -> None:
    m = Memory.open(project, home=home)
    try:
        for i in range(30):
            m.remember(f"Walrus {i}", f"walrus number {i}")
        m.watch_files()
        m.search("walrus", method="lexical")  # the first query after the watch: a listing
        listings.clear()
        m.notes.list()  # and the first scan
        listings.clear()
        for _ in range(5):
            assert len(m.search("walrus", method="lexical")) == 10
            assert len(m.notes.list()) == 30
        assert listings == []
        path = sorted(m.stores.directory("project").glob("*.md"))[-1]
        path.write_bytes(path.read_bytes().replace(b"number", b"narwhal"))
        assert len(_found(m, "narwhal")) == 1
        assert listings == []
    finally:
        m.close()
    plain = Memory.open(project, home=home)
    try:
        listings.clear()
        plain.search("walrus", method="lexical")
        plain.search("walrus", method="lexical")
        assert listings.count("project") == 2  # unwatched: every query lists
    finally:
        plain.close()


def test_a_failed_refresh_makes_the_next_one_look_at_every_file(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch, listings: list[str]
) -> None:
    m = Memory.open(project, home=home)
    try:
        m.remember("Walrus", "The walrus sings.")
        m.watch_files()
        m.search("walrus", method="lexical")
        path = next(m.stores.directory("project").glob("*.md"))
        path.write_bytes(path.read_bytes().replace(b"sings", b"narwhal"))
        real = index_db.SearchIndex._apply

        def refused(*args: object, **kwargs: object) -> object:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(index_db.SearchIndex, "_apply", refused)
        m.search("walrus", method="lexical")  # the disk refused: left out, not served
        monkeypatch.setattr(index_db.SearchIndex, "_apply", real)
        listings.clear()
        assert len(m.search("narwhal", method="lexical")) == 1
        assert listings == ["project"]
    finally:
        m.close()
