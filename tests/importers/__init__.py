"""Tests of the source readers (§5 import), one module per kind, with shared helpers for the
edge cases every file-based reader must survive."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memdir.core import Note
from memdir.importers.base import Imported, Reading

FIXTURES = Path(__file__).parent / "fixtures"


def by_key(reading: Reading) -> dict[str, Imported]:
    return {item.key: item for item in reading.items}


def reasons(reading: Reading) -> dict[str, str]:
    return {p.origin: p.reason for p in reading.problems}


def storable(item: Imported) -> Note:
    """The item as memdir would keep it (raises when a summary, body or tag is refused)."""
    return Note(id="imported-1", summary=item.summary, body=item.body, tags=item.tags)


def copy_fixture(name: str, tmp_path: Path) -> Path:
    """A writable copy of fixtures/<name> (edge cases that git cannot hold are added to it)."""
    target = tmp_path / "source"
    shutil.copytree(FIXTURES / name, target, symlinks=True)
    return target


def tree(root: Path) -> dict[str, tuple[int, float, bytes]]:
    """Every entry under `root` with its mode, mtime and bytes (to prove a reader wrote nothing)."""
    out: dict[str, tuple[int, float, bytes]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        out[str(path.relative_to(root))] = (info.st_mode, info.st_mtime, data)
    return out


def add_outside_symlinks(folder: Path, tmp_path: Path) -> tuple[str, str]:
    """A file and a folder symlinked from outside the source into `folder`."""
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.md").write_text("---\nname: s\n---\nnot part of the source\n", "utf-8")
    (outside / "deep" / "more.md").write_text("# More\n", "utf-8")
    (folder / "linked.md").symlink_to(outside / "secret.md")
    (folder / "linked-dir").symlink_to(outside / "deep", target_is_directory=True)
    return "linked.md", "linked-dir"


def make_unreadable(path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: permissions do not stop reads")
    path.chmod(0)


def deny_reads(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Opening `path` fails with EACCES, as for a chmod 000 file read by a non-root user."""
    real_open = os.open

    def fake_open(file: object, flags: int, *args: object, **kwargs: object) -> int:
        if Path(str(file)) == path:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", fake_open)
