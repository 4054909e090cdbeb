"""Issue 24, failure 4: an import meeting a local note with the same id (memdir's export)
or the same source (every other kind) never silently replaces it. Each such note gets an
explicit decision in the report — updated (the import is newer or only the source
changed; backed up), kept local (the local note is newer), kept both (which is newer
cannot be told: the import's version becomes a new note beside it) — `dry_run` shows the
decisions and writes nothing, and `overwrite` replaces with a backup.

Exports are written here as a memdir export folder holding exactly the note file wanted
(any archive holding a note with the same id), or made by `Memory.exporter`."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from files import snapshot
from memdir import Memory
from memdir.core import Note, NoteType, Scope, parse_note, render_note
from memdir.memory.importing import BASE_KEY, Decision, ImportReport

FIXTURES = Path(__file__).resolve().parents[1] / "importers" / "fixtures"
DAY = 86_400_000


def open_memory(project: Path | None, home: Path) -> Memory:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    return Memory.open(project, home=home)


@pytest.fixture
def mem(project: Path, home: Path) -> Iterator[Memory]:
    m = open_memory(project, home)
    try:
        yield m
    finally:
        m.close()


def export_folder(folder: Path, *notes: Note, scope: Scope = Scope.PROJECT) -> Path:
    """A memdir export folder holding `notes` as they are (their ids, times and content)."""
    (folder / scope.value).mkdir(parents=True)
    entries = []
    for note in notes:
        path = f"{scope.value}/{note.id}.md"
        (folder / path).write_bytes(render_note(note))
        entries.append({"id": note.id, "scope": scope.value, "path": path, "hash": note.hash})
    index = {"format": "memdir-export", "version": 1, "exported_at": 1, "notes": entries}
    (folder / "index.json").write_text(json.dumps(index), encoding="utf-8")
    return folder


def like(local: Note, **changes: object) -> Note:
    """A note with `local`'s id and fields but `changes` (an export's version of it)."""
    fields = {
        "id": local.id,
        "summary": local.summary,
        "body": local.body,
        "type": local.type,
        "tags": local.tags,
        "created_at": local.created_at,
        "updated_at": local.updated_at,
    }
    fields.update(changes)
    if "created_at" not in changes:  # created no later than updated, as the importer keeps it
        fields["created_at"] = min(local.created_at, int(fields["updated_at"]))  # type: ignore[call-overload]
    return Note(**fields)  # type: ignore[arg-type]


def files_of(memory: Memory) -> dict[str, bytes]:
    """The note files of every scope (the audit log's head moves on its own schedule)."""
    return snapshot(*(memory.stores.directory(s) for s in memory.scopes))


def items_add_up(report: ImportReport, read: int) -> None:
    """Every item read ends in exactly one count."""
    counted = report.imported + report.updated + report.unchanged
    counted += report.kept_local + report.kept_both + len(report.refused)
    assert counted == read, report


# -- memdir's own export: the same id ---------------------------------------------------------


def test_an_older_export_over_a_newer_local_note_keeps_the_local_note(
    mem: Memory, tmp_path: Path
) -> None:
    local = mem.remember("Deploys go out on Wednesdays", "Moved in March.", id="deploys").note
    older = like(local, body="Tuesdays, as before.", updated_at=local.updated_at - DAY)
    source = export_folder(tmp_path / "export", older)
    before = files_of(mem)

    report = mem.importer.run(source, "memdir")

    assert files_of(mem) == before  # nothing written, nothing backed up
    assert mem.backups(limit=None) == []
    assert (report.imported, report.updated, report.unchanged) == (0, 0, 0)
    assert (report.kept_local, report.kept_both, report.overwritten) == (1, 0, 0)
    assert report.notes == () and report.backup_ids == ()
    (decision,) = report.decisions
    assert (decision.id, decision.scope, decision.new_id) == ("deploys", "project", None)
    assert decision.decision is Decision.KEPT_LOCAL
    assert "the local note is newer" in decision.reason
    assert decision.source == "project/deploys.md"
    assert mem.read("deploys").body == "Moved in March."
    items_add_up(report, 1)


def test_an_export_of_an_earlier_version_is_older_whatever_its_time_says(
    mem: Memory, tmp_path: Path
) -> None:
    first = mem.remember("Deploys go out on Tuesdays", "Every week.", id="deploys").note
    out = tmp_path / "out.tar.gz"
    mem.exporter.run(out)
    mem.remember("Deploys go out on Wednesdays", "Moved in March.", id="deploys")
    # the export's time moved forward (a clock ahead, a hand edit): its content is still
    # one this note had before, so the local note is the newer one
    later = like(first, updated_at=first.updated_at + 10 * DAY)
    skewed = export_folder(tmp_path / "skewed", later)
    before = files_of(mem)
    for source in (out, skewed):
        report = mem.importer.run(source, "memdir")
        assert report.kept_local == 1 and report.updated == 0, source
        (decision,) = report.decisions
        assert decision.reason == "the import holds an earlier version of the local note"
    assert files_of(mem) == before
    assert mem.read("deploys").summary == "Deploys go out on Wednesdays"


def test_a_newer_export_updates_the_local_note_with_a_backup(
    project: Path, home: Path, tmp_path: Path
) -> None:
    """The machine-transfer case: export here, import there, edit here, import again."""
    with open_memory(project, home) as here, open_memory(None, tmp_path / "there") as there:
        here.remember("Deploys go out on Tuesdays", "Every week.", id="deploys", type="user")
        here.exporter.run(tmp_path / "one.zip")
        assert there.importer.run(tmp_path / "one.zip").imported == 1
        old = there.read("deploys")
        newer = here.remember("Deploys go out on Wednesdays", "Moved.", id="deploys").note
        assert newer.updated_at > old.updated_at
        here.exporter.run(tmp_path / "two.zip")

        report = there.importer.run(tmp_path / "two.zip")

        assert (report.imported, report.updated, report.kept_local, report.kept_both) == (
            0,
            1,
            0,
            0,
        )
        assert report.updated_notes == ("deploys",)
        (decision,) = report.decisions
        assert decision.decision is Decision.UPDATED
        assert "the import is newer" in decision.reason
        assert there.read("deploys").hash == newer.hash
        (backup_id,) = report.backup_ids
        (record,) = [b for b in there.backups(limit=None) if b.id == backup_id]
        assert (record.note_id, record.reason) == ("deploys", "import")
        there.backups.restore(backup_id)
        assert there.read("deploys").hash == old.hash


def test_the_same_id_with_diverged_content_keeps_both(mem: Memory, tmp_path: Path) -> None:
    local = mem.remember("Pricing cards use borders", "Thin grey.", id="pricing").note
    theirs = like(local, summary="Pricing cards use fills", body="Soft blue.", tags=("design",))
    source = export_folder(tmp_path / "export", theirs)  # the same updatedAt: no telling

    report = mem.importer.run(source, "memdir")

    assert (report.imported, report.updated, report.kept_local, report.kept_both) == (0, 0, 0, 1)
    assert report.backup_ids == ()
    (decision,) = report.decisions
    assert (decision.id, decision.decision) == ("pricing", Decision.KEPT_BOTH)
    assert "which is newer is unknown" in decision.reason
    copy_id = decision.new_id
    assert copy_id is not None and copy_id.startswith("pricing-cards-use-fills-")
    assert report.notes == (copy_id,)
    assert mem.read("pricing").hash == local.hash  # the local note as it was
    copy = mem.read(copy_id)
    assert (copy.summary, copy.body, copy.tags) == (theirs.summary, theirs.body, ("design",))
    assert copy.updated_at == theirs.updated_at
    assert sorted(n.id for n in mem.notes.list()) == sorted(["pricing", copy_id])
    items_add_up(report, 1)

    again = mem.importer.run(source, "memdir")  # the copy is found: no second one
    assert (again.unchanged, again.kept_both, again.notes, again.decisions) == (1, 0, (), ())
    assert len(mem.notes.list()) == 2


def test_keep_both_counts_against_max_notes(project: Path, home: Path, tmp_path: Path) -> None:
    (home / "config.toml").parent.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        '[embed]\nprovider = "none"\n[memory]\nmaxNotes = 1\n', encoding="utf-8"
    )
    with Memory.open(project, home=home) as full:
        local = full.remember("Pricing cards use borders", id="pricing").note
        source = export_folder(tmp_path / "export", like(local, body="Another text."))
        report = full.importer.run(source, "memdir")
        assert (report.kept_both, len(report.refused)) == (0, 1)
        assert "maxNotes" in report.refused[0].reason
        assert report.decisions == ()
        assert [n.id for n in full.notes.list()] == ["pricing"]


