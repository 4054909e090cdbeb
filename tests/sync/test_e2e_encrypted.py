"""End-to-end encrypted sync (§7, §8.2, issue 15) against a real server, on both backends.

Machine A encrypts its notes and syncs; machine B joins with the password (or the
recovery key) it fetches the keyring for from the server. The server stores and returns
sealed texts only: no file of the directory backend and no row of the PostgreSQL tables
holds a distinctive word of the notes (note ids are visible, as documented). Merges,
conflicts, tombstones and resolving work as for plain stores, and what the client keeps
for them (baselines, the server's side of a conflict, backups) is sealed at rest.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
from pathlib import Path

import pytest

from memdir.core import Scope
from memdir.crypto.seal import is_sealed
from memdir.errors import IntegrityError, Locked, MemdirError, NotFound, WrongPassword
from memdir.store.sealing import MARKER, keyring_path, read_marker
from memdir.sync.protocol import Entry, is_sealed_text

from .conftest import Machine, World, report

PASSWORD = b"correct horse battery staple"
#: Words in the notes and nowhere else: a plaintext scan looks for them.
WORDS = (
    "quokkaviolet",
    "marmaladeheliotrope",
    "zanzibarcobalt",
    "fjordpistachio",
    "xylophonemango",
    "tangerinewombat",
)
BODY = "\n".join(f"step {i}: check the {WORDS[0]} gauge" for i in range(8))


@pytest.fixture(autouse=True)
def _agents(runtime: Path) -> Path:
    """Every test here: a short private XDG_RUNTIME_DIR (tests/conftest.py `runtime`)."""
    return runtime


def _hits(data: bytes) -> list[str]:
    low = data.lower()
    return [w for w in WORDS if w.encode() in low or w.encode().hex().encode() in low]


def _plaintext_in(*roots: Path) -> list[str]:
    """Files under `roots` holding a note word (as bytes, or hex-encoded)."""
    found = []
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                path = Path(dirpath) / name
                with contextlib.suppress(OSError):
                    if _hits(path.read_bytes()):
                        found.append(str(path))
    return found


def _plaintext_on_server(world: World) -> list[str]:
    """Files of the server's data folder, or rows of every PostgreSQL table, with a word.

    The data folder may be shared with other tests' accounts: theirs are left out."""
    data = world.server.data
    found = _plaintext_in(data / "users" / world.user)
    found += [str(p) for p in data.iterdir() if p.is_file() and _hits(p.read_bytes())]
    if world.server.backend == "postgres":
        import psycopg
        from psycopg import sql

        assert world.server.dsn is not None
        with psycopg.connect(world.server.dsn, autocommit=True) as conn:
            tables = [
                str(r[0])
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
                )
            ]
            assert "memdir_revisions" in tables and "memdir_keyrings" in tables
            for table in tables:
                query = sql.SQL("SELECT t::text FROM {} t").format(sql.Identifier(table))
                for (row,) in conn.execute(query):
                    if _hits(str(row).encode()):
                        found.append(f"{table}: {str(row)[:80]}")
    return found


def _encrypted_a(world: World, scopes: list[Scope] | None = None) -> tuple[Machine, str]:
    """Machine A with notes in both scopes, encrypted (all scopes, or `scopes`) and synced."""
    a = world.machine("a")
    a.memory.remember(
        f"Deploy {WORDS[1]}", body=BODY, id="deploy", tags=[WORDS[2]], scope="project"
    )
    a.memory.remember("Other", body=f"An {WORDS[3]} note.", id="other", scope="project")
    a.memory.remember("Theme", body=f"Prefers {WORDS[3]} colours.", id="theme", scope="user")
    done = a.memory.crypto.encrypt(PASSWORD, scopes)
    assert done.recovery_key is not None
    run = a.sync()
    assert not run.paused, run.paused
    return a, done.recovery_key


