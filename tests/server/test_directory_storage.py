"""The directory backend of the sync server: layout, CAS, erase, refusal of path traversal."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memdir.errors import InvalidInput
from memdir.server.storage.directory import DirectoryStorage, team_owner
from memdir.sync.protocol import Entry, Manifest, rev_of

PROJECT = "project/0123abcd-project"


def obj(note_id: str, text: str) -> tuple[str, str, bytes]:
    data = text.encode("utf-8")
    return (note_id, rev_of(data), data)


def entry(data: bytes) -> Entry:
    return Entry(rev=rev_of(data), hash=rev_of(b"h" + data), size=len(data), updated_at=1)


def test_layout_of_user_and_project_scopes(tmp_path: Path) -> None:
    storage = DirectoryStorage(tmp_path)
    note = obj("a-note", "text a")
    storage.put_objects("alice", "user", [note])
    storage.put_objects("alice", PROJECT, [obj("b-note", "text b")])
    manifest = Manifest(version=1, notes={"a-note": entry(note[2])})
    assert storage.swap_manifest("alice", "user", 0, manifest)
    assert storage.swap_manifest("alice", PROJECT, 0, Manifest(version=1))

    user_dir = tmp_path / "users" / "alice" / "memory"
    project_dir = tmp_path / "users" / "alice" / "projects" / "0123abcd-project" / "memory"
    assert (user_dir / "objects" / "a-note" / f"{note[1]}.md").read_bytes() == b"text a"
    assert Manifest.model_validate_json((user_dir / "manifest.json").read_bytes()) == manifest
    assert (project_dir / "manifest.json").is_file()
    assert (project_dir / "objects" / "b-note" / f"{rev_of(b'text b')}.md").is_file()
    assert storage.manifest("alice", "user") == manifest
    assert storage.manifest("alice", PROJECT).version == 1
    # Another user's scope is separate.
    assert storage.manifest("bob", "user") == Manifest()


def test_layout_of_a_team(tmp_path: Path) -> None:
    storage = DirectoryStorage(tmp_path)
    owner = team_owner("acme")
    note = obj("a-note", "team text")
    storage.put_objects(owner, "user", [note])
    storage.put_objects(owner, PROJECT, [obj("b-note", "team b")])
    assert storage.swap_manifest(owner, "user", 0, Manifest(version=1))
    assert storage.swap_manifest(owner, PROJECT, 0, Manifest(version=1))
    assert storage.swap_team("acme", 0, b'{"members": {}}')

    team_dir = tmp_path / "teams" / "acme"
    memory = team_dir / "memory"
    assert (memory / "objects" / "a-note" / f"{note[1]}.md").read_bytes() == b"team text"
    assert (memory / "manifest.json").is_file()
    assert (team_dir / "projects" / "0123abcd-project" / "memory" / "manifest.json").is_file()
    assert (team_dir / ".lock").is_file()
    policy = team_dir / "policy.json"
    assert json.loads(policy.read_bytes()) == {"version": 1, "policy": '{"members": {}}'}
    assert stat.S_IMODE(policy.stat().st_mode) == 0o600
    assert not (tmp_path / "users").exists()  # nothing of a team lives among the users


def test_the_keyring_file_keeps_its_format(tmp_path: Path) -> None:
    storage = DirectoryStorage(tmp_path)
    path = tmp_path / "users" / "alice" / "keyring.json"
    path.parent.mkdir(parents=True)
    # As written before keyrings and team policies shared one envelope helper.
    path.write_text(json.dumps({"version": 3, "keyId": "ab" * 8, "keyring": '{"k": "é"}'}))
    assert storage.keyring("alice") == (3, "ab" * 8, '{"k": "é"}'.encode())

    assert storage.swap_keyring("alice", 3, "cd" * 8, '{"k": "ü"}'.encode())
    assert json.loads(path.read_bytes()) == {
        "version": 4,
        "keyId": "cd" * 8,
        "keyring": '{"k": "ü"}',
    }


@pytest.mark.parametrize("team", ["../x", "A", "+x", "", "x" * 65, "a/b", "..", "a\x00"])
def test_bad_team_names_create_nothing(tmp_path: Path, team: str) -> None:
    storage = DirectoryStorage(tmp_path / "root")
    with pytest.raises(InvalidInput):
        storage.swap_team(team, 0, b"{}")
    with pytest.raises(InvalidInput):
        storage.swap_manifest("+" + team, "user", 0, Manifest(version=1))
    assert not any(tmp_path.rglob("policy.json")) and not any(tmp_path.rglob("manifest.json"))


def test_team_writers_share_the_teams_lock_file(tmp_path: Path) -> None:
    storage = DirectoryStorage(tmp_path)
    owner = team_owner("acme")
    assert storage.swap_team("acme", 0, b"{}")  # creates teams/acme/.lock
    results: list[bool] = []
    writers = [
        threading.Thread(
            target=lambda: results.append(
                storage.swap_manifest(owner, "user", 0, Manifest(version=1))
            )
        ),
        threading.Thread(target=lambda: results.append(storage.swap_team("acme", 1, b"{}"))),
    ]
    fd = os.open(tmp_path / "teams" / "acme" / ".lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as `erase` would hold a user's
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(timeout=0.5)
        assert results == [] and all(writer.is_alive() for writer in writers)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    for writer in writers:
        writer.join(timeout=30)
    assert results == [True, True]
    assert storage.team("acme") == (2, b"{}")


def test_files_are_private(tmp_path: Path) -> None:
    storage = DirectoryStorage(tmp_path / "data")
    storage.put_objects("alice", "user", [obj("a-note", "x")])
    storage.swap_manifest("alice", "user", 0, Manifest(version=1))
    memory = tmp_path / "data" / "users" / "alice" / "memory"
    assert stat.S_IMODE((memory / "manifest.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((memory / "objects" / "a-note").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700


def test_objects_are_immutable_and_put_twice_is_a_no_op(tmp_path: Path) -> None:
    storage = DirectoryStorage(tmp_path)
    note = obj("a-note", "same bytes")
    storage.put_objects("alice", "user", [note])
    path = tmp_path / "users/alice/memory/objects/a-note" / f"{note[1]}.md"
    before = path.stat().st_ino
    storage.put_objects("alice", "user", [note])
    assert path.stat().st_ino == before
    assert storage.objects("alice", "user", {note[1]: "a-note"}) == {note[1]: b"same bytes"}


def test_an_object_whose_rev_does_not_match_its_bytes_is_refused(tmp_path: Path) -> None:
    storage = DirectoryStorage(tmp_path)
    with pytest.raises(InvalidInput):
        storage.put_objects("alice", "user", [("a-note", rev_of(b"other"), b"bytes")])
    assert not list(tmp_path.rglob("*.md"))


def test_missing_objects_are_left_out(tmp_path: Path) -> None:
    storage = DirectoryStorage(tmp_path)
    note = obj("a-note", "present")
    storage.put_objects("alice", "user", [note])
    found = storage.objects("alice", "user", {note[1]: "a-note", rev_of(b"absent"): "b-note"})
    assert found == {note[1]: b"present"}


def test_swap_is_compare_and_swap_on_the_version(tmp_path: Path) -> None:
    storage = DirectoryStorage(tmp_path)
    assert storage.swap_manifest("alice", "user", 0, Manifest(version=1))
    assert not storage.swap_manifest("alice", "user", 0, Manifest(version=1, notes={}))
    data = b"x"
    assert not storage.swap_manifest(
        "alice", "user", 2, Manifest(version=3, notes={"a": entry(data)})
    )
    assert storage.manifest("alice", "user") == Manifest(version=1)
    assert storage.swap_manifest("alice", "user", 1, Manifest(version=2, notes={"a": entry(data)}))
    assert storage.manifest("alice", "user").version == 2


@pytest.mark.parametrize(
    "user", ["", "../evil", "Alice", "a/b", "a\x00", ".", "-lead", "x" * 65, "ali ce"]
)
def test_bad_user_names_are_refused(tmp_path: Path, user: str) -> None:
    storage = DirectoryStorage(tmp_path / "root")
    for call in (
        lambda: storage.manifest(user, "user"),
        lambda: storage.put_objects(user, "user", [obj("a-note", "x")]),
        lambda: storage.swap_manifest(user, "user", 0, Manifest(version=1)),
        lambda: storage.mark_erased(user),
        lambda: storage.is_erased(user),
        lambda: storage.erase(user),
    ):
        with pytest.raises(InvalidInput):
            call()
    assert not any(tmp_path.rglob("*.md")) and not any(tmp_path.rglob("ERASED"))


@pytest.mark.parametrize(
    "scope",
    [
        "",
        "users",
        "project/",
        "project/../../x",
        "project/short",
        "project/abcdefgh/../x",
        "projects/abcdefgh12",
        "project/.abcdefgh",
        "user/..",
    ],
)
def test_bad_scope_keys_are_refused(tmp_path: Path, scope: str) -> None:
    storage = DirectoryStorage(tmp_path / "root")
    with pytest.raises(InvalidInput):
        storage.manifest("alice", scope)
    with pytest.raises(InvalidInput):
        storage.swap_manifest("alice", scope, 0, Manifest(version=1))
    with pytest.raises(InvalidInput):
        storage.put_objects("alice", scope, [obj("a-note", "x")])
    assert not list(tmp_path.rglob("manifest.json"))


@pytest.mark.parametrize("note_id", ["../../x", "a/b", "..", "Upper", "con", ""])
def test_bad_note_ids_and_revs_are_refused(tmp_path: Path, note_id: str) -> None:
    storage = DirectoryStorage(tmp_path / "root")
    with pytest.raises(InvalidInput):
        storage.put_objects("alice", "user", [obj(note_id, "text")])
    with pytest.raises(InvalidInput):
        storage.objects("alice", "user", {rev_of(b"text"): note_id})
    with pytest.raises(InvalidInput):
        storage.objects("alice", "user", {"../../../etc/passwd": "a-note"})
    assert not list(tmp_path.rglob("*.md"))


def test_erase_marks_then_deletes_and_writes_stop(tmp_path: Path) -> None:
    storage = DirectoryStorage(tmp_path)
    storage.put_objects("alice", "user", [obj("a-note", "x")])
    storage.swap_manifest("alice", "user", 0, Manifest(version=1))
    storage.put_objects("alice", PROJECT, [obj("b-note", "y")])
    storage.put_objects("bob", "user", [obj("c-note", "z")])
    assert not storage.is_erased("alice")

    storage.mark_erased("alice")
    storage.mark_erased("alice")  # idempotent
    assert storage.is_erased("alice")
    # Once marked, writes do nothing: a swap reports that it lost, objects are not stored.
    assert not storage.swap_manifest("alice", "user", 1, Manifest(version=2))
    storage.put_objects("alice", "user", [obj("d-note", "late")])
    assert not (tmp_path / "users/alice/memory/objects/d-note").exists()

    storage.erase("alice")
    user_dir = tmp_path / "users" / "alice"
    assert sorted(p.name for p in user_dir.iterdir()) == [".lock", "ERASED"]
    assert storage.is_erased("alice")
    assert storage.manifest("alice", "user") == Manifest()
    # Others are untouched.
    assert not storage.is_erased("bob")
    assert any((tmp_path / "users" / "bob").rglob("*.md"))


def test_erase_of_a_user_with_no_data(tmp_path: Path) -> None:
    storage = DirectoryStorage(tmp_path)
    storage.erase("nobody")
    storage.mark_erased("nobody")
    storage.erase("nobody")
    assert storage.is_erased("nobody")


def _bump(storage: DirectoryStorage, tag: str, count: int, wins: list[str]) -> None:
    """Add `count` notes, one swap each, retrying lost races."""
    for n in range(count):
        note_id = f"{tag}-{n}"
        while True:
            current = storage.manifest("alice", "user")
            notes = dict(current.notes)
            notes[note_id] = entry(note_id.encode())
            if storage.swap_manifest(
                "alice", "user", current.version, Manifest(version=current.version + 1, notes=notes)
            ):
                wins.append(note_id)
                break


def test_threads_racing_swaps_lose_no_update(tmp_path: Path) -> None:
    threads, each = 8, 20
    wins: list[str] = []
    workers = [
        threading.Thread(
            target=_bump, args=(DirectoryStorage(tmp_path), f"t{i}", each, wins), daemon=True
        )
        for i in range(threads)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert not any(w.is_alive() for w in workers)
    final = DirectoryStorage(tmp_path).manifest("alice", "user")
    assert len(wins) == threads * each == 160
    assert final.version == 160
    assert set(final.notes) == set(wins)


_RACER = """
import sys
from pathlib import Path
from memdir.server.storage.directory import DirectoryStorage
from memdir.sync.protocol import Entry, Manifest, rev_of

storage = DirectoryStorage(Path(sys.argv[1]))
tag, count = sys.argv[2], int(sys.argv[3])
for n in range(count):
    note_id = f"{tag}-{n}"
    data = note_id.encode()
    while True:
        current = storage.manifest("alice", "user")
        notes = dict(current.notes)
        notes[note_id] = Entry(rev=rev_of(data), hash=rev_of(data), size=len(data), updated_at=1)
        if storage.swap_manifest(
            "alice", "user", current.version, Manifest(version=current.version + 1, notes=notes)
        ):
            break
"""


def test_processes_and_threads_racing_swaps_lose_no_update(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _RACER, str(tmp_path), f"p{i}", "25"], env=env)
        for i in range(3)
    ]
    wins: list[str] = []
    worker = threading.Thread(target=_bump, args=(DirectoryStorage(tmp_path), "t", 25, wins))
    worker.start()
    codes = [p.wait(timeout=180) for p in procs]
    worker.join(timeout=180)
    assert codes == [0, 0, 0]
    final = DirectoryStorage(tmp_path).manifest("alice", "user")
    assert final.version == 100
    expected = {f"p{i}-{n}" for i in range(3) for n in range(25)} | {f"t-{n}" for n in range(25)}
    assert set(final.notes) == expected
