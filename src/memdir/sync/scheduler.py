"""The one sync coordinator per process: decides when each note directory runs a sync pass (§7.2).

It knows nothing of HTTP or notes. Each note directory is registered under a key and
synced by an injected `PassFn`; the coordinator only decides *when*:

* a local write (`touch`) runs a pass `debounce` s later; every further write pushes it
  back, but never beyond `4 × debounce` s after the first, so a steady stream still syncs;
* otherwise a directory is checked `poll` s after its last pass, the wait doubling for
  every further pass that changed nothing, up to `max_poll` (60 → 120 → 240 → 300 s);
  a pass that changed something or a local write brings it back to `poll`;
* user notes (`always=True`) are always checked; a project only while it is in use
  (`add`, `used`, `touch`) and `linger` s after — a local write or `sync_now` still
  runs it;
* at most `budget_per_minute` passes start in any sliding 60 s window across all
  directories (a budget in *passes*: one pass is about two or three requests);
  a pass over budget waits until the window frees up;
* `RateLimited` (429) pauses every directory until its Retry-After (60 s if none),
  `sync_now` included; `SyncFailed` retries that directory after `retry` s (later if the
  server asked for longer); `SyncRefused` stops it until `sync_now(key)` or
  `set_enabled(True)`; any other exception is logged and treated as transient;
* switching off aborts the pass in flight (its `threading.Event` is set) and starts no
  new one; switching on — `set_enabled(True)` or `enabled()` turning true — makes
  every directory due at once.

Passes run one at a time, in the thread that calls `tick()`: the daemon thread of
`start()`, or a test driving a fake clock.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from memdir.errors import RateLimited, SyncFailed, SyncRefused, describe

__all__ = ["DirStatus", "PassFn", "State", "SyncCoordinator"]

log = logging.getLogger("memdir.sync")

#: Runs one sync pass of directory `key`; the event is set to abort it (sync switched
#: off, coordinator stopping). Returns True when anything changed on either side.
#: Raises `RateLimited`, `SyncFailed`, `SyncRefused` or any other `MemdirError`.
PassFn = Callable[[str, threading.Event], bool]

State = Literal["idle", "scheduled", "syncing", "paused", "off", "error", "refused"]

WINDOW = 60.0
"""The sliding window, in seconds, of the pass budget."""

DEBOUNCE_CAP = 4.0
"""A burst of writes waits at most this many debounce periods after its first write."""

DEFAULT_RETRY_AFTER = 60.0
"""How long a 429 without a usable Retry-After pauses every directory."""


@dataclass(frozen=True, slots=True)
class DirStatus:
    """What one directory's sync is doing now, for status commands and the memory page.

    `next_at` and `last_ok_at` are times on the coordinator's clock; `last_error` is the
    error of the latest pass, None once a pass succeeds; `message` is for humans.
    """

    state: State
    next_at: float | None
    last_ok_at: float | None
    last_error: str | None
    message: str


@dataclass(slots=True)
class _Dir:
    """The mutable schedule of one directory; guarded by the coordinator's lock."""

    always: bool
    used_at: float
    next_check: float  # the next poll, or the retry time after a failure
    streak: int = 0  # consecutive passes that changed nothing
    touch_first: float | None = None
    touch_due: float | None = None
    forced_at: float | None = None
    retry_due: float | None = None  # a failed touch/sync_now pass, retried even when lingering
    syncing: bool = False
    refused: bool = False
    failed: bool = False
    last_ok_at: float | None = None
    last_error: str | None = None


