"""The mcp-memory reader: the reference MCP memory server's knowledge graph into notes."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.core import Note
from memdir.core.note import MAX_SUMMARY_CHARS
from memdir.errors import InvalidInput
from memdir.importers import mcp_memory
from memdir.importers.base import REF_PATTERN, Imported, Reading

FIXTURES = Path(__file__).parent / "fixtures" / "mcp-memory"


def by_key(reading: Reading) -> dict[str, Imported]:
    return {item.key: item for item in reading.items}


def reasons(reading: Reading) -> dict[str, str]:
    return {p.origin: p.reason for p in reading.problems}


def resolved(item: Imported) -> str:
    """The body with each reference shown as ``<target>`` (what the importer resolves)."""
    return REF_PATTERN.sub(lambda m: f"<{item.refs[int(m.group(1))].target}>", item.body)


def storable(item: Imported) -> Note:
    return Note(id="imported-1", summary=item.summary, body=item.body, tags=item.tags)


def test_kind_name() -> None:
    assert mcp_memory.KIND == "mcp-memory"


def test_entities_become_notes_with_observations_and_relations() -> None:
    reading = mcp_memory.read(FIXTURES / "memory.jsonl")
    assert reading.kind == "mcp-memory"
    assert reading.root == FIXTURES / "memory.jsonl"
    assert reading.problems == []
    items = by_key(reading)
    assert list(items) == [
        "Ada Lovelace",
        "Acme Analytics",
        "Jürgen Müller",
        "東京オフィス",
        "Project Helios",
        "Quiet",
    ]
    ada = items["Ada Lovelace"]
    assert ada.summary == "Ada Lovelace (person)"
    assert ada.aliases == ("Ada Lovelace",)
    assert ada.origin == "memory.jsonl:1 (Ada Lovelace)"
    assert resolved(ada) == (
        "- Leads the analytics team\n"
        "- Prefers written design reviews over meetings\n"
        "- Speaks English and French\n"
        "\n"
        "- works_at <Acme Analytics>\n"
        "- leads <Project Helios>"
    )
    assert ada.created_at is None and ada.type is None and ada.id is None


def test_non_ascii_names_and_their_links() -> None:
    items = by_key(mcp_memory.read(FIXTURES / "memory.jsonl"))
    jurgen = items["Jürgen Müller"]
    assert jurgen.summary == "Jürgen Müller (person)"
    assert jurgen.refs[1].target == "東京オフィス"
    assert "- visits [[ref:1]]" in jurgen.body
    assert items["東京オフィス"].summary == "東京オフィス (location)"


def test_a_relation_to_a_missing_entity_keeps_its_text() -> None:
    helios = by_key(mcp_memory.read(FIXTURES / "memory.jsonl"))["Project Helios"]
    (ref,) = helios.refs
    assert ref.target == "Kafka" and ref.text == "Kafka"
    # a multi-line observation stays one list item
    assert "- Deadline: end of Q3\n  Freeze starts two weeks earlier" in helios.body


def test_an_entity_without_observations_or_relations_has_an_empty_body() -> None:
    quiet = by_key(mcp_memory.read(FIXTURES / "memory.jsonl"))["Quiet"]
    assert quiet.body == "" and quiet.refs == ()


def test_the_legacy_memory_json_and_a_folder() -> None:
    legacy = mcp_memory.read(FIXTURES / "legacy" / "memory.json")
    assert [i.key for i in legacy.items] == ["Ada Lovelace", "Acme Analytics"]
    via_folder = mcp_memory.read(FIXTURES / "legacy")
    assert via_folder.items == legacy.items
    assert via_folder.root == FIXTURES / "legacy" / "memory.json"
    # a folder holding both: the server uses memory.jsonl
    assert mcp_memory.read(FIXTURES).root == FIXTURES / "memory.jsonl"


def test_a_saved_read_graph_answer() -> None:
    reading = mcp_memory.read(FIXTURES / "read_graph.json")
    assert reading.problems == []
    items = by_key(reading)
    assert list(items) == ["Ada Lovelace", "Acme Analytics", "Jürgen Müller"]
    assert resolved(items["Ada Lovelace"]).endswith("- leads <Project Helios>")


def test_edge_file_bom_crlf_malformed_lines_duplicates() -> None:
    reading = mcp_memory.read(FIXTURES / "edge.jsonl")
    items = by_key(reading)
    assert list(items) == ["Zoë"]
    zoe = items["Zoë"]
    # the first entityType is kept; the repeat's new observations are appended once
    assert zoe.summary == "Zoë (person)"
    lines = zoe.body.split("\n")
    assert lines[:3] == [
        "- Uses [[ref\\:0]] literally in notes",
        "- Likes [[wikilinks]]",
        "- Moved to Lisbon",
    ]
    # the repeated relation is written once; its text survives an unresolved link
    assert lines[3:] == ["", "- is [[ref:0]]"]
    assert [m.group(0) for m in REF_PATTERN.finditer(zoe.body)] == ["[[ref:0]]"]
    problems = reasons(reading)
    assert set(problems) == {
        "edge.jsonl:2",
        "edge.jsonl:4",
        "edge.jsonl:5",
        "edge.jsonl:6",
        "edge.jsonl:7",
        "edge.jsonl:8",
        "edge.jsonl:9",
        "edge.jsonl:10",
        "edge.jsonl:11",
        "edge.jsonl:14",
        "edge.jsonl:15",
    }
    assert problems["edge.jsonl:2"].startswith("not valid JSON")
    assert problems["edge.jsonl:4"] == "not a JSON object"
    assert problems["edge.jsonl:5"] == "entity has no name"
    assert problems["edge.jsonl:6"] == "entity has no name"
    assert "observations" in problems["edge.jsonl:7"]
    assert problems["edge.jsonl:8"] == "neither an entity nor a relation"
    assert "repeats edge.jsonl:1" in problems["edge.jsonl:9"]
    assert "merged" in problems["edge.jsonl:9"]
    assert "relationType" in problems["edge.jsonl:10"]
    assert "unknown entity 'Nobody'" in problems["edge.jsonl:11"]
    assert problems["edge.jsonl:15"].startswith("not valid UTF-8")


def test_an_empty_file_reads_nothing() -> None:
    reading = mcp_memory.read(FIXTURES / "empty.jsonl")
    assert reading.items == [] and reading.problems == []


def test_a_long_name_is_cut_to_the_summary_limit(tmp_path: Path) -> None:
    name = "Ω" * 400
    source = tmp_path / "memory.jsonl"
    record = {"type": "entity", "name": name, "entityType": "t" * 100, "observations": []}
    source.write_text(json.dumps(record), encoding="utf-8")
    (item,) = mcp_memory.read(source).items
    assert len(item.summary) <= MAX_SUMMARY_CHARS
    assert item.summary.endswith(")") and "…" in item.summary
    assert item.key == name
    storable(item)


def test_a_large_graph_reads_fast(tmp_path: Path) -> None:
    source = tmp_path / "memory.jsonl"
    lines = [
        json.dumps(
            {
                "type": "entity",
                "name": f"e{i}",
                "entityType": "thing",
                "observations": [f"fact {i}", f"other fact {i}"],
            }
        )
        for i in range(20_000)
    ]
    lines += [
        json.dumps({"type": "relation", "from": f"e{i}", "to": f"e{i + 1}", "relationType": "next"})
        for i in range(20_000)
    ]
    source.write_text("\n".join(lines), encoding="utf-8")
    started = time.process_time()  # CPU time: a busy machine does not fail a linear read
    reading = mcp_memory.read(source)
    assert time.process_time() - started < 10
    assert len(reading.items) == 20_000 and reading.problems == []
    assert reading.items[-1].refs[0].target == "e20000"


def test_a_file_over_the_source_limit_is_reported_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "memory.jsonl"
    shutil.copy(FIXTURES / "memory.jsonl", source)
    monkeypatch.setattr(mcp_memory, "MAX_SOURCE_BYTES", 100)
    reading = mcp_memory.read(source)
    assert reading.items == []
    (problem,) = reading.problems
    assert problem.origin == "memory.jsonl" and "over the 100" in problem.reason


def test_not_a_source_at_all(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        mcp_memory.read(tmp_path)
    with pytest.raises(InvalidInput):
        mcp_memory.read(tmp_path / "missing.jsonl")


def test_detect() -> None:
    assert mcp_memory.detect(FIXTURES / "memory.jsonl")
    assert mcp_memory.detect(FIXTURES / "edge.jsonl")  # BOM, CRLF
    assert mcp_memory.detect(FIXTURES / "legacy")
    assert mcp_memory.detect(FIXTURES / "read_graph.json")
    assert not mcp_memory.detect(FIXTURES / "empty.jsonl")
    other = FIXTURES.parent
    assert not mcp_memory.detect(other / "mem0" / "oss_get_all.json")
    assert not mcp_memory.detect(other / "memdir" / "export")
    assert not mcp_memory.detect(other / "memdir" / "export" / "index.json")
    assert not mcp_memory.detect(other / "nothing-here")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
names = st.text(min_size=1, max_size=40)
records = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"type": st.just("entity"), "name": names, "entityType": st.text(max_size=20)},
        optional={"observations": st.lists(st.text(max_size=60), max_size=4) | json_values},
    ),
    st.fixed_dictionaries(
        {"type": st.just("relation"), "from": names, "to": names, "relationType": names}
    ),
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(records, max_size=12), st.booleans())
def test_any_lines_read_without_raising(tmp_path: Path, lines: list[object], crlf: bool) -> None:
    source = tmp_path / "memory.jsonl"
    text = ("\r\n" if crlf else "\n").join(json.dumps(v) for v in lines)
    source.write_text(text, encoding="utf-8")
    reading = mcp_memory.read(source)
    assert len({i.key for i in reading.items}) == len(reading.items)
    for item in reading.items:
        storable(item)
        for match in REF_PATTERN.finditer(item.body):
            assert int(match.group(1)) < len(item.refs)
