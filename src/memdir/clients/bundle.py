"""A Claude Desktop bundle (``.mcpb``) and the MCP registry's ``server.json`` for memdir.

An MCP Bundle is a zip with a ``manifest.json`` (MCPB manifest 0.4,
github.com/modelcontextprotocol/mcpb ``MANIFEST.md``). Of its server types, ``node``,
``python`` and ``binary`` expect everything inside the zip and ``uv`` has the host install
the dependencies from PyPI. memdir is installed with pip, pipx or uv and carries compiled
dependencies (numpy, cryptography), so the bundle is of type ``python`` and runs a
three-line launcher with *the interpreter memdir is installed in* (its absolute path in
``mcp_config.command``): nothing is downloaded and the bundle uses exactly the memdir
the user installed. The price is that a bundle belongs to the machine that built it —
build it again after moving memdir; to share memdir, share ``server.json`` (registry) or
``pip install memdir``. The project folder and memdir home are install-time choices
(``user_config``), filled into ``--project`` and ``MEMDIR_HOME`` by the host.

``server.json`` follows the registry schema (static.modelcontextprotocol.io,
2025-12-11): one PyPI package run with ``uvx``, stdio transport, the project as a named
argument and ``MEMDIR_HOME`` as an optional environment variable.
"""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir._version import __version__
from memdir.errors import Refused

__all__ = [
    "MANIFEST_SCHEMA",
    "MANIFEST_VERSION",
    "REGISTRY_NAME",
    "SERVER_SCHEMA",
    "BundleResult",
    "manifest",
    "server_json",
    "write_bundle",
]

MANIFEST_VERSION = "0.4"
MANIFEST_SCHEMA = (
    "https://raw.githubusercontent.com/modelcontextprotocol/mcpb/main/schemas/"
    "mcpb-manifest-v0.4.schema.json"
)
SERVER_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
#: The registry name: ``io.github.<owner>/<name>``, the owner being the GitHub account
#: that publishes (the PyPI README must carry ``mcp-name: <this>`` for verification).
REGISTRY_NAME = "io.github.memdir/memdir"
DESCRIPTION = "Long-term memory for AI agents: Markdown notes with search, history and backups."
LAUNCHER = "server/launch.py"

_LAUNCHER_TEXT = '''\
"""Run memdir with the Python it is installed in (manifest.json names that interpreter)."""

import sys

try:
    from memdir.cli.main import main
except ImportError:
    sys.stderr.write(
        f"memdir is not installed for {sys.executable}: install it, then build the bundle "
        "again with `memdir mcp bundle`\\n"
    )
    raise SystemExit(1) from None

main(prog_name="memdir")
'''


def manifest(
    *,
    python: str,
    tools: Sequence[str],
    version: str = __version__,
    platform: str | None = None,
) -> dict[str, Any]:
    """The MCPB manifest for a bundle that runs memdir with the interpreter `python`.

    `tools` names the tools the server offers (the MCP adapter's `memdir.mcp.tools.TOOL_NAMES`:
    this package sits below it and does not import it). `platform` (``sys.platform``)
    limits the bundle to the machine kind that built it; None leaves it out (the template
    in packaging/).
    """
    compatibility: dict[str, Any] = {"runtimes": {"python": ">=3.11"}}
    if platform is not None:
        compatibility = {
            "platforms": ["win32" if platform.startswith("win") else platform],
            **compatibility,
        }
    return {
        "$schema": MANIFEST_SCHEMA,
        "manifest_version": MANIFEST_VERSION,
        "name": "memdir",
        "display_name": "memdir",
        "version": version,
        "description": DESCRIPTION,
        "long_description": (
            "memdir keeps an agent's memory as Markdown notes in your project and home "
            "folder: search in any language, every version kept, backups before every "
            "change, a credential guard on every write. This bundle runs the memdir "
            "installed on this machine."
        ),
        "author": {"name": "memdir developers"},
        "license": "MIT",
        "keywords": ["memory", "notes", "markdown", "agents"],
        "server": {
            "type": "python",
            "entry_point": LAUNCHER,
            "mcp_config": {
                "command": python,
                "args": [
                    "${__dirname}/" + LAUNCHER,
                    "--project",
                    "${user_config.project}",
                    "mcp",
                    "serve",
                ],
                "env": {"MEMDIR_HOME": "${user_config.memdir_home}"},
            },
        },
        "tools": [{"name": name} for name in tools],
        "compatibility": compatibility,
        "user_config": {
            "project": {
                "type": "directory",
                "title": "Project folder",
                "description": "The project whose notes the agent reads and writes.",
                "required": True,
            },
            "memdir_home": {
                "type": "directory",
                "title": "memdir home",
                "description": "Where your own notes and machine state live (default ~/.memdir).",
                "required": False,
                "default": "${HOME}/.memdir",
            },
        },
    }


def server_json(version: str = __version__) -> dict[str, Any]:
    """The MCP registry entry: memdir from PyPI, run with uvx over stdio."""
    return {
        "$schema": SERVER_SCHEMA,
        "name": REGISTRY_NAME,
        "title": "memdir",
        "description": "Long-term memory for AI agents: Markdown notes, search, history, backups.",
        "version": version,
        "packages": [
            {
                "registryType": "pypi",
                "registryBaseUrl": "https://pypi.org",
                "identifier": "memdir",
                "version": version,
                "runtimeHint": "uvx",
                "transport": {"type": "stdio"},
                "packageArguments": [
                    {
                        "type": "named",
                        "name": "--project",
                        "description": "The project folder whose notes the agent uses.",
                        "format": "filepath",
                        "isRequired": False,
                    },
                    {"type": "positional", "value": "mcp", "valueHint": "mcp"},
                    {"type": "positional", "value": "serve", "valueHint": "serve"},
                ],
                "environmentVariables": [
                    {
                        "name": "MEMDIR_HOME",
                        "description": "Where user notes and machine state live "
                        "(default ~/.memdir).",
                        "format": "filepath",
                        "isRequired": False,
                    }
                ],
            }
        ],
    }


@dataclass(frozen=True, slots=True)
class BundleResult:
    """The bundle written and the interpreter it runs memdir with."""

    path: Path
    python: str
    files: tuple[str, ...]
    manifest: dict[str, Any]


def write_bundle(
    out: Path, *, tools: Sequence[str], python: str | None = None, force: bool = False
) -> BundleResult:
    """Write the ``.mcpb`` zip to `out` (refused when it exists, unless `force`); `tools`
    as for `manifest`."""
    if out.exists() and not force:
        raise Refused(f"{out} exists; pass --force to replace it")
    # sys.executable as it is, not resolved: a venv's python is a link, and resolving it
    # would run the base interpreter, which does not have memdir installed.
    python = python or sys.executable
    doc = manifest(python=python, tools=tools, platform=sys.platform)
    files = {
        "manifest.json": json.dumps(doc, indent=2, ensure_ascii=False) + "\n",
        LAUNCHER: _LAUNCHER_TEXT,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    partial.replace(out)
    return BundleResult(out, python, tuple(files), doc)
