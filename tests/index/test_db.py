"""SearchIndex: incremental refresh, unparseable and private files, forget, ties, vectors."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest

from memdir.core import Note, render_note
from memdir.index.db import SearchIndex, embed_text
from memdir.index.query import analyse

OLD = time.time_ns() - 3600 * 1_000_000_000  # a file at rest, long before it is indexed
Stamp = tuple[int, int, int, int]


class DictSource:
    """A note directory in memory: exact control over stamps, and every read counted."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[Stamp, bytes]] = {}
        self.reads: list[str] = []
        self.gone_on_read: set[str] = set()
        self._ino = 1000

    def put(
        self, note_id: str, data: bytes, *, mtime_ns: int = OLD, ino: int | None = None
    ) -> None:
        if ino is None:
            self._ino += 1
            ino = self._ino
        self.files[note_id] = ((len(data), mtime_ns, ino, mtime_ns), data)

    def note(self, note_id: str, summary: str, body: str = "", **fields: object) -> bytes:
        data = render_note(
            Note(id=note_id, summary=summary, body=body, created_at=1, updated_at=2, **fields)  # type: ignore[arg-type]
        )
        self.put(note_id, data)
        return data

    def remove(self, note_id: str) -> None:
        del self.files[note_id]

    def stamps(self) -> tuple[dict[str, Stamp], int]:
        return {k: v[0] for k, v in self.files.items()}, 0

    def stamps_of(self, note_ids: Iterable[str]) -> dict[str, Stamp]:
        now = self.stamps()[0]
        return {i: now[i] for i in note_ids if i in now}

    def read_bytes(self, note_id: str) -> bytes | None:
        self.reads.append(note_id)
        if note_id in self.gone_on_read:
            return None
        item = self.files.get(note_id)
        return item[1] if item else None


@pytest.fixture
def index(tmp_path: Path) -> SearchIndex:
    idx = SearchIndex(tmp_path / "index" / "test.sqlite3")
    yield idx  # type: ignore[misc]
    idx.close()


def _ids(index: SearchIndex, query: str, mode: str = "any") -> list[str]:
    match = analyse(query, mode).match
    assert match is not None
    hits = index.lexical(match, 50)
    keys = index.keys(cid for cid, _ in hits)
    return [keys[cid][0] for cid, _ in hits]


def _chunks_of(index: SearchIndex, note_id: str) -> int:
    conn = sqlite3.connect(f"file:{index.path}?mode=ro", uri=True)
    try:
        return int(
            conn.execute("SELECT count(*) FROM chunks WHERE note_id=?", (note_id,)).fetchone()[0]
        )
    finally:
        conn.close()


# --- refresh ------------------------------------------------------------------------------


def test_refresh_picks_up_new_changed_and_removed_files(index: SearchIndex) -> None:
    src = DictSource()
    src.note("walrus-a", "Walrus colony", "The walrus sings at dawn.")
    src.note("otter-b", "Otter den", "Otters hold hands.")
    first = index.refresh(src)
    assert (first.added, first.updated, first.removed, first.unchanged) == (2, 0, 0, 0)
    assert {n for n, _, _ in first.read} == {"walrus-a", "otter-b"}
    assert _ids(index, "walrus") == ["walrus-a"]

    src.note("walrus-a", "Walrus colony", "The narwhal sings at dawn.")
    src.remove("otter-b")
    src.note("heron-c", "Heron", "A heron waits.")
    second = index.refresh(src)
    assert (second.added, second.updated, second.removed, second.unchanged) == (1, 1, 1, 0)
    assert _ids(index, "walrus colony narwhal") == ["walrus-a"]
    assert _ids(index, "dawn narwhal") == ["walrus-a"]
    assert _ids(index, "otter") == []
    assert index.note_ids() == {"walrus-a", "heron-c"}


