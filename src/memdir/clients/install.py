"""Merge the entry that runs `memdir mcp serve` into an MCP client's config file.

Which file, key and scope each client uses lives in `memdir.clients.specs`. Merging keeps
every other key and server (JSON with comments is edited in place, see
`memdir.clients.jsonc`; TOML by replacing only memdir's own table), backs the
original up under the memdir home (``backups/client-configs/FILE.bak-…``, never beside
the file: that would be an untracked file in the user's repository), changes nothing
when the entry is already there, and refuses a file that does not parse. A symlinked config (dotfile
managers) is written through the link, never replaced by a file.

What an entry names:

- project files (meant to be committed): the command ``memdir`` and no machine path —
  the project is the client's workspace variable or its working directory, and
  ``MEMDIR_HOME`` is left out unless asked for;
- user files (machine-local): the absolute path of this memdir (GUI clients do not read
  the shell's PATH), ``--project DIR`` (those clients start servers elsewhere) and
  ``MEMDIR_HOME`` when it is set.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import sys
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memdir.clients import jsonc
from memdir.clients.specs import (
    CLIENTS,
    SCOPES,
    ClientSpec,
    client_spec,
    config_path,
    validate_name,
)
from memdir.errors import Refused
from memdir.files import atomic_write, ensure_private_dir

__all__ = [
    "CLIENTS",
    "SCOPES",
    "SERVER_NAME",
    "InstallResult",
    "Launcher",
    "explicit_home",
    "install",
    "parse_config",
    "read_config",
    "this_memdir",
    "write_merged",
]

SERVER_NAME = "memdir"
INSTALL_HINT = "pipx install memdir` or `uv tool install memdir"


@dataclass(frozen=True, slots=True)
class Launcher:
    """How to start this memdir: a command and the arguments before memdir's own."""

    command: str
    prefix: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class InstallResult:
    """What was (or would be) written where, and what the user should know about it."""

    client: str
    scope: str
    path: Path
    name: str
    entry: dict[str, Any]
    #: The entry in the file's own format, ready to paste.
    snippet: str
    written: bool
    backup: Path | None
    unchanged: bool = False
    dry_run: bool = False
    #: A unified diff from the file as it is to the file as written (or as it would be).
    diff: str = ""
    notes: tuple[str, ...] = ()


def this_memdir(platform: str | None = None) -> Launcher:
    """The absolute command of the memdir that is running (``python -m memdir`` as a fallback)."""
    platform = platform or sys.platform
    script = Path(sys.executable).with_name(
        "memdir.exe" if platform.startswith("win") else "memdir"
    )
    if script.is_file():
        return Launcher(str(script))
    found = shutil.which("memdir")
    if found:
        return Launcher(str(Path(found).resolve()))
    return Launcher(sys.executable, ("-m", "memdir"))


def _entry(
    spec: ClientSpec, launcher: Launcher, project_arg: str | None, env: Mapping[str, str]
) -> dict[str, Any]:
    args = [*launcher.prefix]
    if project_arg is not None:
        args += ["--project", project_arg]
    args += ["mcp", "serve"]
    entry: dict[str, Any] = {"type": "stdio"} if spec.stdio_type else {}
    entry["command"] = launcher.command
    entry["args"] = args
    if env:
        entry["env"] = dict(env)
    return entry


# -- TOML (Codex) -------------------------------------------------------------------------


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _toml_section(name: str, entry: dict[str, Any]) -> str:
    lines = [
        f"[mcp_servers.{name}]",
        f"command = {_toml_string(entry['command'])}",
        f"args = [{', '.join(_toml_string(a) for a in entry['args'])}]",
    ]
    if entry.get("env"):
        pairs = ", ".join(f"{k} = {_toml_string(v)}" for k, v in entry["env"].items())
        lines.append(f"env = {{ {pairs} }}")
    return "\n".join(lines) + "\n"


_HEADER = re.compile(r"^\s*\[")


def _own_table(name: str) -> re.Pattern[str]:
    quoted = rf"(?:{re.escape(name)}|\"{re.escape(name)}\"|'{re.escape(name)}')"
    return re.compile(rf"^\s*\[\s*mcp_servers\s*\.\s*{quoted}\s*(?:\.[^\]]*)?\]\s*(?:#.*)?$")


