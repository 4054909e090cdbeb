"""A worker thread that fills missing vectors, so queries in a long-lived host never wait.

The `Retriever` wakes it whenever a refresh or a query finds chunks without a vector;
it then embeds one batch at a time (each batch stored in its own transaction by the
index, which serialises it with the queries on the same connection) until the scope has
none left. A failing batch stops the scope until it is woken again; the step says why.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["VectorFiller"]

_log = logging.getLogger(__name__)
_K = TypeVar("_K", bound=Hashable)


class VectorFiller(Generic[_K]):
    """Runs `step(item)` in a daemon thread until it returns 0, for every item woken.

    `step` embeds one batch of an item's pending chunks and returns how many it stored
    (0: nothing left, or it cannot go on now). Items are keyed by `key`, so waking an
    item that is already queued does nothing.
    """

    def __init__(self, step: Callable[[_K], int], *, name: str = "memdir-vectors") -> None:
        self._step = step
        self._name = name
        self._queue: dict[_K, None] = {}
        self._cond = threading.Condition()
        self._stopped = False
        self._busy = False
        self._thread: threading.Thread | None = None

    @property
    def thread(self) -> threading.Thread | None:
        """The worker thread (None before `start`)."""
        return self._thread

    def start(self) -> None:
        """Start the worker thread (once)."""
        with self._cond:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the batch in progress (its vectors are kept); wait up to `timeout`."""
        with self._cond:
            self._stopped = True
            self._queue.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def wake(self, item: _K) -> None:
        """Have `item`'s pending chunks embedded (soon, in the worker thread)."""
        with self._cond:
            if self._stopped:
                return
            self._queue[item] = None
            self._cond.notify_all()

    def idle(self) -> bool:
        """Whether nothing is queued or being embedded right now."""
        with self._cond:
            return not self._queue and not self._busy

    def wait_idle(self, timeout: float) -> bool:
        """Wait until the worker has nothing queued or in progress; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._stopped or bool(self._queue))
                if self._stopped:
                    self._busy = False
                    self._cond.notify_all()
                    return
                item = next(iter(self._queue))
                del self._queue[item]
                self._busy = True
            try:
                while not self._stopped and self._step(item) > 0:
                    pass
            except Exception:  # a bug in a step must not end the thread for every scope
                _log.exception("filling vectors failed")
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
