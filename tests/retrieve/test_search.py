"""Search and retrieve through `Memory` (§3): the rebuild invariant, freshness, modes,
languages, hybrid ranking, embedder failures, forget and the duplicate flag.

Most tests inject `BagOfConcepts`, a deterministic `Embedder`: words are mapped to a
concept (so "car" and "automobile" mean the same), hashed into 64 dimensions, counted
and normalised. It records every text it embeds, so tests can count embedder calls.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir import Memory
from memdir.core import Scope
from memdir.embed import Embedder, EmbedderInfo, EmbedderUnavailable, EmbeddingFailed, HttpEmbedder
from memdir.index.db import embed_text
from memdir.retrieve import QUERY_EMBED_BUDGET, usage_bonus
from memdir.store.notedir import NoteDirectory

METHODS = ("lexical", "vector", "hybrid")
MODES = ("any", "all", "phrase")

_CONCEPTS = dict.fromkeys(("car", "cars", "automobile", "automobiles"), "vehicle")
_CONCEPTS |= dict.fromkeys(("service", "servicing", "maintenance"), "maintenance")
_CONCEPTS |= {"apple": "fruit", "pie": "dessert"}


class BagOfConcepts:
    """A fake but real `Embedder`: deterministic bag-of-concepts vectors, calls recorded."""

    def __init__(self, name: str = "bag-of-concepts", seed: str = "") -> None:
        self._info = EmbedderInfo(name, "1", 64)
        self._seed = seed
        self.documents: list[str] = []
        self.queries: list[str] = []

    @property
    def info(self) -> EmbedderInfo:
        return self._info

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(64, dtype=np.float64)
        for word in re.findall(r"\w+", text.casefold()):
            concept = _CONCEPTS.get(word, word)
            digest = hashlib.sha256((self._seed + concept).encode()).digest()
            v[int.from_bytes(digest[:4], "big") % 64] += 1.0
        if not v.any():
            v[0] = 1.0
        out: np.ndarray = (v / np.linalg.norm(v)).astype(np.float32)
        return out

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.documents.extend(texts)
        if not texts:
            return np.zeros((0, 64), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return self._vector(text)


class FailingDocuments(BagOfConcepts):
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise EmbeddingFailed("the endpoint answered 503 three times")


class FailingQueries(BagOfConcepts):
    def embed_query(self, text: str) -> np.ndarray:
        raise EmbeddingFailed("timed out")


class FailingIdentity(BagOfConcepts):
    @property
    def info(self) -> EmbedderInfo:
        raise EmbeddingFailed("cannot reach the endpoint to learn the vector size")


@pytest.fixture
def fake() -> BagOfConcepts:
    return BagOfConcepts()


@pytest.fixture
def mem(memory: Memory, fake: BagOfConcepts) -> Memory:
    """The shared `memory` fixture with the fake embedder in place of the model."""
    memory.index.retriever.use_embedder(fake)
    return memory


def _reopen(project: Path, home: Path, embedder: Embedder | None) -> Memory:
    m = Memory.open(project, home=home)
    if embedder is not None:
        m.index.retriever.use_embedder(embedder)
    return m


def _age(*paths: Path) -> None:
    """Make files look written long ago (outside the racy window of the index, as far as
    their mtime goes: setting it changes their ctime, see `quick_settle`)."""
    old = time.time_ns() - 3600 * 1_000_000_000
    for p in paths:
        os.utime(p, ns=(old, old))


@pytest.fixture
def quick_settle(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """A racy window of 20 ms (the real one is 2 s, for FAT's clock), and a call that
    waits it out: files changed before that call are then trusted by their stamps."""
    monkeypatch.setattr("memdir.index.rows.RACY_NS", 20_000_000)
    return lambda: time.sleep(0.04)


def _rows(home: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    """Rows of a read-only query over every index database (project and user)."""
    out: list[tuple[object, ...]] = []
    for path in sorted((home / "index").glob("*.sqlite3")):
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            out.extend(conn.execute(sql, params).fetchall())
        finally:
            conn.close()
    return out


def _count(home: Path, sql: str, *params: object) -> int:
    return sum(int(r[0]) for r in _rows(home, sql, *params))  # type: ignore[call-overload]


# --- the rebuild invariant ---------------------------------------------------------------

QUERIES = ("zebra crossing office", "apple pie", "car", "数据库", "running", "Häuser")


def _fill(m: Memory) -> None:
    """Notes with ties (copies), several chunks, updates, removals, supersedes, private."""
    for suffix in "fbdcae":  # created out of id order: row ids differ from a rebuild's
        m.remember("Twin zebra note", "zebra crossing near the office", id=f"twin-{suffix}")
    m.remember("Long zebra walk", "Zebra crossing by the office. " * 90, id="long-walk")
    m.remember("Apple pie", "Bake the apple pie for an hour.", id="apple-pie")
    m.remember("Automobile care", "Automobile maintenance every spring.", id="auto-care")
    old = m.remember("Datenbank", "数据库使用MySQL", id="db-old")
    m.remember("Datenbank neu", "数据库使用PostgreSQL", id="db-new", supersedes=[old.note.id])
    m.remember("Morning habits", "She is running every day.", id="morning")
    m.remember("Die Häuser", "Die Häuser in der Stadt sind teuer.", id="haeuser")
    m.remember("Private zebra", "zebra crossing office secret", id="private-z", private=True)
    m.remember("Temporary zebra", "zebra office", id="temp-z")
    m.remember("Twin zebra note", "an edited zebra office body", id="twin-c")
    m.forget("temp-z")
    m.index.retriever.usage.record(m.stores.by_scope[Scope.PROJECT].state_key, ["twin-d", "twin-d"])


def _answers(m: Memory) -> list[object]:
    """Every hit and chunk field that must survive a rebuild, for every query × method × mode."""
    out: list[object] = []
    for query, method, mode in ((q, t, d) for q in QUERIES for t in METHODS for d in MODES):
        hits = m.search(query, limit=5, mode=mode, method=method)
        out.append(
            [(h.note_id, h.score, h.snippet, h.revision, h.superseded_by, h.match) for h in hits]
        )
        chunks = m.index.retrieve(query, limit=8, mode=mode, method=method)
        out.append(
            [
                (c.note_id, c.revision, c.chunk_hash, c.start, c.end, c.score, c.source)
                for c in chunks
            ]
        )
    return out


def test_delete_the_index_reindex_same_answers(project: Path, home: Path) -> None:
    with _reopen(project, home, BagOfConcepts()) as m:
        _fill(m)
        before = _answers(m)
    assert any(before[i] for i in range(0, len(before), 2))
    files = list((home / "index").glob("*.sqlite3*"))
    assert files
    for f in files:
        f.unlink()
    with _reopen(project, home, BagOfConcepts()) as m:
        stats = m.index.reindex()
        assert stats.notes == 13 and stats.embedder == "bag-of-concepts@1/64"
        assert _answers(m) == before


def test_reindex_in_place_gives_the_same_answers(mem: Memory) -> None:
    _fill(mem)
    before = _answers(mem)
    mem.index.reindex()
    assert _answers(mem) == before


# --- freshness ---------------------------------------------------------------------------


def test_new_changed_removed_and_edited_files_are_seen_before_the_next_query(
    mem: Memory,
) -> None:
    a = mem.remember("Walrus colony", "The walrus sings.")
    b = mem.remember("Otter den", "They hold hands while sleeping.")
    assert [h.note_id for h in mem.search("walrus", method="lexical")] == [a.note.id]
    directory = mem.stores.directory("project")

    # New, written by another program.
    (directory / "heron-x1.md").write_text(
        '---\n{"id":"heron-x1","summary":"Heron","tags":[],"createdAt":1,"updatedAt":1}\n---\n'
        "A heron waits by the walrus.\n",
        encoding="utf-8",
    )
    # Edited in place by an editor (another size).
    path_b = directory / f"{b.note.id}.md"
    path_b.write_text(path_b.read_text(encoding="utf-8").replace("hands", "paws"), "utf-8")
    assert {h.note_id for h in mem.search("walrus", method="lexical")} == {a.note.id, "heron-x1"}
    assert [h.note_id for h in mem.search("paws", method="lexical")] == [b.note.id]
    assert mem.search("hands", method="lexical") == []

    # Removed.
    (directory / f"{a.note.id}.md").unlink()
    assert [h.note_id for h in mem.search("walrus", method="lexical")] == ["heron-x1"]
    assert a.note.id not in {h.note_id for h in mem.search("walrus")}


def test_a_same_size_rewrite_within_the_same_clock_tick_is_seen(mem: Memory) -> None:
    r = mem.remember("Tick note", "the walrus sings")
    path = r.note.path
    assert path is not None
    st = path.stat()
    assert [h.note_id for h in mem.search("walrus", method="lexical")] == [r.note.id]
    data = path.read_bytes()
    edited = data.replace(b"walrus", b"narwhl")
    assert len(edited) == len(data)
    with path.open("r+b") as f:  # in place: same inode
        f.write(edited)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # a coarse clock: same mtime
    now = path.stat()
    assert (now.st_size, now.st_mtime_ns, now.st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    assert mem.search("walrus", method="lexical") == []
    assert [h.note_id for h in mem.search("narwhl", method="lexical")] == [r.note.id]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every note file the index reads through its source (the note directory)."""
    calls: list[str] = []
    real = NoteDirectory.read_bytes

    def counting(self: NoteDirectory, note_id: str) -> bytes | None:
        calls.append(note_id)
        return real(self, note_id)

    monkeypatch.setattr(NoteDirectory, "read_bytes", counting)
    return calls


def test_a_no_change_refresh_reads_no_file(
    mem: Memory, reads: list[str], quick_settle: Callable[[], None]
) -> None:
    for i in range(20):
        mem.remember(f"Note {i}", f"walrus {i}")
    _age(*mem.stores.directory("project").iterdir())
    quick_settle()
    mem.search("walrus", method="lexical")  # the new stamps are read once
    reads.clear()
    for method in METHODS:
        mem.search("walrus", method=method)
        mem.index.retrieve("walrus", method=method)
    assert reads == []
    # Another Memory (a new process) on the same index reads nothing either.
    with _reopen(mem.settings.project_root, mem.settings.home, BagOfConcepts()) as other:  # type: ignore[arg-type]
        other.search("walrus")
    assert reads == []


def test_unparseable_files_are_not_read_again(
    mem: Memory, reads: list[str], quick_settle: Callable[[], None]
) -> None:
    mem.remember("Good note", "walrus")
    bad = mem.stores.directory("project") / "broken-note.md"
    bad.write_bytes(b'---\n{"id": "broken-note", "summary": \n---\nwalrus\n')
    _age(*mem.stores.directory("project").iterdir())
    quick_settle()
    assert [h.note_id for h in mem.search("walrus", method="lexical")] != ["broken-note"]
    assert "broken-note" in reads
    reads.clear()
    mem.search("walrus", method="lexical")
    mem.search("walrus")
    assert reads == []
    assert "broken-note" not in {h.note_id for h in mem.search("walrus")}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("mode", MODES)
def test_private_notes_are_never_returned(mem: Memory, method: str, mode: str) -> None:
    secret = mem.remember("Quokka vault plan", "The quokka ledger is in vault nine.", private=True)
    mem.remember("Public note", "Nothing to see.")
    for query in ("quokka ledger", "quokka vault plan", "vault"):
        assert secret.note.id not in {
            h.note_id for h in mem.search(query, mode=mode, method=method, limit=50)
        }
        assert secret.note.id not in {
            c.note_id for c in mem.index.retrieve(query, mode=mode, method=method, limit=50)
        }


def test_private_notes_have_no_chunks_and_are_never_embedded(
    mem: Memory, home: Path, fake: BagOfConcepts
) -> None:
    secret = mem.remember("Quokka vault plan", "The quokka ledger.", private=True)
    mem.search("quokka")
    mem.index.reindex()
    assert _count(home, "SELECT count(*) FROM chunks WHERE note_id=?", secret.note.id) == 0
    assert not any("quokka" in text.casefold() for text in fake.documents)


# --- retrieve ----------------------------------------------------------------------------

BODIES = {
    "emoji": "Launch day 🎉🚀 zebra party. Family 👩‍👩‍👧 and flags 🇩🇪🇯🇵 zebra.",
    "cjk": "数据库使用PostgreSQL。斑马 zebra 在办公室附近。日本語のテキスト zebra。",
    "combining": "Cafe\u0301 zebra nai\u0308ve re\u0301sume\u0301 zebra, Zoe\u0308 and A\u030a.",
    "long": "\n\n".join(
        f"Paragraph {i}: the zebra crossing near office {i} has a café ☕ and 数据库 {i}. "
        + "More words follow here to fill the chunk. " * 4
        for i in range(12)
    ),
}


def _check_chunk(chunk: object, store_dir: Path) -> bytes:
    path = store_dir / f"{chunk.note_id}.md"  # type: ignore[attr-defined]
    data = path.read_bytes()
    assert data[chunk.start : chunk.end].decode("utf-8") == chunk.text  # type: ignore[attr-defined]
    assert chunk.revision == hashlib.sha256(data).hexdigest()  # type: ignore[attr-defined]
    assert chunk.chunk_hash == hashlib.sha256(chunk.text.encode()).hexdigest()  # type: ignore[attr-defined]
    assert chunk.source == f"project:{path}"  # type: ignore[attr-defined]
    assert chunk.path == str(path)  # type: ignore[attr-defined]
    return data


@pytest.mark.parametrize("method", METHODS)
def test_retrieved_chunks_slice_the_file_exactly(mem: Memory, method: str) -> None:
    for name, body in BODIES.items():
        mem.remember(f"Zebra {name} note", body, id=f"zebra-{name}")
    crlf = mem.stores.directory("project") / "crlf-note.md"
    crlf.write_bytes(
        b'---\r\n{"id":"crlf-note","summary":"Windows zebra","tags":[],"createdAt":1,'
        b'"updatedAt":1}\r\n---\r\nFirst zebra line.\r\n\r\nSecond paragraph with caf\xc3\xa9.\r\n'
        + b"Zebra text with CRLF endings. " * 40
        + b"\r\n"
    )
    chunks = mem.index.retrieve("zebra", limit=100, method=method)
    assert {c.note_id for c in chunks} >= {f"zebra-{n}" for n in BODIES} | {"crlf-note"}
    for chunk in chunks:
        _check_chunk(chunk, mem.stores.directory("project"))
    long_chunks = [c for c in chunks if c.note_id == "zebra-long"]
    assert len(long_chunks) >= 3
    assert all(len(c.text) <= 768 for c in long_chunks)
    assert any(b"\r\n" in c.text.encode() for c in chunks if c.note_id == "crlf-note")


def test_retrieve_fields(mem: Memory) -> None:
    r = mem.remember("Pricing cards", "Cards use fills, not borders.")
    [chunk] = mem.index.retrieve("fills borders", limit=5)
    assert chunk.note_id == r.note.id
    assert chunk.revision == r.revision
    assert chunk.scope is Scope.PROJECT
    assert chunk.summary == "Pricing cards"
    assert chunk.match == "both"
    assert chunk.score > 0


def test_user_scope_source_label(mem: Memory) -> None:
    r = mem.remember("I prefer tabs", "Tabs over spaces, always.", type="user")
    [chunk] = mem.index.retrieve("tabs spaces", limit=5)
    assert chunk.note_id == r.note.id
    assert chunk.source == f"user:{mem.stores.directory('user') / (r.note.id + '.md')}"


def test_a_note_with_many_matching_chunks_does_not_crowd_out_others(mem: Memory) -> None:
    big = mem.remember(
        "Zebra handbook", "\n\n".join(f"Zebra rule {i}: zebra zebra." for i in range(400))
    )
    small = mem.remember("Office animals", "A zebra painting hangs in the hall.")
    # The first limit × 4 chunks all belong to the big note.
    assert {c.note_id for c in mem.index.retrieve("zebra", method="lexical", limit=8)} == {
        big.note.id
    }
    for method in METHODS:
        hits = mem.search("zebra", limit=2, method=method)
        assert {h.note_id for h in hits} == {big.note.id, small.note.id}, method


# --- modes -------------------------------------------------------------------------------


@pytest.fixture
def pies(mem: Memory) -> dict[str, str]:
    notes = {
        "exact": mem.remember("Red apple pie recipe", "Bake it for an hour."),
        "apart": mem.remember("Pie with apple slices", "Not the classic recipe."),
        "apple": mem.remember("Apple tree", "Prune the tree in winter."),
        "pie": mem.remember("Sales pie chart", "By region."),
        # Means the same to the embedder ("fruit dessert" = "apple pie") but shares no word.
        "meaning": mem.remember("Fruit dessert ideas", "Fruit dessert for autumn."),
    }
    return {k: v.note.id for k, v in notes.items()}


def test_any_mode_is_the_default(mem: Memory, pies: dict[str, str]) -> None:
    found = {h.note_id for h in mem.search("apple pie", method="lexical", limit=20)}
    assert found == {pies["exact"], pies["apart"], pies["apple"], pies["pie"]}
    assert mem.search("apple pie", method="lexical") == mem.search(
        "apple pie", mode="any", method="lexical"
    )
    hybrid = {h.note_id: h.match for h in mem.search("apple pie", limit=20)}
    assert hybrid[pies["meaning"]] == "meaning"


@pytest.mark.parametrize("method", METHODS)
def test_all_and_phrase_modes_filter_every_method(
    mem: Memory, pies: dict[str, str], method: str
) -> None:
    all_ = {h.note_id for h in mem.search("apple pie", mode="all", method=method, limit=20)}
    assert all_ == {pies["exact"], pies["apart"]}
    phrase = {h.note_id for h in mem.search("apple pie", mode="phrase", method=method, limit=20)}
    assert phrase == {pies["exact"]}
    chunks = mem.index.retrieve("apple pie", mode="phrase", method=method, limit=20)
    assert {c.note_id for c in chunks} == {pies["exact"]}


def test_all_mode_ignores_stop_words(mem: Memory, pies: dict[str, str]) -> None:
    hits = mem.search("the apple and the pie", mode="all", method="lexical", limit=20)
    assert {h.note_id for h in hits} == {pies["exact"], pies["apart"]}


#: FTS5 syntax and other troublemakers; joined with arbitrary text into queries.
_SYNTAX_WORDS = ["NEAR", "NEAR(", "AND", "OR", "NOT", "summary:", "body:", "zebra", "数据库", "🎉"]
_FTS_SYNTAX = st.sampled_from([*"\"*-:^(){} '+\\\x00", *_SYNTAX_WORDS])
_QUERY = st.lists(st.one_of(_FTS_SYNTAX, st.text(max_size=6)), max_size=12).map("".join)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    base = tmp_path_factory.mktemp("shared")
    (base / "p").mkdir()
    m = Memory.open(base / "p", home=base / "h")
    m.index.retriever.use_embedder(BagOfConcepts())
    m.remember("Zebra apple", 'Quotes " and * and NEAR(a b) and col:val ^x (y) -z OR NOT')
    m.remember("数据库", "数据库使用PostgreSQL. Café naïve.")
    m.remember("Empty body")
    yield m
    m.close()


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=_QUERY, mode=st.sampled_from(MODES), method=st.sampled_from(METHODS))
def test_any_query_text_never_raises(shared: Memory, query: str, mode: str, method: str) -> None:
    hits = shared.search(query, mode=mode, method=method, limit=3)
    chunks = shared.index.retrieve(query, mode=mode, method=method, limit=3)
    assert len(hits) <= 3 and len(chunks) <= 3


