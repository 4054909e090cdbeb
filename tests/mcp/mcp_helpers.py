"""Helpers for the MCP tests: the memdir command, stdio parameters, grants, leak checks."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from pathlib import Path

from mcp import StdioServerParameters
from memdir import Memory
from memdir.clients.grants import issue_grant


def memdir_command() -> list[str]:
    """The memdir console script of this interpreter (python -m as a fallback)."""
    script = Path(sys.executable).with_name("memdir")
    if script.exists():
        return [str(script)]
    found = shutil.which("memdir")
    return [found] if found else [sys.executable, "-c", "from memdir.cli.main import main; main()"]


def stdio_params(
    project: Path, home: Path, *extra: str, env: dict[str, str] | None = None
) -> StdioServerParameters:
    cmd = memdir_command()
    return StdioServerParameters(
        command=cmd[0],
        args=[*cmd[1:], "--project", str(project), "--home", str(home), "mcp", "serve", *extra],
        env={"MEMDIR_HOME": str(home), **(env or {})},
    )


def make_grant(memory: Memory, out: Path, **kwargs: object) -> tuple[str, str]:
    """Issue a grant to `out`; return (grant id, token)."""
    grant = issue_grant(memory, minutes=int(kwargs.pop("minutes", 10)), out=out, **kwargs)  # type: ignore[arg-type]
    token = json.loads(out.read_text())["token"]
    assert grant.id == json.loads(out.read_text())["grant_id"]
    return grant.id, token


def all_text(*paths: Path) -> str:
    """Every file under these paths, as one string (to look for leaked tokens)."""
    chunks: list[str] = []
    for root in paths:
        for dirpath, _, files in os.walk(root):
            for name in files:
                with contextlib.suppress(OSError):
                    chunks.append((Path(dirpath) / name).read_text(errors="replace"))
    return "\n".join(chunks)
