"""Every output field that has a value carries it: `memory_read` names the revision of
the note it returns, `memory_diff` the two revisions it compared, and a first search on
an unindexed project reports index-building progress when the client asked for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import stdio_params

from mcp import Client
from memdir import Memory
from memdir.core import Note, render_note


async def _out(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def test_read_and_diff_name_their_revisions(env: tuple[Path, Path], memory: Memory) -> None:
    project, home = env
    first = memory.remember("Deploys go through staging", "v1")
    note_id = first.note.id
    second = memory.remember("Deploys go through staging, then canary", "v2", id=note_id)
    third = memory.remember("Deploys go through staging, canary, prod", "v3", id=note_id)
    single = memory.remember("Only one version of this", "once").note.id
    revs = [e.revision for e in memory.notes.history(note_id) if e.revision]
    assert revs == [first.revision, second.revision, third.revision]

    async def main() -> None:
        async with Client(stdio_params(project, home)) as client:
            read = await _out(client, "memory_read", {"id": note_id})
            assert read["revision"] == third.revision == memory.notes.read_current(note_id).revision
            old = await _out(
                client, "memory_read_revision", {"id": note_id, "revision": first.revision[:10]}
            )
            assert old["revision"] == first.revision and old["body"] == "v1"

            default = await _out(client, "memory_diff", {"id": note_id})
            assert (default["a"], default["b"]) == (second.revision, third.revision)
            assert "+summary: Deploys go through staging, canary, prod" in default["diff"]
            older = await _out(client, "memory_diff", {"id": note_id, "b": second.revision[:12]})
            assert (older["a"], older["b"]) == (first.revision, second.revision)
            given = await _out(
                client, "memory_diff", {"id": note_id, "a": first.revision[:8], "b": third.revision}
            )
            assert (given["a"], given["b"]) == (first.revision, third.revision)
            alone = await _out(client, "memory_diff", {"id": single})
            assert alone["a"] is None and alone["b"] == memory.notes.read_current(single).revision
            assert alone["diff"] == ""

    anyio.run(main)


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28, and the 2025-11-25 session
def test_a_first_search_reports_index_progress(
    env: tuple[Path, Path], memory: Memory, mode: str
) -> None:
    project, home = env
    directory = memory.stores.directory("project")
    directory.mkdir(parents=True, exist_ok=True)
    count = 450  # more than one refresh batch (200 notes)
    for i in range(count):
        note = Note(
            id=f"fact-{i:03d}",
            summary=f"Fact {i} about host{i}",
            body="staging" if i % 50 == 0 else "other",
            created_at=1_700_000_000_000 + i,
            updated_at=1_700_000_000_000 + i,
        )
        (directory / f"{note.id}.md").write_bytes(render_note(note))
    calls: list[list[tuple[float, float | None, str | None]]] = [[], []]

    def progress(n: int) -> Any:
        async def record(done: float, total: float | None, message: str | None) -> None:
            calls[n].append((done, total, message))

        return record

    async def main() -> None:
        async with Client(stdio_params(project, home), mode=mode) as client:
            result = await client.call_tool(
                "memory_search", {"query": "staging", "limit": 20}, progress_callback=progress(0)
            )
            assert result.structured_content is not None
            assert len(result.structured_content["hits"]) == count // 50
            again = await client.call_tool(
                "memory_search", {"query": "staging"}, progress_callback=progress(1)
            )
            assert not again.is_error

    anyio.run(main)
    first = calls[0]
    values = [done for done, _, _ in first]
    assert len(values) >= 2 and values == sorted(set(values)), first  # increasing
    assert first[-1][0] == first[-1][1] == count  # every note read
    assert all(m and "building the search index" in m for _, _, m in first)
    # A later call re-reads at most the notes written too recently to trust their stamps.
    assert all(done <= count for done, _, _ in calls[1])
