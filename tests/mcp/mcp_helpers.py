"""Helpers for the MCP tests: the memdir command, stdio parameters, grants, leak checks."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

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


class Raw:
    """`memdir mcp serve` driven with raw JSON-RPC lines (any revision, any mistake)."""

    def __init__(self, project: Path, home: Path, *extra: str) -> None:
        params = stdio_params(project, home, *extra)
        self.proc = subprocess.Popen(
            [params.command, *params.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**(params.env or {}), "PATH": "/usr/bin:/bin"},
        )
        self.next_id = 0

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The response to one request (notifications before it are skipped)."""
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        assert self.proc.stdout
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server closed its output"
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == self.next_id:
                return answer

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=20)
