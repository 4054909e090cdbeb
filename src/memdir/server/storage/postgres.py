"""The sync server's PostgreSQL storage backend (psycopg 3 with a connection pool).

Schema, created and upgraded by `PostgresStorage` itself::

    memdir_schema       (singleton, version)                  the applied migration count
    memdir_manifests    (user_id, scope) -> version, body     one manifest per scope, CAS on version
    memdir_revisions    (user_id, scope, rev) -> note_id, body immutable note revisions (bytea)
    memdir_erased_users (user_id) -> erased_at                 erase markers, never deleted
    memdir_keyrings     (user_id) -> version, key_id, body      the keyring document (§8.2)
    memdir_teams        (team_id) -> version, body             a team's policy document
    memdir_rate_buckets (bucket) -> tokens, at                 rate limits shared by replicas
    memdir_documents    (name) -> version, body                accounts, OAuth state

`user_id` in the manifest and revision tables is the notes' owner: a user name, or
`+<team>` for a team's notes (never a user name, which has no `+`).

Migrations are an ordered list of SQL steps. Every server process that starts runs the
missing ones in one transaction under a transaction-scoped advisory lock, so several
processes starting together agree; a database whose schema is newer than this code is
refused and never touched.

Writes for an owner (`put_objects`, `swap_manifest`, and the keyring's and a team
policy's swaps) take a shared advisory lock keyed by the owner string and do nothing once
the erase marker exists (a team owner `+<team>` has none); `mark_erased` takes it
exclusively. So once `mark_erased` returns, no write that began earlier is still in flight and no
later one lands: `erase` then removes everything and nothing comes back.

The DSN's password never appears in a message: errors name only host, port and database.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from memdir.errors import InvalidInput, MemdirError, Refused
from memdir.sync.protocol import Manifest, rev_of

try:
    import psycopg
    from psycopg import conninfo as pg_conninfo
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as error:  # pragma: no cover - exercised only on the plain install
    raise ImportError(
        "the PostgreSQL storage backend needs the postgres extra: pip install 'memdir[postgres]'"
    ) from error

from psycopg import sql

from memdir.server.storage.base import StoredKeyring, StoredObject, StoredTeam
from memdir.server.storage.directory import (
    is_team_owner,
    team_owner,
    validate_owner,
    validate_team,
    validate_user,
)

__all__ = ["SCHEMA_VERSION", "PostgresStorage"]

#: The schema steps, in order; step i brings the schema from version i to i + 1.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE memdir_manifests (
        user_id    text        NOT NULL,
        scope      text        NOT NULL,
        version    bigint      NOT NULL CHECK (version > 0),
        body       jsonb       NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, scope)
    );
    CREATE TABLE memdir_revisions (
        user_id    text        NOT NULL,
        scope      text        NOT NULL,
        rev        text        NOT NULL,
        note_id    text        NOT NULL,
        body       bytea       NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, scope, rev)
    );
    CREATE TABLE memdir_erased_users (
        user_id   text        PRIMARY KEY,
        erased_at timestamptz NOT NULL DEFAULT now()
    );
    """,
    """
    CREATE TABLE memdir_keyrings (
        user_id    text        PRIMARY KEY,
        version    bigint      NOT NULL CHECK (version > 0),
        key_id     text        NOT NULL,
        body       bytea       NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
    );
    """,
    """
    CREATE TABLE memdir_teams (
        team_id    text        PRIMARY KEY,
        version    bigint      NOT NULL CHECK (version > 0),
        body       bytea       NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
    );
    """,
    """
    CREATE TABLE memdir_rate_buckets (
        bucket text             PRIMARY KEY,
        tokens double precision NOT NULL,
        at     timestamptz      NOT NULL
    );
    """,
    """
    CREATE TABLE memdir_documents (
        name       text        PRIMARY KEY,
        version    bigint      NOT NULL CHECK (version > 0),
        body       bytea       NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
    );
    """,
)
#: The schema version this code writes and reads.
SCHEMA_VERSION = len(MIGRATIONS)

