"""A per-account token bucket: the sync server's only state between requests.

Each account may make `per_minute` requests a minute on average and `burst` in a
row. `check` spends one token, or says how many seconds until one is available
(the 429 answer's `Retry-After`). A rate of 0 switches limiting off.

`RateLimiter` keeps the buckets in this process. `SharedRateLimiter` keeps them in the
storage backend (a PostgreSQL row, or an S3 object replaced by compare-and-swap), so
that several server replicas behind one proxy allow an account the same requests as
one server would; its `check` blocks on the backend, so the app calls it from a worker
thread (`blocking`).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = [
    "DEFAULT_BURST",
    "DEFAULT_PER_MINUTE",
    "BucketStore",
    "Limiter",
    "RateLimiter",
    "SharedRateLimiter",
    "retry_after_header",
]

DEFAULT_PER_MINUTE = 120
DEFAULT_BURST = 30
#: Buckets idle this long (at least) are forgotten.
_FORGET_AFTER_S = 3600.0


def retry_after_header(wait: float) -> str:
    """The `Retry-After` value for a wait in seconds: whole seconds, at least 1."""
    return str(max(1, math.ceil(wait)))


class Limiter(Protocol):
    """What the app needs of a rate limiter."""

    #: True when `check` waits on I/O (call it from a worker thread).
    blocking: bool

    def check(self, key: str) -> float:
        """Spend a token of `key` and return 0.0, or the seconds to wait."""
        ...


@runtime_checkable
class BucketStore(Protocol):
    """Token buckets kept where every replica sees them (`PostgresStorage`, `S3Storage`)."""

    def take_token(self, bucket: str, per_minute: int, burst: int) -> float:
        """Spend a token of `bucket` and return 0.0, or the seconds until one is there."""
        ...


class SharedRateLimiter:
    """Token buckets in a `BucketStore`, shared by every server replica using it."""

    blocking = True

    def __init__(
        self, store: BucketStore, per_minute: int = DEFAULT_PER_MINUTE, burst: int = DEFAULT_BURST
    ) -> None:
        _check_limits(per_minute, burst)
        self.store = store
        self.per_minute = per_minute
        self.burst = burst

    def check(self, key: str) -> float:
        """Spend a token of `key`'s bucket and return 0.0, or return the seconds to wait."""
        if self.per_minute == 0:
            return 0.0
        return self.store.take_token(key, self.per_minute, self.burst)


def _check_limits(per_minute: int, burst: int) -> None:
    if per_minute < 0 or burst < 1:
        raise ValueError("per_minute must be >= 0 and burst >= 1")


class RateLimiter:
    """Token buckets keyed by account; thread-safe; `clock` returns seconds (monotonic)."""

    blocking = False

    def __init__(
        self,
        per_minute: int = DEFAULT_PER_MINUTE,
        burst: int = DEFAULT_BURST,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        _check_limits(per_minute, burst)
        self.per_minute = per_minute
        self.burst = burst
        self._rate = per_minute / 60.0
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)
        self._swept = clock()
        # A bucket is full again after burst/rate seconds; forgetting it sooner would refill it.
        self._forget = max(_FORGET_AFTER_S, burst / self._rate) if self._rate else _FORGET_AFTER_S

    def check(self, key: str) -> float:
        """Spend a token of `key`'s bucket and return 0.0, or return the seconds to wait."""
        if self._rate == 0:
            return 0.0
        now = self._clock()
        with self._lock:
            if now - self._swept > self._forget:
                self._sweep(now)
            tokens, at = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - at) * self._rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self._rate

    def _sweep(self, now: float) -> None:
        self._swept = now
        for key, (_, at) in list(self._buckets.items()):
            if now - at > self._forget:
                del self._buckets[key]
