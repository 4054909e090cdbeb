"""Fixtures: the scripted chat server, a client for it, and Memory opened with given configs
(`memory`: extraction on stop and compaction)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from loopback import serving
from memdir import Memory
from memdir.extract import HttpChatClient

from . import ON_STOP, ChatServer


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with serving(ChatServer()) as srv:
        yield srv


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def chat(server: ChatServer, sleeps: list[float]) -> Iterator[HttpChatClient]:
    client = HttpChatClient(server.url, "small-model", sleep=sleeps.append, max_retries=2)
    yield client
    client.close()


@pytest.fixture
def open_memory(project: Path, home: Path) -> Iterator[Callable[..., Memory]]:
    """Open a Memory after writing the user (and optionally project) config."""
    opened: list[Memory] = []

    def make(user_config: str = "", project_config: str | None = None) -> Memory:
        (home / "config.toml").write_text(user_config, encoding="utf-8")
        if project_config is not None:
            (project / ".memdir").mkdir(exist_ok=True)
            (project / ".memdir" / "config.toml").write_text(project_config, encoding="utf-8")
        memory = Memory.open(project, home=home)
        opened.append(memory)
        return memory

    yield make
    for memory in opened:
        memory.close()


@pytest.fixture
def memory(open_memory: Callable[..., Memory]) -> Memory:
    """A Memory that extracts on stop and on compaction."""
    return open_memory(ON_STOP)
