"""§2 backups: copies of replaced or removed versions with time, reason and origin."""

from __future__ import annotations

import json
import os
import re
import stat
import time
from pathlib import Path

import pytest

from memdir import IntegrityError, InvalidInput, Memory, NotFound
from memdir.core import Note, NoteType, Scope, render_note
from memdir.errors import Remedy, exit_code_for
from memdir.store import Backups, revision_of


def note_bytes(note_id: str, body: str = "body", type: NoteType | None = None) -> bytes:
    return render_note(Note(id=note_id, summary=f"Summary of {note_id}", body=body, type=type))


def test_add_stores_exact_bytes_and_a_sidecar(tmp_path: Path) -> None:
    backups = Backups(tmp_path / "memory-backups")
    data = note_bytes("n-1")
    origin = tmp_path / "project" / "MEMORY"
    record = backups.add("n-1", data, reason="forget", scope="project", origin=origin)
    assert record.path.read_bytes() == data
    assert record.path.parent == tmp_path / "memory-backups"
    assert re.fullmatch(r"\d{8}T\d{12}Z-n-1-[0-9a-f]{4}", record.id)
    assert (record.note_id, record.reason, record.scope, record.origin) == (
        "n-1",
        "forget",
        "project",
        origin,
    )
    assert record.revision == revision_of(data)
    assert record.note_hash == Note(id="n-1", summary="Summary of n-1", body="body").hash
    assert abs(record.created_at - time.time() * 1000) < 60_000
    meta = json.loads((tmp_path / "memory-backups" / f"{record.id}.json").read_text())
    assert meta["reason"] == "forget" and meta["origin"] == str(origin)
    assert "body" not in json.dumps(meta)  # the sidecar holds no content
    assert stat.S_IMODE(record.path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "memory-backups").stat().st_mode) & 0o077 == 0


@pytest.mark.parametrize("bad", ["../x", "a/b", "", "Upper"])
def test_add_refuses_a_malformed_note_id(tmp_path: Path, bad: str) -> None:
    with pytest.raises(InvalidInput):
        Backups(tmp_path / "b").add(bad, b"x", reason="r", scope="project", origin=tmp_path)
    assert not (tmp_path / "b").exists() or list((tmp_path / "b").iterdir()) == []


def test_backup_of_unparseable_bytes_has_no_hash(tmp_path: Path) -> None:
    record = Backups(tmp_path).add(
        "n-1", b"not a note \xff", reason="forget", scope="project", origin=tmp_path
    )
    assert record.note_hash is None
    assert Backups(tmp_path).get(record.id)[1] == b"not a note \xff"


def test_list_is_newest_first_and_limited_to_fifty(tmp_path: Path) -> None:
    backups = Backups(tmp_path)
    ids = [
        backups.add(f"n-{i}", note_bytes(f"n-{i}"), reason="r", scope="project", origin=tmp_path).id
        for i in range(55)
    ]
    listed = backups.list()
    assert len(listed) == 50
    assert [r.id for r in listed] == ids[::-1][:50]
    assert len(backups.list(limit=None)) == 55
    assert [r.id for r in backups.list(limit=3)] == ids[::-1][:3]
    assert Backups(tmp_path / "missing").list() == []


def test_get_returns_record_and_bytes(tmp_path: Path) -> None:
    backups = Backups(tmp_path)
    data = note_bytes("n-1")
    record = backups.add("n-1", data, reason="r", scope="user", origin=tmp_path)
    got, raw = backups.get(record.id)
    assert got == record
    assert raw == data


@pytest.mark.parametrize(
    "bad", ["../x", "..", "a/../b", "a/b", "a\\b", "", ".hidden", "a..b", "x" * 201, "a\x00b"]
)
def test_malformed_backup_ids_are_invalid_input(tmp_path: Path, bad: str) -> None:
    (tmp_path / "backups").mkdir()
    (tmp_path / "x.md").write_bytes(note_bytes("x"))  # what "../x" would reach
    with pytest.raises(InvalidInput, match="not a backup id"):
        Backups(tmp_path / "backups").get(bad)


def test_unknown_backup_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="no backup 20240101T000000000000Z-n-1-abcd") as info:
        Backups(tmp_path).get("20240101T000000000000Z-n-1-abcd")
    assert info.value.hint is Remedy.BACKUPS  # the CLI says "see `memdir backups`"


