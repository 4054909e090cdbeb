"""MCP client config snippets for `memdir mcp serve`, printed or merged into the client's file.

Locations follow each client's documentation: Claude Code reads the project's
``.mcp.json``; Claude Desktop its ``claude_desktop_config.json`` (per platform);
Cursor the project's ``.cursor/mcp.json``; Codex ``~/.codex/config.toml``
(``[mcp_servers.NAME]`` tables). Merging keeps every other entry, backs the
original up beside it, and refuses to touch a file that does not parse.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.errors import InvalidInput, Refused
from memdir.store.atomic import atomic_write

__all__ = ["CLIENTS", "InstallResult", "install"]

CLIENTS: tuple[str, ...] = ("claude-code", "claude-desktop", "cursor", "codex")
SERVER_NAME = "memdir"


@dataclass(frozen=True, slots=True)
class InstallResult:
    """The config a client needs, where it goes, and whether it was written."""

    client: str
    path: Path
    snippet: str
    written: bool
    backup: Path | None
    unchanged: bool = False


def _command() -> str:
    found = shutil.which("memdir")
    return found or "memdir"


def _config_path(client: str, project: Path | None, user_home: Path, platform: str) -> Path:
    if client in ("claude-code", "cursor"):
        if project is None:
            raise InvalidInput(
                f"{client} reads a project config: run inside a project or pass --project"
            )
        return project / (".mcp.json" if client == "claude-code" else ".cursor/mcp.json")
    if client == "codex":
        return user_home / ".codex" / "config.toml"
    if platform == "darwin":
        return (
            user_home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
        )
    if platform.startswith("win"):
        return user_home / "AppData" / "Roaming" / "Claude" / "claude_desktop_config.json"
    return user_home / ".config" / "Claude" / "claude_desktop_config.json"


def _entry(client: str, project: Path | None, command: str) -> dict[str, Any]:
    args = ["mcp", "serve"]
    if client == "claude-desktop" and project is not None:
        # Claude Desktop starts servers outside any project: name it.
        args = ["--project", str(project), *args]
    entry: dict[str, Any] = {"command": command, "args": args}
    if client == "claude-code":
        entry = {"type": "stdio", **entry}
    return entry


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _toml_section(entry: dict[str, Any]) -> str:
    args = ", ".join(_toml_string(a) for a in entry["args"])
    return (
        f"[mcp_servers.{SERVER_NAME}]\n"
        f"command = {_toml_string(entry['command'])}\n"
        f"args = [{args}]\n"
    )


def _merge_json(text: str | None, entry: dict[str, Any], path: Path) -> tuple[str, bool]:
    doc: Any = {}
    if text is not None and text.strip():
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise Refused(
                f"{path} is not valid JSON ({exc}); fix it first, nothing was written"
            ) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("mcpServers", {}), dict):
            raise Refused(f"{path} does not hold an mcpServers object; nothing was written")
    servers = doc.setdefault("mcpServers", {})
    unchanged = servers.get(SERVER_NAME) == entry
    servers[SERVER_NAME] = entry
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n", unchanged


_SECTION = re.compile(r"^\s*\[\s*mcp_servers\s*\.\s*\"?" + SERVER_NAME + r"\"?\s*\]\s*(#.*)?$")
_HEADER = re.compile(r"^\s*\[")


def _merge_toml(text: str | None, entry: dict[str, Any], path: Path) -> tuple[str, bool]:
    text = text or ""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Refused(
            f"{path} is not valid TOML ({exc}); fix it first, nothing was written"
        ) from None
    current = doc.get("mcp_servers", {}).get(SERVER_NAME)
    if current == entry:
        return text, True
    kept: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        if _SECTION.match(line):
            skipping = True
            continue
        if skipping and _HEADER.match(line):
            skipping = False
        if not skipping:
            kept.append(line)
    body = "".join(kept)
    if body and not body.endswith("\n"):
        body += "\n"
    merged = body + ("\n" if body.strip() else "") + _toml_section(entry)
    try:
        check = tomllib.loads(merged).get("mcp_servers", {}).get(SERVER_NAME)
    except tomllib.TOMLDecodeError:
        check = None
    if check != entry:
        raise Refused(
            f"cannot merge into {path} safely (is [mcp_servers.{SERVER_NAME}] defined inline?); "
            "add the snippet by hand"
        )
    return merged, False


def install(
    client: str,
    *,
    project: Path | None,
    write: bool = False,
    user_home: Path | None = None,
    platform: str | None = None,
    command: str | None = None,
) -> InstallResult:
    """The config snippet for `client`; with `write`, merge it into the client's config file."""
    if client not in CLIENTS:
        raise InvalidInput(f"client must be one of {', '.join(CLIENTS)}")
    path = _config_path(client, project, user_home or Path.home(), platform or sys.platform)
    entry = _entry(client, project, command or _command())
    if client == "codex":
        snippet = _toml_section(entry)
    else:
        snippet = json.dumps({"mcpServers": {SERVER_NAME: entry}}, indent=2) + "\n"
    if not write:
        return InstallResult(client, path, snippet, False, None)
    try:
        text: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused(f"cannot read {path} ({exc}); nothing was written") from None
    merge = _merge_toml if client == "codex" else _merge_json
    merged, unchanged = merge(text, entry, path)
    if unchanged:
        return InstallResult(client, path, snippet, False, None, unchanged=True)
    backup = None
    if text is not None:
        backup = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}")
        shutil.copy2(path, backup)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, merged.encode("utf-8"))
    return InstallResult(client, path, snippet, True, backup)
