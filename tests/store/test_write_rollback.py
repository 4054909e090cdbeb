"""A write that fails part-way is undone: the outcome it reports is the truth (§2).

The faults are real: a small tmpfs, mounted by the test (root only, as CI runs) under the
part of the state being written, then filled, so that the note file lands and a later step
(history, audit) meets a full disk. After the error, nothing may have changed: the note
file, its history and the audit log are as they were, and no temp file is left.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from disks import fill, needs_root, tmpfs
from files import snapshot
from memdir import Memory
from memdir.core import Scope
from memdir.core.vocab import WriteEvent
from memdir.errors import DiskError, NotFound
from memdir.store import AuditLog, History, revision_of
from memdir.store.rollback import Rollback
from memdir.store.signing import MachineKey

Mount = Callable[[Path, str], Path]


@pytest.fixture
def mount_tmpfs() -> Iterator[Mount]:
    """Mount a tmpfs of `size` at a (new) directory; unmounted after the test."""
    with contextlib.ExitStack() as stack:
        yield lambda where, size: stack.enter_context(tmpfs(where, size))


def state(project: Path, home: Path) -> dict[str, bytes]:
    """Every note, history and audit file (not the filler, lock files, folders or the
    .gitignore a new notes folder gets)."""
    files = snapshot(project / "MEMORY", home / "memory-history", home / "audit")
    return {
        k: v
        for k, v in files.items()
        if v != b"<dir>" and not k.endswith(("/filler", ".lock", ".gitignore"))
    }


def written_elsewhere(project: Path, tmp_path: Path, **bodies: str) -> None:
    """Notes written with another home, so this one's audit log (and history) start empty:
    a full disk then refuses their first page, where an append to a page part-used could
    still fit (tmpfs allocates whole pages)."""
    with Memory.open(project, home=tmp_path / "elsewhere") as other:
        for note_id, body in bodies.items():
            other.remember("Deploys go through staging", body=body, id=note_id)


def notes_left_clean(project: Path) -> None:
    names = {p.name for p in (project / "MEMORY").iterdir()}
    assert names <= {".gitignore", ".memdir.lock", "deploys.md", "other.md"}, names


@needs_root
@pytest.mark.parametrize("full", ["memory-history", "audit"])
def test_a_replace_that_meets_a_full_disk_is_undone(
    project: Path, home: Path, tmp_path: Path, mount_tmpfs: Mount, full: str
) -> None:
    mount_tmpfs(home / full, "1m")
    written_elsewhere(project, tmp_path, deploys="first")
    m = Memory.open(project, home=home)
    assert m.notes.history("deploys")[-1].event == "observed"
    before = state(project, home)
    fill(home / full)
    with pytest.raises(DiskError, match="nothing was changed"):
        m.remember("Deploys go through staging", body="second " * 400, id="deploys")
    assert state(project, home) == before
    notes_left_clean(project)
    assert m.read("deploys").body == "first"
    assert m.notes.history("deploys")[-1].current
    assert m.audit.verify().ok
    # Room again: the same write lands, with its history and audit entry.
    (home / full / "filler").unlink()
    m.remember("Deploys go through staging", body="second", id="deploys")
    assert [e.event for e in m.notes.history("deploys")] == ["observed", "write"]
    assert m.notes.history("deploys")[-1].current
    assert [e.action for e in m.stores.audit.entries()] == ["write"]


@needs_root
@pytest.mark.parametrize("full", ["memory-history", "audit"])
def test_a_new_note_that_meets_a_full_disk_leaves_no_file(
    project: Path, home: Path, mount_tmpfs: Mount, full: str
) -> None:
    mount_tmpfs(home / full, "1m")
    m = Memory.open(project, home=home)
    before = state(project, home)
    fill(home / full)
    with pytest.raises(DiskError, match="nothing was changed"):
        m.remember("Deploys go through staging", id="deploys")
    assert state(project, home) == before
    assert m.notes.list() == []
    with pytest.raises(NotFound):
        m.notes.history("deploys")


@needs_root
def test_a_full_project_disk_leaves_the_old_note_and_no_temp_file(
    tmp_path: Path, home: Path, mount_tmpfs: Mount
) -> None:
    project = mount_tmpfs(tmp_path / "small", "1m") / "project"
    project.mkdir()
    m = Memory.open(project, home=home)
    m.remember("Deploys go through staging", body="first", id="deploys")
    before = state(project, home)
    fill(project)
    with pytest.raises(DiskError, match="nothing was changed"):
        m.remember("Deploys go through staging", body="second " * 2000, id="deploys")
    assert state(project, home) == before
    notes_left_clean(project)


@needs_root
@pytest.mark.parametrize("purge", [False, True])
def test_a_forget_whose_audit_entry_meets_a_full_disk_keeps_the_note(
    project: Path, home: Path, tmp_path: Path, mount_tmpfs: Mount, purge: bool
) -> None:
    mount_tmpfs(home / "audit", "1m")
    written_elsewhere(project, tmp_path, deploys="first")
    m = Memory.open(project, home=home)
    m.notes.list()  # records the version on disk
    before = state(project, home)
    backups = snapshot(home / "backups")
    fill(home / "audit")
    with pytest.raises(DiskError, match="nothing was changed"):
        m.forget("deploys", purge=purge)
    assert state(project, home) == before  # the note, no tombstone, nothing purged
    assert snapshot(home / "backups") == backups  # the forget's backup is undone too
    notes_left_clean(project)
    assert m.notes.history("deploys")[-1].current
    assert m.audit.verify().ok


@needs_root
def test_a_batch_that_meets_a_full_disk_part_way_is_undone_whole(
    project: Path, home: Path, mount_tmpfs: Mount
) -> None:
    mount_tmpfs(home / "memory-history", "1m")
    m = Memory.open(project, home=home)
    m.remember("Deploys go through staging", body="first", id="deploys")
    store = m.stores.store(Scope.PROJECT)
    incoming = []
    for i in range(40):
        m.remember(f"Batch note {i}", body=f"{i} " * 600, id=f"batch-{i}")
        raw = (project / "MEMORY" / f"batch-{i}.md").read_bytes()
        incoming.append((store.get(f"batch-{i}"), raw))
    for i in range(40):
        m.forget(f"batch-{i}", purge=True)
    before = state(project, home)
    fill(home / "memory-history", leave=64 * 1024)  # room for a few of the forty, not all
    items = [(note, raw, "") for note, raw in incoming if note is not None]
    with pytest.raises(DiskError, match="nothing was changed"):
        store.save_many(items, event=WriteEvent.SYNC, backup_reason="sync")
    assert state(project, home) == before
    assert sorted(n.id for n in m.notes.list()) == ["deploys"]


def test_an_undone_record_takes_its_line_off_the_log(tmp_path: Path) -> None:
    history = History(tmp_path / "h")
    history.record("n", b"one", WriteEvent.WRITE, "h1")
    log = tmp_path / "h" / "log" / "n.jsonl"
    before = log.read_bytes()
    rollback = Rollback()
    history.record("n", b"two", WriteEvent.WRITE, "h2", rollback=rollback)
    assert log.read_bytes() != before and history.has(revision_of(b"two"))
    assert rollback.undo() == []
    assert log.read_bytes() == before
    assert not history.has(revision_of(b"two"))
    assert [r.rev for r in history.revisions("n")] == [revision_of(b"one")]


def test_an_undone_record_keeps_a_line_logged_after_it(tmp_path: Path) -> None:
    history = History(tmp_path / "h")
    history.record("n", b"one", WriteEvent.WRITE, "h1")
    rollback = Rollback()
    history.record("n", b"two", WriteEvent.WRITE, "h2", rollback=rollback)
    history.record("n", b"three", WriteEvent.OBSERVED, "h3")  # a reader, meanwhile
    rollback.undo()
    assert [r.rev for r in history.revisions("n")] == [revision_of(b"one"), revision_of(b"three")]


def test_an_undone_record_of_a_stored_version_keeps_its_object(tmp_path: Path) -> None:
    history = History(tmp_path / "h")
    history.record("n", b"one", WriteEvent.WRITE, "h1")
    history.record("n", b"two", WriteEvent.WRITE, "h2")
    rollback = Rollback()
    history.record("n", b"one", WriteEvent.RESTORE, "h1", rollback=rollback)
    rollback.undo()
    assert history.has(revision_of(b"one"))
    assert [r.event for r in history.revisions("n")] == ["write", "write"]


def test_a_committed_rollback_keeps_every_change(project: Path, home: Path) -> None:
    m = Memory.open(project, home=home)
    m.remember("Deploys go through staging", body="first", id="deploys")
    m.remember("Deploys go through staging", body="second", id="deploys")
    names = {p.name for p in (project / "MEMORY").iterdir()}
    assert names == {".gitignore", ".memdir.lock", "deploys.md"}  # the kept-aside link is gone
    assert [e.event for e in m.notes.history("deploys")] == ["write", "write"]


@needs_root
@pytest.mark.parametrize("purge", [False, True])
def test_a_forget_whose_index_update_meets_a_full_disk_says_it_was_forgotten(
    project: Path, home: Path, mount_tmpfs: Mount, purge: bool
) -> None:
    mount_tmpfs(home / "index", "2m")
    m = Memory.open(project, home=home)
    m.remember("Deploys go through staging", body="first", id="deploys")
    m.remember("Backups run nightly", id="backups")
    assert [h.note_id for h in m.search("staging deploys")][:1] == ["deploys"]
    fill(home / "index")
    with pytest.raises(DiskError, match="deploys was forgotten") as info:
        m.forget("deploys", purge=purge)
    assert "updating the index failed" in str(info.value)
    # The truth: the note is gone, and no search returns it even from the stale index.
    assert not (project / "MEMORY" / "deploys.md").exists()
    assert [e.action for e in m.stores.audit.entries()][-1] == ("purge" if purge else "forget")
    assert "deploys" not in [h.note_id for h in m.search("staging deploys")]
    # With room again, the index catches up and doctor is clean.
    (home / "index" / "filler").unlink()
    m.index.reindex()
    assert m.upkeep.doctor(deep=True).ok


# -- the undo's edges: each fault stands in for a real one at one exact moment -----------------


def _disk_full(*_: object, **__: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_an_interrupt_after_the_audit_entry_is_durable_keeps_the_write(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = Memory.open(project, home=home)
    m.remember("Deploys go through staging", body="first", id="deploys")

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt  # while the head is signed, after the entry is on disk

    monkeypatch.setattr(MachineKey, "sign", interrupted)
    with pytest.raises(KeyboardInterrupt):
        m.remember("Deploys go through staging", body="second", id="deploys")
    monkeypatch.undo()
    # The audit log says it was written, so it was: note, history and audit agree.
    assert m.read("deploys").body == "second"
    assert m.notes.history("deploys")[-1].current
    assert [e.action for e in m.stores.audit.entries()] == ["write", "write"]
    assert m.audit.verify().ok
    notes_left_clean(project)


@pytest.mark.parametrize("code", [errno.ENOSYS, errno.EPERM, errno.EOPNOTSUPP])
def test_without_hard_links_an_update_still_works_and_is_undone_from_memory(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    m = Memory.open(project, home=home)
    m.remember("Deploys go through staging", body="first", id="deploys")
    real_link = os.link

    def no_links(src: object, dst: object, **kwargs: object) -> None:
        if "MEMORY" in str(src):
            raise OSError(code, os.strerror(code))
        real_link(src, dst, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "link", no_links)
    m.remember("Deploys go through staging", body="second", id="deploys")
    assert m.read("deploys").body == "second"
    before = state(project, home)
    monkeypatch.setattr(AuditLog, "append_many", _disk_full)
    with pytest.raises(DiskError, match="nothing was changed"):
        m.remember("Deploys go through staging", body="third", id="deploys")
    assert state(project, home) == before
    notes_left_clean(project)


@pytest.mark.parametrize("new", [False, True])
def test_an_undo_never_overwrites_a_file_someone_saved_meanwhile(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch, new: bool
) -> None:
    m = Memory.open(project, home=home)
    if not new:
        m.remember("Deploys go through staging", body="first", id="deploys")
    path = project / "MEMORY" / "deploys.md"
    edited = b'---\n{"summary": "Edited by hand"}\n---\nmy edit\n'

    def editor_then_full(*_: object, **__: object) -> None:
        tmp = path.with_name("deploys.md.editor")
        tmp.write_bytes(edited)
        tmp.replace(path)  # an editor's save: a new file at the path
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(AuditLog, "append_many", editor_then_full)
    with pytest.raises(DiskError) as info:
        m.remember("Deploys go through staging", body="second", id="deploys")
    assert "could not be undone" in str(info.value)
    assert "nothing was changed" not in str(info.value)
    assert path.read_bytes() == edited
    notes_left_clean(project)


def test_a_removal_with_no_room_for_its_temp_name_unlinks_and_is_undone(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = Memory.open(project, home=home)
    m.remember("Deploys go through staging", body="first", id="deploys")
    data = (project / "MEMORY" / "deploys.md").read_bytes()
    real_rename = Path.rename

    def full_directory(self: Path, target: object) -> Path:
        if self.name == "deploys.md":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_rename(self, target)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "rename", full_directory)
    monkeypatch.setattr(AuditLog, "append_many", _disk_full)
    with pytest.raises(DiskError, match="nothing was changed"):
        m.forget("deploys")
    assert (project / "MEMORY" / "deploys.md").read_bytes() == data
    monkeypatch.undo()
    monkeypatch.setattr(Path, "rename", full_directory)
    m.forget("deploys")  # and with the audit working, the unlink is the removal
    assert not (project / "MEMORY" / "deploys.md").exists()


def test_an_undone_new_note_seen_by_a_reader_ends_its_history_with_a_deletion(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = Memory.open(project, home=home)
    m.remember("Another note", id="other")
    store = m.stores.store(Scope.PROJECT)
    real = AuditLog.append_many

    def seen_then_full(self: AuditLog, *args: object, **kwargs: object) -> object:
        if any(
            fields.get("note_id") == "fresh"
            for _, fields in args[0]  # type: ignore[attr-defined]
        ):
            # A reader in another process records the version it sees on disk...
            reader = History(store.history.root)
            data = (project / "MEMORY" / "fresh.md").read_bytes()
            reader.record("fresh", data, WriteEvent.OBSERVED, "h")
            raise OSError(errno.ENOSPC, "No space left on device")  # ...then the disk is full
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(AuditLog, "append_many", seen_then_full)
    with pytest.raises(DiskError):
        m.remember("A fresh note", id="fresh")
    assert not (project / "MEMORY" / "fresh.md").exists()
    assert store.history.latest("fresh") is None  # not a version that is on disk


def test_purge_removes_a_history_object_that_lost_its_log_line(project: Path, home: Path) -> None:
    m = Memory.open(project, home=home)
    m.remember("Deploys go through staging", body="first", id="deploys")
    store = m.stores.store(Scope.PROJECT)
    orphan = b'---\n{"id":"deploys","summary":"An orphan"}\n---\nsecret plan\n'
    store.history.record("other", orphan, WriteEvent.OBSERVED, "h")  # object, log elsewhere
    (store.history.root / "log" / "other.jsonl").unlink()
    assert store.history.has(revision_of(orphan))
    m.forget("deploys", purge=True)
    assert not store.history.has(revision_of(orphan))


def test_purge_removes_a_temp_copy_its_removal_could_not_unlink(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = Memory.open(project, home=home)
    m.remember("Deploys go through staging", body="the secret plan", id="deploys")
    from memdir.store import notedir

    def unlink_fails(path: Path) -> bool:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(notedir, "remove_durably", unlink_fails)  # the aside's unlink
    m.forget("deploys", purge=True)
    assert not any((project / "MEMORY").glob(".deploys.md.tmp-*"))


def test_a_purge_the_disk_cut_short_can_be_finished_later(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = Memory.open(project, home=home)
    m.remember("Deploys go through staging", body="the secret plan", id="deploys")
    m.remember("Deploys go through staging", body="the secret plan v2", id="deploys")
    m.forget("deploys")  # a plain forget first: a backup and two versions remain
    assert m.upkeep.plan_forget("deploys", purge=True).backups == 1
    with pytest.raises(NotFound):
        m.upkeep.plan_forget("deploys")  # without purge there is nothing to forget
    store = m.stores.store(Scope.PROJECT)
    real = History.purge

    def cut_short(self: History, note_id: str) -> int:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(History, "purge", cut_short)
    with pytest.raises(DiskError, match="scrubbing its history failed"):
        m.forget("deploys", purge=True)
    monkeypatch.setattr(History, "purge", real)
    result = m.forget("deploys", purge=True)  # the retry finishes the job
    assert "history scrubbed" in result.checks
    assert store.history.leftovers("deploys") == []
    assert [b for b in m.stores.backups.list(None) if b.note_id == "deploys"] == []
    assert [e.action for e in m.stores.audit.entries()].count("purge") == 2
    with pytest.raises(NotFound):
        m.forget("deploys", purge=True)  # nothing left at all now
