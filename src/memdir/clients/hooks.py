"""Merge memdir's hook entries into an agent client's hook configuration (§11), with the
rules of `memdir mcp install`: every other hook and key kept (comments too, outside the
event lists memdir changes), the original backed up under the memdir home, a second
install changing nothing, no machine path in a project file, and a refused file that
does not parse. Each client's events, files and shapes are documented in docs/hooks.md.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memdir.clients import jsonc
from memdir.clients.install import Launcher, read_config, this_memdir, write_merged
from memdir.errors import InvalidInput, Refused

__all__ = [
    "HOOK_CLIENTS",
    "KINDS",
    "HookEvent",
    "HookInstall",
    "HookSpec",
    "Kind",
    "hook_spec",
    "hooks_path",
    "install_hooks",
    "installed_events",
    "is_memdir_hook",
]


#: memdir's kinds of hook event: a run starts; the user sent a message; history is about
#: to be compacted; the agent finished its answer; the session ended; a subagent stopped.
Kind = Literal["start", "prompt", "compact", "stop", "end", "subagent"]
KINDS: tuple[Kind, ...] = ("start", "prompt", "compact", "stop", "end", "subagent")


@dataclass(frozen=True, slots=True)
class HookEvent:
    """One of a client's hook events: memdir's kind of it and the seconds it may take
    (None: memdir answers it when run but does not install it)."""

    name: str
    kind: Kind
    seconds: int | None = 10


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One client's hooks: where they live, their events, and how output adds context."""

    name: str
    title: str
    #: Project file (relative to the project) and user file (relative to the user's home).
    project_file: str
    user_file: str
    events: tuple[HookEvent, ...]
    #: "groups": ``hooks.EVENT = [{"matcher", "hooks": [{"type": "command", …}]}]``
    #: (Claude Code, Codex, Gemini CLI); "flat": ``hooks.EVENT = [{"command": …}]`` (Cursor).
    shape: str = "groups"
    #: Timeouts in milliseconds rather than seconds (Gemini CLI).
    millis: bool = False
    #: An environment variable naming the user folder instead of `user_file`'s parent.
    user_dir_var: str | None = None
    #: Environment variables the client sets to the project folder in a hook.
    project_vars: tuple[str, ...] = ()
    #: The prompt index comes with a session's first message instead of at its start
    #: (Gemini CLI 0.61 drops the earlier turns of a resumed session whose start hook
    #: added context).
    index_on_prompt: bool = False

    @property
    def installed(self) -> tuple[tuple[str, int], ...]:
        """The events memdir installs, with the seconds each may take."""
        return tuple((e.name, e.seconds) for e in self.events if e.seconds is not None)

    def kind(self, event: str) -> Kind | None:
        """memdir's kind of one of this client's events, or a kind named as such (None:
        not one memdir answers); matched without regard to case, ``_`` or ``-``."""
        folded = event.replace("_", "").replace("-", "").lower()
        found = next((e.kind for e in self.events if e.name.lower() == folded), None)
        return found or next((k for k in KINDS if k == folded), None)


def _claude_like(stop: str = "Stop") -> tuple[HookEvent, ...]:
    return (
        HookEvent("SessionStart", "start"),
        HookEvent("UserPromptSubmit", "prompt"),
        HookEvent("PreCompact", "compact", 30),
        HookEvent(stop, "stop", 30),
        HookEvent("SessionEnd", "end", 30),
        HookEvent("SubagentStop", "subagent", None),
    )


HOOK_CLIENTS: dict[str, HookSpec] = {
    s.name: s
    for s in (
        HookSpec(
            "claude-code",
            "Claude Code",
            ".claude/settings.json",
            ".claude/settings.json",
            _claude_like(),
            user_dir_var="CLAUDE_CONFIG_DIR",
            project_vars=("CLAUDE_PROJECT_DIR",),
        ),
        HookSpec(
            "codex",
            "Codex",
            ".codex/hooks.json",
            ".codex/hooks.json",
            _claude_like(),
            user_dir_var="CODEX_HOME",
        ),
        HookSpec(
            "gemini",
            "Gemini CLI",
            ".gemini/settings.json",
            ".gemini/settings.json",
            (
                # Not installed: context a start hook adds makes `--resume` drop the earlier
                # turns in 0.61 (the index comes with the first message instead), and
                # PreCompress fires on every turn, compressing or not.
                HookEvent("SessionStart", "start", None),
                HookEvent("BeforeAgent", "prompt"),
                HookEvent("PreCompress", "compact", None),
                HookEvent("AfterAgent", "stop", 30),
                HookEvent("SessionEnd", "end", 30),
            ),
            millis=True,
            project_vars=("GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"),
            index_on_prompt=True,
        ),
        HookSpec(
            "cursor",
            "Cursor",
            ".cursor/hooks.json",
            ".cursor/hooks.json",
            (
                HookEvent("sessionStart", "start"),
                # Documented output: continue/user_message only; builds that read
                # additional_context attach recall, the others ignore it.
                HookEvent("beforeSubmitPrompt", "prompt"),
                HookEvent("preCompact", "compact", 30),
                HookEvent("stop", "stop", 30),
                HookEvent("sessionEnd", "end", 30),
                HookEvent("subagentStop", "subagent", None),
            ),
            shape="flat",
            project_vars=("CURSOR_PROJECT_DIR", "CLAUDE_PROJECT_DIR"),
        ),
    )
}


