"""Where the PostgreSQL and S3 backends keep teams: the migration that adds the policy table
to an existing database, and the keys and rows a team's notes and policy use. The team
contract itself runs in test_storage_contract.py on every backend."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fault_proxy import FaultProxy
from memdir.server.storage import team_owner
from memdir.sync.protocol import Entry, Manifest, rev_of


def _manifest(version: int, note: str) -> Manifest:
    data = note.encode()
    entry = Entry(rev=rev_of(data), hash=rev_of(data), size=len(data), updated_at=version)
    return Manifest(version=version, notes={note: entry})


def _query(dsn: str, sql: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        cursor = conn.execute(sql)
        return cursor.fetchall() if cursor.description else []


@pytest.fixture
def schema_2_dsn(pg_database_dsn: str) -> Iterator[str]:
    """A database as memdir left it before teams (schema version 2), with some data."""
    from memdir.server.storage.postgres import MIGRATIONS

    for step in MIGRATIONS[:2]:
        _query(pg_database_dsn, step)
    _query(
        pg_database_dsn, "CREATE TABLE memdir_schema (singleton boolean PRIMARY KEY, version int)"
    )
    _query(pg_database_dsn, "INSERT INTO memdir_schema VALUES (true, 2)")
    _query(
        pg_database_dsn,
        "INSERT INTO memdir_manifests (user_id, scope, version, body)"
        " VALUES ('alice', 'user', 4, '{\"notes\": {}, \"tombstones\": {}}')",
    )
    _query(
        pg_database_dsn,
        "INSERT INTO memdir_keyrings (user_id, version, key_id, body)"
        " VALUES ('alice', 2, 'abababababababab', '{}')",
    )
    yield pg_database_dsn


def test_a_schema_2_database_gains_the_team_table_in_place(schema_2_dsn: str) -> None:
    from memdir.server.storage.postgres import SCHEMA_VERSION, PostgresStorage

    assert SCHEMA_VERSION >= 3
    first = PostgresStorage(schema_2_dsn)
    try:
        assert first.manifest("alice", "user").version == 4  # kept through the upgrade
        assert first.keyring("alice") == (2, "ab" * 8, b"{}")
        assert first.team("acme") is None
        assert first.swap_team("acme", 0, b"{}")
    finally:
        first.close()
    assert _query(schema_2_dsn, "SELECT version FROM memdir_schema") == [(SCHEMA_VERSION,)]

    again = PostgresStorage(schema_2_dsn)  # finds nothing to do, and loses nothing
    try:
        assert again.team("acme") == (1, b"{}")
        assert again.manifest("alice", "user").version == 4
    finally:
        again.close()
    assert _query(schema_2_dsn, "SELECT version FROM memdir_schema") == [(SCHEMA_VERSION,)]
    assert _query(schema_2_dsn, "SELECT team_id, version, body FROM memdir_teams") == [
        ("acme", 1, b"{}")
    ]


def test_postgres_keeps_team_notes_by_owner_and_policies_by_team(pg_database_dsn: str) -> None:
    from memdir.server.storage.postgres import PostgresStorage

    storage = PostgresStorage(pg_database_dsn)
    try:
        owner = team_owner("acme")
        data = b"team note"
        storage.put_objects(owner, "user", [("n", rev_of(data), data)])
        assert storage.swap_manifest(owner, "user", 0, _manifest(1, "n"))
        assert storage.swap_team("acme", 0, b'{"members": {}}')
    finally:
        storage.close()
    assert _query(pg_database_dsn, "SELECT user_id, scope FROM memdir_manifests") == [
        ("+acme", "user")
    ]
    assert _query(pg_database_dsn, "SELECT user_id, note_id FROM memdir_revisions") == [
        ("+acme", "n")
    ]
    assert _query(pg_database_dsn, "SELECT team_id, version FROM memdir_teams") == [("acme", 1)]


def test_s3_keeps_a_team_under_teams(s3_bucket: tuple[str, str, str]) -> None:
    from memdir.server.storage.s3 import S3Storage

    endpoint, bucket, prefix = s3_bucket
    with FaultProxy(endpoint, keep_host=True) as proxy:
        storage = S3Storage(proxy.url, bucket, prefix=prefix)
        try:
            owner = team_owner("acme")
            data = b"team note"
            storage.put_objects(owner, "user", [("n", rev_of(data), data)])
            assert storage.swap_manifest(owner, "user", 0, _manifest(1, "n"))
            assert storage.swap_team("acme", 0, b'{"members": {}}')
        finally:
            storage.close()
        puts = sorted(r.path for r in proxy.requests() if r.method == "PUT")
    base = f"/{bucket}/{prefix}/teams/acme"
    assert puts == [
        f"{base}/policy.json",
        f"{base}/scopes/user/manifest.json",
        f"{base}/scopes/user/objects/n/{rev_of(data)}",
    ]
    # A team has no erase marker to check: none of its requests asks for one.
    assert not proxy.requests("ERASED")
