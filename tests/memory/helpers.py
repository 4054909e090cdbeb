"""Helpers for the Memory tests: file snapshots, project config, note files and frontmatter."""

from __future__ import annotations

import json
from pathlib import Path

from memdir import Memory


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file under `roots` with its bytes (directories included as empty entries)."""
    out: dict[str, bytes] = {}
    for root in roots:
        if not root.exists():
            continue
        for path in sorted(root.rglob("*")):
            out[str(path)] = path.read_bytes() if path.is_file() else b"<dir>"
    return out


def write_project_config(project: Path, text: str) -> None:
    (project / ".memdir").mkdir(exist_ok=True)
    (project / ".memdir" / "config.toml").write_text(text, encoding="utf-8")


def note_file(memory: Memory, note_id: str, scope: str = "project") -> Path:
    return memory.directory(scope) / f"{note_id}.md"


def frontmatter(path: Path) -> dict[str, object]:
    head = path.read_text("utf-8").split("\n")[1]
    doc = json.loads(head)
    assert isinstance(doc, dict)
    return doc
