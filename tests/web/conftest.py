"""Fixtures of the memory page's tests: `page` (the app over `httpx.ASGITransport` for the
`memory` fixture) and `ui_server` (the real server on 127.0.0.1, a free port, in a thread,
for a Memory on a temp project and home; see `web_helpers.UiServer`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from web_helpers import ASGI_PORT, AsgiPage, UiServer, start_server

from memdir import Memory
from memdir.web.app import build_app
from memdir.web.serve import new_token


@pytest.fixture
def page(memory: Memory) -> AsgiPage:
    """The page's app for the `memory` fixture (project and home in tmp_path)."""
    token = new_token()
    return AsgiPage(build_app(memory, token=token, port=ASGI_PORT), token, memory)


@pytest.fixture
def ui_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[UiServer]:
    """The real memory page on loopback for a Memory on a fresh project and MEMDIR_HOME."""
    project = tmp_path / "ui-project"
    home = tmp_path / "ui-home"
    project.mkdir()
    home.mkdir()
    monkeypatch.setenv("MEMDIR_HOME", str(home))
    memory = Memory.open(project, home=home)
    running = start_server(memory, project, home)
    try:
        yield running
    finally:
        running.stop()
        memory.close()
