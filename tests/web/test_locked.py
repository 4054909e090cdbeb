"""The memory page of an encrypted store: it starts while locked, says so (with the unlock
hint), and serves the notes once unlocked, without a restart."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from web_helpers import ASGI_PORT, AsgiPage

from memdir import Memory
from memdir.web.app import build_app
from memdir.web.serve import new_token

PASSWORD = b"page password"


@pytest.fixture
def short_runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="mw-", dir="/tmp"))
    path.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_locked_store_says_so_and_unlocking_needs_no_restart(
    tmp_path: Path, short_runtime: Path
) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    project.mkdir()
    memory = Memory.open(project, home=home, embedder=None)
    try:
        memory.remember("Sealed", body="the quokka-violet protocol", id="sealed")
        memory.crypto.encrypt(PASSWORD)
        memory.crypto.lock()
        token = new_token()
        page = AsgiPage(build_app(memory, token=token, port=ASGI_PORT), token, memory)
        locked = page.get("/api/notes")
        assert locked.status_code >= 400
        error = locked.json()["error"]
        assert error["kind"] == "refused" and error["hint"] == "unlock"
        assert "locked" in error["message"]
        memory.crypto.unlock(PASSWORD)
        notes = page.get("/api/notes")
        assert notes.status_code == 200, notes.text
        assert [n["id"] for n in notes.json()["notes"]] == ["sealed"]
    finally:
        memory.crypto.lock()
        memory.close()
