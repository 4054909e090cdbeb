"""Opening the index database: creation, rebuild on version mismatch or damage, concurrency."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from memdir import Memory
from memdir.core import Note, Scope, render_note
from memdir.index import db as index_db
from memdir.index.schema import SCHEMA_VERSION, open_index_db
from memdir.store.notedir import NoteDirectory

GARBAGE = b"this is not a database \x00\xff" * 300


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_a_new_index_is_created_with_its_version_in_wal_mode(tmp_path: Path) -> None:
    conn, rebuilt = open_index_db(tmp_path / "deep" / "index.sqlite3")
    try:
        assert rebuilt is False
        assert {"meta", "notes", "chunks", "fts", "vectors"} <= _tables(conn)
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        assert row == (SCHEMA_VERSION,)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    finally:
        conn.close()


def test_reopening_keeps_the_data(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    conn, _ = open_index_db(path)
    conn.execute("INSERT INTO meta(key, value) VALUES ('kept', 'yes')")
    conn.close()
    conn, rebuilt = open_index_db(path)
    try:
        assert rebuilt is False
        assert conn.execute("SELECT value FROM meta WHERE key='kept'").fetchone() == ("yes",)
    finally:
        conn.close()


def test_another_schema_version_is_rebuilt_empty(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    conn, _ = open_index_db(path)
    conn.execute("UPDATE meta SET value='0-older' WHERE key='schema_version'")
    conn.execute("INSERT INTO meta(key, value) VALUES ('stale', 'row')")
    conn.close()
    conn, rebuilt = open_index_db(path)
    try:
        assert rebuilt is True
        assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == (
            SCHEMA_VERSION,
        )
        assert conn.execute("SELECT count(*) FROM meta WHERE key='stale'").fetchone() == (0,)
    finally:
        conn.close()


def _foreign(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE foreign_t(x)")
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("damage", "rebuilt_expected"),
    [
        pytest.param(lambda p: p.write_bytes(GARBAGE), True, id="garbage"),
        pytest.param(lambda p: p.write_bytes(GARBAGE[:50]), True, id="truncated"),
        pytest.param(_foreign, True, id="foreign-database"),
        pytest.param(lambda p: p.write_bytes(b""), False, id="empty-file"),
    ],
)
def test_a_damaged_or_foreign_file_is_rebuilt(
    tmp_path: Path, damage: Callable[[Path], object], rebuilt_expected: bool
) -> None:
    path = tmp_path / "index.sqlite3"
    damage(path)
    Path(f"{path}-wal").write_bytes(GARBAGE)  # a stray log next to it must not matter
    conn, rebuilt = open_index_db(path)
    try:
        assert rebuilt is rebuilt_expected
        assert {"meta", "notes", "chunks", "fts", "vectors"} <= _tables(conn)
        assert "foreign_t" not in _tables(conn)
        conn.execute("INSERT INTO meta(key, value) VALUES ('works', '1')")
    finally:
        conn.close()


def _answers(memory: Memory) -> list[object]:
    out: list[object] = []
    for query in ("walrus", "fills pricing", "数据库", "Häuser"):
        hits = memory.search(query, method="lexical")
        chunks = memory.index.retrieve(query, method="lexical")
        out.append([(h.note_id, h.score, h.snippet, h.revision) for h in hits])
        out.append([(c.note_id, c.chunk_hash, c.start, c.end, c.score) for c in chunks])
    return out


@pytest.mark.parametrize("how", ["schema-version", "garbage"])
def test_search_rebuilds_a_stale_index_with_the_same_answers(
    project: Path, home: Path, how: str
) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    with Memory.open(project, home=home) as memory:
        memory.remember("Pricing cards use fills", "The walrus approves of fills.")
        memory.remember("Walrus facts", "A walrus has tusks. " * 60)
        memory.remember("Datenbank", "数据库使用PostgreSQL. Die Häuser sind teuer.")
        before = _answers(memory)
        assert before[0]
    files = sorted((home / "index").glob("*.sqlite3"))
    assert files
    for path in files:
        if how == "garbage":
            path.write_bytes(GARBAGE)
        else:
            conn = sqlite3.connect(path)
            conn.execute("UPDATE meta SET value='0' WHERE key='schema_version'")
            conn.commit()
            conn.close()
    with Memory.open(project, home=home) as memory:
        assert _answers(memory) == before


# Each process waits for the others, then opens the index; removing a stale file takes a
# random while, which widens the window in which unserialised opens would race.
_OPENER = textwrap.dedent(
    """
    import random, sys, time
    from pathlib import Path
    import memdir.index.schema as schema
    from memdir.index.schema import open_index_db
    path, ready, go, me = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    real_remove = schema._remove
    def slow_remove(p):
        time.sleep(random.random() * 0.05)
        real_remove(p)
    schema._remove = slow_remove
    ready.touch()
    while not go.exists():
        time.sleep(0.0005)
    conn, rebuilt = open_index_db(path)
    conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (me, str(rebuilt)))
    conn.close()
    print(rebuilt)
    """
)


def _open_together(tmp_path: Path, path: Path, n: int) -> list[str]:
    go = tmp_path / "go"
    go.unlink(missing_ok=True)
    procs = []
    for i in range(n):
        ready = tmp_path / f"ready-{i}"
        ready.unlink(missing_ok=True)
        procs.append(
            (
                ready,
                subprocess.Popen(
                    [sys.executable, "-c", _OPENER, str(path), str(ready), str(go), f"proc-{i}"],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
        )
    deadline = time.monotonic() + 60
    while not all(r.exists() for r, _ in procs) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    outputs = []
    for _, proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        outputs.append(out.strip())
    return outputs


@pytest.mark.parametrize("start", ["missing", "garbage", "other-version"])
def test_concurrent_first_opens_from_several_processes(tmp_path: Path, start: str) -> None:
    """Every process ends up writing to the one database on disk: none deletes a fresh
    database another has just created, none fails creating the tables twice."""
    for round_ in range(2):
        path = tmp_path / f"index-{round_}.sqlite3"
        if start == "garbage":
            path.write_bytes(GARBAGE)
        elif start == "other-version":
            conn, _ = open_index_db(path)
            conn.execute("UPDATE meta SET value='0' WHERE key='schema_version'")
            conn.close()
        outputs = _open_together(tmp_path, path, 5)
        conn, rebuilt = open_index_db(path)
        try:
            assert rebuilt is False
            keys = {r[0] for r in conn.execute("SELECT key FROM meta WHERE key LIKE 'proc-%'")}
            assert keys == {f"proc-{i}" for i in range(5)}
        finally:
            conn.close()
        assert outputs.count("True") == (0 if start == "missing" else 1)


def test_an_index_without_the_added_tables_gets_them_keeping_its_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index written by a memdir that predates the ctime and recall-terms tables is
    not rebuilt: they are added, nothing indexed (vectors above all, which cost minutes to
    make) is lost, and each file is read once to fill them in. A process of that older
    memdir, still running, goes on writing notes as it did."""
    from memdir.index.db import SearchIndex
    from memdir.store.notedir import NoteDirectory

    monkeypatch.setattr("memdir.index.rows.RACY_NS", 1_000_000)
    notes = NoteDirectory(Scope.PROJECT, tmp_path / "notes", lock_timeout=5, max_notes=100)
    notes.path.mkdir()
    for i in range(3):
        note = Note(id=f"n-{i}", summary=f"Walrus {i}", body="walrus", created_at=1, updated_at=1)
        (notes.path / f"n-{i}.md").write_bytes(render_note(note))
    path = tmp_path / "index.sqlite3"
    index = SearchIndex(path)
    index.refresh(notes)
    pending = index.pending("fake", limit=10)
    index.put_vectors("fake", [h for h, _ in pending], np.eye(len(pending), 4, dtype=np.float32))
    index.close()
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("DROP TABLE note_ctimes")
    old.execute("DROP TABLE recall_terms")
    tables = ("notes", "chunks", "vectors", "fts")
    before = {t: old.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}

    index = SearchIndex(path)
    try:
        assert not index.rebuilt
        stats = index.refresh(notes)
        assert (stats.added, stats.updated, stats.removed) == (0, 0, 0)  # re-stamped only
        assert index.pending("fake", limit=10) == []  # every vector kept
        time.sleep(0.01)
        assert index.refresh(notes).unchanged == 3
        # The older process writes a note as it did: 13 values, no column list.
        old.execute(
            "INSERT INTO notes VALUES (?,?,?,?,?,'bad',?,'','',NULL,'[]','[]',0)",
            ("n-9", 10, 1, 2, 3, "rev"),
        )
        after = {t: old.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
        assert after == {**before, "notes": before["notes"] + 1}
        assert old.execute("SELECT count(*) FROM note_ctimes").fetchone() == (3,)
        assert old.execute("SELECT count(*) FROM recall_terms").fetchone() == (3,)
        version = old.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        assert version == (SCHEMA_VERSION,)
    finally:
        index.close()
        old.close()


def test_converting_a_version_4_index_in_place_keeps_a_running_version_4_process_working(
    tmp_path: Path,
) -> None:
    """A memdir that predates the added tables (an MCP server started before the upgrade)
    keeps its connection to the index and writes rows as it did: 13 values, no column
    list. The tables are added beside the notes table, whose layout is unchanged."""
    import sqlite3

    from memdir.core import Note, Scope, render_note

    notes = NoteDirectory(Scope.PROJECT, tmp_path / "notes", lock_timeout=5, max_notes=100)
    notes.path.mkdir()
    note = Note(id="n-1", summary="Walrus", body="walrus", created_at=1, updated_at=1)
    (notes.path / "n-1.md").write_bytes(render_note(note))
    path = tmp_path / "index.sqlite3"
    index = index_db.SearchIndex(path)
    index.refresh(notes)
    index.close()
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("DROP TABLE note_ctimes")  # what the older memdir did not have
    old.execute("DROP TABLE recall_terms")
    index = index_db.SearchIndex(path)  # this version opens it: the tables are added
    index.close()
    # The older process indexes a note it cannot parse, as its code did.
    old.execute(
        "INSERT INTO notes VALUES (?,?,?,?,?,'bad',?,'','',NULL,'[]','[]',0)",
        ("n-2", 10, 1, 2, 3, "rev"),
    )
    old.close()
