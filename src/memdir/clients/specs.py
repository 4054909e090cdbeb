"""The MCP clients memdir sets up: where each keeps its config, its shape, how it starts servers.

Every fact here was looked up in the client's own documentation (docs/clients.md
names the page for each and shows the table of files, keys and scopes).

A *project* file is meant to be committed, so it never names a machine path: the
command is ``memdir`` (found on PATH) and the project is the client's workspace variable
where it has one, else the client's working directory (it starts servers in the
project). A *user* file is machine-local and names the project with ``--project``,
because those clients start servers from elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memdir.errors import InvalidInput

__all__ = [
    "CLIENTS",
    "SCOPES",
    "ClientSpec",
    "client_spec",
    "config_path",
    "launch_cwd",
    "validate_name",
]

Format = Literal["json", "jsonc", "toml"]
SCOPES: tuple[str, ...] = ("project", "user")


@dataclass(frozen=True, slots=True)
class ClientSpec:
    """One MCP client: its config format, the key holding servers, scopes, variables."""

    name: str
    title: str
    format: Format
    #: The object (TOML: table) that maps server names to entries.
    key: str
    #: Scopes it reads, the default first.
    scopes: tuple[str, ...]
    #: The variable a project file can use for the workspace folder (None: there is none).
    workspace_var: str | None = None
    #: Whether an entry carries ``"type": "stdio"``.
    stdio_type: bool = False
    #: Where the format was looked up.
    source: str = ""


_SPECS: tuple[ClientSpec, ...] = (
    ClientSpec(
        "claude-code",
        "Claude Code",
        "json",
        "mcpServers",
        ("project",),
        stdio_type=True,
        source="https://docs.claude.com/en/docs/claude-code/mcp (project scope: .mcp.json)",
    ),
    ClientSpec(
        "claude-desktop",
        "Claude Desktop",
        "json",
        "mcpServers",
        ("user",),
        source="https://modelcontextprotocol.io/quickstart/user (claude_desktop_config.json)",
    ),
    ClientSpec(
        "cursor",
        "Cursor",
        "json",
        "mcpServers",
        ("project", "user"),
        workspace_var="${workspaceFolder}",
        source="https://cursor.com/docs/mcp (mcp.json locations, config interpolation)",
    ),
    ClientSpec(
        "codex",
        "Codex",
        "toml",
        "mcp_servers",
        ("user",),
        source="https://developers.openai.com/codex/mcp and codex docs/config.md (mcp_servers)",
    ),
    ClientSpec(
        "vscode",
        "VS Code",
        "jsonc",
        "servers",
        ("project", "user"),
        workspace_var="${workspaceFolder}",
        stdio_type=True,
        source="https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
    ),
    ClientSpec(
        "gemini",
        "Gemini CLI",
        "jsonc",
        "mcpServers",
        ("project", "user"),
        source="https://geminicli.com/docs/tools/mcp-server (settings.json mcpServers)",
    ),
    ClientSpec(
        "windsurf",
        "Windsurf",
        "json",
        "mcpServers",
        ("user",),
        source="https://docs.windsurf.com/windsurf/cascade/mcp (mcp_config.json)",
    ),
    ClientSpec(
        "zed",
        "Zed",
        "jsonc",
        "context_servers",
        ("user",),
        source="https://zed.dev/docs/ai/mcp (context_servers, custom servers)",
    ),
)

CLIENTS: tuple[str, ...] = tuple(spec.name for spec in _SPECS)
_BY_NAME = {spec.name: spec for spec in _SPECS}
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def client_spec(client: str) -> ClientSpec:
    """The spec of `client`; `InvalidInput` naming the known clients otherwise."""
    try:
        return _BY_NAME[client]
    except KeyError:
        raise InvalidInput(f"client must be one of {', '.join(CLIENTS)}") from None


def validate_name(name: str) -> str:
    """A server name every client accepts (letters, digits, ``-`` and ``_``)."""
    if not _NAME.match(name):
        raise InvalidInput("a server name is 1-64 letters, digits, '-' or '_'")
    return name


def _app_config(user_home: Path, platform: str, environ: Mapping[str, str], app: str) -> Path:
    """The per-user application config folder named `app` on `platform`."""
    if platform == "darwin":
        return user_home / "Library" / "Application Support" / app
    if platform.startswith("win"):
        appdata = environ.get("APPDATA")
        return (Path(appdata) if appdata else user_home / "AppData" / "Roaming") / app
    xdg = environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else user_home / ".config") / app


def config_path(
    spec: ClientSpec,
    scope: str,
    *,
    project: Path | None,
    user_home: Path,
    platform: str,
    environ: Mapping[str, str],
) -> Path:
    """The file `spec`'s client reads for `scope`."""
    if scope not in spec.scopes:
        raise InvalidInput(
            f"{spec.name} has no {scope}-level config; use --scope {' or '.join(spec.scopes)}"
        )
    if scope == "project":
        if project is None:
            raise InvalidInput(
                f"{spec.name} reads a project config: run inside a project or pass --project"
            )
        relative = {
            "claude-code": ".mcp.json",
            "cursor": ".cursor/mcp.json",
            "vscode": ".vscode/mcp.json",
            "gemini": ".gemini/settings.json",
        }[spec.name]
        return project / relative
    if spec.name == "claude-desktop":
        return _app_config(user_home, platform, environ, "Claude") / "claude_desktop_config.json"
    if spec.name == "cursor":
        return user_home / ".cursor" / "mcp.json"
    if spec.name == "codex":
        codex_home = environ.get("CODEX_HOME")
        return (Path(codex_home) if codex_home else user_home / ".codex") / "config.toml"
    if spec.name == "vscode":
        return _app_config(user_home, platform, environ, "Code") / "User" / "mcp.json"
    if spec.name == "gemini":
        return user_home / ".gemini" / "settings.json"
    if spec.name == "windsurf":
        return user_home / ".codeium" / "windsurf" / "mcp_config.json"
    # Zed keeps ~/.config/zed on macOS as well; on Windows it lives under %APPDATA%.
    if platform.startswith("win"):
        return _app_config(user_home, platform, environ, "Zed") / "settings.json"
    xdg = environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else user_home / ".config") / "zed" / "settings.json"


def launch_cwd(spec: ClientSpec, scope: str, *, project: Path | None, user_home: Path) -> Path:
    """Where the client starts a server: the workspace for project files, else elsewhere.

    Codex runs in the folder it was started from, like a project client; the GUI
    clients start servers outside any project, which `memdir mcp check` imitates with
    the user's home folder.
    """
    if project is not None and (scope == "project" or spec.name == "codex"):
        return project
    return user_home
