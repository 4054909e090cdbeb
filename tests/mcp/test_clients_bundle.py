"""The Claude Desktop bundle (.mcpb) and the registry's server.json, checked against their specs.

The schemas below hold the fields each spec documents as required (MCPB manifest 0.4,
github.com/modelcontextprotocol/mcpb; registry server.json 2025-12-11,
static.modelcontextprotocol.io), written out here so the test needs no network.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner

from memdir import __version__
from memdir.cli.main import main
from memdir.clients.bundle import (
    MANIFEST_VERSION,
    REGISTRY_NAME,
    SERVER_SCHEMA,
    manifest,
    server_json,
    write_bundle,
)
from memdir.errors import Refused
from memdir.mcp.tools import TOOL_NAMES

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"

_MCP_CONFIG = {
    "type": "object",
    "required": ["command"],
    "additionalProperties": False,
    "properties": {
        "command": {"type": "string"},
        "args": {"type": "array", "items": {"type": "string"}},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}
MANIFEST_REQUIRED = {
    "type": "object",
    "required": ["manifest_version", "name", "version", "description", "author", "server"],
    "properties": {
        "manifest_version": {"const": "0.4"},
        "author": {"type": "object", "required": ["name"]},
        "server": {
            "type": "object",
            "required": ["type", "entry_point", "mcp_config"],
            "properties": {
                "type": {"enum": ["node", "python", "binary", "uv"]},
                "entry_point": {"type": "string"},
                "mcp_config": _MCP_CONFIG,
            },
        },
        "user_config": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["type", "title", "description"],
                "properties": {
                    "type": {"enum": ["string", "number", "boolean", "directory", "file"]}
                },
            },
        },
        "compatibility": {
            "type": "object",
            "properties": {
                "platforms": {"type": "array", "items": {"enum": ["darwin", "win32", "linux"]}}
            },
        },
        "tools": {"type": "array", "items": {"type": "object", "required": ["name"]}},
    },
}
SERVER_REQUIRED = {
    "type": "object",
    "required": ["$schema", "name", "description", "version", "packages"],
    "properties": {
        "name": {"type": "string", "pattern": r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"},
        "description": {"type": "string", "minLength": 1, "maxLength": 100},
        "version": {"type": "string", "not": {"pattern": r"[\^~<>=*x]|latest"}},
        "packages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["registryType", "identifier", "version", "transport"],
                "properties": {
                    "registryType": {"const": "pypi"},
                    "registryBaseUrl": {"const": "https://pypi.org"},
                    "identifier": {"const": "memdir"},
                    "version": {"type": "string", "not": {"const": "latest"}},
                    "transport": {
                        "type": "object",
                        "required": ["type"],
                        "properties": {"type": {"const": "stdio"}},
                    },
                    "packageArguments": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["type"],
                            "properties": {"type": {"enum": ["positional", "named"]}},
                            "if": {"properties": {"type": {"const": "named"}}},
                            "then": {"required": ["name"]},
                            "else": {
                                "anyOf": [{"required": ["value"]}, {"required": ["valueHint"]}]
                            },
                        },
                    },
                    "environmentVariables": {
                        "type": "array",
                        "items": {"type": "object", "required": ["name"]},
                    },
                },
            },
        },
    },
}


def _validate(doc: Any, schema: dict[str, Any]) -> None:
    jsonschema.Draft7Validator(schema).validate(doc)


def test_manifest_has_the_documented_fields() -> None:
    doc = manifest(python="/opt/py/bin/python", tools=TOOL_NAMES, platform="darwin")
    _validate(doc, MANIFEST_REQUIRED)
    assert doc["manifest_version"] == MANIFEST_VERSION
    config = doc["server"]["mcp_config"]
    assert config["command"] == "/opt/py/bin/python"
    assert config["args"] == [
        "${__dirname}/server/launch.py",
        "--project",
        "${user_config.project}",
        "mcp",
        "serve",
    ]
    assert config["env"] == {"MEMDIR_HOME": "${user_config.memdir_home}"}
    assert set(doc["user_config"]) == {"project", "memdir_home"}
    assert doc["user_config"]["project"]["required"] is True
    assert [t["name"] for t in doc["tools"]] == list(TOOL_NAMES)
    assert doc["compatibility"]["platforms"] == ["darwin"]
    with pytest.raises(jsonschema.ValidationError):  # the schema can fail
        _validate({**doc, "server": {"type": "python"}}, MANIFEST_REQUIRED)


def test_server_json_has_the_documented_fields() -> None:
    doc = server_json()
    _validate(doc, SERVER_REQUIRED)
    assert doc["$schema"] == SERVER_SCHEMA and doc["name"] == REGISTRY_NAME
    assert doc["name"].startswith("io.github.") and doc["name"].endswith("/memdir")
    package = doc["packages"][0]
    assert package["version"] == doc["version"] == __version__
    assert package["runtimeHint"] == "uvx"
    names = [a.get("name") or a.get("value") for a in package["packageArguments"]]
    assert names == ["--project", "mcp", "serve"]  # memdir's global option comes first
    with pytest.raises(jsonschema.ValidationError):
        _validate({**doc, "description": "x" * 101}, SERVER_REQUIRED)


def test_packaging_files_are_what_the_code_writes() -> None:
    """packaging/ is generated: `memdir mcp bundle --python python3` and `--server-json`."""
    on_disk = json.loads((PACKAGING / "server.json").read_text(encoding="utf-8"))
    assert on_disk == server_json()
    template = json.loads((PACKAGING / "mcpb" / "manifest.json").read_text(encoding="utf-8"))
    assert template == manifest(python="python3", tools=TOOL_NAMES, platform=None)
    _validate(on_disk, SERVER_REQUIRED)
    _validate(template, MANIFEST_REQUIRED)


def test_bundle_zip_runs_memdir_with_this_interpreter(tmp_path: Path) -> None:
    out = tmp_path / "memdir.mcpb"
    result = write_bundle(out, tools=TOOL_NAMES)
    assert result.python == sys.executable
    with zipfile.ZipFile(out) as archive:
        assert sorted(archive.namelist()) == ["manifest.json", "server/launch.py"]
        doc = json.loads(archive.read("manifest.json"))
        archive.extractall(tmp_path / "unpacked")
    _validate(doc, MANIFEST_REQUIRED)
    assert doc["server"]["mcp_config"]["command"] == sys.executable
    launcher = tmp_path / "unpacked" / doc["server"]["entry_point"]
    ran = subprocess.run(
        [sys.executable, str(launcher), "--version"], capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0 and __version__ in ran.stdout
    with pytest.raises(Refused, match="--force"):
        write_bundle(out, tools=TOOL_NAMES)
    assert write_bundle(out, tools=TOOL_NAMES, force=True).path == out


def test_cli_bundle(tmp_path: Path) -> None:
    out, registry = tmp_path / "b" / "memdir.mcpb", tmp_path / "server.json"
    r = CliRunner().invoke(
        main, ["mcp", "bundle", "--out", str(out), "--server-json", str(registry), "--json"]
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["files"] == ["manifest.json", "server/launch.py"]
    assert zipfile.is_zipfile(out) and json.loads(registry.read_text()) == server_json()
    r = CliRunner().invoke(main, ["mcp", "bundle", "--out", str(out)])
    assert r.exit_code == 4 and "--force" in r.output
