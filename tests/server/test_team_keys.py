"""The keys of an end-to-end encrypted team on the sync server (§12).

The server keeps member public keys and per epoch the epoch key wrapped for each
member (`memdir.server.teamkeys`); it cannot check the cryptography, so these check its
rules: who may enrol, share and start an epoch, that an epoch ends when a member leaves,
and that every text stored in the team's space is sealed under the current epoch's key.
They run the rules over a real directory backend, as tests/server/test_teams.py does;
`test_team_keys_http` runs some of them through the app.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memdir.core import Note, render_note
from memdir.crypto.keys import subkeys
from memdir.crypto.seal import Kind, SealKeys, seal
from memdir.crypto.team import EpochKey, MemberKey, new_epoch_key
from memdir.errors import IntegrityError
from memdir.server.accounts import Accounts
from memdir.server.app import create_app
from memdir.server.ratelimit import RateLimiter
from memdir.server.rules import Rejection, SyncRules
from memdir.server.storage.directory import DirectoryStorage, team_owner
from memdir.sync.protocol import (
    PROTOCOL_HEADER,
    PROTOCOL_VERSION,
    Change,
    CommitRequest,
    Quotas,
    ScopeRef,
    TeamChange,
    TeamDoc,
    TeamKeys,
    TeamKeysChange,
    WrapFor,
    rev_of,
    sealed_key_id,
)
from memdir.sync.teamkeys import first_epoch

PROJECT = "proj-team-0001"
ACCOUNTS = ("olga", "adam", "eddy", "rita", "nina", "tess")
#: Each account's home keys, deterministic: the `member` subkey gives its member key.
HOMES: dict[str, SealKeys] = {name: subkeys(bytes([i + 1]) * 32) for i, name in enumerate(ACCOUNTS)}
MEMBERS: dict[str, MemberKey] = {name: MemberKey(keys) for name, keys in HOMES.items()}
#: A member key no account has enrolled (another home of theirs).
OTHER = MemberKey(subkeys(bytes([99]) * 32))


def scope(team: str = "acme") -> ScopeRef:
    return ScopeRef(kind="project", project=PROJECT, team=team)


def rendered(note_id: str, body: str = "body") -> bytes:
    return render_note(Note(id=note_id, summary=f"about {note_id}", body=body))


def put(note_id: str, body: str = "body") -> Change:
    """A plain put."""
    text = rendered(note_id, body).decode()
    return Change(id=note_id, op="put", rev=rev_of(text.encode()), text=text)


def sealed_text(key: EpochKey, note_id: str, body: str = "body") -> bytes:
    return seal(
        key.keys, rendered(note_id, body), kind=Kind.WIRE, context=f"project/{PROJECT}/{note_id}"
    )


def sealed_put(key: EpochKey, note_id: str, body: str = "body") -> Change:
    data = sealed_text(key, note_id, body)
    return Change(id=note_id, op="put", rev=rev_of(data), text=data.decode())


def raw_put(note_id: str, data: bytes) -> Change:
    return Change(id=note_id, op="put", rev=rev_of(data), text=data.decode())


def commit(rules: SyncRules, user: str, *changes: Change, team: str = "acme") -> int:
    request = CommitRequest(scope=scope(team), changes=list(changes))
    return rules.commit(user, request).version


def stored_version(rules: SyncRules, team: str = "acme") -> int:
    return rules.storage.manifest(team_owner(team), f"project/{PROJECT}").version


def change(
    rules: SyncRules,
    actor: str,
    action: str,
    member: str,
    role: str | None = None,
    team: str = "acme",
) -> None:
    head = rules.teams.show(actor, team).head
    request = TeamChange.model_validate(
        {"parent": head, "action": action, "member": member, "role": role}
    )
    rules.teams.change(actor, team, request)


def refused(status: int, code: str) -> pytest.RaisesExc[Rejection]:
    return pytest.raises(Rejection, check=lambda e: (e.status, e.code) == (status, code))


def keys_of(rules: SyncRules, user: str = "olga", team: str = "acme") -> TeamKeys:
    keys = rules.teams.show(user, team).keys
    assert keys is not None
    return keys


def held(rules: SyncRules, user: str, epoch: int, team: str = "acme") -> EpochKey:
    """The key of `epoch` as `user`'s machine opens it from their wrap."""
    keys = keys_of(rules, user, team)
    entry = keys.epochs[epoch - 1]
    return MEMBERS[user].open(team, epoch, entry.key_id, entry.wraps[user].box)


