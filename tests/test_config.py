"""Tests for memdir.config: loading, validating and merging user and project TOML config."""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.config import (
    AutoExtractSettings,
    ConsolidateSettings,
    RecallSettings,
    Settings,
    default_home,
    load_settings,
    validate_env_name,
)
from memdir.errors import ConfigError, InvalidInput

# --- helpers --------------------------------------------------------------------------------


def write_user(home: Path, text: str | bytes) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def write_project(root: Path, text: str | bytes) -> Path:
    (root / ".memdir").mkdir(parents=True, exist_ok=True)
    path = root / ".memdir" / "config.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def load(home: Path, root: Path | None = None) -> Settings:
    return load_settings(home=home, project_root=root, env={})


# Every scalar key: (dotted key, attribute path on Settings, a valid value, the TOML for it).
INT_KEYS: list[tuple[str, str, int]] = [
    ("memory.maxNotes", "max_notes", 1),
    ("memory.maxNoteBytes", "max_note_bytes", 1),
    ("memory.indexChars", "index_chars", 0),
    ("memory.recall.perTurn", "recall.per_turn", 0),
    ("memory.recall.budgetChars", "recall.budget_chars", 0),
    ("memory.autoExtract.minUserTurns", "auto_extract.min_user_turns", 0),
    ("memory.consolidate.unusedDays", "consolidate.unused_days", 1),
    ("memory.consolidate.cooldownHours", "consolidate.cooldown_hours", 0),
    ("memory.consolidate.maxMergesPerPass", "consolidate.max_merges_per_pass", 0),
]
FLOAT_KEYS: list[tuple[str, str, float, bool]] = [
    # key, attribute, minimum, minimum excluded
    ("memory.recall.minScore", "recall.min_score", 0.0, False),
    ("memory.lockTimeoutSeconds", "lock_timeout", 0.0, True),
]
BOOL_KEYS: list[tuple[str, str]] = [
    ("memory.recall.enabled", "recall.enabled"),
    ("memory.autoExtract.onStop", "auto_extract.on_stop"),
    ("memory.autoExtract.onCompaction", "auto_extract.on_compaction"),
    ("memory.consolidate.auto", "consolidate.auto"),
]
ALL_KEYS = (
    [k for k, _, _ in INT_KEYS]
    + [k for k, _, _, _ in FLOAT_KEYS]
    + [k for k, _ in BOOL_KEYS]
    + ["mcp.access", "memory.dir"]
)


def attr(settings_obj: object, dotted: str) -> object:
    for part in dotted.split("."):
        settings_obj = getattr(settings_obj, part)
    return settings_obj


def assert_config_error(excinfo: pytest.ExceptionInfo[ConfigError], key: str, path: Path) -> None:
    message = str(excinfo.value)
    assert key in message
    assert str(path) in message
    assert message.startswith(f"config error in {path}: ")


# --- defaults -------------------------------------------------------------------------------


def test_defaults_without_any_file(home: Path, root: Path) -> None:
    s = load(home, root)
    assert s.home == home.resolve()
    assert s.project_root == root.resolve()
    assert s.memory_dir == root.resolve() / "MEMORY"
    assert s.user_dir == home.resolve() / "memory" / "user"
    assert (s.max_notes, s.max_note_bytes, s.index_chars) == (5000, 131072, 4000)
    assert s.lock_timeout == 10.0
    assert s.mcp_access == "read_write"
    assert s.recall == RecallSettings(enabled=True, per_turn=3, budget_chars=2000, min_score=1.2)
    assert s.auto_extract == AutoExtractSettings(False, False, 3)
    assert s.consolidate == ConsolidateSettings(90, False, 24, 5)
    assert s.warnings == ()
    assert s.sources == ()


def test_no_project_means_no_memory_dir(home: Path) -> None:
    s = load(home)
    assert s.project_root is None
    assert s.memory_dir is None


def test_defaults_match_dataclass_defaults(home: Path, root: Path) -> None:
    s = load(home, root)
    bare = Settings(home=s.home, project_root=s.project_root, memory_dir=s.memory_dir)
    assert s == bare


def test_settings_is_frozen(home: Path) -> None:
    s = load(home)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.max_notes = 1  # type: ignore[misc]