class SyncCoordinator:
    """Schedules sync passes for every note directory of the process (see the module doc)."""

    def __init__(
        self,
        run_pass: PassFn,
        *,
        enabled: Callable[[], bool],
        clock: Callable[[], float] = time.monotonic,
        debounce: float = 3.0,
        poll: float = 60.0,
        max_poll: float = 300.0,
        retry: float = 60.0,
        linger: float = 1800.0,
        budget_per_minute: int = 20,
    ) -> None:
        if budget_per_minute < 1 or poll <= 0 or min(debounce, max_poll, retry, linger) < 0:
            raise ValueError("sync scheduling needs a budget ≥ 1, poll > 0, no negative times")
        self._run_pass = run_pass
        self._enabled = enabled
        self._clock = clock
        self._debounce = debounce
        self._poll = poll
        self._max_poll = max_poll
        self._retry = retry
        self._linger = linger
        self._budget = budget_per_minute
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._tick_lock = threading.Lock()  # one tick at a time, so one pass at a time
        self._dirs: dict[str, _Dir] = {}
        self._started: deque[float] = deque()  # start times of passes in the budget window
        self._paused_until = -math.inf
        self._on = True
        self._was_on = True
        self._abort: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._wake = False

    # -- registration and events (any thread) --------------------------------------

    def add(self, key: str, *, always: bool) -> None:
        """Register a directory (user notes: `always=True`); a new one is checked at once."""
        with self._cond:
            now = self._clock()
            d = self._dirs.get(key)
            if d is None:
                self._dirs[key] = _Dir(always=always, used_at=now, next_check=now)
            else:
                d.always = always
                d.used_at = now
            self._notify()

    def remove(self, key: str) -> None:
        """Forget a directory; its pending writes are not synced. Unknown keys are ignored."""
        with self._cond:
            self._dirs.pop(key, None)

    def touch(self, key: str) -> None:
        """Note a local write: a pass runs about `debounce` s later (one per burst)."""
        with self._cond:
            d = self._get(key)
            now = self._clock()
            if d.touch_first is None:
                d.touch_first = now
            d.touch_due = min(now + self._debounce, d.touch_first + DEBOUNCE_CAP * self._debounce)
            # The write's pass is also the check: an overdue poll must not jump the debounce.
            d.next_check = max(d.next_check, d.touch_due)
            d.used_at = now
            d.streak = 0
            self._notify()

    def used(self, key: str) -> None:
        """Note that the project is in use now; it is polled for `linger` s from here."""
        with self._cond:
            self._get(key).used_at = self._clock()
            self._notify()

    def sync_now(self, key: str | None = None) -> None:
        """Run a pass at once for `key` (None: every directory), refused ones included.

        This bypasses the poll backoff and a transient error's wait, but not a 429 pause
        (the status says so) nor the pass budget.
        """
        with self._cond:
            now = self._clock()
            targets = list(self._dirs.values()) if key is None else [self._get(key)]
            for d in targets:
                self._force(d, now)
            self._notify()

    def set_enabled(self, on: bool) -> None:
        """Switch sync on or off; off aborts the pass in flight, on makes everything due."""
        with self._cond:
            self._on = on
            if on:
                now = self._clock()
                for d in self._dirs.values():
                    self._force(d, now)
            elif self._abort is not None:
                self._abort.set()
            self._notify()

    # -- running --------------------------------------------------------------------

    def tick(self) -> float:
        """Run every due pass now, in this thread; return seconds until the next one.

        Returns `math.inf` when nothing is scheduled (sync off, or only idle projects).
        Each directory runs at most once per call, so a pass that touches its own
        directory cannot loop.
        """
        return self._tick(worker=False)

    def _tick(self, *, worker: bool) -> float:
        with self._tick_lock:
            done: set[str] = set()
            while True:
                on = self._is_on()
                with self._cond:
                    if worker and self._stopping:
                        return math.inf
                    now = self._clock()
                    if not (on and self._on):
                        self._was_on = False
                        return math.inf
                    if not self._was_on:  # switched on from outside (the switch file)
                        self._was_on = True
                        for d in self._dirs.values():
                            self._force(d, now)
                    key, wait = self._pick(now, done)
                    if key is None:
                        return wait
                    d = self._dirs[key]
                    must = not (d.touch_due is None and d.forced_at is None and d.retry_due is None)
                    d.touch_first = d.touch_due = d.forced_at = d.retry_due = None
                    d.syncing = True
                    self._started.append(now)
                    abort = threading.Event()
                    self._abort = abort
                error: Exception | None = None
                changed = False
                try:
                    changed = bool(self._run_pass(key, abort))
                except Exception as exc:
                    error = exc
                except (
                    BaseException
                ):  # KeyboardInterrupt in a caller's tick(): leave no pass "in flight"
                    with self._cond:
                        self._abort = None
                        d.syncing = False
                    raise
                with self._cond:
                    self._abort = None
                    if self._dirs.get(key) is d:
                        self._finish(d, key, abort, must, changed, error)
                done.add(key)

    def start(self) -> None:
        """Start the daemon thread that calls `tick()` (no-op when it is running)."""
        with self._cond:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stopping = False
            self._thread = threading.Thread(target=self._work, name="memdir-sync", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread: abort the pass in flight and wait up to `timeout` s for it."""
        with self._cond:
            self._stopping = True
            if self._abort is not None:
                self._abort.set()
            self._notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("sync thread did not stop within %s s", timeout)

    def status(self) -> dict[str, DirStatus]:
        """The state of every registered directory, by key."""
        on = self._is_on()
        with self._cond:
            now = self._clock()
            return {key: self._status(d, now, on and self._on) for key, d in self._dirs.items()}

    # -- internals (called with the lock held unless said otherwise) -------------------

    def _work(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
                self._wake = False
            try:
                delay = self._tick(worker=True)
            except Exception:  # the thread must outlive any bug
                log.exception("sync scheduler tick failed")
                delay = self._retry
            with self._cond:
                if self._stopping:
                    return
                if not self._wake and delay > 0:
                    # Capped so that an external switch turning sync on is noticed.
                    self._cond.wait(min(delay, self._poll))

    def _notify(self) -> None:
        self._wake = True
        self._cond.notify_all()

    def _get(self, key: str) -> _Dir:
        try:
            return self._dirs[key]
        except KeyError:
            raise KeyError(f"sync directory not registered: {key!r}") from None

    def _is_on(self) -> bool:
        """Ask the injected switch; called without the lock (it may read a file)."""
        try:
            return bool(self._enabled())
        except Exception:
            log.exception("reading the sync switch failed; treating sync as off")
            return False

    def _force(self, d: _Dir, now: float) -> None:
        d.refused = False
        if d.forced_at is None:
            d.forced_at = now

    def _gap(self, streak: int) -> float:
        return min(self._poll * 2.0 ** max(min(streak, 64) - 1, 0), self._max_poll)

    def _due(self, d: _Dir, now: float) -> float | None:
        """When `d` wants its next pass, before the 429 pause and the budget; None: never."""
        if d.syncing or d.refused:
            return None
        wanted = [t for t in (d.touch_due, d.retry_due) if t is not None]
        if d.always or now - d.used_at < self._linger:
            wanted.append(d.next_check)
        due = min(wanted) if wanted else None
        if due is not None and d.failed:
            due = max(due, d.next_check)  # a failing server is not retried sooner by writes
        if d.forced_at is not None:
            due = d.forced_at if due is None else min(due, d.forced_at)
        return due

    def _gate(self, now: float) -> float:
        """The earliest time any pass may start: after a 429 pause and within budget."""
        while self._started and self._started[0] <= now - WINDOW:
            self._started.popleft()
        gate = self._paused_until
        if len(self._started) >= self._budget:
            gate = max(gate, self._started[-self._budget] + WINDOW)
        return gate

    def _pick(self, now: float, done: set[str]) -> tuple[str | None, float]:
        gate = self._gate(now)
        best: tuple[float, str] | None = None
        soonest = math.inf
        for key, d in self._dirs.items():
            due = self._due(d, now)
            if due is None:
                continue
            soonest = min(soonest, max(due, gate))
            if key not in done and (best is None or due < best[0]):
                best = (due, key)
        if best is not None and max(best[0], gate) <= now:
            return best[1], 0.0
        return None, max(soonest - now, 0.0)

    def _finish(
        self,
        d: _Dir,
        key: str,
        abort: threading.Event,
        must: bool,
        changed: bool,
        error: Exception | None,
    ) -> None:
        now = self._clock()
        d.syncing = False
        if error is None:
            d.failed = False
            d.last_ok_at = now
            d.last_error = None
            d.streak = 0 if changed else d.streak + 1
            d.next_check = now + self._gap(d.streak)
            return
        if abort.is_set() or not self._is_on():
            # Switched off (here or through the switch file) or stopping: not a failure.
            log.info("sync pass of %s aborted: %s", key, error)
            if must:
                d.retry_due = now
            return
        if isinstance(error, RateLimited):
            delay = error.retry_after if error.retry_after is not None else DEFAULT_RETRY_AFTER
            self._paused_until = max(self._paused_until, now + max(delay, 0.0))
            log.warning("sync server rate-limited %s; pausing sync for %.0f s", key, delay)
            d.last_error = describe(error)
            d.next_check = self._paused_until
            if must:
                d.retry_due = d.next_check
            return
        if isinstance(error, SyncRefused):
            log.warning("sync of %s refused: %s", key, error)
            d.refused = True
            d.last_error = describe(error)
            return
        delay = self._retry
        if isinstance(error, SyncFailed):
            log.info("sync pass of %s failed: %s", key, error)
            if error.retry_after is not None:
                delay = max(delay, error.retry_after)
        else:
            log.error("sync pass of %s failed unexpectedly", key, exc_info=error)
        d.failed = True
        d.last_error = describe(error)
        d.next_check = now + delay
        if must:
            d.retry_due = d.next_check

    def _status(self, d: _Dir, now: float, on: bool) -> DirStatus:
        def make(state: State, next_at: float | None, message: str) -> DirStatus:
            return DirStatus(state, next_at, d.last_ok_at, d.last_error, message)

        if not on:
            return make("off", None, "sync is off")
        if d.syncing:
            return make("syncing", None, "syncing")
        if d.refused:
            return make("refused", None, d.last_error or "sync refused")
        due = self._due(d, now)
        gate = self._gate(now)
        next_at = None if due is None else max(due, gate)
        if self._paused_until > now:
            wait = _seconds(self._paused_until - now)
            return make("paused", next_at, f"syncing too often, will retry in {wait} s")
        if d.failed:
            retry = "" if next_at is None else f"; will retry in {_seconds(next_at - now)} s"
            return make("error", next_at, f"{d.last_error}{retry}")
        pending = d.touch_due is not None or d.forced_at is not None or d.retry_due is not None
        if pending or (due is not None and due <= now):
            if next_at is not None and gate > now and next_at == gate:
                wait = _seconds(gate - now)
                message = f"waiting for the sync budget ({self._budget} passes a minute), {wait} s"
            elif next_at is not None and next_at > now:
                message = f"will sync in {_seconds(next_at - now)} s"
            else:
                message = "will sync now"
            return make("scheduled", next_at, message)
        return make("idle", next_at, "in sync" if d.last_ok_at is not None else "not synced yet")


def _seconds(delta: float) -> int:
    """Whole seconds for humans, rounded up so "in 0 s" never shows while still waiting."""
    return max(1, math.ceil(delta))
