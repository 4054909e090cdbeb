"""Tests for `memory/importing.py` through `Memory.import_from` (§5 import): the source
pointer, idempotency and updates with backups, the credential guard, dry runs, scopes,
links between imported items, and the §1.5 limits. The readers themselves are tested in
tests/importers; their fixtures are reused here (copied, so a test can change them)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from files import snapshot, write_project_config
from memdir import Memory
from memdir.core import Scope, parse_note
from memdir.importers.base import iso_ms
from memdir.memory.importing import Decision

FIXTURES = Path(__file__).resolve().parents[1] / "importers" / "fixtures"
AWS_KEY = "AKIAQ3ZB7XK2LMN4TRV5"
PASSWORD = "hunter2-Rv8xQw7"


def entity(name: str, *observations: str, kind: str = "thing") -> str:
    record = {"type": "entity", "name": name, "entityType": kind, "observations": [*observations]}
    return json.dumps(record, ensure_ascii=False)


def relation(source: str, target: str, kind: str) -> str:
    record = {"type": "relation", "from": source, "to": target, "relationType": kind}
    return json.dumps(record, ensure_ascii=False)


def write_jsonl(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def open_memory(project: Path | None, home: Path) -> Memory:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    return Memory.open(project, home=home)


@pytest.fixture
def mem(project: Path, home: Path) -> Iterator[Memory]:
    m = open_memory(project, home)
    try:
        yield m
    finally:
        m.close()


def on_disk(memory: Memory) -> dict[str, dict[str, object]]:
    """Every note file of every scope as its frontmatter, by id."""
    out: dict[str, dict[str, object]] = {}
    for scope in memory.scopes:
        folder = memory.stores.directory(scope)
        if not folder.is_dir():
            continue
        for file in sorted(folder.glob("*.md")):
            note = parse_note(file.read_bytes(), file_id=file.stem)  # every file parses
            head = json.loads(file.read_text("utf-8").split("\n")[1])
            out[note.id] = {"scope": scope.value, **head}
    return out


# -- sources: a fixture copied into tmp_path, and how to change one of its items ------------


def _mcp(tmp: Path) -> Path:
    return Path(shutil.copy2(FIXTURES / "mcp-memory" / "memory.jsonl", tmp / "memory.jsonl"))


def _mcp_change(path: Path) -> str:
    text = path.read_text("utf-8")
    path.write_text(text.replace("Founded 2019", "Founded 2018"), "utf-8")
    return "Acme Analytics"


def _mem0(name: str):  # type: ignore[no-untyped-def]
    def copy(tmp: Path) -> Path:
        return Path(shutil.copy2(FIXTURES / "mem0" / name, tmp / name))

    return copy


def _mem0_change(path: Path) -> str:
    doc = json.loads(path.read_text("utf-8"))
    first = doc["results"][0]
    first["memory"] = first["memory"] + " (and light themes at night)"
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), "utf-8")
    return str(first["id"])


def _markdown(tmp: Path) -> Path:
    pytest.importorskip("memdir.importers.markdown")
    return Path(shutil.copytree(FIXTURES / "markdown" / "vault", tmp / "vault"))


def _markdown_change(path: Path) -> str:
    file = path / "Projects" / "Alpha.md"
    file.write_text(file.read_text("utf-8") + "\nA line added later.\n", "utf-8")
    return "Projects/Alpha.md"


SOURCES = {
    "mcp-memory": (_mcp, _mcp_change),
    "mem0-oss": (_mem0("oss_get_all.json"), _mem0_change),
    "mem0-platform": (_mem0("platform_get_all.json"), _mem0_change),
    "markdown": (_markdown, _markdown_change),
}
KIND_OF = {"mcp-memory": "mcp-memory", "mem0-oss": "mem0", "mem0-platform": "mem0"}


def _kind(name: str) -> str:
    return KIND_OF.get(name, name)


# -- pointers, idempotency, updates ----------------------------------------------------------


@pytest.mark.parametrize("name", list(SOURCES))
@pytest.mark.parametrize("named", [True, False], ids=["from", "detected"])
def test_a_second_import_changes_nothing(
    mem: Memory, project: Path, home: Path, tmp_path: Path, name: str, named: bool
) -> None:
    source = SOURCES[name][0](tmp_path)
    kind = _kind(name) if named else None
    first = mem.importer.run(source, kind)
    assert first.kind == _kind(name)
    assert first.imported > 0
    assert first.refused == ()
    assert (first.updated, first.unchanged) == (0, 0)
    assert len(set(first.notes)) == first.imported
    notes = on_disk(mem)
    assert set(notes) == set(first.notes)
    for head in notes.values():
        pointer = head["source"]
        assert isinstance(pointer, str)
        assert pointer.startswith(f"{_kind(name)}:")

    before = snapshot(project, home)
    second = mem.importer.run(source, kind)
    assert (second.imported, second.updated, second.unchanged) == (0, 0, first.imported)
    assert second.notes == ()
    assert second.backup_ids == ()
    assert snapshot(project, home) == before
    assert mem.backups(limit=None) == []


@pytest.mark.parametrize("name", list(SOURCES))
def test_a_changed_source_item_updates_its_note_with_a_restorable_backup(
    mem: Memory, tmp_path: Path, name: str
) -> None:
    copy, change = SOURCES[name]
    source = copy(tmp_path)
    first = mem.importer.run(source, _kind(name))
    before = on_disk(mem)
    changed_key = change(source)
    pointer_end = f"#{changed_key}"
    (target,) = [i for i, h in before.items() if str(h["source"]).endswith(pointer_end)]
    old = mem.read(target)

    second = mem.importer.run(source, _kind(name))
    assert (second.imported, second.updated) == (0, 1)
    assert second.unchanged == first.imported - 1
    assert second.updated_notes == (target,)
    assert second.notes == (target,)
    after = on_disk(mem)
    assert set(after) == set(before)  # no new notes
    for note_id in before:
        if note_id != target:
            assert after[note_id] == before[note_id]
    assert after[target]["source"] == before[target]["source"]
    new = mem.read(target)
    assert new.hash != old.hash
    assert new.created_at == old.created_at

    (backup_id,) = second.backup_ids
    (record,) = [b for b in mem.backups(limit=None) if b.id == backup_id]
    assert record.note_id == target
    assert record.reason == "import"
    mem.backups.restore(backup_id)
    assert mem.read(target).hash == old.hash


def test_the_pointer_names_kind_source_and_key(mem: Memory, tmp_path: Path) -> None:
    source = _mcp(tmp_path)
    mem.importer.run(source, "mcp-memory")
    pointers = {str(h["source"]) for h in on_disk(mem).values()}
    assert f"mcp-memory:{source}#Ada Lovelace" in pointers
    assert f"mcp-memory:{source}#東京オフィス" in pointers


def test_source_timestamps_are_kept(mem: Memory, tmp_path: Path) -> None:
    source = _mem0("oss_get_all.json")(tmp_path)
    mem.importer.run(source, "mem0")
    doc = json.loads(source.read_text("utf-8"))
    by_pointer = {str(h["source"]).rsplit("#", 1)[1]: h for h in on_disk(mem).values()}
    for item in doc["results"]:
        head = by_pointer[item["id"]]
        created = iso_ms(item["created_at"])
        assert head["createdAt"] == created
        assert head["updatedAt"] == (iso_ms(item["updated_at"]) or created)


def test_a_note_edited_after_import_is_kept_when_the_source_did_not_change(
    mem: Memory, project: Path, home: Path, tmp_path: Path
) -> None:
    """Issue 24, failure 4: re-importing an unchanged source never replaces a local edit."""
    source = _mcp(tmp_path)
    first = mem.importer.run(source, "mcp-memory")
    (ada,) = [i for i, h in on_disk(mem).items() if str(h["source"]).endswith("#Ada Lovelace")]
    edited = mem.remember("Ada Lovelace (person)", "edited by hand", id=ada)
    before = snapshot(project, home)
    report = mem.importer.run(source, "mcp-memory")
    assert snapshot(project, home) == before
    assert (report.imported, report.updated, report.kept_local, report.kept_both) == (0, 0, 1, 0)
    assert report.unchanged == first.imported - 1
    (decision,) = report.decisions
    assert (decision.id, decision.decision, decision.new_id) == (ada, Decision.KEPT_LOCAL, None)
    assert "changed since the last import" in decision.reason
    assert mem.read(ada).hash == edited.note.hash

    forced = mem.importer.run(source, "mcp-memory", overwrite=True)
    assert (forced.updated, forced.overwritten, forced.updated_notes) == (1, 1, (ada,))
    assert forced.decisions[0].decision is Decision.OVERWRITTEN
    assert mem.read(ada).body != "edited by hand"
    (backup_id,) = forced.backup_ids
    mem.backups.restore(backup_id)
    assert mem.read(ada).hash == edited.note.hash


def test_an_update_from_a_source_without_times_moves_updated_at(
    mem: Memory, tmp_path: Path
) -> None:
    source = _mcp(tmp_path)
    mem.importer.run(source, "mcp-memory")
    (acme,) = [i for i, h in on_disk(mem).items() if str(h["source"]).endswith("#Acme Analytics")]
    file = mem.stores.directory("project") / f"{acme}.md"
    old = 1_600_000_000_000  # as if the first import ran long ago (times are not hashed)
    lines = file.read_text("utf-8").split("\n")
    head = json.loads(lines[1])
    head["createdAt"] = head["updatedAt"] = old
    lines[1] = json.dumps(head, ensure_ascii=False, separators=(",", ":"))
    file.write_text("\n".join(lines), "utf-8")
    _mcp_change(source)
    assert mem.importer.run(source, "mcp-memory").updated_notes == (acme,)
    note = mem.read(acme)
    assert note.created_at == old
    assert note.updated_at > old


# -- the credential guard -------------------------------------------------------------------


def test_items_holding_credentials_are_refused_and_the_rest_imported(
    mem: Memory, project: Path, home: Path, tmp_path: Path
) -> None:
    source = write_jsonl(
        tmp_path / "memory.jsonl",
        entity("Ops", f"The deploy key is {AWS_KEY}"),
        entity("Db", f"password: {PASSWORD}"),
        entity("Web", "Serves the pages"),
        entity("Docs", "Lives in the wiki"),
    )
    report = mem.importer.run(source, "mcp-memory")
    assert report.imported == 2
    assert len(report.refused) == 2
    reasons = " ".join(r.reason for r in report.refused)
    assert "AWS access key id" in reasons
    assert "password" in reasons
    assert all(r.source.startswith("memory.jsonl:") for r in report.refused)
    assert AWS_KEY not in repr(report) and PASSWORD not in repr(report)
    assert {n.summary for n in mem.notes.list()} == {"Web (thing)", "Docs (thing)"}
    for data in snapshot(project, home).values():
        assert AWS_KEY.encode() not in data
        assert PASSWORD.encode() not in data


def test_mcp_memory_refusals_name_the_entity_they_refuse(mem: Memory, tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "memory.jsonl",
        entity("Ops", f"The deploy key is {AWS_KEY}"),
        entity("Db", f"password: {PASSWORD}"),
    )
    report = mem.importer.run(source, "mcp-memory")
    assert len({r.source for r in report.refused}) == 2


def test_a_refused_item_fixed_in_the_source_is_imported_next_time(
    mem: Memory, tmp_path: Path
) -> None:
    source = write_jsonl(
        tmp_path / "memory.jsonl",
        entity("Ops", f"The deploy key is {AWS_KEY}"),
        entity("Web", "Serves the pages"),
    )
    assert mem.importer.run(source, "mcp-memory").imported == 1
    write_jsonl(
        source, entity("Ops", "The deploy key is in the vault"), entity("Web", "Serves the pages")
    )
    again = mem.importer.run(source, "mcp-memory")
    assert (again.imported, again.updated, again.unchanged, again.refused) == (1, 0, 1, ())


# -- dry run --------------------------------------------------------------------------------


def test_a_dry_run_writes_nothing_and_reports_the_plan(
    mem: Memory, project: Path, home: Path, tmp_path: Path
) -> None:
    source = write_jsonl(
        tmp_path / "memory.jsonl",
        entity("Ops", f"The deploy key is {AWS_KEY}"),
        entity("Web", "Serves the pages"),
        entity("Docs", "Lives in the wiki"),
    )
    mem.notes.list()  # directories and state made by opening, not by the dry run
    before = snapshot(project, home)
    plan = mem.importer.run(source, "mcp-memory", dry_run=True)
    assert snapshot(project, home) == before
    assert plan.dry_run
    assert (plan.imported, plan.updated, plan.unchanged) == (2, 0, 0)
    assert plan.by_scope == {"project": 2}
    assert plan.by_type == {"none": 2}
    assert len(plan.refused) == 1 and "AWS access key id" in plan.refused[0].reason
    assert mem.notes.list() == []


def test_a_dry_run_reports_updates_without_backing_up(
    mem: Memory, project: Path, home: Path, tmp_path: Path
) -> None:
    source = _mcp(tmp_path)
    first = mem.importer.run(source, "mcp-memory")
    _mcp_change(source)
    before = snapshot(project, home)
    plan = mem.importer.run(source, "mcp-memory", dry_run=True)
    assert snapshot(project, home) == before
    assert (plan.imported, plan.updated, plan.unchanged) == (0, 1, first.imported - 1)
    assert len(plan.updated_notes) == 1
    assert plan.backup_ids == ()
    assert mem.backups(limit=None) == []


def test_a_dry_run_counts_by_type_and_scope(mem: Memory, tmp_path: Path) -> None:
    pytest.importorskip("memdir.importers.claude_code")
    source = FIXTURES / "claude-code" / "-home-ana-shop"
    plan = mem.importer.run(source, "claude-code", dry_run=True)
    real = mem.importer.run(source, "claude-code")
    assert plan.by_type == real.by_type
    assert plan.by_scope == real.by_scope
    assert (plan.imported, plan.updated, plan.unchanged) == (real.imported, 0, 0)
    if real.by_type.get("user"):
        assert real.by_scope.get("user") == real.by_type["user"]  # §1.3 default scopes


# -- scopes ---------------------------------------------------------------------------------


def test_scope_user_puts_everything_in_the_user_scope(mem: Memory, tmp_path: Path) -> None:
    report = mem.importer.run(_mcp(tmp_path), "mcp-memory", scope="user")
    assert report.by_scope == {"user": report.imported}
    assert {h["scope"] for h in on_disk(mem).values()} == {"user"}
    assert mem.notes.list(scope="project") == []
    again = mem.importer.run(tmp_path / "memory.jsonl", "mcp-memory", scope="user")
    assert again.unchanged == report.imported


def test_without_a_project_notes_go_to_the_user_scope_with_a_warning(
    home: Path, tmp_path: Path
) -> None:
    m = open_memory(None, home)
    try:
        assert m.scopes == (Scope.USER,)
        report = m.importer.run(_mcp(tmp_path), "mcp-memory")
        assert report.by_scope == {"user": report.imported}
        assert report.imported == 6
        assert any("no project is open" in w for w in m.warnings)
        assert len(m.notes.list(scope="user")) == 6
    finally:
        m.close()


# -- links ----------------------------------------------------------------------------------


def test_relations_become_links_to_the_imported_ids(mem: Memory, tmp_path: Path) -> None:
    mem.importer.run(_mcp(tmp_path), "mcp-memory")
    by_name = {str(h["source"]).rsplit("#", 1)[1]: i for i, h in on_disk(mem).items()}
    ada = mem.read(by_name["Ada Lovelace"])
    assert f"- works_at [[{by_name['Acme Analytics']}]]" in ada.body
    assert f"- leads [[{by_name['Project Helios']}]]" in ada.body
    jurgen = mem.read(by_name["Jürgen Müller"])
    assert f"- visits [[{by_name['東京オフィス']}]]" in jurgen.body
    helios = mem.read(by_name["Project Helios"])
    assert "- depends_on Kafka" in helios.body  # no such entity: the text stays
    assert "[[" not in helios.body
    report = mem.notes.links(by_name["Ada Lovelace"])
    assert {link.target for link in report.outgoing if link.scope is not None} == {
        by_name["Acme Analytics"],
        by_name["Project Helios"],
    }


def test_a_second_import_keeps_the_links(mem: Memory, tmp_path: Path) -> None:
    source = _mcp(tmp_path)
    mem.importer.run(source, "mcp-memory")
    before = on_disk(mem)
    bodies = {i: mem.read(i).body for i in before}
    assert mem.importer.run(source, "mcp-memory").unchanged == len(before)
    assert {i: mem.read(i).body for i in before} == bodies


def test_a_relation_to_a_refused_entity_keeps_its_text(mem: Memory, tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "memory.jsonl",
        entity("Ops", f"The deploy key is {AWS_KEY}"),
        entity("Web", "Serves the pages"),
        relation("Web", "Ops", "owned_by"),
    )
    report = mem.importer.run(source, "mcp-memory")
    assert report.imported == 1
    (web,) = report.notes
    assert "- owned_by Ops" in mem.read(web).body
    assert mem.notes.links(web).outgoing == ()


# -- limits ---------------------------------------------------------------------------------


def test_an_item_over_max_note_bytes_is_refused_with_the_reason(
    project: Path, home: Path, tmp_path: Path
) -> None:
    write_project_config(project, "[memory]\nmaxNoteBytes = 200\n")
    source = write_jsonl(
        tmp_path / "memory.jsonl",
        entity("Small", "fits"),
        entity("Huge", "x" * 400),
        entity("Other", "fits too"),
    )
    m = open_memory(project, home)
    try:
        report = m.importer.run(source, "mcp-memory")
        assert report.imported == 2
        (refusal,) = report.refused
        assert "memory.maxNoteBytes" in refusal.reason
        assert "200" in refusal.reason
        assert {n.summary for n in m.notes.list()} == {"Small (thing)", "Other (thing)"}
    finally:
        m.close()


def test_reaching_max_notes_refuses_the_rest_with_the_reason(
    project: Path, home: Path, tmp_path: Path
) -> None:
    write_project_config(project, "[memory]\nmaxNotes = 3\n")
    source = write_jsonl(
        tmp_path / "memory.jsonl", *(entity(f"E{i}", f"fact {i}") for i in range(7))
    )
    m = open_memory(project, home)
    try:
        report = m.importer.run(source, "mcp-memory")
        assert report.imported == 3
        assert len(report.refused) == 4
        assert all("memory.maxNotes" in r.reason for r in report.refused)
        files = on_disk(m)  # every file parses: nothing torn
        assert len(files) == 3
        assert set(files) == set(report.notes)
        again = m.importer.run(source, "mcp-memory")
        assert (again.imported, again.unchanged, len(again.refused)) == (0, 3, 4)
    finally:
        m.close()


def test_a_dry_run_predicts_max_notes_refusals(project: Path, home: Path, tmp_path: Path) -> None:
    write_project_config(project, "[memory]\nmaxNotes = 3\n")
    source = write_jsonl(
        tmp_path / "memory.jsonl", *(entity(f"E{i}", f"fact {i}") for i in range(7))
    )
    m = open_memory(project, home)
    try:
        plan = m.importer.run(source, "mcp-memory", dry_run=True)
        real = m.importer.run(source, "mcp-memory")
        assert (plan.imported, len(plan.refused)) == (real.imported, len(real.refused))
    finally:
        m.close()


# -- the importer's own checks ----------------------------------------------------------------


def test_an_unknown_kind_is_refused(mem: Memory, tmp_path: Path) -> None:
    from memdir.errors import InvalidInput

    with pytest.raises(InvalidInput, match="unknown import kind"):
        mem.importer.run(_mcp(tmp_path), "evernote")


def test_a_scope_that_is_not_open_is_refused_before_reading(home: Path, tmp_path: Path) -> None:
    from memdir import MemdirError

    m = open_memory(None, home)
    try:
        with pytest.raises(MemdirError):
            m.importer.run(tmp_path / "does-not-exist.jsonl", "mcp-memory", scope="project")
    finally:
        m.close()