def keys_change(rules: SyncRules, user: str, **fields: object) -> TeamDoc:
    """`user`'s keys change made against the version they read now."""
    expected = keys_of(rules, "olga").version
    request = TeamKeysChange.model_validate({"expected": expected, **fields})
    return rules.teams.change_keys(user, "acme", request)


def enrol(rules: SyncRules, user: str, member: MemberKey | None = None) -> TeamDoc:
    return keys_change(rules, user, public_key=(member or MEMBERS[user]).public)


def wrap(key: EpochKey, member: str, public: str | None = None, team: str = "acme") -> WrapFor:
    public = public if public is not None else MEMBERS[member].public
    return WrapFor(epoch=key.epoch, member=member, key=public, box=key.wrap_for(team, public))


def share(rules: SyncRules, user: str, *wraps: WrapFor) -> TeamDoc:
    return keys_change(rules, user, wraps=[w.model_dump() for w in wraps])


def end_epoch(rules: SyncRules) -> None:
    """End the current epoch the way it ends: a member leaves (tess, added to go)."""
    change(rules, "olga", "add", "tess", "reader")
    change(rules, "olga", "remove", "tess")
    assert keys_of(rules).renew


def start_epoch(rules: SyncRules, user: str, *members: str) -> EpochKey:
    """`user` starts the next epoch wrapped for themself and `members` (ending the
    current one first if no member left since it began)."""
    if not keys_of(rules).renew:
        end_epoch(rules)
    key = new_epoch_key(len(keys_of(rules, user).epochs) + 1)
    wraps = [wrap(key, m).model_dump() for m in (user, *members)]
    keys_change(rules, user, new_epoch=key.key_id, wraps=wraps)
    return key


@pytest.fixture
def storage(tmp_path: Path) -> DirectoryStorage:
    return DirectoryStorage(tmp_path / "server")


def new_rules(storage: DirectoryStorage) -> SyncRules:
    return SyncRules(storage, Quotas(), known_user=lambda name: name in ACCOUNTS)


@pytest.fixture
def rules(storage: DirectoryStorage) -> SyncRules:
    """Encrypted team acme: olga owner, adam admin, eddy editor, rita reader; nina is no
    member. Only olga has enrolled a key (at the create)."""
    service = new_rules(storage)
    service.teams.create("olga", "acme", first_epoch("acme", "olga", HOMES["olga"]))
    for member, role in (("adam", "admin"), ("eddy", "editor"), ("rita", "reader")):
        change(service, "olga", "add", member, role)
    return service


@pytest.fixture
def shared(rules: SyncRules) -> SyncRules:
    """The team with every member enrolled and holding epoch 1."""
    key = held(rules, "olga", 1)
    for member in ("adam", "eddy", "rita"):
        enrol(rules, member)
    share(rules, "olga", *(wrap(key, m) for m in ("adam", "eddy", "rita")))
    return rules


# -- create ----------------------------------------------------------------------------


def test_an_encrypted_team_starts_with_epoch_1_wrapped_for_its_owner(rules: SyncRules) -> None:
    keys = keys_of(rules)
    assert keys.version == 1 and not keys.renew
    assert keys.public == {"olga": MEMBERS["olga"].public}
    [epoch] = keys.epochs
    assert (epoch.epoch, epoch.by, list(epoch.wraps)) == (1, "olga", ["olga"])
    assert epoch.wraps["olga"].key == MEMBERS["olga"].public and epoch.wraps["olga"].by == "olga"
    key = MEMBERS["olga"].open("acme", 1, epoch.key_id, epoch.wraps["olga"].box)
    assert key.key_id == epoch.key_id and key.epoch == 1