def test_empty_file_is_defaults_but_counts_as_source(home: Path, root: Path) -> None:
    user = write_user(home, "")
    project = write_project(root, "# nothing\n")
    s = load(home, root)
    assert s.sources == (user, project)
    assert s.max_notes == 5000


def test_missing_home_directory_is_fine(tmp_path: Path) -> None:
    s = load(tmp_path / "does-not-exist")
    assert s.sources == ()


def test_load_does_not_create_anything(tmp_path: Path) -> None:
    home, root = tmp_path / "h", tmp_path / "p"
    load(home, root)
    assert not home.exists()
    assert not root.exists()


# --- precedence -----------------------------------------------------------------------------


def test_user_then_project_precedence(home: Path, root: Path) -> None:
    user = write_user(
        home,
        "[memory]\nmaxNotes = 10\nindexChars = 100\n[memory.recall]\nperTurn = 7\nminScore = 2\n",
    )
    project = write_project(root, "[memory]\nmaxNotes = 20\n[memory.recall]\nminScore = 0.5\n")
    s = load(home, root)
    assert s.max_notes == 20  # project wins
    assert s.index_chars == 100  # user only
    assert s.recall.per_turn == 7
    assert s.recall.min_score == 0.5
    assert s.max_note_bytes == 131072  # default
    assert s.sources == (user, project)


def test_project_config_ignored_without_project_root(home: Path, root: Path) -> None:
    write_project(root, "memory.maxNotes = 1\n")
    assert load(home).max_notes == 5000


def test_tables_and_dotted_keys_are_equal(tmp_path: Path) -> None:
    tables = tmp_path / "a"
    dotted = tmp_path / "b"
    write_user(
        tables,
        "[memory]\nmaxNotes = 12\n[memory.recall]\nperTurn = 4\nenabled = false\n"
        "[memory.consolidate]\nauto = true\n[mcp]\naccess = 'read'\n",
    )
    write_user(
        dotted,
        "memory.maxNotes = 12\nmemory.recall.perTurn = 4\nmemory.recall.enabled = false\n"
        "memory.consolidate.auto = true\nmcp.access = 'read'\n",
    )
    a, b = load(tables), load(dotted)
    assert dataclasses.replace(a, home=b.home, sources=b.sources) == b
    assert a.max_notes == 12 and a.recall.per_turn == 4 and not a.recall.enabled
    assert a.consolidate.auto and a.mcp_access == "read"


def test_inline_tables_work(home: Path) -> None:
    write_user(home, "memory = { recall = { perTurn = 9 }, maxNotes = 3 }\n")
    s = load(home)
    assert (s.recall.per_turn, s.max_notes) == (9, 3)


def test_user_config_can_switch_everything_on(home: Path) -> None:
    write_user(
        home,
        "[memory.autoExtract]\nonStop = true\nonCompaction = true\nminUserTurns = 0\n"
        "[memory.consolidate]\nauto = true\n[mcp]\naccess = 'read_write_delete'\n",
    )
    s = load(home)
    assert s.auto_extract.on_stop and s.auto_extract.on_compaction
    assert s.consolidate.auto
    assert s.mcp_access == "read_write_delete"
    assert s.warnings == ()


@pytest.mark.parametrize(
    ("key", "attribute"),
    [
        ("memory.autoExtract.onStop", "auto_extract.on_stop"),
        ("memory.autoExtract.onCompaction", "auto_extract.on_compaction"),
        ("memory.consolidate.auto", "consolidate.auto"),
    ],
)
def test_project_cannot_switch_on_user_only_switches(
    home: Path, root: Path, key: str, attribute: str
) -> None:
    project = write_project(root, f"{key} = true\n")
    s = load(home, root)
    assert attr(s, attribute) is False
    assert len(s.warnings) == 1
    assert key in s.warnings[0]
    assert str(project) in s.warnings[0]

    write_user(home, f"{key} = false\n")
    s = load(home, root)
    assert attr(s, attribute) is False
    assert len(s.warnings) == 1