def test_fts_operators_are_searched_as_words(shared: Memory) -> None:
    assert [h.note_id for h in shared.search("NEAR", method="lexical")] != []
    assert shared.search('"zebra', method="lexical")[0].summary == "Zebra apple"
    assert shared.search("zebra OR nothing", mode="all", method="lexical") == []


# --- languages ---------------------------------------------------------------------------


def test_english_stems(mem: Memory) -> None:
    runner = mem.remember("Morning habits", "She is running every day.").note.id
    runs = mem.remember("Marathon", "He runs a marathon yearly.").note.id
    mem.remember("Unrelated", "Cooking pasta requires salted water.")
    for query in ("run", "runs", "running"):
        assert {h.note_id for h in mem.search(query, method="lexical")} == {runner, runs}


def test_german_words_find_german_notes(mem: Memory) -> None:
    haus = mem.remember("Die Häuser am See", "Die Häuser in der Stadt sind teuer geworden.")
    mem.remember("Garden", "The tree needs pruning.")
    for query in ("Haus", "Häuser", "haus", "Hauses"):
        hits = mem.search(query, method="lexical")
        assert [h.note_id for h in hits] == [haus.note.id], query
    assert mem.search("Häuser")[0].note_id == haus.note.id


def test_chinese_query_finds_chinese_note(mem: Memory) -> None:
    note = mem.remember("Datenbank", "数据库使用PostgreSQL")
    mem.remember("Other", "数学很难")
    assert [h.note_id for h in mem.search("数据库", method="lexical")] == [note.note.id]
    assert mem.search("数据库")[0].note_id == note.note.id


