"""§8.2 through the Memory API with a real unlock agent: encrypt, use, lock, decrypt, passwd."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from memdir.crypto.seal import is_sealed
from memdir.errors import IntegrityError, InvalidInput, Locked, NotFound, WrongPassword
from memdir.store.sealing import MARKER

from .conftest import SECRET_WORDS, open_memory, plaintext_hits, seed

PASSWORD = b"correct horse battery staple"


def _files(*roots: Path) -> list[Path]:
    out = []
    for root in roots:
        for path in root.rglob("*.md"):
            out.append(path)
    return out


def _encrypted(project: Path, home: Path) -> str:
    with open_memory(project, home) as m:
        seed(m)
        report = m.crypto.encrypt(PASSWORD)
    assert report.recovery_key is not None
    assert report.notes == 2 and report.objects >= 3 and report.backups == 1
    return report.recovery_key


def test_encrypt_seals_every_note_history_object_and_backup(
    enc_project: Path, enc_home: Path, tmp_path: Path
) -> None:
    _encrypted(enc_project, enc_home)
    notes = _files(enc_project / "MEMORY", enc_home / "memory")
    stored = _files(enc_home / "memory-history", enc_home / "memory-backups")
    assert len(notes) == 2 and len(stored) >= 4
    assert all(is_sealed(p.read_bytes()) for p in notes + stored)
    assert (enc_project / "MEMORY" / MARKER).is_file()
    assert not list((enc_home / "index").glob("*.sqlite3")), "a plaintext index stayed on disk"
    assert plaintext_hits(tmp_path) == []


def test_an_unlocked_store_works_as_a_plain_one(enc_project: Path, enc_home: Path) -> None:
    _encrypted(enc_project, enc_home)
    with open_memory(enc_project, enc_home) as m:
        assert m.read("deploy").body.endswith("port 7432 since March.")
        assert [h.note_id for h in m.search(SECRET_WORDS[0])] == ["deploy"]
        assert [h.note_id for h in m.search(SECRET_WORDS[1])] == ["theme"]
        assert len(m.notes.history("deploy")) == 2
        assert "7431" in m.notes.diff("deploy")
        m.remember("New", body=f"The {SECRET_WORDS[3]} fjord.", id="new-note")
        assert is_sealed((enc_project / "MEMORY" / "new-note.md").read_bytes())
        backup = next(b for b in m.backups() if b.note_id == "old-plan")
        m.backups.restore(backup.id)
        assert SECRET_WORDS[2] in m.read("old-plan").body
        assert is_sealed((enc_project / "MEMORY" / "old-plan.md").read_bytes())
        assert m.upkeep.doctor(deep=True).ok
    assert not list((enc_home / "index").glob("*.sqlite3"))


def test_a_locked_store_refuses_reads_and_writes(enc_project: Path, enc_home: Path) -> None:
    _encrypted(enc_project, enc_home)
    with open_memory(enc_project, enc_home) as m:
        assert m.crypto.lock() is True
        for call in (
            lambda: m.notes.list(),
            lambda: m.read("deploy"),
            lambda: m.search("protocol"),
            lambda: m.remember("While locked", body="nothing", id="while-locked"),
        ):
            with pytest.raises(Locked, match="locked"):
                call()
        assert not (enc_project / "MEMORY" / "while-locked.md").exists()
        assert m.crypto.status().unlocked is False
        m.crypto.unlock(PASSWORD)
        assert m.read("deploy").id == "deploy"


def test_wrong_password_and_recovery_key(enc_project: Path, enc_home: Path) -> None:
    recovery = _encrypted(enc_project, enc_home)
    with open_memory(enc_project, enc_home) as m:
        m.crypto.lock()
        with pytest.raises(WrongPassword) as raised:
            m.crypto.unlock(b"not the password")
        assert "not the password" not in str(raised.value)
        m.crypto.unlock(recovery_key=recovery)
        assert m.read("theme").id == "theme"


def test_passwd_rewraps_without_touching_the_notes(enc_project: Path, enc_home: Path) -> None:
    recovery = _encrypted(enc_project, enc_home)
    note = enc_project / "MEMORY" / "deploy.md"
    before = note.read_bytes()
    with open_memory(enc_project, enc_home) as m:
        m.crypto.passwd(b"a new one", old_password=PASSWORD)
        assert note.read_bytes() == before
        m.crypto.lock()
        with pytest.raises(WrongPassword):
            m.crypto.unlock(PASSWORD)
        m.crypto.unlock(b"a new one")
        m.crypto.passwd(b"third", recovery_key=recovery)
        m.crypto.lock()
        m.crypto.unlock(b"third")
        assert m.read("deploy").id == "deploy"


def test_decrypt_gives_back_the_plain_files(enc_project: Path, enc_home: Path) -> None:
    with open_memory(enc_project, enc_home) as m:
        seed(m)
        plain = {p.name: p.read_bytes() for p in _files(enc_project / "MEMORY")}
        m.crypto.encrypt(PASSWORD)
        report = m.crypto.decrypt()
        assert report.notes == 2
        assert {p.name: p.read_bytes() for p in _files(enc_project / "MEMORY")} == plain
        stored = _files(enc_home / "memory-history", enc_home / "memory-backups")
        assert not any(is_sealed(p.read_bytes()) for p in stored)
        assert not (enc_project / "MEMORY" / MARKER).exists()
        assert [h.note_id for h in m.search(SECRET_WORDS[0])] == ["deploy"]
        assert m.upkeep.doctor(deep=True).ok
    assert list((enc_home / "index").glob("*.sqlite3")), "a plain store's index is on disk again"


def test_decrypt_needs_the_store_unlocked(enc_project: Path, enc_home: Path) -> None:
    _encrypted(enc_project, enc_home)
    with open_memory(enc_project, enc_home) as m:
        m.crypto.lock()
        with pytest.raises(Locked):
            m.crypto.decrypt()
        assert is_sealed((enc_project / "MEMORY" / "deploy.md").read_bytes())


def test_encrypt_again_is_a_no_op_and_unlock_without_keyring_is_not_found(
    enc_project: Path, enc_home: Path
) -> None:
    with open_memory(enc_project, enc_home) as m:
        with pytest.raises(NotFound):
            m.crypto.unlock(PASSWORD)
        with pytest.raises(InvalidInput):
            m.crypto.encrypt(None)
        seed(m)
        m.crypto.encrypt(PASSWORD)
        again = m.crypto.encrypt(None)
        assert (again.notes, again.objects, again.backups) == (0, 0, 0)
        assert again.recovery_key is None


def test_a_sealed_note_moved_onto_another_fails_to_open(enc_project: Path, enc_home: Path) -> None:
    _encrypted(enc_project, enc_home)
    notes = enc_project / "MEMORY"
    with open_memory(enc_project, enc_home) as m:
        m.remember("Second", body="another note", id="second")
        shutil.copyfile(notes / "deploy.md", notes / "second.md")
        listed = {n.id for n in m.notes.list()}
        assert "second" not in listed and "deploy" in listed
        problems = [p.reason for p in m.upkeep.doctor().problems]
        assert any("does not open" in p for p in problems), problems


def test_a_swapped_history_object_is_not_served(enc_project: Path, enc_home: Path) -> None:
    _encrypted(enc_project, enc_home)
    with open_memory(enc_project, enc_home) as m:
        first, second = (h.revision for h in m.notes.history("deploy"))
        objects = {p.name[:-3]: p for p in _files(enc_home / "memory-history")}
        objects[first].write_bytes(objects[second].read_bytes())
        with pytest.raises(IntegrityError):
            m.read("deploy", revision=first)


def test_lock_during_writes_never_tears_or_leaks_a_note(
    enc_project: Path, enc_home: Path, tmp_path: Path
) -> None:
    _encrypted(enc_project, enc_home)
    stop = threading.Event()
    outcomes: list[str] = []

    def writer() -> None:
        with open_memory(enc_project, enc_home) as w:
            i = 0
            while not stop.is_set() and i < 2000:
                try:
                    w.remember(f"Note {i}", body=f"{SECRET_WORDS[3]} number {i}", id=f"n-{i}")
                    outcomes.append("written")
                except Locked:
                    outcomes.append("locked")
                i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    with open_memory(enc_project, enc_home) as m:
        for _ in range(5):
            m.crypto.lock()
            threading.Event().wait(0.05)
            m.crypto.unlock(PASSWORD, idle_seconds=60)
            threading.Event().wait(0.05)
    for _ in range(600):  # until the writer got some writes in after the last unlock
        if outcomes.count("written") >= 3 or not thread.is_alive():
            break
        threading.Event().wait(0.05)
    stop.set()
    thread.join(timeout=120)
    assert "written" in outcomes
    for path in _files(enc_project / "MEMORY"):
        assert is_sealed(path.read_bytes()), path
    assert plaintext_hits(tmp_path) == []
    with open_memory(enc_project, enc_home) as m:
        written = [n.id for n in m.notes.list() if n.id.startswith("n-")]
        assert len(written) == outcomes.count("written")
        assert not m.upkeep.doctor().problems


def test_the_in_memory_index_is_kept_by_the_agent_and_wiped_on_lock(
    enc_project: Path, enc_home: Path
) -> None:
    _encrypted(enc_project, enc_home)
    from memdir.crypto.agent import AgentClient

    with open_memory(enc_project, enc_home) as m:
        assert [h.note_id for h in m.search(SECRET_WORDS[0])] == ["deploy"]
        socket = m.crypto.socket
    status = AgentClient(socket).status()
    assert status.blobs >= 1, "the index image was not given to the agent"
    with open_memory(enc_project, enc_home) as m:
        index = m.index.retriever.index(m.stores.store(m.stores.scopes[0]))
        assert index.memory and index.note_ids(), "the next process did not get the image"
        m.crypto.lock()
    assert not socket.exists()


def test_a_long_lived_host_wipes_what_it_holds_when_locked(
    enc_project: Path, enc_home: Path
) -> None:
    _encrypted(enc_project, enc_home)
    with open_memory(enc_project, enc_home) as host, open_memory(enc_project, enc_home) as cli:
        host.watch_files()
        assert host.search(SECRET_WORDS[0])
        store = host.stores.store(host.stores.scopes[0])
        assert host.index.retriever.index(store).memory
        cli.crypto.lock()
        watcher = host.crypto.watch_lock()
        assert watcher is not None
        for _ in range(100):  # the watch looks every 2 s
            if not host.index.retriever._pool.is_open(store.state_key):
                break
            threading.Event().wait(0.1)
        assert not host.index.retriever._pool.is_open(store.state_key)
        with pytest.raises(Locked):
            host.search(SECRET_WORDS[0])


def test_a_host_opened_before_encrypt_takes_up_the_new_keyring(
    enc_project: Path, enc_home: Path
) -> None:
    with open_memory(enc_project, enc_home) as host:
        seed(host)
        assert host.search(SECRET_WORDS[0])
        with open_memory(enc_project, enc_home) as cli:
            cli.crypto.encrypt(PASSWORD)
        assert [h.note_id for h in host.search(SECRET_WORDS[0])] == ["deploy"]
        store = host.stores.store(host.stores.scopes[0])
        assert host.index.retriever.index(store).memory
        host.remember("After", body="written by the host", id="after")
        assert is_sealed((enc_project / "MEMORY" / "after.md").read_bytes())
        backup = next(b for b in host.backups() if b.note_id == "old-plan")
        host.backups.restore(backup.id)
        assert SECRET_WORDS[2] in host.read("old-plan").body
    assert not list((enc_home / "index").glob("*.sqlite3"))
