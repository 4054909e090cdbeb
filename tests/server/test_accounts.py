"""Server accounts: tokens stored only as SHA-256, constant-time checks, secret files 0600."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import pytest

from memdir.errors import Conflict, InvalidInput, NotFound, Refused
from memdir.server.accounts import Accounts, write_secret


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_add_user_stores_only_the_token_digest(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / "data")
    token = accounts.add_user("alice")
    assert len(token) >= 40
    raw = accounts.path.read_text()
    assert token not in raw
    doc = json.loads(raw)
    assert doc["users"]["alice"]["token_sha256"] == hashlib.sha256(token.encode()).hexdigest()
    assert mode(accounts.path) == 0o600
    assert mode(tmp_path / "data") == 0o700
    assert [a.name for a in accounts.users()] == ["alice"]
    assert "token_sha256" not in accounts.users()[0].public()


def test_authenticate(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path)
    alice = accounts.add_user("alice")
    bob = accounts.add_user("bob")
    assert alice != bob
    assert accounts.authenticate(alice) == "alice"
    assert accounts.authenticate(bob) == "bob"
    assert accounts.authenticate(alice + "x") is None
    assert accounts.authenticate("") is None
    assert accounts.authenticate(hashlib.sha256(alice.encode()).hexdigest()) is None
    assert Accounts(tmp_path / "empty").authenticate(alice) is None


def test_adding_an_existing_user_needs_rotate(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path)
    old = accounts.add_user("alice")
    with pytest.raises(Conflict):
        accounts.add_user("alice")
    assert accounts.authenticate(old) == "alice"
    new = accounts.add_user("alice", rotate=True)
    assert accounts.authenticate(new) == "alice"
    assert accounts.authenticate(old) is None
    with pytest.raises(NotFound):
        accounts.add_user("nobody", rotate=True)


def test_remove_user(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path)
    token = accounts.add_user("alice")
    accounts.add_user("bob")
    accounts.remove_user("alice")
    assert accounts.authenticate(token) is None
    assert [a.name for a in accounts.users()] == ["bob"]
    with pytest.raises(NotFound):
        accounts.remove_user("alice")


@pytest.mark.parametrize("name", ["", "Alice", "../x", "a b", "x" * 65, "-x", ":admin"])
def test_invalid_user_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidInput):
        Accounts(tmp_path).add_user(name)
    assert not (tmp_path / "accounts.json").exists()


def test_admin_key(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path)
    token = accounts.add_user("alice")
    assert not accounts.is_admin(token)
    assert not accounts.is_admin("")
    key = accounts.set_admin_key()
    assert key not in accounts.path.read_text()
    assert accounts.is_admin(key)
    assert not accounts.is_admin(token)
    assert accounts.authenticate(key) is None
    newer = accounts.set_admin_key()
    assert accounts.is_admin(newer) and not accounts.is_admin(key)
    assert accounts.authenticate(token) == "alice"  # users survive a new admin key


def test_changes_are_seen_by_another_instance(tmp_path: Path) -> None:
    server_side = Accounts(tmp_path)
    assert server_side.authenticate("nothing") is None
    token = Accounts(tmp_path).add_user("alice")
    assert server_side.authenticate(token) == "alice"
    Accounts(tmp_path).remove_user("alice")
    assert server_side.authenticate(token) is None


def test_a_damaged_file_accepts_no_token(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path)
    accounts.add_user("alice")
    accounts.path.write_text("{not json")
    with pytest.raises(Refused):
        accounts.authenticate("anything")


def test_write_secret_is_private_and_refuses_to_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "token"
    write_secret(out, "s3cret", force=False)
    assert out.read_text() == "s3cret\n"
    assert mode(out) == 0o600
    with pytest.raises(Refused):
        write_secret(out, "other", force=False)
    assert out.read_text() == "s3cret\n"
    out.chmod(0o644)
    write_secret(out, "other", force=True)
    assert out.read_text() == "other\n"
    assert mode(out) == 0o600
    with pytest.raises(InvalidInput):
        write_secret(tmp_path / "missing" / "token", "x", force=False)


# -- accounts kept in a storage backend (replicas share them) ----------------------------


class CountingDocuments:
    """An in-memory `ServerDocuments` that counts the bodies read."""

    def __init__(self) -> None:
        self.docs: dict[str, tuple[int, bytes]] = {}
        self.bodies_read = 0

    def server_document(self, name: str) -> tuple[int, bytes] | None:
        self.bodies_read += 1
        return self.docs.get(name)

    def server_document_stamp(self, name: str) -> str | None:
        found = self.docs.get(name)
        return None if found is None else str(found[0])

    def swap_server_document(self, name: str, expected: int, doc: bytes) -> bool:
        current = self.docs.get(name, (0, b""))[0]
        if current != expected:
            return False
        self.docs[name] = (expected + 1, doc)
        return True


def test_backend_accounts_are_shared_and_read_again_only_when_changed(tmp_path: Path) -> None:
    store = CountingDocuments()
    one = Accounts(tmp_path / "a", store=store)
    two = Accounts(tmp_path / "b", store=store)  # another replica, its own data directory
    token = one.add_user("alice")
    assert two.authenticate(token) == "alice"
    read = store.bodies_read
    for _ in range(5):
        assert two.authenticate(token) == "alice"
    assert store.bodies_read == read  # unchanged: no body read
    one.remove_user("alice")
    assert two.authenticate(token) is None  # removed: refused at once


def test_a_legacy_file_is_copied_in_once_and_the_data_directory_marked(tmp_path: Path) -> None:
    from memdir.server.accounts import IN_BACKEND, open_accounts

    data = tmp_path / "data"
    token = Accounts(data).add_user("alice")
    store = CountingDocuments()
    backend = open_accounts(data, store)  # type: ignore[arg-type]
    assert (data / IN_BACKEND).exists()
    assert backend.authenticate(token) == "alice"
    assert not (data / "accounts.json").exists() and (data / "accounts.json.imported").exists()
    backend.remove_user("alice")
    assert backend.authenticate(token) is None  # the old file does not bring it back
    with pytest.raises(Refused, match="--backend"):
        Accounts(data).add_user("bob")  # the directory commands refuse: nobody reads it


def test_replicas_copying_the_legacy_file_at_once_all_see_the_accounts(tmp_path: Path) -> None:
    """Replica B looks (nothing stored yet), replica A copies the file in and moves it
    away, then B goes on: B must find the copied accounts, not an empty set."""
    data = tmp_path / "data"
    token = Accounts(data).add_user("alice")
    store = CountingDocuments()
    first = Accounts(data, store=store)

    class Racing:
        looked = False

        def server_document(self, name: str) -> tuple[int, bytes] | None:
            return store.server_document(name)

        def server_document_stamp(self, name: str) -> str | None:
            stamp = store.server_document_stamp(name)
            if not Racing.looked:
                Racing.looked = True
                assert first.authenticate(token) == "alice"  # A imports now
            return stamp

        def swap_server_document(self, name: str, expected: int, doc: bytes) -> bool:
            return store.swap_server_document(name, expected, doc)

    second = Accounts(data, store=Racing())
    assert second.authenticate(token) == "alice"