def _merge_toml(text: str, name: str, entry: dict[str, Any], path: Path) -> str:
    kept: list[str] = []
    skipping = False
    own = _own_table(name)
    for line in text.splitlines(keepends=True):
        if own.match(line):
            skipping = True
            continue
        if skipping and _HEADER.match(line):
            skipping = False
        if not skipping:
            kept.append(line)
    body = "".join(kept).rstrip("\n")
    merged = (body + "\n\n" if body.strip() else "") + _toml_section(name, entry)
    try:
        doc = tomllib.loads(merged)
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        doc, before = {}, {}
    before.setdefault("mcp_servers", {})[name] = entry
    if doc != before:
        raise Refused(
            f"cannot merge into {path} safely (is [mcp_servers.{name}] written inline or "
            "with dotted keys?); nothing was written — add the snippet by hand"
        )
    return merged


# -- reading, merging, writing ------------------------------------------------------------


def parse_config(spec: ClientSpec, text: str | None, path: Path) -> dict[str, Any]:
    """The parsed config `text` of `path` (empty when missing or blank); `Refused` if unreadable."""
    if text is None or not text.strip():
        return {}
    try:
        doc: Any = tomllib.loads(text) if spec.format == "toml" else jsonc.loads(text)
    except (tomllib.TOMLDecodeError, jsonc.JsoncError) as exc:
        kind = "TOML" if spec.format == "toml" else "JSON"
        raise Refused(
            f"{path} is not valid {kind} ({exc}); fix it first, nothing was written"
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get(spec.key, {}), dict):
        raise Refused(f"{path} does not hold a {spec.key!r} object; nothing was written")
    return doc


def _merge(spec: ClientSpec, text: str | None, name: str, entry: dict[str, Any], path: Path) -> str:
    if spec.format == "toml":
        return _merge_toml(text or "", name, entry, path)
    try:
        return jsonc.set_member(text or "", spec.key, name, entry)
    except ValueError as exc:  # parse errors were reported by _current already
        raise Refused(f"cannot merge into {path} safely ({exc}); nothing was written") from None


def backup_folder(memdir_home: Path | None, environ: Mapping[str, str] | None = None) -> Path:
    """Where config backups go: under the memdir home, never beside the file (a ``.bak``
    beside a committed config is an untracked file in the user's repository)."""
    from memdir.config import default_home

    return (memdir_home or default_home(environ)) / "backups" / "client-configs"


