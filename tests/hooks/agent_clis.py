"""Run the real agent CLIs (Claude Code, Codex, Gemini CLI) for one turn, offline.

Each CLI runs with a temporary HOME (and CODEX_HOME / GEMINI_CLI_HOME inside it), a scrubbed
environment and its model pointed at a scripted server on loopback (`model_servers`). The
binaries come from `$MEMDIR_AGENT_CLIS/bin` when that variable is set, else from the running
virtual environment's `bin` (where `.ci/run` installs them with `npm --global --prefix`).
Node (>= 22) must be in that `bin` or on PATH: the Codex and Gemini launchers are Node
scripts; Claude Code is a native binary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

#: Generous: the CLIs start slowly, more so on a loaded machine.
TIMEOUT = 120.0

CLAUDE_MODEL = "claude-sonnet-4-5"
CODEX_MODEL = "gpt-5-codex"
GEMINI_MODEL = "gemini-2.5-flash"
FAKE_KEY = "sk-test-offline"

#: Variables passed through from the test process (everything else is dropped).
_PASS_THROUGH = ("LANG", "LC_ALL", "TZ", "TMPDIR", "SYSTEMROOT")


def clis_prefix() -> Path:
    """Where the CLIs are installed: `$MEMDIR_AGENT_CLIS`, else the venv (`sys.prefix`)."""
    configured = os.environ.get("MEMDIR_AGENT_CLIS")
    return Path(configured) if configured else Path(sys.prefix)


def find_cli(name: str) -> Path | None:
    """The CLI binary `name` (claude, codex, gemini) under the prefix, or None."""
    path = clis_prefix() / "bin" / name
    return path if path.exists() and os.access(path, os.X_OK) else None


def find_node() -> Path | None:
    """A `node` next to the CLIs, in the venv, or on PATH."""
    for directory in (clis_prefix() / "bin", Path(sys.prefix) / "bin"):
        candidate = directory / "node"
        if candidate.exists():
            return candidate
    found = shutil.which("node")
    return Path(found) if found else None


def base_env(home: Path, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A minimal environment: HOME and XDG dirs inside `home`, PATH with node and python."""
    dirs: list[str] = [str(clis_prefix() / "bin"), str(Path(sys.executable).parent)]
    node = find_node()
    if node is not None:
        dirs.append(str(node.parent))
    dirs += ["/usr/local/bin", "/usr/bin", "/bin"]
    env = {k: os.environ[k] for k in _PASS_THROUGH if k in os.environ}
    env.update(
        {
            "HOME": str(home),
            "USERPROFILE": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "PATH": os.pathsep.join(dict.fromkeys(dirs)),
            "NO_COLOR": "1",
            "CI": "1",
            "TERM": "dumb",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
    )
    env.setdefault("LANG", "C.UTF-8")
    if extra_env:
        env.update(extra_env)
    return env


def _run(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _require(name: str) -> Path:
    path = find_cli(name)
    if path is None:
        raise FileNotFoundError(f"{name} is not installed under {clis_prefix() / 'bin'}")
    return path


# -- Claude Code ----------------------------------------------------------------------------


def claude_env(
    home: Path, base_url: str, extra_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    env = base_env(home)
    env.update(
        {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": FAKE_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        }
    )
    if extra_env:
        env.update(extra_env)
    return env


def run_claude(
    project: Path,
    home: Path,
    base_url: str,
    prompt: str,
    *,
    continue_: bool = False,
    resume: str | None = None,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """`claude -p PROMPT` in `project` (its `.claude/settings.json` hooks run)."""
    argv = [str(_require("claude")), "-p", "--model", CLAUDE_MODEL]
    if continue_:
        argv.append("--continue")
    if resume:
        argv += ["--resume", resume]
    argv += [*extra_args, prompt]
    return _run(argv, project, claude_env(home, base_url, extra_env), timeout)


def write_claude_hooks(project: Path, hooks: Mapping[str, str | Sequence[str]]) -> Path:
    """`.claude/settings.json` in `project` running a command per event (`{event: cmd}`)."""
    settings = {
        "hooks": {
            event: [
                {
                    "hooks": [
                        {"type": "command", "command": c, "timeout": 60}
                        for c in ([cmds] if isinstance(cmds, str) else cmds)
                    ]
                }
            ]
            for event, cmds in hooks.items()
        }
    }
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return path


# -- Codex ----------------------------------------------------------------------------------


def codex_home(home: Path) -> Path:
    return home / ".codex"


def write_codex_config(home: Path, base_url: str, *, extra_toml: str = "") -> Path:
    """$CODEX_HOME/config.toml: the scripted provider at `base_url` (ends in /v1), hooks on."""
    path = codex_home(home) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'model = "{CODEX_MODEL}"\n'
        'model_provider = "scripted"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "read-only"\n'
        "check_for_update_on_startup = false\n"
        "\n[features]\nhooks = true\n"
        "\n[analytics]\nenabled = false\n"
        "\n[model_providers.scripted]\n"
        'name = "scripted"\n'
        f'base_url = "{base_url}"\n'
        'env_key = "SCRIPTED_API_KEY"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n" + extra_toml,
        encoding="utf-8",
    )
    return path


def codex_hooks_json(hooks: Mapping[str, str | Sequence[str]]) -> dict[str, object]:
    """The hooks.json shape Codex reads: `{event: [{"hooks": [{command}]}]}`."""
    return {
        "hooks": {
            event: [
                {
                    "hooks": [
                        {"type": "command", "command": c, "timeout": 60}
                        for c in ([cmds] if isinstance(cmds, str) else cmds)
                    ]
                }
            ]
            for event, cmds in hooks.items()
        }
    }


def run_codex(
    project: Path,
    home: Path,
    base_url: str,
    prompt: str,
    *,
    resume_last: bool = False,
    resume: str | None = None,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """`codex exec PROMPT` (or `codex exec resume --last|ID PROMPT`) in `project`.

    Writes $CODEX_HOME/config.toml for the scripted provider unless one exists already.
    """
    config = codex_home(home) / "config.toml"
    if not config.exists():
        write_codex_config(home, base_url)
    argv = [str(_require("codex")), "exec", "--skip-git-repo-check"]
    if resume_last or resume:
        argv += ["resume", "--last"] if resume_last else ["resume", str(resume)]
    argv += [*extra_args, prompt]
    env = base_env(home)
    env.update(
        {
            "CODEX_HOME": str(codex_home(home)),
            "SCRIPTED_API_KEY": FAKE_KEY,
            "RUST_LOG": "warn",
        }
    )
    if extra_env:
        env.update(extra_env)
    return _run(argv, project, env, timeout)


# -- Gemini CLI -----------------------------------------------------------------------------


def write_gemini_settings(home: Path, extra: Mapping[str, object] | None = None) -> Path:
    """~/.gemini/settings.json selecting API-key auth (plus `extra` top-level keys)."""
    settings: dict[str, object] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "ui": {"hideTips": True, "hideBanner": True},
    }
    if extra:
        settings.update(extra)
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return path


def run_gemini(
    project: Path,
    home: Path,
    base_url: str,
    prompt: str,
    *,
    resume: str | None = None,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """`gemini -p PROMPT` in `project` (`--resume latest|ID` for a later turn)."""
    if not (home / ".gemini" / "settings.json").exists():
        write_gemini_settings(home)
    argv = [str(_require("gemini")), "--model", GEMINI_MODEL]
    if resume:
        argv += ["--resume", resume]
    argv += [*extra_args, "-p", prompt]
    env = base_env(home)
    env.update(
        {
            "GOOGLE_GEMINI_BASE_URL": base_url,
            "GEMINI_API_KEY": FAKE_KEY,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }
    )
    if extra_env:
        env.update(extra_env)
    return _run(argv, project, env, timeout)