def _joined(world: World, name: str = "b", **unlock: str) -> Machine:
    b = world.machine(name)
    if unlock:
        b.memory.crypto.unlock(**unlock)  # type: ignore[arg-type]
    else:
        b.memory.crypto.unlock(PASSWORD)
    run = b.sync()
    assert not run.paused, run.paused
    return b


def _sync_state(machine: Machine, scope: str) -> list[tuple[object, ...]]:
    """Every row of a scope's sync state database (baselines, manifest, conflicts, meta)."""
    (path,) = (machine.home / "memory-sync").glob(f"{scope}*.sqlite")
    with contextlib.closing(sqlite3.connect(path)) as db:
        return [
            (table, *row)
            for table in ("base", "remote", "conflicts", "meta")
            for row in db.execute(f"SELECT * FROM {table} ORDER BY 1")
        ]


def _sealed_files(machine: Machine, scope: str) -> dict[str, bytes]:
    files = machine.files(scope)
    assert files and all(is_sealed(d) for d in files.values()), (machine, scope)
    return files


def test_b_joins_with_the_password_and_reads_a_notes(world: World) -> None:
    _encrypted_a(world)
    b = _joined(world)
    assert b.read("deploy").summary == f"Deploy {WORDS[1]}"
    assert list(b.read("deploy").tags) == [WORDS[2]]
    assert b.read("theme", "user").body == f"Prefers {WORDS[3]} colours."
    assert keyring_path(b.home).is_file()
    for scope in ("project", "user"):
        marker = read_marker(b.directory(scope))
        assert marker is not None and marker.state == "encrypted"
        _sealed_files(b, scope)
    # What the server holds is sealed: every live text, in both scopes.
    for key in (world.key("project"), world.key("user")):
        manifest = world.manifest(key)
        assert manifest.notes
        with world.server.storage() as store:
            texts = store.objects(world.user, key, {e.rev: i for i, e in manifest.notes.items()})
        assert texts and all(is_sealed_text(t) for t in texts.values())
        assert all(e.hash == e.rev for e in manifest.notes.values())  # the stand-in
    assert _plaintext_on_server(world) == []
    assert _plaintext_in(b.home, b.directory("project"), b.directory("user")) == []


def test_b_joins_with_the_recovery_key(world: World) -> None:
    _, recovery = _encrypted_a(world)
    b = _joined(world, recovery_key=recovery)
    assert b.read("other").body == f"An {WORDS[3]} note."


def test_a_wrong_password_on_b_fails_clearly_and_keeps_no_keyring(world: World) -> None:
    _encrypted_a(world)
    b = world.machine("b")
    with pytest.raises(WrongPassword, match="password"):
        b.memory.crypto.unlock(b"not the password at all")
    assert not keyring_path(b.home).exists()


def test_without_a_keyring_b_refuses_the_encrypted_scope_and_writes_nothing(
    world: World,
) -> None:
    _encrypted_a(world, [Scope.PROJECT])
    b = world.machine("b")
    run = b.sync()  # the user scope is plain: it syncs; the project scope is refused
    assert "keyring" in run.paused["project"]
    assert b.read("theme", "user").body == f"Prefers {WORDS[3]} colours."
    assert b.files("project") == {}
    assert read_marker(b.directory("project")) is None
    with pytest.raises(Locked, match="keyring"):
        b.sync("project")
    assert b.files("project") == {}


def test_b_locked_refuses_the_scope_and_writes_nothing(world: World) -> None:
    a, _ = _encrypted_a(world, [Scope.PROJECT])
    b = _joined(world)
    before = b.files("project")
    state_before = _sync_state(b, "project")
    a.edit("other", lambda body: body + f"\nAnd a {WORDS[4]}.")
    a.sync()
    assert b.memory.crypto.lock() is True
    run = b.sync()
    assert "locked" in run.paused["project"]
    assert report(run, "user").scope == "user"  # the plain scope went on
    with pytest.raises(Locked):
        b.sync("project")
    assert b.files("project") == before
    assert _sync_state(b, "project") == state_before
    b.memory.crypto.unlock(PASSWORD)
    b.sync()
    assert WORDS[4] in b.read("other").body


