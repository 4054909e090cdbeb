"""The sync baseline of an encrypted scope: both revisions per note, copies sealed at rest,
and a baseline file from before end-to-end encryption read without a resync."""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
from pathlib import Path

from memdir.crypto.keys import subkeys
from memdir.crypto.seal import Kind, is_sealed, open_sealed, seal
from memdir.sync.baseline import Baseline
from memdir.sync.protocol import rev_of

KEYS = subkeys(secrets.token_bytes(32))
PLAIN = b"---\nid: n1\nsummary: quokkaviolet\n---\nbody\n"


class _Sealing:
    def seal(self, context: str, data: bytes) -> bytes:
        return seal(KEYS, data, kind=Kind.STATE, context=context) if data else data

    def open(self, context: str, data: bytes) -> bytes:
        if not is_sealed(data):
            return data
        return open_sealed(KEYS, data, kind=Kind.STATE, context=context).data


def _raw(path: Path, sql: str) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return list(db.execute(sql))


def test_an_old_baseline_gains_the_server_rev_column_and_reads_as_plain(tmp_path: Path) -> None:
    path = tmp_path / "user.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executescript(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE base (id TEXT PRIMARY KEY, rev TEXT NOT NULL, data BLOB NOT NULL);"
            "INSERT INTO meta VALUES ('schema', '1');"
        )
        db.execute("INSERT INTO base VALUES (?, ?, ?)", ("n1", rev_of(PLAIN), PLAIN))
        db.commit()
    baseline = Baseline(path)
    try:
        assert baseline.bases() == {"n1": rev_of(PLAIN)}
        assert baseline.server_revs() == {"n1": rev_of(PLAIN)}
        assert baseline.base("n1") is not None and baseline.base("n1").data == PLAIN  # type: ignore[union-attr]
        assert baseline.has_plain_wire()
    finally:
        baseline.close()


def test_an_encrypted_scope_keeps_both_revisions_and_seals_its_copies(tmp_path: Path) -> None:
    path = tmp_path / "project-x.sqlite"
    baseline = Baseline(path)
    baseline.sealing = _Sealing()
    wire = "ab" * 32
    try:
        with baseline.transaction():
            baseline.set_base("n1", rev_of(PLAIN), PLAIN, server_rev=wire)
            baseline.hold("n1", server_rev=wire, server_data=PLAIN, local_rev=None, reasons=("x",))
        assert baseline.bases() == {"n1": rev_of(PLAIN)}
        assert baseline.server_revs() == {"n1": wire}
        assert not baseline.has_plain_wire()
        copy = baseline.base("n1")
        assert copy is not None and copy.data == PLAIN and copy.server_rev == wire
        assert baseline.text_of(rev_of(PLAIN)) == PLAIN
        (held,) = baseline.conflicts()
        assert held.server_data == PLAIN and held.server_rev == wire
        ((stored,),) = _raw(path, "SELECT data FROM base")
        ((server_data,),) = _raw(path, "SELECT server_data FROM conflicts")
        assert is_sealed(bytes(stored)) and is_sealed(bytes(server_data))  # type: ignore[arg-type]
    finally:
        baseline.close()
    assert b"quokkaviolet" not in path.read_bytes()
