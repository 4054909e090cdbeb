"""The automatic consolidation pass in the real `memdir mcp serve` (issue 11, §6): with
`memory.consolidate.auto` on, planted duplicates are merged by the server's background
thread (its first pass starts 10 s after start-up) while the MCP session keeps answering
tool calls; with it off, nothing is merged."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
from mcp_helpers import stdio_params

from mcp import Client
from memdir import Memory

#: How long the background pass may take to show (it starts 10 s after start-up).
DEADLINE = 60.0
LEXICAL = '[embed]\nprovider = "none"\n'


def plant(project: Path, home: Path) -> dict[str, tuple[str, str]]:
    """Two duplicate pairs (oldest first), a contradicting pair and a linking note."""
    with Memory.open(project, home=home) as memory:
        notes = {
            "pnpm": (
                memory.remember("Use pnpm for package management", "pnpm only.").note.id,
                memory.remember("Package management uses pnpm", "Not npm.").note.id,
            ),
            "helm": (
                memory.remember("Deploy the api with helm charts", "helm.").note.id,
                memory.remember("Helm charts deploy the api", "Charts in ops/.").note.id,
            ),
            "timeout": (
                memory.remember("Deploy timeout is 30 seconds", "It times out after 30 s.").note.id,
                memory.remember("Deploy timeout is 60 seconds", "It times out after 60 s.").note.id,
            ),
        }
        for summary in ("Pricing cards use fills", "Staging database is read-only on weekends"):
            memory.remember(summary, "Unrelated.")
        notes["linker"] = (
            memory.remember("Build notes", f"See [[{notes['pnpm'][1]}]].").note.id,
            "",
        )
        topics = {f.notes for f in memory.tidy.findings(["same_topic"])}
        for key in ("pnpm", "helm"):
            assert tuple(sorted(notes[key])) in topics, topics
    return notes


def note_file(project: Path, note_id: str) -> Path:
    return project / "MEMORY" / f"{note_id}.md"


async def _serve_and_watch(
    project: Path, home: Path, done: Any, seconds: float
) -> tuple[bool, int]:
    """Run the server; call tools until `done()` or `seconds` pass. (done, tool calls made)."""
    calls = 0
    async with Client(stdio_params(project, home)) as client:
        deadline = time.monotonic() + seconds
        while True:
            result = await client.call_tool("memory_tidy", {"kinds": ["broken_link"]})
            assert not result.is_error, result.content
            assert result.structured_content is not None
            listed = await client.call_tool("memory_search", {"query": "pnpm"})
            assert not listed.is_error, listed.content
            calls += 2
            if done():
                return True, calls
            if time.monotonic() > deadline:
                return False, calls
            await anyio.sleep(0.25)


def test_the_server_merges_planted_duplicates_in_the_background(
    env: tuple[Path, Path],
) -> None:
    project, home = env
    (home / "config.toml").write_text(LEXICAL + "[memory.consolidate]\nauto = true\n")
    notes = plant(project, home)
    deleted = [notes["pnpm"][1], notes["helm"][1]]
    before_contra = {i: note_file(project, i).read_bytes() for i in notes["timeout"]}

    def merged() -> bool:
        return not any(note_file(project, i).exists() for i in deleted)

    done, calls = anyio.run(_serve_and_watch, project, home, merged, DEADLINE)
    assert done, "the background pass merged nothing within the deadline"
    assert calls >= 4  # the session answered while the pass was pending and after it
    for keep in (notes["pnpm"][0], notes["helm"][0]):
        assert note_file(project, keep).exists()
    # The contradicting pair is left for a person; links point at the kept note.
    assert {i: note_file(project, i).read_bytes() for i in notes["timeout"]} == before_contra
    linker = note_file(project, notes["linker"][0]).read_text("utf-8")
    assert f"[[{notes['pnpm'][0]}]]" in linker
    with Memory.open(project, home=home) as memory:
        reasons = {b.reason for b in memory.backups(limit=None)}
        assert reasons == {"auto-merge"}
        assert memory.audit.verify().ok
        left = memory.tidy.findings(["same_topic"])
        assert all(set(f.notes) == set(notes["timeout"]) for f in left), left


def test_with_auto_off_the_server_merges_nothing(env: tuple[Path, Path]) -> None:
    project, home = env
    notes = plant(project, home)
    before = {p.name: p.read_bytes() for p in (project / "MEMORY").glob("*.md")}
    # The first pass would start 10 s after start-up: watch a while past that.
    done, calls = anyio.run(_serve_and_watch, project, home, lambda: False, 13.0)
    assert not done and calls >= 2
    assert {p.name: p.read_bytes() for p in (project / "MEMORY").glob("*.md")} == before
    assert all(note_file(project, i).exists() for i in notes["pnpm"] + notes["helm"])
    with Memory.open(project, home=home) as memory:
        assert memory.backups(limit=None) == []
