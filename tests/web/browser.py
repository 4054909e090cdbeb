"""Test helper: Debian's chromium driven by Playwright (sync API) for the memory page's tests.

    from browser import Watch, launch_browser, screenshot

    with launch_browser() as browser:
        page = browser.new_page()
        watch = Watch(page, allowed_host="127.0.0.1")
        page.goto(ui_server.url)
        watch.check()

Playwright's own browser download is impossible here, so chromium comes from the system
(`/usr/bin/chromium`, the `chromium` package `.ci/run` installs) with the flags a closed
network needs. Without chromium or playwright the tests are skipped, or failed when
`MEMDIR_REQUIRE_BROWSER=1` (CI).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Dialog, Page, Request

__all__ = [
    "CHROMIUM",
    "Watch",
    "launch_browser",
    "require_browser",
    "screenshot",
]

CHROMIUM = Path(os.environ.get("MEMDIR_CHROMIUM", "/usr/bin/chromium"))
_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
#: Generous: the suite runs under load, and every wait is an auto-waiting `expect`.
TIMEOUT_MS = 20_000


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("MEMDIR_REQUIRE_BROWSER") == "1":
        pytest.fail(f"a browser is required (MEMDIR_REQUIRE_BROWSER=1): {reason}", pytrace=False)
    pytest.skip(f"no browser for the memory page's tests: {reason}", allow_module_level=True)


def require_browser() -> None:
    """Skip (or, with MEMDIR_REQUIRE_BROWSER=1, fail) unless playwright and chromium exist."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        _unavailable(f"the playwright package is not installed ({exc})")
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing (Debian: apt-get install chromium)")


@contextlib.contextmanager
def launch_browser() -> Iterator[Browser]:
    """A headless system chromium, closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Watch:
    """Records what a page must never do: open a dialog (alert/confirm/prompt), send a
    request anywhere but the memory page's own host, set `window.__pwned`, break its
    Content-Security-Policy, or throw an uncaught error."""

    def __init__(self, page: Page, allowed_host: str = "127.0.0.1") -> None:
        self.page = page
        self.allowed_host = allowed_host
        self.dialogs: list[str] = []
        self.foreign: list[str] = []
        self.requests: list[str] = []
        #: (url, Authorization header or None) of every request to /api/
        self.api_calls: list[tuple[str, str | None]] = []
        self.console_errors: list[str] = []
        page.on("dialog", self._dialog)
        page.on("request", self._request)
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.console_errors.append(f"pageerror: {exc}"))

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def _request(self, request: Request) -> None:
        self.requests.append(request.url)
        parts = urlsplit(request.url)
        if parts.path.startswith("/api/"):
            self.api_calls.append((request.url, request.headers.get("authorization")))
        if parts.scheme in ("data", "blob", "about"):
            if parts.scheme != "about":
                self.foreign.append(request.url)
            return
        if parts.hostname != self.allowed_host:
            self.foreign.append(request.url)

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.console_errors.append(message.text)

    def pwned(self) -> Any:
        return self.page.evaluate("() => window.__pwned")

    def check(self) -> None:
        """Nothing of the above happened (so far)."""
        assert self.dialogs == [], self.dialogs
        assert self.foreign == [], self.foreign
        assert self.pwned() is None
        blocked = [m for m in self.console_errors if "Content Security Policy" in m]
        assert blocked == [], blocked
        crashed = [m for m in self.console_errors if m.startswith("pageerror:")]
        assert crashed == [], crashed


def screenshot(page: Page, name: str, tmp_path: Path, *, full_page: bool = True) -> Path:
    """Save `name`.png under `tmp_path`/ui and, when MEMDIR_ARTIFACTS is set, copy it to
    $MEMDIR_ARTIFACTS/ui/ too (the suite's kept artefacts); the path under tmp_path."""
    out = tmp_path / "ui" / f"{name}.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out), full_page=full_page)
    artifacts = os.environ.get("MEMDIR_ARTIFACTS")
    if artifacts:
        kept = Path(artifacts) / "ui" / f"{name}.png"
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out, kept)
    return out