def test_edits_on_both_machines_merge_three_ways(world: World) -> None:
    a, _ = _encrypted_a(world)
    b = _joined(world)
    a.set_line("deploy", 1, f"step 1: {WORDS[4]} first")
    b.set_line("deploy", 6, f"step 6: {WORDS[5]} later")
    world.sync(a, b, a)
    for machine in (a, b):
        body = machine.read("deploy").body
        assert f"step 1: {WORDS[4]} first" in body and f"step 6: {WORDS[5]} later" in body
    assert a.files("project").keys() == b.files("project").keys()
    assert a.read("deploy").body == b.read("deploy").body
    assert _plaintext_on_server(world) == []
    assert _plaintext_in(b.home / "memory-sync", a.home / "memory-sync") == []
    for machine in (a, b):
        for _id, _reason, data in machine.backups():
            assert is_sealed(data)


def test_a_conflict_is_held_sealed_and_resolves(world: World) -> None:
    a, _ = _encrypted_a(world)
    b = _joined(world)
    a.set_line("deploy", 3, f"step 3: {WORDS[4]} here")
    b.set_line("deploy", 3, "step 3: something else")
    a.sync()
    run = b.sync()
    assert report(run).conflicts == ["deploy"]
    (view,) = b.memory.sync.conflicts()
    assert view.server is not None and WORDS[4] in view.server
    assert view.baseline is not None and WORDS[0] in view.baseline
    # The server's side of the conflict is kept on B sealed: no word in memory-sync.
    assert _plaintext_in(b.home / "memory-sync") == []
    b.memory.sync.resolve("deploy", keep="server")
    world.sync(b, a)
    for machine in (a, b):
        assert f"step 3: {WORDS[4]} here" in machine.read("deploy").body
    assert b.memory.sync.conflicts() == []
    assert _plaintext_in(b.home, a.home) == []
    assert _plaintext_on_server(world) == []


def test_a_delete_becomes_a_tombstone_and_removes_the_note_on_b(world: World) -> None:
    a, _ = _encrypted_a(world)
    b = _joined(world)
    a.delete("other")
    a.sync()
    manifest = world.manifest(world.key("project"))
    assert "other" in manifest.tombstones and "other" not in manifest.notes
    run = b.sync()
    assert report(run).deleted_here == ["other"]
    assert not b.has("other")
    backups = [(i, d) for i, _r, d in b.backups() if i == "other"]
    assert backups and all(is_sealed(d) for _, d in backups)
    assert _plaintext_in(b.home) == []


def test_a_text_replayed_under_another_id_is_refused(world: World) -> None:
    _encrypted_a(world, [Scope.PROJECT])
    key = world.key("project")
    with world.server.storage() as store:
        current = store.manifest(world.user, key)
        deploy: Entry = current.notes["deploy"]
        (text,) = store.objects(world.user, key, {deploy.rev: "deploy"}).values()
        store.put_objects(world.user, key, [("other", deploy.rev, text)])
        notes = {**current.notes, "other": deploy}
        replayed = current.model_copy(update={"version": current.version + 1, "notes": notes})
        assert store.swap_manifest(world.user, key, current.version, replayed)
    b = world.machine("b")
    b.memory.crypto.unlock(PASSWORD)
    with pytest.raises(IntegrityError, match="other"):
        b.sync("project")
    assert b.files("project") == {}


def test_a_replayed_text_is_not_written_on_a_machine_that_synced_before(world: World) -> None:
    a, _ = _encrypted_a(world, [Scope.PROJECT])
    before = a.files("project")
    key = world.key("project")
    with world.server.storage() as store:
        current = store.manifest(world.user, key)
        deploy = current.notes["deploy"]
        (text,) = store.objects(world.user, key, {deploy.rev: "deploy"}).values()
        store.put_objects(world.user, key, [("other", deploy.rev, text)])
        notes = {**current.notes, "other": deploy}
        replayed = current.model_copy(update={"version": current.version + 1, "notes": notes})
        assert store.swap_manifest(world.user, key, current.version, replayed)
    with pytest.raises(MemdirError):
        a.sync("project")
    assert a.files("project") == before