def test_an_export_holding_no_time_keeps_both(mem: Memory, tmp_path: Path) -> None:
    local = mem.remember("Release train", "Leaves on Tuesdays.", id="release").note
    folder = export_folder(tmp_path / "export", like(local, body="Leaves on Thursdays."))
    file = folder / "project" / "release.md"
    lines = file.read_text("utf-8").split("\n")
    head = json.loads(lines[1])
    del head["createdAt"], head["updatedAt"]
    lines[1] = json.dumps(head, separators=(",", ":"))
    file.write_text("\n".join(lines), "utf-8")
    index = json.loads((folder / "index.json").read_text("utf-8"))
    index["notes"] = []  # unlisted: read as it is, with no time from the index either
    (folder / "index.json").write_text(json.dumps(index), "utf-8")

    report = mem.importer.run(folder, "memdir")
    assert report.kept_both == 1
    assert "does not say when it changed" in report.decisions[0].reason
    assert mem.read("release").body == "Leaves on Tuesdays."


def test_a_dry_run_shows_every_decision_and_writes_nothing(mem: Memory, tmp_path: Path) -> None:
    old = mem.remember("Old news", "Local, newer.", id="old").note
    same = mem.remember("Same everywhere", "Identical.", id="same").note
    both = mem.remember("Diverged", "Local text.", id="both").note
    new = mem.remember("Superseded soon", "Local, older.", id="new").note
    source = export_folder(
        tmp_path / "export",
        like(old, body="Export, older.", updated_at=old.updated_at - DAY),
        like(same),
        like(both, body="Export text."),
        like(new, body="Export, newer.", updated_at=new.updated_at + DAY),
        Note(id="fresh", summary="Only in the export", body="New.", created_at=5, updated_at=5),
    )
    before = files_of(mem)

    plan = mem.importer.run(source, "memdir", dry_run=True)

    assert files_of(mem) == before
    assert mem.backups(limit=None) == []
    assert plan.dry_run
    assert (plan.imported, plan.updated, plan.unchanged) == (1, 1, 1)
    assert (plan.kept_local, plan.kept_both, plan.overwritten) == (1, 1, 0)
    assert {d.id: d.decision for d in plan.decisions} == {
        "old": Decision.KEPT_LOCAL,
        "both": Decision.KEPT_BOTH,
        "new": Decision.UPDATED,
    }
    assert plan.updated_notes == ("new",)
    assert plan.backup_ids == ()
    items_add_up(plan, 5)

    real = mem.importer.run(source, "memdir")
    assert (real.imported, real.updated, real.unchanged) == (1, 1, 1)
    assert (real.kept_local, real.kept_both) == (1, 1)
    assert mem.read("old").hash == old.hash
    assert mem.read("same").hash == same.hash
    assert mem.read("both").hash == both.hash
    assert mem.read("new").body == "Export, newer."
    assert len(real.backup_ids) == 1


