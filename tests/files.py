"""Test helpers over real files: snapshots of folders and a project's config file."""

from __future__ import annotations

from pathlib import Path


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
    """Write `text` as the project's `.memdir/config.toml`."""
    (project / ".memdir").mkdir(exist_ok=True)
    (project / ".memdir" / "config.toml").write_text(text, encoding="utf-8")
