"""MCP answers carry the warnings of their call: an agent learns that results may be stale."""

from __future__ import annotations

from pathlib import Path

from disks import fill, needs_root, tmpfs
from memdir import Memory
from memdir.core import AccessLevel
from memdir.mcp.access import CURRENT, Access
from memdir.mcp.tools.search import memory_retrieve, memory_search

READ = Access(AccessLevel.READ, "both", False, "g-read")


@needs_root
def test_every_search_on_a_full_index_disk_says_results_may_be_stale(
    env: tuple[Path, Path],
) -> None:
    project, home = env
    with tmpfs(home / "index", "2m"):
        m = Memory.open(project, home=home)
        m.remember("Deploys go through the staging cluster", id="deploys")
        token = CURRENT.set(READ)
        try:
            assert memory_search(m, "staging").warnings == []
            fill(home / "index")
            (project / "MEMORY" / "later.md").write_text(
                '---\n{"summary": "Staging is reset on Mondays"}\n---\nbody\n', "utf-8"
            )
            for _ in range(2):  # each call says it, not only the first
                found = memory_search(m, "staging")
                assert [h.id for h in found.hits] == ["deploys"]
                assert any("cannot be updated" in w for w in found.warnings), found.warnings
                chunks = memory_retrieve(m, "staging")
                assert any("cannot be updated" in w for w in chunks.warnings)
        finally:
            CURRENT.reset(token)
            m.close()


def test_a_search_with_nothing_to_say_has_no_warnings(memory: Memory) -> None:
    memory.remember("Deploys go through the staging cluster")
    token = CURRENT.set(READ)
    try:
        assert memory_search(memory, "staging").warnings == []
    finally:
        CURRENT.reset(token)
