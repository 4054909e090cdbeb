"""A damaged index heals: it is rebuilt from the files with one warning, and doctor reports it.

The damage is real: bytes of the database file are overwritten on disk (its 100-byte
header kept, so SQLite still opens it), or a full-text block is overwritten inside a
database that SQLite's page check still passes.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memdir import Memory
from memdir.index.db import IndexDamaged, SearchIndex
from memdir.index.schema import is_damage, open_index

HEADER = 100
PAGE = 4096
GARBAGE = b"\xde\xad\xbe\xef not a b-tree page "


def overwrite(path: Path, start: int) -> None:
    """Overwrite every byte of `path` from `start` on with garbage (the file keeps its size)."""
    data = bytearray(path.read_bytes())
    assert len(data) > start + PAGE, "the database is too small to damage meaningfully"
    data[start:] = (GARBAGE * (len(data) // len(GARBAGE) + 1))[: len(data) - start]
    path.write_bytes(bytes(data))


def damage_fts(path: Path) -> None:
    """Overwrite the full-text index's blocks with random bytes inside an otherwise sound
    database: SQLite's page check passes, the first full-text query fails."""
    conn = sqlite3.connect(path)
    conn.execute("UPDATE fts_data SET block = randomblob(length(block)) WHERE id > 10")
    conn.commit()
    conn.close()


def answers(memory: Memory) -> list[object]:
    out: list[object] = []
    for query in ("walrus", "fills pricing", "数据库", "Häuser"):
        hits = memory.search(query, method="lexical")
        chunks = memory.index.retrieve(query, method="lexical")
        out.append([(h.note_id, h.score, h.snippet, h.revision) for h in hits])
        out.append([(c.note_id, c.chunk_hash, c.start, c.end, c.score) for c in chunks])
    return out


def damage_warnings(memory: Memory) -> list[str]:
    return [w for w in memory.warnings if "search index" in w and "damaged" in w]


@pytest.fixture
def indexed(project: Path, home: Path) -> tuple[Path, list[object]]:
    """Notes enough for a multi-page index, searched once; (the project index file, answers)."""
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    with Memory.open(project, home=home) as memory:
        memory.remember("Pricing cards use fills", "The walrus approves of fills.")
        memory.remember("Walrus facts", "A walrus has tusks. " * 60)
        memory.remember("Datenbank", "数据库使用PostgreSQL. Die Häuser sind teuer.")
        for i in range(40):
            memory.remember(f"Filler note {i}", f"Paragraph {i} about nothing much. " * 30)
        before = answers(memory)
    assert before[0]
    files = [p for p in (home / "index").glob("project-*.sqlite3")]
    assert len(files) == 1 and files[0].stat().st_size > 8 * PAGE
    return files[0], before


@pytest.mark.parametrize(
    "start",
    [pytest.param(HEADER, id="after-header"), pytest.param(3 * PAGE, id="after-schema-pages")],
)
def test_search_over_overwritten_pages_heals_with_one_warning_and_the_same_answers(
    project: Path, home: Path, indexed: tuple[Path, list[object]], start: int
) -> None:
    path, before = indexed
    overwrite(path, start)
    with Memory.open(project, home=home) as memory:
        assert answers(memory) == before
        assert len(damage_warnings(memory)) == 1
        assert answers(memory) == before
        assert len(damage_warnings(memory)) == 1


def test_damage_met_by_a_query_heals_with_one_warning(
    project: Path, home: Path, indexed: tuple[Path, list[object]]
) -> None:
    path, before = indexed
    with Memory.open(project, home=home) as memory:
        assert answers(memory) == before  # the index is open before it is damaged
        damage_fts(path)
        assert answers(memory) == before
        assert len(damage_warnings(memory)) == 1


def test_reindex_works_over_a_damaged_index(
    project: Path, home: Path, indexed: tuple[Path, list[object]]
) -> None:
    path, before = indexed
    with Memory.open(project, home=home) as memory:
        answers(memory)
        damage_fts(path)
        stats = memory.index.reindex()
        assert stats.notes == 43
        assert answers(memory) == before
    overwrite(path, 3 * PAGE)
    with Memory.open(project, home=home) as memory:
        assert memory.index.reindex().notes == 43
        assert answers(memory) == before


def test_doctor_reports_an_index_healed_by_an_earlier_search_until_a_reindex(
    project: Path, home: Path, indexed: tuple[Path, list[object]]
) -> None:
    path, before = indexed
    overwrite(path, 3 * PAGE)
    with Memory.open(project, home=home) as memory:
        assert answers(memory) == before
    with Memory.open(project, home=home) as memory:  # another process, later
        report = memory.upkeep.doctor()
        assert not report.ok
        [finding] = report.index
        assert "project notes" in finding and "damaged" in finding and str(path) in finding
        memory.index.reindex()
        assert memory.upkeep.doctor().ok