def test_overwrite_replaces_newer_and_diverged_notes_with_backups(
    mem: Memory, tmp_path: Path
) -> None:
    old = mem.remember("Old news", "Local, newer.", id="old").note
    both = mem.remember("Diverged", "Local text.", id="both").note
    source = export_folder(
        tmp_path / "export",
        like(old, body="Export, older.", updated_at=old.updated_at - DAY),
        like(both, body="Export text."),
    )
    plan = mem.importer.run(source, "memdir", dry_run=True, overwrite=True)
    assert (plan.updated, plan.overwritten, plan.kept_local, plan.kept_both) == (2, 2, 0, 0)
    assert mem.read("old").hash == old.hash

    report = mem.importer.run(source, "memdir", overwrite=True)

    assert (report.updated, report.overwritten, report.kept_local, report.kept_both) == (2, 2, 0, 0)
    assert sorted(report.updated_notes) == ["both", "old"]
    assert {d.decision for d in report.decisions} == {Decision.OVERWRITTEN}
    reasons = {d.id: d.reason for d in report.decisions}
    assert reasons["old"].startswith("the local note is newer")
    assert reasons["old"].endswith("replaced (overwrite)")
    assert mem.read("old").body == "Export, older."
    assert mem.read("old").updated_at == old.updated_at - DAY
    assert mem.read("both").body == "Export text."
    assert len(mem.notes.list()) == 2  # no copies
    backups = {b.id: b for b in mem.backups(limit=None)}
    assert set(report.backup_ids) <= set(backups)
    for backup_id in report.backup_ids:
        assert backups[backup_id].reason == "import"
        mem.backups.restore(backup_id)
    assert mem.read("old").hash == old.hash
    assert mem.read("both").hash == both.hash