def hook_spec(client: str) -> HookSpec:
    """The hook spec of `client` (InvalidInput for an unknown one)."""
    try:
        return HOOK_CLIENTS[client]
    except KeyError:
        names = ", ".join(sorted(HOOK_CLIENTS))
        raise InvalidInput(f"no hooks for client {client!r} (choose from {names})") from None


def hooks_path(
    spec: HookSpec,
    scope: str,
    *,
    project: Path | None,
    user_home: Path,
    environ: Mapping[str, str],
) -> Path:
    """The file memdir's hooks go into."""
    if scope == "project":
        if project is None:
            raise InvalidInput(
                f"no project here for {spec.title}'s project hooks: run it in a project, pass "
                "--project, or use --scope user"
            )
        return project / spec.project_file
    if scope != "user":
        raise InvalidInput(f"scope must be project or user, not {scope!r}")
    if spec.user_dir_var and environ.get(spec.user_dir_var):
        return Path(environ[spec.user_dir_var]) / Path(spec.user_file).name
    return user_home / spec.user_file


def is_memdir_hook(hook: Any) -> bool:
    """Whether one hook entry runs `memdir hook` (by any path to memdir)."""
    if not isinstance(hook, Mapping):
        return False
    command = hook.get("command")
    if not isinstance(command, str):
        return False
    words = command.split()
    return (
        any(
            Path(w.strip("'\"")).name in ("memdir", "memdir.exe") and words[i + 1 :][:1] == ["hook"]
            for i, w in enumerate(words)
        )
        or " -m memdir hook " in f" {command} "
    )


def _command(spec: HookSpec, launcher: Launcher, event: str) -> str:
    import shlex

    # A --command such as "uvx memdir" is words; an installed path may hold a space.
    head = (
        [launcher.command]
        if Path(launcher.command).is_absolute()
        else shlex.split(launcher.command)
    )
    parts = [*head, *launcher.prefix, "hook", "--client", spec.name, event]
    return shlex.join(parts)


def _ours(spec: HookSpec, launcher: Launcher, event: str, seconds: int) -> dict[str, Any]:
    command = _command(spec, launcher, event)
    if spec.shape == "flat":
        return {"command": command}
    hook: dict[str, Any] = {"type": "command", "command": command}
    if spec.name == "gemini":
        hook["name"] = "memdir"
    hook["timeout"] = seconds * 1000 if spec.millis else seconds
    return {"hooks": [hook]}


def _without_ours(spec: HookSpec, entries: Sequence[Any]) -> list[Any]:
    """The event's entries with memdir's hooks taken out (a group left empty goes)."""
    kept: list[Any] = []
    for entry in entries:
        if spec.shape == "flat":
            if not is_memdir_hook(entry):
                kept.append(entry)
            continue
        hooks = entry.get("hooks") if isinstance(entry, Mapping) else None
        if not isinstance(hooks, list):
            kept.append(entry)
            continue
        others = [h for h in hooks if not is_memdir_hook(h)]
        if len(others) == len(hooks):
            kept.append(entry)
        elif others:
            kept.append({**entry, "hooks": others})
    return kept


def installed_events(spec: HookSpec, doc: Mapping[str, Any]) -> dict[str, list[str]]:
    """Event → the memdir commands configured for it in a parsed hook file."""
    table = doc.get("hooks") if isinstance(doc, Mapping) else None
    found: dict[str, list[str]] = {}
    if not isinstance(table, Mapping):
        return found
    for event, entries in table.items():
        if not isinstance(entries, list):
            continue
        hooks = (
            entries
            if spec.shape == "flat"
            else [
                h
                for e in entries
                if isinstance(e, Mapping) and isinstance(e.get("hooks"), list)
                for h in e["hooks"]
            ]
        )
        commands = [str(h["command"]) for h in hooks if is_memdir_hook(h)]
        if commands:
            found[str(event)] = commands
    return found


@dataclass(frozen=True, slots=True)
class HookInstall:
    """What `install_hooks` wrote (or would write) and what the user must still do."""

    client: str
    scope: str
    path: Path
    events: tuple[str, ...]
    written: bool
    unchanged: bool
    dry_run: bool
    backup: Path | None
    diff: str
    notes: tuple[str, ...]


