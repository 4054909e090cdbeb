"""§8.2 through the Memory API with a real unlock agent: encrypt, use, lock, decrypt, passwd."""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
from pathlib import Path

import pytest

from memdir.core import Scope
from memdir.crypto.agent import AgentClient
from memdir.crypto.seal import is_sealed
from memdir.errors import (
    IntegrityError,
    InvalidInput,
    Locked,
    MemdirError,
    NotFound,
    WrongPassword,
)
from memdir.store.sealing import MARKER, keyring_path

from .conftest import SECRET_WORDS, make_project, open_memory, plaintext_hits, seed

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
            if not host.index.retriever.pool.is_open(store.state_key):
                break
            threading.Event().wait(0.1)
        assert not host.index.retriever.pool.is_open(store.state_key)
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


# -- a sealed project: use, lock, damage, and what stays on disk -----------------------------


def _sealed_project(project: Path, home: Path) -> str:
    """A project note and a user note, encrypted; the recovery key."""
    with open_memory(project, home) as m:
        m.remember("Alpha", body=f"The {SECRET_WORDS[0]} protocol.", id="alpha")
        m.remember("Theme", body=f"Prefers {SECRET_WORDS[1]}.", id="theme", scope="user")
        report = m.crypto.encrypt(PASSWORD)
    assert report.recovery_key is not None
    assert is_sealed((project / "MEMORY" / "alpha.md").read_bytes())
    return report.recovery_key


# -- the lock -------------------------------------------------------------------------