def test_an_identical_note_is_unchanged_whatever_its_times(mem: Memory, tmp_path: Path) -> None:
    local = mem.remember("Same everywhere", "Identical.", tags=["a"], id="same").note
    source = export_folder(
        tmp_path / "export", like(local, created_at=1, updated_at=local.updated_at + DAY)
    )
    before = files_of(mem)
    report = mem.importer.run(source, "memdir", overwrite=True)
    assert (report.unchanged, report.updated, report.decisions) == (1, 0, ())
    assert files_of(mem) == before


def test_a_user_scope_note_is_decided_in_its_scope(mem: Memory, tmp_path: Path) -> None:
    local = mem.remember("Prefers terse answers", "Short.", type="user", id="terse").note
    assert mem.read("terse").scope is Scope.USER
    older = like(local, body="Long.", updated_at=local.updated_at - DAY, type=NoteType.USER)
    report = mem.importer.run(export_folder(tmp_path / "e", older, scope=Scope.USER), "memdir")
    (decision,) = report.decisions
    assert (decision.scope, decision.decision) == ("user", Decision.KEPT_LOCAL)
    assert mem.read("terse").body == "Short."


# -- every other kind: the same source, with the base hash ----------------------------------


def _mcp(tmp: Path) -> Path:
    return Path(shutil.copy2(FIXTURES / "mcp-memory" / "memory.jsonl", tmp / "memory.jsonl"))


def _ada(memory: Memory) -> str:
    (found,) = [
        n.id
        for n in memory.notes.list()
        if str(dict(n.extra).get("source")).endswith("#Ada Lovelace")
    ]
    return found


def _change_ada(source: Path) -> None:
    text = source.read_text("utf-8")
    assert "Ada Lovelace" in text
    lines = []
    for line in text.splitlines():
        record = json.loads(line) if line.strip() else None
        if isinstance(record, dict) and record.get("name") == "Ada Lovelace":
            record["observations"] = [*record["observations"], "Added in the source later"]
            line = json.dumps(record, ensure_ascii=False)
        lines.append(line)
    source.write_text("\n".join(lines) + "\n", "utf-8")


def test_an_imported_note_keeps_the_hash_of_what_the_import_wrote(
    mem: Memory, tmp_path: Path
) -> None:
    mem.importer.run(_mcp(tmp_path), "mcp-memory")
    for note in mem.notes.list():
        assert dict(note.extra)[BASE_KEY] == note.hash


def test_only_the_source_changed_updates_with_a_backup(mem: Memory, tmp_path: Path) -> None:
    source = _mcp(tmp_path)
    mem.importer.run(source, "mcp-memory")
    ada = _ada(mem)
    old = mem.read(ada)
    _change_ada(source)
    report = mem.importer.run(source, "mcp-memory")
    (decision,) = report.decisions
    assert (decision.id, decision.decision) == (ada, Decision.UPDATED)
    assert decision.reason == "the source changed since the last import; the local note did not"
    assert "Added in the source later" in mem.read(ada).body
    assert dict(mem.read(ada).extra)[BASE_KEY] == mem.read(ada).hash
    (backup_id,) = report.backup_ids
    mem.backups.restore(backup_id)
    assert mem.read(ada).hash == old.hash