def boxless(keys: TeamKeys) -> TeamKeys:
    """`keys` without any sealed box: what every member is shown alike."""
    epochs = [
        e.model_copy(
            update={"wraps": {m: w.model_copy(update={"box": None}) for m, w in e.wraps.items()}}
        )
        for e in keys.epochs
    ]
    return keys.model_copy(update={"epochs": epochs})


def test_every_member_is_shown_the_keys_and_only_their_own_boxes(shared: SyncRules) -> None:
    for member in ("olga", "adam", "eddy", "rita"):
        shown = keys_of(shared, member)
        assert boxless(shown) == boxless(keys_of(shared, "olga"))
        assert [m for m, w in shown.epochs[0].wraps.items() if w.box is not None] == [member]


@pytest.mark.parametrize(
    ("missing", "empty"),
    [("public_key", None), ("new_epoch", None), ("wraps", [])],
    ids=["no-public-key", "no-new-epoch", "no-owner-wrap"],
)
def test_a_create_without_the_owners_key_or_epoch_1_is_refused(
    storage: DirectoryStorage, missing: str, empty: object
) -> None:
    rules = new_rules(storage)
    keys = first_epoch("acme", "olga", HOMES["olga"]).model_copy(update={missing: empty})
    with refused(422, "invalid"):
        rules.teams.create("olga", "acme", keys)
    assert storage.team("acme") is None
    rules.teams.create("olga", "acme")  # the name is still free


def test_a_plain_team_has_no_keys(storage: DirectoryStorage) -> None:
    rules = new_rules(storage)
    assert rules.teams.create("olga", "plain").keys is None
    assert rules.teams.show("olga", "plain").keys is None


# -- enrol -----------------------------------------------------------------------------


def test_a_member_enrols_their_own_key(rules: SyncRules) -> None:
    doc = enrol(rules, "rita")
    assert doc.keys is not None and doc.keys.version == 2
    assert doc.keys.public == {"olga": MEMBERS["olga"].public, "rita": MEMBERS["rita"].public}
    assert keys_of(rules, "rita") == doc.keys


def test_a_new_key_drops_the_members_wraps_in_every_epoch(shared: SyncRules) -> None:
    start_epoch(shared, "olga", "adam", "eddy", "rita")
    before = keys_of(shared)
    assert all("adam" in e.wraps for e in before.epochs)
    enrol(shared, "adam", OTHER)  # adam's new home: the wraps for the old key no longer open
    after = keys_of(shared)
    assert after.public["adam"] == OTHER.public
    assert all("adam" not in e.wraps for e in after.epochs)
    for old, new in zip(before.epochs, after.epochs, strict=True):
        assert {m: w for m, w in old.wraps.items() if m != "adam"} == new.wraps


def test_enrolling_the_same_key_again_keeps_the_wraps(shared: SyncRules) -> None:
    enrol(shared, "adam")
    assert "adam" in keys_of(shared).epochs[0].wraps


def test_a_non_member_enrols_nothing(rules: SyncRules) -> None:
    before = keys_of(rules)
    with refused(404, "not_found"):
        enrol(rules, "nina")
    assert keys_of(rules) == before


def test_an_enrolment_against_a_stale_version_is_refused(rules: SyncRules) -> None:
    enrol(rules, "adam")
    before = keys_of(rules)
    stale = TeamKeysChange(expected=1, public_key=MEMBERS["rita"].public)
    with pytest.raises(Rejection) as info:
        rules.teams.change_keys("rita", "acme", stale)
    assert (info.value.status, info.value.code, info.value.version) == (409, "stale", 2)
    assert keys_of(rules) == before


# -- wraps -----------------------------------------------------------------------------


@pytest.mark.parametrize("sharer", ["olga", "adam", "eddy", "rita"])
def test_any_member_shares_a_key_they_hold_with_a_new_member(
    shared: SyncRules, sharer: str
) -> None:
    change(shared, "adam", "add", "nina", "reader")
    enrol(shared, "nina")
    assert "nina" not in keys_of(shared).epochs[0].wraps
    share(shared, sharer, wrap(held(shared, sharer, 1), "nina"))
    entry = keys_of(shared).epochs[0].wraps["nina"]
    assert entry.by == sharer and entry.key == MEMBERS["nina"].public
    assert held(shared, "nina", 1).key_id == keys_of(shared).epochs[0].key_id