# Advisory lock keys. The one-argument (bigint) and two-argument (int4, int4) forms are
# separate key spaces, so the per-user locks cannot collide with the migration lock.
_MIGRATION_LOCK = 0x6D656D646972  # "memdir"
_USER_LOCK_CLASS = 0x6D656D64  # "memd"
#: The owner the server's own documents are locked and checked under (never an account).
_SERVER = ":server"

#: Bytes of object bodies sent per INSERT statement (all in one transaction).
PUT_CHUNK_BYTES = 16 * 1024 * 1024
_CONNECT_TIMEOUT_S = 10


def _user_lock_key(user: str) -> int:
    """A stable signed 32-bit key for a user's advisory lock."""
    return int.from_bytes(hashlib.sha256(user.encode()).digest()[:4], "big", signed=True)


class _Target:
    """Where a DSN points, for messages: host:port/db, and the password to scrub."""

    def __init__(self, dsn: str) -> None:
        try:
            params = pg_conninfo.conninfo_to_dict(dsn)
        except psycopg.Error:
            # libpq's parse errors quote pieces of the string, which may be the password.
            raise MemdirError(
                "the PostgreSQL DSN cannot be parsed "
                "(not shown because it may hold a password): check its syntax"
            ) from None
        host = str(params.get("host") or params.get("hostaddr") or "localhost")
        port = str(params.get("port") or "5432")
        dbname = str(params.get("dbname") or params.get("user") or "")
        self.where = f"{host}:{port}/{dbname}"
        self.password = str(params.get("password") or "")
        self.params = params

    def scrub(self, text: str) -> str:
        """`text` on one line with the password (if any) blanked out."""
        text = re.sub(r"\s+", " ", text).strip()
        if self.password:
            text = text.replace(self.password, "***")
        return text

    def failure(self, reason: BaseException | str) -> MemdirError:
        """The error for a connection that failed."""
        why = self.scrub(str(reason)) or type(reason).__name__
        return MemdirError(f"cannot connect to PostgreSQL at {self.where}: {why}")


