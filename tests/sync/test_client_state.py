"""The client's machine-local sync state: baseline database, account switch and credentials."""

from __future__ import annotations

import contextlib
import sqlite3
import stat
from pathlib import Path

import pytest

from memdir.errors import IntegrityError, InvalidInput
from memdir.sync.account import Credentials, SyncAccount, check_token
from memdir.sync.baseline import Baseline, Binding, RemoteEntry
from memdir.sync.client import origin_of

REV_A = "a" * 64
REV_B = "b" * 64


def test_baseline_round_trip_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "sync" / "user.sqlite"
    b = Baseline(path)
    assert b.version is None and b.binding is None and b.bases() == {}
    with b.transaction():
        b.set_base("n1", REV_A, b"bytes \xc3\xa9")
        b.set_version(7)
        b.replace_remote({"n1": RemoteEntry(REV_A), "gone": RemoteEntry(REV_B, 123)})
        b.bind(Binding("alice", "https://sync.example"))
    b.close()
    b = Baseline(path)
    assert b.base("n1") is not None and b.base("n1").data == b"bytes \xc3\xa9"  # type: ignore[union-attr]
    assert b.version == 7
    assert b.remote() == {"n1": RemoteEntry(REV_A), "gone": RemoteEntry(REV_B, 123)}
    assert not b.remote()["gone"].live
    assert b.binding == Binding("alice", "https://sync.example")
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    b.close()


def test_baseline_transaction_rolls_back_on_error(tmp_path: Path) -> None:
    b = Baseline(tmp_path / "s.sqlite")
    b.set_base("n1", REV_A, b"one")
    with pytest.raises(RuntimeError), b.transaction():
        b.set_base("n1", REV_B, b"two")
        b.drop_base("n1")
        raise RuntimeError("crash in the middle")
    assert b.base("n1") is not None and b.base("n1").rev == REV_A  # type: ignore[union-attr]
    b.close()


def test_conflicts_keep_first_time_and_release(tmp_path: Path) -> None:
    b = Baseline(tmp_path / "s.sqlite")
    b.hold("n1", server_rev=REV_A, server_data=b"srv", local_rev=None, reasons=("why",))
    first = b.conflict("n1")
    assert first is not None and first.reasons == ("why",) and first.local_rev is None
    b.hold("n1", server_rev=REV_B, server_data=b"srv2", local_rev=REV_A, reasons=("later",))
    again = b.conflict("n1")
    assert again is not None and again.found_at == first.found_at and again.server_rev == REV_B
    b.release("n1")
    assert b.conflicts() == []
    b.close()


def test_purge_keeps_revision_but_no_text(tmp_path: Path) -> None:
    b = Baseline(tmp_path / "s.sqlite")
    b.set_base("n1", REV_A, b"secret-ish text")
    b.hold("n1", server_rev=REV_B, server_data=b"server text", local_rev=None, reasons=("x",))
    b.purge("n1")
    copy = b.base("n1")
    assert copy is not None and copy.rev == REV_A and copy.data == b""
    assert b.conflict("n1") is None
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("s.sqlite"))
    assert b"server text" not in raw and b"secret-ish text" not in raw
    b.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    Baseline(tmp_path / "s.sqlite").close()
    with contextlib.closing(sqlite3.connect(tmp_path / "s.sqlite")) as db, db:
        db.execute("UPDATE meta SET value='99' WHERE key='schema'")
    with pytest.raises(IntegrityError, match="newer memdir"):
        Baseline(tmp_path / "s.sqlite")


def test_switch_persists_and_defaults_on(tmp_path: Path) -> None:
    account = SyncAccount(tmp_path / "memory-sync")
    assert account.enabled
    account.set_enabled(False)
    assert not SyncAccount(tmp_path / "memory-sync").enabled
    account.set_enabled(True)
    assert SyncAccount(tmp_path / "memory-sync").enabled


def test_credentials_are_private_and_hidden(tmp_path: Path) -> None:
    account = SyncAccount(tmp_path / "memory-sync")
    assert account.credentials() is None
    creds = Credentials("https://sync.example", "alice", "t" * 40)
    account.save(creds)
    path = tmp_path / "memory-sync" / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert account.credentials() == creds
    assert "t" * 40 not in repr(creds)
    path.chmod(0o644)
    assert account.credentials() == creds
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert account.sign_out() and not account.sign_out()
    assert account.credentials() is None


def test_damaged_credentials_read_as_signed_out(tmp_path: Path) -> None:
    account = SyncAccount(tmp_path)
    (tmp_path / "credentials.json").write_text('{"server": "x"}')
    assert account.credentials() is None
    (tmp_path / "credentials.json").write_bytes(b"\xff\xfe not json")
    assert account.credentials() is None


@pytest.mark.parametrize(
    "bad", ["", "short", "has space in the middle of it", "é" * 20, "x\n" * 10]
)
def test_check_token_refuses_unusable_tokens(bad: str) -> None:
    with pytest.raises(InvalidInput):
        check_token(bad)


def test_check_token_strips_whitespace() -> None:
    assert check_token("  " + "k" * 20 + "\n") == "k" * 20


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://Sync.Example/", "https://sync.example"),
        ("https://sync.example:443/base", "https://sync.example"),
        ("http://127.0.0.1:8765", "http://127.0.0.1:8765"),
        ("http://[::1]:9000/x", "http://[::1]:9000"),
    ],
)
def test_origin_is_normalised(url: str, origin: str) -> None:
    assert origin_of(url) == origin


def test_a_memory_that_never_synced_creates_no_sync_state(tmp_path: Path) -> None:
    from memdir import Memory

    home = tmp_path / "home"
    with Memory.open(tmp_path, home=home) as m:
        m.remember("A note that never leaves this machine", scope="user")
        status = m.sync.status()
        assert not status.server and all(s.version is None for s in status.scopes)
        assert m.sync.conflicts() == []
        m.search("note")
        m.forget(m.notes.list(scope="user")[0].id, purge=True)
    assert not (home / "memory-sync").exists()