@pytest.mark.parametrize(
    ("key", "attribute"),
    [
        ("memory.autoExtract.onStop", "auto_extract.on_stop"),
        ("memory.autoExtract.onCompaction", "auto_extract.on_compaction"),
        ("memory.consolidate.auto", "consolidate.auto"),
    ],
)
def test_project_can_switch_off_what_the_user_enabled(
    home: Path, root: Path, key: str, attribute: str
) -> None:
    write_user(home, f"{key} = true\n")
    assert attr(load(home, root), attribute) is True
    write_project(root, f"{key} = false\n")
    s = load(home, root)
    assert attr(s, attribute) is False
    assert s.warnings == ()


def test_project_true_agreeing_with_user_is_not_a_warning(home: Path, root: Path) -> None:
    write_user(home, "memory.autoExtract.onStop = true\n")
    write_project(root, "memory.autoExtract.onStop = true\n")
    s = load(home, root)
    assert s.auto_extract.on_stop is True
    assert s.warnings == ()


LEVELS = ["read", "read_write", "read_write_delete"]


@pytest.mark.parametrize("user_level", [*LEVELS, None])
@pytest.mark.parametrize("project_level", LEVELS)
def test_mcp_access_project_may_only_narrow(
    home: Path, root: Path, user_level: str | None, project_level: str
) -> None:
    if user_level is not None:
        write_user(home, f'mcp.access = "{user_level}"\n')
    write_project(root, f'[mcp]\naccess = "{project_level}"\n')
    allowed = user_level or "read_write"
    s = load(home, root)
    if LEVELS.index(project_level) <= LEVELS.index(allowed):
        assert s.mcp_access == project_level
        assert s.warnings == ()
    else:
        assert s.mcp_access == allowed
        assert len(s.warnings) == 1
        assert "mcp.access" in s.warnings[0]
        assert project_level in s.warnings[0]


def test_project_can_set_ordinary_keys_and_warnings_accumulate(home: Path, root: Path) -> None:
    write_project(
        root,
        "memory.autoExtract.onStop = true\nmemory.consolidate.auto = true\n"
        "mcp.access = 'read_write_delete'\nmemory.recall.enabled = false\n",
    )
    s = load(home, root)
    assert len(s.warnings) == 3
    assert s.recall.enabled is False


# --- validation of values -------------------------------------------------------------------


BAD_FOR_INT = ["'lots'", "true", "1.5", "3.0", "[1]", "{ a = 1 }", "1979-05-27"]


