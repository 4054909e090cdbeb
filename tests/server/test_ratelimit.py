"""Tests for `server/ratelimit.py`: per-account token buckets with an injected clock."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memdir.server.ratelimit import RateLimiter, retry_after_header


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_is_allowed_then_the_wait_is_told() -> None:
    clock = Clock()
    limiter = RateLimiter(per_minute=60, burst=3, clock=clock)
    assert [limiter.check("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.check("a") == pytest.approx(1.0)
    clock.now += 0.5
    assert limiter.check("a") == pytest.approx(0.5)
    clock.now += 0.5
    assert limiter.check("a") == 0.0


def test_accounts_have_their_own_buckets() -> None:
    clock = Clock()
    limiter = RateLimiter(per_minute=60, burst=1, clock=clock)
    assert limiter.check("a") == 0.0
    assert limiter.check("a") > 0
    assert limiter.check("b") == 0.0


def test_a_bucket_refills_up_to_the_burst_only() -> None:
    clock = Clock()
    limiter = RateLimiter(per_minute=60, burst=2, clock=clock)
    limiter.check("a")
    limiter.check("a")
    clock.now += 3600 * 5  # long idle: the bucket is forgotten or full, never more
    assert [limiter.check("a") for _ in range(3)][:2] == [0.0, 0.0]
    assert limiter.check("a") > 0


def test_rate_zero_switches_limiting_off() -> None:
    limiter = RateLimiter(per_minute=0, burst=1, clock=Clock())
    assert all(limiter.check("a") == 0.0 for _ in range(100))


@pytest.mark.parametrize(("per_minute", "burst"), [(-1, 1), (10, 0)])
def test_bad_settings_are_refused(per_minute: int, burst: int) -> None:
    with pytest.raises(ValueError):
        RateLimiter(per_minute=per_minute, burst=burst)


@pytest.mark.parametrize(("wait", "header"), [(0.0, "1"), (0.2, "1"), (1.0, "1"), (1.01, "2")])
def test_retry_after_is_whole_seconds_at_least_one(wait: float, header: str) -> None:
    assert retry_after_header(wait) == header


@pytest.mark.parametrize("backend", ["postgres", "s3"])
def test_replicas_share_one_bucket_per_account(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """Two storage instances stand for two server replicas: the burst is spent once
    between them, and the wait is told."""
    from memdir.server.ratelimit import BucketStore, SharedRateLimiter
    from memdir.server.storage.base import Storage

    def open_one() -> Storage:
        if backend == "postgres":
            from memdir.server.storage.postgres import PostgresStorage

            return PostgresStorage(request.getfixturevalue("pg_database_dsn"))
        from memdir.server.storage.s3 import S3Storage

        endpoint, bucket, prefix = request.getfixturevalue("s3_bucket")
        return S3Storage(endpoint, bucket, prefix=prefix)

    first, second = open_one(), open_one()
    try:
        assert isinstance(first, BucketStore) and isinstance(second, BucketStore)
        one = SharedRateLimiter(first, per_minute=6, burst=3)
        two = SharedRateLimiter(second, per_minute=6, burst=3)
        started = time.monotonic()
        assert [one.check("a"), two.check("a"), one.check("a")] == [0.0, 0.0, 0.0]
        waits = [two.check("a"), one.check("a")]
        # A token every 10 s: the wait is what is left of it (however slow the backend).
        low = 10.0 - (time.monotonic() - started) - 0.5
        assert all(low < w <= 10.0 for w in waits), (waits, low)
        assert two.check("b") == 0.0  # another account's bucket is full
        assert SharedRateLimiter(first, per_minute=0, burst=1).check("a") == 0.0
    finally:
        first.close()
        second.close()


def test_three_replicas_let_a_burst_through_once(tmp_path: Path, pg_database_dsn: str) -> None:
    """Requests spread over three server processes, none waiting for Retry-After: the
    account gets its burst once, not once per replica."""
    import contextlib

    import httpx

    from sync_server import add_user, auth_headers, running_server

    token = add_user(tmp_path, "alice", backend="postgres", dsn=pg_database_dsn)
    args = ["--rate-limit", "1", "--rate-burst", "3"]  # a token a minute: none refills here
    with contextlib.ExitStack() as stack:
        urls = [
            stack.enter_context(
                running_server(
                    tmp_path / f"replica-{n}",
                    backend="postgres",
                    dsn=pg_database_dsn,
                    extra_args=args,
                )
            ).url
            for n in range(3)
        ]
        statuses = [
            httpx.get(f"{urls[n % 3]}/v1/memory/identity", headers=auth_headers(token)).status_code
            for n in range(9)
        ]
    assert statuses.count(200) == 3 and statuses.count(429) == 6, statuses


def test_a_clock_step_back_leaves_no_debt(pg_database_dsn: str) -> None:
    """A bucket stamped in the future (the database's clock stepped back) refills from
    what it held, never from below zero."""
    import psycopg

    from memdir.server.ratelimit import SharedRateLimiter
    from memdir.server.storage.postgres import PostgresStorage

    storage = PostgresStorage(pg_database_dsn)
    try:
        limiter = SharedRateLimiter(storage, per_minute=60, burst=2)
        assert limiter.check("a") == 0.0
        with psycopg.connect(pg_database_dsn, autocommit=True) as conn:
            conn.execute(
                "UPDATE memdir_rate_buckets SET at = clock_timestamp() + interval '1 hour'"
            )
        assert limiter.check("a") == 0.0  # the one token left is still there
        assert 0.0 < limiter.check("a") <= 1.0  # then a second's wait, not an hour's
    finally:
        storage.close()