def _backup_path(path: Path, folder: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    where = hashlib.sha256(str(path).encode("utf-8", "surrogatepass")).hexdigest()[:8]
    base = f"{path.name}.bak-{stamp}-{where}"
    candidate, n = folder / base, 1
    while candidate.exists():
        candidate = folder / f"{base}-{n}"
        n += 1
    return candidate


@dataclass(frozen=True, slots=True)
class Written:
    """What `write_merged` did: the diff, and where the original went."""

    diff: str
    written: bool
    backup: Path | None


def _real(path: Path) -> Path:
    """The file a config path names, through a symlink (a dotfile manager's link)."""
    try:
        return path.resolve(strict=False) if path.is_symlink() else path
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise Refused(f"cannot follow {path} ({exc}); nothing was written") from None


def read_config(path: Path) -> str | None:
    """The text of a client config (through a symlink, line endings as written); None
    when there is none."""
    real = _real(path)
    try:
        with real.open(encoding="utf-8", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused(f"cannot read {path} ({exc}); nothing was written") from None


def write_merged(
    path: Path,
    text: str | None,
    merged: str,
    *,
    dry_run: bool,
    memdir_home: Path | None,
    environ: Mapping[str, str] | None = None,
) -> Written:
    """Write `merged` over `path` (whose text was `text`): the original backed up under
    the memdir home first, atomically, through a symlink; only the diff with `dry_run`."""
    merged = merged.replace("\r\n", "\n")
    if text is not None and "\r\n" in text:  # a CRLF file stays CRLF (no line-wide diff)
        merged = merged.replace("\n", "\r\n")
    diff = "".join(
        difflib.unified_diff(
            (text or "").replace("\r\n", "\n").splitlines(keepends=True),
            merged.replace("\r\n", "\n").splitlines(keepends=True),
            fromfile=str(path) if text is not None else "/dev/null",
            tofile=str(path),
        )
    )
    if dry_run:
        return Written(diff, False, None)
    real = _real(path)
    if text is not None and not real.stat().st_mode & 0o200:
        raise Refused(f"{path} is read-only; nothing was written (make it writable first)")
    backup = None
    if text is not None:
        folder = backup_folder(memdir_home, environ)
        ensure_private_dir(folder)
        backup = _backup_path(real, folder)
        shutil.copy2(real, backup)
    real.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(real, merged.encode("utf-8"))
    return Written(diff, True, backup)


def _snippet(spec: ClientSpec, name: str, entry: dict[str, Any]) -> str:
    if spec.format == "toml":
        return _toml_section(name, entry)
    return jsonc.set_member("", spec.key, name, entry)


def _notes(
    spec: ClientSpec,
    scope: str,
    *,
    path: Path,
    project: Path | None,
    launcher: Launcher,
    chosen_command: bool,
    memdir_home: Path | None,
    home_written: bool,
    on_path: str | None,
) -> list[str]:
    notes: list[str] = []
    if scope == "project":
        if on_path is None:
            bindir = Path(this_memdir().command).parent
            notes.append(
                f"`memdir` is not on PATH here, so {spec.title} will not find it: install it for "
                f"your user with `{INSTALL_HINT}`, or put {bindir} on PATH"
            )
        if spec.workspace_var:
            notes.append(
                f"the project is {spec.workspace_var}, which {spec.title} sets to the open folder"
            )
        else:
            notes.append(f"{spec.title} starts the server in the project, so no path is written")
        if memdir_home is not None and not home_written:
            notes.append(
                f"MEMDIR_HOME is set ({memdir_home}) but not written into {path.name}: it is a "
                "machine path in a file meant to be committed (pass --write-home to write it)"
            )
        return notes
    if not chosen_command:
        notes.append(
            f"the command is this memdir's absolute path ({launcher.command}): apps started "
            "outside your shell do not see its PATH; install again if memdir moves"
        )
    if project is not None:
        notes.append(
            f"pins the project {project} (--project): {spec.title} uses this user-level entry "
            "wherever it runs; install with --name to add another project"
        )
    else:
        notes.append(
            "no project here: the server will use the folder the client starts it in "
            "(pass --project to pin one)"
        )
    if memdir_home is not None:
        notes.append(f"passes MEMDIR_HOME={memdir_home}")
    return notes


def install(
    client: str,
    *,
    project: Path | None,
    scope: str | None = None,
    dry_run: bool = False,
    name: str = SERVER_NAME,
    user_home: Path | None = None,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
    command: str | None = None,
    memdir_home: Path | None = None,
    write_home: bool = False,
) -> InstallResult:
    """Merge the entry that runs memdir into `client`'s config (only describe it with `dry_run`).

    `memdir_home` is the explicit home of the installer (``$MEMDIR_HOME`` or ``--home``);
    `command` overrides the command written (e.g. ``memdir`` in a user file).
    """
    spec = client_spec(client)
    validate_name(name)
    scope = scope or spec.scopes[0]
    environ = os.environ if environ is None else environ
    platform = platform or sys.platform
    user_home = user_home or Path.home()
    path = config_path(
        spec, scope, project=project, user_home=user_home, platform=platform, environ=environ
    )
    on_path = shutil.which("memdir", path=environ.get("PATH"))
    if command is not None:
        launcher = Launcher(command)
    elif scope == "project":
        launcher = Launcher("memdir")
    else:
        launcher = this_memdir(platform)
    project_arg = spec.workspace_var if scope == "project" else (str(project) if project else None)
    home_written = memdir_home is not None and (scope == "user" or write_home)
    env = {"MEMDIR_HOME": str(memdir_home)} if home_written else {}
    entry = _entry(spec, launcher, project_arg, env)
    notes = _notes(
        spec,
        scope,
        path=path,
        project=project,
        launcher=launcher,
        chosen_command=command is not None,
        memdir_home=memdir_home,
        home_written=home_written,
        on_path=on_path,
    )
    if scope == "project":
        from memdir.clients.trust import approval_notes

        notes += approval_notes(
            spec.name,
            project=project,
            user_home=user_home,
            environ=environ,
            purpose="mcp",
            scope=scope,
        )
    snippet = _snippet(spec, name, entry)
    raw = read_config(path)
    text = raw.replace("\r\n", "\n") if raw is not None else None  # merged as LF
    doc = parse_config(spec, text, path)
    base = InstallResult(
        spec.name,
        scope,
        path,
        name,
        entry,
        snippet,
        written=False,
        backup=None,
        dry_run=dry_run,
        notes=tuple(notes),
    )
    if doc.get(spec.key, {}).get(name) == entry:
        return replace(base, unchanged=True)
    merged = _merge(spec, text, name, entry, path)
    done = write_merged(
        path, raw, merged, dry_run=dry_run, memdir_home=memdir_home, environ=environ
    )
    return replace(base, written=done.written, backup=done.backup, diff=done.diff)


def explicit_home(cli_home: Path | None, environ: Mapping[str, str] | None = None) -> Path | None:
    """The memdir home the installer was given (``--home`` or a non-blank ``$MEMDIR_HOME``)."""
    if cli_home is not None:
        return cli_home.expanduser().resolve()
    value = (os.environ if environ is None else environ).get("MEMDIR_HOME", "").strip()
    return Path(value).expanduser().resolve() if value else None
