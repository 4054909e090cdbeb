"""Switching sync off stops a pass between requests; what the server accepted stays there."""

from __future__ import annotations

from typing import Any

import pytest

from memdir import SyncFailed, SyncRefused
from memdir.sync.client import SyncClient

from .conftest import Pair


@pytest.mark.server_args("--max-changes", "5")
def test_switch_off_during_a_pass_stops_before_the_next_commit(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair.a, pair.b
    for i in range(12):
        a.remember(f"Offline note number {i}", body=f"body {i}", scope="user")
    original = SyncClient.commit
    commits: list[int] = []

    def commit_then_switch_off(self: SyncClient, request: Any) -> Any:
        result = original(self, request)
        commits.append(len(request.changes))
        a.sync.switch(False)  # as if `memdir sync off` ran in another terminal
        return result

    monkeypatch.setattr(SyncClient, "commit", commit_then_switch_off)
    with pytest.raises(SyncFailed, match="switched off"):
        a.sync.run()
    assert commits == [5]
    with pytest.raises(SyncRefused, match="sync is off"):
        a.sync.run()
    monkeypatch.setattr(SyncClient, "commit", original)

    b.sync.run()
    assert len(b.notes.list(scope="user")) == 5  # accepted before the switch stays
    assert len(a.notes.list(scope="user")) == 12  # nothing local was touched

    a.sync.switch(True)
    a.sync.run()
    b.sync.run()
    assert sorted(n.summary for n in b.notes.list(scope="user")) == sorted(
        n.summary for n in a.notes.list(scope="user")
    )
