"""The approval and trust steps agent clients ask for before they run a project's MCP
server or hooks, read from the clients' own state files, so `install` can say what the
user will be asked and `check` can report "pending" instead of "works".

- Claude Code holds a project ``.mcp.json`` server as pending until it is approved
  (``enabledMcpjsonServers`` or ``enableAllProjectMcpServers`` in the project's
  ``.claude/settings.local.json``/``settings.json``, or the user's ``~/.claude.json``
  entry for the project); ``disabledMcpjsonServers`` turns it off. Project hooks run once
  the folder's trust dialog was accepted (``hasTrustDialogAccepted``).
- Gemini CLI ignores a project's settings (its servers and hooks) in an untrusted folder
  (``~/.gemini/trustedFolders.json``: ``TRUST_FOLDER``, ``TRUST_PARENT``, ``DO_NOT_TRUST``).
- Codex runs hooks only once they are trusted (``[hooks.state."…"] trusted_hash`` in
  ``$CODEX_HOME/config.toml``, asked for at an interactive start) and reads a project's
  ``.codex/`` only in a trusted project (``[projects."PATH"] trust_level = "trusted"``).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Approval", "approval_notes", "approvals"]


@dataclass(frozen=True, slots=True)
class Approval:
    """One step a client asks for: `state` is "approved", "pending" or "refused"."""

    what: str
    state: str
    detail: str


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _claude_state(user_home: Path, environ: Mapping[str, str]) -> dict[str, Any]:
    base = Path(environ["CLAUDE_CONFIG_DIR"]) if environ.get("CLAUDE_CONFIG_DIR") else user_home
    return _json(base / ".claude.json")


def _claude(
    project: Path | None, user_home: Path, environ: Mapping[str, str], server: str
) -> list[Approval]:
    if project is None:
        return []
    projects = _claude_state(user_home, environ).get("projects")
    mine = projects.get(str(project), {}) if isinstance(projects, dict) else {}
    mine = mine if isinstance(mine, dict) else {}
    out: list[Approval] = []
    trusted = bool(mine.get("hasTrustDialogAccepted"))
    out.append(
        Approval(
            "folder trust (project hooks)",
            "approved" if trusted else "pending",
            "accepted"
            if trusted
            else "Claude Code asks whether you trust this folder the first time you start "
            "`claude` in it; project hooks run once you accept (`claude -p` skips the dialog)",
        )
    )
    if (project / ".mcp.json").is_file():
        settings = [mine]
        for name in ("settings.local.json", "settings.json"):
            settings.append(_json(project / ".claude" / name))
        disabled = any(server in (s.get("disabledMcpjsonServers") or []) for s in settings)
        enabled = any(
            s.get("enableAllProjectMcpServers") is True
            or server in (s.get("enabledMcpjsonServers") or [])
            for s in settings
        )
        if disabled:
            out.append(
                Approval(
                    "MCP server approval",
                    "refused",
                    f"the project's .mcp.json server {server!r} was rejected "
                    "(disabledMcpjsonServers): enable it in `claude` with /mcp",
                )
            )
        else:
            out.append(
                Approval(
                    "MCP server approval",
                    "approved" if enabled else "pending",
                    "approved"
                    if enabled
                    else f"Claude Code holds the project's .mcp.json server {server!r} as pending "
                    "approval: start `claude` in the project and approve it, or add it to "
                    '"enabledMcpjsonServers" in .claude/settings.local.json',
                )
            )
    return out


def _gemini_trusted(project: Path, user_home: Path, environ: Mapping[str, str]) -> bool | None:
    """Gemini CLI's verdict for `project` (None: no rule covers it). A TRUST_FOLDER rule on X
    covers X and below, TRUST_PARENT on X covers X's parent and below, DO_NOT_TRUST on X
    covers X and below; the rule with the longest covered path wins."""
    from memdir.clients import jsonc

    custom = environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
    path = Path(custom) if custom else user_home / ".gemini" / "trustedFolders.json"
    try:
        rules = jsonc.loads(path.read_text(encoding="utf-8"))  # Gemini allows comments
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(rules, dict):
        return None
    verdict: bool | None = None
    best = -1
    for raw, rule in rules.items():
        folder = Path(raw)
        covered = folder.parent if rule == "TRUST_PARENT" else folder
        if (project == covered or covered in project.parents) and len(covered.parts) > best:
            best = len(covered.parts)
            verdict = rule != "DO_NOT_TRUST"
    return verdict


def _gemini(project: Path | None, user_home: Path, environ: Mapping[str, str]) -> list[Approval]:
    if project is None:
        return []
    if environ.get("GEMINI_CLI_TRUST_WORKSPACE", "").lower() == "true":
        return [Approval("folder trust", "approved", "GEMINI_CLI_TRUST_WORKSPACE=true")]
    settings = _json(user_home / ".gemini" / "settings.json")
    security = settings.get("security") if isinstance(settings.get("security"), dict) else {}
    folder = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(folder, dict) and folder.get("enabled") is False:
        return [Approval("folder trust", "approved", "folder trust is switched off")]
    trusted = _gemini_trusted(project, user_home, environ)
    if trusted:
        return [Approval("folder trust", "approved", "the folder is trusted")]
    state = "refused" if trusted is False else "pending"
    return [
        Approval(
            "folder trust",
            state,
            "Gemini CLI disables a project's MCP servers and hooks in an untrusted folder: "
            "trust it when `gemini` asks (or with /permissions), which writes "
            "~/.gemini/trustedFolders.json",
        )
    ]


def _codex(project: Path | None, user_home: Path, environ: Mapping[str, str]) -> list[Approval]:
    base = Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else user_home / ".codex"
    hooks_file = (project if project is not None else base.parent) / ".codex" / "hooks.json"
    if project is None and environ.get("CODEX_HOME"):
        hooks_file = base / "hooks.json"
    try:
        config = tomllib.loads((base / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        config = {}
    out: list[Approval] = []
    hooks = config.get("hooks") if isinstance(config.get("hooks"), dict) else {}
    state = hooks.get("state") if isinstance(hooks, dict) else None
    # Keyed "FILE:EVENT:GROUP:INDEX": memdir's hooks are trusted when one of its file is.
    trusted = isinstance(state, dict) and any(
        str(k).startswith(f"{hooks_file}:") and isinstance(v, dict) and v.get("trusted_hash")
        for k, v in state.items()
    )
    out.append(
        Approval(
            "hook trust",
            "approved" if trusted else "pending",
            "hooks trusted"
            if trusted
            else "Codex runs new hooks only after you trust them: start `codex` once and "
            "accept them (`codex exec` skips untrusted hooks silently, or pass "
            "--dangerously-bypass-hook-trust)",
        )
    )
    if project is not None:
        projects = config.get("projects") if isinstance(config.get("projects"), dict) else {}
        entry = projects.get(str(project)) if isinstance(projects, dict) else None
        ok = isinstance(entry, dict) and entry.get("trust_level") == "trusted"
        out.append(
            Approval(
                "project trust",
                "approved" if ok else "pending",
                "trusted"
                if ok
                else "Codex reads a project's .codex/ folder only in a trusted project: trust "
                "it when `codex` asks (or `codex exec --trust`)",
            )
        )
    return out


def approvals(
    client: str,
    *,
    project: Path | None,
    user_home: Path,
    environ: Mapping[str, str],
    purpose: str = "hooks",
    scope: str = "project",
    server: str = "memdir",
) -> list[Approval]:
    """The approval steps `client` asks for before it runs memdir's `purpose` ("hooks" or
    "mcp") from a `scope` file here, and where each stands."""
    if client == "claude-code":
        steps = _claude(project, user_home, environ, server)
        wanted = "MCP server approval" if purpose == "mcp" else "folder trust (project hooks)"
        return [s for s in steps if s.what == wanted and (scope == "project" or purpose != "mcp")]
    if client == "gemini" and scope == "project":
        return _gemini(project, user_home, environ)
    if client == "codex" and purpose == "hooks":
        steps = _codex(project if scope == "project" else None, user_home, environ)
        return steps
    return []


def approval_notes(
    client: str,
    *,
    project: Path | None,
    user_home: Path,
    environ: Mapping[str, str],
    purpose: str = "hooks",
    scope: str = "project",
) -> list[str]:
    """What install says about the steps still to take."""
    steps = approvals(
        client,
        project=project,
        user_home=user_home,
        environ=environ,
        purpose=purpose,
        scope=scope,
    )
    return [f"{a.what}: {a.detail}" for a in steps if a.state != "approved"]