def test_purge_removes_a_notes_backups_from_its_origin_only(tmp_path: Path) -> None:
    backups = Backups(tmp_path / "b")
    here, there = tmp_path / "here", tmp_path / "there"
    backups.add("n-1", note_bytes("n-1", "1"), reason="r", scope="project", origin=here)
    backups.add("n-1", note_bytes("n-1", "2"), reason="r", scope="project", origin=here)
    backups.add("n-1", note_bytes("n-1", "3"), reason="r", scope="project", origin=there)
    backups.add("n-2", note_bytes("n-2"), reason="r", scope="project", origin=here)
    assert backups.purge("n-1", here) == 2
    assert sorted((r.note_id, r.origin) for r in backups.list()) == [
        ("n-1", there),
        ("n-2", here),
    ]
    assert backups.purge("n-1") == 1
    assert [r.note_id for r in backups.list()] == ["n-2"]
    assert sorted(p.suffix for p in (tmp_path / "b").iterdir()) == [".json", ".md"]
    with pytest.raises(InvalidInput):
        backups.purge("../n-2")


def write_legacy(home: Path, name: str, data: bytes, age_seconds: float = 3600) -> Path:
    root = home / "memory-backups"
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{name}.md"
    path.write_bytes(data)
    when = time.time_ns() - int(age_seconds * 1e9)
    os.utime(path, ns=(when, when))
    return path


def test_legacy_backups_are_listed_with_no_reason(tmp_path: Path) -> None:
    path = write_legacy(tmp_path, "20200101-old-note-1", note_bytes("old-note-1"), 7200)
    backups = Backups(tmp_path / "memory-backups")
    new = backups.add("n-9", note_bytes("n-9"), reason="forget", scope="project", origin=tmp_path)
    listed = backups.list()
    assert [r.id for r in listed] == [new.id, "20200101-old-note-1"]
    legacy = listed[1]
    assert (legacy.reason, legacy.scope, legacy.origin, legacy.note_hash) == (None,) * 4
    assert legacy.note_id == "old-note-1"
    assert legacy.created_at == path.stat().st_mtime_ns // 10**6
    assert legacy.revision == revision_of(path.read_bytes())


def test_backup_with_a_broken_sidecar_is_still_listed(tmp_path: Path) -> None:
    backups = Backups(tmp_path)
    record = backups.add("n-1", note_bytes("n-1"), reason="r", scope="project", origin=tmp_path)
    (tmp_path / f"{record.id}.json").write_text("{broken")
    (listed,) = backups.list()
    assert (listed.id, listed.note_id, listed.reason) == (record.id, "n-1", None)


# --- through Memory ------------------------------------------------------------------------


def test_legacy_backup_of_a_user_note_is_restored_to_the_user_scope(
    memory: Memory, home: Path
) -> None:
    data = note_bytes("prefs-1", "I like short answers", type=NoteType.USER)
    write_legacy(home, "prefs-1.2023-05-01", data)
    (record,) = memory.backups()
    assert record.reason is None
    result = memory.backups.restore(record.id)
    assert result.note.scope is Scope.USER
    assert (home / "memory" / "user" / "prefs-1.md").read_bytes() == data
    assert memory.read("prefs-1").type is NoteType.USER
    assert result.replaced_backup is None


def test_legacy_backup_of_an_untyped_note_is_restored_to_the_project(
    memory: Memory, home: Path, project: Path
) -> None:
    data = note_bytes("decision-1", "We chose Postgres")
    write_legacy(home, "decision-1", data)
    result = memory.backups.restore("decision-1")
    assert result.note.scope is Scope.PROJECT
    assert (project / "MEMORY" / "decision-1.md").read_bytes() == data
    assert [e.event for e in memory.notes.history("decision-1")] == ["restore"]


def test_forget_backs_up_and_restore_puts_it_back(memory: Memory, project: Path) -> None:
    written = memory.remember("Release process", body="tag then push", id="release-1")
    path = project / "MEMORY" / "release-1.md"
    data = path.read_bytes()
    result = memory.forget("release-1")
    assert result.backup is not None and result.backup.reason == "forget"
    assert result.backup.origin == project / "MEMORY"
    assert not path.exists()
    restored = memory.backups.restore(result.backup.id)
    assert path.read_bytes() == data
    assert restored.note.hash == written.note.hash
    # restoring again is a no-op
    again = memory.backups.restore(result.backup.id)
    assert again.replaced_backup is None
    assert path.read_bytes() == data