def test_a_no_change_refresh_reads_no_file(index: SearchIndex) -> None:
    src = DictSource()
    for i in range(30):
        src.note(f"note-{i}", f"Note {i}", f"body {i}")
    index.refresh(src)
    src.reads.clear()
    for _ in range(3):
        stats = index.refresh(src)
        assert (stats.added, stats.updated, stats.removed, stats.unchanged) == (0, 0, 0, 30)
    assert src.reads == []


def test_only_the_changed_file_is_read(index: SearchIndex) -> None:
    src = DictSource()
    for i in range(10):
        src.note(f"note-{i}", f"Note {i}", f"body {i}")
    index.refresh(src)
    src.reads.clear()
    src.note("note-4", "Note 4", "a new body")
    index.refresh(src)
    assert src.reads == ["note-4"]


def test_an_edit_within_the_clock_tick_is_seen(index: SearchIndex) -> None:
    """Same size, same mtime, same inode: an edit the stamp cannot show. A file indexed
    within two seconds of its mtime is read again, so the edit is still found."""
    src = DictSource()
    now = time.time_ns()
    before = render_note(Note(id="tick-a", summary="Tick", body="the walrus sings"))
    after = render_note(Note(id="tick-a", summary="Tick", body="the narwhl sings"))
    assert len(before) == len(after)
    src.put("tick-a", before, mtime_ns=now, ino=7)
    index.refresh(src)
    assert _ids(index, "walrus") == ["tick-a"]
    src.put("tick-a", after, mtime_ns=now, ino=7)
    stats = index.refresh(src)
    assert stats.updated == 1
    assert _ids(index, "walrus") == []
    assert _ids(index, "narwhl") == ["tick-a"]


def test_a_racy_file_is_read_until_it_is_settled_then_never(index: SearchIndex) -> None:
    src = DictSource()
    data = src.note("fresh-a", "Fresh", "just written")
    src.put("fresh-a", data, mtime_ns=time.time_ns(), ino=5)
    index.refresh(src)
    src.reads.clear()
    stats = index.refresh(src)  # still inside the racy window: read, found unchanged
    assert src.reads == ["fresh-a"]
    assert (stats.updated, stats.unchanged) == (0, 1)
    src.put("fresh-a", data, mtime_ns=OLD, ino=5)  # time passes (the stamp ages)
    index.refresh(src)
    src.reads.clear()
    index.refresh(src)
    index.refresh(src)
    assert src.reads == []


def test_another_connection_reads_only_the_racy_file_then_notes_an_edit_as_such(
    index: SearchIndex,
) -> None:
    """What a reopened index knows comes from the database: a note indexed inside the racy
    window is read again, a settled one is not, and an edit read there counts as updated
    (its revision compared with the one the database holds)."""
    src = DictSource()
    src.put("old-a", src.note("old-a", "Old", "settled long ago"), mtime_ns=OLD, ino=4)
    data = src.note("fresh-b", "Fresh", "just written")
    src.put("fresh-b", data, mtime_ns=time.time_ns(), ino=5)
    index.refresh(src)
    other = SearchIndex(index.path)
    try:
        src.reads.clear()
        stats = other.refresh(src)
        assert src.reads == ["fresh-b"]
        assert (stats.added, stats.updated, stats.unchanged) == (0, 0, 2)
        src.put("old-a", src.note("old-a", "Old", "edited in place"), mtime_ns=OLD + 1, ino=4)
        stats = other.refresh(src)
        assert (stats.added, stats.updated) == (0, 1)
        assert _ids(other, "edited") == ["old-a"]
    finally:
        other.close()


def test_unparseable_files_are_remembered_not_read_again(index: SearchIndex) -> None:
    src = DictSource()
    src.put("broken-a", b"---\n{not json\n---\nwalrus\n")
    src.put("binary-b", b"\xff\xfe\x00garbage")
    src.note("good-c", "Good", "walrus")
    stats = index.refresh(src)
    assert {n for n, _, _ in stats.read} == {"good-c"}
    assert index.note_ids() == {"good-c"}
    assert _ids(index, "walrus") == ["good-c"]
    src.reads.clear()
    index.refresh(src)
    index.refresh(src)
    assert src.reads == []
    # Fixed on disk (a new stamp): indexed.
    src.note("broken-a", "Broken no more", "walrus two")
    index.refresh(src)
    assert src.reads == ["broken-a"]
    assert "broken-a" in index.note_ids()


