"""Tests for `memory/maintenance.py`: forget (plan, verification, backup, purge, audit),
restoring backups (§2) and doctor (broken files, dangling links, leftovers, warnings)."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from files import write_project_config
from memdir import Conflict, Memory, NotFound, Refused
from memdir.cli.main import main
from memdir.core import Note, Scope, render_note
from memdir.errors import EXIT_NOT_FOUND, Remedy
from memdir.memory.maintenance import DoctorReport
from memdir.store import FileProblem

BODY = "The quokka phosphorescence ledger lives in vault seven."
WORDS = (b"quokka", b"phosphorescence")


def files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def audit_entries(home: Path) -> list[dict[str, object]]:
    lines = (home / "audit" / "audit.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]


# --- plan -----------------------------------------------------------------------------------


def test_plan_says_what_goes_and_that_a_backup_is_kept(memory: Memory) -> None:
    r = memory.remember("Vault location", BODY)
    memory.remember("Vault location", BODY + " Updated.", id=r.note.id)
    plan = memory.upkeep.plan_forget(r.note.id)
    assert plan.note.id == r.note.id
    assert plan.path == memory.stores.directory("project") / f"{r.note.id}.md"
    assert plan.keeps_backup and not plan.purge
    assert plan.history_versions == 2
    assert plan.backups == 0
    purge_plan = memory.upkeep.plan_forget(r.note.id, purge=True)
    assert purge_plan.purge and not purge_plan.keeps_backup
    assert plan.path.is_file()  # planning removes nothing


def test_plan_for_missing_note(memory: Memory) -> None:
    with pytest.raises(NotFound):
        memory.upkeep.plan_forget("no-such-note")


# --- forget ---------------------------------------------------------------------------------


def test_forget_removes_the_note_everywhere_and_keeps_a_backup(memory: Memory) -> None:
    r = memory.remember("Vault location", BODY, tags="vault")
    other = memory.remember("Unrelated", "nothing to see")
    path = memory.stores.directory("project") / f"{r.note.id}.md"
    original = path.read_bytes()
    result = memory.forget(r.note.id)
    assert not path.exists()
    assert result.note_id == r.note.id
    assert "file removed" in result.checks
    assert [n.id for n in memory.notes.list()] == [other.note.id]
    assert memory.search("quokka phosphorescence", method="lexical") == []
    assert r.note.id not in {h.note_id for h in memory.search("quokka phosphorescence")}
    assert memory.notes.list(tag="vault") == []
    with pytest.raises(NotFound):
        memory.read(r.note.id)
    with pytest.raises(NotFound):
        memory.forget(r.note.id)
    backup = result.backup
    assert backup is not None
    assert backup.reason == "forget"
    assert backup.origin == memory.stores.directory("project")
    assert backup.note_id == r.note.id
    assert [b.id for b in memory.backups()] == [backup.id]
    assert backup.path.read_bytes() == original
    history = memory.notes.history(r.note.id)
    assert history[-1].event == "forget" and history[-1].revision is None
    assert not any(e.current for e in history)


def test_restore_brings_a_forgotten_note_back_byte_identical(memory: Memory) -> None:
    r = memory.remember("Vault location", BODY, tags="vault")
    path = memory.stores.directory("project") / f"{r.note.id}.md"
    original = path.read_bytes()
    backup = memory.forget(r.note.id).backup
    assert backup is not None
    restored = memory.backups.restore(backup.id)
    assert restored.replaced_backup is None
    assert restored.note.id == r.note.id
    assert path.read_bytes() == original
    assert memory.read(r.note.id).body == BODY
    assert [h.note_id for h in memory.search("quokka")] == [r.note.id]
    assert memory.notes.history(r.note.id)[-1].current
    # restoring the same backup again changes nothing
    again = memory.backups.restore(backup.id)
    assert again.replaced_backup is None
    assert path.read_bytes() == original


def test_a_user_above_a_lowered_max_notes_can_read_see_history_and_forget_by_cli(
    project: Path, home: Path
) -> None:
    memory = Memory.open(project, home=home)
    for i in range(3):
        memory.remember(f"Recent fact {i}", f"body {i}")
    hand = memory.stores.directory("project") / "old-hand-note.md"
    hand.write_bytes(render_note(Note(id="old-hand-note", summary="Old by hand", body=BODY)))
    os.utime(hand, (1_000_000_000, 1_000_000_000))  # the least recently changed file
    memory.close()
    write_project_config(project, "[memory]\nmaxNotes = 2\n")
    base = ["--project", str(project), "--home", str(home)]
    runner = CliRunner()

    def run(*args: str) -> Result:
        return runner.invoke(main, [*base, *args], catch_exceptions=False)

    listed = run("list", "--json")
    assert listed.exit_code == 0 and "old-hand-note" not in listed.stdout
    read = run("read", "old-hand-note")
    assert read.exit_code == 0 and "quokka" in read.stdout, read.output
    history = run("history", "old-hand-note", "--json")
    assert history.exit_code == 0, history.output
    assert [e["event"] for e in json.loads(history.stdout)] == ["observed"]
    assert run("diff", "old-hand-note").exit_code == 0
    forgot = run("forget", "old-hand-note", "--yes")
    assert forgot.exit_code == 0, forgot.output
    assert not hand.exists()
    assert run("read", "old-hand-note").exit_code == EXIT_NOT_FOUND


def test_forget_user_note(memory: Memory, home: Path) -> None:
    r = memory.remember("User fact", BODY, type="user")
    result = memory.forget(r.note.id)
    assert not (home / "memory" / "user" / f"{r.note.id}.md").exists()
    assert result.backup is not None
    assert result.backup.origin == home / "memory" / "user"
    memory.backups.restore(result.backup.id)
    assert memory.read(r.note.id).scope is not None
    assert (home / "memory" / "user" / f"{r.note.id}.md").is_file()


def test_purge_scrubs_history_and_backups(memory: Memory, home: Path, project: Path) -> None:
    r = memory.remember("Vault location", BODY)
    memory.remember("Vault location", BODY + " Second version.", id=r.note.id)
    # a forget/restore cycle leaves a backup behind
    backup = memory.forget(r.note.id).backup
    assert backup is not None
    memory.backups.restore(backup.id)
    keep = memory.remember("Kept note", "another vault, not forgotten")
    for word in WORDS:
        assert files_containing(home, word)
    plan = memory.upkeep.plan_forget(r.note.id, purge=True)
    assert plan.history_versions >= 2 and plan.backups == 1
    result = memory.forget(r.note.id, purge=True)
    assert result.backup is None
    assert result.purged_versions >= 2
    assert result.purged_backups == 1
    assert "history scrubbed" in result.checks and "backups scrubbed" in result.checks
    for word in WORDS:
        assert files_containing(home, word) == []
        assert files_containing(project, word) == []
    assert memory.backups() == []
    with pytest.raises(NotFound):
        memory.notes.history(r.note.id)
    # other notes keep their history
    assert memory.read(keep.note.id).body == "another vault, not forgotten"
    assert memory.notes.history(keep.note.id)[-1].current


def test_purge_of_a_user_note(memory: Memory, home: Path) -> None:
    r = memory.remember("User vault", BODY, type="user")
    memory.forget(r.note.id, purge=True)
    for word in WORDS:
        assert files_containing(home, word) == []


def test_stale_plan_is_a_conflict_and_removes_nothing(memory: Memory) -> None:
    r = memory.remember("Vault location", BODY)
    plan = memory.upkeep.plan_forget(r.note.id)
    memory.remember("Vault location", BODY + " Edited after the plan.", id=r.note.id)
    path = memory.stores.directory("project") / f"{r.note.id}.md"
    before = path.read_bytes()
    with pytest.raises(Conflict):
        memory.forget(r.note.id, expect_hash=plan.note.hash)
    assert path.read_bytes() == before
    assert memory.backups() == []
    assert memory.read(r.note.id).body.endswith("Edited after the plan.")
    # a fresh plan works
    fresh = memory.upkeep.plan_forget(r.note.id)
    memory.forget(r.note.id, expect_hash=fresh.note.hash)
    assert not path.exists()


def test_stale_plan_after_external_edit(memory: Memory) -> None:
    r = memory.remember("Vault location", BODY)
    plan = memory.upkeep.plan_forget(r.note.id)
    path = memory.stores.directory("project") / f"{r.note.id}.md"
    path.write_bytes(path.read_bytes().replace(b"seven", b"eight, edited by hand"))
    with pytest.raises(Conflict):
        memory.forget(r.note.id, purge=True, expect_hash=plan.note.hash)
    assert path.is_file()


def test_audit_log_records_forget_and_purge_without_content(memory: Memory, home: Path) -> None:
    a = memory.remember("Vault location", BODY)
    b = memory.remember("Second vault", BODY + " Another.")
    memory.forget(a.note.id)
    memory.forget(b.note.id, purge=True)
    entries = audit_entries(home)
    actions = [(e["action"], e["fields"]) for e in entries]
    forget = [f for act, f in actions if act == "forget"]
    purge = [f for act, f in actions if act == "purge"]
    assert len(forget) == 1 and forget[0]["note_id"] == a.note.id  # type: ignore[index]
    assert len(purge) == 1 and purge[0]["note_id"] == b.note.id  # type: ignore[index]
    raw = (home / "audit" / "audit.jsonl").read_bytes()
    for word in (*WORDS, b"vault seven"):
        assert word not in raw
    assert memory.audit.verify().ok


# --- restore --------------------------------------------------------------------------------


def test_restore_over_a_newer_version_backs_it_up_first(memory: Memory) -> None:
    r = memory.remember("Vault location", BODY)
    path = memory.stores.directory("project") / f"{r.note.id}.md"
    old = path.read_bytes()
    backup = memory.forget(r.note.id).backup
    assert backup is not None
    memory.remember("Vault location", "A newer version written later.", id=r.note.id)
    newer = path.read_bytes()
    result = memory.backups.restore(backup.id)
    assert path.read_bytes() == old
    replaced = result.replaced_backup
    assert replaced is not None
    assert replaced.reason is not None and "restore" in replaced.reason
    assert replaced.path.read_bytes() == newer
    assert replaced.note_id == r.note.id
    # and that backup restores the newer version again
    memory.backups.restore(replaced.id)
    assert path.read_bytes() == newer


def test_restore_from_another_project_is_refused(tmp_path: Path, home: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    first = Memory.open(one, home=home)
    r = first.remember("Vault location", BODY)
    backup = first.forget(r.note.id).backup
    assert backup is not None
    second = Memory.open(two, home=home)
    assert [b.id for b in second.backups()] == [backup.id]
    with pytest.raises(Refused) as info:
        second.backups.restore(backup.id)
    message = str(info.value)
    assert str(one / "MEMORY") in message
    # What to do next is a structured hint; the CLI renders it as `memdir --project DIR …`.
    assert info.value.hint is Remedy.OTHER_PROJECT
    assert not (two / "MEMORY" / f"{r.note.id}.md").exists()
    assert not (one / "MEMORY" / f"{r.note.id}.md").exists()


def test_restore_unknown_or_malformed_backup_id(memory: Memory) -> None:
    with pytest.raises(NotFound):
        memory.backups.restore("20990101T000000000000Z-nothing-0000")
    with pytest.raises(Exception, match="backup"):
        memory.backups.restore("../../etc/passwd")


def test_note_without_id_in_frontmatter_is_restorable(memory: Memory) -> None:
    path = memory.stores.directory("project") / "hand-note.md"
    memory.remember("Seed", "so the directory exists")
    data = b'---\n{"summary":"Written by hand, id from the file name"}\n---\nbody\n'
    path.write_bytes(data)
    backup = memory.forget("hand-note").backup
    assert backup is not None and backup.note_id == "hand-note"
    memory.backups.restore(backup.id)
    assert path.read_bytes() == data
    assert memory.read("hand-note").summary == "Written by hand, id from the file name"


def test_legacy_backup_without_metadata_is_listed_and_restorable(
    memory: Memory, home: Path
) -> None:
    backups = home / "memory-backups"
    backups.mkdir(parents=True, exist_ok=True)
    data = b'---\n{"id":"old-note","summary":"From before reasons"}\n---\nlegacy body\n'
    (backups / "old-note-legacy.md").write_bytes(data)
    listed = memory.backups()
    assert [(b.id, b.reason, b.note_id) for b in listed] == [("old-note-legacy", None, "old-note")]
    result = memory.backups.restore("old-note-legacy")
    assert result.note.id == "old-note"
    assert (memory.stores.directory("project") / "old-note.md").read_bytes() == data


def test_dangling_links_are_reported_by_doctor(memory: Memory) -> None:
    r = memory.remember("Refers to a future note", "todo: [[future-note]]")
    report = memory.upkeep.doctor()
    assert (r.note.id, "future-note") in report.dangling
    assert not report.ok
    memory.remember("Future note", "now it exists", id="future-note")
    assert memory.upkeep.doctor().dangling == ()
    assert memory.notes.links(r.note.id).dangling == ()


def test_doctor_lists_broken_files_and_leaves_them_alone(memory: Memory, project: Path) -> None:
    good = memory.remember("Healthy", "fine")
    directory = project / "MEMORY"
    broken = {
        "bad-json.md": b"---\n{not json\n---\nbody\n",
        "no-frontmatter.md": b"---\n\n***\n",  # neither frontmatter nor a line of text
        "bad-utf8.md": b'---\n{"id":"bad-utf8","summary":"s"}\n---\n\xff\xfe body\n',
        "binary.md": b"\x00\x01\x02\x03 binary",
        "empty.md": b"",
    }
    for name, data in broken.items():
        (directory / name).write_bytes(data)
    report = memory.upkeep.doctor()
    assert {p.path.name for p in report.problems} == set(broken)
    assert not report.ok
    reasons = {p.path.name: p.reason for p in report.problems}
    assert "UTF-8" in reasons["bad-utf8.md"]
    assert "empty" in reasons["empty.md"]
    # everything else keeps working and nothing touches the broken files
    assert [n.id for n in memory.notes.list()] == [good.note.id]
    memory.remember("Healthy", "still fine", id=good.note.id)
    memory.search("body")
    memory.forget(good.note.id)
    for name, data in broken.items():
        assert (directory / name).read_bytes() == data
    with pytest.raises(Exception, match="doctor"):
        memory.remember("Overwrite?", "no", id="bad-json")
    assert (directory / "bad-json.md").read_bytes() == broken["bad-json.md"]


def test_doctor_healthy(memory: Memory) -> None:
    memory.remember("One", "body")
    memory.remember("Two", "body", type="user")
    report = memory.upkeep.doctor()
    assert report.ok
    assert report.counts == {"project": 1, "user": 1}


# --- doctor: leftovers of interrupted writes, a corrupt project file -------------------


def test_doctor_removes_temp_files_of_interrupted_writes(memory: Memory, project: Path) -> None:
    memory.remember("A note that stays", body="content")
    leftover = project / "MEMORY" / ".a-note.md.tmp-deadbeef"
    leftover.write_bytes(b"half a note")
    report = memory.upkeep.doctor()
    assert report.cleaned == 1
    assert not leftover.exists()
    assert report.leftovers == ()
    assert report.ok
    assert len(memory.notes.list()) == 1


def test_doctor_reports_a_corrupt_project_file(memory: Memory, project: Path) -> None:
    memory.remember("Some note", body="content")
    project_file = project / ".memdir" / "project.json"
    project_file.write_text("{corrupt", encoding="utf-8")
    reopened = Memory.open(project, home=memory.settings.home)
    report = reopened.upkeep.doctor()
    assert not report.ok
    assert any("project.json" in w for w in report.warnings)
    assert project_file.read_text(encoding="utf-8") == "{corrupt"


# --- doctor --deep: history objects, backups, the audit log, index against files ---------


def _home_with_history_and_backups(memory: Memory) -> None:
    memory.remember("Versioned", "First body.", id="versioned")
    memory.remember("Versioned", "Second body.", id="versioned")
    memory.remember("Doomed", "Doomed body.", id="doomed")
    memory.forget("doomed")
    memory.remember("A preference", "Terse.", type="user")
    memory.search("body", method="lexical")


def _objects(memory: Memory) -> list[Path]:
    key = memory.stores.store(Scope.PROJECT).state_key
    return sorted((memory.home / "memory-history" / key / "objects").rglob("*.md"))


def test_deep_doctor_passes_a_healthy_home(memory: Memory) -> None:
    _home_with_history_and_backups(memory)
    report = memory.upkeep.doctor(deep=True)
    assert report.ok and report.deep
    assert (report.index, report.integrity) == ((), ())


def test_deep_doctor_finds_an_edited_history_object(memory: Memory) -> None:
    _home_with_history_and_backups(memory)
    obj = _objects(memory)[0]
    obj.write_bytes(obj.read_bytes() + b"SECRETIVE EDIT")
    assert memory.upkeep.doctor().ok  # plain doctor does not read history
    report = memory.upkeep.doctor(deep=True)
    assert not report.ok
    [problem] = report.integrity
    assert str(obj) in problem and "SECRETIVE" not in problem


def test_deep_doctor_finds_an_edited_backup(memory: Memory) -> None:
    _home_with_history_and_backups(memory)
    [backup] = memory.backups()
    backup.path.write_bytes(backup.path.read_bytes().replace(b"Doomed body", b"Edited body"))
    report = memory.upkeep.doctor(deep=True)
    assert not report.ok
    [problem] = report.integrity
    assert backup.id in problem and "Edited" not in problem


def test_deep_doctor_includes_the_audit_logs_problems(memory: Memory) -> None:
    _home_with_history_and_backups(memory)
    log = memory.home / "audit" / "audit.jsonl"
    lines = log.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"write"', b'"delete"')
    log.write_bytes(b"\n".join(lines))
    report = memory.upkeep.doctor(deep=True)
    assert not report.ok
    assert report.integrity and all(p.startswith("audit log: ") for p in report.integrity)
    assert report.integrity == tuple(f"audit log: {p}" for p in memory.audit.verify().problems)


def test_deep_doctor_finds_an_index_that_disagrees_with_the_files(memory: Memory) -> None:
    _home_with_history_and_backups(memory)
    [path] = (memory.home / "index").glob("project-*.sqlite3")
    conn = sqlite3.connect(path)
    # A stale row whose stamp the index trusts: a refresh does not re-read the file.
    conn.execute(
        "UPDATE notes SET rev = ?, indexed_ns = mtime_ns + 10000000000 WHERE note_id = 'versioned'",
        ("0" * 64,),
    )
    conn.commit()
    conn.close()
    with Memory.open(memory.settings.project_root, home=memory.settings.home) as later:
        assert later.upkeep.doctor().index == ()  # plain doctor does not compare
        report = later.upkeep.doctor(deep=True)
        assert not report.ok
        [finding] = report.index
        assert "versioned" in finding and "000000000000" in finding
        later.index.reindex()
        assert later.upkeep.doctor(deep=True).ok


# -- the doctor report ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"problems": (FileProblem(Scope.PROJECT, Path("bad.md"), "no frontmatter"),)},
        {"dangling": (("a", "b"),)},
        {"warnings": ("user notes are unavailable",)},
        {"leftovers": (Path(".a.md.tmp-1"),)},
    ],
)
def test_doctor_is_ok_only_when_nothing_needs_attention(change: dict[str, object]) -> None:
    healthy = DoctorReport(problems=(), dangling=(), warnings=(), cleaned=3, counts={"user": 1})
    assert healthy.ok
    assert not dataclasses.replace(healthy, **change).ok  # type: ignore[arg-type]
