"""Tests for the hash-chained audit log (memdir.store.audit) on real files."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import multiprocessing
import os
import stat
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.errors import Busy, IntegrityError, InvalidInput
from memdir.store.audit import (
    ACTIONS,
    CONTENT_FIELDS,
    FIELDS,
    GENESIS,
    MAX_VALUE_CHARS,
    AuditEntry,
    AuditLog,
    AuditReport,
)

# -- helpers ----------------------------------------------------------------------------------


def spec_hash(obj: dict[str, Any]) -> str:
    """The entry hash exactly as the spec words it, computed independently of the module."""
    body = {key: obj[key] for key in ("seq", "ts", "action", "fields", "prev")}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def dump_line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def read_lines(log: AuditLog) -> list[bytes]:
    return log.log_path.read_bytes().splitlines(keepends=True)


def write_lines(log: AuditLog, lines: list[bytes]) -> None:
    log.log_path.write_bytes(b"".join(lines))


def make_log(directory: Path, count: int = 10) -> AuditLog:
    log = AuditLog(directory)
    for n in range(1, count + 1):
        log.append("write", scope="project", note_id=f"note-{n}", revision=n, note_hash="ab" * 32)
    return log


def problems_text(log: AuditLog) -> str:
    report = log.verify()
    assert not report.ok
    assert report.problems
    return "\n".join(report.problems)


# -- round trip -------------------------------------------------------------------------------


def test_append_and_entries_round_trip(tmp_path: Path) -> None:
    ticks = iter(range(1000, 2000))
    log = AuditLog(tmp_path / "audit", clock=lambda: next(ticks))
    first = log.append("write", scope="project", note_id="a", revision=1, note_hash="f" * 64)
    second = log.append("forget", note_id="a", reason="user asked", count=1, detail=None)
    third = log.append("sync-commit", origin="laptop", detail="héllo ✓")

    assert log.entries() == [first, second, third]
    assert [e.seq for e in (first, second, third)] == [1, 2, 3]
    assert [e.ts for e in (first, second, third)] == [1000, 1001, 1002]
    assert first.prev == GENESIS
    assert second.prev == first.hash and third.prev == second.hash
    assert dict(second.fields) == {
        "count": 1,
        "detail": None,
        "note_id": "a",
        "reason": "user asked",
    }

    lines = read_lines(log)
    assert len(lines) == 3 and all(line.endswith(b"\n") for line in lines)
    for line, entry in zip(lines, (first, second, third), strict=True):
        obj = json.loads(line)
        assert list(obj) == ["seq", "ts", "action", "fields", "prev", "hash"]
        assert obj["hash"] == spec_hash(obj) == entry.hash
        assert line == dump_line(obj)  # compact separators, fixed key order
    assert "héllo ✓".encode() in lines[2]  # ensure_ascii=False

    head = json.loads(log.head_path.read_bytes())
    assert set(head) == {"seq", "hash", "ts", "key", "sig"}
    assert (head["seq"], head["hash"], head["ts"]) == (3, third.hash, 1002)


def test_verify_ok_reports_the_head(tmp_path: Path) -> None:
    log = make_log(tmp_path, 5)
    report = log.verify()
    assert report.ok and report.problems == ()
    assert report.entries == 5
    assert report.head_seq == 5
    assert report.head_hash == log.entries()[-1].hash
    report.raise_if_failed()  # no exception


def test_missing_log_and_head_is_ok_and_verify_creates_nothing(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit")
    report = log.verify()
    assert report.ok and report.entries == 0 and report.head_seq == 0
    assert report.head_hash == GENESIS
    assert log.entries() == []
    assert not (tmp_path / "audit").exists()


def test_directory_is_private_and_files_are_0600(tmp_path: Path) -> None:
    log = make_log(tmp_path / "home" / "audit", 1)
    assert stat.S_IMODE(log.directory.stat().st_mode) == 0o700
    for path in (log.log_path, log.head_path, log.lock_path, log.key.path):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    leftovers = [p.name for p in log.directory.iterdir()]
    assert sorted(leftovers) == ["audit.head", "audit.jsonl", "audit.key", "audit.lock"]


def test_entries_are_immutable(tmp_path: Path) -> None:
    entry = make_log(tmp_path, 1).entries()[0]
    with pytest.raises(TypeError):
        entry.fields["note_id"] = "x"  # type: ignore[index]
    with pytest.raises(AttributeError):
        entry.seq = 2  # type: ignore[misc]


# -- content guard ----------------------------------------------------------------------------


def test_unknown_action_refused(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    with pytest.raises(InvalidInput, match="unknown audit action 'edit'"):
        log.append("edit", note_id="a")
    assert not log.log_path.exists()


def test_every_listed_action_and_field_is_accepted(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    for action in sorted(ACTIONS):
        log.append(action, **{key: "x" for key in FIELDS})
    assert log.verify().ok and len(log.entries()) == len(ACTIONS)


def test_unknown_field_refused(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    with pytest.raises(InvalidInput, match="unknown audit field 'title'"):
        log.append("write", note_id="a", title="secret plans")
    assert not log.log_path.exists()


@pytest.mark.parametrize("name", sorted(CONTENT_FIELDS))
def test_content_field_names_refused(tmp_path: Path, name: str) -> None:
    log = AuditLog(tmp_path)
    with pytest.raises(InvalidInput, match="never hold note content"):
        log.append("write", note_id="a", **{name: "the note itself"})
    assert not log.log_path.exists()


@pytest.mark.parametrize(
    "value",
    [1.5, True, b"bytes", ["list"], {"a": 1}, 2**63, -(2**63) - 1, "x" * (MAX_VALUE_CHARS + 1)],
    ids=["float", "bool", "bytes", "list", "dict", "int-high", "int-low", "too-long"],
)
def test_bad_values_refused(tmp_path: Path, value: object) -> None:
    log = AuditLog(tmp_path)
    with pytest.raises(InvalidInput, match="'reason'"):
        log.append("write", reason=value)  # type: ignore[arg-type]
    assert not log.log_path.exists()


def test_lone_surrogate_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="UTF-8"):
        AuditLog(tmp_path).append("write", reason="\ud800")


def test_limits_are_inclusive(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    log.append("write", reason="x" * MAX_VALUE_CHARS, count=2**63 - 1, revision=-(2**63))
    assert log.verify().ok


@pytest.mark.parametrize("timeout", [-1.0, float("nan"), float("inf")])
def test_bad_lock_timeout_refused(tmp_path: Path, timeout: float) -> None:
    with pytest.raises(InvalidInput):
        AuditLog(tmp_path, lock_timeout=timeout)


def test_bad_clock_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="clock"):
        AuditLog(tmp_path, clock=lambda: -5).append("write")


# -- tamper detection ---------------------------------------------------------------------------


def test_edited_field_detected(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    lines = read_lines(log)
    lines[6] = lines[6].replace(b'"note-7"', b'"note-X"')
    write_lines(log, lines)
    assert "line 7: entry hash does not match its content (edited)" in problems_text(log)


def test_edited_line_with_recomputed_hash_detected(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    lines = read_lines(log)
    obj = json.loads(lines[4])
    obj["fields"]["note_id"] = "forged"
    obj["hash"] = spec_hash(obj)
    lines[4] = dump_line(obj)
    write_lines(log, lines)
    assert "line 6: prev does not name the hash" in problems_text(log)


def test_deleted_middle_line_detected(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    lines = read_lines(log)
    del lines[4]
    write_lines(log, lines)
    text = problems_text(log)
    assert "line 5: seq 5 expected, found 6 (entries removed)" in text
    assert "line 5: prev does not name the hash" in text


def test_swapped_lines_detected(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    lines = read_lines(log)
    lines[3], lines[4] = lines[4], lines[3]
    write_lines(log, lines)
    text = problems_text(log)
    assert "line 4: seq 4 expected, found 5" in text
    assert "line 5: seq 6 expected, found 4 (entries reordered or duplicated)" in text


def test_forged_insert_with_recomputed_hash_but_wrong_prev_detected(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    lines = read_lines(log)
    forged = {"seq": 5, "ts": 1, "action": "grant", "fields": {"grant_id": "g"}, "prev": "1" * 64}
    forged["hash"] = spec_hash(forged)
    lines.insert(4, dump_line(forged))
    write_lines(log, lines)
    text = problems_text(log)
    assert "line 5: prev does not name the hash of the entry before it" in text
    assert "line 6: seq 6 expected, found 5" in text


def test_forged_insert_with_correct_prev_detected_by_the_next_link(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    lines = read_lines(log)
    before = json.loads(lines[3])
    forged = {"seq": 5, "ts": 1, "action": "revoke", "fields": {}, "prev": before["hash"]}
    forged["hash"] = spec_hash(forged)
    lines.insert(4, dump_line(forged))
    write_lines(log, lines)
    assert "line 6: prev does not name the hash" in problems_text(log)


def test_truncated_tail_detected_relative_to_head(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    write_lines(log, read_lines(log)[:7])
    assert problems_text(log) == "head file names seq 10 but log ends at 7 (truncated)"


def test_tail_cut_mid_line_detected(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    data = log.log_path.read_bytes()
    log.log_path.write_bytes(data[:-20])
    assert "head file names seq 3 but log ends at 2 (truncated)" in problems_text(log)


@pytest.mark.parametrize(
    "edit",
    [
        lambda head: {**head, "hash": "0" * 64},
        lambda head: {**head, "seq": head["seq"] - 1},
        lambda head: {**head, "seq": head["seq"] + 1},
        lambda head: {**head, "extra": 1},
    ],
    ids=["hash", "seq-down", "seq-up", "extra-key"],
)
def test_edited_head_detected(tmp_path: Path, edit: Any) -> None:
    log = make_log(tmp_path, 4)
    head = json.loads(log.head_path.read_bytes())
    log.head_path.write_text(json.dumps(edit(head), sort_keys=True, separators=(",", ":")) + "\n")
    assert problems_text(log).startswith("head file")


@pytest.mark.parametrize("raw", [b"", b"garbage", b"[]", b'{"seq": 4}', b"\xff\xfe"])
def test_garbled_head_detected(tmp_path: Path, raw: bytes) -> None:
    log = make_log(tmp_path, 4)
    log.head_path.write_bytes(raw)
    assert "head file" in problems_text(log)


def test_rolled_back_head_detected(tmp_path: Path) -> None:
    ticks = iter(range(1000, 2000))
    log = AuditLog(tmp_path, clock=lambda: next(ticks))
    for _ in range(2):
        log.append("write", note_id="early")
    old_head = log.head_path.read_bytes()
    for _ in range(3):
        log.append("write", note_id="later")
    log.head_path.write_bytes(old_head)
    assert "head file names seq 2 but the log runs to 5" in problems_text(log)


def test_missing_or_empty_log_with_head_detected(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    log.log_path.write_bytes(b"")
    assert problems_text(log) == "head file names seq 3 but the log is empty (truncated)"
    log.log_path.unlink()
    assert "log file is missing" in problems_text(log)


def test_deleted_head_detected_once_the_log_has_several_lines(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    log.head_path.unlink()
    assert "head file is missing" in problems_text(log)


def test_failed_verify_raises_only_when_asked(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    write_lines(log, read_lines(log)[:1])
    report = log.verify()  # no exception
    with pytest.raises(IntegrityError, match="truncated"):
        report.raise_if_failed()


def test_entries_raises_on_unparseable_line(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    lines = read_lines(log)
    lines[1] = b"not json\n"
    write_lines(log, lines)
    with pytest.raises(IntegrityError, match="line 2"):
        log.entries()
    assert "line 2: line is not valid JSON" in problems_text(log)


def test_non_canonical_but_equivalent_line_detected(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    log.append("write", reason="a\x1fb")
    data = log.log_path.read_bytes()
    assert b"\\u001f" in data
    log.log_path.write_bytes(data.replace(b"\\u001f", b"\\u001F"))
    assert log.entries()[0].fields["reason"] == "a\x1fb"  # same content, different bytes
    assert "not in canonical form" in problems_text(log)


# -- crash recovery -----------------------------------------------------------------------------


def test_torn_last_line_is_ignored_then_moved_aside(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    fragment = b'{"seq":4,"ts":17,"action":"wri'
    with log.log_path.open("ab") as handle:  # a crash mid-write
        handle.write(fragment)

    report = log.verify()
    assert report.ok, report.problems  # the head does not name the torn entry
    assert report.entries == 3
    assert len(log.entries()) == 3

    entry = log.append("write", note_id="after-crash")
    assert entry.seq == 4 and entry.prev == log.entries()[2].hash
    torn = sorted(log.directory.glob("audit.jsonl.torn-*"))
    assert len(torn) == 1 and torn[0].read_bytes() == fragment
    assert stat.S_IMODE(torn[0].stat().st_mode) == 0o600
    assert fragment not in log.log_path.read_bytes()
    report = log.verify()
    assert report.ok and report.entries == 4 and report.head_seq == 4

    # A second torn line later is kept in its own file, never overwriting the first.
    with log.log_path.open("ab") as handle:
        handle.write(b"\x00\x00\x00")
    log.append("write", note_id="again")
    assert len(list(log.directory.glob("audit.jsonl.torn-*"))) == 2
    assert log.verify().ok


def test_torn_first_append_recovers(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    log.log_path.write_bytes(b'{"seq":1,"ts"')  # the very first append crashed
    assert log.verify().ok and log.entries() == []
    assert log.append("write").seq == 1
    assert log.verify().ok


def test_crash_between_log_and_head_is_not_a_problem(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    head_before = log.head_path.read_bytes()
    log.append("write", note_id="durable-but-unheaded")
    log.head_path.write_bytes(head_before)  # as if the crash hit before the head was replaced
    assert log.verify().ok
    assert log.append("write").seq == 5
    assert log.verify().ok


def test_first_append_crash_before_head_is_not_a_problem(tmp_path: Path) -> None:
    log = make_log(tmp_path, 1)
    # As if the very first append crashed before its head: no head, the key still pending.
    log.head_path.unlink()
    log.key.path.rename(log.key.pending_path)
    assert log.verify().ok
    assert log.append("write").seq == 2
    assert log.verify().ok


def test_torn_line_the_head_names_stays_reported_after_the_next_append(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    data = log.log_path.read_bytes()
    log.log_path.write_bytes(data[:-15])  # entry 3 lost its end: not a crash, the head names it
    assert "head file names seq 3 but log ends at 2 (truncated)" in problems_text(log)

    entry = log.append("write", note_id="next")
    assert entry.seq == 4  # chained from the head, so the gap is kept visible
    assert len(list(log.directory.glob("audit.jsonl.torn-*"))) == 1
    assert "line 3: seq 3 expected, found 4 (entries removed)" in problems_text(log)


def test_append_after_log_deleted_keeps_the_gap_visible(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    log.log_path.unlink()
    assert log.append("write").seq == 4
    assert "line 1: seq 1 expected, found 4 (entries removed)" in problems_text(log)


def test_append_refuses_to_chain_from_garbage_without_a_head(tmp_path: Path) -> None:
    log = make_log(tmp_path, 2)
    log.head_path.unlink()
    write_lines(log, [*read_lines(log)[:1], b"garbage\n"])
    with pytest.raises(IntegrityError, match="cannot append"):
        log.append("write")


def test_append_after_garbled_last_line_chains_from_the_head(tmp_path: Path) -> None:
    log = make_log(tmp_path, 2)
    write_lines(log, [*read_lines(log)[:1], b"garbage\n"])
    assert log.append("write").seq == 3
    text = problems_text(log)
    assert "line 2: line is not valid JSON" in text
    assert "line 3" not in text  # the chain resumes where the head said


# -- concurrency --------------------------------------------------------------------------------


def _append_many(directory: str, worker: int, count: int, start: Any) -> None:
    start.wait(30)
    log = AuditLog(Path(directory), lock_timeout=60)
    for n in range(count):
        log.append("write", note_id=f"w{worker}-{n}", origin=str(os.getpid()))


def test_concurrent_appends_from_four_processes(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    procs = [
        context.Process(target=_append_many, args=(str(tmp_path), worker, 50, start))
        for worker in range(4)
    ]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(120)
    assert [proc.exitcode for proc in procs] == [0, 0, 0, 0]

    log = AuditLog(tmp_path)
    report = log.verify()
    assert report.ok, report.problems
    assert report.entries == 200 and report.head_seq == 200
    entries = log.entries()
    assert [e.seq for e in entries] == list(range(1, 201))
    assert {e.fields["note_id"] for e in entries} == {
        f"w{w}-{n}" for w in range(4) for n in range(50)
    }
    assert len({e.fields["origin"] for e in entries}) == 4
    # The first appends raced to make the key: one was made, and it signed the head.
    assert report.signature == "signed" and report.key == log.key.public_key()
    assert not log.key.pending_path.exists()


def test_concurrent_appends_from_threads(tmp_path: Path) -> None:
    def work(worker: int) -> None:
        log = AuditLog(tmp_path)
        for n in range(25):
            log.append("write", note_id=f"t{worker}-{n}")

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report = AuditLog(tmp_path).verify()
    assert report.ok and report.entries == 100


def test_lock_timeout_raises_busy(tmp_path: Path) -> None:
    log = make_log(tmp_path, 1)
    fd = os.open(log.lock_path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        started = time.monotonic()
        with pytest.raises(Busy, match="audit log"):
            AuditLog(tmp_path, lock_timeout=0.2).append("write")
        assert 0.15 < time.monotonic() - started < 5
    finally:
        os.close(fd)
    assert AuditLog(tmp_path, lock_timeout=0.2).append("write").seq == 2


# -- properties ---------------------------------------------------------------------------------

_values = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=40),
)
_appends = st.lists(
    st.tuples(
        st.sampled_from(sorted(ACTIONS)),
        st.dictionaries(st.sampled_from(sorted(FIELDS)), _values, max_size=4),
    ),
    min_size=1,
    max_size=6,
)
_property = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _fill(
    directory: Path, appends: list[tuple[str, dict[str, Any]]]
) -> tuple[AuditLog, list[AuditEntry]]:
    log = AuditLog(directory)
    return log, [log.append(action, **fields) for action, fields in appends]


@_property
@given(appends=_appends)
def test_any_sequence_of_valid_appends_verifies(appends: list[tuple[str, dict[str, Any]]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log, written = _fill(Path(tmp), appends)
        report = log.verify()
        assert report.ok, report.problems
        assert report.entries == len(appends)
        assert log.entries() == written
        assert [dict(e.fields) for e in written] == [fields for _, fields in appends]


@_property
@given(appends=_appends, data=st.data())
def test_any_single_byte_change_is_detected(
    appends: list[tuple[str, dict[str, Any]]], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log, _ = _fill(Path(tmp), appends)
        raw = bytearray(log.log_path.read_bytes())
        index = data.draw(st.integers(0, len(raw) - 1), label="index")
        byte = data.draw(st.integers(0, 255).filter(lambda b: b != raw[index]), label="byte")
        raw[index] = byte
        log.log_path.write_bytes(bytes(raw))
        report = log.verify()  # never raises on damage
        assert not report.ok
        with contextlib.suppress(IntegrityError):  # entries() may raise, never anything else
            log.entries()


@settings(max_examples=100, deadline=None)
@given(log_bytes=st.binary(max_size=300), head_bytes=st.one_of(st.none(), st.binary(max_size=80)))
def test_verify_never_raises_on_garbage(log_bytes: bytes, head_bytes: bytes | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = AuditLog(Path(tmp))
        log.log_path.write_bytes(log_bytes)
        if head_bytes is not None:
            log.head_path.write_bytes(head_bytes)
        report = log.verify()
        assert report.ok == (not report.problems)


# -- the verification report --------------------------------------------------------------------


def test_audit_report_raises_only_when_failed() -> None:
    AuditReport(True, 4, 4, "h", ()).raise_if_failed()
    failed = AuditReport(False, 4, 3, "h", ("entry 2: bad hash", "head mismatch"))
    with pytest.raises(IntegrityError) as info:
        failed.raise_if_failed()
    assert str(info.value) == ("audit log failed verification: entry 2: bad hash; head mismatch")