# --- hybrid ------------------------------------------------------------------------------


def test_a_note_found_only_by_meaning(mem: Memory) -> None:
    auto = mem.remember("Automobile upkeep", "Automobile maintenance every spring.")
    mem.remember("Groceries", "Buy bread and milk.")
    assert mem.search("car", method="lexical") == []
    hits = mem.search("car")
    assert hits[0].note_id == auto.note.id
    assert hits[0].match == "meaning"
    assert mem.search("car", method="vector")[0].note_id == auto.note.id


def test_words_and_meaning_outrank_either_alone(mem: Memory) -> None:
    both = mem.remember("Car service", "Car service every spring.").note.id
    meaning = mem.remember("Automobile upkeep", "Automobile maintenance.").note.id
    words = mem.remember("Service desk hours", "The service desk opens at nine.").note.id
    hits = {h.note_id: h for h in mem.search("car service", limit=10)}
    assert hits[both].match == "both"
    assert hits[meaning].match == "meaning"
    assert hits[words].match in ("words", "both")
    assert hits[both].score > hits[meaning].score
    assert hits[both].score > hits[words].score
    assert mem.search("car service")[0].note_id == both


def test_superseded_notes_are_marked(mem: Memory) -> None:
    old = mem.remember("Deploy on Fridays", "We deploy every Friday afternoon.")
    new = mem.remember(
        "Deploy Monday to Thursday", "No deploys on Friday.", supersedes=[old.note.id]
    )
    hits = {h.note_id: h for h in mem.search("deploy friday", limit=10)}
    assert hits[old.note.id].superseded_by == new.note.id
    assert hits[new.note.id].superseded_by is None


