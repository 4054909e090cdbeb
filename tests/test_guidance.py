"""Tests for `guidance.py`: the shipped guidance and the empty-index text."""

from __future__ import annotations

from memdir import Memory
from memdir.core.vocab import NoteType, choices
from memdir.guidance import EMPTY_INDEX, GUIDANCE


def test_guidance_names_every_note_type_and_warns_about_secrets() -> None:
    for note_type in choices(NoteType):
        assert f"- {note_type}:" in GUIDANCE
    assert "secrets" in GUIDANCE
    assert "[[note-id]]" in GUIDANCE
    assert "supersedes" in GUIDANCE


def test_the_texts_are_plain_lines() -> None:
    assert GUIDANCE.endswith("\n") and not GUIDANCE.startswith("\n")
    assert "\\" not in EMPTY_INDEX  # line continuations were joined
    assert EMPTY_INDEX.count("\n") == 1
    assert "secrets" in EMPTY_INDEX


def test_memory_hands_out_the_guidance_and_the_empty_index(memory: Memory) -> None:
    assert memory.agent.guidance() == GUIDANCE
    assert memory.agent.prompt_index() == EMPTY_INDEX