def test_a_wrap_for_a_non_member_is_refused(rules: SyncRules) -> None:
    before = keys_of(rules)
    with refused(409, "stale"):  # removed since the caller read the team, most likely
        share(rules, "olga", wrap(held(rules, "olga", 1), "nina"))
    assert keys_of(rules) == before


@pytest.mark.parametrize("enrolled", [True, False], ids=["another-key", "no-key"])
def test_a_wrap_for_a_key_the_member_has_not_enrolled_is_stale(
    rules: SyncRules, enrolled: bool
) -> None:
    if enrolled:
        enrol(rules, "adam")
    before = keys_of(rules)
    with refused(409, "stale"):
        share(rules, "olga", wrap(held(rules, "olga", 1), "adam", OTHER.public))
    assert keys_of(rules) == before


@pytest.mark.parametrize("epoch", [2, 7])
def test_a_wrap_for_an_epoch_that_does_not_exist_is_refused(rules: SyncRules, epoch: int) -> None:
    enrol(rules, "adam")
    before = keys_of(rules)
    key = new_epoch_key(epoch)
    with refused(422, "invalid"):
        share(rules, "olga", wrap(key, "adam"))
    assert keys_of(rules) == before


def test_a_wrap_that_exists_is_never_replaced(shared: SyncRules) -> None:
    first = keys_of(shared).epochs[0].wraps["adam"]
    again = wrap(held(shared, "eddy", 1), "adam")
    assert again.box != first.box  # a sealed box is random: another box of the same key
    share(shared, "eddy", again)
    assert keys_of(shared).epochs[0].wraps["adam"] == first
    # nor by a box that holds some other key entirely
    share(shared, "eddy", wrap(new_epoch_key(1), "adam"))
    assert keys_of(shared).epochs[0].wraps["adam"] == first
    assert held(shared, "adam", 1).key_id == keys_of(shared).epochs[0].key_id


def test_a_member_drops_their_own_wrap_that_does_not_open_and_another_wraps_it_again(
    rules: SyncRules,
) -> None:
    enrol(rules, "rita")
    share(rules, "eddy", wrap(new_epoch_key(1), "rita"))  # eddy holds no key: garbage for rita
    entry = keys_of(rules, "rita").epochs[0]
    assert entry.wraps["rita"].by == "eddy" and entry.wraps["rita"].box is not None
    with pytest.raises(IntegrityError):
        MEMBERS["rita"].open("acme", 1, entry.key_id, entry.wraps["rita"].box)
    keys_change(rules, "rita", drop_own=[1])
    assert "rita" not in keys_of(rules).epochs[0].wraps
    share(rules, "olga", wrap(held(rules, "olga", 1), "rita"))
    assert held(rules, "rita", 1).key_id == keys_of(rules).epochs[0].key_id
    # one drops only their own: an epoch that does not exist is refused
    with refused(422, "invalid"):
        keys_change(rules, "rita", drop_own=[2])
    keys_change(rules, "eddy", drop_own=[1])  # eddy has no wrap of epoch 1: nothing happens
    assert set(keys_of(rules).epochs[0].wraps) == {"olga", "rita"}


# -- epochs ----------------------------------------------------------------------------


def test_a_reader_starts_no_epoch(shared: SyncRules) -> None:
    end_epoch(shared)
    before = keys_of(shared)
    with refused(403, "forbidden"):
        start_epoch(shared, "rita")
    assert keys_of(shared) == before


@pytest.mark.parametrize("writer", ["olga", "adam", "eddy"])
def test_a_writer_starts_an_epoch(shared: SyncRules, writer: str) -> None:
    key = start_epoch(shared, writer, *(m for m in ("olga", "adam", "eddy") if m != writer))
    epoch = keys_of(shared).epochs[-1]
    assert (epoch.epoch, epoch.key_id, epoch.by) == (2, key.key_id, writer)
    assert set(epoch.wraps) == {"olga", "adam", "eddy"}
    assert held(shared, "olga", 2).key_id == key.key_id


