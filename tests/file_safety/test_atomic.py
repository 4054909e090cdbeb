"""§2 atomic writes: temp file in the same directory, fsync, rename, fsync the directory."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memdir.files import atomic
from memdir.files.atomic import (
    TEMP_MARKER,
    atomic_create,
    atomic_write,
    ensure_private_dir,
    remove_durably,
)


def listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_creates_a_new_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    atomic_write(target, b"hello")
    assert target.read_bytes() == b"hello"
    assert listing(tmp_path) == ["a.md"]


def test_replaces_content_with_a_new_inode(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old content that is longer")
    before = target.stat().st_ino
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    assert target.stat().st_ino != before  # renamed into place, not rewritten in place
    assert listing(tmp_path) == ["a.md"]


def test_writes_large_and_empty_payloads(tmp_path: Path) -> None:
    big = os.urandom(3 * 1024 * 1024 + 7)
    atomic_write(tmp_path / "big", big)
    assert (tmp_path / "big").read_bytes() == big
    atomic_write(tmp_path / "empty", b"")
    assert (tmp_path / "empty").read_bytes() == b""


def test_fsync_failure_leaves_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")

    def broken_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="Input/output"):
        atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert listing(tmp_path) == ["a.md"]


def test_short_write_failure_leaves_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")
    real_write = os.write
    calls = {"n": 0}

    def failing_write(fd: int, data: bytes | memoryview) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data[:3]))  # a short write first, then the disk fills
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", failing_write)
    with pytest.raises(OSError, match="No space"):
        atomic_write(target, b"new content")
    assert target.read_bytes() == b"old"
    assert listing(tmp_path) == ["a.md"]


def test_interrupt_during_rename_leaves_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")

    def interrupted(self: Path, other: Path) -> Path:
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert listing(tmp_path) == ["a.md"]


def test_short_writes_are_completed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write

    def one_byte_at_a_time(fd: int, data: bytes | memoryview) -> int:
        return real_write(fd, bytes(data[:1]))

    monkeypatch.setattr(os, "write", one_byte_at_a_time)
    atomic_write(tmp_path / "a", b"abcdef")
    assert (tmp_path / "a").read_bytes() == b"abcdef"


def test_temp_file_is_hidden_in_the_same_directory_and_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Path] = []
    real_replace = Path.replace

    def spy(self: Path, other: Path) -> Path:
        seen.append(self)
        return real_replace(self, other)

    monkeypatch.setattr(Path, "replace", spy)
    atomic_write(tmp_path / "n-1.md", b"x")
    (tmp_name,) = seen
    assert tmp_name.parent == tmp_path
    assert tmp_name.name.startswith(".n-1.md" + TEMP_MARKER)


def test_directory_is_fsynced_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_replace = Path.replace
    real_fsync_dir = atomic.fsync_dir

    def spy_replace(self: Path, other: Path) -> Path:
        events.append("rename")
        return real_replace(self, other)

    def spy_fsync_dir(directory: Path) -> None:
        events.append(f"fsync-dir {directory.name}")
        real_fsync_dir(directory)

    monkeypatch.setattr(Path, "replace", spy_replace)
    monkeypatch.setattr(atomic, "fsync_dir", spy_fsync_dir)
    atomic_write(tmp_path / "a", b"x")
    assert events == ["rename", f"fsync-dir {tmp_path.name}"]


def test_mode_is_applied_to_new_files(tmp_path: Path) -> None:
    atomic_write(tmp_path / "secret", b"x", mode=0o600)
    assert stat.S_IMODE((tmp_path / "secret").stat().st_mode) == 0o600


def test_replacing_keeps_the_permissions_a_person_set(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")
    target.chmod(0o600)
    atomic_write(target, b"new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    target.chmod(0o640)
    atomic_write(target, b"newer")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_replacing_never_widens_beyond_the_requested_mode(tmp_path: Path) -> None:
    target = tmp_path / "state"
    target.write_bytes(b"old")
    target.chmod(0o644)
    atomic_write(target, b"new", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_remove_durably(tmp_path: Path) -> None:
    target = tmp_path / "a"
    target.write_bytes(b"x")
    assert remove_durably(target) is True
    assert not target.exists()
    assert remove_durably(target) is False


def test_ensure_private_dir_creates_every_missing_level_private(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    made = ensure_private_dir(tmp_path / "a" / "b" / "c")
    assert made.is_dir()
    for path in (tmp_path / "a", tmp_path / "a" / "b", made):
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755  # existing directories untouched
    assert ensure_private_dir(made) == made


def test_ensure_private_dir_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(OSError):
        ensure_private_dir(tmp_path / "file")
    with pytest.raises(OSError):
        ensure_private_dir(tmp_path / "file" / "sub")


def test_atomic_create_creates_once_and_never_replaces(tmp_path: Path) -> None:
    target = tmp_path / "project.json"
    assert atomic_create(target, b"first") is True
    assert atomic_create(target, b"second") is False
    assert target.read_bytes() == b"first"
    assert listing(tmp_path) == ["project.json"]


def test_atomic_create_without_hard_links_falls_back_to_exclusive_create(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(src: object, dst: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    target = tmp_path / "project.json"
    assert atomic_create(target, b"first") is True
    assert atomic_create(target, b"second") is False
    assert target.read_bytes() == b"first"
    assert listing(tmp_path) == ["project.json"]


def test_atomic_create_failure_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        atomic_create(tmp_path / "project.json", b"x")
    assert listing(tmp_path) == []
