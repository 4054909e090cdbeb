"""The mem0 reader: open-source get_all JSON, platform pages and the dashboard export."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.core import Note
from memdir.core.note import MAX_SUMMARY_CHARS
from memdir.errors import InvalidInput
from memdir.importers import mem0
from memdir.importers.base import REF_PATTERN, Imported, Reading, iso_ms

FIXTURES = Path(__file__).parent / "fixtures" / "mem0"


def by_key(reading: Reading) -> dict[str, Imported]:
    return {item.key: item for item in reading.items}


def reasons(reading: Reading) -> dict[str, str]:
    return {p.origin: p.reason for p in reading.problems}


def storable(item: Imported) -> Note:
    return Note(id="imported-1", summary=item.summary, body=item.body, tags=item.tags)


def test_oss_get_all() -> None:
    reading = mem0.read(FIXTURES / "oss_get_all.json")
    assert reading.kind == "mem0" and reading.root == FIXTURES / "oss_get_all.json"
    assert reading.problems == []
    items = by_key(reading)
    assert list(items) == [
        "5f1d9c3e-2b7a-4c1e-9f60-0a2d3b4c5e6f",
        "a7c3e9f1-4d2b-4a8c-b6e0-1f3d5c7a9b2e",
        "c9e1a3b5-6d8f-4e2a-8c4e-3b5d7f9a1c3e",
    ]
    dark = items["5f1d9c3e-2b7a-4c1e-9f60-0a2d3b4c5e6f"]
    assert dark.summary == "Prefers dark mode in every editor"
    assert dark.body == (
        "Prefers dark mode in every editor\n\n"
        'from mem0: user_id=alice; metadata={"source": "onboarding"}'
    )
    assert dark.created_at == iso_ms("2025-03-14T09:26:53.589793-07:00") == 1741969613589
    assert dark.updated_at == iso_ms("2025-03-20T11:02:10.114021-07:00")
    assert dark.origin == "oss_get_all.json: results[0]"
    assert dark.tags == () and dark.type is None and dark.id is None
    peanuts = items["a7c3e9f1-4d2b-4a8c-b6e0-1f3d5c7a9b2e"]
    # no updated_at: the creation time stands for both
    assert peanuts.updated_at == peanuts.created_at is not None
    assert peanuts.body.endswith("from mem0: user_id=alice; agent_id=travel-assistant")
    munich = items["c9e1a3b5-6d8f-4e2a-8c4e-3b5d7f9a1c3e"]
    assert munich.summary.startswith("Lebt in München")
    assert munich.body.endswith(
        "from mem0: user_id=alice; run_id=session-42; actor_id=alice; role=user"
    )


def test_the_v1_0_bare_list() -> None:
    reading = mem0.read(FIXTURES / "oss_v1_0_list.json")
    assert [i.key for i in reading.items] == [
        "5f1d9c3e-2b7a-4c1e-9f60-0a2d3b4c5e6f",
        "a7c3e9f1-4d2b-4a8c-b6e0-1f3d5c7a9b2e",
    ]
    assert reading.items[0].origin == "oss_v1_0_list.json[0]"
    assert reading.problems == []


def test_graph_relations_are_reported_not_read() -> None:
    reading = mem0.read(FIXTURES / "oss_graph_get_all.json")
    assert len(reading.items) == 1
    (problem,) = reading.problems
    assert problem.origin == "oss_graph_get_all.json: relations"
    assert problem.reason.startswith("2 graph relations")


def test_platform_get_all_page() -> None:
    reading = mem0.read(FIXTURES / "platform_get_all.json")
    assert reading.problems == []
    items = by_key(reading)
    trip = items["f4cbdb08-7062-4f3e-8eb2-9f5c80dfe64c"]
    assert trip.tags == ("travel", "user_preferences")
    assert trip.body.endswith(
        'from mem0: user_id=alex; categories=travel, user_preferences; metadata={"food": "vegan"}'
    )
    assert trip.created_at == 1719835200000
    long = items["0b3a1e44-9d7c-4f1b-a2c8-5e6f7a8b9c0d"]
    assert len(long.summary) == MAX_SUMMARY_CHARS and long.summary.endswith("…")
    assert long.body.startswith(long.summary[:-1])
    assert len(long.body.split("\n\n")[0]) > MAX_SUMMARY_CHARS  # the whole text is kept
    notes = items["2d4f6a8c-1e3b-4d5f-9a7c-8e0b2d4f6a8c"]
    assert notes.summary == "Meeting notes"
    assert notes.body.startswith("Meeting notes\nThe Q3 roadmap moves")
    # a category with a space stays one tag (memdir splits tags on spaces)
    assert notes.tags == ("work", "project-updates")
    assert "agent_id=pm-bot; app_id=roadmap" in notes.body
    assert notes.updated_at == iso_ms("2024-09-12T09:15:00Z")
    for item in reading.items:
        storable(item)


def test_the_dashboard_export() -> None:
    reading = mem0.read(FIXTURES / "dashboard_export.json")
    items = by_key(reading)
    assert items["mem_abc123"].summary == "User prefers dark mode"
    assert items["mem_def456"].summary == "東京の顧客には日本語で返信する"
    assert items["mem_def456"].origin == "dashboard_export.json: memories[1]"
    assert items["mem_abc123"].created_at == iso_ms("2026-04-10T12:00:00Z")


def test_malformed_items_are_problems_with_their_index() -> None:
    reading = mem0.read(FIXTURES / "malformed.json")
    items = by_key(reading)
    assert list(items) == ["ok-1", "17"]
    good = items["ok-1"]
    assert good.summary == "A good memory"
    assert good.created_at is None  # "not a date"
    assert good.updated_at == 1712345678000  # Unix seconds
    assert good.tags == ("ok",)  # 7, a control character and an 80-character tag dropped
    numeric = items["17"]
    assert "\x00" not in numeric.body and "\ufffd" in numeric.body
    assert numeric.tags == ("single-category",)
    storable(good)
    storable(numeric)
    problems = reasons(reading)
    label = "malformed.json: results"
    assert problems == {
        f"{label}[1]": "not a JSON object",
        f"{label}[2]": "has no id",
        f"{label}[3]": "has no memory text",
        f"{label}[4]": "its memory text is empty",
        f"{label}[5]": f"repeats the id of {label}[0]; the first is kept",
        f"{label}[6]": "has no id",
        f"{label}[8]": "not a JSON object",
    }


def test_bom_and_crlf() -> None:
    (item,) = mem0.read(FIXTURES / "bom_crlf.json").items
    assert item.summary == "Prefers dark mode in every editor"


def test_reference_like_text_is_kept_as_text(tmp_path: Path) -> None:
    source = tmp_path / "m.json"
    source.write_text(json.dumps([{"id": "x", "memory": "see [[ref:0]] and [[ref:12]]"}]))
    (item,) = mem0.read(source).items
    assert REF_PATTERN.search(item.body) is None
    assert item.summary == "see [[ref:0]] and [[ref:12]]"


def test_empty_and_broken_files_are_problems(tmp_path: Path) -> None:
    reading = mem0.read(FIXTURES / "empty.json")
    assert reading.items == [] and reasons(reading) == {"empty.json": "empty file"}
    broken = tmp_path / "broken.json"
    broken.write_text('{"results": [{"id": "a", "memory": "cut off', encoding="utf-8")
    (problem,) = mem0.read(broken).problems
    assert problem.reason.startswith("not valid JSON")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'[{"id": "a", "memory": "caf\xe9"}]')
    (problem,) = mem0.read(latin).problems
    assert problem.reason.startswith("not valid UTF-8")


def test_a_file_over_the_source_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "big.json"
    shutil.copy(FIXTURES / "platform_get_all.json", source)
    monkeypatch.setattr(mem0, "MAX_SOURCE_BYTES", 1000)
    reading = mem0.read(source)
    assert reading.items == [] and "over the 1000" in reading.problems[0].reason


def test_a_large_export(tmp_path: Path) -> None:
    source = tmp_path / "all.json"
    memories = [
        {"id": f"id-{i}", "memory": f"fact number {i}", "created_at": "2025-01-01T00:00:00Z"}
        for i in range(20_000)
    ]
    source.write_text(json.dumps({"results": memories}), encoding="utf-8")
    reading = mem0.read(source)
    assert len(reading.items) == 20_000 and reading.problems == []


def test_not_a_mem0_export() -> None:
    with pytest.raises(InvalidInput, match="not a mem0 export"):
        mem0.read(FIXTURES / "structured_export.json")
    with pytest.raises(InvalidInput):
        mem0.read(FIXTURES)


def test_detect() -> None:
    for name in (
        "oss_get_all.json",
        "oss_v1_0_list.json",
        "oss_graph_get_all.json",
        "platform_get_all.json",
        "dashboard_export.json",
        "bom_crlf.json",
    ):
        assert mem0.detect(FIXTURES / name), name
    assert not mem0.detect(FIXTURES / "structured_export.json")
    assert not mem0.detect(FIXTURES / "empty.json")
    assert not mem0.detect(FIXTURES)
    other = FIXTURES.parent
    assert not mem0.detect(other / "mcp-memory" / "read_graph.json")
    assert not mem0.detect(other / "mcp-memory" / "memory.jsonl")
    assert not mem0.detect(other / "memdir" / "export" / "index.json")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
field_values = json_values | st.text() | st.lists(st.text(max_size=70), max_size=4)
memories = (
    st.dictionaries(
        st.sampled_from(
            [
                "id",
                "memory",
                "content",
                "categories",
                "created_at",
                "updated_at",
                "user_id",
                "agent_id",
                "run_id",
                "metadata",
                "hash",
            ]
        ),
        field_values,
    )
    | json_values
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.lists(memories, max_size=6),
        st.fixed_dictionaries({"results": st.lists(memories, max_size=6)}),
        st.fixed_dictionaries({"memories": st.lists(memories, max_size=6)}),
        json_values,
    )
)
def test_any_json_reads_or_is_not_a_source(tmp_path: Path, doc: object) -> None:
    source = tmp_path / "export.json"
    source.write_text(json.dumps(doc), encoding="utf-8")
    try:
        reading = mem0.read(source)
    except InvalidInput:
        return
    assert len({i.key for i in reading.items}) == len(reading.items)
    for item in reading.items:
        storable(item)
        assert REF_PATTERN.search(item.body) is None
        assert len(item.summary) <= MAX_SUMMARY_CHARS