def test_doctor_finds_damage_no_search_has_met_yet_and_repairs_it(
    project: Path, home: Path, indexed: tuple[Path, list[object]]
) -> None:
    path, before = indexed
    overwrite(path, 3 * PAGE)
    with Memory.open(project, home=home) as memory:
        report = memory.upkeep.doctor()
        assert not report.ok
        assert len(report.index) == 1 and "damaged" in report.index[0]
        assert damage_warnings(memory) == []  # reported once, as a finding
        assert answers(memory) == before
    conn = sqlite3.connect(path)  # doctor refilled it: the search did not need to
    assert conn.execute("SELECT count(*) FROM notes").fetchone() == (43,)
    conn.close()


def test_a_healthy_index_gives_doctor_nothing_to_say(
    memory: Memory, indexed: tuple[Path, list[object]]
) -> None:
    report = memory.upkeep.doctor()
    assert report.index == () and report.ok


# --- the index layer itself ---------------------------------------------------------------


def test_open_replaces_a_damaged_database_and_records_why(tmp_path: Path) -> None:
    path = tmp_path / "i.sqlite3"
    conn = open_index(path).conn
    conn.execute("CREATE TABLE filler(x)")
    conn.executemany("INSERT INTO filler VALUES (?)", [(b"x" * 3000,) for _ in range(50)])
    conn.close()
    overwrite(path, 3 * PAGE)
    opened = open_index(path)
    try:
        assert opened.rebuilt is True and opened.damage
        record = opened.conn.execute("SELECT value FROM meta WHERE key='damaged'").fetchone()
        assert record is not None
    finally:
        opened.conn.close()
    again = open_index(path)  # sound now: nothing to replace
    assert again.rebuilt is False and again.damage is None
    again.conn.close()


def test_a_query_on_a_damaged_index_raises_index_damaged_and_leaves_it_empty(
    tmp_path: Path,
) -> None:
    path = tmp_path / "i.sqlite3"
    index = SearchIndex(path)
    try:
        conn = sqlite3.connect(path)
        conn.execute("INSERT INTO fts(rowid, summary, body, meta) VALUES (1, 'walrus', '', '')")
        conn.commit()
        conn.execute("UPDATE fts_data SET block = randomblob(length(block)) WHERE id > 10")
        conn.commit()
        conn.close()
        with pytest.raises(IndexDamaged):
            index.lexical('"walrus"', 10)
        assert index.lexical('"walrus"', 10) == []  # a fresh, empty database
        assert index.damage_record() is not None
        index.clear()  # what a reindex does
        assert index.damage_record() is None
    finally:
        index.close()


def test_a_second_connection_meeting_the_damage_keeps_the_first_ones_repair(
    tmp_path: Path,
) -> None:
    """Two processes had the damaged index open: the second to meet the damage opens the
    database the first one created instead of deleting it."""
    path = tmp_path / "i.sqlite3"
    first, second = SearchIndex(path), SearchIndex(path)
    try:
        conn = sqlite3.connect(path)
        conn.execute("INSERT INTO fts(rowid, summary, body, meta) VALUES (1, 'walrus', '', '')")
        conn.commit()
        conn.execute("UPDATE fts_data SET block = randomblob(length(block)) WHERE id > 10")
        conn.commit()
        conn.close()
        with pytest.raises(IndexDamaged):
            first.lexical('"walrus"', 10)
        conn = sqlite3.connect(path)  # the repaired database, as the first one left it
        conn.execute("INSERT INTO meta(key, value) VALUES ('kept', 'yes')")
        conn.commit()
        conn.close()
        with pytest.raises(IndexDamaged):
            second.lexical('"walrus"', 10)  # its connection still reads the damaged file
        assert second.lexical('"walrus"', 10) == []
    finally:
        first.close()
        second.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key='kept'").fetchone() == ("yes",)
    conn.close()


def test_only_damage_counts_as_damage(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.sqlite3")
    with pytest.raises(sqlite3.OperationalError) as bad_sql:
        conn.execute("SELECT * FROM no_such_table")
    assert not is_damage(bad_sql.value)
    conn.close()
    (tmp_path / "garbage.sqlite3").write_bytes(GARBAGE * 300)
    conn = sqlite3.connect(tmp_path / "garbage.sqlite3")
    with pytest.raises(sqlite3.DatabaseError) as garbage:
        conn.execute("SELECT * FROM sqlite_master")
    assert is_damage(garbage.value)
    conn.close()
