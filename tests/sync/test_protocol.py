"""Tests for `sync/protocol.py`: the wire models round-trip and reject malformed input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from memdir.sync.protocol import (
    ERROR_CODES,
    Change,
    CommitRequest,
    Entry,
    ErrorBody,
    Identity,
    Manifest,
    Quotas,
    ScopeRef,
    Snapshot,
    SnapshotRequest,
    Tombstone,
    is_rev,
    rev_of,
)

REV = rev_of(b"a note")
OTHER = rev_of(b"another note")

revs = st.binary(max_size=32).map(rev_of)
positive = st.integers(min_value=1, max_value=10**9)
project_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{7,30}", fullmatch=True)
note_ids = st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}", fullmatch=True)
scopes = st.one_of(
    st.just(ScopeRef(kind="user")), project_ids.map(lambda p: ScopeRef(kind="project", project=p))
)
quotas = st.builds(
    Quotas,
    max_notes=positive,
    max_changes=positive,
    max_body_bytes=positive,
    max_response_bytes=positive,
    tombstone_days=positive,
)
entries = st.builds(
    Entry, rev=revs, hash=revs, size=st.integers(0, 10**6), updated_at=st.integers(0, 10**13)
)
tombstones = st.builds(Tombstone, rev=revs, deleted_at=st.integers(0, 10**13))
snapshots = st.builds(
    Snapshot,
    version=st.integers(0, 10**6),
    unchanged=st.booleans(),
    notes=st.dictionaries(note_ids, entries, max_size=3),
    tombstones=st.dictionaries(note_ids, tombstones, max_size=3),
    objects=st.dictionaries(revs, st.text(max_size=40), max_size=3),
    truncated=st.booleans(),
    quotas=quotas,
)
changes = st.one_of(
    st.builds(
        lambda i, b, t: Change(id=i, op="put", base=b, rev=rev_of(t.encode()), text=t),
        note_ids,
        st.none() | revs,
        st.text(max_size=40),
    ),
    st.builds(lambda i, b: Change(id=i, op="delete", base=b), note_ids, revs),
)
commits = st.builds(
    CommitRequest,
    scope=scopes,
    version=st.none() | st.integers(0, 100),
    changes=st.lists(changes, min_size=1, max_size=4),
)


@given(st.one_of(snapshots, commits, quotas, scopes))
def test_models_round_trip_through_json(model: object) -> None:
    cls = type(model)
    text = model.model_dump_json()  # type: ignore[attr-defined]
    assert cls.model_validate_json(text) == model  # type: ignore[attr-defined]


@given(quotas)
def test_quotas_round_trip_through_their_header(q: Quotas) -> None:
    assert Quotas.from_header(q.header()) == q


def test_quota_header_ignores_unknown_keys_and_defaults_missing_ones() -> None:
    parsed = Quotas.from_header("notes=7; flavour=mint; body=abc;changes=3")
    assert (parsed.max_notes, parsed.max_changes) == (7, 3)
    assert parsed.max_body_bytes == Quotas().max_body_bytes
    with pytest.raises(ValidationError):
        Quotas.from_header("notes=0")


def test_scope_keys_and_the_project_iff_kind_rule() -> None:
    assert ScopeRef(kind="user").key == "user"
    assert ScopeRef(kind="project", project="proj-1234").key == "project/proj-1234"
    for bad in (
        {"kind": "project"},
        {"kind": "user", "project": "proj-1234"},
        {"kind": "project", "project": "short"},
        {"kind": "project", "project": "-leading-dash"},
        {"kind": "team"},
    ):
        with pytest.raises(ValidationError):
            ScopeRef.model_validate(bad)


@pytest.mark.parametrize(
    "change",
    [
        {"id": "a", "op": "put", "rev": REV},  # no text
        {"id": "a", "op": "put", "text": "t"},  # no rev
        {"id": "a", "op": "delete"},  # no base
        {"id": "a", "op": "delete", "base": REV, "text": "t"},
        {"id": "a", "op": "rename", "base": REV},
        {"id": "", "op": "delete", "base": REV},
        {"id": "a" * 81, "op": "delete", "base": REV},
        {"id": "a", "op": "delete", "base": REV.upper()},
        {"id": "a", "op": "delete", "base": REV[:-1]},
    ],
)
def test_malformed_changes_are_rejected(change: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Change.model_validate(change)


def test_a_commit_needs_at_least_one_change() -> None:
    with pytest.raises(ValidationError):
        CommitRequest(scope=ScopeRef(kind="user"), changes=[])


def test_unknown_fields_are_ignored_and_models_are_frozen() -> None:
    entry = Entry.model_validate({"rev": REV, "hash": OTHER, "size": 3, "updated_at": 1, "x": 1})
    assert entry == Entry(rev=REV, hash=OTHER, size=3, updated_at=1)
    with pytest.raises(ValidationError):
        entry.size = 4  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Entry(rev=REV, hash=OTHER, size=-1, updated_at=1)


def test_defaults_of_requests_and_manifests() -> None:
    request = SnapshotRequest(scope=ScopeRef(kind="user"))
    assert (request.have, request.known_version, request.objects, request.lists) == (
        [],
        None,
        True,
        True,
    )
    assert Manifest() == Manifest(version=0, notes={}, tombstones={})
    body = ErrorBody(error="stale", message="moved on")
    assert (body.ids, body.version, body.supported, body.quotas) == ([], None, [], None)
    assert "stale" in ERROR_CODES and len(set(ERROR_CODES)) == len(ERROR_CODES)
    with pytest.raises(ValidationError):
        Identity.model_validate({"user": "u", "server": "s", "protocol": 1})


@given(st.binary(max_size=64))
def test_rev_of_is_a_well_formed_revision(data: bytes) -> None:
    assert is_rev(rev_of(data))


@pytest.mark.parametrize("value", ["", "xyz", REV.upper(), REV + "0", REV[:-1] + "g"])
def test_is_rev_rejects_malformed_values(value: str) -> None:
    assert not is_rev(value)