@pytest.mark.parametrize("method", METHODS)
def test_the_superseding_note_ranks_above_the_one_it_replaces(mem: Memory, method: str) -> None:
    old = mem.remember(
        "Deploy friday", "Deploy friday: we deploy every friday. Friday deploy window."
    ).note.id
    mem.remember("Office plants", "Water the plants on friday.")
    new = mem.remember("Deploy days changed", "No deploy on friday any more.").note.id
    before = [h.note_id for h in mem.search("deploy friday", limit=10, method=method)]
    assert before.index(old) < before.index(new)  # the old note matches better
    mem.notes.supersede(old, by=new)
    hits = mem.search("deploy friday", limit=10, method=method)
    ids = [h.note_id for h in hits]
    assert ids.index(new) + 1 == ids.index(old)  # right below its successor
    assert {h.note_id: h.superseded_by for h in hits}[old] == new
    top = mem.search("deploy friday", limit=1, method=method)
    assert [h.note_id for h in top] == [new]


def test_a_supersede_chain_ranks_newest_first(mem: Memory) -> None:
    ids = [
        mem.remember(
            f"Cluster version {v}", "cluster version " * (4 - i), id=f"cluster-{v}"
        ).note.id
        for i, v in enumerate(("one", "two", "three"))
    ]
    assert [h.note_id for h in mem.search("cluster version")] == ids
    mem.notes.supersede(ids[0], by=ids[1])
    mem.notes.supersede(ids[1], by=ids[2])
    hits = mem.search("cluster version")
    assert [h.note_id for h in hits] == ids[::-1]
    assert [h.superseded_by for h in hits] == [None, ids[2], ids[1]]


