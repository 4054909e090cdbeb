"""What only the PostgreSQL backend has: migrations, connection errors, bulk writes, the pool."""

from __future__ import annotations

import logging
import socket
import threading
import traceback
import uuid
from collections.abc import Iterator

import pytest

psycopg = pytest.importorskip("psycopg")

from memdir.errors import MemdirError, Refused  # noqa: E402
from memdir.server.storage.postgres import SCHEMA_VERSION, PostgresStorage  # noqa: E402
from memdir.sync.protocol import Entry, Manifest, rev_of  # noqa: E402

TABLES = {
    "memdir_schema",
    "memdir_teams",
    "memdir_rate_buckets",
    "memdir_documents",
    "memdir_manifests",
    "memdir_revisions",
    "memdir_erased_users",
    "memdir_keyrings",
}


@pytest.fixture
def storage(pg_database_dsn: str) -> Iterator[PostgresStorage]:
    """A PostgresStorage on a fresh database."""
    opened = PostgresStorage(pg_database_dsn)
    try:
        yield opened
    finally:
        opened.close()


def query(dsn: str, sql: str) -> list[tuple[object, ...]]:
    """Rows of `sql` run on its own connection (autocommit)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        cursor = conn.execute(sql)
        return cursor.fetchall() if cursor.description else []


def schema_rows(dsn: str) -> list[tuple[object, ...]]:
    return query(dsn, "SELECT version FROM memdir_schema")


def tables(dsn: str) -> set[str]:
    rows = query(dsn, "SELECT tablename FROM pg_tables WHERE tablename LIKE 'memdir%'")
    return {str(row[0]) for row in rows}


def one_manifest(text: str, version: int = 1) -> Manifest:
    data = text.encode()
    return Manifest(
        version=version,
        notes={"note": Entry(rev=rev_of(data), hash=rev_of(data), size=len(data), updated_at=1)},
    )


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- migrations ------------------------------------------------------------------------


def test_a_fresh_database_gets_the_current_schema(
    storage: PostgresStorage, pg_database_dsn: str
) -> None:
    assert tables(pg_database_dsn) == TABLES
    assert schema_rows(pg_database_dsn) == [(SCHEMA_VERSION,)]


def test_reopening_keeps_data_and_schema(pg_database_dsn: str) -> None:
    first = PostgresStorage(pg_database_dsn)
    assert first.swap_manifest("alice", "user", 0, one_manifest("kept"))
    first.close()

    second = PostgresStorage(pg_database_dsn)
    try:
        assert second.manifest("alice", "user") == one_manifest("kept")
    finally:
        second.close()
    assert schema_rows(pg_database_dsn) == [(SCHEMA_VERSION,)]


def test_processes_starting_together_agree_on_the_schema(pg_database_dsn: str) -> None:
    count = 8
    barrier = threading.Barrier(count)
    opened: list[PostgresStorage] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            barrier.wait()
            opened.append(PostgresStorage(pg_database_dsn, max_connections=2))
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    try:
        assert not errors, errors
        assert len(opened) == count
        assert schema_rows(pg_database_dsn) == [(SCHEMA_VERSION,)]
        assert tables(pg_database_dsn) == TABLES
    finally:
        for storage in opened:
            storage.close()


def test_a_newer_schema_is_refused_and_left_untouched(pg_database_dsn: str) -> None:
    first = PostgresStorage(pg_database_dsn)
    assert first.swap_manifest("alice", "user", 0, one_manifest("future"))
    first.close()
    newer = SCHEMA_VERSION + 7
    query(pg_database_dsn, f"UPDATE memdir_schema SET version = {newer}")

    with pytest.raises(Refused) as caught:
        PostgresStorage(pg_database_dsn)

    message = str(caught.value)
    assert f"version {newer}" in message
    assert f"({SCHEMA_VERSION})" in message
    assert schema_rows(pg_database_dsn) == [(newer,)]
    assert query(pg_database_dsn, "SELECT user_id, version FROM memdir_manifests") == [("alice", 1)]


def test_a_role_that_cannot_create_tables_gets_a_clear_error(pg_database_dsn: str) -> None:
    role = f"memdir_limited_{uuid.uuid4().hex[:8]}"
    query(pg_database_dsn, f"CREATE ROLE {role} LOGIN")
    try:
        limited = psycopg.conninfo.make_conninfo(pg_database_dsn, user=role)
        with pytest.raises(MemdirError, match="cannot set up the memdir schema") as caught:
            PostgresStorage(limited)
        assert "permission denied" in str(caught.value)
        assert tables(pg_database_dsn) == set()
    finally:
        query(pg_database_dsn, f"DROP ROLE {role}")


# -- connection errors -----------------------------------------------------------------

SECRET = "S3cret-pa55w0rd"


@pytest.mark.parametrize(
    "dsn",
    [
        f"postgresql://memdir:{SECRET}@127.0.0.1:{{port}}/memdir_db",
        f"host=127.0.0.1 port={{port}} user=memdir password={SECRET} dbname=memdir_db",
    ],
    ids=["url", "key-value"],
)
def test_the_dsn_password_never_appears_in_an_error(
    dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    port = closed_port()
    caplog.set_level(logging.DEBUG)

    with pytest.raises(MemdirError) as caught:
        PostgresStorage(dsn.format(port=port))

    message = str(caught.value)
    assert message.startswith(f"cannot connect to PostgreSQL at 127.0.0.1:{port}/memdir_db: ")
    assert "refused" in message.lower()
    everything = "".join(traceback.format_exception(caught.value)) + repr(caught.value)
    assert SECRET not in everything
    assert SECRET not in caplog.text


def test_an_unparsable_dsn_is_not_echoed() -> None:
    with pytest.raises(MemdirError) as caught:
        PostgresStorage(f"host=127.0.0.1 password {SECRET} nonsense")
    assert SECRET not in "".join(traceback.format_exception(caught.value))
    assert "cannot be parsed" in str(caught.value)


# -- writes ----------------------------------------------------------------------------


def test_a_bulk_put_of_5000_objects_stores_them_all(storage: PostgresStorage) -> None:
    # Its speed is a figure of bench/sync.py (initial upload), not a wall-clock assertion.
    objects = []
    for number in range(5000):
        data = f"---\nid: note-{number}\n---\n{'body text é ' * 90}{number}\n".encode()
        objects.append((f"note-{number}", rev_of(data), data))

    storage.put_objects("alice", "user", objects)
    got = storage.objects("alice", "user", {rev: note_id for note_id, rev, _ in objects})
    assert got == {rev: data for _, rev, data in objects}


def test_a_put_larger_than_one_statement_goes_in_whole(
    storage: PostgresStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(storage, "put_chunk_bytes", 1000)  # a statement per ~3 objects
    objects = []
    for number in range(50):
        data = f"{number:03d}".encode() * 100
        objects.append((f"chunk-{number}", rev_of(data), data))

    storage.put_objects("alice", "user", objects)

    got = storage.objects("alice", "user", {rev: note_id for note_id, rev, _ in objects})
    assert got == {rev: data for _, rev, data in objects}


def test_a_swap_must_raise_the_version(storage: PostgresStorage) -> None:
    assert storage.swap_manifest("alice", "user", 0, one_manifest("one", version=1))
    with pytest.raises(ValueError, match="above 1"):
        storage.swap_manifest("alice", "user", 1, one_manifest("same", version=1))
    assert storage.manifest("alice", "user") == one_manifest("one", version=1)


def test_connections_the_server_dropped_are_replaced(
    storage: PostgresStorage, pg_database_dsn: str
) -> None:
    assert storage.swap_manifest("alice", "user", 0, one_manifest("before"))
    query(
        pg_database_dsn,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE application_name = 'memdir-server' AND pid <> pg_backend_pid()",
    )

    assert storage.manifest("alice", "user") == one_manifest("before")