def _parse(text: str | None, path: Path) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        doc = jsonc.loads(text)
    except ValueError as exc:
        raise Refused(f"{path} does not parse ({exc}); nothing was written") from None
    if not isinstance(doc, dict):
        raise Refused(f"{path} is not a JSON object; nothing was written")
    if "hooks" in doc and not isinstance(doc["hooks"], dict):
        raise Refused(f'"hooks" in {path} is not an object; nothing was written')
    return doc


def install_hooks(
    client: str,
    *,
    project: Path | None,
    scope: str = "project",
    dry_run: bool = False,
    user_home: Path | None = None,
    environ: Mapping[str, str] | None = None,
    command: str | None = None,
    memdir_home: Path | None = None,
) -> HookInstall:
    """Merge memdir's hooks into `client`'s hook file for `scope`."""
    from memdir.clients.trust import approval_notes

    spec = hook_spec(client)
    environ = os.environ if environ is None else environ
    user_home = user_home or Path.home()
    path = hooks_path(spec, scope, project=project, user_home=user_home, environ=environ)
    if command is not None:
        launcher = Launcher(command)
    elif scope == "project":
        launcher = Launcher("memdir")  # no machine path in a file meant to be committed
    else:
        launcher = this_memdir()
    raw = read_config(path)
    text = raw.replace("\r\n", "\n") if raw is not None else None  # merged as LF
    doc = _parse(text, path)
    table = dict(doc.get("hooks") or {})
    merged = text or ""
    changed = False
    if spec.shape == "flat" and not merged.strip():
        merged = '{\n  "version": 1,\n  "hooks": {}\n}\n'
    for event, seconds in spec.installed:
        current = table.get(event, [])
        if not isinstance(current, list):
            raise Refused(f'"hooks.{event}" in {path} is not a list; nothing was written')
        ours = _ours(spec, launcher, event, seconds)
        others = _without_ours(spec, current)
        if ours in current and len(others) == len(current) - 1:
            continue  # memdir's entry is there as it should be, wherever the user put it
        wanted = [*others, ours]
        try:
            merged = jsonc.set_member(merged, "hooks", event, wanted)
        except ValueError as exc:
            raise Refused(f"cannot merge into {path} safely ({exc}); nothing was written") from None
        changed = True
    notes: list[str] = []
    if (
        scope == "project"
        and command is None
        and shutil.which("memdir", path=environ.get("PATH")) is None
    ):
        notes.append(
            f"`memdir` is not on PATH here, so {spec.title} will not find it: install it for "
            "your user (`pipx install memdir`), or install the hooks with --scope user"
        )
    notes += approval_notes(
        spec.name, project=project, user_home=user_home, environ=environ, scope=scope
    )
    events = tuple(e for e, _ in spec.installed)
    if not changed:
        return HookInstall(
            spec.name, scope, path, events, False, True, dry_run, None, "", tuple(notes)
        )
    done = write_merged(
        path, raw, merged, dry_run=dry_run, memdir_home=memdir_home, environ=environ
    )
    return HookInstall(
        spec.name,
        scope,
        path,
        events,
        done.written,
        False,
        dry_run,
        done.backup,
        done.diff,
        tuple(notes),
    )


@dataclass(frozen=True, slots=True)
class HookCheck:
    """What `check_hooks` found: the file, the events, a live run, the approvals."""

    client: str
    scope: str
    path: Path
    events: tuple[str, ...]
    missing: tuple[str, ...]
    command: str
    #: The live run's output (the client's JSON) or "" when it did not run.
    output: str
    approvals: tuple[Any, ...]
    problem: str | None = None
    #: "works", "pending" (installed and running, but the client still asks for an
    #: approval or trust step) or "broken".
    status: str = "broken"

    @property
    def ok(self) -> bool:
        """Installed, answering, and nothing the client still asks for."""
        return self.status == "works"