@pytest.mark.parametrize(("key", "attribute", "minimum"), INT_KEYS)
@pytest.mark.parametrize("bad", BAD_FOR_INT)
def test_int_keys_refuse_wrong_types(
    home: Path, key: str, attribute: str, minimum: int, bad: str
) -> None:
    path = write_user(home, f"{key} = {bad}\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home)
    assert_config_error(excinfo, key, path)
    assert "integer" in str(excinfo.value)


@pytest.mark.parametrize(("key", "attribute", "minimum"), INT_KEYS)
def test_int_keys_range(home: Path, key: str, attribute: str, minimum: int) -> None:
    path = write_user(home, f"{key} = {minimum}\n")
    assert attr(load(home), attribute) == minimum
    path = write_user(home, f"{key} = {10**9}\n")
    assert attr(load(home), attribute) == 10**9
    for bad in (minimum - 1, -(10**6), 10**9 + 1):
        write_user(home, f"{key} = {bad}\n")
        with pytest.raises(ConfigError) as excinfo:
            load(home)
        assert_config_error(excinfo, key, path)
        assert str(bad) in str(excinfo.value)


def test_int_error_message_matches_the_spec_example(root: Path, home: Path) -> None:
    path = write_project(root, 'memory.maxNotes = "lots"\n')
    with pytest.raises(ConfigError) as excinfo:
        load(home, root)
    assert str(excinfo.value) == (
        f"config error in {path}: memory.maxNotes must be an integer ≥ 1, got 'lots'"
    )


@pytest.mark.parametrize(("key", "attribute", "minimum", "exclusive"), FLOAT_KEYS)
def test_float_keys(home: Path, key: str, attribute: str, minimum: float, exclusive: bool) -> None:
    path = write_user(home, f"{key} = 2\n")
    value = attr(load(home), attribute)
    assert value == 2.0 and isinstance(value, float)
    write_user(home, f"{key} = 0.25\n")
    assert attr(load(home), attribute) == 0.25
    write_user(home, f"{key} = 0.0\n")
    if exclusive:
        with pytest.raises(ConfigError) as excinfo:
            load(home)
        assert_config_error(excinfo, key, path)
    else:
        assert attr(load(home), attribute) == 0.0
    for bad in ("-0.5", "-1", "nan", "inf", "-inf", "true", "'1.0'", "[1.0]", "1e10"):
        write_user(home, f"{key} = {bad}\n")
        with pytest.raises(ConfigError) as excinfo:
            load(home)
        assert_config_error(excinfo, key, path)


@pytest.mark.parametrize(("key", "attribute"), BOOL_KEYS)
@pytest.mark.parametrize("bad", ["1", "0", "'true'", "'yes'", "1.0", "[]", "{}"])
def test_bool_keys_refuse_non_bools(home: Path, key: str, attribute: str, bad: str) -> None:
    path = write_user(home, f"{key} = {bad}\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home)
    assert_config_error(excinfo, key, path)
    assert "true or false" in str(excinfo.value)


@pytest.mark.parametrize(("key", "attribute"), BOOL_KEYS)
@pytest.mark.parametrize("value", [True, False])
def test_bool_keys_accept_bools(home: Path, key: str, attribute: str, value: bool) -> None:
    write_user(home, f"{key} = {str(value).lower()}\n")
    assert attr(load(home), attribute) is value


@pytest.mark.parametrize("bad", ["'write'", "'READ'", "'read '", "''", "1", "true", "['read']"])
def test_mcp_access_refuses_other_values(home: Path, bad: str) -> None:
    path = write_user(home, f"mcp.access = {bad}\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home)
    assert_config_error(excinfo, "mcp.access", path)
    assert "'read_write_delete'" in str(excinfo.value)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("memory = 3\n", "memory"),
        ("memory.recall = true\n", "memory.recall"),
        ("mcp = 'read'\n", "mcp"),
        ("[[memory.consolidate]]\nauto = true\n", "memory.consolidate"),
    ],
)
def test_table_keys_must_be_tables(home: Path, text: str, key: str) -> None:
    path = write_user(home, text)
    with pytest.raises(ConfigError) as excinfo:
        load(home)
    assert_config_error(excinfo, key, path)
    assert "must be a table" in str(excinfo.value)


def test_all_problems_of_both_files_are_reported_together(home: Path, root: Path) -> None:
    user = write_user(home, "memory.maxNotes = 0\nmemory.recall.perTurn = -1\n")
    project = write_project(root, "mcp.access = 'all'\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home, root)
    lines = str(excinfo.value).splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"config error in {user}: memory.maxNotes")
    assert lines[1].startswith(f"config error in {user}: memory.recall.perTurn")
    assert lines[2].startswith(f"config error in {project}: mcp.access")


def test_valid_user_config_with_invalid_project_config_is_refused(home: Path, root: Path) -> None:
    write_user(home, "memory.maxNotes = 10\n")
    project = write_project(root, "memory.maxNotes = -10\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home, root)
    assert_config_error(excinfo, "memory.maxNotes", project)


def test_config_error_is_invalid_input(home: Path) -> None:
    write_user(home, "memory.maxNotes = 0\n")
    with pytest.raises(InvalidInput):
        load(home)


def test_long_values_are_truncated_in_messages(home: Path) -> None:
    write_user(home, f'memory.maxNotes = "{"x" * 500}"\n')
    with pytest.raises(ConfigError) as excinfo:
        load(home)
    assert len(str(excinfo.value)) < 250


# --- unknown keys ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "unknown", "suggestion"),
    [
        ("memory.maxNotez = 1\n", "memory.maxNotez", "memory.maxNotes"),
        ("[memory.recall]\nperturn = 1\n", "memory.recall.perturn", "memory.recall.perTurn"),
        ("memory.max_notes = 1\n", "memory.max_notes", "memory.maxNotes"),
        ("memory.perTurn = 1\n", "memory.perTurn", "memory.recall.perTurn"),
        ("[memroy]\nmaxNotes = 1\n", "memroy", "memory"),
        (
            "memory.autoExtract.onstop = true\n",
            "memory.autoExtract.onstop",
            "memory.autoExtract.onStop",
        ),
        ("mcp.acces = 'read'\n", "mcp.acces", "mcp.access"),
        (
            "memory.consolidate.unused_days = 9\n",
            "memory.consolidate.unused_days",
            "memory.consolidate.unusedDays",
        ),
    ],
)
def test_unknown_keys_are_refused_with_a_suggestion(
    home: Path, text: str, unknown: str, suggestion: str
) -> None:
    path = write_user(home, text)
    with pytest.raises(ConfigError) as excinfo:
        load(home)
    assert_config_error(excinfo, f"unknown key {unknown}", path)
    assert f"(did you mean {suggestion}?)" in str(excinfo.value)


def test_unknown_key_without_a_close_match_has_no_suggestion(home: Path) -> None:
    write_user(home, "[server]\nport = 8080\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home)
    assert "unknown key server" in str(excinfo.value)
    assert "did you mean" not in str(excinfo.value)


def test_unknown_key_in_project_config(home: Path, root: Path) -> None:
    path = write_project(root, "memory.recall.budget = 3\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home, root)
    assert_config_error(excinfo, "unknown key memory.recall.budget", path)


@pytest.mark.parametrize("name", ["apiKey", "token", "password", "openaiApiKey", "secret"])
def test_secret_looking_keys_are_unknown_and_never_echo_the_value(home: Path, name: str) -> None:
    write_user(home, f'[memory]\n{name} = "sk-very-secret-value"\n')
    with pytest.raises(ConfigError) as excinfo:
        load(home)
    message = str(excinfo.value)
    assert f"unknown key memory.{name}" in message
    assert "sk-very-secret-value" not in message
    assert "environment variable" in message


# --- malformed files ------------------------------------------------------------------------


def test_malformed_toml(home: Path) -> None:
    path = write_user(home, "[memory]\nmaxNotes = = 3\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home)
    message = str(excinfo.value)
    assert str(path) in message
    assert "invalid TOML" in message
    assert re.search(r"line 2, column \d+", message)


def test_duplicate_keys_are_malformed_toml(home: Path, root: Path) -> None:
    path = write_project(root, "memory.maxNotes = 1\nmemory.maxNotes = 2\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home, root)
    assert str(path) in str(excinfo.value)
    assert "line 2" in str(excinfo.value)


def test_invalid_utf8(home: Path) -> None:
    path = write_user(home, b"memory.maxNotes = 3 # caf\xe9\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home)
    assert str(path) in str(excinfo.value)
    assert "UTF-8" in str(excinfo.value)


def test_utf8_bom_is_accepted(home: Path) -> None:
    write_user(home, "\ufeffmemory.maxNotes = 7\n".encode())
    assert load(home).max_notes == 7


def test_config_path_that_is_a_directory_is_refused(home: Path) -> None:
    (home / "config.toml").mkdir()
    with pytest.raises(ConfigError) as excinfo:
        load(home)
    assert str(home / "config.toml") in str(excinfo.value)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
def test_config_path_that_is_a_fifo_is_refused_without_blocking(root: Path, home: Path) -> None:
    (root / ".memdir").mkdir()
    os.mkfifo(root / ".memdir" / "config.toml")
    with pytest.raises(ConfigError, match="not a regular file"):
        load(home, root)


def test_oversized_config_is_refused(home: Path) -> None:
    write_user(home, "# " + "x" * (1 << 20) + "\n")
    with pytest.raises(ConfigError, match="larger than"):
        load(home)


def test_memdir_file_instead_of_directory_means_no_project_config(home: Path, root: Path) -> None:
    (root / ".memdir").write_text("not a directory")
    assert load(home, root).sources == ()


# --- memory.dir -----------------------------------------------------------------------------


def test_memory_dir_relative_to_project_root(home: Path, root: Path) -> None:
    write_project(root, 'memory.dir = "docs/notes"\n')
    assert load(home, root).memory_dir == root.resolve() / "docs" / "notes"


def test_memory_dir_normalised(home: Path, root: Path) -> None:
    write_project(root, 'memory.dir = "./a/../b/"\n')
    assert load(home, root).memory_dir == root.resolve() / "b"


def test_memory_dir_may_live_under_dot_memdir(home: Path, root: Path) -> None:
    write_project(root, '[memory]\ndir = ".memdir/memory"\n')
    assert load(home, root).memory_dir == root.resolve() / ".memdir" / "memory"


def test_memory_dir_absolute_inside_root_is_ok(home: Path, root: Path) -> None:
    target = root.resolve() / "notes"
    write_project(root, f"memory.dir = '{target}'\n")
    assert load(home, root).memory_dir == target


def test_memory_dir_is_not_moved_by_memdir_home(tmp_path: Path, root: Path) -> None:
    env = {"MEMDIR_HOME": str(tmp_path / "elsewhere")}
    s = load_settings(project_root=root, env=env)
    assert s.memory_dir == root.resolve() / "MEMORY"
    assert s.home == (tmp_path / "elsewhere").resolve()


@pytest.mark.parametrize(
    "value",
    [
        "../outside",
        "a/../../outside",
        "..",
        ".",
        "",
        "  ",
        "~/notes",
        "~",
        ".git/hooks",
        ".GIT",
        "/",
    ],
)
def test_memory_dir_outside_or_unsafe_is_refused(home: Path, root: Path, value: str) -> None:
    path = write_project(root, f"memory.dir = '{value}'\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home, root)
    assert_config_error(excinfo, "memory.dir", path)


def test_memory_dir_absolute_outside_is_refused(tmp_path: Path, home: Path, root: Path) -> None:
    outside = tmp_path / "outside"
    path = write_project(root, f"memory.dir = '{outside}'\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home, root)
    assert_config_error(excinfo, "memory.dir", path)
    assert "inside the project root" in str(excinfo.value)


def test_memory_dir_sibling_with_common_prefix_is_refused(
    tmp_path: Path, home: Path, root: Path
) -> None:
    sibling = tmp_path / (root.name + "-evil")
    write_project(root, f"memory.dir = '{sibling}'\n")
    with pytest.raises(ConfigError, match=r"memory\.dir"):
        load(home, root)


def test_memory_dir_through_a_symlink_out_of_the_root_is_refused(
    tmp_path: Path, home: Path, root: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    try:
        (root / "link").symlink_to(outside, target_is_directory=True)
    except OSError:
        pytest.skip("symlinks not available")
    write_project(root, "memory.dir = 'link/notes'\n")
    with pytest.raises(ConfigError, match=r"memory\.dir"):
        load(home, root)


@pytest.mark.parametrize("bad", ["3", "true", "['MEMORY']", "{ path = 'x' }"])
def test_memory_dir_must_be_a_string(home: Path, root: Path, bad: str) -> None:
    path = write_project(root, f"memory.dir = {bad}\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home, root)
    assert_config_error(excinfo, "memory.dir", path)


@pytest.mark.parametrize("with_project", [True, False])
def test_memory_dir_in_user_config_is_refused(home: Path, root: Path, with_project: bool) -> None:
    path = write_user(home, "memory.dir = 'MEMORY'\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home, root if with_project else None)
    assert_config_error(excinfo, "memory.dir", path)
    assert "project setting" in str(excinfo.value)


# --- MEMDIR_HOME ----------------------------------------------------------------------------


def test_default_home_from_env_mapping(tmp_path: Path) -> None:
    assert default_home({"MEMDIR_HOME": str(tmp_path / "mh")}) == (tmp_path / "mh").resolve()


@pytest.mark.parametrize("value", ["", "   "])
def test_empty_memdir_home_is_ignored(value: str) -> None:
    assert default_home({"MEMDIR_HOME": value}) == (Path.home() / ".memdir").resolve()
    assert default_home({}) == (Path.home() / ".memdir").resolve()


def test_memdir_home_tilde_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_home({"MEMDIR_HOME": "~/mem"}) == (tmp_path / "mem").resolve()


def test_relative_memdir_home_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = default_home({"MEMDIR_HOME": "rel/home"})
    assert result.is_absolute()
    assert result == (tmp_path / "rel" / "home").resolve()


def test_default_home_reads_os_environ_when_env_is_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMDIR_HOME", str(tmp_path / "x"))
    assert default_home() == (tmp_path / "x").resolve()


def test_load_settings_uses_env_mapping_for_home(tmp_path: Path) -> None:
    home = tmp_path / "mh"
    write_user(home, "memory.maxNotes = 42\n")
    s = load_settings(env={"MEMDIR_HOME": str(home)})
    assert s.home == home.resolve()
    assert s.max_notes == 42
    assert s.user_dir == home.resolve() / "memory" / "user"


def test_explicit_home_wins_over_env(tmp_path: Path) -> None:
    s = load_settings(home=tmp_path / "a", env={"MEMDIR_HOME": str(tmp_path / "b")})
    assert s.home == (tmp_path / "a").resolve()


def test_relative_project_root_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    s = load_settings(home=tmp_path / "h", project_root=Path("proj"), env={})
    assert s.project_root == (tmp_path / "proj").resolve()
    assert s.memory_dir == (tmp_path / "proj").resolve() / "MEMORY"


# --- validate_env_name ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "_x", "a", "A1_b2"])
def test_validate_env_name_accepts(name: str) -> None:
    assert validate_env_name(name, "llm.apiKeyEnv") == name


@pytest.mark.parametrize("name", ["", "1ABC", "A-B", "A B", "$HOME", "é", "A\n", "A=B"])
def test_validate_env_name_refuses(name: str) -> None:
    with pytest.raises(ConfigError, match=r"llm\.apiKeyEnv"):
        validate_env_name(name, "llm.apiKeyEnv")


def test_validate_env_name_refuses_non_strings() -> None:
    with pytest.raises(ConfigError):
        validate_env_name(12, "x.fooEnv")  # type: ignore[arg-type]


# --- properties -----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_int_in_range_round_trips(data: st.DataObject) -> None:
    key, attribute, minimum = data.draw(st.sampled_from(INT_KEYS))
    value = data.draw(st.integers(min_value=minimum, max_value=10**9))
    as_table = data.draw(st.booleans())
    table, _, leaf = key.rpartition(".")
    text = f"[{table}]\n{leaf} = {value}\n" if as_table else f"{key} = {value}\n"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        write_user(home, text)
        assert attr(load(home), attribute) == value


_KNOWN_PARTS = {part for key in ALL_KEYS for part in key.split(".")}
_bare_key = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,15}", fullmatch=True).filter(
    lambda k: k not in _KNOWN_PARTS
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    prefix=st.sampled_from(["", "memory.", "memory.recall.", "memory.consolidate.", "mcp."]),
    name=_bare_key,
    value=st.sampled_from(["1", "true", "'x'", "1.5", "[1, 2]"]),
)
def test_any_unknown_key_is_refused(prefix: str, name: str, value: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = write_user(home, f"{prefix}{name} = {value}\n")
        with pytest.raises(ConfigError) as excinfo:
            load(home)
        message = str(excinfo.value)
        assert f"unknown key {prefix}{name}" in message
        assert str(path) in message


# --- embed.* (user config only) ---------------------------------------------------------


def test_embed_defaults_to_the_local_model(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path / "home", project_root=None, env={})
    assert settings.embed.provider == "local"
    assert settings.embed.url is None and settings.embed.api_key_env is None


def test_embed_settings_from_user_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[embed]\nprovider = "http"\nurl = "https://api.example.com/v1/"\n'
        'model = "text-embedding-3-small"\napiKeyEnv = "OPENAI_API_KEY"\nbatchSize = 16\n',
        encoding="utf-8",
    )
    settings = load_settings(home=home, project_root=None, env={})
    assert settings.embed.provider == "http"
    assert settings.embed.url == "https://api.example.com/v1"
    assert settings.embed.api_key_env == "OPENAI_API_KEY"
    assert settings.embed.batch_size == 16


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ('provider = "cloud"', "embed.provider"),
        ('url = "ftp://x"', "embed.url"),
        ('apiKeyEnv = "sk-not-a-name!"', "embed.apiKeyEnv"),
        ("batchSize = 0", "embed.batchSize"),
    ],
)
def test_embed_invalid_values_are_refused(tmp_path: Path, line: str, key: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f"[embed]\n{line}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(key)):
        load_settings(home=home, project_root=None, env={})


@pytest.mark.parametrize("table", ["embed", "llm"])
@pytest.mark.parametrize(
    "url",
    [
        "http://api.example.com/v1",
        "http://10.1.2.3:8080",
        "http://0.0.0.0:11434",
        "http://127.0.0.1.example.com/v1",
        "http://localhost.example.com",
        "http://[::ffff:127.0.0.1]:80",
        "http://[2001:db8::1]/v1",
    ],
)
def test_plain_http_beyond_loopback_is_refused_when_the_config_loads(
    tmp_path: Path, table: str, url: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[{table}]\nurl = "{url}"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as excinfo:
        load_settings(home=home, project_root=None, env={})
    message = str(excinfo.value)
    assert f"{table}.url must use https://" in message and "loopback" in message


@pytest.mark.parametrize("table", ["embed", "llm"])
@pytest.mark.parametrize(
    ("url", "loaded"),
    [
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1"),
        ("http://127.9.9.9:1", "http://127.9.9.9:1"),
        ("http://localhost:11434", "http://localhost:11434"),
        ("http://LOCALHOST:11434/v1", "http://LOCALHOST:11434/v1"),
        ("http://[::1]:8080/v1", "http://[::1]:8080/v1"),
        ("https://api.example.com/v1", "https://api.example.com/v1"),
    ],
)
def test_https_and_loopback_http_urls_load(
    tmp_path: Path, table: str, url: str, loaded: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[{table}]\nurl = "{url}"\n', encoding="utf-8")
    settings = load_settings(home=home, project_root=None, env={})
    assert getattr(settings, table).url == loaded


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("https://user:hunter2@api.example.com/v1", "must not carry credentials"),
        ("http://api.example.com\\\\@127.0.0.1/v1", "must not contain a backslash"),
        ("ftp://user:hunter2@files.example.com", "must be an http(s) URL"),
    ],
)
def test_endpoint_urls_carry_no_credentials(tmp_path: Path, url: str, says: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[embed]\nurl = "{url}"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as excinfo:
        load_settings(home=home, project_root=None, env={})
    assert "embed.url " + says in str(excinfo.value)
    assert "hunter2" not in str(excinfo.value)


def test_a_project_config_cannot_choose_where_notes_are_embedded(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".memdir").mkdir(parents=True)
    (root / ".memdir" / "config.toml").write_text(
        '[embed]\nprovider = "http"\nurl = "https://attacker.example/v1"\n', encoding="utf-8"
    )
    with pytest.raises(ConfigError, match=re.escape("embed.provider is a user setting")):
        load_settings(home=tmp_path / "home", project_root=root, env={})


# --- llm.deadlineSeconds --------------------------------------------------------------------


def test_the_llm_deadline_defaults_to_two_minutes_and_the_user_can_change_it(
    home: Path,
) -> None:
    assert load(home).llm.deadline_seconds == 120.0
    write_user(home, '[llm]\nurl = "http://127.0.0.1:8080/v1"\ndeadlineSeconds = 2.5\n')
    assert load(home).llm.deadline_seconds == 2.5
    write_user(home, "[llm]\ndeadlineSeconds = 3600\n")
    assert load(home).llm.deadline_seconds == 3600.0


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("0", "must be a number > 0, got 0"),
        ("-1", "must be a number > 0"),
        ("3601", "must be a number ≤ 3600, got 3601"),
        ("nan", "must be a number > 0"),
        ('"fast"', "must be a number > 0"),
        ("true", "must be a number > 0"),
    ],
)
def test_an_invalid_llm_deadline_is_refused_naming_the_key(
    home: Path, value: str, says: str
) -> None:
    user = write_user(home, f"[llm]\ndeadlineSeconds = {value}\n")
    with pytest.raises(ConfigError) as excinfo:
        load(home)
    assert_config_error(excinfo, "llm.deadlineSeconds", user)
    assert f"llm.deadlineSeconds {says}" in str(excinfo.value)


def test_a_project_config_cannot_set_the_llm_deadline(home: Path, root: Path) -> None:
    write_project(root, "[llm]\ndeadlineSeconds = 0.01\n")
    with pytest.raises(ConfigError, match=re.escape("llm.deadlineSeconds is a user setting")):
        load(home, root)
