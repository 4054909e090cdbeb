"""Tests for the signed audit head (memdir.store.signing, memdir.store.audit) on real files."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import os
import random
import shutil
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.errors import IntegrityError, InvalidInput, NotFound
from memdir.store.audit import AuditHead, AuditLog, load_head
from memdir.store.signing import key_id

# -- helpers ----------------------------------------------------------------------------------


def spec_hash(obj: dict[str, Any]) -> str:
    body = {key: obj[key] for key in ("seq", "ts", "action", "fields", "prev")}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def dump_line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def canonical(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def make_log(directory: Path, count: int = 6, **kwargs: Any) -> AuditLog:
    """A log whose appends each get their own ts (a batch shares one)."""
    kwargs.setdefault("clock", itertools.count(1_000_000).__next__)
    log = AuditLog(directory, **kwargs)
    for n in range(1, count + 1):
        log.append("write", scope="project", note_id=f"note-{n}", revision=n)
    return log


def lines_of(log: AuditLog) -> list[bytes]:
    return log.log_path.read_bytes().splitlines(keepends=True)


def head_obj(log: AuditLog) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(log.head_path.read_bytes())
    return obj


def write_head(log: AuditLog, obj: dict[str, Any]) -> None:
    log.head_path.write_bytes(canonical(obj) + b"\n")


def problems(log: AuditLog, **kwargs: Any) -> str:
    report = log.verify(**kwargs)
    assert not report.ok and report.problems
    return "\n".join(report.problems)


def forge_chain(log: AuditLog, keep: int, extra: int = 0) -> dict[str, Any]:
    """Keep the first ``keep`` entries, append ``extra`` forged ones with every hash recomputed
    (an internally consistent log); return the new last entry."""
    objs = [json.loads(line) for line in lines_of(log)[:keep]]
    for _ in range(extra):
        prev = objs[-1]
        forged = {
            "seq": prev["seq"] + 1,
            "ts": prev["ts"],
            "action": "grant",
            "fields": {"grant_id": "forged"},
            "prev": prev["hash"],
        }
        forged["hash"] = spec_hash(forged)
        objs.append(forged)
    log.log_path.write_bytes(b"".join(dump_line(obj) for obj in objs))
    return objs[-1]


def sign_with(private: Ed25519PrivateKey, seq: int, digest: str, ts: int) -> dict[str, Any]:
    """A head signed exactly as docs/audit.md words it, computed independently of the module."""
    payload = b"memdir audit head v1\n" + canonical({"hash": digest, "seq": seq, "ts": ts})
    public = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return {
        "seq": seq,
        "hash": digest,
        "ts": ts,
        "key": public.hex(),
        "sig": private.sign(payload).hex(),
    }


def write_pem(path: Path, private: Ed25519PrivateKey) -> None:
    path.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def secret_forms(key_path: Path) -> list[str]:
    """Every spelling of the private key that could leak into text."""
    pem = key_path.read_bytes()
    private = serialization.load_pem_private_key(pem, password=None)
    assert isinstance(private, Ed25519PrivateKey)
    raw = private.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    body = b"".join(pem.splitlines()[1:-1]).decode()
    return [
        raw.hex(),
        raw.hex().upper(),
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        body[:40],
        repr(raw)[2:-1],
    ]


def assert_no_secret(key_path: Path, *texts: str) -> None:
    forms = secret_forms(key_path)
    for text in texts:
        for form in forms:
            assert form not in text


# -- the key ------------------------------------------------------------------------------------


def test_key_is_created_0600_on_the_first_append_and_never_by_a_reader(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit")
    assert log.verify().ok
    assert not (tmp_path / "audit").exists()
    log.append("write", note_id="first")
    key = log.directory / "audit.key"
    assert key == log.key.path
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.stat().st_uid == os.getuid()
    assert not log.key.pending_path.exists()
    assert key.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    before = key.read_bytes()
    log.append("write", note_id="second")
    assert key.read_bytes() == before  # made once, then reused
    assert sorted(p.name for p in log.directory.iterdir()) == [
        "audit.head",
        "audit.jsonl",
        "audit.key",
        "audit.lock",
    ]


def test_key_is_created_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        log = make_log(tmp_path, 1)
    finally:
        os.umask(old)
    assert stat.S_IMODE(log.key.path.stat().st_mode) == 0o600


def test_head_signature_is_ed25519_over_the_documented_payload(tmp_path: Path) -> None:
    log = AuditLog(tmp_path, clock=lambda: 1234)
    entry = log.append("grant", grant_id="g1")
    head = head_obj(log)
    assert log.head_path.read_bytes() == canonical(head) + b"\n"
    assert set(head) == {"seq", "hash", "ts", "key", "sig"}
    assert (head["seq"], head["hash"], head["ts"]) == (1, entry.hash, 1234)
    payload = b"memdir audit head v1\n" + canonical({"hash": entry.hash, "seq": 1, "ts": 1234})
    public = Ed25519PublicKey.from_public_bytes(bytes.fromhex(head["key"]))
    public.verify(bytes.fromhex(head["sig"]), payload)  # raises if it does not verify
    assert log.key.public_key() == head["key"]
    assert log.head() == AuditHead(1, entry.hash, 1234, head["key"], head["sig"])
    assert (
        log.head().key_id
        == key_id(head["key"])
        == hashlib.sha256(
            public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        ).hexdigest()[:16]
    )
    report = log.verify()
    assert report.ok and report.signature == "signed" and report.key == head["key"]
    assert report.warnings == ()


def test_the_private_key_never_appears_in_files_reports_or_reprs(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    texts = [
        log.head_path.read_text(),
        log.log_path.read_text(),
        repr(log.verify()),
        repr(log.head()),
        repr(log.key),
        json.dumps(log.verify().key),
    ]
    assert_no_secret(log.key.path, *texts)


@pytest.mark.parametrize(
    "damage",
    ["truncated", "not-ed25519", "garbage", "world-readable", "directory"],
)
def test_an_unusable_key_is_reported_by_path_alone(tmp_path: Path, damage: str) -> None:
    log = make_log(tmp_path, 2)
    key = log.key.path
    saved = tmp_path / "saved.pem"
    shutil.copy2(key, saved)
    pem = key.read_bytes()
    if damage == "truncated":
        key.write_bytes(pem[: len(pem) // 2])
    elif damage == "not-ed25519":
        key.write_bytes(pem.replace(b"PRIVATE KEY", b"PUBLIC KEY"))
    elif damage == "garbage":
        key.write_bytes(pem[:-40] + b"!!!!\n-----END PRIVATE KEY-----\n")
    elif damage == "world-readable":
        key.chmod(0o644)
    else:
        key.unlink()
        key.mkdir()
    report = log.verify()
    assert not report.ok
    assert any(str(key) in problem for problem in report.problems)
    assert report.signature == "invalid"
    assert not any("no audit key" in problem for problem in report.problems)  # not "deleted"
    with pytest.raises(IntegrityError) as info:
        log.append("write", note_id="after")
    with pytest.raises(IntegrityError) as head_info:
        log.head()
    for exc in (info.value, head_info.value):
        assert str(key) in str(exc)
        assert exc.__cause__ is None
        assert exc.__context__ is None or exc.__suppress_context__
    assert_no_secret(saved, repr(report), str(info.value), str(head_info.value))
    # Nothing was recorded: a write that reports a failure must not have happened.
    assert len(lines_of(log)) == 2 and log.head_path.exists()
    if key.is_dir():
        key.rmdir()
    shutil.copy2(saved, key)
    key.chmod(0o600)
    log.append("write", note_id="key-restored")
    report = log.verify()
    assert report.ok and report.signature == "signed", report.problems


# -- tamper cases -------------------------------------------------------------------------------


def edit_line(log: AuditLog) -> str:
    lines = lines_of(log)
    lines[2] = lines[2].replace(b'"note-3"', b'"note-X"')
    log.log_path.write_bytes(b"".join(lines))
    return "line 3: entry hash does not match its content (edited)"


def reorder(log: AuditLog) -> str:
    lines = lines_of(log)
    lines[1], lines[2] = lines[2], lines[1]
    log.log_path.write_bytes(b"".join(lines))
    return "(entries reordered or duplicated)"


def truncate_and_rewrite_head(log: AuditLog) -> str:
    last = forge_chain(log, 4)
    write_head(log, {"seq": last["seq"], "hash": last["hash"]})
    return "head file is unsigned, but this machine's audit key signed earlier heads"


def recompute_chain_and_rewrite_head(log: AuditLog) -> str:
    last = forge_chain(log, 3, extra=4)  # as long as before, every hash recomputed
    write_head(log, {"seq": last["seq"], "hash": last["hash"]})
    return "head file is unsigned"


def recompute_chain_and_keep_old_signature(log: AuditLog) -> str:
    head = head_obj(log)
    last = forge_chain(log, 3, extra=3)
    write_head(log, {**head, "hash": last["hash"]})
    return "head file signature does not verify (head edited or rewritten)"


def delete_signature_only(log: AuditLog) -> str:
    head = head_obj(log)
    del head["sig"]
    write_head(log, head)
    return "head file carries only part of a signature (edited)"


def delete_whole_signature(log: AuditLog) -> str:
    head = head_obj(log)
    write_head(log, {"seq": head["seq"], "hash": head["hash"]})
    return "head file is unsigned, but this machine's audit key signed earlier heads"


def sign_with_another_key(log: AuditLog) -> str:
    last = forge_chain(log, 4)
    write_head(log, sign_with(Ed25519PrivateKey.generate(), last["seq"], last["hash"], 1))
    return "not by this machine's key"


def replace_key_file(log: AuditLog) -> str:
    write_pem(log.key.path, Ed25519PrivateKey.generate())
    return "not by this machine's key"


def delete_key_file(log: AuditLog) -> str:
    log.key.path.unlink()
    return "but this machine has no audit key (key file deleted)"


def delete_head(log: AuditLog) -> str:
    log.head_path.unlink()
    return "head file is missing"


def delete_log_and_head(log: AuditLog) -> str:
    log.head_path.unlink()
    log.log_path.unlink()
    return "head file is missing, but this machine's audit key signed one (deleted)"


def roll_head_back(log: AuditLog) -> str:
    old = log.head_path.read_bytes()
    log.append("write", note_id="later-1")
    log.append("write", note_id="later-2")
    log.head_path.write_bytes(old)  # an older head, genuinely signed
    return "(head rolled back or edited)"


TAMPERS: list[Callable[[AuditLog], str]] = [
    edit_line,
    reorder,
    truncate_and_rewrite_head,
    recompute_chain_and_rewrite_head,
    recompute_chain_and_keep_old_signature,
    delete_signature_only,
    delete_whole_signature,
    sign_with_another_key,
    replace_key_file,
    delete_key_file,
    delete_head,
    delete_log_and_head,
    roll_head_back,
]


@pytest.mark.parametrize("tamper", TAMPERS, ids=[t.__name__ for t in TAMPERS])
def test_every_tamper_case_is_detected(tmp_path: Path, tamper: Callable[[AuditLog], str]) -> None:
    log = make_log(tmp_path)
    assert log.verify().ok
    expected = tamper(log)
    assert expected in problems(log)
    # A fresh reader (another process) sees the same.
    assert expected in problems(AuditLog(tmp_path))


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_any_single_byte_change_to_the_signed_head_is_detected(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = make_log(Path(tmp), 2)
        raw = bytearray(log.head_path.read_bytes())
        index = data.draw(st.integers(0, len(raw) - 1), label="index")
        byte = data.draw(st.integers(0, 255).filter(lambda b: b != raw[index]), label="byte")
        raw[index] = byte
        log.head_path.write_bytes(bytes(raw))
        report = log.verify()
        assert not report.ok and report.signature in {"invalid", "absent"}
        with pytest.raises(IntegrityError):
            log.head()


@pytest.mark.parametrize(
    "tamper",
    [truncate_and_rewrite_head, recompute_chain_and_keep_old_signature, sign_with_another_key],
    ids=["unsigned", "bad-signature", "other-key"],
)
def test_a_rewritten_head_stays_reported_after_later_appends(
    tmp_path: Path, tamper: Callable[[AuditLog], str]
) -> None:
    log = make_log(tmp_path)
    tamper(log)
    for n in range(3):
        log.append("write", note_id=f"after-{n}")
    # The appends did not sign over the forged head: every later head is unsigned.
    assert "sig" not in head_obj(log)
    assert "head file is unsigned, but this machine's audit key signed earlier heads" in problems(
        log
    )
    with pytest.raises(IntegrityError, match="unsigned"):
        log.head()


def test_removing_the_key_starts_signing_afresh_with_a_new_key(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    old_key = log.key.public_key()
    delete_whole_signature(log)
    log.append("write", note_id="after")
    log.key.path.unlink()  # the documented reset, after looking into it
    report = log.verify()
    assert report.ok and report.signature == "unsigned" and report.warnings
    log.append("write", note_id="fresh")
    report = log.verify()
    assert report.ok and report.signature == "signed"
    assert report.key is not None and report.key != old_key


# -- a head kept elsewhere ----------------------------------------------------------------------


def snapshot(log: AuditLog, where: Path) -> None:
    where.mkdir()
    for path in (log.log_path, log.head_path):
        shutil.copy2(path, where / path.name)


def restore(log: AuditLog, where: Path) -> None:
    for name in ("audit.jsonl", "audit.head"):
        shutil.copy2(where / name, log.directory / name)


def test_rollback_to_an_older_consistent_log_is_detected_only_against_a_saved_head(
    tmp_path: Path,
) -> None:
    log = make_log(tmp_path / "audit", 5)
    snapshot(log, tmp_path / "old")
    for n in range(5):
        log.append("write", note_id=f"later-{n}")
    saved = log.head()
    assert log.verify(against=saved).ok

    restore(log, tmp_path / "old")  # seq 5, genuinely signed by this machine
    assert log.verify().ok  # internally consistent: verify alone cannot tell
    assert "the saved head names seq 10 but the log ends at 5 (rolled back or truncated)" in (
        problems(log, against=saved)
    )


def test_a_rolled_back_then_rewritten_history_is_detected_against_a_saved_head(
    tmp_path: Path,
) -> None:
    log = make_log(tmp_path / "audit", 5)
    snapshot(log, tmp_path / "old")
    for n in range(5):
        log.append("write", note_id=f"later-{n}")
    saved = log.head()
    restore(log, tmp_path / "old")
    for n in range(7):  # new, genuinely signed entries over the rolled-back log
        log.append("forget", note_id=f"other-{n}")
    assert log.verify().ok
    assert "(log rewritten or rolled back)" in problems(log, against=saved)


def test_an_older_saved_head_still_matches_a_longer_log(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    saved = log.head()
    for n in range(4):
        log.append("write", note_id=f"later-{n}")
    report = log.verify(against=saved)
    assert report.ok and report.warnings == ()


def test_a_key_replaced_and_the_log_re_signed_is_detected_against_a_saved_head(
    tmp_path: Path,
) -> None:
    log = make_log(tmp_path, 5)
    saved = log.head()
    # The attacker replaces the key, recomputes the chain and signs a new head with it.
    attacker = Ed25519PrivateKey.generate()
    write_pem(log.key.path, attacker)
    last = forge_chain(log, 2, extra=3)
    write_head(log, sign_with(attacker, last["seq"], last["hash"], 99))
    assert log.verify().ok  # consistent with the (new) key on disk
    text = problems(log, against=saved)
    assert f"the saved head was signed by key {saved.key_id}" in text
    assert "(key file replaced)" in text
    assert "(log rewritten or rolled back)" in text


def test_a_saved_head_from_a_file_round_trips_and_an_edited_copy_is_caught(
    tmp_path: Path,
) -> None:
    log = make_log(tmp_path / "audit", 4)
    saved = log.head()
    path = tmp_path / "head.json"
    path.write_text(
        json.dumps(
            {
                "seq": saved.seq,
                "hash": saved.hash,
                "ts": saved.ts,
                "key": saved.key,
                "sig": saved.sig,
            },
            indent=2,
        )
    )
    assert load_head(path) == saved
    assert log.verify(against=path).ok
    shutil.copy2(log.head_path, tmp_path / "copy.head")  # a plain copy of the head file works too
    assert log.verify(against=tmp_path / "copy.head").ok

    # Editing the saved copy to name an older seq (to hide a rollback) breaks its signature.
    entry_2 = json.loads(lines_of(log)[1])
    edited = {**json.loads(path.read_text()), "seq": 2, "hash": entry_2["hash"]}
    path.write_text(json.dumps(edited))
    assert "the saved head's signature does not verify (the copy was edited)" in problems(
        log, against=path
    )


def test_a_saved_head_signed_by_another_machine_is_reported(tmp_path: Path) -> None:
    ours = make_log(tmp_path / "ours", 3)
    theirs = make_log(tmp_path / "theirs", 3)
    text = problems(ours, against=theirs.head())
    assert "but this machine's key is" in text and "(key file replaced)" in text


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"[1]",
        b'{"seq": 0, "hash": "x"}',
        b'{"seq": 3}',
        b'{"seq": 1, "hash": "' + b"a" * 64 + b'", "extra": 1}',
        b'{"seq": 1, "hash": "' + b"a" * 64 + b'", "sig": "' + b"b" * 128 + b'"}',
    ],
    ids=["empty", "garbage", "list", "bad-seq", "no-hash", "extra-key", "partial-signature"],
)
def test_a_saved_head_that_is_not_a_head_is_invalid_input(tmp_path: Path, content: bytes) -> None:
    log = make_log(tmp_path / "audit", 2)
    path = tmp_path / "saved.json"
    path.write_bytes(content)
    with pytest.raises(InvalidInput, match="saved head"):
        log.verify(against=path)
    with pytest.raises(InvalidInput, match="cannot read"):
        log.verify(against=tmp_path / "missing.json")


def test_an_unsigned_saved_head_checks_entries_and_warns(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    head = log.head()
    report = log.verify(against=AuditHead(head.seq, head.hash))
    assert report.ok and any("saved head is unsigned" in w for w in report.warnings)
    assert "log rewritten" in problems(log, against=AuditHead(2, "f" * 64))


# -- legacy logs --------------------------------------------------------------------------------


def make_legacy_log(directory: Path, count: int = 4) -> AuditLog:
    """A log as memdir wrote it before heads were signed: ``{hash, seq}`` and no key."""
    log = make_log(directory, count)
    head = head_obj(log)
    write_head(log, {"seq": head["seq"], "hash": head["hash"]})
    log.key.path.unlink()
    return log


def test_a_legacy_unsigned_head_verifies_with_a_warning_and_the_next_append_signs(
    tmp_path: Path,
) -> None:
    log = make_legacy_log(tmp_path)
    report = log.verify()
    assert report.ok and report.problems == ()
    assert report.signature == "unsigned" and report.key is None
    assert len(report.warnings) == 1 and "unsigned" in report.warnings[0]
    head = log.head()
    assert not head.signed and head.key_id is None and head.seq == 4
    assert not log.key.path.exists()  # readers create no key

    log.append("write", note_id="after-upgrade")
    report = log.verify()
    assert report.ok and report.signature == "signed" and report.warnings == ()
    assert log.head().signed and log.key.path.exists()


def test_a_legacy_log_is_still_checked_link_by_link(tmp_path: Path) -> None:
    log = make_legacy_log(tmp_path)
    edit_line(log)
    report = log.verify()
    assert not report.ok and report.signature == "unsigned"


def test_verify_with_no_log_reports_no_head(tmp_path: Path) -> None:
    report = AuditLog(tmp_path).verify()
    assert report.ok and report.signature == "absent" and report.warnings == ()
    with pytest.raises(NotFound):
        AuditLog(tmp_path).head()


# -- crash safety -------------------------------------------------------------------------------


def test_a_crash_before_the_first_head_leaves_a_pending_key_that_is_adopted(
    tmp_path: Path,
) -> None:
    log = make_log(tmp_path, 1)
    first_key = log.key.public_key()
    # As if killed after the pending key was written, before the head was replaced.
    log.key.path.rename(log.key.pending_path)
    log.head_path.unlink()
    assert log.verify().ok
    log.append("write", note_id="next")
    assert log.key.path.exists() and not log.key.pending_path.exists()
    assert log.key.public_key() == first_key  # the pending key was adopted, not replaced
    assert log.verify().signature == "signed"


def test_a_crash_between_the_signed_head_and_the_key_commit_verifies(tmp_path: Path) -> None:
    log = make_log(tmp_path, 2)
    log.key.path.rename(log.key.pending_path)  # the head is signed, the key not yet in place
    report = log.verify()
    assert report.ok and report.signature == "signed"
    assert log.head().signed
    log.append("write")
    assert log.key.path.exists() and not log.key.pending_path.exists()
    assert log.verify().ok


def test_a_crash_during_key_creation_leaves_a_temp_file_that_is_removed(tmp_path: Path) -> None:
    directory = tmp_path / "audit"
    directory.mkdir(mode=0o700)
    stale = directory / ".audit.key.new.tmp-0badf00d"
    stale.write_bytes(b"half a key")
    log = AuditLog(directory)
    assert log.verify().ok
    log.append("write")
    assert not stale.exists()
    assert log.verify().signature == "signed"


def test_a_crash_after_the_line_before_the_signed_head_verifies(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    head = log.head_path.read_bytes()
    log.append("write", note_id="durable-but-unheaded")
    log.head_path.write_bytes(head)
    report = log.verify()
    assert report.ok and report.signature == "signed"
    log.append("write")
    assert log.verify().ok and log.head().seq == 5


def test_a_crash_after_a_batch_before_its_head_verifies(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    head = log.head_path.read_bytes()
    log.append_many([("write", {"note_id": f"batch-{n}"}) for n in range(4)])
    log.head_path.write_bytes(head)  # killed after the batch's one write, before its head
    report = log.verify()
    assert report.ok and report.signature == "signed", report.problems
    log.append("write")
    assert log.verify().ok and log.head().seq == 8


def test_a_crash_during_the_first_batch_before_any_head_verifies(tmp_path: Path) -> None:
    log = AuditLog(tmp_path, clock=itertools.count(1_000_000).__next__)
    log.append_many([("write", {"note_id": f"first-{n}"}) for n in range(3)])
    # Killed after the first batch's lines, before its head (and key) were written.
    log.head_path.unlink()
    log.key.path.unlink()
    report = log.verify()
    assert report.ok and report.signature == "absent", report.problems
    log.append("write")
    assert log.verify().ok and log.head().seq == 4


def test_a_missing_head_after_two_batches_is_reported(tmp_path: Path) -> None:
    log = AuditLog(tmp_path, clock=itertools.count(1_000_000).__next__)
    log.append_many([("write", {"note_id": f"first-{n}"}) for n in range(3)])
    log.append("write")
    log.head_path.unlink()
    log.key.path.unlink()
    assert "more than its first batch" in problems(log)


def test_the_next_append_names_an_unheaded_batch_before_writing_its_own(tmp_path: Path) -> None:
    ticks = itertools.count(1)
    log = make_log(tmp_path, 3, clock=lambda: next(ticks))
    head = log.head_path.read_bytes()
    log.append("write", note_id="unheaded")
    log.head_path.write_bytes(head)

    def killed() -> int:
        raise KeyboardInterrupt  # stands in for a kill once the head was re-signed

    with pytest.raises(KeyboardInterrupt):
        AuditLog(tmp_path, clock=killed).append("write", note_id="never-written")
    assert log.head().seq == 4
    assert len(lines_of(log)) == 4
    assert log.verify().ok


def test_two_unheaded_appends_are_reported(tmp_path: Path) -> None:
    log = make_log(tmp_path, 3)
    head = log.head_path.read_bytes()
    log.append("write")
    log.append("write")
    log.head_path.write_bytes(head)  # not a crash: appends never leave two unheaded
    assert "head file names seq 3 but the log runs to 5" in problems(log)


def test_verify_during_concurrent_first_appends_never_sees_a_false_alarm(tmp_path: Path) -> None:
    stop = threading.Event()
    failures: list[tuple[str, ...]] = []

    def append(worker: int) -> None:
        log = AuditLog(tmp_path, lock_timeout=60)
        for n in range(30):
            log.append("write", note_id=f"w{worker}-{n}")

    def check() -> None:
        while not stop.is_set():
            report = AuditLog(tmp_path).verify()
            if not report.ok:
                failures.append(report.problems)

    checker = threading.Thread(target=check)
    checker.start()
    writers = [threading.Thread(target=append, args=(w,)) for w in range(3)]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    stop.set()
    checker.join()
    assert failures == []
    report = AuditLog(tmp_path).verify()
    assert report.ok and report.entries == 90 and report.signature == "signed"


def _appender(directory: Path) -> None:
    try:
        log = AuditLog(directory)
        n = 0
        while True:
            log.append("write", note_id=f"n-{n}", revision=n)
            n += 1
    finally:
        os._exit(3)


def test_sigkill_during_appends_always_leaves_a_log_that_verifies(tmp_path: Path) -> None:
    rng = random.Random(os.getpid())
    for round_ in range(40):
        # A fresh log every few rounds, so that kills also land in the very first append
        # (key creation); otherwise the same log grows across kills.
        directory = tmp_path / f"audit-{round_ // 4}"
        pid = os.fork()
        if pid == 0:
            _appender(directory)
        time.sleep(rng.uniform(0.0005, 0.02))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status), f"appender exited by itself (status {status})"
        report = AuditLog(directory).verify()
        assert report.ok, (round_, report.problems)
        assert report.signature in {"signed", "absent"}
    for directory in sorted(tmp_path.glob("audit-*")):
        log = AuditLog(directory)
        log.append("write", note_id="after")
        report = log.verify()
        assert report.ok and report.signature == "signed", report.problems