def test_both_changed_since_the_last_import_keeps_both(mem: Memory, tmp_path: Path) -> None:
    source = _mcp(tmp_path)
    first = mem.importer.run(source, "mcp-memory")
    ada = _ada(mem)
    edited = mem.remember("Ada Lovelace (person)", "Edited here.", id=ada).note
    _change_ada(source)

    plan = mem.importer.run(source, "mcp-memory", dry_run=True)
    assert (plan.kept_both, plan.updated, plan.kept_local) == (1, 0, 0)
    report = mem.importer.run(source, "mcp-memory")

    assert (report.imported, report.updated, report.kept_local, report.kept_both) == (0, 0, 0, 1)
    assert report.unchanged == first.imported - 1
    (decision,) = report.decisions
    assert decision.decision is Decision.KEPT_BOTH
    assert decision.reason == "both the source and the local note changed since the last import"
    assert mem.read(ada).hash == edited.hash
    assert decision.new_id is not None
    copy = mem.read(decision.new_id)
    assert "Added in the source later" in copy.body
    # a note of its own: the local note stays the one the source's pointer names
    assert "source" not in dict(copy.extra) and BASE_KEY not in dict(copy.extra)
    assert _ada(mem) == ada
    items_add_up(report, first.imported)

    state = files_of(mem)
    again = mem.importer.run(source, "mcp-memory")
    assert (again.kept_both, again.unchanged, again.notes) == (0, first.imported, ())
    assert files_of(mem) == state


def test_a_flag_changed_here_is_kept_when_the_source_did_not_change(
    mem: Memory, tmp_path: Path
) -> None:
    source = _mcp(tmp_path)
    mem.importer.run(source, "mcp-memory")
    ada = _ada(mem)
    note = mem.read(ada)
    private = Note(
        id=note.id,
        summary=note.summary,
        body=note.body,
        created_at=note.created_at,
        updated_at=note.updated_at + 1,
        private=True,
        extra=note.extra,
    )
    file = mem.stores.directory("project") / f"{ada}.md"
    file.write_bytes(render_note(private))
    report = mem.importer.run(source, "mcp-memory")
    assert report.kept_local == 1
    assert parse_note(file.read_bytes()).private is True  # not made readable to agents again


def test_a_note_imported_before_the_hash_was_kept(mem: Memory, tmp_path: Path) -> None:
    """Notes an earlier memdir imported carry no base: an unchanged source leaves them as
    they are (not even rewritten to add one); a changed source that gives no time (an MCP
    memory graph) cannot say which is newer, so both are kept."""
    source = _mcp(tmp_path)
    mem.importer.run(source, "mcp-memory")
    folder = mem.stores.directory("project")
    for file in folder.glob("*.md"):
        note = parse_note(file.read_bytes())
        extra = tuple((k, v) for k, v in note.extra if k != BASE_KEY)
        file.write_bytes(render_note(Note(**{**_fields(note), "extra": extra})))
    state = files_of(mem)
    again = mem.importer.run(source, "mcp-memory")
    assert (again.updated, again.kept_both, again.decisions) == (0, 0, ())
    assert files_of(mem) == state

    _change_ada(source)
    report = mem.importer.run(source, "mcp-memory")
    assert (report.kept_both, report.updated) == (1, 0)
    assert "does not say when it changed" in report.decisions[0].reason


def _fields(note: Note) -> dict[str, object]:
    return {
        "id": note.id,
        "summary": note.summary,
        "body": note.body,
        "type": note.type,
        "tags": note.tags,
        "created_at": note.created_at,
        "updated_at": note.updated_at,
        "supersedes": note.supersedes,
        "private": note.private,
        "extra": note.extra,
    }