def test_private_notes_are_tracked_but_never_chunked_or_found(index: SearchIndex) -> None:
    src = DictSource()
    src.note("secret-a", "Secret plan", "the quokka ledger", private=True)
    src.note("open-b", "Open plan", "nothing here")
    index.refresh(src)
    assert index.note_ids() == {"open-b"}
    assert _chunks_of(index, "secret-a") == 0
    assert _ids(index, "quokka ledger secret") == []
    assert all("quokka" not in text for _, text in index.pending("any-embedder"))
    src.reads.clear()
    index.refresh(src)
    assert src.reads == []  # tracked: not read again either


def test_a_file_gone_between_listing_and_reading_is_dropped(index: SearchIndex) -> None:
    src = DictSource()
    src.note("short-lived", "Short lived", "walrus")
    index.refresh(src)
    src.note("short-lived", "Short lived", "walrus two")
    src.gone_on_read.add("short-lived")
    index.refresh(src)
    assert index.note_ids() == set()
    assert _ids(index, "walrus") == []


def test_read_notes_can_be_taken_batch_by_batch(index: SearchIndex) -> None:
    src = DictSource()
    for i in range(250):
        src.note(f"note-{i}", f"Note {i}")
    seen: list[tuple[str, int, str]] = []
    stats = index.refresh(
        src, observe=lambda nid, data, note: seen.append((nid, len(data), note.id))
    )
    assert stats.read == ()  # nothing accumulated: a rebuild of many notes stays small
    assert sorted(n for n, _, _ in seen) == sorted(f"note-{i}" for i in range(250))
    assert all(nid == note_id and size > 0 for nid, size, note_id in seen)


def test_refresh_reports_progress(index: SearchIndex) -> None:
    src = DictSource()
    for i in range(450):
        src.note(f"note-{i}", f"Note {i}")
    calls: list[tuple[int, int]] = []
    index.refresh(src, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(200, 450), (400, 450), (450, 450)]


# --- chunks -------------------------------------------------------------------------------


def test_chunk_rows_slice_the_file_bytes(index: SearchIndex) -> None:
    src = DictSource()
    body = "Café 🎉 zebra.\n\n数据库使用PostgreSQL。\n\n" + "Long zebra text here. " * 80
    data = src.note("mixed-a", "Mixed text", body)
    index.refresh(src)
    match = analyse("zebra").match
    assert match is not None
    rows = index.chunks(cid for cid, _ in index.lexical(match, 50))
    assert len(rows) > 1
    for row in rows.values():
        assert data[row.start : row.end].decode("utf-8") == row.text
        assert row.chunk_hash == hashlib.sha256(row.text.encode()).hexdigest()
        assert row.rev == hashlib.sha256(data).hexdigest()
        assert row.summary == "Mixed text"


def test_an_empty_body_still_makes_the_summary_searchable(index: SearchIndex) -> None:
    src = DictSource()
    src.note("summary-only", "Quokka sightings", "")
    index.refresh(src)
    assert _ids(index, "quokka") == ["summary-only"]


# --- ties ---------------------------------------------------------------------------------


def _twins(src: DictSource, order: list[int]) -> None:
    for i in order:
        src.note(f"twin-{i:02d}", "Twin zebra note", "zebra crossing near the office")


