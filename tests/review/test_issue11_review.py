"""Hostile review of the merge and automatic-consolidation code of issue 11 (§6, §7.3).

Every test here is a bug, proven: it fails today (xfail strict) for the reason it names.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memdir import Memory
from memdir.config import load_settings
from memdir.errors import InvalidInput, MemdirError


class Clock:
    """A fake clock (Unix ms) that moves one second on every reading."""

    def __init__(self, start: int = 1_790_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        self.now += 1000
        return self.now


def open_memory(project: Path | None, home: Path, clock: Callable[[], int] | None = None) -> Memory:
    settings = load_settings(home=home, project_root=project)
    return Memory(settings, clock=clock or Clock())


@pytest.fixture
def memory(project: Path, home: Path) -> Iterator[Memory]:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    m = open_memory(project, home)
    try:
        yield m
    finally:
        m.close()


def live_text(memory: Memory) -> str:
    """The text of every note file in the project directory."""
    return "\n".join(
        p.read_text("utf-8") for p in sorted(memory.stores.directory("project").glob("*.md"))
    )


# -- 1. a body given to the merge is not relinked ------------------------------------------


def test_a_given_body_linking_a_deleted_note_is_relinked(memory: Memory) -> None:
    a = memory.remember("Use pnpm for packages", "pnpm only.", id="pnpm-a").note.id
    b = memory.remember("Packages use pnpm", "Not npm.", id="pnpm-b").note.id
    result = memory.merges.merge([a, b], body="pnpm only; see also [[pnpm-b]].")
    assert result.deleted == (b,)
    body = memory.read(a).body
    assert f"[[{b}]]" not in body, body  # a link to the note this merge deleted


# -- 2. the plan file's "source" goes into the audit log unchecked --------------------------

FAKE_TOKEN = "ghp_" + "R8xK2mQ9vL4tZ7pW1nB6cY3hJ5dF0sA2eG8u"


def test_a_plan_files_source_never_reaches_the_audit_log(memory: Memory, home: Path) -> None:
    from memdir.tidy.merge import plan_from_json, plan_to_json

    a = memory.remember("Use pnpm for packages", "pnpm only.", id="pnpm-a").note.id
    b = memory.remember("Packages use pnpm", "Not npm.", id="pnpm-b").note.id
    data = plan_to_json(memory.merges.plan([a, b]))
    data["source"] = FAKE_TOKEN  # what a person (or a script) may leave in the file
    with pytest.raises(InvalidInput, match="source must be one of"):
        memory.merges.apply(plan_from_json(data))
    data["source"] = "auto"  # the background pass's alone
    with pytest.raises(InvalidInput, match="source must be one of"):
        plan_from_json(data)
    data["source"] = "edited"
    memory.merges.apply(plan_from_json(data))
    texts = [p.read_text("utf-8") for p in home.rglob("audit.jsonl")]
    assert texts
    assert not any(FAKE_TOKEN in t for t in texts), "the secret is in the audit log"


# -- 3. merging ignores who supersedes the merged notes ------------------------------------


def test_a_live_note_merged_into_a_superseded_note_stays_live(memory: Memory) -> None:
    old = memory.remember("Deploys run on Fridays", "Deploy on Fridays.", id="deploy-old").note.id
    live = memory.remember(
        "Deploys need the zebra ticket", "Every deploy needs a zebra ticket.", id="deploy-live"
    ).note.id
    memory.remember(
        "Deploys run on Mondays", "Deploy on Mondays now.", id="deploy-new", supersedes=[old]
    )
    try:
        result = memory.merges.merge([old, live])  # `old` is the oldest: its id is kept
    except MemdirError:
        return  # refusing is a fix too
    holder = result.kept
    assert "zebra ticket" in memory.read(holder).body
    hits = memory.search("zebra ticket")
    mine = [h for h in hits if h.note_id == holder]
    assert mine and mine[0].superseded_by is None, (
        f"the live text now sits in {holder}, superseded by "
        f"{mine[0].superseded_by if mine else '?'}"
    )


def test_a_superseded_note_merged_into_a_live_one_does_not_come_back(memory: Memory) -> None:
    keep = memory.remember("Deploy notes", "Deploys go through staging.", id="deploy-keep").note.id
    stale = memory.remember("Deploy day", "Deploy on Fridays only.", id="deploy-stale").note.id
    newer = memory.remember(
        "Deploy day changed", "Deploy on Mondays only.", id="deploy-day", supersedes=[stale]
    ).note.id
    try:
        result = memory.merges.merge([keep, stale])
    except MemdirError:
        return  # refusing is a fix too
    assert result.kept == keep
    supersedes = memory.read(newer).supersedes
    live_with_fridays = [
        h.note_id
        for h in memory.search("Fridays")
        if h.superseded_by is None and h.note_id != newer
    ]
    assert not live_with_fridays and stale not in supersedes, (live_with_fridays, supersedes)


# -- 4. the automatic pass: dismissals and the cooldown state ------------------------------

HOUR_MS = 3_600_000
AUTO = '[embed]\nprovider = "none"\n[memory.consolidate]\nauto = true\n'


class StillClock:
    """A fake clock (Unix ms) that stands still unless moved."""

    def __init__(self, start: int = 1_790_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance(self, hours: float) -> None:
        self.now += int(hours * HOUR_MS)


@pytest.fixture
def auto_memory(project: Path, home: Path) -> Iterator[tuple[Memory, StillClock]]:
    (home / "config.toml").write_text(AUTO)
    clock = StillClock()
    m = open_memory(project, home, clock)
    try:
        yield m, clock
    finally:
        m.close()


def _pair(memory: Memory, clock: StillClock) -> tuple[str, str]:
    from memdir.core.vocab import FindingKind

    clock.advance(1 / 3600)
    a = memory.remember("Use pnpm for package management", "pnpm only.").note.id
    clock.advance(1 / 3600)
    b = memory.remember("Package management uses pnpm", "Not npm.").note.id
    found = [f for f in memory.tidy.findings([FindingKind.SAME_TOPIC]) if set(f.notes) == {a, b}]
    assert found
    return a, b


def test_a_damaged_dismissals_file_does_not_let_the_pass_merge_dismissed_groups(
    auto_memory: tuple[Memory, StillClock], home: Path
) -> None:
    from memdir.core.vocab import FindingKind

    memory, clock = auto_memory
    a, b = _pair(memory, clock)
    finding = next(
        f for f in memory.tidy.findings([FindingKind.SAME_TOPIC]) if set(f.notes) == {a, b}
    )
    memory.tidy.dismiss(finding.id)  # "do not merge these"
    path = home / "tidy" / "dismissed.json"
    # A torn write by another tool, a bad hand edit, a disk error: the file is garbage.
    path.write_text(path.read_text("utf-8")[:-7])
    try:
        report = memory.consolidation.run(force=True)
    except MemdirError:
        return  # a clear error is a fix
    merged = {r.kept for r in report.merged} | {d for r in report.merged for d in r.deleted}
    assert not ({a, b} & merged), "the dismissed pair was merged"


def test_a_clock_that_went_back_does_not_stop_the_pass_for_a_year(
    auto_memory: tuple[Memory, StillClock],
) -> None:
    memory, clock = auto_memory
    _pair(memory, clock)
    clock.advance(24 * 365)  # the clock ran a year ahead (a bad RTC, a VM restore) ...
    assert memory.consolidation.run().ran
    clock.advance(-24 * 365)  # ... and was set right
    clock.advance(25)  # more than cooldownHours (24) later
    _pair_again(memory, clock)
    report = memory.consolidation.run()
    assert report.ran, report.reason


def _pair_again(memory: Memory, clock: StillClock) -> tuple[str, str]:
    clock.advance(1 / 3600)
    a = memory.remember("Deploy the api with helm charts", "helm.").note.id
    clock.advance(1 / 3600)
    b = memory.remember("Helm charts deploy the api", "Charts in ops/.").note.id
    return a, b


# -- 5. MCP: the confirmed merge is not the plan the user agreed to -------------------------


def test_mcp_merge_confirm_refuses_notes_changed_since_the_plan(memory: Memory) -> None:
    from memdir.core import AccessLevel
    from memdir.mcp.access import CURRENT, Access
    from memdir.mcp.tools import MemoryTools

    a = memory.remember(
        "Staging deploys run through the blue cluster", "Needs a ticket.", id="blue-a"
    ).note.id
    b = memory.remember(
        "Staging deploys go via the blue cluster", "Rollbacks use old tags.", id="blue-b"
    ).note.id
    tools = MemoryTools(memory)
    token = CURRENT.set(Access(AccessLevel.READ_WRITE_DELETE, "both", True, None))
    try:
        body = "Needs a ticket. Rollbacks use old tags."  # the agent's body, shown to the user
        plan = tools.memory_merge(ids=[a, b], confirm=False, body=body).model_dump()
        assert plan["applied"] is False
        # The user (or another agent) adds a fact to b before the agent confirms.
        memory.remember(
            "Staging deploys go via the blue cluster",
            "Rollbacks use old tags. NEVER on Fridays.",
            id=b,
        )
        try:
            tools.memory_merge(ids=[a, b], confirm=True, body=body)
        except MemdirError:
            return  # refused: the fix
    finally:
        CURRENT.reset(token)
    assert "NEVER on Fridays" in live_text(memory), "the edit made after the plan is gone"


# -- 6. a merge killed part-way (a crash, the host exiting under the daemon thread) ---------

_CRASH = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from memdir import Memory
    from memdir.config import load_settings
    from memdir.store.notedir import NoteDirectory

    project, home = Path(sys.argv[1]), Path(sys.argv[2])
    memory = Memory(load_settings(home=home, project_root=project))
    a = memory.remember("Use pnpm for packages", "pnpm only.", id="pnpm-a").note.id
    b = memory.remember("Packages use pnpm", "ONLY-IN-B: pin pnpm 9.", id="pnpm-b").note.id
    plan = memory.merges.plan([a, b])
    real = NoteDirectory.write_bytes

    def write_bytes(self, note_id, data, **kw):
        if note_id == a:
            os._exit(9)  # the process dies here: power loss, SIGKILL, interpreter exit
        return real(self, note_id, data, **kw)

    NoteDirectory.write_bytes = write_bytes
    memory.merges.apply(plan)
    """
)


