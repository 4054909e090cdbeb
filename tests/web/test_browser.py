"""The memory page in a real browser (issue 13, §5, §6, §7.4): Debian's chromium driven by
Playwright against `memdir ui`'s server on loopback (the `ui_server` fixture).

Every flow a person uses: the token handed over, search as you type, a note with links,
backlinks and history, edit and save, a guard refusal that never shows the secret, a stale
edit resolved side by side, forget with its plan, a same-topic merge, restore a backup,
sync on and off, and a real conflict between two homes and a sync server resolved in the
conflict view. Hostile notes render inert: no dialog, no request off 127.0.0.1, no
`window.__pwned`. Each main page is kept as a screenshot (`tmp_path/ui/NAME.png`, and
`$MEMDIR_ARTIFACTS/ui/NAME.png` when that is set). All waits are Playwright's auto-waiting
`expect`s, never sleeps.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from browser import TIMEOUT_MS, Watch, launch_browser, require_browser, screenshot

from memdir import Memory

require_browser()

from playwright.sync_api import Browser, Page, expect  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

expect.set_options(timeout=TIMEOUT_MS)

#: A fake AWS access key id of the right shape (AKIA + 16): the guard must refuse it.
FAKE_KEY = "AKIA" + "QX7MZ2RWJ4KD9PLT"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch_browser() as b:
        yield b


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    context.set_default_timeout(TIMEOUT_MS)
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture
def watch(page: Page) -> Watch:
    return Watch(page)


@pytest.fixture
def disk(ui_server: Any) -> Iterator[Memory]:
    """Another Memory on the page's project and home, as another process (an agent, the
    CLI) would have: the server's own `ui_server.memory` is not shared between threads, so
    while the page is open the tests change and check notes through this one."""
    other = Memory.open(ui_server.project, home=ui_server.home)
    try:
        yield other
    finally:
        other.close()


def _open(page: Page, ui_server: Any) -> None:
    page.goto(ui_server.url)
    expect(page.locator("#page-title")).to_be_visible()


def _note(memory: Memory, summary: str, body: str = "", **kwargs: Any) -> str:
    return memory.remember(summary, body, **kwargs).note.id


# -- the token, the list, search -------------------------------------------------------------


def test_the_token_moves_to_session_storage_and_the_list_shows_both_scopes(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    memory = disk
    p = _note(memory, "Deploys need two approvals", "Ask in #ops.", type="project", tags=["ops"])
    u = _note(memory, "Prefers short answers", "No preamble.", type="user", scope="user")
    page.goto(ui_server.url)
    expect(page.locator("#notes")).to_be_visible()
    assert "token" not in page.url
    assert ui_server.token not in page.url
    stored = page.evaluate("() => sessionStorage.getItem('memdir.token')")
    assert stored == ui_server.token
    rows = page.locator("#notes tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("#notes")).to_contain_text("Deploys need two approvals")
    expect(page.locator("#notes")).to_contain_text("Prefers short answers")
    expect(page.locator("#notes")).to_contain_text("ops")
    # filters: by scope, by type, by tag
    page.select_option("#filter-scope", "user")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(u)
    page.select_option("#filter-scope", "")
    expect(rows).to_have_count(2)
    page.select_option("#filter-tag", "ops")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(p)
    page.goto(f"{ui_server.base}/#/?type=user")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(u)
    screenshot(page, "list", tmp_path)
    # every API request carried the token in its header, none in its address
    assert watch.api_calls
    for url, header in watch.api_calls:
        assert header == f"Bearer {ui_server.token}", url
        assert ui_server.token not in url
    watch.check()


def test_without_a_token_the_page_says_to_open_the_printed_link(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    page.goto(ui_server.base + "/")
    expect(page.locator("#no-token")).to_contain_text("Open the link memdir ui printed")
    screenshot(page, "no-token", tmp_path)
    # a wrong token is told apart, and nothing is shown
    page.goto(ui_server.base + "/#token=not-the-token")
    page.reload()
    expect(page.locator("#no-token")).to_contain_text("not valid")
    watch.check()


def test_search_as_you_type_with_modes(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    memory = disk
    pg = _note(memory, "We moved the orders database to Postgres 16", "Upgraded in March.")
    _note(memory, "Postgres backups run nightly", "pg_dump at 02:00.", tags=["ops"])
    _note(memory, "The orders service is written in Go", "Go 1.22.")
    _open(page, ui_server)
    page.keyboard.press("/")
    expect(page.locator("#q")).to_be_focused()
    page.locator("#q").press_sequentially("postgres", delay=30)
    expect(page).to_have_url(re.compile(r"#/search\?q=postgres"))
    hits = page.locator("#hits li")
    # hybrid search may add notes near in meaning below them: the two named ones lead
    expect(hits.nth(1)).to_contain_text("Postgres")
    expect(hits.nth(0)).to_contain_text("Postgres")
    expect(page.locator("#q")).to_be_focused()  # typing was never interrupted
    expect(page.locator("#q")).to_have_value("postgres")
    page.locator("#q").press_sequentially(" orders")
    page.select_option("#mode", "all")
    expect(page).to_have_url(re.compile(r"q=postgres\+orders&mode=all"))
    expect(hits.first).to_contain_text("Postgres 16")
    page.select_option("#mode", "phrase")
    page.locator("#q").fill("orders database")
    expect(page).to_have_url(re.compile(r"q=orders\+database&mode=phrase"))
    expect(hits.first).to_contain_text("Postgres 16")
    expect(page.locator("#hit-count")).to_contain_text("found")
    screenshot(page, "search", tmp_path)
    # a new query replaces the results of the last one
    page.locator("#q").fill("backups run nightly")
    expect(page.locator("#page-title")).to_have_text("Search: backups run nightly")
    expect(hits.first).to_contain_text("Postgres backups run nightly")
    page.locator("#q").fill("orders database")
    expect(hits.first).to_contain_text("Postgres 16")
    # Enter on a hit opens it
    page.locator("#hits a").first.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#page-title")).to_have_text("We moved the orders database to Postgres 16")
    expect(page.locator(".meta")).to_contain_text(pg)
    watch.check()


# -- a note: links, backlinks, history -------------------------------------------------------


def test_a_note_with_links_backlinks_dangling_links_and_history(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    memory = disk
    target = _note(
        memory, "Release checklist", "1. tag\n2. build\n3. publish", id="release-checklist"
    )
    source = _note(
        memory,
        "How we release",
        "Follow [[release-checklist]] every time.\n\nSee also [[no-such-note]].",
        id="how-we-release",
    )
    memory.remember(
        "How we release",
        "Follow [[release-checklist]] every time, on Fridays.\n\nSee also [[no-such-note]].",
        id=source,
    )
    _open(page, ui_server)
    page.get_by_role("link", name="How we release").click()
    expect(page.locator("#page-title")).to_have_text("How we release")
    body = page.locator("#note-body")
    expect(body).to_contain_text("on Fridays")
    expect(body.locator("a.dangling")).to_have_count(1)
    expect(page.locator("#links li.dangling")).to_contain_text("no-such-note")
    # history with a diff between two revisions
    expect(page.locator("#history-title")).to_contain_text("History (2)")
    page.locator("#show-diff").click()
    expect(page.locator("#diff .add")).to_contain_text("on Fridays")
    expect(page.locator("#diff .del").first).to_be_visible()
    screenshot(page, "note", tmp_path)
    # follow the link, then the backlink back
    page.locator("#links").get_by_role("link", name="Release checklist").click()
    expect(page.locator("#page-title")).to_have_text("Release checklist")
    expect(page).to_have_url(re.compile(rf"#/note/{target}"))
    page.locator("#backlinks").get_by_role("link", name="How we release").click()
    expect(page.locator("#page-title")).to_have_text("How we release")
    # and the link inside the rendered body works as well
    page.locator("#note-body a:not(.dangling)").click()
    expect(page.locator("#page-title")).to_have_text("Release checklist")
    watch.check()


# -- editing ---------------------------------------------------------------------------------


def test_edit_and_save_then_a_new_note(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    memory = disk
    nid = _note(memory, "Staging resets on Mondays", "Data is wiped.", tags=["ops"])
    page.goto(ui_server.url)
    page.goto(f"{ui_server.base}/#/note/{nid}")
    page.locator("#edit").click()
    expect(page.locator("#summary")).to_have_value("Staging resets on Mondays")
    page.locator("#summary").fill("Staging resets every Monday at 06:00")
    page.locator("#tags").fill("ops, staging")
    page.locator("#body").fill("Data is wiped; fixtures are reloaded.")
    screenshot(page, "editor", tmp_path)
    page.locator("#save").click()
    expect(page.locator("#page-title")).to_have_text("Staging resets every Monday at 06:00")
    note = memory.read(nid)
    assert note.summary == "Staging resets every Monday at 06:00"
    assert note.body.strip() == "Data is wiped; fixtures are reloaded."
    assert set(note.tags) == {"ops", "staging"}
    # a new note, private, in the user scope
    page.get_by_role("link", name="New note").click()
    page.locator("#summary").fill("I like dark terminals")
    page.select_option("#type", "user")
    page.select_option("#scope", "user")
    page.locator("#body").fill("Solarized dark, see [[terminal-theme]].")
    page.locator("#private").check()
    page.locator("#save").click()
    expect(page.locator("#page-title")).to_have_text("I like dark terminals")
    expect(page.locator("#status")).to_contain_text("Links to no note: terminal-theme")
    (new,) = [n for n in memory.notes.list(scope="user") if n.summary == "I like dark terminals"]
    assert new.private
    watch.check()


def test_a_guard_refusal_keeps_the_form_and_never_shows_the_secret(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    memory = disk
    nid = _note(memory, "CI deploy credentials", "They live in the vault.")
    page.goto(ui_server.url)
    page.goto(f"{ui_server.base}/#/note/{nid}/edit")
    body = page.locator("#body")
    expect(body).to_have_value("They live in the vault.")
    typed = f"They live in the vault.\nAWS key: {FAKE_KEY}"
    body.fill(typed)
    page.locator("#save").click()
    problem = page.locator("#save-problem [role=alert]")
    expect(problem).to_be_visible()
    expect(problem).to_contain_text("not saved")
    expect(body).to_have_value(typed)  # the form is kept, to fix and save again
    screenshot(page, "guard-refusal", tmp_path)
    assert FAKE_KEY not in page.locator("body").inner_text()
    assert FAKE_KEY not in page.content()
    assert FAKE_KEY not in problem.inner_text()
    assert memory.read(nid).body.strip() == "They live in the vault."
    body.fill("They live in the vault (ask ops).")
    page.locator("#save").click()
    expect(page.locator("#note-body")).to_contain_text("ask ops")
    assert FAKE_KEY not in page.content()
    watch.check()


def test_a_stale_edit_shows_both_versions_and_never_overwrites_silently(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    memory = disk
    nid = _note(memory, "Cache TTL", "The cache keeps entries 5 minutes.", id="cache-ttl")
    page.goto(ui_server.url)
    page.goto(f"{ui_server.base}/#/note/{nid}/edit")
    body = page.locator("#body")
    expect(body).to_have_value("The cache keeps entries 5 minutes.")
    body.fill("The cache keeps entries 10 minutes.")
    # someone else (an agent, another tab) changes the note meanwhile
    memory.remember("Cache TTL", "The cache keeps entries 15 minutes.", id=nid)
    expect(page.locator("#changed-banner")).to_contain_text("changed since you opened it")
    expect(body).to_have_value("The cache keeps entries 10 minutes.")  # the text survives
    page.locator("#save").click()
    expect(page.locator("#stale-mine")).to_contain_text("10 minutes")
    expect(page.locator("#stale-theirs")).to_contain_text("15 minutes")
    screenshot(page, "stale-edit", tmp_path)
    assert "15 minutes" in memory.read(nid).body  # nothing was overwritten
    # take theirs: the form holds the current version, nothing is written
    page.locator("#take-theirs").click()
    expect(body).to_have_value(re.compile("15 minutes"))
    expect(page.locator("#stale-mine")).to_have_count(0)
    # then edit on top of it, and another change comes in: keep mine
    body.fill("The cache keeps entries 20 minutes.")
    memory.remember("Cache TTL", "The cache keeps entries 25 minutes.", id=nid)
    page.locator("#save").click()
    expect(page.locator("#stale-theirs")).to_contain_text("25 minutes")
    page.locator("#keep-mine").click()
    expect(page.locator("#page-title")).to_have_text("Cache TTL")
    expect(page.locator("#note-body")).to_contain_text("20 minutes")
    assert "20 minutes" in memory.read(nid).body
    watch.check()


def test_the_page_follows_changes_made_elsewhere_without_a_reload(
    page: Page, watch: Watch, ui_server: Any, disk: Memory
) -> None:
    memory = disk
    nid = _note(memory, "Feature flags live in LaunchDarkly", "All of them.")
    _open(page, ui_server)
    page.evaluate("() => { window.__sameDocument = true; }")
    rows = page.locator("#notes tbody tr")
    expect(rows).to_have_count(1)
    other = _note(memory, "On-call rotates weekly", "Mondays at 10:00.")
    expect(rows).to_have_count(2)
    page.goto(f"{ui_server.base}/#/note/{nid}")
    expect(page.locator("#note-body")).to_contain_text("All of them.")
    memory.remember("Feature flags live in LaunchDarkly", "All of them, since 2023.", id=nid)
    expect(page.locator("#note-body")).to_contain_text("since 2023")
    memory.forget(other)
    page.get_by_role("link", name="Notes", exact=True).click()
    expect(rows).to_have_count(1)
    assert page.evaluate("() => window.__sameDocument") is True  # never reloaded
    watch.check()


def test_forget_shows_its_plan_and_asks_first(
    page: Page, watch: Watch, ui_server: Any, disk: Memory
) -> None:
    memory = disk
    nid = _note(memory, "Old VPN instructions", "Use the legacy client.")
    page.goto(ui_server.url)
    page.goto(f"{ui_server.base}/#/note/{nid}")
    page.locator("#forget").click()
    dialog = page.locator("#dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#forget-plan")).to_contain_text(nid)
    page.keyboard.press("Escape")  # Escape closes the dialog, nothing forgotten
    expect(dialog).to_be_hidden()
    assert memory.read(nid).summary == "Old VPN instructions"
    page.locator("#forget").click()
    page.locator("#forget-confirm").click()
    expect(page.locator("#status")).to_contain_text(f"Forgot {nid}")
    assert all(n.id != nid for n in memory.notes.list())
    watch.check()


# -- tidy-up, backups --------------------------------------------------------------------------


def test_merge_a_same_topic_finding_and_dismiss_another(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    memory = disk
    ids = sorted(
        [
            _note(memory, "Use pnpm for package management", "pnpm only.", tags=["tooling"]),
            _note(memory, "Package management uses pnpm", "Not npm.", tags=["tooling"]),
        ]
    )
    a = _note(memory, "Deploy timeout is 30 seconds", "The deploy step times out after 30 s.")
    b = _note(memory, "Deploy timeout is 60 seconds", "The deploy step times out after 60 s.")
    page.goto(ui_server.url)
    page.get_by_role("link", name="Tidy up").click()
    same = page.locator(".finding.kind-same_topic")
    expect(same).to_have_count(1)
    contradiction = page.locator(".finding.kind-contradiction")
    expect(contradiction).to_have_count(1)
    expect(contradiction.locator(".supersede")).to_have_count(2)
    screenshot(page, "tidy", tmp_path)
    same.locator(".merge").click()
    summary = same.locator(".merge-summary")
    expect(summary).to_be_visible()
    expect(same.locator(".merge-body")).to_have_value(re.compile("pnpm only"))
    summary.fill("We use pnpm, never npm")
    screenshot(page, "tidy-merge", tmp_path)
    same.locator(".apply-merge").click()
    expect(page.locator("#page-title")).to_have_text("We use pnpm, never npm")
    left = {n.id for n in memory.notes.list()}
    assert ids[0] in left or ids[1] in left
    assert not {ids[0], ids[1]} <= left  # one of them was merged away
    # the contradiction: one supersedes the other
    page.get_by_role("link", name="Tidy up").click()
    expect(page.locator(".finding.kind-same_topic")).to_have_count(0)
    page.locator(".finding.kind-contradiction .supersede", has_text=f"{b} supersedes {a}").click()
    expect(page.locator(".finding.kind-contradiction")).to_have_count(0)
    assert a in memory.read(b).supersedes
    watch.check()


def test_a_merge_draft_is_refused_when_a_note_changed_since(
    page: Page, watch: Watch, ui_server: Any, disk: Memory
) -> None:
    memory = disk
    first = _note(memory, "Deploy uses blue green", "Deploys go blue/green.", tags=["deploy"])
    second = _note(memory, "Deploy is blue green", "We deploy blue/green.", tags=["deploy"])
    page.goto(ui_server.url)
    page.goto(f"{ui_server.base}/#/tidy")
    same = page.locator(".finding.kind-same_topic")
    same.locator(".merge").click()
    body = same.locator(".merge-body")
    expect(body).to_have_value(re.compile("blue/green"))
    # an agent adds a fact to one of the notes after the draft was shown
    memory.remember("Deploy is blue green", "We deploy blue/green. Rollback: flip back.", id=second)
    body.fill(body.input_value() + "\nEdited.")
    same.locator(".apply-merge").click()
    expect(same.locator("[role=alert]")).to_contain_text("a note changed since this draft")
    assert {first, second} <= {n.id for n in memory.notes.list()}  # nothing merged away
    same.locator(".redraft").click()
    expect(same.locator(".merge-body")).to_have_value(re.compile("Rollback: flip back"))
    same.locator(".apply-merge").click()
    expect(page.locator("#note-body")).to_contain_text("Rollback: flip back")
    watch.check()


def test_dismiss_a_finding(page: Page, watch: Watch, ui_server: Any, disk: Memory) -> None:
    memory = disk
    _note(memory, "Lint with ruff in CI", "ruff check.", tags=["lint"])
    _note(memory, "CI lints with ruff", "and ruff format.", tags=["lint"])
    page.goto(ui_server.url)
    page.goto(f"{ui_server.base}/#/tidy")
    found = page.locator(".finding.kind-same_topic")
    expect(found).to_have_count(1)
    found.locator(".dismiss").click()
    expect(found).to_have_count(0)
    page.reload()
    expect(page.locator("#page-title")).to_have_text("Tidy up")
    expect(page.locator(".finding.kind-same_topic")).to_have_count(0)
    watch.check()


def test_restore_a_backup(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    memory = disk
    nid = _note(memory, "Office wifi password rotates monthly", "Ask reception.")
    memory.forget(nid)
    assert all(n.id != nid for n in memory.notes.list())
    page.goto(ui_server.url)
    page.get_by_role("link", name="Backups").click()
    row = page.locator("#backups tbody tr", has_text=nid)
    expect(row.first).to_be_visible()
    screenshot(page, "backups", tmp_path)
    row.first.locator(".restore").click()
    page.locator("#restore-confirm").click()
    expect(page.locator("#backup-result")).to_contain_text(f"Restored {nid}")
    assert memory.read(nid).summary == "Office wifi password rotates monthly"
    page.locator("#backup-result a").click()
    expect(page.locator("#page-title")).to_have_text("Office wifi password rotates monthly")
    watch.check()


# -- sync: the switch, sync now, a real conflict -----------------------------------------------


@pytest.fixture
def sync_world(ui_server: Any, tmp_path: Path) -> Iterator[Callable[[], Memory]]:
    """A sync server on loopback with one account; `ui_server.memory` signed in, and a
    factory for the other machine (its own home and project, signed in too)."""
    from sync_server import add_user, running_server

    data = tmp_path / "sync-data"
    data.mkdir()
    token = add_user(data, "alice")
    others: list[Memory] = []
    with running_server(data) as server:
        ui_server.memory.sync.login(server.url, token)

        def other() -> Memory:
            home = tmp_path / f"home-other-{len(others)}"
            project = tmp_path / f"project-other-{len(others)}"
            home.mkdir()
            project.mkdir()
            (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
            machine = Memory.open(project, home=home)
            machine.sync.login(server.url, token)
            others.append(machine)
            return machine

        try:
            yield other
        finally:
            for machine in others:
                machine.close()


def _set_body(memory: Memory, nid: str, body: str) -> None:
    note = memory.read(nid)
    memory.remember(note.summary, body, id=nid, scope="user")


def test_a_real_sync_conflict_resolved_in_the_conflict_view(
    page: Page,
    watch: Watch,
    ui_server: Any,
    disk: Memory,
    sync_world: Callable[[], Memory],
    tmp_path: Path,
) -> None:
    here = ui_server.memory
    there = sync_world()
    base = "Editor settings:\ntabs are 4 spaces\nformat on save"
    keep = _note(here, "Editor settings", base, scope="user", type="user", id="editor-settings")
    by_hand = _note(
        here,
        "Shell settings",
        "Shell:\nzsh with starship\nno aliases",
        scope="user",
        type="user",
        id="shell-settings",
    )
    here.sync.run()
    there.sync.run()
    assert {n.id for n in there.notes.list(scope="user")} >= {keep, by_hand}
    _set_body(here, keep, "Editor settings:\ntabs are 2 spaces\nformat on save")
    _set_body(there, keep, "Editor settings:\ntabs are 8 spaces\nformat on save")
    _set_body(here, by_hand, "Shell:\nfish\nno aliases")
    _set_body(there, by_hand, "Shell:\nbash\nno aliases")
    there.sync.run()
    page.goto(ui_server.url)
    page.get_by_role("link", name="Sync", exact=True).click()
    switch = page.locator("#sync-switch")
    expect(switch).to_have_attribute("aria-checked", "true")
    page.locator("#sync-now").click()
    expect(page.locator("#sync-result")).to_contain_text("2 conflicts")
    expect(page.locator("#sync-scopes tr[data-scope=user]")).to_contain_text("2")
    screenshot(page, "sync", tmp_path)
    page.get_by_role("link", name="Conflicts").click()
    items = page.locator("#conflicts .conflict")
    expect(items).to_have_count(2)
    editor = page.locator(f".conflict[data-conflict={keep}]")
    expect(editor.locator(".baseline")).to_contain_text("4 spaces")
    expect(editor.locator(".local")).to_contain_text("2 spaces")
    expect(editor.locator(".server")).to_contain_text("8 spaces")
    screenshot(page, "conflicts", tmp_path)
    editor.locator(".keep-local").click()
    expect(page.locator("#conflict-result")).to_contain_text(f"Resolved {keep}")
    expect(editor).to_have_count(0)
    shell = page.locator(f".conflict[data-conflict={by_hand}]")
    shell.get_by_text("Merge by hand").click()
    text = shell.locator(".hand-merge")
    expect(text).to_have_value(re.compile("fish"))
    local = shell.locator(".local pre").inner_text()
    text.fill(local.replace("fish", "fish, or bash on servers"))
    shell.locator(".save-merge").click()
    expect(page.locator("#conflict-result")).to_contain_text(f"Resolved {by_hand}")
    expect(items).to_have_count(0)
    assert disk.sync.conflicts() == []
    assert "2 spaces" in disk.read(keep).body
    assert "fish, or bash on servers" in disk.read(by_hand).body
    # both settle through the server
    disk.sync.run()
    there.sync.run()
    assert "fish, or bash on servers" in there.read(by_hand).body
    assert "2 spaces" in there.read(keep).body
    watch.check()


def test_the_sync_switch_turns_sync_off_and_on(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, sync_world: Callable[[], Memory]
) -> None:
    page.goto(ui_server.url)
    page.goto(f"{ui_server.base}/#/sync")
    switch = page.locator("#sync-switch")
    expect(switch).to_have_attribute("aria-checked", "true")
    switch.click()
    expect(switch).to_have_attribute("aria-checked", "false")
    expect(page.locator("#sync-now")).to_be_disabled()
    assert disk.sync.status().enabled is False
    switch.click()
    expect(switch).to_have_attribute("aria-checked", "true")
    assert disk.sync.status().enabled is True
    page.locator("#sync-now").click()
    expect(page.locator("#sync-result li").first).to_be_visible()
    watch.check()


def test_sync_now_without_a_server_says_how_to_sign_in(
    page: Page, watch: Watch, ui_server: Any
) -> None:
    page.goto(ui_server.url)
    page.goto(f"{ui_server.base}/#/sync")
    expect(page.locator("main")).to_contain_text("Not signed in")
    switch = page.locator("#sync-switch")
    expect(switch).to_have_attribute("aria-checked", re.compile("true|false"))
    if switch.get_attribute("aria-checked") == "false":
        switch.click()
        expect(switch).to_have_attribute("aria-checked", "true")
    page.locator("#sync-now").click()
    problem = page.locator("#sync-result [role=alert]")
    expect(problem).to_contain_text("sync failed")
    expect(problem.locator(".remedy")).to_contain_text("memdir sync login")
    watch.check()


def test_the_team_section_lists_members_and_adds_and_removes_one(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    from sync_server import add_user, running_server

    data = tmp_path / "team-data"
    data.mkdir()
    token = add_user(data, "alice")
    add_user(data, "bob")
    with running_server(data) as server:
        memory = ui_server.memory
        memory.sync.login(server.url, token)
        memory.sync.team_create("acme")
        memory.sync.team_link("acme")
        page.goto(ui_server.url)
        page.goto(f"{ui_server.base}/#/sync")
        members = page.locator("#team-members")
        expect(members).to_contain_text("alice")
        expect(page.locator("#team")).to_contain_text("you are owner")
        page.fill("#team-member", "bob")
        page.select_option("#team-role", "reader")
        page.locator("#team-add button[type=submit]").click()
        expect(page.locator('#team-members tr[data-member="bob"]')).to_contain_text("reader")
        assert disk.sync.team("acme").members == {"alice": "owner", "bob": "reader"}
        page.fill("#team-member", "ghost")
        page.locator("#team-add button[type=submit]").click()
        expect(page.locator("#team-result [role=alert]")).to_contain_text("no account")
        page.locator('button[aria-label="Remove bob"]').click()
        expect(page.locator('#team-members tr[data-member="bob"]')).to_have_count(0)
        assert disk.sync.team("acme").members == {"alice": "owner"}
        watch.check()


def test_an_encrypted_teams_section_shows_its_key_epoch_and_fingerprints(
    page: Page, watch: Watch, ui_server: Any, tmp_path: Path, runtime: Path
) -> None:
    from memdir.core import Scope
    from sync_server import add_user, running_server

    data = tmp_path / "vault-data"
    data.mkdir()
    token = add_user(data, "alice")
    with running_server(data) as server:
        memory = ui_server.memory
        memory.sync.login(server.url, token)
        memory.crypto.encrypt(b"correct horse battery staple", [Scope.USER])
        made = memory.sync.team_create("vault", encrypted=True)
        memory.sync.team_link("vault")
        assert made.keys is not None
        page.goto(ui_server.url)
        page.goto(f"{ui_server.base}/#/sync")
        keys = page.locator("#team-keys")
        expect(keys).to_contain_text("End-to-end encrypted")
        expect(keys).to_contain_text("key epoch 1")
        keys.locator("summary").click()
        row = keys.locator('li[data-member="alice"]')
        expect(row).to_contain_text(re.compile(r"key ([0-9a-f]{4} ){7}[0-9a-f]{4}"))
        expect(row).not_to_contain_text("waiting")
        assert made.keys.epochs[0].wraps["alice"].box not in page.content()
        watch.check()


# -- hostile notes, keyboard, narrow and dark ----------------------------------------------------

HOSTILE = {
    "script": "<script>window.__pwned = 'script'</script>\n\nplain text after",
    "img": "<img src=x onerror=\"window.__pwned = 'img'\">\n\n![x](http://evil.example/x.png)",
    "js-link": "[click me](javascript:window.__pwned='js')\n\n[upper](JAVASCRIPT:alert(1))",
    "entity-link": "[sneaky](&#106;avascript:window.__pwned='entity')",
    "data-link": "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "autolink": "<javascript:window.__pwned='auto'> and <data:text/html,hi>",
    "reference": "[ref][1]\n\n[1]: javascript:window.__pwned='ref'",
    "raw-anchor": '<a href="javascript:window.__pwned=1">raw</a> <iframe src="http://evil.example">',
    "wiki-trick": '[[x" onmouseover="window.__pwned=1]] and [x](#/note/ok" onclick="alert(1))',
    "svg": "<svg onload=\"window.__pwned='svg'\"></svg><style>body{display:none}</style>",
}


def test_hostile_notes_render_inert(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    memory = disk
    ids = {}
    for name, body in HOSTILE.items():
        ids[name] = _note(
            memory,
            f"hostile {name} <img src=x onerror=\"window.__pwned='summary'\">",
            body,
            tags=["<b>tag</b>"],
            id=f"hostile-{name}",
        )
    page.goto(ui_server.url)
    expect(page.locator("#notes tbody tr")).to_have_count(len(HOSTILE))
    expect(page.locator("#notes")).to_contain_text("<img src=x onerror=")  # shown as text
    page.locator("#q").press_sequentially("hostile")
    expect(page.locator("#hits li").first).to_be_visible()
    for name, nid in ids.items():
        page.goto(f"{ui_server.base}/#/note/{nid}")
        body = page.locator("#note-body")
        expect(body).to_be_visible()
        expect(page.locator("#page-title")).to_contain_text(f"hostile {name}")
        found = page.evaluate(
            """() => {
                const bad = [];
                for (const el of document.querySelectorAll('#note-body *')) {
                    if (!['P','A','EM','STRONG','CODE','PRE','UL','OL','LI','BR','H1','H2',
                          'H3','H4','H5','H6','BLOCKQUOTE','HR','SPAN'].includes(el.tagName))
                        bad.push(el.tagName);
                    for (const attr of el.attributes) {
                        if (/^on/i.test(attr.name) || attr.name === 'style') bad.push(attr.name);
                    }
                    if (el.tagName === 'A') {
                        const href = el.getAttribute('href') || '';
                        if (!/^(https?:|mailto:|#\\/note\\/)/i.test(href)) bad.push(href);
                    }
                }
                return bad;
            }"""
        )
        assert found == [], (name, found)
        # hover and click every in-page link the body made: nothing runs
        links = body.locator("a[href^='#']")
        for i in range(links.count()):
            links.nth(i).hover()
        for anchor in body.locator("a").all():
            href = anchor.get_attribute("href") or ""
            if href.startswith("#"):
                anchor.click()
                expect(page.locator("#page-title")).to_be_visible()
                break
        watch.check()
    page.goto(f"{ui_server.base}/#/note/{ids['img']}")
    expect(page.locator("#note-body")).to_be_visible()
    screenshot(page, "hostile", tmp_path)
    assert "evil.example" not in " ".join(watch.requests)
    watch.check()


def test_keyboard_narrow_window_and_dark_mode(
    browser: Browser, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    memory = disk
    _note(memory, "Deploys need two approvals", "Ask in the ops channel.", tags=["ops"])
    target = _note(memory, "Use UTC in every log line", "ISO 8601 with Z.", tags=["logging"])
    context = browser.new_context(viewport={"width": 380, "height": 760}, color_scheme="dark")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    watch = Watch(page)
    try:
        page.goto(ui_server.url)
        expect(page.locator("#notes")).to_be_visible()
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 1, f"the page scrolls sideways by {overflow}px at 380px"
        background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(22, 24, 27)", background  # the dark palette
        # Tab reaches the links; Enter opens one
        for _ in range(40):
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.textContent") == (
                "Use UTC in every log line"
            ):
                break
        else:
            pytest.fail("Tab never reached the note's link")
        page.keyboard.press("Enter")
        expect(page.locator("#page-title")).to_have_text("Use UTC in every log line")
        expect(page.locator(".meta")).to_contain_text(target)
        screenshot(page, "narrow-dark-note", tmp_path)
        page.keyboard.press("/")
        expect(page.locator("#q")).to_be_focused()
        page.keyboard.press("Escape")
        expect(page.locator("#q")).not_to_be_focused()
        page.goto(f"{ui_server.base}/#/")
        expect(page.locator("#notes")).to_be_visible()
        screenshot(page, "narrow-dark-list", tmp_path)
        # Escape closes a dialog
        page.goto(f"{ui_server.base}/#/note/{target}")
        page.locator("#forget").focus()
        page.keyboard.press("Enter")
        expect(page.locator("#dialog")).to_be_visible()
        page.keyboard.press("Escape")
        expect(page.locator("#dialog")).to_be_hidden()
        watch.check()
    finally:
        context.close()


def test_readme_screenshot(
    page: Page, watch: Watch, ui_server: Any, disk: Memory, tmp_path: Path
) -> None:
    """A realistic small store for the README's picture (`docs/ui.png` is copied from it)."""
    memory = disk
    _note(
        memory,
        "Release checklist",
        "1. Tag\n2. Build wheels\n3. Publish",
        type="project",
        tags=["release"],
        id="release-checklist",
    )
    _note(
        memory,
        "How we release",
        "Follow [[release-checklist]] every Friday.",
        type="project",
        tags=["release", "process"],
        id="how-we-release",
    )
    _note(
        memory,
        "Deploys need two approvals",
        "Ask in #ops; one must be on-call.",
        type="project",
        tags=["ops"],
    )
    _note(
        memory,
        "Orders database is Postgres 16",
        "Upgraded in March; pg_dump nightly.",
        type="reference",
        tags=["database", "ops"],
    )
    _note(
        memory,
        "Never mock the database in integration tests",
        "We got burned when mocks passed and the migration failed.",
        type="feedback",
        tags=["testing"],
    )
    _note(
        memory,
        "Prefers short answers without preamble",
        "Bullets over prose.",
        type="user",
        scope="user",
        tags=["style"],
    )
    _note(
        memory,
        "Uses fish shell and Helix",
        "Show commands for fish.",
        type="user",
        scope="user",
        tags=["tools"],
    )
    page.goto(ui_server.url)
    expect(page.locator("#notes tbody tr")).to_have_count(7)
    out = screenshot(page, "readme", tmp_path, full_page=False)
    assert out.stat().st_size > 10_000
    watch.check()


def test_without_a_browser_the_tests_skip_or_fail_when_one_is_required(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import browser as helper

    monkeypatch.setattr(helper, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.delenv("MEMDIR_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no-chromium is missing"):
        helper.require_browser()
    monkeypatch.setenv("MEMDIR_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="MEMDIR_REQUIRE_BROWSER=1"):
        helper.require_browser()