def test_equal_scores_are_ordered_by_note_not_by_row_id(tmp_path: Path) -> None:
    """Two indexes holding the same notes, filled in opposite orders, answer alike,
    also where the cut at `limit` falls among equal scores."""
    answers = []
    for name, order in (("up", list(range(12))), ("down", list(range(11, -1, -1)))):
        src = DictSource()
        _twins(src, order)
        src.note("other-note", "Zebra", "zebra zebra zebra")
        idx = SearchIndex(tmp_path / f"{name}.sqlite3")
        idx.refresh(src)
        match = analyse("zebra crossing").match
        assert match is not None
        for limit in (3, 5, 13):
            hits = idx.lexical(match, limit)
            keys = idx.keys(cid for cid, _ in hits)
            answers.append((name, limit, [(keys[c], round(s, 9)) for c, s in hits]))
        idx.close()
    up = [a[1:] for a in answers if a[0] == "up"]
    down = [a[1:] for a in answers if a[0] == "down"]
    assert up == down
    three = next(a[2] for a in answers if a[:2] == ("up", 3))
    assert [k[0] for k, _ in three] == ["twin-00", "twin-01", "twin-02"]


# --- forget -------------------------------------------------------------------------------


def _embed_all(index: SearchIndex, embedder: str = "e@1/4") -> int:
    pending = index.pending(embedder)
    vectors = np.eye(4, dtype=np.float32)[np.arange(len(pending)) % 4]
    index.put_vectors(embedder, [h for h, _ in pending], vectors)
    return len(pending)


def test_forget_drops_chunks_fts_and_only_unshared_vectors(index: SearchIndex) -> None:
    src = DictSource()
    src.note("twin-a", "Same words", "identical body")
    src.note("twin-b", "Same words", "identical body")
    src.note("quokka-c", "Quokka ledger", "the quokkaphosphorescence ledger")
    index.refresh(src)
    assert _embed_all(index) == 2  # the twins share one embedding
    assert index.counts()["vectors"] == 2

    index.forget("quokka-c")
    assert index.note_ids() == {"twin-a", "twin-b"}
    assert _chunks_of(index, "quokka-c") == 0
    assert _ids(index, "quokkaphosphorescence ledger") == []
    assert index.counts()["vectors"] == 1
    index.forget("twin-a")
    assert index.counts()["vectors"] == 1  # twin-b still uses it
    index.forget("twin-b")
    assert index.counts() == {"notes": 0, "chunks": 0, "fts": 0, "vectors": 0}


def test_forget_with_scrub_leaves_no_copy_in_the_database_files(index: SearchIndex) -> None:
    src = DictSource()
    words = ["alpha", "beta", "gamma", "delta", "river", "mountain", "office", "copper"]
    rng = np.random.default_rng(3)
    for i in range(120):
        src.note(f"filler-{i}", f"Filler {i}", " ".join(rng.choice(words, 60)))
        if i == 60:
            src.note(
                "secret-x", "Quokka vault", "Quokkaphosphorescence ledger in vault seventeen. " * 4
            )
    index.refresh(src)
    _embed_all(index)
    index.forget("secret-x", scrub=True)
    for f in index.path.parent.iterdir():
        data = f.read_bytes()
        # Terms sit prefix-compressed in FTS5 segments: look for word tails too.
        for needle in (b"phosphoresc", b"seventeen", b"Quokka vault"):
            assert data.find(needle) == -1, f"{needle!r} left in {f.name}"


# --- vectors ------------------------------------------------------------------------------


def test_pending_then_put_vectors(index: SearchIndex) -> None:
    src = DictSource()
    src.note("a-note", "Alpha", "first")
    src.note("b-note", "Beta", "second")
    index.refresh(src)
    pending = index.pending("e@1/4")
    assert sorted(text for _, text in pending) == ["Alpha\nfirst", "Beta\nsecond"]
    assert len(index.pending("e@1/4", limit=1)) == 1
    index.put_vectors("e@1/4", [pending[0][0]], np.ones((1, 4), dtype=np.float32) / 2)
    assert len(index.pending("e@1/4")) == 1
    assert len(index.pending("other@1/4")) == 2  # vectors belong to their embedder
    with pytest.raises(ValueError):
        index.put_vectors("e@1/4", ["x", "y"], np.ones((1, 4), dtype=np.float32))


