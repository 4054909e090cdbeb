"""Merging notes through `Memory` (issue 11, §6): the oldest id is kept with the draft, the
others deleted, `[[deleted-id]]` links in that scope rewritten, every changed note backed up
and the merge audited; every bad input a clear error with nothing changed; with sync on the
merge goes to a real loopback server first and must fit its per-note quota; a nearly full
disk either takes the whole merge or none of it."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from disks import fill, needs_root, tmpfs
from files import snapshot, write_project_config
from memdir import Memory
from memdir.config import load_settings
from memdir.core import Scope
from memdir.errors import (
    Conflict,
    DiskError,
    InvalidInput,
    LimitExceeded,
    MemdirError,
    NotFound,
    Refused,
    SecretRefused,
)
from memdir.tidy.merge import MergePlan
from sync_server import add_user, running_server

AWS_KEY = "aws_access_key_id = AKIAQ3EGRXNBWZ5KJH7Y"
PASSWORD = "password: hunter2-Secret!"


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


def state(project: Path | None, home: Path) -> dict[str, bytes]:
    """Every file a merge may touch: notes, history, backups, audit log, sync baselines (not
    the search index, a cache rebuilt from the notes, nor lock files and SQLite's shared
    memory and write-ahead files, which readers change)."""
    roots = [home] if project is None else [project, home]
    return {
        k: v
        for k, v in snapshot(*roots).items()
        if "/index/" not in k and not k.endswith((".lock", "-shm", "-wal")) and v != b"<dir>"
    }


@dataclasses.dataclass
class Planted:
    old: str
    mid: str
    new: str
    linker: str
    prefix: str
    user: str


@pytest.fixture
def planted(memory: Memory) -> Planted:
    """Three notes on one topic (created in this order), a note linking to two of them, a
    note linking to an id one of them is a prefix of, and a user note linking across."""
    old = memory.remember("Use pnpm for packages", "pnpm only.", tags=["tooling"], id="pnpm-old")
    mid = memory.remember("Packages use pnpm", "Not npm.\n\npnpm only.", tags=["js"], id="pnpm-mid")
    new = memory.remember("pnpm is the package tool", "Since 2024.", id="pnpm-new")
    linker = memory.remember("Build notes", "See [[pnpm-mid]] and [[pnpm-new]], [[pnpm-old]].")
    prefix = memory.remember("Other", "About [[pnpm-mid-x]] and [[pnpm-mid]]s.", id="other-p")
    memory.remember("Mid extended", "x", id="pnpm-mid-x")
    user = memory.remember("Cross link", "Project's [[pnpm-mid]].", scope="user", type="user")
    return Planted(
        old.note.id, mid.note.id, new.note.id, linker.note.id, prefix.note.id, user.note.id
    )


def body_of(memory: Memory, note_id: str, scope: str = "project") -> str:
    return (memory.stores.directory(scope) / f"{note_id}.md").read_text("utf-8")


# -- a merge -------------------------------------------------------------------------------


def test_a_merge_keeps_the_oldest_and_deletes_the_others(
    memory: Memory, planted: Planted, project: Path
) -> None:
    directory = memory.stores.directory("project")
    before = {p.stem: p.read_bytes() for p in directory.glob("*.md")}
    created = memory.read(planted.old).created_at
    result = memory.merges.merge([planted.new, planted.mid, planted.old])
    assert result.kept == planted.old
    assert result.deleted == tuple(sorted([planted.mid, planted.new]))
    assert not (directory / f"{planted.mid}.md").exists()
    assert not (directory / f"{planted.new}.md").exists()
    kept = memory.read(planted.old)
    assert kept.summary == "Use pnpm for packages"
    assert kept.body == (
        "pnpm only.\n\n## Packages use pnpm\n\nNot npm.\n\n## pnpm is the package tool\n\n"
        "Since 2024."
    )
    assert kept.tags == ("tooling", "js")
    assert kept.created_at == created and kept.updated_at > created
    # Links in the scope point at the kept note; only exact ids were rewritten.
    assert memory.read(planted.linker).body == ("See [[pnpm-old]] and [[pnpm-old]], [[pnpm-old]].")
    assert memory.read(planted.prefix).body == "About [[pnpm-mid-x]] and [[pnpm-old]]s."
    assert set(result.relinked) == {planted.linker, planted.prefix}
    # ...and not in the other scope (a link there now dangles, as §6 says: "in that scope").
    assert memory.read(planted.user).body == "Project's [[pnpm-mid]]."
    # Every changed note was backed up, with its bytes before the merge.
    backups = {b.id: b for b in memory.backups(limit=None)}
    assert set(result.backup_ids) <= set(backups)
    backed = {backups[i].note_id: backups[i].path.read_bytes() for i in result.backup_ids}
    changed = {planted.old, planted.mid, planted.new, planted.linker, planted.prefix}
    assert set(backed) == changed
    assert all(backed[i] == before[i] for i in changed)
    assert {backups[i].reason for i in result.backup_ids} == {"merge"}
    # Audited: one entry for the kept note and one per deleted note; the chain verifies.
    merges = [e for e in memory.stores.audit.entries() if e.action == "merge"]
    assert sorted(str(e.fields.get("note_id")) for e in merges) == sorted(
        [planted.old, planted.mid, planted.new]
    )
    log = (memory.home / "audit" / "audit.jsonl").read_text("utf-8")
    assert "pnpm only" not in log and "Not npm" not in log  # no note content in the log
    assert memory.audit.verify().ok
    # The deleted notes' history is kept.
    history = memory.notes.history(planted.mid)
    assert history[0].event == "write" and history[-1].revision is None
    assert memory.tidy.findings(["broken_link"], "project") == []


def test_every_merge_backup_restores(memory: Memory, planted: Planted) -> None:
    before = {p.stem: p.read_bytes() for p in memory.stores.directory("project").glob("*.md")}
    result = memory.merges.merge([planted.old, planted.mid])
    for backup_id in result.backup_ids:
        restored = memory.backups.restore(backup_id)
        assert (
            memory.stores.directory("project") / f"{restored.note.id}.md"
        ).read_bytes() == before[restored.note.id]
    assert memory.read(planted.mid).body == "Not npm.\n\npnpm only."
    assert memory.audit.verify().ok


def test_plan_then_apply_changes_nothing_until_applied(
    memory: Memory, planted: Planted, project: Path, home: Path
) -> None:
    before = state(project, home)
    plan = memory.merges.plan([planted.old, planted.new])
    assert state(project, home) == before
    assert plan.keep == planted.old and plan.deletes == (planted.new,)
    edited = dataclasses.replace(plan, draft=dataclasses.replace(plan.draft, body="Edited."))
    memory.merges.apply(edited)
    assert memory.read(planted.old).body == "Edited."
    assert not (memory.stores.directory("project") / f"{planted.new}.md").exists()


def test_summary_and_body_replace_the_drafts(memory: Memory, planted: Planted) -> None:
    plan = memory.merges.plan([planted.old, planted.new], summary="pnpm, always", body="One.")
    assert plan.source == "edited"
    assert (plan.draft.summary, plan.draft.body) == ("pnpm, always", "One.")
    assert plan.draft.tags == ("tooling",)  # the rest stays the concatenated draft's


def test_a_comma_separated_string_of_ids(memory: Memory, planted: Planted) -> None:
    plan = memory.merges.plan(f"{planted.new},{planted.old}")
    assert sorted(n.id for n in plan.notes) == sorted([planted.new, planted.old])


# -- bad input: a clear error, nothing changed -----------------------------------------------


def _refused(
    memory: Memory,
    project: Path,
    home: Path,
    error: type[MemdirError],
    match: str,
    action: Callable[[], object],
) -> MemdirError:
    before = state(project, home)
    with pytest.raises(error, match=match) as caught:
        action()
    assert state(project, home) == before
    return caught.value


@pytest.mark.parametrize(
    ("ids", "error", "match"),
    [
        (
            ["pnpm-old", "pnpm-old"],
            InvalidInput,
            "named twice: a note cannot be merged with itself",
        ),
        (["pnpm-old"], InvalidInput, "at least two different notes"),
        ([], InvalidInput, "at least two different notes"),
        (["pnpm-old", "no-such-note"], NotFound, "no note no-such-note"),
        (["pnpm-old", "../x"], InvalidInput, "is not a note id"),
        (["pnpm-old", "..%2fx"], InvalidInput, "is not a note id"),
        (["pnpm-old", "a/b"], InvalidInput, "is not a note id"),
        (["pnpm-old", "PNPM-OLD"], InvalidInput, "is not a note id"),
        (["pnpm-old", 7], InvalidInput, "is not a note id"),
    ],
)
def test_bad_ids_are_refused_with_nothing_changed(
    memory: Memory,
    planted: Planted,
    project: Path,
    home: Path,
    ids: list[str],
    error: type[MemdirError],
    match: str,
) -> None:
    _refused(memory, project, home, error, match, lambda: memory.merges.merge(ids))
    _refused(memory, project, home, error, match, lambda: memory.merges.plan(ids))


def test_too_many_notes_are_refused(memory: Memory, project: Path, home: Path) -> None:
    ids = [memory.remember(f"Note {i}", id=f"n-{i}").note.id for i in range(21)]
    _refused(
        memory, project, home, InvalidInput, "at most 20 notes", lambda: memory.merges.merge(ids)
    )


def test_notes_of_two_scopes_are_refused(
    memory: Memory, planted: Planted, project: Path, home: Path
) -> None:
    error = _refused(
        memory,
        project,
        home,
        Refused,
        "notes of two scopes cannot be merged",
        lambda: memory.merges.merge([planted.old, planted.user]),
    )
    assert f"{planted.user} (user)" in str(error) and f"{planted.old} (project)" in str(error)
    # A scope given: the note of the other scope is not found there.
    _refused(
        memory,
        project,
        home,
        NotFound,
        f"no note {planted.user} in the project scope",
        lambda: memory.merges.merge([planted.old, planted.user], scope="project"),
    )


def test_a_bad_draft_kind_is_refused(memory: Memory, planted: Planted) -> None:
    with pytest.raises(InvalidInput, match="draft must be one of concat, llm"):
        memory.merges.plan([planted.old, planted.new], draft="magic")


@pytest.mark.parametrize(
    ("where", "text"),
    [("summary", PASSWORD), ("body", AWS_KEY), ("body", f"Deploy with {PASSWORD} then.")],
)
def test_a_draft_holding_a_credential_is_refused(
    memory: Memory, planted: Planted, project: Path, home: Path, where: str, text: str
) -> None:
    kwargs = {where: text}
    error = _refused(
        memory,
        project,
        home,
        SecretRefused,
        "nothing was written",
        lambda: memory.merges.merge([planted.old, planted.new], **kwargs),  # type: ignore[arg-type]
    )
    assert "hunter2" not in str(error) and "AKIAQ3EGRXNBWZ5KJH7Y" not in str(error)
    # An edited plan is checked again on apply.
    plan = memory.merges.plan([planted.old, planted.new])
    bad = dataclasses.replace(plan, draft=dataclasses.replace(plan.draft, **kwargs))
    _refused(memory, project, home, SecretRefused, where, lambda: memory.merges.apply(bad))


def test_a_merged_body_over_max_note_bytes_is_refused(project: Path, home: Path) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n[memory]\nmaxNoteBytes = 300\n')
    with open_memory(project, home) as memory:
        a = memory.remember("Deploy steps", "a" * 200).note.id
        b = memory.remember("Deploy steps again", "b" * 200).note.id
        c = memory.remember("Links", f"[[{b}]]").note.id
        _refused(
            memory,
            project,
            home,
            LimitExceeded,
            "memory.maxNoteBytes",
            lambda: memory.merges.merge([a, b]),
        )
        assert memory.read(c).body == f"[[{b}]]"
        # Shortened by hand, it fits.
        memory.merges.merge([a, b], body="a and b, shorter")
        assert memory.read(a).body == "a and b, shorter"


def test_planning_a_merge_over_max_note_bytes_is_refused(project: Path, home: Path) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n[memory]\nmaxNoteBytes = 300\n')
    with open_memory(project, home) as memory:
        a = memory.remember("Deploy steps", "a" * 200).note.id
        b = memory.remember("Deploy steps again", "b" * 200).note.id
        before = state(project, home)
        # Refused when planned (so `--plan-out` never writes a plan that cannot apply).
        with pytest.raises(LimitExceeded, match=r"memory\.maxNoteBytes"):
            memory.merges.plan([a, b])
        assert state(project, home) == before


def test_a_draft_superseding_a_merged_note_is_refused(
    memory: Memory, planted: Planted, project: Path, home: Path
) -> None:
    plan = memory.merges.plan([planted.old, planted.new])
    for stray in (planted.new, planted.old):
        bad = dataclasses.replace(plan, draft=dataclasses.replace(plan.draft, supersedes=(stray,)))
        _refused(
            memory,
            project,
            home,
            InvalidInput,
            f"cannot supersede a note of the merge \\({stray}\\)",
            lambda bad=bad: memory.merges.apply(bad),  # type: ignore[misc]
        )


def test_a_plan_keeping_a_note_it_does_not_merge_is_refused(
    memory: Memory, planted: Planted, project: Path, home: Path
) -> None:
    plan = memory.merges.plan([planted.old, planted.new])
    bad = dataclasses.replace(plan, keep=planted.linker)
    _refused(
        memory, project, home, InvalidInput, "does not merge", lambda: memory.merges.apply(bad)
    )


# -- stale plans ---------------------------------------------------------------------------


def test_a_plan_whose_note_changed_since_is_refused(
    memory: Memory, planted: Planted, project: Path, home: Path
) -> None:
    plan = memory.merges.plan([planted.old, planted.new])
    memory.remember("pnpm is the package tool", "Since 2024, edited.", id=planted.new)
    _refused(
        memory,
        project,
        home,
        Conflict,
        "changed since the merge was planned",
        lambda: _apply(memory, plan),
    )
    # Edited by hand in the file, without memdir: refused too.
    plan = memory.merges.plan([planted.old, planted.new])
    path = memory.stores.directory("project") / f"{planted.old}.md"
    path.write_bytes(path.read_bytes().replace(b"pnpm only.", b"pnpm only!"))
    _refused(
        memory, project, home, Conflict, f"note {planted.old} changed", lambda: _apply(memory, plan)
    )
    # A deleted original: NotFound, nothing changed.
    plan = memory.merges.plan([planted.old, planted.new])
    memory.forget(planted.new)
    _refused(memory, project, home, NotFound, "is gone since", lambda: _apply(memory, plan))


def _apply(memory: Memory, plan: MergePlan) -> object:
    return memory.merges.apply(plan)


def test_a_linking_note_edited_after_planning_keeps_its_edit(
    memory: Memory, planted: Planted
) -> None:
    plan = memory.merges.plan([planted.old, planted.mid])
    memory.remember("Build notes", "Edited later: see [[pnpm-mid]].", id=planted.linker)
    memory.merges.apply(plan)
    assert memory.read(planted.linker).body == "Edited later: see [[pnpm-old]]."


def test_a_linking_note_edited_while_the_merge_applies_keeps_its_edit(
    memory: Memory, planted: Planted, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = memory.merges.plan([planted.old, planted.mid])
    directory = memory.stores.store(Scope.PROJECT).directory
    real = directory.read_bytes
    edited: list[str] = []

    def read_bytes(note_id: str) -> bytes | None:
        if note_id == planted.linker and not edited:
            # Another process saves the note just after the merge listed the scope.
            edited.append(note_id)
            path = directory.file_for(note_id)
            path.write_bytes(path.read_bytes().replace(b"Build notes", b"Build notes, edited"))
        return real(note_id)

    monkeypatch.setattr(directory, "read_bytes", read_bytes)
    memory.merges.apply(plan)
    monkeypatch.undo()
    assert edited
    assert memory.read(planted.linker).summary == "Build notes, edited"


# -- full disk -----------------------------------------------------------------------------


@needs_root
@pytest.mark.parametrize("where", ["project", "home"])
def test_a_merge_on_a_nearly_full_disk_is_all_or_nothing(tmp_path: Path, where: str) -> None:
    outcomes: list[str] = []
    for leave in (0, 2048, 8192, 32768, 131072, 262144):
        with contextlib.ExitStack() as stack:
            root = stack.enter_context(tmpfs(tmp_path / f"disk-{leave}", "1m"))
            project = (root if where == "project" else tmp_path / f"p-{leave}") / "project"
            home = (root if where == "home" else tmp_path / f"h-{leave}") / "home"
            project.mkdir(parents=True)
            home.mkdir(parents=True)
            (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
            memory = stack.enter_context(open_memory(project, home))
            a = memory.remember("Deploys go through staging", "first " * 300, id="dep-a").note.id
            b = memory.remember("Staging takes deploys", "second " * 300, id="dep-b").note.id
            c = memory.remember("Links", "See [[dep-b]].", id="links").note.id
            before = state(project, home)
            notes = {
                p.name: p.read_bytes() for p in memory.stores.directory("project").glob("*.md")
            }
            filler = fill(root, leave)
            try:
                result = memory.merges.merge([a, b])
            except DiskError as exc:
                assert "nothing was changed" in str(exc)
                filler.unlink()
                after = {
                    p.name: p.read_bytes() for p in memory.stores.directory("project").glob("*.md")
                }
                assert after == notes
                assert state(project, home) == before
                assert memory.audit.verify().ok
                outcomes.append("refused")
                continue
            filler.unlink()
            assert result.kept == a and result.deleted == (b,)
            assert not (memory.stores.directory("project") / f"{b}.md").exists()
            assert memory.read(c).body == "See [[dep-a]]."
            assert "second second" in memory.read(a).body
            assert memory.audit.verify().ok
            outcomes.append("merged")
    assert "refused" in outcomes and "merged" in outcomes, outcomes


# -- with sync on --------------------------------------------------------------------------


@dataclasses.dataclass
class Machines:
    a: Memory
    b: Memory
    url: str
    data: Path


@contextlib.contextmanager
def two_machines(tmp_path: Path, *server_args: str) -> Iterator[Machines]:
    """A fresh loopback sync server and two machines (user notes only) signed in to it."""
    data = tmp_path / "srv"
    data.mkdir()
    token = add_user(data, "alice")
    with running_server(data, extra_args=["--rate-limit", "0", *server_args]) as server:
        homes = [tmp_path / "home-a", tmp_path / "home-b"]
        machines = []
        for home in homes:
            home.mkdir()
            (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
            machines.append(open_memory(None, home))
        try:
            for m in machines:
                m.sync.login(server.url, token)
            yield Machines(machines[0], machines[1], server.url, data)
        finally:
            for m in machines:
                m.close()


def files(memory: Memory) -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in memory.stores.directory("user").glob("*.md")}


def server_state(data: Path) -> dict[str, bytes]:
    return {k: v for k, v in snapshot(data / "users").items() if not k.endswith(".lock")}


def _user_notes(m: Memory) -> tuple[str, str, str]:
    a = m.remember("Terse answers please", "Short.", scope="user", id="terse-a").note.id
    b = m.remember("Answers short and terse", "No fluff.", scope="user", id="terse-b").note.id
    c = m.remember("Style", "See [[terse-b]].", scope="user", id="style-c").note.id
    return a, b, c


def test_with_sync_a_merge_goes_to_the_server_first(tmp_path: Path) -> None:
    with two_machines(tmp_path) as w:
        a_id, b_id, c_id = _user_notes(w.a)
        w.a.sync.run()
        w.b.sync.run()
        assert files(w.b) == files(w.a)
        result = w.a.merges.merge([b_id, a_id])
        assert result.version is not None  # committed to the server
        assert result.kept == a_id and result.relinked == (c_id,)
        assert w.a.audit.verify().ok
        assert [e for e in w.a.stores.audit.entries() if e.action == "merge"]
        w.b.sync.run()
        assert files(w.b) == files(w.a)
        assert b_id not in files(w.b)
        assert w.b.read(c_id).body == f"See [[{a_id}]]."
        assert "No fluff." in w.b.read(a_id).body
        # Nothing left to push: the merge was already on the server.
        run = w.a.sync.run()
        assert not any(r.changed for r in run.reports), run


def test_with_sync_a_note_not_in_sync_refuses_the_merge(tmp_path: Path) -> None:
    with two_machines(tmp_path) as w:
        a_id, b_id, _ = _user_notes(w.a)
        w.a.sync.run()
        w.b.sync.run()
        # Changed here, not synced yet.
        w.a.remember("Answers short and terse", "No fluff at all.", scope="user", id=b_id)
        home_a = w.a.settings.home
        before, remote = state(None, home_a), server_state(w.data)
        with pytest.raises(Conflict, match="not in sync with the server"):
            w.a.merges.merge([a_id, b_id])
        assert state(None, home_a) == before and server_state(w.data) == remote
        # Changed on the server by the other machine: refused as well.
        w.a.sync.run()
        w.b.sync.run()
        w.b.remember("Terse answers please", "Short!", scope="user", id=a_id)
        w.b.sync.run()
        before, remote = state(None, home_a), server_state(w.data)
        with pytest.raises(Conflict):
            w.a.merges.merge([a_id, b_id])
        assert state(None, home_a) == before and server_state(w.data) == remote
        w.a.sync.run()
        assert w.a.merges.merge([a_id, b_id]).version is not None


def test_with_sync_a_note_held_by_a_conflict_cannot_be_planned(tmp_path: Path) -> None:
    with two_machines(tmp_path) as w:
        a_id, b_id, _ = _user_notes(w.a)
        w.a.sync.run()
        w.b.sync.run()
        for m, text in ((w.a, "from a"), (w.b, "from b")):
            path = m.stores.directory("user") / f"{b_id}.md"
            path.write_bytes(path.read_bytes().replace(b"No fluff.", f"No fluff {text}.".encode()))
        w.a.sync.run()
        assert w.b.sync.run().conflicts == 1
        home_b = w.b.settings.home
        before = state(None, home_b)
        with pytest.raises(Conflict, match=f"note {b_id} is held back by a sync conflict"):
            w.b.merges.plan([a_id, b_id])
        with pytest.raises(Conflict, match="held back by a sync conflict"):
            w.b.merges.merge([a_id, b_id])
        assert state(None, home_b) == before


def test_with_sync_a_merged_body_over_the_servers_quota_is_refused(tmp_path: Path) -> None:
    with two_machines(tmp_path, "--max-body-bytes", "300") as w:
        a_id = w.a.remember("Deploy steps", "a" * 200, scope="user", id="dep-a").note.id
        b_id = w.a.remember("Deploy steps again", "b" * 200, scope="user", id="dep-b").note.id
        w.a.remember("Links", "[[dep-b]]", scope="user", id="links")
        w.a.sync.run()
        home_a = w.a.settings.home
        before, remote = state(None, home_a), server_state(w.data)
        with pytest.raises(LimitExceeded, match="the sync server takes at most 300"):
            w.a.merges.merge([a_id, b_id])
        assert state(None, home_a) == before
        assert server_state(w.data) == remote
        # Short enough, the merge goes through.
        assert w.a.merges.merge([a_id, b_id], body="both, shortened").version is not None
        w.b.sync.run()
        assert files(w.b) == files(w.a)


def test_a_project_config_does_not_change_merge(memory: Memory, project: Path) -> None:
    # Merging is an explicit request: the automatic pass being off does not block it.
    write_project_config(project, "[memory.consolidate]\nauto = false\n")
    a = memory.remember("Use pnpm for packages", "x").note.id
    b = memory.remember("Packages use pnpm", "y").note.id
    assert memory.merges.merge([a, b]).kept == a


# -- what the merge keeps: a given body, the plan file, supersedes, maxNotes, a crash ----------

FAKE_TOKEN = "ghp_" + "R8xK2mQ9vL4tZ7pW1nB6cY3hJ5dF0sA2eG8u"


def test_a_given_body_linking_a_deleted_note_is_relinked(memory: Memory) -> None:
    a = memory.remember("Use pnpm for packages", "pnpm only.", id="pnpm-a").note.id
    b = memory.remember("Packages use pnpm", "Not npm.", id="pnpm-b").note.id
    result = memory.merges.merge([a, b], body="pnpm only; see also [[pnpm-b]].")
    assert result.deleted == (b,)
    body = memory.read(a).body
    assert f"[[{b}]]" not in body, body  # a link to the note this merge deleted


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


# -- with sync on: what the commit-first path reports and writes here ----------------------


class AfterCommit(httpx.HTTPTransport):
    """The HTTP transport of a machine: real requests; once armed (`then`), it runs `then`
    once, right after the sync server took a commit, before the machine reads the answer."""

    def __init__(self) -> None:
        super().__init__()
        self.then: Callable[[], None] | None = None

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        taken = request.method == "POST" and request.url.path.endswith("/memory/commit")
        if taken and response.status_code == 200 and self.then is not None:
            then, self.then = self.then, None
            then()
        return response


@contextlib.contextmanager
def signed_in(tmp_path: Path, *server_args: str) -> Iterator[tuple[Memory, Path, AfterCommit]]:
    """A machine (user notes only) signed in to a fresh loopback sync server; its transport."""
    data = tmp_path / "srv"
    data.mkdir()
    token = add_user(data, "alice")
    with running_server(data, extra_args=["--rate-limit", "0", *server_args]) as server:
        home = tmp_path / "home-a"
        home.mkdir()
        (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
        transport = AfterCommit()
        m = Memory(load_settings(home=home), clock=Clock(), sync_transport=transport)
        try:
            m.sync.login(server.url, token)
            yield m, data, transport
        finally:
            m.close()


def _user_pair(m: Memory) -> tuple[str, str]:
    # The kept note (oldest) sorts after the deleted one: the batch removes that first.
    keep = m.remember("Terse answers please", "Short.", scope="user", id="zz-terse").note.id
    gone = m.remember("Answers short and terse", "No fluff.", scope="user", id="aa-terse").note.id
    m.remember("Style", "See [[aa-terse]].", scope="user", id="style-c")
    return keep, gone


def _edit_after_the_server_accepted(
    transport: AfterCommit, m: Memory, note_id: str, old: bytes, new: bytes
) -> None:
    def edit() -> None:
        # An editor saves the note just after the server took the batch.
        path = m.stores.directory("user") / f"{note_id}.md"
        path.write_bytes(path.read_bytes().replace(old, new))

    transport.then = edit


def test_with_sync_a_skipped_note_is_not_reported_or_audited_as_deleted(tmp_path: Path) -> None:
    with signed_in(tmp_path) as (m, _, transport):
        keep, gone = _user_pair(m)
        m.sync.run()
        _edit_after_the_server_accepted(transport, m, gone, b"No fluff.", b"No fluff, ever.")
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

    with signed_in(tmp_path) as (m, data, _):
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
    with signed_in(tmp_path) as (m, _, _):
        keep, gone = _user_pair(m)
        m.sync.run()
        result = m.merges.merge([keep, gone])
        assert result.version is not None  # through the server
        made = {b.id for b in m.backups() if b.reason == "merge"}
        assert len(made) == 3  # the kept note, the deleted one, the relinked one
        assert set(result.backup_ids) == made, (result.backup_ids, made)


def test_with_sync_a_merge_that_happened_is_not_reported_as_an_error(tmp_path: Path) -> None:
    from memdir.tidy.merge import plan_from_json, plan_to_json

    with signed_in(tmp_path) as (m, _, _):
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


def test_with_sync_a_skipped_kept_note_does_not_leave_a_half_merge(tmp_path: Path) -> None:
    with signed_in(tmp_path) as (m, _, transport):
        keep, gone = _user_pair(m)
        m.sync.run()
        _edit_after_the_server_accepted(transport, m, keep, b"Short.", b"Short. EDITED")
        try:
            result = m.merges.merge([keep, gone])
        except MemdirError:
            return  # refusing (nothing here changed) is a fix too
        assert keep in result.skipped
        text = "\n".join(p.read_text("utf-8") for p in m.stores.directory("user").glob("*.md"))
        assert "Short. EDITED" in text  # the edit is kept, good
        assert "No fluff." in text, f"{gone} deleted here, its text only on the server"