def test_usage_orders_equals_but_never_passes_clearly_better_notes(mem: Memory) -> None:
    strong = mem.remember("Postgres connection pooling", "Postgres pooling uses pgbouncer.")
    weak = mem.remember("Office plants", "Water the ficus. Someone mentioned postgres once.")
    twin_a = mem.remember("Backup twin", "nightly backups to the vault", id="twin-a")
    twin_b = mem.remember("Backup twin", "nightly backups to the vault", id="twin-b")
    key = mem.stores.by_scope[Scope.PROJECT].state_key
    mem.index.retriever.usage.record(key, [weak.note.id] * 5000 + [twin_b.note.id] * 3)
    for method in METHODS:
        hits = mem.search("postgres connection pooling", method=method)
        assert hits[0].note_id == strong.note.id, method
        # Equal relevance: the note recalled more often comes first.
        twins = [h.note_id for h in mem.search("nightly backups vault", method=method)[:2]]
        assert twins == [twin_b.note.id, twin_a.note.id], method
    assert usage_bonus(0) == 0
    assert 0 < usage_bonus(3) < usage_bonus(5000) <= 1 / 61 - 1 / 62


# --- embedder handling -------------------------------------------------------------------


def test_vectors_switched_off_by_the_user_search_lexically_without_warnings(
    project: Path, home: Path
) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    with Memory.open(project, home=home) as m:
        r = m.remember("Pricing cards", "Cards use fills.")
        gone = m.remember("Temporary", "Forget me.")
        assert m.index.reindex().embedder is None
        m.forget(gone.note.id)
        m.search("fills", method="lexical")
        assert m.warnings == []
        for _ in range(3):
            hits = m.search("fills")
            assert [h.note_id for h in hits] == [r.note.id]
            assert hits[0].match == "words"
        assert m.search("fills", method="vector") == []
        assert m.index.reindex().embedder is None
        assert m.warnings == []  # the user chose it; a missing model is what warns


