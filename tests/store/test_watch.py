"""The watch of a note directory: what it reports, and every case where it cannot vouch
for the directory (then it says None, and the caller looks at every file)."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from memdir.store.watch import DirectoryWatch, load_inotify, unwatchable_reason

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def _is_note(name: str) -> bool:
    return name.endswith(".md") and not name.startswith(".")


def _watch(path: Path, **kwargs: Any) -> DirectoryWatch:
    watch = DirectoryWatch(path, _is_note, **kwargs)
    assert watch.changes() is None  # the first look sets the watch up: nothing is known
    return watch


@linux
def test_it_names_the_note_files_changed_since_the_last_look(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a")
    watch = _watch(tmp_path)
    assert watch.reason is None
    assert watch.changes() == set()
    (tmp_path / "a.md").write_text("changed")
    (tmp_path / "b.md").write_text("new")
    (tmp_path / ".b.md.tmp-1").write_text("a temp file: not a note")
    (tmp_path / "notes.txt").write_text("not a note")
    assert watch.changes() == {"a.md", "b.md"}
    assert watch.changes() == set()
    (tmp_path / "a.md").chmod(0o600)  # readability may change: looked at again
    (tmp_path / "b.md").rename(tmp_path / "c.md")
    assert watch.changes() == {"a.md", "b.md", "c.md"}
    (tmp_path / "c.md").unlink()
    os.utime(tmp_path / "a.md", ns=(1, 1))
    assert watch.changes() == {"a.md", "c.md"}
    watch.close()
    assert watch.changes() is None


@linux
def test_reset_makes_the_next_look_unknown(tmp_path: Path) -> None:
    watch = _watch(tmp_path)
    (tmp_path / "a.md").write_text("a")
    watch.reset()
    assert watch.changes() is None
    assert watch.changes() == set()
    watch.close()


@linux
def test_each_consumer_takes_its_own_changes(tmp_path: Path) -> None:
    watch = _watch(tmp_path)  # the index's first look
    assert watch.changes("scan") is None  # the scan's first look
    (tmp_path / "a.md").write_text("a")
    assert watch.changes("index") == {"a.md"}
    (tmp_path / "b.md").write_text("b")
    assert watch.changes("scan") == {"a.md", "b.md"}
    assert watch.changes("index") == {"b.md"}
    watch.reset("scan")
    assert watch.changes("index") == set()
    assert watch.changes("scan") is None
    assert watch.changes("scan") == set()
    watch.close()


@linux
def test_a_replaced_or_removed_directory_is_unknown_and_watched_again(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    watch = _watch(notes)
    assert watch.changes() == set()
    (tmp_path / "notes").rename(tmp_path / "away")
    assert watch.changes() is None  # gone
    assert watch.changes() is None
    assert watch.reason == "the directory does not exist yet"
    notes.mkdir()
    assert watch.changes() is None  # a new directory: watched from now, nothing known
    (notes / "x.md").write_text("x")
    assert watch.changes() == {"x.md"}
    # Replaced between two looks, by a directory of another inode.
    notes.rename(tmp_path / "old")
    notes.mkdir()
    assert watch.changes() is None
    assert watch.changes() == set()
    watch.close()


@linux
def test_a_linked_directory_pointed_elsewhere_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    link = tmp_path / "notes"
    link.symlink_to(tmp_path / "one")
    watch = _watch(link)
    assert watch.changes() == set()
    link.unlink()
    link.symlink_to(tmp_path / "two")
    assert watch.changes() is None
    (tmp_path / "two" / "n.md").write_text("n")
    assert watch.changes() == {"n.md"}
    watch.close()


class _FakeINotify:
    """An inotify stand-in whose queue the test fills."""

    def __init__(self, queue: list[Any], fail_add: OSError | None = None) -> None:
        self.queue, self.fail_add = queue, fail_add

    def add_watch(self, path: object, mask: int) -> int:
        if self.fail_add is not None:
            raise self.fail_add
        return 1

    def read(self, timeout: int = 0) -> list[Any]:
        out, self.queue[:] = list(self.queue), []
        return out

    def close(self) -> None:
        pass


def _fake_loader(queue: list[Any], fail_add: OSError | None = None) -> Any:
    real = load_inotify()
    module = SimpleNamespace(
        flags=real.flags, INotify=lambda nonblocking: _FakeINotify(queue, fail_add)
    )
    return lambda: module


@linux
def test_an_overflowed_queue_is_unknown(tmp_path: Path) -> None:
    flags = load_inotify().flags
    queue: list[Any] = []
    watch = _watch(tmp_path, loader=_fake_loader(queue))
    queue.append(SimpleNamespace(wd=1, mask=flags.MODIFY, cookie=0, name="a.md"))
    assert watch.changes() == {"a.md"}
    queue.append(SimpleNamespace(wd=1, mask=flags.MODIFY, cookie=0, name="a.md"))
    queue.append(SimpleNamespace(wd=-1, mask=flags.Q_OVERFLOW, cookie=0, name=""))
    assert watch.changes() is None
    assert watch.changes() == set()  # watched again
    queue.append(SimpleNamespace(wd=1, mask=flags.IGNORED, cookie=0, name=""))
    assert watch.changes() is None  # the kernel dropped the watch


@linux
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EMFILE, errno.ENOMEM])
def test_the_watch_limit_reached_means_no_watch(tmp_path: Path, code: int) -> None:
    watch = DirectoryWatch(
        tmp_path, _is_note, loader=_fake_loader([], OSError(code, os.strerror(code)))
    )
    for _ in range(3):
        assert watch.changes() is None
    assert watch.reason is not None and os.strerror(code) in watch.reason


def test_no_inotify_library_means_no_watch(tmp_path: Path) -> None:
    def missing() -> Any:
        raise ImportError("No module named 'inotify_simple'")

    watch = DirectoryWatch(tmp_path, _is_note, loader=missing)
    for _ in range(3):
        assert watch.changes() is None
    assert watch.reason is not None


_MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 0:40 / /home/me/nfs rw,relatime shared:2 - nfs4 server:/export rw
31 22 0:41 / /home/me/ssh rw - fuse.sshfs me@host:/ rw
32 22 0:42 / /home/me/my\\040notes rw - tmpfs tmpfs rw
33 30 0:43 / /home/me/nfs/local rw - ext4 /dev/sdb1 rw
"""


