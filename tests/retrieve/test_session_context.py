"""Session context in the hybrid rerank (`memdir.retrieve.hybrid.session_context`): a chunk
borrows a share of what the best other candidate written in the same working session
stands out by (above the candidates' median coverage and cosine), so an answer ("Yes,
every Tuesday!") is found beside the turn that holds the question's words; notes written
days apart lend nothing, and a burst of notes about other things lends nothing either."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir import Memory
from memdir.core import Note, render_note
from memdir.retrieve.hybrid import FusionParams, session_context
from memdir.retrieve.ranking import DEFAULT_PARAMS

MINUTE = 60_000
DAY = 24 * 60 * MINUTE


def _notes(times: list[int]) -> list[tuple[str, int]]:
    return [(f"n{i}", t) for i, t in enumerate(times)]


def test_a_candidate_borrows_what_its_session_mates_stand_out_by() -> None:
    # 0: the answer (about the query a little), 1: the turn holding the question's words,
    # 2: an unrelated mate, 3: a note written days later.
    notes = _notes([0, MINUTE, 2 * MINUTE, 10 * DAY])
    cov, cos = session_context(notes, ([0.2, 1.0, 0.0, 0.5], [0.80, 0.85, 0.70, 0.78]), DAY // 2)
    # Medians 0.35 and 0.79: the mates stand out by 0.65 / 0.06 (the question's turn) and
    # 0.01 (the answer); each candidate's own standing is its best signal's share of the
    # best candidate's (the answer 1/6, the question's turn 1, the unrelated mate 0).
    assert cov == pytest.approx([0.65 / 6, 0.0, 0.0, 0.0])
    assert cos == pytest.approx([0.06 / 6, 0.01, 0.0, 0.0])


def test_a_note_s_own_chunks_lend_nothing() -> None:
    values = ([0.9, 0.8, 0.1, 0.0],)
    one_note = [("long", 0), ("long", 0), ("other", MINUTE), ("x", 10 * DAY)]
    assert session_context(one_note, values, DAY) == [[0.0, 0.0, 0.0, 0.0]]
    two_notes = [("a", 0), ("b", 0), ("other", MINUTE), ("x", 10 * DAY)]
    assert session_context(two_notes, values, DAY) == [pytest.approx([0.35, 0.35, 0.0, 0.0])]


def test_the_window_is_inclusive_and_the_usual_lends_nothing() -> None:
    values = ([1.5, 2.0, 0.0, 0.0],)
    inside = session_context(_notes([0, 5, 100, 200]), values, 5)
    assert inside == [pytest.approx([0.75, 0.75, 0.0, 0.0])]
    assert session_context(_notes([0, 6, 100, 200]), values, 5) == [[0.0, 0.0, 0.0, 0.0]]
    # Notes as related to the query as every other candidate lend nothing.
    assert session_context(_notes([0, 1, 2]), ([0.8, 0.8, 0.8],), 5) == [[0.0, 0.0, 0.0]]


def test_an_unrelated_note_borrows_nothing_from_a_matching_mate() -> None:
    """A burst written together (an import, a clone): one member matches, the others are
    below the median and stay where they are."""
    notes = [(f"n{i}", 0) for i in range(6)] + [("alone", 10 * DAY)]
    cov, cos = session_context(
        notes,
        ([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], [0.9, 0.3, 0.2, 0.3, 0.25, 0.3, 0.9]),
        DAY,
    )
    assert cov[1:6] == [0.0] * 5 and cos[1:6] == [0.0] * 5


def test_one_candidate_or_none_has_no_context() -> None:
    assert session_context(_notes([7]), ([0.5], [0.5]), DAY) == [[0.0], [0.0]]
    assert session_context([], ([], []), DAY) == [[], []]


@given(
    st.lists(
        st.tuples(
            st.sampled_from("abcde"), st.integers(0, 10 * DAY), st.floats(-1, 1), st.floats(-1, 1)
        ),
        max_size=30,
    ),
    st.integers(0, 2 * DAY),
)
def test_it_is_the_brute_force_maximum(
    rows: list[tuple[str, int, float, float]], window: int
) -> None:
    notes = [(r[0], r[1]) for r in rows]
    values = ([r[2] for r in rows], [r[3] for r in rows])
    got = session_context(notes, values, window)
    above = []
    for signal in values:
        middle = statistics.median(signal) if signal else 0.0
        above.append([max(v - middle, 0.0) for v in signal])
    standing = [
        max([0.0] + [a[i] / max(a) for a in above if max(a, default=0.0) > 0])
        for i in range(len(notes))
    ]
    for s, lent in enumerate(above):
        for i, (note, t) in enumerate(notes):
            others = [
                v
                for j, v in enumerate(lent)
                if notes[j][0] != note and abs(notes[j][1] - t) <= window
            ]
            assert got[s][i] == pytest.approx(max([0.0, *others]) * standing[i], abs=1e-9)


# -- ranking, with the real embedder ----------------------------------------------------------

_START = int(datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp() * 1000)
#: A conversation: the answer is the turn after the one holding the question's words.
_TURNS = [
    ("t1", "Caroline: Have you been to the new climbing gym downtown?", 0),
    ("t2", "Melanie: Yes! I go there every Tuesday with my kids, they love it.", MINUTE),
    ("t3", "Caroline: That sounds like so much fun.", 2 * MINUTE),
    # Written on other days: words of the question, not its answer.
    ("o1", "Melanie: Tuesday is my busiest day at work, meetings all afternoon.", 3 * DAY),
    ("o2", "Melanie: My kids started piano lessons this spring.", 9 * DAY),
    ("o3", "Caroline: I watched a documentary about climbing last night.", 15 * DAY),
    ("o4", "Melanie: How often do you go running these days?", 21 * DAY),
]
QUESTION = "How often does Melanie go to the climbing gym?"


def _write(directory: Path, spread: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for i, (note_id, body, offset) in enumerate(_TURNS):
        at = _START + offset + i * spread
        note = Note(id=note_id, summary=body[:60], body=body, created_at=at, updated_at=at)
        (directory / f"{note_id}.md").write_bytes(render_note(note))


@pytest.fixture(scope="module")
def conversation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("session")
    _write(root / "project" / "MEMORY", 0)
    memory = Memory.open(root / "project", home=root / "home")
    memory.index.reindex()
    try:
        yield memory
    finally:
        memory.close()


def _ranked(memory: Memory, params: FusionParams) -> list[tuple[str, float]]:
    memory.index.retriever.params = params
    try:
        hits = memory.search(QUESTION, limit=7, scope="project", method="hybrid")
    finally:
        memory.index.retriever.params = DEFAULT_PARAMS
    return [(h.note_id, h.score) for h in hits]


def test_the_context_steps_are_on_by_default() -> None:
    assert DEFAULT_PARAMS.context_coverage_weight > 0
    assert DEFAULT_PARAMS.context_cosine_weight > 0


def test_the_answer_beside_the_question_s_words_ranks_near_the_top(conversation: Memory) -> None:
    order = [n for n, _ in _ranked(conversation, DEFAULT_PARAMS)]
    assert order.index("t2") < 2, order
    assert order.index("t2") < order.index("o1"), order


def test_context_only_adds_and_only_within_the_session(conversation: Memory) -> None:
    off = dataclasses.replace(
        DEFAULT_PARAMS, context_coverage_weight=0.0, context_cosine_weight=0.0
    )
    with_context = dict(_ranked(conversation, DEFAULT_PARAMS))
    without = dict(_ranked(conversation, off))
    assert with_context["t2"] > without["t2"]  # the answer borrows from the question's turn
    for note_id in ("t1", "t3"):  # never less; more only if about the query itself
        assert with_context[note_id] >= without[note_id] - 1e-9
    for note_id in ("o1", "o2", "o3", "o4"):  # each alone in its session
        assert with_context[note_id] == pytest.approx(without[note_id])


def test_notes_written_days_apart_lend_nothing(tmp_path: Path) -> None:
    _write(tmp_path / "project" / "MEMORY", 2 * DAY)  # the three turns, two days apart
    memory = Memory.open(tmp_path / "project", home=tmp_path / "home")
    try:
        memory.index.reindex()
        off = dataclasses.replace(
            DEFAULT_PARAMS, context_coverage_weight=0.0, context_cosine_weight=0.0
        )
        assert dict(_ranked(memory, DEFAULT_PARAMS)) == pytest.approx(dict(_ranked(memory, off)))
    finally:
        memory.close()


def test_a_match_written_alone_stays_first_over_a_burst_of_unrelated_notes(
    tmp_path: Path,
) -> None:
    """Notes written together lend only what stands out among the candidates (above their
    median), so a burst of notes about other things cannot pass the note that answers."""
    folder = tmp_path / "project" / "MEMORY"
    folder.mkdir(parents=True)
    notes = [
        ("deploys", "Deploys go out on Tuesdays", "Releases ship to production every Tuesday.", 0),
        ("pg", "We use PostgreSQL 16 for the main database", "The primary is db-1.", 5 * DAY),
        ("answers", "The user prefers short answers without emoji", "", 5 * DAY + MINUTE),
        ("backups", "Backups run every night at 2 am", "They go to S3.", 5 * DAY + 2 * MINUTE),
        ("lint", "Run ruff before every commit", "CI fails otherwise.", 5 * DAY + 3 * MINUTE),
    ]
    for note_id, summary, body, offset in notes:
        at = _START + offset
        note = Note(id=note_id, summary=summary, body=body, created_at=at, updated_at=at)
        (folder / f"{note_id}.md").write_bytes(render_note(note))
    memory = Memory.open(tmp_path / "project", home=tmp_path / "home")
    try:
        memory.index.reindex()
        for query in ("deploys", "When do deploys go out?", "which day do we release", "Tuesday"):
            hits = memory.search(query, limit=3, method="hybrid")
            assert hits[0].note_id == "deploys", (query, [h.note_id for h in hits])
    finally:
        memory.close()
