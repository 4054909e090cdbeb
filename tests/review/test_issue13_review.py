"""Hostile review of the memory page, `memdir ui` (issue 13, SPEC §5, docs/web.md).

Every test here is a bug, proven: it fails today (xfail strict) for the reason it names.
The app is driven in-process over `httpx.ASGITransport` (a local fixture: the fixtures of
tests/web/conftest.py are not visible from this package), or `memdir ui` runs for real as
a subprocess.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from memdir import Memory
from memdir.web.app import build_app
from memdir.web.serve import new_token

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"


class Page:
    """The page's app in-process; app exceptions become the 500 a real server answers."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.token = new_token()
        self.app = build_app(memory, token=self.token, port=PORT)

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}", **(kwargs.pop("headers", None) or {})}

        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
                return await client.request(method, path, headers=headers, **kwargs)

        return anyio.run(send)


@pytest.fixture
def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Page]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    monkeypatch.setenv("MEMDIR_HOME", str(home))
    memory = Memory.open(project, home=home)
    try:
        yield Page(memory)
    finally:
        memory.close()


# -- 1. the token is handed to the browser on its command line -----------------------------


def test_the_token_is_not_on_the_browsers_command_line(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    argv_file = tmp_path / "argv.txt"
    browser = tmp_path / "fake-browser"
    # What any other local user sees of the browser process: its argv.
    browser.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$FAKE_BROWSER_ARGV"\n')
    browser.chmod(0o755)
    env = {
        **os.environ,
        "MEMDIR_HOME": str(home),
        "BROWSER": str(browser),
        "FAKE_BROWSER_ARGV": str(argv_file),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "ui", "--json", "--port", "0"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = json.loads(proc.stdout.readline())["url"]
        token = url.split("#token=", 1)[1]
        deadline = time.monotonic() + 15
        while not argv_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        argv = argv_file.read_text()
        assert argv.strip(), "the browser was not started"
        assert token not in argv, f"the browser's argv holds the token: {argv.strip()}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- 2. the "Skip to content" link throws the current page away ---------------------------


def _web_helpers() -> tuple[Any, Any]:
    """tests/web's browser and server helpers (that folder is not a package)."""
    web = str(Path(__file__).resolve().parents[1] / "web")
    if web not in sys.path:
        sys.path.insert(0, web)
    import browser
    import web_helpers

    browser.require_browser()
    return browser, web_helpers


def test_the_skip_link_keeps_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    browser, web_helpers = _web_helpers()
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    monkeypatch.setenv("MEMDIR_HOME", str(home))
    memory = Memory.open(project, home=home)
    server = web_helpers.start_server(memory, project, home)
    try:
        memory.remember("A note to list", "Its body.", scope="project")
        with browser.launch_browser() as chromium:
            tab = chromium.new_page()
            tab.set_default_timeout(browser.TIMEOUT_MS)
            tab.goto(server.url)
            tab.wait_for_selector("#notes")
            tab.keyboard.press("Tab")  # the first stop: "Skip to content"
            assert tab.evaluate("document.activeElement.id") == "skip"
            tab.keyboard.press("Enter")
            tab.wait_for_timeout(500)
            title = tab.locator("#page-title").inner_text()
            assert title == "Notes", f"the skip link led to {tab.url}: {title!r}"
    finally:
        server.stop()
        memory.close()


# -- 3. a malformed number is an unhandled exception, not an 'invalid' answer -------------


def test_a_non_ascii_digit_limit_is_an_invalid_json_answer(page: Page) -> None:
    r = page.request("GET", "/api/search", params={"q": "deploy", "limit": "²"})
    assert r.status_code == 400, (r.status_code, r.headers.get("content-type"), r.text)
    assert r.json()["error"]["kind"] == "invalid"


# -- 4. a link across scopes is shown as dangling, its backlink is missing ------------------


def test_a_link_to_a_note_of_the_other_scope_is_not_dangling(page: Page) -> None:
    user = page.memory.remember("Prefers tabs", "I indent with tabs.", scope="user")
    project = page.memory.remember("Editor setup", f"See [[{user.note.id}]].", scope="project")
    assert page.memory.notes.links(project.note.id).outgoing[0].scope is not None  # it resolves
    view = page.request("GET", f"/api/notes/{project.note.id}", params={"scope": "project"})
    assert view.status_code == 200, view.text
    data = view.json()
    assert "dangling" not in data["html"], data["html"]
    assert data["links"] == [
        {"target": user.note.id, "scope": "user", "summary": "Prefers tabs"}
    ], data["links"]
    back = page.request("GET", f"/api/notes/{user.note.id}", params={"scope": "user"}).json()
    assert [b["target"] for b in back["backlinks"]] == [project.note.id], back["backlinks"]


# -- 5. opening the browser blocks the server until the browser exits ---------------------


def test_the_browser_memdir_opens_can_load_the_page(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    outcome = tmp_path / "browser-outcome.txt"
    browser = tmp_path / "text-browser"
    # A browser that stays in the foreground while it loads the page (as w3m or lynx do).
    browser.write_text(
        f"#!{sys.executable}\n"
        "import html, re, sys, urllib.parse, urllib.request\n"
        "url = sys.argv[1]\n"
        "if url.startswith('file:'):  # the private page that forwards to the real one\n"
        "    text = open(urllib.parse.unquote(url[7:]), encoding='utf-8').read()\n"
        "    url = html.unescape(re.search(r'url=([^\"]+)', text).group(1))\n"
        "try:\n"
        "    with urllib.request.urlopen(url.split('#')[0], timeout=5) as r:\n"
        "        said = f'loaded {r.status}'\n"
        "except Exception as exc:\n"
        "    said = f'failed: {exc!r}'\n"
        f"open({str(outcome)!r}, 'w').write(said)\n"
    )
    browser.chmod(0o755)
    env = {**os.environ, "MEMDIR_HOME": str(home), "BROWSER": str(browser)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "ui", "--json", "--port", "0"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        json.loads(proc.stdout.readline())
        deadline = time.monotonic() + 30
        while not outcome.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert outcome.read_text() == "loaded 200", outcome.read_text()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
