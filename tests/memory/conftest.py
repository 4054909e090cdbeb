"""Fixtures for the Memory tests: a memory seeded with one note in each scope."""

from __future__ import annotations

import pytest

from memdir import Memory


@pytest.fixture
def seeded(memory: Memory) -> Memory:
    """A memory with one note in each scope, so every directory already exists."""
    memory.remember("Note a", "Body a.", id="note-a")
    memory.remember("User pref", "Terse.", type="user")
    return memory