def test_an_embedder_that_cannot_run_turns_vectors_off(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real HTTP embedder whose API key variable is unset fails at call time."""
    monkeypatch.delenv("MEMDIR_TEST_UNSET_KEY", raising=False)
    http = HttpEmbedder(
        "http://127.0.0.1:9/v1", "m", api_key_env="MEMDIR_TEST_UNSET_KEY", dimensions=8
    )
    mem.index.retriever.use_embedder(http)
    r = mem.remember("Pricing cards", "Cards use fills.")
    for _ in range(3):
        assert [h.note_id for h in mem.search("fills")] == [r.note.id]
    assert mem.index.retrieve("fills")[0].note_id == r.note.id
    warnings = [w for w in mem.warnings if "MEMDIR_TEST_UNSET_KEY" in w]
    assert len(warnings) == 1
    http.close()


@pytest.mark.parametrize("embedder", [FailingDocuments, FailingQueries, FailingIdentity])
def test_a_failing_embedder_leaves_search_lexical_with_a_warning(
    mem: Memory, embedder: type[BagOfConcepts]
) -> None:
    mem.index.retriever.use_embedder(embedder())
    r = mem.remember("Pricing cards", "Cards use fills.")
    hits = mem.search("fills")
    assert [h.note_id for h in hits] == [r.note.id]
    assert hits[0].match == "words"
    assert [c.note_id for c in mem.index.retrieve("fills")] == [r.note.id]
    mem.index.reindex()
    assert any("lexical" in w for w in mem.warnings)


def test_fake_embedder_satisfies_the_protocol(fake: BagOfConcepts) -> None:
    assert isinstance(fake, Embedder)


def test_a_new_embedder_re_embeds_and_vectors_are_never_mixed(mem: Memory) -> None:
    for i in range(QUERY_EMBED_BUDGET + 36):
        mem.remember(f"Note {i} about zebras", f"Zebra fact number {i}.")
    assert mem.index.reindex().embedded == QUERY_EMBED_BUDGET + 36
    other = BagOfConcepts(name="other-model", seed="x")
    mem.index.retriever.use_embedder(other)
    # One query embeds at most QUERY_EMBED_BUDGET chunks with the new model; only those
    # can be vector candidates, never vectors the old model made.
    chunks = mem.index.retrieve("zebra fact", method="vector", limit=1000)
    assert len(other.documents) == QUERY_EMBED_BUDGET
    assert 0 < len(chunks) <= QUERY_EMBED_BUDGET
    assert all(embed_text(c.summary, c.text) in other.documents for c in chunks)
    stats = mem.index.reindex()
    assert stats.embedder == "other-model@1/64"
    assert stats.embedded == 36
    assert (
        len(mem.index.retrieve("zebra fact", method="vector", limit=1000))
        == QUERY_EMBED_BUDGET + 36
    )


def test_an_unchanged_chunk_is_never_embedded_twice(mem: Memory, fake: BagOfConcepts) -> None:
    mem.remember("Alpha note", "First body.")
    mem.remember("Beta note", "Second body.")
    mem.remember("Copy", "Same text.", id="copy-a")
    mem.remember("Copy", "Same text.", id="copy-b")
    mem.search("anything")
    assert sorted(fake.documents) == sorted(
        ["Alpha note\nFirst body.", "Beta note\nSecond body.", "Copy\nSame text."]
    )
    fake.documents.clear()
    assert mem.index.reindex().embedded == 0
    mem.search("anything")
    assert fake.documents == []
    mem.remember("Beta note", "Second body, edited.", id=mem.search("beta")[0].note_id)
    mem.search("anything")
    mem.index.reindex()
    assert fake.documents == ["Beta note\nSecond body, edited."]


def test_vectors_survive_a_reindex_but_not_the_deleted_index(project: Path, home: Path) -> None:
    first = BagOfConcepts()
    with _reopen(project, home, first) as m:
        m.remember("Alpha", "One.")
        m.remember("Beta", "Two.")
        assert m.index.reindex().embedded == 2
        assert m.index.reindex().embedded == 0
    for f in (home / "index").glob("*.sqlite3*"):
        f.unlink()
    second = BagOfConcepts()
    with _reopen(project, home, second) as m:
        assert m.index.reindex().embedded == 2  # the cache was the deleted index itself
    assert len(second.documents) == 2


def test_writes_never_wait_for_the_embedder(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[str] = []

    def no_model(settings: object, home: Path) -> Embedder:
        loads.append("load")
        raise EmbedderUnavailable("not in this test")

    monkeypatch.setattr("memdir.retrieve.retriever.configured_embedder", no_model)
    with Memory.open(project, home=home) as m:
        for i in range(5):
            r = m.remember(f"Quokka note {i}", f"quokka fact {i}")
            assert m.search(f"fact {i}", method="lexical")[0].note_id == r.note.id
        assert loads == []  # neither remember nor a lexical search loads a model
        m.search("quokka")
        assert loads == ["load"]


def test_remember_does_not_call_the_embedder(mem: Memory, fake: BagOfConcepts) -> None:
    mem.search("warm up")
    fake.documents.clear()
    fake.queries.clear()
    r = mem.remember("Quokka habitat", "Quokkas live on Rottnest Island.")
    mem.remember("Quokka diet", "Quokkas eat leaves.")
    assert fake.documents == [] and fake.queries == []
    assert mem.search("rottnest", method="lexical")[0].note_id == r.note.id
    hits = mem.search("rottnest")  # embeds the new chunks now, at query time
    assert hits[0].note_id == r.note.id and hits[0].match == "both"
    assert len(fake.documents) == 2


# --- forget ------------------------------------------------------------------------------

SECRET_BODY = "The zqxvortexmoss ledger sits in vault seventeen near the lighthouse."


def _many(m: Memory, n: int = 60) -> None:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "river", "mountain", "office"]
    rng = np.random.default_rng(1)
    for i in range(n):
        m.remember(f"Filler {i} {words[i % len(words)]}", " ".join(rng.choice(words, 50)))


def test_forget_removes_the_note_from_chunks_fts_vectors_and_search(
    mem: Memory, home: Path
) -> None:
    _many(mem, 20)
    secret = mem.remember("Zqx vault", SECRET_BODY)
    keep = mem.remember("Zqx vault copy", "Identical text.", id="copy-one")
    mem.remember("Zqx vault copy", "Identical text.", id="copy-two")
    mem.index.reindex()
    ehashes = {
        r[0] for r in _rows(home, "SELECT embed_hash FROM chunks WHERE note_id=?", secret.note.id)
    }
    assert ehashes
    result = mem.forget(secret.note.id)
    assert "search for its distinctive terms does not return it" in result.checks
    assert _count(home, "SELECT count(*) FROM chunks WHERE note_id=?", secret.note.id) == 0
    assert _count(home, "SELECT count(*) FROM notes WHERE note_id=?", secret.note.id) == 0
    assert _count(home, "SELECT count(*) FROM fts WHERE fts MATCH 'zqxvortexmoss'") == 0
    for h in ehashes:
        assert _count(home, "SELECT count(*) FROM vectors WHERE embed_hash=?", h) == 0
    for method in METHODS:
        for query in ("zqxvortexmoss", "vault seventeen lighthouse", SECRET_BODY):
            assert secret.note.id not in {h.note_id for h in mem.search(query, method=method)}
    # A vector another note still uses stays.
    mem.forget("copy-two")
    assert [c.note_id for c in mem.index.retrieve("identical text", method="vector")][:1] == [
        keep.note.id
    ]


def test_forget_purge_leaves_no_copy_under_memdir_home(mem: Memory, home: Path) -> None:
    _many(mem)
    secret = mem.remember("Zqx vault", SECRET_BODY)
    mem.search("zqxvortexmoss")
    mem.index.reindex()
    _many(mem, 10)
    mem.forget(secret.note.id, purge=True)
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".sqlite3") for p in files)
    for path in files:
        data = path.read_bytes()
        # Terms sit prefix-compressed in FTS5 segments: look for a word's tail too.
        for needle in (SECRET_BODY.encode(), b"vortexmoss", b"lighthouse", b"seventeen"):
            assert data.find(needle) == -1, f"{needle!r} is still in {path}"
    assert not (mem.stores.directory("project") / f"{secret.note.id}.md").exists()


# --- remember's nearest notes ------------------------------------------------------------


def test_nearest_and_duplicate_flag_come_from_the_index(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    topics = ["invoice", "deploy", "pricing", "cache", "schema", "backup", "latency", "queue"]
    made = []
    for i in range(200):
        t = topics[i % len(topics)]
        made.append(
            mem.remember(
                f"{t.capitalize()} rule {i} mentions zorb{i}",
                f"For {t}, rule {i} says zorb{i} must use lane {i % 7} and window {i // 10}.",
                tags=[t],
            ).note
        )
    target = made[137]
    _age(*mem.stores.directory("project").iterdir())  # at rest: no file is read for being recent
    mem.search("warm up", method="lexical")
    read: list[Path] = []
    real = Path.read_bytes

    def counting(self: Path) -> bytes:
        read.append(self)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    copy = mem.remember(target.summary + " again", target.body, tags=list(target.tags))
    assert copy.likely_duplicate
    assert copy.duplicate_of == target.id
    assert copy.nearest[0].note_id == target.id
    # The neighbours come from the index: only a handful of note files are opened.
    note_reads = [
        p for p in read if p.suffix == ".md" and p.parent == mem.stores.directory("project")
    ]
    assert len(note_reads) < 20
    fresh = mem.remember("Completely different", "Quokkas on Rottnest Island.")
    assert not fresh.likely_duplicate
