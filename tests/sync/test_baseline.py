"""The per-scope sync state database (`memdir.sync.baseline`)."""

from __future__ import annotations

import threading
from pathlib import Path

from memdir.sync.baseline import Baseline


def test_a_baseline_opened_in_one_thread_serves_calls_from_another(tmp_path: Path) -> None:
    # The MCP server runs each tool call in a worker thread, one at a time: the sync state
    # a first call opened (for the held-note check) is read again by later calls.
    baseline = Baseline(tmp_path / "user.sqlite")
    seen: list[object] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:
            seen.append(baseline.conflicts())
        except BaseException as exc:  # pragma: no cover - the failure being tested
            errors.append(exc)

    worker = threading.Thread(target=read)
    worker.start()
    worker.join()
    baseline.close()
    assert errors == []
    assert seen == [[]]
