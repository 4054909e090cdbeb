"""Three sync server replicas over one PostgreSQL database behind a proxy (§12, scale-out).

The replicas share nothing but the database: each has a data directory of its own, and
the accounts and the rate limits live in the database too. Machines of two accounts
sync through a round-robin proxy, one replica is SIGKILLed as a commit reaches it, the
machines go on through the other two, and every account converges with nothing lost.
(The kill lands 10 ms after the commit is sent: in the middle of it on this machine,
whose commits take longer, but a fast machine may answer first; either way nothing may
be lost.)
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

from fault_proxy import FaultProxy
from memdir import Memory
from memdir.server.storage.postgres import PostgresStorage
from memdir.sync.protocol import rev_of
from sync_server import add_user, running_server

MACHINES = {"a1": "alice", "a2": "alice", "a3": "alice", "b1": "bob", "b2": "bob"}


def _sync_all(memories: dict[str, Memory]) -> dict[str, str]:
    """One pass on every machine at once; the errors of those that failed, by machine."""
    errors: dict[str, str] = {}

    def run(name: str, memory: Memory) -> None:
        try:
            memory.sync.run()
        except Exception as exc:  # a pass that met the dying replica: the next one goes on
            errors[name] = f"{type(exc).__name__}: {exc}"

    threads = [threading.Thread(target=run, args=item) for item in memories.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return errors


def test_a_replica_killed_mid_commit_loses_nothing(tmp_path: Path, pg_database_dsn: str) -> None:
    users = sorted(set(MACHINES.values()))
    tokens = {u: add_user(tmp_path, u, backend="postgres", dsn=pg_database_dsn) for u in users}
    with contextlib.ExitStack() as stack:
        replicas = [
            stack.enter_context(
                running_server(
                    tmp_path / f"replica-{n}",
                    backend="postgres",
                    dsn=pg_database_dsn,
                    extra_args=["--rate-limit", "0"],
                )
            )
            for n in range(3)
        ]
        proxy = stack.enter_context(FaultProxy(replicas[0].url))
        proxy.spread = [r.url for r in replicas]
        memories: dict[str, Memory] = {}
        for name, user in MACHINES.items():
            home = tmp_path / name
            home.mkdir()
            (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
            memory = stack.enter_context(contextlib.closing(Memory.open(None, home=home)))
            memory.sync.login(proxy.url, tokens[user])
            memories[name] = memory
        written: dict[str, set[str]] = {user: set() for user in tokens}

        def write_round(label: str) -> None:
            for name, memory in memories.items():
                for n in range(3):
                    summary = f"{name} {label} note {n}"
                    note = memory.remember(summary, body=f"{summary}.", scope="user").note
                    written[MACHINES[name]].add(note.id)

        write_round("first")
        assert _sync_all(memories) == {}

        # The next commit goes to replica 3, which is killed while the request is in it.
        victim = replicas[2]

        def kill_soon() -> None:
            threading.Timer(0.01, victim.kill).start()

        proxy.script("/v1/memory/commit", "pass", before=kill_soon, to=victim.url)
        write_round("second")
        _sync_all(memories)  # some passes may fail at the kill: the next ones retry
        deadline = time.monotonic() + 10
        while victim.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert victim.process.poll() is not None, "the replica was not killed"

        write_round("third")
        for _ in range(4):
            errors = _sync_all(memories)
            assert errors == {}, errors
        for memory in memories.values():
            run = memory.sync.run()
            assert not any(r.changed or r.conflicts for r in run.reports), run

    storage = PostgresStorage(pg_database_dsn)
    try:
        for user, ids in written.items():
            mine = [m for n, m in memories.items() if MACHINES[n] == user]
            files = [
                {p.stem: p.read_bytes() for p in m.stores.directory("user").glob("*.md")}
                for m in mine
            ]
            assert set(files[0]) == ids, f"{user}: notes lost or extra on a machine"
            assert all(f == files[0] for f in files[1:]), f"{user}: machines differ"
            manifest = storage.manifest(user, "user")
            assert set(manifest.notes) == ids, f"{user}: the server lost or added notes"
            wanted = {e.rev: i for i, e in manifest.notes.items()}
            stored = storage.objects(user, "user", wanted)
            assert stored.keys() == wanted.keys()
            assert all(rev_of(body) == rev for rev, body in stored.items())
            assert {rev_of(files[0][i]) for i in ids} == set(wanted)
    finally:
        storage.close()