class PostgresStorage:
    """`Storage` in a PostgreSQL database; safe to share between threads and processes."""

    def __init__(
        self, dsn: str, *, max_connections: int = 10, put_chunk_bytes: int = PUT_CHUNK_BYTES
    ) -> None:
        self._target = _Target(dsn)
        #: Bytes of object bodies one INSERT statement carries at most.
        self.put_chunk_bytes = put_chunk_bytes
        kwargs: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in self._target.params:
            kwargs["connect_timeout"] = _CONNECT_TIMEOUT_S
        if "application_name" not in self._target.params:
            kwargs["application_name"] = "memdir-server"
        self._migrate(dsn, kwargs)
        self._pool: ConnectionPool[psycopg.Connection[tuple[Any, ...]]] = ConnectionPool(
            dsn,
            kwargs=kwargs,
            min_size=1,
            max_size=max(1, max_connections),
            open=True,
            check=ConnectionPool.check_connection,
            name="memdir-storage",
            timeout=30.0,
        )

    # -- schema ------------------------------------------------------------------------

    def _migrate(self, dsn: str, kwargs: dict[str, Any]) -> None:
        try:
            conn = psycopg.connect(dsn, **kwargs)
        except psycopg.OperationalError as error:
            raise self._target.failure(error) from None
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                exists = conn.execute("SELECT to_regclass('memdir_schema') IS NOT NULL").fetchone()
                if not (exists and exists[0]):
                    conn.execute(
                        "CREATE TABLE memdir_schema ("
                        " singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),"
                        " version integer NOT NULL)"
                    )
                row = conn.execute("SELECT version FROM memdir_schema").fetchone()
                current = int(row[0]) if row else 0
                if current > SCHEMA_VERSION:
                    raise Refused(
                        f"the PostgreSQL database at {self._target.where} has memdir schema "
                        f"version {current}, newer than this memdir knows ({SCHEMA_VERSION}): "
                        "upgrade memdir; the database was not changed"
                    )
                for step in MIGRATIONS[current:]:
                    conn.execute(step)
                if current < SCHEMA_VERSION:
                    conn.execute(
                        "INSERT INTO memdir_schema (singleton, version) VALUES (true, %s)"
                        " ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version",
                        (SCHEMA_VERSION,),
                    )
        except psycopg.OperationalError as error:
            raise self._target.failure(error) from None
        except psycopg.Error as error:  # e.g. no CREATE privilege for the first migration
            raise MemdirError(
                f"cannot set up the memdir schema in PostgreSQL at {self._target.where}: "
                f"{self._target.scrub(str(error))}"
            ) from None
        finally:
            conn.close()

    # -- connections -------------------------------------------------------------------

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as error:
            raise self._target.failure(f"no connection available ({error})") from None
        except psycopg.OperationalError as error:
            raise self._target.failure(error) from None

    @staticmethod
    def _lock_user(conn: psycopg.Connection[tuple[Any, ...]], user: str, *, shared: bool) -> None:
        fn = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
        conn.execute(f"SELECT {fn}(%s, %s)", (_USER_LOCK_CLASS, _user_lock_key(user)))

    def _swap_document(
        self, table: str, key: tuple[str, str], expected: int, values: dict[str, Any], owner: str
    ) -> bool:
        """Store the versioned row `key` (column, value) of `table` with `values` as version
        `expected + 1` if it is still at `expected` (0: no row), under `owner`'s shared lock
        and not once `owner` is erased."""
        columns = [sql.Identifier(name) for name in values]
        not_erased = sql.SQL("NOT EXISTS (SELECT 1 FROM memdir_erased_users WHERE user_id = %s)")
        if expected == 0:
            query = sql.SQL(
                "INSERT INTO {table} ({key}, version, {columns}) SELECT %s, 1, {params}"
                " WHERE {not_erased} ON CONFLICT ({key}) DO NOTHING"
            ).format(
                table=sql.Identifier(table),
                key=sql.Identifier(key[0]),
                columns=sql.SQL(", ").join(columns),
                params=sql.SQL(", ").join(sql.Placeholder() * len(values)),
                not_erased=not_erased,
            )
            params = [key[1], *values.values(), owner]
        else:
            query = sql.SQL(
                "UPDATE {table} SET version = version + 1, {assignments}, updated_at = now()"
                " WHERE {key} = %s AND version = %s AND {not_erased}"
            ).format(
                table=sql.Identifier(table),
                key=sql.Identifier(key[0]),
                assignments=sql.SQL(", ").join(
                    sql.SQL("{} = %s").format(column) for column in columns
                ),
                not_erased=not_erased,
            )
            params = [*values.values(), key[1], expected, owner]
        with self._conn() as conn, conn.transaction():
            self._lock_user(conn, owner, shared=True)
            return conn.execute(query, params).rowcount == 1

    def server_document(self, name: str) -> StoredTeam | None:
        """(version, bytes) of the server's document `name` (its accounts), None when none."""
        return self._versioned("memdir_documents", "name", name)

    def _versioned(self, table: str, column: str, key: str) -> StoredTeam | None:
        """(version, body) of the row of `table` whose `column` is `key`, None when none."""
        query = sql.SQL("SELECT version, body FROM {} WHERE {} = %s").format(
            sql.Identifier(table), sql.Identifier(column)
        )
        with self._conn() as conn:
            row = conn.execute(query, (key,)).fetchone()
        return None if row is None else (int(row[0]), bytes(row[1]))

    def server_document_stamp(self, name: str) -> str | None:
        """The version of the server's document `name` as a stamp, None when there is none."""
        with self._conn() as conn:
            row = conn.execute(
                "SELECT version FROM memdir_documents WHERE name = %s", (name,)
            ).fetchone()
        return None if row is None else str(row[0])

    def swap_server_document(self, name: str, expected: int, doc: bytes) -> bool:
        """Store the server's document `name` if its version is still `expected`."""
        values = {"body": doc}
        return self._swap_document("memdir_documents", ("name", name), expected, values, _SERVER)

    def server_document_names(self, prefix: str) -> list[str]:
        """The names of the server's documents starting with `prefix`, sorted."""
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT name FROM memdir_documents WHERE left(name, %s) = %s ORDER BY name",
                (len(prefix), prefix),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def delete_server_document(self, name: str, version: int | None = None) -> bool:
        """Delete the server's document `name` (with `version`: only at that version, in
        one statement); whether one was deleted."""
        with self._conn() as conn:
            if version is None:
                cursor = conn.execute("DELETE FROM memdir_documents WHERE name = %s", (name,))
            else:
                cursor = conn.execute(
                    "DELETE FROM memdir_documents WHERE name = %s AND version = %s",
                    (name, version),
                )
            return cursor.rowcount > 0

    # -- Storage -----------------------------------------------------------------------

    def manifest(self, owner: str, scope: str) -> Manifest:
        """The scope's current manifest (an empty one with version 0 when there is none)."""
        validate_owner(owner)
        with self._conn() as conn:
            row = conn.execute(
                "SELECT version, body::text FROM memdir_manifests"
                " WHERE user_id = %s AND scope = %s",
                (owner, scope),
            ).fetchone()
        if row is None:
            return Manifest(version=0)
        return Manifest.model_validate_json(row[1]).model_copy(update={"version": int(row[0])})

    def objects(self, owner: str, scope: str, wanted: Mapping[str, str]) -> dict[str, bytes]:
        """The bytes of the revisions in `wanted` (rev -> note id); missing ones are left out."""
        validate_owner(owner)
        revs = list(wanted)
        if not revs:
            return {}
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT rev, body FROM memdir_revisions"
                " WHERE user_id = %s AND scope = %s AND rev = ANY(%s)",
                (owner, scope, revs),
            ).fetchall()
        return {str(rev): bytes(body) for rev, body in rows}

    def put_objects(self, owner: str, scope: str, objects: Iterable[StoredObject]) -> None:
        """Store revisions durably; existing ones are left as they are. None after erasure.

        Every rev is checked against its bytes first (InvalidInput, nothing stored).
        """
        validate_owner(owner)
        chunks: list[tuple[list[str], list[str], list[bytes]]] = []
        ids: list[str] = []
        revs: list[str] = []
        bodies: list[bytes] = []
        size = 0
        for note_id, rev, body in objects:
            if rev_of(body) != rev:
                raise InvalidInput(f"revision {rev[:12]} of {note_id} does not match its bytes")
            ids.append(note_id)
            revs.append(rev)
            bodies.append(bytes(body))
            size += len(body)
            if size >= self.put_chunk_bytes:
                chunks.append((ids, revs, bodies))
                ids, revs, bodies, size = [], [], [], 0
        if ids:
            chunks.append((ids, revs, bodies))
        if not chunks:
            return
        with self._conn() as conn, conn.transaction():
            self._lock_user(conn, owner, shared=True)
            for chunk_ids, chunk_revs, chunk_bodies in chunks:
                conn.execute(
                    "INSERT INTO memdir_revisions (user_id, scope, note_id, rev, body)"
                    " SELECT %s, %s, n, r, b"
                    " FROM unnest(%s::text[], %s::text[], %s::bytea[]) AS t(n, r, b)"
                    " WHERE NOT EXISTS (SELECT 1 FROM memdir_erased_users WHERE user_id = %s)"
                    " ON CONFLICT DO NOTHING",
                    (owner, scope, chunk_ids, chunk_revs, chunk_bodies, owner),
                )

    def swap_manifest(self, owner: str, scope: str, expected: int, manifest: Manifest) -> bool:
        """Replace the manifest if its version is still `expected`; False when it moved on.

        Also False once the user's erase marker exists (the rules then refuse the user).
        """
        validate_owner(owner)
        if manifest.version <= expected:
            raise ValueError(
                f"a swapped-in manifest must have a version above {expected}, "
                f"not {manifest.version}"
            )
        body = manifest.model_dump_json(exclude={"version"})
        with self._conn() as conn, conn.transaction():
            self._lock_user(conn, owner, shared=True)
            if expected == 0:
                cursor = conn.execute(
                    "INSERT INTO memdir_manifests (user_id, scope, version, body)"
                    " SELECT %s, %s, %s, %s::jsonb"
                    " WHERE NOT EXISTS (SELECT 1 FROM memdir_erased_users WHERE user_id = %s)"
                    " ON CONFLICT (user_id, scope) DO NOTHING",
                    (owner, scope, manifest.version, body, owner),
                )
            else:
                cursor = conn.execute(
                    "UPDATE memdir_manifests SET version = %s, body = %s::jsonb,"
                    " updated_at = now()"
                    " WHERE user_id = %s AND scope = %s AND version = %s"
                    " AND NOT EXISTS (SELECT 1 FROM memdir_erased_users WHERE user_id = %s)",
                    (manifest.version, body, owner, scope, expected, owner),
                )
            return cursor.rowcount == 1

    def keyring(self, user: str) -> StoredKeyring | None:
        """The user's keyring document, None when none is stored."""
        validate_user(user)
        with self._conn() as conn:
            row = conn.execute(
                "SELECT version, key_id, body FROM memdir_keyrings WHERE user_id = %s", (user,)
            ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]), bytes(row[2]))

    def swap_keyring(self, user: str, expected: int, key_id: str, doc: bytes) -> bool:
        """Store the keyring document if its version is still `expected` (0: none)."""
        values = {"key_id": key_id, "body": doc}
        user = validate_user(user)
        return self._swap_document("memdir_keyrings", ("user_id", user), expected, values, user)

    def team(self, team: str) -> StoredTeam | None:
        """The team's policy document, None when no such team exists."""
        return self._versioned("memdir_teams", "team_id", validate_team(team))

    def swap_team(self, team: str, expected: int, doc: bytes) -> bool:
        """Store the team's policy document if its version is still `expected` (0: create)."""
        owner = team_owner(team)
        values = {"body": doc}
        return self._swap_document("memdir_teams", ("team_id", team), expected, values, owner)

    def mark_erased(self, user: str) -> None:
        """Write the user's erase marker (idempotent), after every write in flight ends."""
        validate_user(user)
        with self._conn() as conn, conn.transaction():
            self._lock_user(conn, user, shared=False)
            conn.execute(
                "INSERT INTO memdir_erased_users (user_id) VALUES (%s)"
                " ON CONFLICT (user_id) DO NOTHING",
                (user,),
            )

    def is_erased(self, user: str) -> bool:
        """True once the user's erase marker exists; always False for a team owner."""
        if is_team_owner(user):
            return False
        with self._conn() as conn:
            row = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM memdir_erased_users WHERE user_id = %s)", (user,)
            ).fetchone()
        return bool(row and row[0])

    def erase(self, user: str) -> None:
        """Delete every manifest, revision and keyring of the user; the marker stays."""
        validate_user(user)
        with self._conn() as conn, conn.transaction():
            conn.execute("DELETE FROM memdir_manifests WHERE user_id = %s", (user,))
            conn.execute("DELETE FROM memdir_revisions WHERE user_id = %s", (user,))
            conn.execute("DELETE FROM memdir_keyrings WHERE user_id = %s", (user,))

    def take_token(self, bucket: str, per_minute: int, burst: int) -> float:
        """Spend a token of `bucket` (a token bucket of `per_minute` a minute, `burst` at
        most) and return 0.0, or return the seconds until one is available. The bucket is
        a row, refilled and spent in one transaction by the database's clock, so every
        server replica draws on the same bucket."""
        rate = per_minute / 60.0
        with self._conn() as conn, conn.transaction():
            row = conn.execute(
                "INSERT INTO memdir_rate_buckets AS b (bucket, tokens, at)"
                " VALUES (%(bucket)s, %(burst)s, clock_timestamp())"
                " ON CONFLICT (bucket) DO UPDATE SET"
                " tokens = LEAST(%(burst)s, GREATEST(0, b.tokens)"
                " + %(rate)s * GREATEST(0, EXTRACT(EPOCH FROM clock_timestamp() - b.at))),"
                " at = clock_timestamp()"
                " RETURNING tokens",
                {"bucket": bucket, "burst": float(burst), "rate": rate},
            ).fetchone()
            tokens = float(row[0]) if row is not None else 0.0
            if tokens < 1.0:
                return (1.0 - tokens) / rate
            conn.execute(
                "UPDATE memdir_rate_buckets SET tokens = tokens - 1 WHERE bucket = %s", (bucket,)
            )
        return 0.0

    def close(self) -> None:
        """Close every pooled connection."""
        self._pool.close()
