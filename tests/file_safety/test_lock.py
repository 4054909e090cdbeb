"""§2 one writer per directory: an exclusive flock, waiting with a timeout, then Busy."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

import pytest

from memdir.core import Scope
from memdir.errors import Busy, Refused
from memdir.files import DirLock
from memdir.store import NoteDirectory

CTX = multiprocessing.get_context("fork")


def hold_lock(path: str, held: Event, release: Event, seconds: float) -> None:
    with DirLock(Path(path), timeout=5, label="the test notes"):
        held.set()
        release.wait(seconds)


def start_holder(
    path: Path, seconds: float = 30.0
) -> tuple[multiprocessing.process.BaseProcess, Event]:
    held, release = CTX.Event(), CTX.Event()
    proc = CTX.Process(target=hold_lock, args=(str(path), held, release, seconds))
    proc.start()
    assert held.wait(10), "the helper process did not take the lock"
    return proc, release


def test_second_process_waits_then_raises_busy_with_a_clear_message(tmp_path: Path) -> None:
    lock_file = tmp_path / ".memdir.lock"
    proc, release = start_holder(lock_file)
    try:
        started = time.monotonic()
        with (
            pytest.raises(Busy) as info,
            DirLock(lock_file, timeout=0.3, label="the project notes"),
        ):
            pass
        waited = time.monotonic() - started
        assert 0.3 <= waited < 3
        message = str(info.value)
        assert "another memdir process is writing the project notes" in message
        assert "0.3 s" in message
        assert str(lock_file) in message
        assert info.value.exit_code == 6
    finally:
        release.set()
        proc.join(10)
    with DirLock(lock_file, timeout=0.3, label="x"):
        pass  # free again once the other process let go


def test_waiter_gets_the_lock_when_the_holder_finishes_within_the_timeout(tmp_path: Path) -> None:
    lock_file = tmp_path / ".memdir.lock"
    proc, _ = start_holder(lock_file, seconds=0.3)
    started = time.monotonic()
    with DirLock(lock_file, timeout=10, label="x"):
        waited = time.monotonic() - started
    proc.join(10)
    assert 0.1 <= waited < 5


def test_lock_of_a_killed_process_is_released(tmp_path: Path) -> None:
    lock_file = tmp_path / ".memdir.lock"
    proc, _ = start_holder(lock_file)
    assert proc.pid is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(10)
    with DirLock(lock_file, timeout=2, label="x"):
        pass


def test_lock_is_reentrant_within_a_thread(tmp_path: Path) -> None:
    lock_file = tmp_path / ".memdir.lock"
    outer = DirLock(lock_file, timeout=0.2, label="x")
    with outer, DirLock(lock_file, timeout=0.2, label="x"), outer:
        pass
    # fully released: another process can take it at once
    proc, release = start_holder(lock_file)
    release.set()
    proc.join(10)
    assert proc.exitcode == 0


def test_reentrancy_uses_the_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    with (
        DirLock(real / ".memdir.lock", timeout=0.2, label="x"),
        DirLock(link / ".memdir.lock", timeout=0.2, label="x"),
    ):
        pass


def test_lock_is_released_when_the_block_raises(tmp_path: Path) -> None:
    lock_file = tmp_path / ".memdir.lock"
    with pytest.raises(RuntimeError), DirLock(lock_file, timeout=0.2, label="x"):
        raise RuntimeError("boom")
    proc, release = start_holder(lock_file)
    release.set()
    proc.join(10)


def test_other_threads_wait_and_time_out(tmp_path: Path) -> None:
    lock_file = tmp_path / ".memdir.lock"
    results: list[str] = []

    def other() -> None:
        try:
            with DirLock(lock_file, timeout=0.2, label="x"):
                results.append("acquired")
        except Busy:
            results.append("busy")

    with DirLock(lock_file, timeout=0.2, label="x"):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(5)
    assert results == ["busy"]
    thread = threading.Thread(target=other)
    thread.start()
    thread.join(5)
    assert results == ["busy", "acquired"]


def test_threads_serialise_read_modify_write(tmp_path: Path) -> None:
    lock_file = tmp_path / ".memdir.lock"
    counter = tmp_path / "counter"
    counter.write_text("0")

    def bump() -> None:
        for _ in range(50):
            with DirLock(lock_file, timeout=10, label="x"):
                value = int(counter.read_text())
                time.sleep(0)
                counter.write_text(str(value + 1))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert counter.read_text() == "200"


def test_note_directory_lock_creates_the_directory_and_names_the_scope(tmp_path: Path) -> None:
    directory = NoteDirectory(Scope.USER, tmp_path / "notes", lock_timeout=0.2, max_notes=10)
    lock = directory.lock()
    assert (tmp_path / "notes").is_dir()
    assert lock.label == "the user notes"
    assert lock.timeout == 0.2
    proc, release = start_holder(lock.path)
    try:
        with pytest.raises(Busy, match="the user notes"), directory.lock():
            pass
    finally:
        release.set()
        proc.join(10)
    gitignore = (tmp_path / "notes" / ".gitignore").read_text()
    assert ".memdir.lock" in gitignore
    assert ".*.tmp-*" in gitignore


def try_lock_in_child(path: str, out: Any) -> None:
    try:
        with DirLock(Path(path), timeout=0.3, label="x"):
            out.put("acquired")
    except Busy:
        out.put("busy")


def test_a_forked_child_does_not_inherit_the_parents_lock(tmp_path: Path) -> None:
    lock_file = tmp_path / ".memdir.lock"
    out = CTX.Queue()
    with DirLock(lock_file, timeout=0.3, label="x"):
        child = CTX.Process(target=try_lock_in_child, args=(str(lock_file), out))
        child.start()
        assert out.get(timeout=10) == "busy"
        child.join(10)
    child = CTX.Process(target=try_lock_in_child, args=(str(lock_file), out))
    child.start()
    assert out.get(timeout=10) == "acquired"
    child.join(10)


@pytest.mark.parametrize("target", ["dangling", "existing"])
def test_a_lock_file_that_is_a_symbolic_link_is_refused_and_not_followed(
    tmp_path: Path, target: str
) -> None:
    outside = tmp_path / "outside.txt"
    if target == "existing":
        outside.write_text("keep me\n")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / ".memdir.lock").symlink_to(outside)
    with (
        pytest.raises(Refused, match="symbolic link"),
        DirLock(notes / ".memdir.lock", timeout=1, label="t"),
    ):
        pass
    # Not created where the link points, nor changed there.
    if target == "existing":
        assert outside.read_text() == "keep me\n"
    else:
        assert not outside.exists()


def test_audit_and_index_lock_links_are_refused_too(tmp_path: Path) -> None:
    from memdir import Memory

    home = tmp_path / "home"
    (home / "audit").mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    (home / "audit" / "audit.lock").symlink_to(outside)
    project = tmp_path / "project"
    project.mkdir()
    with Memory.open(project, home=home) as m, pytest.raises(Refused, match="symbolic link"):
        m.remember("A note about deploys")
    assert not outside.exists()
    assert not (project / "MEMORY").exists() or not any((project / "MEMORY").glob("*.md"))