def test_embed_text_gives_every_chunk_its_topic() -> None:
    assert embed_text("Pricing", "Cards use fills.") == "Pricing\nCards use fills."
    assert embed_text("Pricing", "Pricing cards") == "Pricing cards"


def test_vector_index_holds_one_embedders_searchable_chunks_in_note_order(
    index: SearchIndex,
) -> None:
    src = DictSource()
    for note_id in ("c-note", "a-note", "b-note"):
        src.note(note_id, f"Summary {note_id}", f"body of {note_id}")
    src.note("p-note", "Private", "hidden", private=True)
    index.refresh(src)
    _embed_all(index, "one@1/4")
    _embed_all(index, "two@1/4")
    vi = index.vector_index("one@1/4")
    keys = index.keys(int(i) for i in vi.ids)
    assert [keys[int(i)][0] for i in vi.ids] == ["a-note", "b-note", "c-note"]
    assert vi.matrix.shape == (3, 4) and vi.matrix.dtype == np.float32
    assert index.vector_index("one@1/4") is vi  # kept until something changes
    assert len(index.vector_index("nobody@1/4")) == 0
    src.note("d-note", "Summary d", "body d")
    index.refresh(src)
    _embed_all(index, "one@1/4")
    assert len(index.vector_index("one@1/4")) == 4
    ids, matrix = index.matrix("one@1/4")
    assert ids.shape == (4,) and matrix.shape == (4, 4)


def test_clear_empties_the_index_but_keeps_vectors(index: SearchIndex) -> None:
    src = DictSource()
    src.note("a-note", "Alpha", "first")
    index.refresh(src)
    _embed_all(index)
    index.clear()
    assert index.counts() == {"notes": 0, "chunks": 0, "fts": 0, "vectors": 1}
    index.refresh(src)
    assert index.pending("e@1/4") == []  # the cached vector serves the same chunk


def test_superseded_map(index: SearchIndex) -> None:
    src = DictSource()
    src.note("old-a", "Deploy on Fridays")
    src.note("new-b", "Deploy Monday to Thursday", supersedes=("old-a",))
    src.note("hidden-c", "Private", supersedes=("other-d",), private=True)
    index.refresh(src)
    assert index.superseded() == {"old-a": "new-b"}
    src.remove("new-b")
    index.refresh(src)
    assert index.superseded() == {}


def test_changes_by_another_connection_are_seen(tmp_path: Path) -> None:
    """Two processes share an index: caches of one follow the other's commits."""
    path = tmp_path / "shared.sqlite3"
    a, b = SearchIndex(path), SearchIndex(path)
    try:
        src = DictSource()
        src.note("one-note", "One", "first")
        a.refresh(src)
        _embed_all(a)
        assert len(a.vector_index("e@1/4")) == 1
        assert a.pending("e@1/4") == []
        assert a.superseded() == {}

        src.note("two-note", "Two", "second", supersedes=("one-note",))
        b.refresh(src)
        assert [t for _, t in a.pending("e@1/4")] == ["Two\nsecond"]
        assert a.superseded() == {"one-note": "two-note"}
        _embed_all(b)
        assert len(a.vector_index("e@1/4")) == 2
        src.reads.clear()
        a.refresh(src)  # b indexed it already: nothing to read
        assert src.reads == []
    finally:
        a.close()
        b.close()


def test_index_files_are_private(index: SearchIndex) -> None:
    assert index.path.parent.stat().st_mode & 0o077 == 0


