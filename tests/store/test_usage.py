"""Tests for `store/usage.py`: per-machine recall counts kept outside the notes."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from memdir.store import UsageStats


def test_record_counts_each_recall_and_stamps_it(tmp_path: Path) -> None:
    usage = UsageStats(tmp_path / "memory-usage")
    usage.record("project-p1", ["a", "b"])
    usage.record("project-p1", ["a"])
    assert usage.counts("project-p1") == {"a": 2, "b": 1}
    loaded = usage.load("project-p1")
    assert loaded["a"]["last"] >= loaded["b"]["last"] > 0
    path = tmp_path / "memory-usage" / "project-p1.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text("utf-8"))["b"]["recalled"] == 1


def test_keys_are_kept_apart_and_nothing_is_written_for_no_ids(tmp_path: Path) -> None:
    usage = UsageStats(tmp_path / "memory-usage")
    usage.record("user", [])
    assert not (tmp_path / "memory-usage").exists()
    usage.record("user", iter(["x"]))
    assert usage.counts("user") == {"x": 1}
    assert usage.counts("project-other") == {}


def test_forget_drops_one_note(tmp_path: Path) -> None:
    usage = UsageStats(tmp_path / "memory-usage")
    usage.record("user", ["x", "y"])
    usage.forget("user", "x")
    assert usage.counts("user") == {"y": 1}
    usage.forget("user", "never-recorded")
    usage.forget("no-such-key", "x")
    assert usage.counts("user") == {"y": 1}


def test_a_damaged_file_reads_as_empty_and_bad_entries_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "memory-usage"
    root.mkdir()
    (root / "broken.json").write_text("{not json", encoding="utf-8")
    assert UsageStats(root).load("broken") == {}
    (root / "list.json").write_text("[1, 2]", encoding="utf-8")
    assert UsageStats(root).load("list") == {}
    mixed = {"ok": {"recalled": 3, "last": 5}, "bad": {"recalled": "3"}, "worse": 7}
    (root / "mixed.json").write_text(json.dumps(mixed), encoding="utf-8")
    usage = UsageStats(root)
    assert usage.counts("mixed") == {"ok": 3}
    usage.record("mixed", ["ok"])
    assert usage.counts("mixed") == {"ok": 4}


def test_deferred_writes_count_at_once_and_land_by_close(tmp_path: Path) -> None:
    root = tmp_path / "memory-usage"
    usage = UsageStats(root)
    usage.record("p", ["a"])  # written at once
    usage.defer()
    usage.record("p", ["a", "b"])
    usage.record("p", ["b"])
    assert usage.counts("p") == {"a": 2, "b": 2}  # what is not written yet counts too
    assert usage.load("p")["b"]["recalled"] == 2
    usage.close()
    assert UsageStats(root).counts("p") == {"a": 2, "b": 2}


def test_a_deferred_write_the_disk_refuses_is_kept_for_later(tmp_path: Path) -> None:
    root = tmp_path / "memory-usage"
    root.write_text("a file where the directory should be")
    usage = UsageStats(root)
    usage.defer()
    usage.record("p", ["a"])
    usage.flush()  # refused: kept
    assert usage.counts("p") == {"a": 1}
    root.unlink()
    usage.record("p", ["a"])
    usage.close()
    assert UsageStats(root).counts("p") == {"a": 2}


def test_a_file_changed_by_another_process_is_read_again(tmp_path: Path) -> None:
    root = tmp_path / "memory-usage"
    mine, other = UsageStats(root), UsageStats(root)
    mine.record("p", ["a"])
    assert mine.counts("p") == {"a": 1}
    other.record("p", ["a", "b"])
    assert mine.counts("p") == {"a": 2, "b": 1}
    mine.forget("p", "a")
    assert other.counts("p") == {"b": 1}


def test_a_recall_counted_before_another_process_forgot_the_note_is_not_written_after(
    tmp_path: Path,
) -> None:
    root = tmp_path / "memory-usage"
    host = UsageStats(root)
    host.record("project-k", ["walrus-f1", "heron-f2"])
    host.defer()  # a long-lived host: recalls are written behind
    host.record("project-k", ["walrus-f1"])
    UsageStats(root).forget("project-k", "walrus-f1")  # `memdir forget`, another process
    assert "walrus-f1" not in UsageStats(root).counts("project-k")
    host.close()  # writes what was counted before the note was forgotten
    assert UsageStats(root).counts("project-k") == {"heron-f2": 1}


def test_a_note_forgotten_while_the_writer_thread_flushes_stays_forgotten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    root = tmp_path / "memory-usage"
    host = UsageStats(root, coalesce=0.0)
    host.record("project-k", ["walrus-g1", "heron-g2"])
    entered, go = threading.Event(), threading.Event()
    real = UsageStats.write

    def slow(self: UsageStats, key: str, counts: dict[str, tuple[int, int, bool]]) -> None:
        if threading.current_thread().name == "memdir-usage-writer":
            entered.set()  # it took the pending counts and is about to write them
            go.wait(5)
        real(self, key, counts)

    monkeypatch.setattr(UsageStats, "write", slow)
    host.defer()
    host.record("project-k", ["walrus-g1"])
    assert entered.wait(5)
    host.forget("project-k", "walrus-g1")  # the MCP server's forget, in another thread
    go.set()
    host.close()
    assert UsageStats(root).counts("project-k") == {"heron-g2": 1}