def test_the_keyring_document_on_the_server(world: World) -> None:
    a, _ = _encrypted_a(world)
    import httpx

    from sync_server import auth_headers

    url = f"{world.server.url}/v1/keyring"
    got = httpx.get(url, headers=auth_headers(world.token))
    assert got.status_code == 200, got.text
    doc = got.json()
    assert doc["version"] == 1 and doc["key_id"] == a.memory.crypto.status().key_id
    assert "wrapped" in doc["keyring"] and WORDS[0] not in doc["keyring"]
    other = dict(doc, key_id="00" * 8, expected=1)
    refused = httpx.put(url, json=other, headers=auth_headers(world.token))
    assert refused.status_code == 409 and refused.json()["error"] == "key_mismatch"
    stale = httpx.put(url, json=dict(doc, expected=0), headers=auth_headers(world.token))
    assert stale.status_code == 409 and stale.json()["error"] == "stale"
    # A new password wrap (same key id) travels: B then unlocks with the new password.
    a.memory.crypto.passwd(b"a brand new passphrase", old_password=PASSWORD)
    a.sync()
    assert httpx.get(url, headers=auth_headers(world.token)).json()["version"] == 2
    b = world.machine("b")
    with pytest.raises(WrongPassword):
        b.memory.crypto.unlock(PASSWORD)
    b.memory.crypto.unlock(b"a brand new passphrase")
    b.sync()
    assert b.read("deploy").body == BODY


def test_unlock_without_keyring_anywhere_says_so(world: World) -> None:
    world.machine("a").note("plain", "a plain note")
    b = world.machine("b")
    with pytest.raises(NotFound, match="keyring"):
        b.memory.crypto.unlock(PASSWORD)


def test_a_store_synced_plain_then_encrypted_uploads_its_notes_again_sealed(
    world: World,
) -> None:
    a = world.machine("a")
    a.memory.remember("Plain first", body=f"The {WORDS[0]} note.", id="first")
    a.sync()
    assert _plaintext_on_server(world) != []
    a.memory.crypto.encrypt(PASSWORD, [Scope.PROJECT])
    a.sync()
    manifest = world.manifest(world.key("project"))
    with world.server.storage() as store:
        (text,) = store.objects(
            world.user, world.key("project"), {manifest.notes["first"].rev: "first"}
        ).values()
    assert is_sealed_text(text)
    b = _joined(world)
    assert b.read("first").body == f"The {WORDS[0]} note."


def test_a_plain_machine_still_syncs_beside(world: World) -> None:
    a = world.machine("a")
    b = world.machine("b")
    note = a.note("A plain note", f"with {WORDS[0]}")
    world.sync(a, b)
    assert b.read(note).body == f"with {WORDS[0]}"
    assert not is_sealed(b.files("project")[note])
    assert not (b.directory("project") / MARKER).exists()


def test_a_commit_first_batch_goes_to_the_server_sealed(world: World) -> None:
    a, _ = _encrypted_a(world)
    b = _joined(world)
    changed = dataclasses.replace(a.read("deploy"), body=f"Merged: {WORDS[5]}.")
    done = a.memory.sync.replica.commit_first(
        Scope.PROJECT, {"deploy": changed, "other": None}, "a test batch"
    )
    assert done is not None and done.written == ["deploy"] and done.deleted == ["other"]
    assert is_sealed(a.files("project")["deploy"])
    assert a.read("deploy").body == f"Merged: {WORDS[5]}."
    assert _plaintext_on_server(world) == []
    assert not report(a.sync()).pushed  # nothing left to send
    b.sync()
    assert b.read("deploy").body == f"Merged: {WORDS[5]}." and not b.has("other")