def test_vector_search_reads_float_vectors_from_the_database_and_misses_none(
    index: SearchIndex,
) -> None:
    """The index keeps int8 rows; a search scores its candidates from the stored float32
    vectors, so it answers as exact search over those vectors does, also after a note is
    forgotten under a `MatrixIndex` already handed out."""
    src = DictSource()
    for i in range(300):
        src.note(f"note-{i:03d}", f"Summary {i}", f"body number {i} " + "word " * (i % 7))
    index.refresh(src)
    pending = index.pending("e@1/8")
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((len(pending), 8)).astype(np.float32) + 2.0
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index.put_vectors("e@1/8", [h for h, _ in pending], vectors)
    vi = index.vector_index("e@1/8")
    assert vi.compact.codes.dtype == np.int8
    ids, matrix = index.matrix("e@1/8")
    q = vectors[7]
    exact = matrix.astype(np.float64) @ q.astype(np.float64)
    best = sorted(range(len(ids)), key=lambda i: (-exact[i], i))[:20]
    assert vi.search(q, 20) == [(int(ids[i]), float(exact[i])) for i in best]
    gone = index.keys([int(ids[best[0]])])[int(ids[best[0]])][0]
    index.forget(gone)
    assert int(ids[best[0]]) not in {c for c, _ in vi.search(q, 20)}
    assert int(ids[best[0]]) not in {c for c, _ in index.vector_index("e@1/8").search(q, 20)}


def _with_random_vectors(
    index: SearchIndex, notes: int, rng: np.random.Generator
) -> tuple[DictSource, np.ndarray]:
    """`notes` short notes indexed, each chunk with a random unit 8-d vector of "e@1/8"."""
    src = DictSource()
    for i in range(notes):
        src.note(f"note-{i:02d}", f"Summary {i}", f"body {i}")
    index.refresh(src)
    pending = index.pending("e@1/8")
    vectors = rng.standard_normal((len(pending), 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index.put_vectors("e@1/8", [h for h, _ in pending], vectors)
    return src, vectors


def test_a_vector_index_held_across_changes_answers_for_its_own_vectors(
    index: SearchIndex,
) -> None:
    """A chunk forgotten after the index was handed out is left out and the next best
    rows take its place, even when SQLite gives its id to a new chunk whose vector
    would score higher."""
    rng = np.random.default_rng(9)
    src, _ = _with_random_vectors(index, 40, rng)
    held = index.vector_index("e@1/8")
    ids, matrix = index.matrix("e@1/8")
    last = int(np.argmax(ids))  # the highest chunk id: SQLite reuses it once it is free
    q = matrix[last] + 0.05 * rng.standard_normal(8).astype(np.float32)
    q /= np.linalg.norm(q)
    exact = matrix.astype(np.float64) @ q.astype(np.float64)
    order = sorted(range(len(ids)), key=lambda i: (-exact[i], i))
    assert order[0] == last
    gone = index.keys([int(ids[last])])[int(ids[last])][0]
    index.forget(gone)
    del src.files[gone]
    src.note("a-new-note", "Something else", "another body")
    index.refresh(src)
    assert index.keys([int(ids[last])])[int(ids[last])][0] == "a-new-note"
    new = index.pending("e@1/8")
    index.put_vectors("e@1/8", [h for h, _ in new], np.tile(q, (len(new), 1)))
    hits = held.search(q, 3)
    assert [c for c, _ in hits] == [int(ids[i]) for i in order[1:4]]
    assert [s for _, s in hits] == [float(exact[i]) for i in order[1:4]]
    assert int(ids[last]) not in held.similarities(q, [int(ids[last])])


def test_a_held_vector_index_leaves_out_a_chunk_another_connection_forgot(
    index: SearchIndex,
) -> None:
    _, vectors = _with_random_vectors(index, 30, np.random.default_rng(11))
    held = index.vector_index("e@1/8")
    q = vectors[3]
    best = held.search(q, 1)[0][0]
    note_id = index.keys([best])[best][0]
    other = SearchIndex(index.path)
    try:
        other.forget(note_id)
    finally:
        other.close()
    assert best not in {c for c, _ in held.search(q, 10)}
    assert best not in held.similarities(q, [best])
