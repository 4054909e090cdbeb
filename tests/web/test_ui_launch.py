"""`memdir ui` as a user runs it (SPEC §5, docs/web.md): the real process, the browser it
starts (a fake one that records what it was given, a text browser that stays in the
foreground) and keyboard navigation in a real browser."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import browser
import pytest
import web_helpers

from memdir import Memory


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


def test_the_skip_link_keeps_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    browser.require_browser()
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
