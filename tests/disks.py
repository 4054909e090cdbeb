"""Test helpers over real small disks: a tmpfs mounted for one test, filled to the last byte.

Mounting needs root (CI runs as root); a test that cannot mount is skipped with the reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["fill", "needs_root", "tmpfs"]

#: Marks tests that mount a tmpfs.
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mount") is None, reason="mounting a tmpfs needs root"
)


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `where` (created), unmounted afterwards."""
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    if done.returncode != 0:  # e.g. a container without the right to mount
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(directory: Path, leave: int = 0) -> Path:
    """Fill the file system holding `directory` to its last byte (or all but `leave` bytes)
    with the file `directory/filler`; returns it (unlink it to make room again)."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as f:
        if leave:
            f.write(b"\0" * max(0, shutil.disk_usage(directory).free - leave))
            return filler
        for chunk in (65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    f.write(b"\0" * chunk)
    return filler