@pytest.mark.parametrize(
    ("path", "watchable"),
    [
        ("/home/me/project/MEMORY", True),
        ("/home/me/nfs/project", False),
        ("/home/me/nfsish/project", True),  # a prefix of the name is not the mount
        ("/home/me/nfs/local/project", True),  # a local mount inside it
        ("/home/me/ssh/x", False),
        ("/home/me/my notes/x", True),
    ],
)
def test_file_systems_whose_remote_changes_raise_no_event_are_not_watched(
    path: str, watchable: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    reason = unwatchable_reason(Path(path), _MOUNTINFO)
    assert (reason is None) is watchable, reason


@linux
def test_each_consumer_looks_at_every_file_now_and_then(tmp_path: Path) -> None:
    """What inotify never reports (a write through a hard link from elsewhere, through a
    shared memory map) is bounded: every FULL_LOOK_SECONDS a consumer is told to look at
    every file, however quiet the watch."""
    from memdir.store.watch import FULL_LOOK_SECONDS

    now = [1000.0]
    watch = DirectoryWatch(tmp_path, _is_note, clock=lambda: now[0])
    assert watch.changes() is None
    now[0] += FULL_LOOK_SECONDS - 1
    assert watch.changes() == set()
    now[0] += 1
    assert watch.changes() is None
    assert watch.changes() == set()
    watch.close()


def test_a_mount_over_another_on_the_same_point_is_the_one_that_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """autofs (systemd's automount of NFS homes) sits on /home/me and the NFS mount made
    on demand over it, at the same point: later lines of mountinfo hide earlier ones."""
    monkeypatch.setattr(sys, "platform", "linux")
    mountinfo = (
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "40 22 0:50 / /home/me rw,relatime shared:20 - autofs systemd-1 rw,fd=50\n"
        "41 40 0:51 / /home/me rw,relatime shared:21 - nfs4 server:/home/me rw\n"
    )
    assert unwatchable_reason(Path("/home/me/project/.memdir"), mountinfo) is not None


@pytest.mark.parametrize("fstype", ["gfs2", "ocfs2", "drvfs"])
def test_shared_and_host_file_systems_are_not_watched(
    fstype: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GFS2/OCFS2 (one disk, several machines) and WSL1's drvfs (the Windows side): inotify
    hears only what this kernel did there."""
    monkeypatch.setattr(sys, "platform", "linux")
    mountinfo = (
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        f"40 22 0:50 / /shared rw,relatime shared:20 - {fstype} /dev/sdc1 rw\n"
    )
    assert unwatchable_reason(Path("/shared/project/.memdir"), mountinfo) is not None