def test_a_merge_killed_part_way_loses_no_note(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    run = subprocess.run(
        [sys.executable, "-c", _CRASH, str(project), str(home)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 9, run.stderr
    m = open_memory(project, home)
    try:
        ids = {n.id for n in m.notes.list()}
        text = "\n".join(m.read(i).body for i in ids)
    finally:
        m.close()
    assert "ONLY-IN-B" in text, f"notes now: {sorted(ids)}; B's text is in no note"


# -- 7. AutoConsolidator.stop does not stop a pass -----------------------------------------


def test_stop_leaves_no_merge_running_after_it_returns(
    auto_memory: tuple[Memory, StillClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.memory.merging import Merging

    memory, clock = auto_memory
    _pair(memory, clock)
    _pair_again(memory, clock)
    clock.advance(1 / 3600)
    memory.remember("Release notes go to the blog every Friday", "Friday.")
    clock.advance(1 / 3600)
    memory.remember("The blog gets release notes every Friday", "Blog.")
    real = Merging.apply
    started: list[float] = []
    running = threading.Event()

    def slow_apply(self: Merging, plan: Any) -> Any:
        started.append(time.monotonic())
        running.set()
        time.sleep(0.6)  # a large scope, a slow disk, a sync server round trip
        return real(self, plan)

    monkeypatch.setattr(Merging, "apply", slow_apply)
    worker = memory.consolidation.background(first_delay=0.01, check_every=60)
    assert worker is not None
    worker.start()
    assert running.wait(20)
    worker.stop()  # the host is shutting down: stop waits for the merge under way
    stopped = time.monotonic()
    alive = worker._thread.is_alive()
    worker._thread.join(30)
    later = [t for t in started if t > stopped]
    assert not alive and not later, f"alive after stop: {alive}; merges begun after: {len(later)}"


# -- 8. with sync on: the commit-first path ------------------------------------------------


@contextlib.contextmanager
def signed_in(tmp_path: Path, *server_args: str) -> Iterator[tuple[Memory, Path]]:
    """A machine (user notes only) signed in to a fresh loopback sync server."""
    from sync_server import add_user, running_server

    data = tmp_path / "srv"
    data.mkdir()
    token = add_user(data, "alice")
    with running_server(data, extra_args=["--rate-limit", "0", *server_args]) as server:
        home = tmp_path / "home-a"
        home.mkdir()
        (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
        m = open_memory(None, home)
        try:
            m.sync.login(server.url, token)
            yield m, data
        finally:
            m.close()


def _user_pair(m: Memory) -> tuple[str, str]:
    # The kept note (oldest) sorts after the deleted one: the batch removes that first.
    keep = m.remember("Terse answers please", "Short.", scope="user", id="zz-terse").note.id
    gone = m.remember("Answers short and terse", "No fluff.", scope="user", id="aa-terse").note.id
    m.remember("Style", "See [[aa-terse]].", scope="user", id="style-c")
    return keep, gone


def _edit_after_the_server_accepted(
    monkeypatch: pytest.MonkeyPatch, m: Memory, note_id: str, old: bytes, new: bytes
) -> None:
    import memdir.sync.batch as batch

    real = batch._write_here

    def write_here(*args: Any, **kwargs: Any) -> Any:
        # An editor saves the note just after the server took the batch.
        path = m.stores.directory("user") / f"{note_id}.md"
        path.write_bytes(path.read_bytes().replace(old, new))
        return real(*args, **kwargs)

    monkeypatch.setattr(batch, "_write_here", write_here)


def test_with_sync_a_skipped_note_is_not_reported_or_audited_as_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with signed_in(tmp_path) as (m, _):
        keep, gone = _user_pair(m)
        m.sync.run()
        _edit_after_the_server_accepted(monkeypatch, m, gone, b"No fluff.", b"No fluff, ever.")
        result = m.merges.merge([keep, gone])
        assert gone in result.skipped  # kept as edited here
        assert (m.stores.directory("user") / f"{gone}.md").is_file()
        audited = [
            e
            for e in m.stores.audit.entries()
            if e.action == "merge" and e.fields.get("note_id") == gone
        ]
        assert gone not in result.deleted and not audited, (result.deleted, audited)


def test_with_sync_a_failing_local_write_does_not_say_nothing_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from memdir.store.notedir import NoteDirectory

    with signed_in(tmp_path) as (m, data):
        keep, gone = _user_pair(m)
        m.sync.run()
        real = NoteDirectory.write_bytes

        def write_bytes(self: NoteDirectory, note_id: str, data: bytes, **kwargs: Any) -> Any:
            if note_id == keep:  # the disk fills up as the kept note is written here
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(self, note_id, data, **kwargs)

        monkeypatch.setattr(NoteDirectory, "write_bytes", write_bytes)
        with pytest.raises(MemdirError) as caught:
            m.merges.merge([keep, gone])
        monkeypatch.undo()
        still_here = (m.stores.directory("user") / f"{gone}.md").is_file()
        # The server took the merge: the kept note has a second revision there.
        revisions = [p for p in data.rglob("*.md") if p.parent.name == keep]
        assert len(revisions) == 2, revisions
        message = str(caught.value)
        assert still_here or "nothing was changed" not in message, (
            f"{gone} deleted here, the server holds the merge, and the error says: {message}"
        )


def test_with_sync_every_backup_is_reported(tmp_path: Path) -> None:
    with signed_in(tmp_path) as (m, _):
        keep, gone = _user_pair(m)
        m.sync.run()
        result = m.merges.merge([keep, gone])
        assert result.version is not None  # through the server
        made = {b.id for b in m.backups() if b.reason == "merge"}
        assert len(made) == 3  # the kept note, the deleted one, the relinked one
        assert set(result.backup_ids) == made, (result.backup_ids, made)


def test_with_sync_a_merge_that_happened_is_not_reported_as_an_error(tmp_path: Path) -> None:
    from memdir.tidy.merge import plan_from_json, plan_to_json

    with signed_in(tmp_path) as (m, _):
        keep, gone = _user_pair(m)
        m.sync.run()
        data = plan_to_json(m.merges.plan([keep, gone]))
        data["source"] = "edited by hand " * 40  # free text: refused when the plan is read
        with pytest.raises(InvalidInput):
            plan_from_json(data)
        data["source"] = "edited"
        plan = plan_from_json(data)
        try:
            m.merges.apply(plan)
            raised = None
        except MemdirError as exc:
            raised = exc
        happened = not (m.stores.directory("user") / f"{gone}.md").exists()
        assert not (raised is not None and happened), f"merged, yet: {raised}"


# -- 9. the CLI: a credential in a hand-edited plan is printed back -------------------------


@pytest.fixture
def cli(project: Path, home: Path) -> Callable[..., Any]:
    from click.testing import CliRunner

    from memdir.cli.main import main

    (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Any:
        return runner.invoke(
            main,
            ["--project", str(project), "--home", str(home), *args],
            input=input,
            env={"COLUMNS": "250"},
            catch_exceptions=False,
        )

    return invoke


def _cli_plan(cli: Callable[..., Any], tmp_path: Path) -> Path:
    a = json.loads(cli("remember", "Use pnpm for packages", "--body", "pnpm.", "--json").stdout)
    b = json.loads(cli("remember", "Packages use pnpm", "--body", "Not npm.", "--json").stdout)
    plan = tmp_path / "plan.json"
    out = cli("tidy", "merge", a["note"]["id"], b["note"]["id"], "--plan-out", str(plan))
    assert out.exit_code == 0, out.output
    return plan


def test_apply_json_needing_confirmation_prints_no_credential(
    cli: Callable[..., Any], tmp_path: Path
) -> None:
    plan = _cli_plan(cli, tmp_path)
    data = json.loads(plan.read_text("utf-8"))
    data["draft"]["body"] += f"\n\ndeploy token {FAKE_TOKEN}"  # pasted by mistake
    plan.write_text(json.dumps(data))
    shown = cli("tidy", "apply", str(plan))  # the human preview: redacted
    assert FAKE_TOKEN not in shown.output
    out = cli("tidy", "apply", str(plan), "--json")
    assert out.exit_code != 0
    assert FAKE_TOKEN not in out.output + out.stderr


def test_apply_preview_prints_no_credential_in_tags(
    cli: Callable[..., Any], tmp_path: Path
) -> None:
    plan = _cli_plan(cli, tmp_path)
    data = json.loads(plan.read_text("utf-8"))
    data["draft"]["tags"].append(FAKE_TOKEN)
    plan.write_text(json.dumps(data))
    out = cli("tidy", "apply", str(plan))
    assert out.exit_code != 0
    assert FAKE_TOKEN not in out.output + out.stderr


# -- 10. relinking misses notes above memory.maxNotes --------------------------------------


def test_a_merge_relinks_notes_above_max_notes(project: Path, home: Path) -> None:
    from memdir.core import Note, render_note

    (home / "config.toml").write_text('[embed]\nprovider = "none"\n[memory]\nmaxNotes = 3\n')
    m = open_memory(project, home)
    try:
        a = m.remember("Use pnpm for packages", "pnpm only.", id="pnpm-a").note.id
        b = m.remember("Packages use pnpm", "Not npm.", id="pnpm-b").note.id
        m.remember("Other", "x", id="other")
        # Two more files, written by hand (a git pull): the least recently changed one is
        # the note linking to b.
        directory = m.stores.directory("project")
        old = Note(id="linker", summary="Build", body="See [[pnpm-b]].", created_at=1, updated_at=1)
        path = directory / "linker.md"
        path.write_bytes(render_note(old))
        os.utime(path, (1_000_000, 1_000_000))
        extra = Note(id="later", summary="Later", body="y", created_at=1, updated_at=1)
        (directory / "later.md").write_bytes(render_note(extra))
        m.merges.merge([a, b])
        assert "[[pnpm-b]]" not in path.read_text("utf-8"), "a link to the deleted note is left"
    finally:
        m.close()


# -- 11. the model's merge draft is sent the notes' tags unredacted ------------------------


def test_the_model_draft_prompt_redacts_tags() -> None:
    from memdir.core import Note
    from memdir.extract.merge_draft import build_messages

    a = Note(id="a-1", summary="Deploys", body="x", tags=(FAKE_TOKEN,), created_at=1, updated_at=1)
    b = Note(id="b-1", summary="Deploys again", body="y", created_at=2, updated_at=2)
    text = json.dumps(build_messages([a, b], a))
    assert FAKE_TOKEN not in text


def test_with_sync_a_skipped_kept_note_does_not_leave_a_half_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with signed_in(tmp_path) as (m, _):
        keep, gone = _user_pair(m)
        m.sync.run()
        _edit_after_the_server_accepted(monkeypatch, m, keep, b"Short.", b"Short. EDITED")
        try:
            result = m.merges.merge([keep, gone])
        except MemdirError:
            return  # refusing (nothing here changed) is a fix too
        assert keep in result.skipped
        text = "\n".join(p.read_text("utf-8") for p in m.stores.directory("user").glob("*.md"))
        assert "Short. EDITED" in text  # the edit is kept, good
        assert "No fluff." in text, f"{gone} deleted here, its text only on the server"


# -- 12. the concatenated draft ("nothing is lost") drops text that is not a repeat --------


def _note(note_id: str, summary: str, body: str, at: int) -> Any:
    from memdir.core import Note

    return Note(id=note_id, summary=summary, body=body, created_at=at, updated_at=at)


def test_the_concat_draft_keeps_code_blocks_whole() -> None:
    from memdir.tidy.merge import concat_draft

    a = _note("setup-a", "Setup script", "Set the counter:\n\nx = 1", 1)
    code = "```python\nimport os\n\nx = 1\n\nprint(os.environ['HOME'], x)\n```"
    b = _note("setup-b", "Setup script steps", code, 2)
    draft = concat_draft([a, b])
    assert code in draft.body, draft.body


def test_the_concat_draft_keeps_paragraphs_that_differ_in_case_or_indentation() -> None:
    from memdir.tidy.merge import concat_draft

    a = _note("cfg-a", "Config path", "The config lives in /etc/App/config.yml", 1)
    b = _note("cfg-b", "Config path again", "The config lives in /etc/app/config.yml", 2)
    assert "/etc/app/config.yml" in concat_draft([a, b]).body
    c = _note("py-a", "Deploy loop", "```\nif ok:\n    deploy()\nrollback()\n```", 1)
    d = _note("py-b", "Deploy loop fixed", "```\nif ok:\n    deploy()\n    rollback()\n```", 2)
    assert "    rollback()" in concat_draft([c, d]).body