def test_restore_over_a_newer_version_backs_that_up_first(memory: Memory, project: Path) -> None:
    memory.remember("Release process", body="v1", id="release-1")
    backup = memory.forget("release-1").backup
    assert backup is not None
    memory.remember("Release process", body="v2 written later", id="release-1")
    newer = (project / "MEMORY" / "release-1.md").read_bytes()
    result = memory.backups.restore(backup.id)
    assert memory.read("release-1").body == "v1"
    assert result.replaced_backup is not None
    assert result.replaced_backup.reason == "replaced by restore"
    assert memory.stores.backups.get(result.replaced_backup.id)[1] == newer


def test_restore_of_malformed_or_unknown_ids(memory: Memory) -> None:
    with pytest.raises(InvalidInput):
        memory.backups.restore("../x")
    with pytest.raises(NotFound):
        memory.backups.restore("no-such-backup")


def test_purge_removes_the_backups_of_the_forgotten_note(memory: Memory) -> None:
    memory.remember("Old idea", body="x", id="idea-1")
    memory.forget("idea-1")
    memory.remember("Old idea", body="y", id="idea-1")
    memory.remember("Other note", body="z", id="other-1")
    memory.forget("other-1")
    assert {b.note_id for b in memory.backups()} == {"idea-1", "other-1"}
    result = memory.forget("idea-1", purge=True)
    assert result.purged_backups == 1
    assert {b.note_id for b in memory.backups()} == {"other-1"}


# --- backups are verified against the revision recorded with them ---------------------------


def test_an_edited_backup_is_listed_but_refused_naming_it_not_its_content(
    tmp_path: Path,
) -> None:
    backups = Backups(tmp_path / "memory-backups")
    data = note_bytes("n-1", body="original words")
    good = backups.add("n-2", note_bytes("n-2"), reason="forget", scope="project", origin=tmp_path)
    bad = backups.add("n-1", data, reason="forget", scope="project", origin=tmp_path)
    bad.path.write_bytes(data.replace(b"original words", b"SNEAKY EDIT"))
    [listed] = [r for r in backups.list() if r.id == bad.id]
    assert listed.revision == revision_of(data)  # the recorded revision, not the edited bytes'
    with pytest.raises(IntegrityError) as refused:
        backups.get(bad.id)
    assert bad.id in str(refused.value) and "SNEAKY" not in str(refused.value)
    assert exit_code_for(refused.value) == 7
    assert backups.get(good.id)[1] == note_bytes("n-2")
    [problem] = backups.verify()
    assert bad.id in problem and "SNEAKY" not in problem


def test_a_legacy_backup_has_nothing_to_verify_against_and_stays_restorable(
    tmp_path: Path,
) -> None:
    backups = Backups(tmp_path / "memory-backups")
    record = backups.add(
        "n-1", note_bytes("n-1"), reason="forget", scope="project", origin=tmp_path
    )
    (tmp_path / "memory-backups" / f"{record.id}.json").unlink()
    record.path.write_bytes(note_bytes("n-1", body="edited by hand, long ago"))
    assert backups.get(record.id)[1] == note_bytes("n-1", body="edited by hand, long ago")
    assert backups.verify() == []


def test_restore_of_an_edited_backup_is_refused_and_writes_nothing(
    memory: Memory, project: Path
) -> None:
    memory.remember("Keep me", "Original body.", id="keep-me")
    memory.remember("Other", "Other body.", id="other")
    tampered = memory.forget("keep-me").backup
    intact = memory.forget("other").backup
    assert tampered is not None and intact is not None
    tampered.path.write_bytes(tampered.path.read_bytes().replace(b"Original", b"Injected"))
    with pytest.raises(IntegrityError, match=tampered.id):
        memory.backups.restore(tampered.id)
    assert not (project / "MEMORY" / "keep-me.md").exists()
    assert memory.backups.restore(intact.id).note.body == "Other body."
