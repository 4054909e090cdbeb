"""The sync server's rules (§7.3) on the directory backend, with an injected clock."""

from __future__ import annotations

import random
import string
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from memdir.core import Note, render_note
from memdir.server.rules import Rejection, SyncRules
from memdir.server.storage.base import StoredObject
from memdir.server.storage.directory import DirectoryStorage
from memdir.sync.protocol import (
    Change,
    CommitRequest,
    CommitResult,
    Manifest,
    Quotas,
    ScopeRef,
    SnapshotRequest,
    rev_of,
)

USER = ScopeRef(kind="user")
PROJECT = ScopeRef(kind="project", project="0123abcd-project")
DAY = 86_400_000
T0 = 1_800_000_000_000


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


class Spy(DirectoryStorage):
    """A directory storage that records its calls (and can lose swaps on purpose)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.calls: list[str] = []
        self.asked: list[str] = []
        self.lose_swaps = 0
        self.before_swap: list[object] = []

    def objects(self, user: str, scope: str, wanted: Mapping[str, str]) -> dict[str, bytes]:
        self.asked.extend(wanted)
        return super().objects(user, scope, wanted)

    def put_objects(self, user: str, scope: str, objects: Iterable[StoredObject]) -> None:
        self.calls.append("put_objects")
        super().put_objects(user, scope, objects)

    def swap_manifest(self, user: str, scope: str, expected: int, manifest: Manifest) -> bool:
        self.calls.append("swap_manifest")
        while self.before_swap:
            action = self.before_swap.pop(0)
            assert callable(action)
            action()
        if self.lose_swaps:
            self.lose_swaps -= 1
            return False
        return super().swap_manifest(user, scope, expected, manifest)

    def mark_erased(self, user: str) -> None:
        self.calls.append("mark_erased")
        super().mark_erased(user)

    def erase(self, user: str) -> None:
        self.calls.append("erase")
        super().erase(user)


def text(note_id: str, body: str = "body", summary: str | None = None) -> str:
    note = Note(id=note_id, summary=summary or f"about {note_id}", body=body)
    return render_note(note).decode("utf-8")


def put(note_id: str, body: str = "body", base: str | None = None) -> Change:
    t = text(note_id, body)
    return Change(id=note_id, op="put", base=base, rev=rev_of(t.encode()), text=t)


def delete(note_id: str, base: str) -> Change:
    return Change(id=note_id, op="delete", base=base)


def commit_req(
    *changes: Change, scope: ScopeRef = USER, version: int | None = None
) -> CommitRequest:
    return CommitRequest(scope=scope, version=version, changes=list(changes))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def storage(tmp_path: Path) -> Spy:
    return Spy(tmp_path / "data")


@pytest.fixture
def service(storage: Spy, clock: Clock) -> SyncRules:
    return SyncRules(storage, Quotas(), clock)


def refused(call: object, status: int, code: str) -> Rejection:
    assert callable(call)
    with pytest.raises(Rejection) as info:
        call()
    assert (info.value.status, info.value.code) == (status, code), info.value.message
    return info.value


def test_identity(service: SyncRules) -> None:
    identity = service.identity("alice")
    assert identity.user == "alice"
    assert identity.protocol == 1 and identity.min_protocol == 1
    assert identity.server.startswith("memdir/")
    assert identity.quotas == Quotas()


def test_commit_sets_entries_with_server_time_size_and_content_hash(
    service: SyncRules, clock: Clock
) -> None:
    change = put("a-note", "hello")
    result = service.commit("alice", commit_req(change))
    assert result.version == 1
    entry = result.notes["a-note"]
    note_bytes = (change.text or "").encode()
    assert entry.rev == change.rev == rev_of(note_bytes)
    assert entry.size == len(note_bytes)
    assert entry.updated_at == T0
    assert entry.hash == Note(id="a-note", summary="about a-note", body="hello").hash
    assert result.quotas == Quotas()
    assert service.storage.manifest("alice", "user").notes == {"a-note": entry}


def test_objects_are_stored_before_the_manifest_is_swapped(
    service: SyncRules, storage: Spy
) -> None:
    service.commit("alice", commit_req(put("a-note")))
    assert storage.calls == ["put_objects", "swap_manifest"]


def test_snapshot_returns_the_manifest_and_the_texts_not_in_have(service: SyncRules) -> None:
    a, b = put("a-note", "aaa"), put("b-note", "bbb")
    service.commit("alice", commit_req(a, b))
    snap = service.snapshot("alice", SnapshotRequest(scope=USER))
    assert snap.version == 1 and not snap.unchanged and not snap.truncated
    assert set(snap.notes) == {"a-note", "b-note"}
    assert snap.objects == {a.rev: a.text, b.rev: b.text}
    assert a.rev is not None
    snap = service.snapshot("alice", SnapshotRequest(scope=USER, have=[a.rev]))
    assert snap.objects == {b.rev: b.text}
    assert set(snap.notes) == {"a-note", "b-note"}


def test_the_server_never_reads_texts_the_client_has(service: SyncRules, storage: Spy) -> None:
    a, b = put("a-note"), put("b-note")
    service.commit("alice", commit_req(a, b))
    assert a.rev is not None and b.rev is not None
    storage.asked.clear()
    service.snapshot("alice", SnapshotRequest(scope=USER, have=[a.rev, b.rev]))
    assert storage.asked == []
    service.snapshot("alice", SnapshotRequest(scope=USER, have=[a.rev]))
    assert storage.asked == [b.rev]


def test_a_probe_without_objects_lists_the_manifest_and_reads_no_text(
    service: SyncRules, storage: Spy
) -> None:
    a = put("a-note")
    service.commit("alice", commit_req(a))
    storage.asked.clear()
    snap = service.snapshot("alice", SnapshotRequest(scope=USER, known_version=0, objects=False))
    assert not snap.unchanged and set(snap.notes) == {"a-note"}
    assert snap.objects == {} and not snap.truncated
    assert storage.asked == []


def test_a_texts_only_snapshot_omits_the_lists(service: SyncRules) -> None:
    a, b = put("a-note", "aaa"), put("b-note", "bbb")
    service.commit("alice", commit_req(a, b))
    assert a.rev is not None
    snap = service.snapshot("alice", SnapshotRequest(scope=USER, have=[a.rev], lists=False))
    assert snap.notes == {} and snap.tombstones == {}
    assert snap.objects == {b.rev: b.text} and snap.version == 1


def test_known_version_unchanged_gives_empty_lists(service: SyncRules) -> None:
    service.commit("alice", commit_req(put("a-note")))
    snap = service.snapshot("alice", SnapshotRequest(scope=USER, known_version=1))
    assert snap.unchanged and snap.version == 1
    assert snap.notes == {} and snap.objects == {} and snap.tombstones == {}
    snap = service.snapshot("alice", SnapshotRequest(scope=USER, known_version=0))
    assert not snap.unchanged and set(snap.notes) == {"a-note"}


def test_empty_scope_snapshot(service: SyncRules) -> None:
    snap = service.snapshot("alice", SnapshotRequest(scope=PROJECT))
    assert snap.version == 0 and snap.notes == {} and not snap.unchanged
    snap = service.snapshot("alice", SnapshotRequest(scope=PROJECT, known_version=0))
    assert snap.unchanged


def test_snapshot_truncates_to_the_response_quota_and_have_makes_progress(
    storage: Spy, clock: Clock
) -> None:
    writer = SyncRules(storage, Quotas(), clock)
    changes = [put(f"n{i}-note", "x" * 200) for i in range(5)]
    writer.commit("alice", commit_req(*changes))
    size = len((changes[0].text or "").encode())
    reader = SyncRules(storage, Quotas(max_response_bytes=2 * size + 10), clock)
    have: list[str] = []
    rounds = 0
    while True:
        snap = reader.snapshot("alice", SnapshotRequest(scope=USER, have=have))
        rounds += 1
        assert sum(len(t.encode()) for t in snap.objects.values()) <= 2 * size + 10
        assert snap.objects, "every snapshot with missing texts sends at least one"
        have.extend(snap.objects)
        if not snap.truncated:
            break
    assert rounds == 3
    assert sorted(have) == sorted(c.rev or "" for c in changes)


def test_a_note_bigger_than_the_response_quota_still_travels(storage: Spy, clock: Clock) -> None:
    SyncRules(storage, Quotas(), clock).commit("alice", commit_req(put("big-note", "y" * 500)))
    snap = SyncRules(storage, Quotas(max_response_bytes=10), clock).snapshot(
        "alice", SnapshotRequest(scope=USER)
    )
    assert len(snap.objects) == 1 and not snap.truncated


def test_put_against_an_old_base_is_stale_and_nothing_applies(
    service: SyncRules, storage: Spy
) -> None:
    first = put("a-note", "one")
    service.commit("alice", commit_req(first))
    # New without base although it exists; and a good change alongside.
    error = refused(
        lambda: service.commit("alice", commit_req(put("a-note", "two"), put("b-note"))),
        409,
        "stale",
    )
    assert error.ids == ["a-note"] and error.version == 1
    # A wrong base.
    error = refused(
        lambda: service.commit("alice", commit_req(put("a-note", "two", base=rev_of(b"old")))),
        409,
        "stale",
    )
    assert error.ids == ["a-note"]
    manifest = storage.manifest("alice", "user")
    assert manifest.version == 1 and set(manifest.notes) == {"a-note"}
    assert not list((storage.root / "users/alice/memory/objects").glob("b-note/*"))
    # The right base.
    result = service.commit("alice", commit_req(put("a-note", "two", base=first.rev)))
    assert result.version == 2


def test_delete_needs_the_live_revision(service: SyncRules, clock: Clock) -> None:
    first = put("a-note")
    assert first.rev is not None
    service.commit("alice", commit_req(first))
    error = refused(
        lambda: service.commit("alice", commit_req(delete("a-note", rev_of(b"other")))),
        409,
        "stale",
    )
    assert error.ids == ["a-note"]
    error = refused(
        lambda: service.commit("alice", commit_req(delete("never-note", first.rev or ""))),
        409,
        "stale",
    )
    assert error.ids == ["never-note"]
    clock.now += 5
    result = service.commit("alice", commit_req(delete("a-note", first.rev)))
    assert result.notes == {}
    assert result.tombstones["a-note"].rev == first.rev
    assert result.tombstones["a-note"].deleted_at == T0 + 5


def test_commit_first_version_must_match(service: SyncRules) -> None:
    service.commit("alice", commit_req(put("a-note")))
    error = refused(
        lambda: service.commit("alice", commit_req(put("b-note"), version=0)), 409, "stale"
    )
    assert error.version == 1 and error.ids == []
    assert service.commit("alice", commit_req(put("b-note"), version=1)).version == 2


def test_duplicate_ids_in_one_commit_are_invalid(service: SyncRules) -> None:
    error = refused(
        lambda: service.commit("alice", commit_req(put("a-note", "1"), put("a-note", "2"))),
        422,
        "invalid",
    )
    assert error.ids == ["a-note"]


@pytest.mark.parametrize(
    "change",
    [
        Change(id="a-note", op="put", rev=rev_of(b"other"), text=text("a-note")),
        # no frontmatter and no line of text (a plain Markdown note is a note)
        Change(id="a-note", op="put", rev=rev_of(b"---\n\n***\n"), text="---\n\n***\n"),
        Change(id="a-note", op="put", rev=rev_of(text("b-note").encode()), text=text("b-note")),
        Change(id="../etc", op="put", rev=rev_of(b"x"), text="x"),
        Change(id="Upper", op="delete", base=rev_of(b"x")),
        Change(id="a-note", op="put", rev=rev_of(b"x"), text="\ud800"),
    ],
    ids=["rev-mismatch", "unparsable", "id-mismatch", "traversal", "upper-case", "surrogate"],
)
def test_invalid_changes(service: SyncRules, storage: Spy, change: Change) -> None:
    refused(lambda: service.commit("alice", commit_req(change)), 422, "invalid")
    assert storage.manifest("alice", "user").version == 0
    assert storage.calls == []


def github_token(seed: str = "rules") -> str:
    """A GitHub-token-shaped value made at run time (no credential-like literal in the repo)."""
    rng = random.Random(seed)
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def test_a_commit_carrying_a_credential_is_refused_whole(service: SyncRules, storage: Spy) -> None:
    token = github_token()
    secret = put("leaky-note", f"first line\nthe mirror uses {token}")
    error = refused(
        lambda: service.commit("alice", commit_req(put("clean-note"), secret)),
        422,
        "secret_refused",
    )
    assert error.ids == ["leaky-note"]
    assert "leaky-note" in error.message and "GitHub token (body, line 2)" in error.message
    assert token not in error.message and token[4:12] not in error.message
    # Nothing of the commit was stored: no object, no manifest.
    assert storage.calls == []
    assert storage.manifest("alice", "user").version == 0
    assert service.snapshot("alice", SnapshotRequest(scope=USER)).objects == {}
    assert service.commit("alice", commit_req(put("clean-note"))).version == 1


def test_case_collision_with_a_live_note(service: SyncRules, storage: Spy) -> None:
    # Ids are lower-case, so only a manifest from elsewhere can hold a mixed-case one.
    legacy = Manifest(
        version=1,
        notes={"Old-note": service.commit("bob", commit_req(put("old-note"))).notes["old-note"]},
    )
    assert storage.swap_manifest("alice", "user", 0, legacy)
    error = refused(
        lambda: service.commit("alice", commit_req(put("old-note"))), 409, "case_collision"
    )
    assert error.ids == ["Old-note", "old-note"]


def test_too_many_changes(storage: Spy, clock: Clock) -> None:
    service = SyncRules(storage, Quotas(max_changes=2), clock)
    refused(
        lambda: service.commit("alice", commit_req(put("a-note"), put("b-note"), put("c-note"))),
        413,
        "quota_exceeded",
    )
    assert service.commit("alice", commit_req(put("a-note"), put("b-note"))).version == 1


def test_note_quota_only_blocks_growth(storage: Spy, clock: Clock) -> None:
    first = SyncRules(storage, Quotas(), clock).commit(
        "alice", commit_req(put("a-note"), put("b-note"), put("c-note"))
    )
    lowered = SyncRules(storage, Quotas(max_notes=2), clock)
    refused(lambda: lowered.commit("alice", commit_req(put("d-note"))), 413, "quota_exceeded")
    # Editing keeps the count (3 > 2, but no growth); deleting shrinks it.
    edited = lowered.commit(
        "alice", commit_req(put("a-note", "edited", base=first.notes["a-note"].rev))
    )
    assert edited.version == 2
    # Swap one note for another: the count stays at 3.
    swapped = lowered.commit(
        "alice", commit_req(delete("b-note", first.notes["b-note"].rev), put("d-note"))
    )
    assert swapped.version == 3
    lowered.commit("alice", commit_req(delete("c-note", first.notes["c-note"].rev)))
    refused(lambda: lowered.commit("alice", commit_req(put("e-note"))), 413, "quota_exceeded")
    # Another scope has its own count.
    assert lowered.commit("alice", commit_req(put("e-note"), scope=PROJECT)).version == 1


def test_body_quota_only_blocks_growth(storage: Spy, clock: Clock) -> None:
    first = SyncRules(storage, Quotas(), clock).commit(
        "alice", commit_req(put("big-note", "x" * 300))
    )
    lowered = SyncRules(storage, Quotas(max_body_bytes=100), clock)
    base = first.notes["big-note"].rev
    error = refused(
        lambda: lowered.commit("alice", commit_req(put("new-note", "y" * 101))),
        413,
        "quota_exceeded",
    )
    assert error.ids == ["new-note"]
    refused(
        lambda: lowered.commit("alice", commit_req(put("big-note", "x" * 301, base=base))),
        413,
        "quota_exceeded",
    )
    same = lowered.commit("alice", commit_req(put("big-note", "z" * 300, base=base)))
    smaller = lowered.commit(
        "alice", commit_req(put("big-note", "z" * 200, base=same.notes["big-note"].rev))
    )
    assert smaller.version == 3
    assert lowered.commit("alice", commit_req(put("ok-note", "y" * 100))).version == 4


def test_tombstones_expire_from_snapshots_and_drop_at_the_next_commit(
    service: SyncRules, storage: Spy, clock: Clock
) -> None:
    first = service.commit("alice", commit_req(put("a-note"), put("b-note")))
    service.commit("alice", commit_req(delete("a-note", first.notes["a-note"].rev)))
    clock.now += 89 * DAY
    snap = service.snapshot("alice", SnapshotRequest(scope=USER))
    assert set(snap.tombstones) == {"a-note"}
    clock.now += 2 * DAY
    snap = service.snapshot("alice", SnapshotRequest(scope=USER))
    assert snap.tombstones == {}
    assert set(storage.manifest("alice", "user").tombstones) == {"a-note"}
    service.commit("alice", commit_req(put("c-note")))
    assert storage.manifest("alice", "user").tombstones == {}


def test_a_put_over_a_tombstone_removes_it(service: SyncRules, storage: Spy) -> None:
    first = service.commit("alice", commit_req(put("a-note", "one")))
    service.commit("alice", commit_req(delete("a-note", first.notes["a-note"].rev)))
    assert set(storage.manifest("alice", "user").tombstones) == {"a-note"}
    again = service.commit("alice", commit_req(put("a-note", "two")))
    manifest = storage.manifest("alice", "user")
    assert manifest.tombstones == {} and again.tombstones == {}
    assert manifest.notes["a-note"] == again.notes["a-note"]


def test_a_lost_race_is_checked_again_and_applied(
    service: SyncRules, storage: Spy, clock: Clock
) -> None:
    other = SyncRules(DirectoryStorage(storage.root), Quotas(), clock)
    storage.before_swap.append(lambda: other.commit("alice", commit_req(put("other-note"))))
    result = service.commit("alice", commit_req(put("mine-note")))
    assert result.version == 2
    assert set(storage.manifest("alice", "user").notes) == {"other-note", "mine-note"}
    assert storage.calls == ["put_objects", "swap_manifest", "swap_manifest"]


def test_a_lost_race_on_the_same_note_is_stale(
    service: SyncRules, storage: Spy, clock: Clock
) -> None:
    other = SyncRules(DirectoryStorage(storage.root), Quotas(), clock)
    storage.before_swap.append(lambda: other.commit("alice", commit_req(put("a-note", "theirs"))))
    error = refused(
        lambda: service.commit("alice", commit_req(put("a-note", "mine"))), 409, "stale"
    )
    assert error.ids == ["a-note"]
    manifest = storage.manifest("alice", "user")
    assert manifest.version == 1
    assert manifest.notes["a-note"].rev == put("a-note", "theirs").rev


def test_a_swap_that_keeps_losing_ends_stale(service: SyncRules, storage: Spy) -> None:
    storage.lose_swaps = 1000
    error = refused(lambda: service.commit("alice", commit_req(put("a-note"))), 409, "stale")
    assert error.version == 0
    assert storage.calls.count("put_objects") == 1


def test_erase_marks_first_then_deletes_and_refuses_the_account(
    service: SyncRules, storage: Spy
) -> None:
    service.commit("alice", commit_req(put("a-note")))
    service.commit("bob", commit_req(put("b-note")))
    result = service.erase("alice")
    assert result.user == "alice" and result.erased
    assert storage.calls[-2:] == ["mark_erased", "erase"]
    assert not list((storage.root / "users" / "alice").rglob("*.md"))
    refused(lambda: service.identity("alice"), 410, "account_erased")
    refused(lambda: service.snapshot("alice", SnapshotRequest(scope=USER)), 410, "account_erased")
    refused(lambda: service.commit("alice", commit_req(put("a-note"))), 410, "account_erased")
    assert service.identity("bob").user == "bob"
    assert service.erase("alice").erased  # again: harmless


def test_an_erase_during_a_commit_refuses_it(service: SyncRules, storage: Spy) -> None:
    storage.before_swap.append(lambda: SyncRules(DirectoryStorage(storage.root)).erase("alice"))
    refused(lambda: service.commit("alice", commit_req(put("a-note"))), 410, "account_erased")
    assert not list((storage.root / "users" / "alice").rglob("*.md"))


def test_bad_user_names_are_invalid(service: SyncRules) -> None:
    refused(lambda: service.identity("../x"), 422, "invalid")
    refused(lambda: service.erase("../x"), 422, "invalid")


def test_commit_result_lists_only_what_the_commit_set(service: SyncRules) -> None:
    first = service.commit("alice", commit_req(put("a-note"), put("b-note")))
    result: CommitResult = service.commit(
        "alice", commit_req(put("a-note", "new", base=first.notes["a-note"].rev))
    )
    assert set(result.notes) == {"a-note"} and result.tombstones == {}
