"""Helpers for the Memory tests: file snapshots, project config, note files and frontmatter."""

from __future__ import annotations

import json
from pathlib import Path

from files import snapshot, write_project_config
from memdir import Memory

__all__ = ["frontmatter", "note_file", "snapshot", "write_project_config"]


def note_file(memory: Memory, note_id: str, scope: str = "project") -> Path:
    return memory.stores.directory(scope) / f"{note_id}.md"


def frontmatter(path: Path) -> dict[str, object]:
    head = path.read_text("utf-8").split("\n")[1]
    doc = json.loads(head)
    assert isinstance(doc, dict)
    return doc