def test_an_editor_enrols_and_starts_an_epoch_in_one_change(rules: SyncRules) -> None:
    end_epoch(rules)
    key = new_epoch_key(2)
    public = MEMBERS["eddy"].public
    keys_change(
        rules,
        "eddy",
        public_key=public,
        new_epoch=key.key_id,
        wraps=[wrap(key, "eddy").model_dump()],
    )
    assert held(rules, "eddy", 2).key_id == key.key_id
    assert list(keys_of(rules).epochs[1].wraps) == ["eddy"]


def test_a_key_id_is_never_used_by_two_epochs(shared: SyncRules) -> None:
    old = held(shared, "olga", 1)
    reused = EpochKey(2, b"\x00" * 32)  # any key: the server only sees the key id
    end_epoch(shared)
    before = keys_of(shared)
    with refused(422, "invalid"):
        keys_change(shared, "olga", new_epoch=old.key_id, wraps=[wrap(reused, "olga").model_dump()])
    assert keys_of(shared) == before


@pytest.mark.parametrize("wrapped_for", [(), ("adam",)], ids=["no-wraps", "others-only"])
def test_a_new_epoch_without_its_makers_wrap_is_refused(
    shared: SyncRules, wrapped_for: tuple[str, ...]
) -> None:
    key = new_epoch_key(2)
    end_epoch(shared)
    before = keys_of(shared)
    with refused(422, "invalid"):
        keys_change(
            shared,
            "olga",
            new_epoch=key.key_id,
            wraps=[wrap(key, m).model_dump() for m in wrapped_for],
        )
    assert keys_of(shared) == before


def test_an_epoch_that_has_not_ended_is_not_renewed(shared: SyncRules) -> None:
    """New epochs are the removals (plus the first): a writer cannot use them up."""
    key = new_epoch_key(2)
    before = keys_of(shared)
    with refused(409, "stale"):
        keys_change(shared, "olga", new_epoch=key.key_id, wraps=[wrap(key, "olga").model_dump()])
    assert keys_of(shared) == before


def test_a_key_change_that_would_lose_an_epoch_is_refused(rules: SyncRules) -> None:
    """Olga alone holds epoch 1: a new key of hers would leave no one able to open it."""
    before = keys_of(rules)
    with refused(409, "conflict"):
        enrol(rules, "olga", OTHER)
    assert keys_of(rules) == before


def test_a_plain_team_has_no_keys_to_change(storage: DirectoryStorage) -> None:
    rules = new_rules(storage)
    rules.teams.create("olga", "plain")
    for request in (
        TeamKeysChange(expected=0, public_key=MEMBERS["olga"].public),
        first_epoch("plain", "olga", HOMES["olga"]),
    ):
        with refused(409, "conflict"):
            rules.teams.change_keys("olga", "plain", request)
    assert rules.teams.show("olga", "plain").keys is None


# -- renewal ---------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["remove", "revoke"])
def test_a_member_leaving_ends_the_epoch(shared: SyncRules, action: str) -> None:
    key = held(shared, "olga", 1)
    commit(shared, "olga", sealed_put(key, "before"))
    version = stored_version(shared)
    change(shared, "olga", action, "eddy")
    assert keys_of(shared).renew and keys_of(shared, "rita").renew
    with pytest.raises(Rejection) as info:
        commit(shared, "olga", sealed_put(key, "after"))
    assert (info.value.status, info.value.code, info.value.ids) == (409, "renew_key", ["after"])
    assert stored_version(shared) == version


def test_leaving_of_ones_own_accord_ends_the_epoch_too(shared: SyncRules) -> None:
    head = shared.teams.show("eddy", "acme").head
    shared.teams.change("eddy", "acme", TeamChange(parent=head, action="remove", member="eddy"))
    assert keys_of(shared).renew


@pytest.mark.parametrize("action", ["set_role", "transfer"])
def test_a_change_that_keeps_every_member_ends_no_epoch(shared: SyncRules, action: str) -> None:
    change(shared, "olga", action, "rita", "editor" if action == "set_role" else None)
    assert not keys_of(shared).renew
    commit(shared, "adam", sealed_put(held(shared, "adam", 1), "still"))


