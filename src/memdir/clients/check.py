"""`memdir mcp check`: start memdir the way a client's config says and report what would fail.

The check reads the client's file, finds memdir's entry, fills in the variables the
client would (``${workspaceFolder}``, ``${userHome}``, ``${env:NAME}``; ``$NAME`` for
Gemini CLI), builds the environment it would pass (Codex forwards only a short list of
variables plus ``env``) and the folder it would start in, then talks to the server over
stdio with the MCP SDK's client: initialize, list tools, one ``memory_search``. Each
failure becomes a named problem with the server's last stderr lines, never a traceback.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.clients.install import SERVER_NAME, parse_config
from memdir.clients.specs import ClientSpec, client_spec, config_path, launch_cwd, validate_name
from memdir.clients.trust import Approval, approvals
from memdir.errors import Refused

__all__ = ["PROBLEMS", "CheckReport", "check"]

#: Every problem a check can report, in the order the steps run.
PROBLEMS: tuple[str, ...] = (
    "config_missing",
    "config_invalid",
    "entry_missing",
    "entry_invalid",
    "command_not_found",
    "server_exited",
    "handshake_failed",
    "timeout",
    "tool_missing",
    "tool_error",
)

#: The variables Codex passes to a stdio server besides its ``env`` (codex-rs rmcp-client,
#: ``DEFAULT_ENV_VARS``); everything else must be listed in ``env`` or ``env_vars``.
_CODEX_ENV = {
    "posix": (
        "HOME",
        "LOGNAME",
        "PATH",
        "SHELL",
        "USER",
        "__CF_USER_TEXT_ENCODING",
        "LANG",
        "LC_ALL",
        "TERM",
        "TMPDIR",
        "TZ",
    ),
    "nt": (
        "PATH",
        "PATHEXT",
        "USERNAME",
        "USERDOMAIN",
        "USERPROFILE",
        "TEMP",
        "TMP",
        "SYSTEMROOT",
        "APPDATA",
        "LOCALAPPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "PROGRAMDATA",
        "PROGRAMFILES",
        "COMSPEC",
    ),
}
_VAR = re.compile(r"\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}")
_SHELL_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


@dataclass(frozen=True, slots=True)
class CheckReport:
    """The outcome of one check: ok, or the first problem and what was seen on the way."""

    client: str
    scope: str
    path: Path
    name: str
    ok: bool
    problem: str | None = None
    detail: str = ""
    #: The command line as the client would run it (after variables are filled in).
    command: tuple[str, ...] = ()
    cwd: Path | None = None
    tools: tuple[str, ...] = ()
    protocol_version: str | None = None
    #: Steps that passed, in order ("config", "entry", "command", "initialize", ...).
    passed: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    stderr: str = ""
    env_names: tuple[str, ...] = field(default_factory=tuple)
    #: The approval or trust steps the client asks for before it runs the server
    #: (`memdir.clients.trust.Approval`); any not "approved" means it does not run yet.
    approvals: tuple[Approval, ...] = ()

    @property
    def pending(self) -> tuple[Approval, ...]:
        """The steps the client still asks for."""
        return tuple(a for a in self.approvals if a.state != "approved")


def _expand(
    value: str, spec: ClientSpec, project: Path | None, user_home: Path, env: Mapping[str, str]
) -> str:
    if spec.name == "gemini":
        return _SHELL_VAR.sub(lambda m: env.get(m.group(1) or m.group(2), ""), value)

    def one(match: re.Match[str]) -> str:
        if match.group(1) == "workspaceFolder":
            if project is None:
                raise _Fail("entry_invalid", "${workspaceFolder} needs a project (--project)")
            return str(project)
        if match.group(1) == "userHome":
            return str(user_home)
        return env.get(match.group(2) or "", "")

    return _VAR.sub(one, value)


class _Fail(Exception):
    def __init__(self, problem: str, detail: str) -> None:
        super().__init__(detail)
        self.problem = problem
        self.detail = detail


def _base_env(
    spec: ClientSpec, entry: Mapping[str, Any], environ: Mapping[str, str]
) -> dict[str, str]:
    if spec.name != "codex":
        return dict(environ)
    names = set(_CODEX_ENV["nt" if os.name == "nt" else "posix"])
    forwarded = entry.get("env_vars", [])
    if isinstance(forwarded, list):
        names.update(str(n) for n in forwarded)
    return {k: v for k, v in environ.items() if k in names}


def _tail(text: str, lines: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _text_of(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in getattr(result, "content", []) or [])


async def _talk(
    params: Any, errlog: Any, timeout: float, passed: list[str]
) -> tuple[str | None, list[str]]:
    """Initialize, list tools and search once (each step passed is appended to `passed`)."""
    import anyio
    from mcp.client.stdio import stdio_client

    from mcp import ClientSession

    step = "initialize"
    version: str | None = None
    names: list[str] = []
    try:
        with anyio.fail_after(timeout):
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                init = await session.initialize()
                version = str(getattr(init, "protocol_version", None) or "") or None
                passed.append(step)
                step = "list_tools"
                names = [t.name for t in (await session.list_tools()).tools]
                if "memory_search" not in names:
                    raise _Fail("tool_missing", f"the server lists no memory_search ({names})")
                passed.append(step)
                step = "memory_search"
                result = await session.call_tool(
                    "memory_search", {"query": "memdir check", "limit": 1}
                )
                if getattr(result, "is_error", False):
                    raise _Fail("tool_error", f"memory_search failed: {_text_of(result)}")
                passed.append(step)
    except TimeoutError:
        raise _Fail("timeout", f"no answer to {step} within {timeout:g} s") from None
    return version, names


def _first_fail(exc: BaseException) -> _Fail | None:
    if isinstance(exc, _Fail):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _first_fail(inner)
            if found is not None:
                return found
    return None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def check(
    client: str,
    *,
    project: Path | None,
    scope: str | None = None,
    name: str = SERVER_NAME,
    user_home: Path | None = None,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> CheckReport:
    """Start memdir as `client`'s config says and report the first thing that fails."""
    spec = client_spec(client)
    validate_name(name)
    scope = scope or spec.scopes[0]
    environ = dict(os.environ if environ is None else environ)
    user_home = user_home or Path.home()
    path = config_path(
        spec,
        scope,
        project=project,
        user_home=user_home,
        platform=platform or sys.platform,
        environ=environ,
    )
    passed: list[str] = []
    warnings: list[str] = []
    command: tuple[str, ...] = ()
    cwd: Path | None = None
    stderr = ""
    env_names: tuple[str, ...] = ()

    def report(problem: str | None, detail: str = "", **extra: Any) -> CheckReport:
        return CheckReport(
            spec.name,
            scope,
            path,
            name,
            ok=problem is None,
            problem=problem,
            detail=detail,
            command=command,
            cwd=cwd,
            passed=tuple(passed),
            warnings=tuple(warnings),
            stderr=stderr,
            env_names=env_names,
            **extra,
        )

    try:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise _Fail(
                "config_missing",
                f"{path} does not exist (run `memdir mcp install --client {spec.name}`)",
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise _Fail("config_invalid", f"cannot read {path}: {exc}") from None
        try:
            doc = parse_config(spec, text, path)
        except Refused as exc:
            raise _Fail("config_invalid", str(exc)) from None
        passed.append("config")
        servers = doc.get(spec.key, {})
        entry = servers.get(name)
        if entry is None:
            found = ", ".join(sorted(servers)) or "none"
            raise _Fail(
                "entry_missing", f"no {name!r} under {spec.key!r} in {path} (servers: {found})"
            )
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
            raise _Fail(
                "entry_invalid", f"the {name!r} entry has no command (a stdio server needs one)"
            )
        args = entry.get("args", [])
        entry_env = entry.get("env") or {}
        if not isinstance(args, list) or not isinstance(entry_env, dict):
            raise _Fail(
                "entry_invalid", f"the {name!r} entry's args must be a list and env an object"
            )
        if entry.get("disabled") is True or entry.get("enabled") is False:
            warnings.append(f"the {name!r} entry is switched off in {spec.title}")
        passed.append("entry")

        env = _base_env(spec, entry, environ)
        for key, value in entry_env.items():
            env[str(key)] = _expand(str(value), spec, project, user_home, environ)
        env_names = tuple(sorted(entry_env))
        home_here = environ.get("MEMDIR_HOME")
        if home_here and "MEMDIR_HOME" not in entry_env:
            warnings.append(
                f"MEMDIR_HOME is set here ({home_here}) but the entry does not pass it: "
                f"{spec.title} may start memdir with the default home ~/.memdir"
            )
        program = _expand(entry["command"], spec, project, user_home, environ)
        argv = [_expand(str(a), spec, project, user_home, environ) for a in args]
        command = (program, *argv)
        raw_cwd = entry.get("cwd")
        cwd = (
            Path(_expand(str(raw_cwd), spec, project, user_home, environ))
            if raw_cwd
            else launch_cwd(spec, scope, project=project, user_home=user_home)
        )
        if not cwd.is_dir():
            raise _Fail(
                "entry_invalid", f"the folder the server would start in ({cwd}) does not exist"
            )
        executable = shutil.which(program, path=env.get("PATH", os.defpath))
        if executable is None:
            hint = (
                "install memdir for your user (`pipx install memdir` or `uv tool install "
                "memdir`) or put its bin folder on PATH"
                if Path(program).name.startswith("memdir")
                else "is the path right?"
            )
            raise _Fail(
                "command_not_found",
                f"{program!r} is not an executable on the client's PATH: {hint}",
            )
        passed.append("command")

        from mcp.client.stdio import StdioServerParameters

        params = StdioServerParameters(command=executable, args=argv, env=env, cwd=cwd)
        import anyio

        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
            try:
                version, tools = anyio.run(_talk, params, errlog, timeout, passed)
            except BaseException as exc:  # the SDK raises groups and transport errors alike
                if isinstance(exc, KeyboardInterrupt):
                    raise
                errlog.seek(0)
                stderr = _tail(errlog.read())
                known = _first_fail(exc)
                if known is not None:
                    raise known from None
                if stderr:
                    raise _Fail(
                        "server_exited",
                        f"the server stopped during the handshake ({_describe(exc)})",
                    ) from None
                raise _Fail("handshake_failed", _describe(exc)) from None
            errlog.seek(0)
            stderr = _tail(errlog.read())
        steps = approvals(
            spec.name,
            project=project,
            user_home=user_home,
            environ=environ,
            purpose="mcp",
            scope=scope,
            server=name,
        )
        return report(
            None, "", tools=tuple(tools), protocol_version=version, approvals=tuple(steps)
        )
    except _Fail as fail:
        return report(fail.problem, fail.detail)
