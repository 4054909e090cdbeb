"""The server with end-to-end encrypted scopes (§8.2): sealed texts are stored unread, plain
texts keep every check, and the account's keyring document is swapped by version — on
both storage backends."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.core import Note, render_note
from memdir.crypto.keys import subkeys
from memdir.crypto.seal import Kind, seal
from memdir.server.rules import Rejection, SyncRules
from memdir.server.storage import Storage
from memdir.sync.protocol import (
    Change,
    CommitRequest,
    KeyringPut,
    Quotas,
    ScopeRef,
    SnapshotRequest,
    rev_of,
    sealed_size_limit,
)

SCOPE = ScopeRef(kind="project", project="0123abcd-project")
KEYS = subkeys(secrets.token_bytes(32))
SECRET = "ghp_" + "Zx9" * 12  # a GitHub token's shape: what the credential guard finds


@pytest.fixture(params=["directory", "postgres"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    store: Storage
    if request.param == "directory":
        from memdir.server.storage.directory import DirectoryStorage

        store = DirectoryStorage(tmp_path / "server")
    else:
        from memdir.server.storage.postgres import PostgresStorage

        store = PostgresStorage(request.getfixturevalue("pg_database_dsn"))
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def rules(storage: Storage) -> SyncRules:
    return SyncRules(storage, Quotas(max_body_bytes=4096))


def sealed(note_id: str, body: str) -> bytes:
    plain = render_note(Note(id=note_id, summary="A note", body=body))
    return seal(KEYS, plain, kind=Kind.WIRE, context=f"{SCOPE.key}/{note_id}")


def put(note_id: str, data: bytes, base: str | None = None) -> Change:
    return Change(id=note_id, op="put", base=base, rev=rev_of(data), text=data.decode())


def refused(call: object, status: int, code: str) -> Rejection:
    with pytest.raises(Rejection) as info:
        assert callable(call)
        call()
    assert (info.value.status, info.value.code) == (status, code), info.value.message
    return info.value


def test_a_sealed_text_is_stored_unread_with_the_rev_as_its_hash(rules: SyncRules) -> None:
    data = sealed("n1", f"holds {SECRET} inside, which the server cannot see")
    result = rules.commit("alice", CommitRequest(scope=SCOPE, changes=[put("n1", data)]))
    entry = result.notes["n1"]
    assert entry.hash == entry.rev == rev_of(data) and entry.size == len(data)
    snap = rules.snapshot("alice", SnapshotRequest(scope=SCOPE))
    assert snap.objects == {entry.rev: data.decode()}


def test_plain_texts_keep_every_check(rules: SyncRules) -> None:
    plain = render_note(Note(id="n1", summary="A note", body=f"key {SECRET}"))
    refused(
        lambda: rules.commit("alice", CommitRequest(scope=SCOPE, changes=[put("n1", plain)])),
        422,
        "secret_refused",
    )
    refused(
        lambda: rules.commit(
            "alice", CommitRequest(scope=SCOPE, changes=[put("n1", b"<<<<<<< HEAD\nx\n=======\n")])
        ),
        422,
        "invalid",
    )


def test_a_text_that_only_claims_to_be_sealed_is_refused(rules: SyncRules) -> None:
    fake = f"memdir-sealed 1 note: {SECRET} in clear\nnot base64 at all!\n".encode()
    refused(
        lambda: rules.commit("alice", CommitRequest(scope=SCOPE, changes=[put("n1", fake)])),
        422,
        "invalid",
    )


def test_the_size_quota_counts_the_sealed_size(rules: SyncRules) -> None:
    limit = sealed_size_limit(4096)
    assert len(sealed("ok", "x" * 4096)) <= limit  # a body at the quota fits sealed
    big = sealed("big", "x" * (limit + 1))
    refused(
        lambda: rules.commit("alice", CommitRequest(scope=SCOPE, changes=[put("big", big)])),
        413,
        "quota_exceeded",
    )


def test_the_keyring_document_is_swapped_by_version_and_key_id(rules: SyncRules) -> None:
    refused(lambda: rules.keyring("alice"), 404, "not_found")
    doc = '{"format": "memdir-keyring", "opaque": true}'
    first = rules.put_keyring("alice", KeyringPut(expected=0, key_id="ab" * 8, keyring=doc))
    assert first.version == 1 and rules.keyring("alice").keyring == doc
    refused(
        lambda: rules.put_keyring("alice", KeyringPut(expected=0, key_id="ab" * 8, keyring=doc)),
        409,
        "stale",
    )
    refused(
        lambda: rules.put_keyring("alice", KeyringPut(expected=1, key_id="cd" * 8, keyring=doc)),
        409,
        "key_mismatch",
    )
    rewrapped = doc.replace("true", "false")
    second = rules.put_keyring("alice", KeyringPut(expected=1, key_id="ab" * 8, keyring=rewrapped))
    assert second.version == 2 and rules.keyring("alice").keyring == rewrapped
    refused(lambda: rules.keyring("bob"), 404, "not_found")  # per account


def test_erasing_the_account_removes_its_keyring(rules: SyncRules, storage: Storage) -> None:
    rules.put_keyring("alice", KeyringPut(expected=0, key_id="ab" * 8, keyring="{}"))
    rules.erase("alice")
    assert storage.keyring("alice") is None
    assert not storage.swap_keyring("alice", 0, "ab" * 8, b"{}")


def test_a_schema_1_database_gains_the_keyring_table(pg_database_dsn: str) -> None:
    import psycopg

    from memdir.server.storage.postgres import MIGRATIONS, SCHEMA_VERSION, PostgresStorage

    with psycopg.connect(pg_database_dsn, autocommit=True) as conn:
        conn.execute(MIGRATIONS[0])
        conn.execute("CREATE TABLE memdir_schema (singleton boolean PRIMARY KEY, version int)")
        conn.execute("INSERT INTO memdir_schema VALUES (true, 1)")
        conn.execute(
            "INSERT INTO memdir_erased_users (user_id) VALUES ('gone')"  # data of schema 1
        )
    store = PostgresStorage(pg_database_dsn)
    try:
        assert SCHEMA_VERSION >= 2
        assert store.is_erased("gone") and store.keyring("alice") is None
        assert store.swap_keyring("alice", 0, "ab" * 8, b"{}")
        assert store.keyring("alice") == (1, "ab" * 8, b"{}")
    finally:
        store.close()