def test_the_next_epoch_renews_and_only_its_key_is_stored(shared: SyncRules) -> None:
    first = held(shared, "olga", 1)
    change(shared, "adam", "remove", "eddy")
    second = start_epoch(shared, "olga", "adam", "rita")
    keys = keys_of(shared)
    assert not keys.renew and [e.epoch for e in keys.epochs] == [1, 2]
    assert set(keys.epochs[1].wraps) == {"olga", "adam", "rita"}  # none for eddy
    with refused(409, "renew_key"):
        commit(shared, "olga", sealed_put(first, "old-key"))
    assert stored_version(shared) == 0
    assert commit(shared, "olga", sealed_put(second, "new-key")) == 1
    assert commit(shared, "adam", sealed_put(held(shared, "adam", 2), "adams")) == 2
    # a later removal ends epoch 2 as well
    change(shared, "olga", "remove", "rita")
    assert keys_of(shared).renew
    with refused(409, "renew_key"):
        commit(shared, "olga", sealed_put(second, "after-rita"))


def test_a_wrap_for_a_removed_member_is_refused(shared: SyncRules) -> None:
    change(shared, "olga", "remove", "eddy")
    key = new_epoch_key(2)
    with refused(409, "stale"):
        keys_change(
            shared,
            "olga",
            new_epoch=key.key_id,
            wraps=[wrap(key, "olga").model_dump(), wrap(key, "eddy").model_dump()],
        )
    assert len(keys_of(shared).epochs) == 1


@pytest.mark.parametrize("action", ["remove", "revoke"])
def test_a_removed_member_is_shown_no_keys_and_changes_none(shared: SyncRules, action: str) -> None:
    change(shared, "olga", action, "eddy")
    before = keys_of(shared)
    with refused(404, "not_found"):
        shared.teams.show("eddy", "acme")
    with refused(404, "not_found"):
        enrol(shared, "eddy", OTHER)
    with refused(404, "not_found"):
        start_epoch(shared, "eddy")
    assert keys_of(shared) == before


# -- texts -----------------------------------------------------------------------------


def test_a_plain_text_is_refused_in_an_encrypted_team(shared: SyncRules) -> None:
    key = held(shared, "olga", 1)
    with pytest.raises(Rejection) as info:
        commit(shared, "olga", sealed_put(key, "sealed"), put("plain"))
    assert (info.value.status, info.value.code, info.value.ids) == (422, "invalid", ["plain"])
    assert stored_version(shared) == 0


def test_a_sealed_text_is_refused_in_a_plain_team(storage: DirectoryStorage) -> None:
    rules = new_rules(storage)
    rules.teams.create("olga", "plain")
    key = new_epoch_key(1)
    with pytest.raises(Rejection) as info:
        commit(rules, "olga", put("fine"), sealed_put(key, "sealed"), team="plain")
    assert (info.value.status, info.value.code, info.value.ids) == (422, "invalid", ["sealed"])
    assert stored_version(rules, "plain") == 0


def test_a_text_sealed_under_a_key_of_no_epoch_is_refused(shared: SyncRules) -> None:
    with refused(409, "renew_key"):
        commit(shared, "olga", sealed_put(new_epoch_key(1), "stray"))
    with refused(409, "renew_key"):  # nor under a member's own home key
        commit(shared, "olga", sealed_put(EpochKey(1, bytes([1]) * 32), "home"))
    assert stored_version(shared) == 0


def damaged_headers(data: bytes) -> dict[str, bytes]:
    """`data` (a sealed text) with its header damaged so its key id cannot be read, each
    still in the sealed form (a first line, then base64 lines)."""
    first, _, rest = data.partition(b"\n")
    lines = rest.split(b"\n")
    return {
        "magic": first + b"\n" + b"AAAA" + lines[0][4:] + b"\n" + b"\n".join(lines[1:]),
        "short": first + b"\nTURTTAE=\n",  # "MDSL\x01": the frame ends before the key id
    }