def _probe(spec: HookSpec, command: str, cwd: Path, environ: Mapping[str, str]) -> str:
    """Run the installed command as the client would for a run's first event; its output."""
    import json
    import shlex
    import subprocess
    import uuid

    event = spec.installed[0][0]
    payload = {
        "session_id": f"memdir-hooks-check-{uuid.uuid4()}",
        "transcript_path": "",
        "cwd": str(cwd),
        "hook_event_name": event,
        "source": "startup",
        "prompt": "memdir hooks check",
    }
    try:
        done = subprocess.run(
            shlex.split(command),
            input=json.dumps(payload).encode(),
            capture_output=True,
            cwd=cwd,
            env=dict(environ),
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Refused(f"the hook command did not run: {exc}") from None
    if done.returncode != 0:
        raise Refused(f"the hook command exited {done.returncode}")
    return done.stdout.decode("utf-8", "replace").strip()


def check_hooks(
    client: str,
    *,
    project: Path | None,
    scope: str = "project",
    user_home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> HookCheck:
    """Read the client's hook file, run memdir's first hook as the client would, and say
    which approval or trust step the client still asks for."""
    from memdir.clients.trust import approvals

    spec = hook_spec(client)
    environ = os.environ if environ is None else environ
    user_home = user_home or Path.home()
    path = hooks_path(spec, scope, project=project, user_home=user_home, environ=environ)
    steps = tuple(
        approvals(spec.name, project=project, user_home=user_home, environ=environ, scope=scope)
    )
    base = HookCheck(spec.name, scope, path, (), tuple(e for e, _ in spec.installed), "", "", steps)
    try:
        text = read_config(path)
        doc = _parse(text, path)
    except Refused as exc:
        return _replace(base, problem=str(exc))
    if text is None:
        return _replace(
            base,
            problem=f"{path} does not exist: run `memdir hooks install "
            f"--client {spec.name} --scope {scope}`",
        )
    found = installed_events(spec, doc)
    events = tuple(e for e, _ in spec.installed if e in found)
    missing = tuple(e for e, _ in spec.installed if e not in found)
    first = found.get(spec.installed[0][0], [""])[0]
    checked = _replace(base, events=events, missing=missing, command=first)
    if missing:
        return _replace(checked, problem="memdir's hooks are missing for " + ", ".join(missing))
    import shlex

    try:
        words = shlex.split(first)
    except ValueError:
        words = []
    exe = words[0] if words else ""
    if not (Path(exe).is_file() or shutil.which(exe, path=environ.get("PATH"))):
        return _replace(checked, problem=f"{exe!r} is not found (not on PATH here)")
    try:
        output = _probe(spec, first, project or user_home, environ)
    except Refused as exc:
        return _replace(checked, problem=str(exc))
    if "<memory-index>" not in output and "memdir" not in output:
        return _replace(
            checked, output=output, problem="the hook answered without the memory index"
        )
    pending = any(s.state != "approved" for s in steps)
    return _replace(checked, output=output, status="pending" if pending else "works")


def _replace(check: HookCheck, **changes: Any) -> HookCheck:
    from dataclasses import replace

    return replace(check, **changes)


PLUGIN_NAME = "memdir"
_PLUGIN_DESCRIPTION = (
    "Long-term memory as Markdown notes: the memory index at each session's start, "
    "relevant notes recalled with each message, and memdir's MCP tools."
)


def plugin_files(version: str, command: str = "memdir") -> dict[str, str]:
    """A Claude Code plugin marketplace holding the memdir plugin (its hooks and its MCP
    server), as relative path → text; `claude plugin marketplace add DIR` then
    `claude plugin install memdir@memdir` installs it from a local folder."""
    import json

    spec = HOOK_CLIENTS["claude-code"]
    launcher = Launcher(command)
    hooks = {event: [_ours(spec, launcher, event, seconds)] for event, seconds in spec.installed}

    def dump(value: Any) -> str:
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"

    owner = {"name": "memdir"}
    return {
        ".claude-plugin/marketplace.json": dump(
            {
                "name": PLUGIN_NAME,
                "owner": owner,
                "plugins": [
                    {
                        "name": PLUGIN_NAME,
                        "source": f"./{PLUGIN_NAME}",
                        "description": _PLUGIN_DESCRIPTION,
                        "version": version,
                    }
                ],
            }
        ),
        f"{PLUGIN_NAME}/.claude-plugin/plugin.json": dump(
            {
                "name": PLUGIN_NAME,
                "version": version,
                "description": _PLUGIN_DESCRIPTION,
                "author": owner,
                "license": "MIT",
                "keywords": ["memory", "notes", "mcp", "hooks"],
            }
        ),
        f"{PLUGIN_NAME}/hooks/hooks.json": dump(
            {"description": "memdir: the memory index, recall and extraction", "hooks": hooks}
        ),
        f"{PLUGIN_NAME}/.mcp.json": dump(
            {"mcpServers": {PLUGIN_NAME: {"command": command, "args": ["mcp", "serve"]}}}
        ),
    }


def write_plugin(
    out: Path, version: str, *, command: str = "memdir", force: bool = False
) -> list[Path]:
    """Write the plugin marketplace of `plugin_files` under `out` (Refused when a file
    there differs, unless `force`); the paths written."""
    from memdir.files import atomic_write

    files = plugin_files(version, command)
    if not force:
        for rel, text in files.items():
            target = out / rel
            if target.exists() and target.read_text(encoding="utf-8") != text:
                raise Refused(f"{target} exists and differs; pass --force to replace it")
    written: list[Path] = []
    for rel, text in files.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, text.encode("utf-8"))
        written.append(target)
    return written
