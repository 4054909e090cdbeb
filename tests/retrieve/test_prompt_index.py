"""§4.1 prompt index: one line per note, newest first, within indexChars, the rest counted."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator

import pytest

from memdir import Memory
from memdir.guidance import EMPTY_INDEX, GUIDANCE
from memdir.retrieve import prompt_index


@pytest.fixture
def ticking(memory: Memory) -> Iterator[Memory]:
    """A Memory whose clock advances one second per write, so update order is exact."""
    clock = itertools.count(1_780_000_000_000, 1000)
    m = Memory(memory.settings, clock=lambda: next(clock))
    try:
        yield m
    finally:
        m.close()


def _with_index_chars(memory: Memory, chars: int) -> Memory:
    return Memory(dataclasses.replace(memory.settings, index_chars=chars))


def test_empty_store_gives_the_guidance_lines(memory: Memory) -> None:
    text = memory.agent.prompt_index()
    assert text == EMPTY_INDEX
    assert len(text.splitlines()) == 2
    assert "No memory notes yet" in text
    assert "secrets" in text


def test_guidance_names_the_four_types_and_what_not_to_write(memory: Memory) -> None:
    text = memory.agent.guidance()
    assert text == GUIDANCE
    for word in ("feedback", "user", "project", "reference", "supersedes", "[[", "secrets"):
        assert word in text
    assert 10 <= len(text.splitlines()) <= 20


def test_one_line_per_note_newest_first_with_id_and_type(ticking: Memory) -> None:
    ticking.remember("Use pnpm, not npm", type="feedback", id="pnpm")
    ticking.remember("User is a backend engineer", type="user", id="role")
    ticking.remember("Untyped old note", id="old")
    ticking.remember("Use pnpm 9, not npm", id="pnpm")  # updated last: comes first
    lines = ticking.agent.prompt_index().splitlines()
    assert lines == [
        "- Use pnpm 9, not npm [[pnpm]] (feedback)",
        "- Untyped old note [[old]]",
        "- User is a backend engineer [[role]] (user)",
    ]


def test_superseded_and_private_notes_are_left_out(ticking: Memory) -> None:
    ticking.remember("Database is PostgreSQL 14", type="project", id="pg14")
    ticking.remember("Home address", type="user", id="address", private=True)
    ticking.remember("Database is PostgreSQL 16", type="project", id="pg16", supersedes=["pg14"])
    text = ticking.agent.prompt_index()
    assert "pg16" in text
    assert "pg14" not in text
    assert "address" not in text
    assert "more" not in text


def test_only_private_notes_give_the_guidance(ticking: Memory) -> None:
    ticking.remember("Home address", type="user", id="address", private=True)
    assert ticking.agent.prompt_index() == EMPTY_INDEX


def test_budget_keeps_the_newest_and_counts_the_rest(ticking: Memory) -> None:
    for i in range(10):
        ticking.remember(f"Decision number {i} about the build", type="project", id=f"d{i}")
    full = ticking.agent.prompt_index().splitlines()
    assert len(full) == 10
    budget = len("\n".join(full[:3]))
    small = _with_index_chars(ticking, budget)
    try:
        lines = small.agent.prompt_index().splitlines()
    finally:
        small.close()
    assert lines[:3] == full[:3]
    assert lines[3] == "and 7 more — use the memory tool to search them"
    assert len(lines) == 4
    assert len("\n".join(lines[:3])) <= budget


def test_budget_smaller_than_one_line_counts_everything(ticking: Memory) -> None:
    ticking.remember("A summary longer than the budget", type="project", id="long")
    tiny = _with_index_chars(ticking, 10)
    try:
        assert tiny.agent.prompt_index() == "and 1 more — use the memory tool to search them"
    finally:
        tiny.close()


def test_both_scopes_are_listed(memory: Memory) -> None:
    memory.remember("Project decision about caching", type="project", id="cache")
    memory.remember("User likes terse answers", type="user", id="terse")
    assert memory.read("terse").scope == "user"
    text = memory.agent.prompt_index()
    assert "[[cache]]" in text
    assert "[[terse]]" in text


def test_prompt_index_is_pure_over_notes() -> None:
    from memdir.core import Note

    notes = [
        Note(id="a", summary="first", updated_at=1),
        Note(id="b", summary="second", updated_at=2),
        Note(id="c", summary="third", updated_at=3, supersedes=("a",)),
    ]
    assert prompt_index(notes, 4000) == "- third [[c]]\n- second [[b]]"
    assert prompt_index([], 4000) == EMPTY_INDEX