@pytest.mark.parametrize("damage", ["magic", "short"])
def test_a_text_whose_key_id_cannot_be_read_is_refused(shared: SyncRules, damage: str) -> None:
    data = damaged_headers(sealed_text(held(shared, "olga", 1), "n1"))[damage]
    assert sealed_key_id(data) is None
    with pytest.raises(Rejection) as info:
        commit(shared, "olga", raw_put("n1", data))
    # refused as damaged: no key id to check against the current epoch's
    assert (info.value.status, info.value.code, info.value.ids) == (422, "invalid", ["n1"])
    assert stored_version(shared) == 0


def test_a_sealed_text_under_the_current_key_is_stored(shared: SyncRules) -> None:
    for member in ("olga", "adam", "eddy"):
        commit(shared, member, sealed_put(held(shared, member, 1), f"by-{member}"))
    assert stored_version(shared) == 3
    with refused(403, "forbidden"):  # a reader holds the key and still writes nothing
        commit(shared, "rita", sealed_put(held(shared, "rita", 1), "by-rita"))


# -- persistence -----------------------------------------------------------------------


def test_a_restarted_server_serves_the_same_keys(
    shared: SyncRules, storage: DirectoryStorage, tmp_path: Path
) -> None:
    start_epoch(shared, "olga", "adam")
    change(shared, "olga", "remove", "eddy")
    before = keys_of(shared)
    assert before.renew
    restarted = new_rules(DirectoryStorage(tmp_path / "server"))
    after = keys_of(restarted)
    assert after == before
    assert (after.version, len(after.epochs), set(after.epochs[1].wraps)) == (
        before.version,
        2,
        {"olga", "adam"},
    )
    assert held(restarted, "adam", 2).key_id == before.epochs[1].key_id


def test_the_stored_document_keeps_no_renew_flag(
    shared: SyncRules, storage: DirectoryStorage
) -> None:
    change(shared, "olga", "remove", "eddy")
    assert keys_of(shared).renew
    found = storage.team("acme")
    assert found is not None
    doc = json.loads(found[1])
    assert "renew" not in doc["keys"]
    assert doc["keys"]["version"] == keys_of(shared).version
    assert set(doc["keys"]) == {"version", "public", "epochs"}


def damage_keys(keys: dict[str, object], how: str) -> object:
    if how == "no-epochs":
        return keys | {"epochs": []}
    if how == "bad-public":
        return keys | {"public": {"olga": "not a key"}}
    if how == "version-0":
        return keys | {"version": 0}
    if how == "bad-key-id":
        epochs = json.loads(json.dumps(keys["epochs"]))
        epochs[0]["key_id"] = "xyz"
        return keys | {"epochs": epochs}
    if how == "not-an-object":
        return "keys"
    raise AssertionError(how)


@pytest.mark.parametrize(
    "how", ["no-epochs", "bad-public", "version-0", "bad-key-id", "not-an-object"]
)
def test_damaged_keys_on_disk_are_refused_not_trusted(
    rules: SyncRules, storage: DirectoryStorage, how: str
) -> None:
    found = storage.team("acme")
    assert found is not None
    doc = json.loads(found[1])
    doc["keys"] = damage_keys(doc["keys"], how)
    assert storage.swap_team("acme", found[0], json.dumps(doc).encode())
    for call in (
        lambda: rules.teams.show("olga", "acme"),
        lambda: enrol(rules, "adam"),
        lambda: commit(rules, "olga", put("x")),
    ):
        with pytest.raises(Rejection) as info:
            call()
        assert (info.value.status, info.value.code) == (500, "internal")
        assert "damaged" in info.value.message


def out_of_line(keys: dict[str, object], how: str) -> dict[str, object]:
    """Keys that pass the schema but break what the server's own changes keep true."""
    epochs = json.loads(json.dumps(keys["epochs"]))
    if how == "reused-key-id":  # a second epoch under epoch 1's key id
        epochs.append(epochs[0] | {"epoch": 2})
    elif how == "misnumbered":  # the only epoch claims to be epoch 5
        epochs[0]["epoch"] = 5
    elif how == "after-the-history":  # began "after" entries not yet written: no renewal
        epochs[0]["after"] = 10_000
    else:
        raise AssertionError(how)
    return keys | {"epochs": epochs}


