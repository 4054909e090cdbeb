"""The `Storage` contract, run against every backend: directory, PostgreSQL and S3 alike."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memdir.errors import InvalidInput
from memdir.server.storage import Storage, team_owner
from memdir.sync.protocol import Entry, Manifest, Tombstone, rev_of

OpenStorage = Callable[[], Storage]

PROJECT_A = "project/proj-aaaa-0001"
PROJECT_B = "project/proj-bbbb-0002"


@pytest.fixture(params=["directory", "postgres", "s3"])
def open_storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStorage]:
    """Opens a new instance on one shared backing store, as another server process would."""
    opened: list[Storage] = []

    def open_one() -> Storage:
        storage: Storage
        if request.param == "directory":
            from memdir.server.storage.directory import DirectoryStorage

            storage = DirectoryStorage(tmp_path / "server")
        elif request.param == "s3":
            from memdir.server.storage.s3 import S3Storage

            storage = S3Storage(bucket[0], bucket[1], prefix=bucket[2])
        else:
            from memdir.server.storage.postgres import PostgresStorage

            storage = PostgresStorage(dsn)
        opened.append(storage)
        return storage

    dsn = request.getfixturevalue("pg_database_dsn") if request.param == "postgres" else ""
    bucket = request.getfixturevalue("s3_bucket") if request.param == "s3" else ("", "", "")
    try:
        yield open_one
    finally:
        for storage in opened:
            storage.close()


@pytest.fixture
def storage(open_storage: OpenStorage) -> Storage:
    """One open instance."""
    return open_storage()


def obj(note_id: str, text: str) -> tuple[str, str, bytes]:
    """A stored object (note id, rev, bytes) for `text`."""
    data = text.encode("utf-8")
    return (note_id, rev_of(data), data)


def entry(data: bytes, updated_at: int = 1_700_000_000_000) -> Entry:
    """A manifest entry for `data`."""
    return Entry(rev=rev_of(data), hash=rev_of(b"h" + data), size=len(data), updated_at=updated_at)


def manifest_with(version: int, **texts: str) -> Manifest:
    """A manifest at `version` naming one entry per keyword (note id -> text)."""
    return Manifest(
        version=version,
        notes={note_id: entry(text.encode()) for note_id, text in texts.items()},
    )


def test_a_scope_without_manifest_is_empty_at_version_0(storage: Storage) -> None:
    manifest = storage.manifest("alice", "user")
    assert manifest == Manifest(version=0)
    assert manifest.notes == {} and manifest.tombstones == {}
    assert storage.objects("alice", "user", {rev_of(b"x"): "x"}) == {}
    assert storage.objects("alice", "user", {}) == {}
    assert storage.is_erased("alice") is False


def test_objects_round_trip_byte_for_byte(storage: Storage) -> None:
    texts = {
        "plain": "---\nid: plain\n---\nhello\n",
        "accents": "---\nid: accents\n---\nnaïve café — 東京 🚀\n",
        "crlf": "line one\r\nline two  \r\n\ttabbed\n\n",
    }
    objects = [obj(note_id, text) for note_id, text in texts.items()]
    storage.put_objects("alice", "user", iter(objects))  # any iterable, even a one-shot one
    missing = rev_of(b"never stored")
    wanted = {rev: note_id for note_id, rev, _ in objects} | {missing: "plain"}

    got = storage.objects("alice", "user", wanted)

    assert got == {rev: data for _, rev, data in objects}
    assert missing not in got
    assert got[rev_of(texts["accents"].encode())].decode("utf-8") == texts["accents"]


def test_putting_an_object_again_is_a_no_op(storage: Storage) -> None:
    first = obj("note-1", "version one\n")
    second = obj("note-1", "version two\n")
    storage.put_objects("alice", "user", [first])
    storage.put_objects("alice", "user", [first, second])
    storage.put_objects("alice", "user", [first])
    storage.put_objects("alice", "user", [])

    got = storage.objects("alice", "user", {first[1]: "note-1", second[1]: "note-1"})

    assert got == {first[1]: first[2], second[1]: second[2]}


def test_an_object_whose_rev_does_not_match_its_bytes_is_refused(storage: Storage) -> None:
    good = obj("note-1", "right\n")
    bad = ("note-2", rev_of(b"something else"), b"wrong\n")
    with pytest.raises(InvalidInput):
        storage.put_objects("alice", "user", [good, bad])
    assert storage.objects("alice", "user", {bad[1]: "note-2"}) == {}


def test_compare_and_swap_creates_then_advances(storage: Storage) -> None:
    v1 = manifest_with(1, alpha="a1")
    assert storage.swap_manifest("alice", "user", 0, v1) is True
    assert storage.manifest("alice", "user") == v1

    assert storage.swap_manifest("alice", "user", 0, manifest_with(1, other="x")) is False
    assert storage.swap_manifest("alice", "user", 2, manifest_with(3, other="x")) is False
    assert storage.manifest("alice", "user") == v1

    v2 = manifest_with(2, alpha="a2", beta="b1")
    assert storage.swap_manifest("alice", "user", 1, v2) is True
    assert storage.swap_manifest("alice", "user", 1, manifest_with(2, other="x")) is False
    assert storage.manifest("alice", "user") == v2


def test_a_swap_expecting_a_manifest_that_does_not_exist_fails(storage: Storage) -> None:
    assert storage.swap_manifest("alice", "user", 3, manifest_with(4, alpha="a")) is False
    assert storage.manifest("alice", "user").version == 0


def test_manifests_round_trip_with_tombstones_and_every_field(storage: Storage) -> None:
    manifest = Manifest(
        version=1,
        notes={
            "café-note": entry("naïve\n".encode(), updated_at=1),
            "big": entry(b"x" * 5000, updated_at=2**50),
        },
        tombstones={"gone": Tombstone(rev=rev_of(b"gone"), deleted_at=1_700_000_000_123)},
    )
    assert storage.swap_manifest("alice", PROJECT_A, 0, manifest)
    assert storage.manifest("alice", PROJECT_A) == manifest


def test_users_and_scopes_are_isolated(storage: Storage) -> None:
    places = [("alice", "user"), ("alice", PROJECT_A), ("alice", PROJECT_B), ("bob", "user")]
    stored = {}
    for number, (user, scope) in enumerate(places, start=1):
        item = obj("shared-id", f"{user} {scope}\n")
        stored[(user, scope)] = item
        storage.put_objects(user, scope, [item])
        assert storage.swap_manifest(user, scope, 0, manifest_with(number, **{"n": item[0]}))

    for number, (user, scope) in enumerate(places, start=1):
        assert storage.manifest(user, scope).version == number
        every = {item[1]: item[0] for item in stored.values()}
        own = stored[(user, scope)]
        assert storage.objects(user, scope, every) == {own[1]: own[2]}

    assert storage.manifest("carol", "user").version == 0
    assert storage.manifest("bob", PROJECT_A).version == 0


def test_erase_marks_first_then_removes_the_users_data_only(storage: Storage) -> None:
    alice_user, alice_project, bob_user = (
        obj("a", "alice user\n"),
        obj("b", "alice project\n"),
        obj("a", "bob user\n"),
    )
    storage.put_objects("alice", "user", [alice_user])
    storage.put_objects("alice", PROJECT_A, [alice_project])
    storage.put_objects("bob", "user", [bob_user])
    assert storage.swap_manifest("alice", "user", 0, manifest_with(1, a="alice user\n"))
    assert storage.swap_manifest("alice", PROJECT_A, 0, manifest_with(1, b="alice project\n"))
    assert storage.swap_manifest("bob", "user", 0, manifest_with(1, a="bob user\n"))

    storage.mark_erased("alice")
    assert storage.is_erased("alice") is True
    assert storage.manifest("alice", "user").version == 1  # the marker alone deletes nothing

    storage.erase("alice")
    storage.mark_erased("alice")  # idempotent

    assert storage.is_erased("alice") is True
    assert storage.manifest("alice", "user") == Manifest(version=0)
    assert storage.manifest("alice", PROJECT_A) == Manifest(version=0)
    assert storage.objects("alice", "user", {alice_user[1]: "a"}) == {}
    assert storage.objects("alice", PROJECT_A, {alice_project[1]: "b"}) == {}
    assert storage.is_erased("bob") is False
    assert storage.manifest("bob", "user").version == 1
    assert storage.objects("bob", "user", {bob_user[1]: "a"}) == {bob_user[1]: bob_user[2]}


def test_erasing_an_unknown_user_is_harmless(storage: Storage) -> None:
    storage.erase("nobody")
    assert storage.is_erased("nobody") is False


def test_nothing_is_written_for_a_user_once_marked_erased(storage: Storage) -> None:
    storage.mark_erased("alice")
    late = obj("late", "arrived after the marker\n")

    storage.put_objects("alice", "user", [late])

    assert storage.swap_manifest("alice", "user", 0, manifest_with(1, late="x")) is False
    assert storage.objects("alice", "user", {late[1]: "late"}) == {}
    assert storage.manifest("alice", "user").version == 0


def test_concurrent_compare_and_swap_loses_and_duplicates_nothing(
    open_storage: OpenStorage,
) -> None:
    threads_n, per_thread = 6, 20
    # Two instances, as two server processes sharing one backend.
    instances = [open_storage(), open_storage()]
    barrier = threading.Barrier(threads_n)
    won_versions: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(worker: int) -> None:
        storage = instances[worker % len(instances)]
        try:
            barrier.wait()
            for k in range(per_thread):
                note_id = f"w{worker}-n{k}"
                while True:
                    current = storage.manifest("alice", "user")
                    notes = dict(current.notes)
                    notes[note_id] = entry(note_id.encode())
                    new = Manifest(version=current.version + 1, notes=notes)
                    if storage.swap_manifest("alice", "user", current.version, new):
                        with lock:
                            won_versions.append(new.version)
                        break
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert not errors, errors
    total = threads_n * per_thread
    final = instances[0].manifest("alice", "user")
    assert sorted(won_versions) == list(range(1, total + 1))  # no version won twice
    assert final.version == total
    assert set(final.notes) == {f"w{w}-n{k}" for w in range(threads_n) for k in range(per_thread)}
    assert instances[1].manifest("alice", "user") == final


def test_a_second_instance_sees_the_first_ones_writes(open_storage: OpenStorage) -> None:
    first, second = open_storage(), open_storage()
    item = obj("note-1", "written by the first\n")
    first.put_objects("alice", "user", [item])
    assert first.swap_manifest("alice", "user", 0, manifest_with(1, **{"note-1": item[0]}))

    assert second.manifest("alice", "user") == first.manifest("alice", "user")
    assert second.objects("alice", "user", {item[1]: "note-1"}) == {item[1]: item[2]}
    assert second.swap_manifest("alice", "user", 0, manifest_with(1, other="x")) is False
    assert second.swap_manifest("alice", "user", 1, manifest_with(2, other="x")) is True
    assert first.manifest("alice", "user").version == 2

    second.mark_erased("bob")
    assert first.is_erased("bob") is True


# -- teams -----------------------------------------------------------------------------


def test_a_team_that_does_not_exist_is_none(storage: Storage) -> None:
    assert storage.team("acme") is None
    assert storage.is_erased(team_owner("acme")) is False
    assert storage.manifest(team_owner("acme"), "user") == Manifest(version=0)


def test_a_team_policy_is_created_at_0_then_advanced_by_compare_and_swap(
    storage: Storage,
) -> None:
    assert storage.swap_team("acme", 0, b'{"members": {"alice": "owner"}}') is True
    assert storage.team("acme") == (1, b'{"members": {"alice": "owner"}}')
    assert storage.swap_team("acme", 0, b'{"members": {"mallory": "owner"}}') is False
    assert storage.team("acme") == (1, b'{"members": {"alice": "owner"}}')

    assert storage.swap_team("acme", 1, b'{"v": 2}') is True
    assert storage.team("acme") == (2, b'{"v": 2}')
    assert storage.swap_team("acme", 1, b'{"stale": true}') is False
    assert storage.swap_team("acme", 3, b'{"ahead": true}') is False
    assert storage.team("acme") == (2, b'{"v": 2}')
    assert storage.team("other") is None


def test_a_swap_expecting_a_team_that_does_not_exist_fails(storage: Storage) -> None:
    assert storage.swap_team("acme", 1, b"{}") is False
    assert storage.team("acme") is None


def test_a_team_policy_round_trips_any_bytes_up_to_a_megabyte(storage: Storage) -> None:
    big = ('{"note": "naïve café — 東京 🚀", "pad": "' + "x" * 1_000_000 + '"}').encode()
    assert storage.swap_team("acme", 0, big)
    assert storage.team("acme") == (1, big)
    odd = bytes(range(256)) + b"\xed\xa0\x80\xff\x00"  # not UTF-8: still opaque bytes
    assert storage.swap_team("acme", 1, odd)
    assert storage.team("acme") == (2, odd)


@pytest.mark.parametrize("team", ["../x", "A", "+x", "", "x" * 65, "a/b", "-lead", "a b"])
def test_bad_team_names_are_refused(storage: Storage, team: str) -> None:
    for call in (
        lambda: storage.team(team),
        lambda: storage.swap_team(team, 0, b"{}"),
        lambda: team_owner(team),
    ):
        with pytest.raises(InvalidInput):
            call()


@pytest.mark.parametrize("owner", ["+", "++x", "+A", "+../x", "+" + "x" * 65, "+a/b"])
def test_bad_team_owners_are_refused_for_notes(storage: Storage, owner: str) -> None:
    for call in (
        lambda: storage.manifest(owner, "user"),
        lambda: storage.objects(owner, "user", {rev_of(b"x"): "x"}),
        lambda: storage.put_objects(owner, "user", [obj("a-note", "x")]),
        lambda: storage.swap_manifest(owner, "user", 0, Manifest(version=1)),
        lambda: storage.is_erased(owner),
    ):
        with pytest.raises(InvalidInput):
            call()


def test_team_owners_are_isolated_from_users_and_other_teams(storage: Storage) -> None:
    owners = ["acme", team_owner("acme"), team_owner("beta"), "beta"]
    places = [(owner, scope) for owner in owners for scope in ("user", PROJECT_A)]
    stored = {}
    for number, (owner, scope) in enumerate(places, start=1):
        item = obj("shared-id", f"{owner} {scope}\n")
        stored[(owner, scope)] = item
        storage.put_objects(owner, scope, [item])
        assert storage.swap_manifest(owner, scope, 0, manifest_with(number, **{"n": item[0]}))

    every = {item[1]: item[0] for item in stored.values()}
    for number, (owner, scope) in enumerate(places, start=1):
        assert storage.manifest(owner, scope).version == number
        own = stored[(owner, scope)]
        assert storage.objects(owner, scope, every) == {own[1]: own[2]}
    assert storage.manifest(team_owner("gamma"), "user").version == 0
    assert storage.team("acme") is None  # notes alone make no team


def test_erasing_a_user_leaves_the_team_of_the_same_name_alone(storage: Storage) -> None:
    team_note, user_note = obj("t", "team acme\n"), obj("u", "user acme\n")
    owner = team_owner("acme")
    storage.put_objects(owner, "user", [team_note])
    assert storage.swap_manifest(owner, "user", 0, manifest_with(1, t="team acme\n"))
    assert storage.swap_team("acme", 0, b'{"team": "acme"}')
    storage.put_objects("acme", "user", [user_note])
    assert storage.swap_manifest("acme", "user", 0, manifest_with(1, u="user acme\n"))

    storage.mark_erased("acme")
    storage.erase("acme")

    assert storage.is_erased("acme") is True
    assert storage.is_erased(owner) is False
    assert storage.manifest("acme", "user").version == 0
    assert storage.manifest(owner, "user") == manifest_with(1, t="team acme\n")
    assert storage.objects(owner, "user", {team_note[1]: "t"}) == {team_note[1]: team_note[2]}
    assert storage.team("acme") == (1, b'{"team": "acme"}')
    # The team's notes and policy still take writes.
    assert storage.swap_manifest(owner, "user", 1, manifest_with(2, t="again\n"))
    assert storage.swap_team("acme", 1, b"{}")


def test_erase_markers_are_for_users_only(storage: Storage) -> None:
    for call in (
        lambda: storage.mark_erased(team_owner("acme")),
        lambda: storage.erase(team_owner("acme")),
    ):
        with pytest.raises(InvalidInput):
            call()
    assert storage.is_erased(team_owner("acme")) is False


def test_a_second_instance_sees_the_first_ones_team(open_storage: OpenStorage) -> None:
    first, second = open_storage(), open_storage()
    assert first.swap_team("acme", 0, b'{"by": "first"}')
    owner = team_owner("acme")
    item = obj("note-1", "team note\n")
    first.put_objects(owner, PROJECT_A, [item])
    assert first.swap_manifest(owner, PROJECT_A, 0, manifest_with(1, **{"note-1": item[0]}))

    assert second.team("acme") == (1, b'{"by": "first"}')
    assert second.manifest(owner, PROJECT_A) == first.manifest(owner, PROJECT_A)
    assert second.objects(owner, PROJECT_A, {item[1]: "note-1"}) == {item[1]: item[2]}
    assert second.swap_team("acme", 0, b'{"by": "second"}') is False
    assert second.swap_team("acme", 1, b'{"by": "second"}') is True
    assert first.team("acme") == (2, b'{"by": "second"}')


def test_concurrent_team_swaps_lose_and_duplicate_nothing(open_storage: OpenStorage) -> None:
    threads_n, per_thread = 6, 15
    instances = [open_storage(), open_storage()]
    barrier = threading.Barrier(threads_n)
    won_versions: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(worker: int) -> None:
        storage = instances[worker % len(instances)]
        try:
            barrier.wait()
            for k in range(per_thread):
                while True:
                    found = storage.team("acme")
                    version, doc = (0, b"") if found is None else found
                    if storage.swap_team("acme", version, doc + f"w{worker}-n{k};".encode()):
                        with lock:
                            won_versions.append(version + 1)
                        break
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert not errors, errors
    total = threads_n * per_thread
    final = instances[0].team("acme")
    assert final is not None
    assert sorted(won_versions) == list(range(1, total + 1))  # no version won twice
    assert final[0] == total
    parts = final[1].decode().split(";")[:-1]
    assert sorted(parts) == sorted(
        f"w{w}-n{k}" for w in range(threads_n) for k in range(per_thread)
    )
    assert instances[1].team("acme") == final


def test_server_documents_are_listed_by_prefix_and_deleted(storage: Storage) -> None:
    from memdir.server.storage.base import ListedServerDocuments

    if not isinstance(storage, ListedServerDocuments):
        pytest.skip("the directory backend keeps its server documents in files of its own")
    for name in ("oauth-a-1", "oauth-a-2", "oauth-b-1", "accounts"):
        assert storage.swap_server_document(name, 0, name.encode())
    assert storage.server_document_names("oauth-a-") == ["oauth-a-1", "oauth-a-2"]
    assert storage.server_document_names("oauth-") == ["oauth-a-1", "oauth-a-2", "oauth-b-1"]
    assert storage.server_document_names("nothing-") == []
    assert storage.delete_server_document("oauth-a-1") is True
    assert storage.delete_server_document("oauth-a-1") is False  # again: nothing happens
    assert storage.server_document("oauth-a-1") is None
    # By version: a document that changed since it was read is kept.
    assert storage.swap_server_document("oauth-b-1", 1, b"changed")
    assert storage.delete_server_document("oauth-b-1", 1) is False
    assert storage.server_document("oauth-b-1") == (2, b"changed")
    assert storage.delete_server_document("oauth-b-1", 2) is True
    assert storage.swap_server_document("oauth-b-1", 0, b"oauth-b-1")
    assert storage.server_document_stamp("oauth-a-1") is None
    assert storage.server_document_names("oauth-") == ["oauth-a-2", "oauth-b-1"]
    assert storage.server_document("accounts") == (1, b"accounts")
    assert storage.swap_server_document("oauth-a-1", 0, b"again")  # created anew
    assert storage.server_document("oauth-a-1") == (1, b"again")