def test_first_use_after_a_lock_elsewhere_refuses_instead_of_hanging(
    enc_project: Path, enc_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memdir.memory.encryption as encryption

    _sealed_project(enc_project, enc_home)
    monkeypatch.setattr(encryption, "KEY_REUSE_SECONDS", 0.0)  # the 2 s reuse, elapsed
    m = open_memory(enc_project, enc_home)  # left open: a hung thread would block its close
    assert m.read("alpha").body.endswith("protocol.")  # this process now holds the key
    AgentClient(m.crypto.socket).lock()  # `memdir lock` in another terminal
    outcome: list[BaseException | None] = []

    def use() -> None:
        try:
            m.read("alpha")
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=use, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "reading after a lock hangs forever (deadlock)"
    assert outcome and isinstance(outcome[0], Locked)


def test_a_locked_store_refuses_history_diff_and_revisions(
    enc_project: Path, enc_home: Path
) -> None:
    with open_memory(enc_project, enc_home) as m:
        m.remember("Alpha", body=f"The {SECRET_WORDS[0]} protocol v1.", id="alpha")
        m.remember("Alpha", body=f"The {SECRET_WORDS[0]} protocol v2.", id="alpha")
        m.crypto.encrypt(PASSWORD)
        m.crypto.lock()
        for call in (
            lambda: m.notes.history("alpha"),
            lambda: m.notes.diff("alpha"),
            lambda: m.notes.links("alpha"),
            lambda: m.agent.prompt_index(),
            lambda: m.index.retrieve(SECRET_WORDS[0]),
            lambda: m.search(SECRET_WORDS[0]),
        ):
            with pytest.raises(Locked):
                call()


def test_a_lock_in_the_middle_of_a_write_leaves_the_old_note(
    enc_project: Path, enc_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memdir.memory.encryption as encryption
    from memdir.store.history import History

    monkeypatch.setattr(encryption, "KEY_REUSE_SECONDS", 0.0)
    with open_memory(enc_project, enc_home) as m:
        m.remember("Alpha", body="version one", id="alpha")
        m.crypto.encrypt(PASSWORD)
        path = enc_project / "MEMORY" / "alpha.md"
        before = path.read_bytes()
        record = History.record

        def locking(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            AgentClient(m.crypto.socket).lock()  # `memdir lock` elsewhere, mid-write
            return record(self, *args, **kwargs)

        monkeypatch.setattr(History, "record", locking)
        with pytest.raises(Locked):
            m.remember("Alpha", body=f"version two {SECRET_WORDS[0]}", id="alpha")
    assert path.read_bytes() == before
    assert plaintext_hits(enc_project, enc_home) == []
    assert sorted(p.name for p in path.parent.iterdir() if p.name.endswith(".md")) == ["alpha.md"]


def test_a_lock_right_after_a_write_reports_the_note_written(
    enc_project: Path, enc_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was a bug: `remember` looks up the nearest notes after the note is on disk, and a
    lock in between (another process, the inactivity timeout) raised Locked — "nothing was
    written" — for a note that was written (the flaky lock-during-writes test above)."""
    import memdir.memory.encryption as encryption
    from memdir.retrieve import Retriever

    monkeypatch.setattr(encryption, "KEY_REUSE_SECONDS", 0.0)
    _encrypted(enc_project, enc_home)
    nearest = Retriever.nearest
    raised: list[BaseException] = []

    def locking(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        AgentClient(m.crypto.socket).lock()  # `memdir lock` elsewhere, right after the write
        try:
            return nearest(self, *args, **kwargs)
        except BaseException as exc:
            raised.append(exc)
            raise

    path = enc_project / "MEMORY" / "fresh.md"
    with open_memory(enc_project, enc_home) as m:
        monkeypatch.setattr(Retriever, "nearest", locking)
        result = m.remember("Fresh", body=f"The {SECRET_WORDS[3]} fjord.", id="fresh")
        monkeypatch.setattr(Retriever, "nearest", nearest)
    assert [type(e) for e in raised] == [Locked], "the lookup did not meet the lock"
    assert result.created and result.changed and result.note.id == "fresh"
    assert result.nearest == () and not result.likely_duplicate  # unknown, not failed
    assert is_sealed(path.read_bytes())
    with open_memory(enc_project, enc_home) as m:
        m.crypto.unlock(PASSWORD, idle_seconds=60)
        assert m.read("fresh").body == f"The {SECRET_WORDS[3]} fjord."
        assert m.notes.history("fresh")[-1].current
        assert not m.upkeep.doctor().problems


def test_a_failed_neighbour_lookup_never_fails_a_write(
    enc_project: Path, enc_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.retrieve import Retriever

    _encrypted(enc_project, enc_home)

    def damaged(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise IntegrityError("the search index is damaged again right after being rebuilt")

    with open_memory(enc_project, enc_home) as m:
        monkeypatch.setattr(Retriever, "nearest", damaged)
        result = m.remember("Fresh", body="a new note", id="fresh")
        assert result.created and result.nearest == ()
        assert m.read("fresh").body == "a new note"


def test_recall_on_a_locked_store_logs_no_traceback(
    enc_project: Path, enc_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Was a bug (a traceback logged on every prompt while locked), fixed in cd7992e."""
    _sealed_project(enc_project, enc_home)
    with open_memory(enc_project, enc_home) as m:
        m.crypto.lock()
        with caplog.at_level(logging.DEBUG), contextlib.suppress(Locked):
            found = m.recall(f"what about {SECRET_WORDS[0]}", [], is_subagent=False)
            assert found.count == 0  # (or Locked: said plainly)
    assert not [r for r in caplog.records if r.exc_info], "a traceback on every prompt"


# -- plaintext on disk ----------------------------------------------------------------


def test_decrypting_one_project_leaves_another_projects_backups_sealed(
    tmp_path: Path, enc_home: Path
) -> None:
    a, b = make_project(tmp_path, "a"), make_project(tmp_path, "b")
    with open_memory(b, enc_home) as m:
        m.remember("Bee", body=f"The {SECRET_WORDS[1]} plan.", id="bee")
        m.forget("bee")  # a backup of project b
        m.crypto.encrypt(PASSWORD)
    assert plaintext_hits(tmp_path) == []
    with open_memory(a, enc_home) as m:
        m.remember("Ay", body=f"The {SECRET_WORDS[0]} plan.", id="ay")
        m.crypto.encrypt(PASSWORD)
        m.crypto.decrypt()  # project a (and the user scope) back to plain
    with open_memory(b, enc_home) as m:
        assert m.crypto.status().scopes[0].state == "encrypted"  # b still is
    assert plaintext_hits(tmp_path, words=(SECRET_WORDS[1],)) == [], (
        "project b's backup is plaintext now"
    )


def test_encrypting_one_project_leaves_a_plain_projects_backups_plain(
    tmp_path: Path, enc_home: Path
) -> None:
    a, b = make_project(tmp_path, "a"), make_project(tmp_path, "b")
    with open_memory(b, enc_home) as m:
        m.remember("Bee", body=f"The {SECRET_WORDS[1]} plan.", id="bee")
        m.forget("bee")
    with open_memory(a, enc_home) as m:
        m.remember("Ay", body=f"The {SECRET_WORDS[0]} plan.", id="ay")
        m.crypto.encrypt(PASSWORD)
        m.crypto.lock()
    with open_memory(b, enc_home) as m:  # b was never encrypted
        backup = next(r for r in m.backups() if r.note_id == "bee")
        m.backups.restore(backup.id)
        assert SECRET_WORDS[1] in m.read("bee").body


def test_encrypt_seals_a_backup_that_has_no_sidecar(
    enc_project: Path, enc_home: Path, tmp_path: Path
) -> None:
    with open_memory(enc_project, enc_home) as m:
        m.remember("Old", body=f"The {SECRET_WORDS[2]} plan.", id="old")
        m.forget("old")
        (backup,) = m.backups()
        (enc_home / "memory-backups" / f"{backup.id}.json").unlink()  # an older memdir's backup
        m.crypto.encrypt(PASSWORD)
    assert plaintext_hits(tmp_path) == [], "a plaintext backup stayed after encrypt"


def test_encrypt_leaves_no_plaintext_temp_file_behind(enc_project: Path, enc_home: Path) -> None:
    with open_memory(enc_project, enc_home) as m:
        m.remember("Alpha", body=f"The {SECRET_WORDS[0]} protocol.", id="alpha")
        memory_dir = enc_project / "MEMORY"
        # what a write killed between its temp file and its rename leaves (atomic_write)
        shutil.copy(memory_dir / "alpha.md", memory_dir / ".alpha.md.tmp-0badf00d")
        m.crypto.encrypt(PASSWORD)
        m.search(SECRET_WORDS[0])
    assert plaintext_hits(enc_project) == [], "plaintext beside the sealed notes after encrypt"


def test_one_damaged_history_object_does_not_stop_encrypt(
    enc_project: Path, enc_home: Path
) -> None:
    with open_memory(enc_project, enc_home) as m:
        m.remember("Alpha", body=f"The {SECRET_WORDS[0]} protocol v1.", id="alpha")
        m.remember("Alpha", body=f"The {SECRET_WORDS[0]} protocol v2.", id="alpha")
        m.remember("Theme", body=f"Prefers {SECRET_WORDS[1]}.", id="theme", scope="user")
    objects = sorted((enc_home / "memory-history").rglob("objects/*/*.md"))
    damaged = objects[0]
    damaged.write_bytes(damaged.read_bytes().replace(b"protocol", b"protoc0l"))  # bit rot
    with open_memory(enc_project, enc_home) as m:
        with contextlib.suppress(MemdirError):
            m.crypto.encrypt(PASSWORD)
        states = {s.scope.value: s.state for s in m.crypto.status().scopes}
    assert states == {"project": "encrypted", "user": "encrypted"}
    assert [p for p in objects if p != damaged and not is_sealed(p.read_bytes())] == []


def test_encrypt_seals_the_backups_of_a_project_that_was_moved(
    tmp_path: Path, enc_home: Path
) -> None:
    before = make_project(tmp_path, "before")
    with open_memory(before, enc_home) as m:
        m.remember("Old", body=f"The {SECRET_WORDS[2]} plan.", id="old")
        m.forget("old")  # a backup whose origin is before/MEMORY
    after = tmp_path / "after"
    shutil.move(before, after)  # `mv ~/code/proj ~/work/proj`
    with open_memory(after, enc_home) as m:
        assert [b.note_id for b in m.backups()] == ["old"]  # still this project's backup
        m.crypto.encrypt(PASSWORD)
    assert plaintext_hits(tmp_path) == [], "a plaintext backup stayed after encrypt"


def test_decrypting_one_project_leaves_another_projects_old_backups_sealed(
    tmp_path: Path, enc_home: Path
) -> None:
    a, b = make_project(tmp_path, "a"), make_project(tmp_path, "b")
    with open_memory(b, enc_home) as m:
        m.remember("Bee", body=f"The {SECRET_WORDS[1]} plan.", id="bee")
        m.forget("bee")
        (backup,) = m.backups()
        (enc_home / "memory-backups" / f"{backup.id}.json").unlink()  # an older memdir's backup
        m.crypto.encrypt(PASSWORD)
    assert plaintext_hits(tmp_path) == []
    with open_memory(a, enc_home) as m:
        m.crypto.encrypt(PASSWORD, [Scope.PROJECT])
        m.crypto.decrypt([Scope.PROJECT])
    assert plaintext_hits(tmp_path, words=(SECRET_WORDS[1],)) == [], (
        "project b's old backup is plaintext now"
    )


def test_a_full_session_leaves_no_plaintext(
    enc_project: Path, enc_home: Path, tmp_path: Path
) -> None:
    with open_memory(enc_project, enc_home) as m:
        m.remember("Alpha", body=f"The {SECRET_WORDS[0]} protocol.", id="alpha")
        m.crypto.encrypt(PASSWORD)
        m.remember("Bee", body=f"The {SECRET_WORDS[1]} thing in detail.", id="bee", tags=["x"])
        m.remember("Bee two", body=f"The {SECRET_WORDS[1]} thing, again.", id="bee2", tags=["x"])
        m.search(SECRET_WORDS[1])
        m.notes.supersede("bee", by="bee2")
        m.tidy.findings()
        m.agent.prompt_index()
        m.recall(f"about {SECRET_WORDS[1]}", [], is_subagent=False)
        m.forget("alpha")
        m.backups.restore(next(b.id for b in m.backups() if b.note_id == "alpha"))
        m.forget("alpha", purge=True)
        assert m.upkeep.doctor(deep=True).ok
        m.index.reindex()
    assert plaintext_hits(tmp_path) == []
    plain = [p for p in tmp_path.rglob("*.md") if not is_sealed(p.read_bytes())]
    assert plain == []


# -- data loss ------------------------------------------------------------------------


def test_the_recovery_key_opens_a_project_on_a_new_machine(
    enc_project: Path, enc_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recovery = _sealed_project(enc_project, enc_home)
    with open_memory(enc_project, enc_home) as m:
        m.crypto.lock()
    # The laptop is lost; the project comes back from its git remote, a new home is made.
    new_home = tmp_path / "new-home"
    new_home.mkdir()
    monkeypatch.setenv("MEMDIR_HOME", str(new_home))
    with open_memory(enc_project, new_home) as m:
        m.crypto.unlock(recovery_key=recovery)
        assert SECRET_WORDS[0] in m.read("alpha").body


def test_two_first_encrypts_at_once_lose_no_note(
    tmp_path: Path, enc_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.crypto.keys import Keyring

    project = make_project(tmp_path)
    with open_memory(project, enc_home) as m:
        m.remember("Alpha", body=f"The {SECRET_WORDS[0]} protocol.", id="alpha")
    real = Keyring.create
    raced: list[str] = []

    def racing(password: bytes, now_ms: int):  # type: ignore[no-untyped-def]
        if not raced:  # another `memdir encrypt` runs between the check and the save
            raced.append("x")
            with open_memory(project, enc_home) as other:
                raced.append(other.crypto.encrypt(PASSWORD).recovery_key or "")
        return real(password, now_ms)

    monkeypatch.setattr(Keyring, "create", staticmethod(racing))
    with open_memory(project, enc_home) as m, contextlib.suppress(MemdirError):
        m.crypto.encrypt(PASSWORD)  # refused cleanly, or it went through
    monkeypatch.setattr(Keyring, "create", real)
    with open_memory(project, enc_home) as m:
        m.crypto.lock()
        m.crypto.unlock(PASSWORD)
        assert SECRET_WORDS[0] in m.read("alpha").body


def test_passwd_keeps_the_notes_and_the_old_password_stops_working(
    enc_project: Path, enc_home: Path
) -> None:
    from memdir.errors import WrongPassword

    recovery = _sealed_project(enc_project, enc_home)
    with open_memory(enc_project, enc_home) as m:
        m.crypto.passwd(b"a new password!", old_password=PASSWORD)
        m.crypto.lock()
        with pytest.raises(WrongPassword):
            m.crypto.unlock(PASSWORD)
        m.crypto.unlock(recovery_key=recovery.lower().replace("-", " "))
        assert SECRET_WORDS[0] in m.read("alpha").body


# -- error handling -------------------------------------------------------------------


def test_listing_sealed_notes_without_a_keyring_is_an_error_not_an_empty_store(
    enc_project: Path, enc_home: Path
) -> None:
    _sealed_project(enc_project, enc_home)
    keyring_path(enc_home).unlink()
    with open_memory(enc_project, enc_home) as m, pytest.raises(MemdirError):
        m.notes.list()


def test_doctor_reports_a_damaged_marker(enc_project: Path, enc_home: Path) -> None:
    _sealed_project(enc_project, enc_home)
    (enc_project / "MEMORY" / MARKER).write_text("{damaged\n")
    with open_memory(enc_project, enc_home) as m:
        with pytest.raises(IntegrityError):
            m.remember("New", body="refused", id="new")
        assert not m.upkeep.doctor(deep=True).ok


def _damage(path: Path) -> None:
    lines = path.read_bytes().split(b"\n")
    lines[1] = b"!!!" + lines[1][3:]  # not base64 any more
    path.write_bytes(b"\n".join(lines))


def test_a_damaged_sealed_note_is_reported_not_served(enc_project: Path, enc_home: Path) -> None:
    _sealed_project(enc_project, enc_home)
    _damage(enc_project / "MEMORY" / "alpha.md")
    with open_memory(enc_project, enc_home) as m:
        assert [n.id for n in m.notes.list()] == ["theme"]
        assert not m.upkeep.doctor().ok
        with pytest.raises(MemdirError):
            m.read("alpha")


def test_a_damaged_sealed_note_does_not_break_search_or_deep_doctor(
    enc_project: Path, enc_home: Path
) -> None:
    _sealed_project(enc_project, enc_home)
    with open_memory(enc_project, enc_home) as m:
        m.remember("Beta", body=f"The {SECRET_WORDS[2]} notes.", id="beta")
    _damage(enc_project / "MEMORY" / "alpha.md")
    with open_memory(enc_project, enc_home) as m:
        assert [h.note_id for h in m.search(SECRET_WORDS[2])] == ["beta"]
        assert not m.upkeep.doctor(deep=True).ok


def test_a_keyring_asking_for_4_gib_of_argon2id_memory_is_refused_before_deriving(
    enc_project: Path, enc_home: Path
) -> None:
    import json

    from memdir.crypto.keys import Keyring

    _sealed_project(enc_project, enc_home)
    doc = json.loads(keyring_path(enc_home).read_bytes())
    doc["password"]["memlimit"] = 1 << 32
    doc["password"]["opslimit"] = 64
    with pytest.raises(IntegrityError):
        Keyring.from_json(json.dumps(doc).encode())


def test_a_tampered_keyring_kdf_cost_is_bounded(enc_project: Path, enc_home: Path) -> None:
    import json

    from memdir.crypto.keys import Keyring

    _sealed_project(enc_project, enc_home)
    doc = json.loads(keyring_path(enc_home).read_bytes())
    doc["password"]["memlimit"] = 1 << 40
    with pytest.raises(IntegrityError):
        Keyring.from_json(json.dumps(doc).encode())


def test_a_sealed_file_from_another_home_is_refused(tmp_path: Path, enc_home: Path) -> None:
    project = make_project(tmp_path)
    _sealed_project(project, enc_home)
    other = tmp_path / "other-home"
    other.mkdir()
    p2 = make_project(tmp_path, "p2")
    with open_memory(p2, other) as m:
        m.remember("Mine", body="mine", id="mine")
        m.crypto.encrypt(b"another password")
    shutil.copy(project / "MEMORY" / "alpha.md", p2 / "MEMORY" / "alpha.md")
    with open_memory(p2, other) as m:
        assert [n.id for n in m.notes.list()] == ["mine"]
        with pytest.raises(MemdirError):
            m.read("alpha")


# -- the agent cannot start -----------------------------------------------------------


def _long_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private XDG_RUNTIME_DIR too long for an AF_UNIX socket path (108 bytes)."""
    path = tmp_path / ("r" * 110)
    path.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    return path


def test_an_agent_that_cannot_start_is_a_clear_error(
    enc_project: Path, enc_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sealed_project(enc_project, enc_home)
    with open_memory(enc_project, enc_home) as m:
        m.crypto.lock()
    _long_runtime(tmp_path, monkeypatch)
    with open_memory(enc_project, enc_home) as m, pytest.raises(MemdirError):
        m.crypto.unlock(PASSWORD)


def test_a_first_encrypt_that_fails_does_not_lose_the_recovery_key(
    enc_project: Path,
    enc_home: Path,
    runtime: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with open_memory(enc_project, enc_home) as m:
        m.remember("Alpha", body=f"The {SECRET_WORDS[0]} protocol.", id="alpha")
    _long_runtime(tmp_path, monkeypatch)
    with open_memory(enc_project, enc_home) as m, contextlib.suppress(Exception):
        m.crypto.encrypt(PASSWORD)  # the agent cannot start
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    with open_memory(enc_project, enc_home) as m:
        report = m.crypto.encrypt(PASSWORD)
    assert report.recovery_key is not None, "no recovery key was ever shown"


# -- documented limits, confirmed -----------------------------------------------------


def test_a_sealed_note_swapped_in_from_another_scope_does_not_open(
    enc_project: Path, enc_home: Path
) -> None:
    with open_memory(enc_project, enc_home) as m:
        m.remember("Plan", body=f"The project's {SECRET_WORDS[3]} plan.", id="plan")
        m.crypto.encrypt(PASSWORD)
    user_file = enc_home / "memory" / "user" / "plan.md"
    shutil.copy(enc_project / "MEMORY" / "plan.md", user_file)
    with open_memory(enc_project, enc_home) as m, pytest.raises(MemdirError):
        m.read("plan", scope="user")


def test_a_replayed_older_sealed_version_is_taken_as_an_outside_edit(
    enc_project: Path, enc_home: Path
) -> None:
    """An older sealed file put back (git checkout, or someone with the disk) opens: it is
    recorded as an observed version, like an outside edit of a plain note. (Not a bug, but
    docs/encryption.md does not say that the format has no rollback protection.)"""
    with open_memory(enc_project, enc_home) as m:
        m.remember("Alpha", body="version one", id="alpha")
        m.crypto.encrypt(PASSWORD)
        old = (enc_project / "MEMORY" / "alpha.md").read_bytes()
        m.remember("Alpha", body="version two", id="alpha")
    (enc_project / "MEMORY" / "alpha.md").write_bytes(old)
    with open_memory(enc_project, enc_home) as m:
        assert m.read("alpha").body == "version one"
        assert m.notes.history("alpha")[-1].event == "observed"
