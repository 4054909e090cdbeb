"""Sync never follows a note-file symbolic link, and never reads one as a deletion."""

from __future__ import annotations

from pathlib import Path

from .conftest import Pair


def test_a_note_replaced_by_a_symlink_is_not_deleted_elsewhere(pair: Pair, tmp_path: Path) -> None:
    a, b = pair.a, pair.b
    note = a.remember("Symlinked later note", body="kept everywhere", scope="user").note
    a.sync.run()
    b.sync.run()
    assert b.read(note.id).body == "kept everywhere"
    path = a.stores.directory("user") / f"{note.id}.md"
    outside = tmp_path / "outside.md"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(outside)
    run = a.sync.run()
    (report,) = run.reports
    assert report.deleted_there == []
    b.sync.run()
    assert b.read(note.id).body == "kept everywhere"
    # Back as a regular file, it syncs like any note again.
    path.unlink()
    path.write_bytes(outside.read_bytes().replace(b"kept everywhere", b"edited after"))
    a.sync.run()
    b.sync.run()
    assert b.read(note.id).body == "edited after"
