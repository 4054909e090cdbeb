"""Test helpers over real files: snapshots of folders, finding words in them, and a
project's config file."""

from __future__ import annotations

import os
from collections.abc import Iterable
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


def files_holding(roots: Iterable[Path], words: Iterable[str]) -> list[str]:
    """Files under `roots` holding any of `words` (as bytes, any case): a plaintext scan."""
    needles = [w.lower().encode() for w in words]
    found = []
    for root in roots:
        for dirpath, _dirs, names in os.walk(root):
            for name in names:
                path = Path(dirpath) / name
                try:
                    data = path.read_bytes().lower()
                except OSError:
                    continue
                if any(n in data for n in needles):
                    found.append(str(path))
    return found