@pytest.mark.parametrize("how", ["reused-key-id", "misnumbered", "after-the-history"])
def test_keys_out_of_line_on_disk_are_refused_not_trusted(
    rules: SyncRules, storage: DirectoryStorage, how: str
) -> None:
    found = storage.team("acme")
    assert found is not None
    doc = json.loads(found[1])
    doc["keys"] = out_of_line(doc["keys"], how)
    assert storage.swap_team("acme", found[0], json.dumps(doc).encode())
    with refused(500, "internal"):
        rules.teams.show("olga", "acme")


# -- HTTP ------------------------------------------------------------------------------


def test_team_keys_http(tmp_path: Path) -> None:
    """The same rules through the app: routes, status codes, the `keys` field."""
    data = tmp_path / "data"
    accounts = Accounts(data)
    tokens = {name: accounts.add_user(name) for name in ("olga", "rita", "nina")}
    rules = SyncRules(DirectoryStorage(data), Quotas(), known_user=accounts.exists)
    app = create_app(rules, accounts, RateLimiter(0))

    def headers(user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {tokens[user]}", PROTOCOL_HEADER: str(PROTOCOL_VERSION)}

    create = {"team": "acme", "keys": first_epoch("acme", "olga", HOMES["olga"]).model_dump()}
    with TestClient(app) as http:
        made = http.post("/v1/teams", json=create, headers=headers("olga"))
        assert made.status_code == 200, made.text
        keys = made.json()["keys"]
        assert keys["version"] == 1 and keys["renew"] is False
        assert keys["public"] == {"olga": MEMBERS["olga"].public}
        assert [list(e["wraps"]) for e in keys["epochs"]] == [["olga"]]
        plain = http.post("/v1/teams", json={"team": "plain"}, headers=headers("olga"))
        assert plain.status_code == 200 and plain.json()["keys"] is None

        body = {"parent": made.json()["head"], "action": "add", "member": "rita", "role": "reader"}
        added = http.post("/v1/teams/acme/changes", json=body, headers=headers("olga"))
        assert added.status_code == 200, added.text

        enrolled = http.post(
            "/v1/teams/acme/keys",
            json={"expected": 1, "public_key": MEMBERS["rita"].public},
            headers=headers("rita"),
        )
        assert enrolled.status_code == 200, enrolled.text
        assert enrolled.json()["keys"]["version"] == 2
        assert enrolled.json()["keys"]["public"]["rita"] == MEMBERS["rita"].public

        again = http.post(
            "/v1/teams/acme/keys",
            json={"expected": 1, "public_key": OTHER.public},
            headers=headers("rita"),
        )
        assert again.status_code == 409 and again.json()["error"] == "stale"
        assert again.json()["version"] == 2

        shown = http.get("/v1/teams/acme?history=false", headers=headers("rita"))
        assert shown.status_code == 200 and shown.json()["keys"] == enrolled.json()["keys"]

        for bad in (
            "abc",
            MEMBERS["rita"].public[:-1],
            MEMBERS["rita"].public + "A",
            "!" * 43 + "=",
        ):
            malformed = http.post(
                "/v1/teams/acme/keys",
                json={"expected": 2, "public_key": bad},
                headers=headers("rita"),
            )
            assert malformed.status_code == 422, bad
            assert malformed.json()["error"] == "invalid", bad
        bad_create = {"team": "other", "keys": {"expected": 0, "public_key": "short"}}
        refused_create = http.post("/v1/teams", json=bad_create, headers=headers("olga"))
        assert refused_create.status_code == 422 and refused_create.json()["error"] == "invalid"

        hidden = http.post(
            "/v1/teams/acme/keys",
            json={"expected": 2, "public_key": MEMBERS["nina"].public},
            headers=headers("nina"),
        )
        assert hidden.status_code == 404 and hidden.json()["error"] == "not_found"
        conflict = http.post(
            "/v1/teams/plain/keys",
            json={"expected": 0, "public_key": MEMBERS["olga"].public},
            headers=headers("olga"),
        )
        assert conflict.status_code == 409 and conflict.json()["error"] == "conflict"
        assert keys_of(rules, "rita").version == 2
