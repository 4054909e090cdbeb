"""Tests for `errors.py`: the tree in the docstring is the class tree, one exit code each,
and hints travel with the error."""

from __future__ import annotations

import errno
import re
from pathlib import Path

import pytest

import memdir.errors as errors
from memdir.embed import EmbedderUnavailable, EmbeddingFailed
from memdir.errors import (
    MemdirError,
    Remedy,
    SecretRefused,
    SyncFailed,
    exit_code_for,
)

CLASSES: dict[str, type[MemdirError]] = {
    name: value
    for name, value in vars(errors).items()
    if isinstance(value, type) and issubclass(value, MemdirError)
}
CLASSES.update(EmbedderUnavailable=EmbedderUnavailable, EmbeddingFailed=EmbeddingFailed)

_ROW = re.compile(r"^(?P<indent>[ │├└─]*)(?P<name>[A-Z]\w+)\s.*exit (?P<code>\d+)\s*$")


def drawn_tree() -> list[tuple[str, str | None, int]]:
    """(class, parent, exit code) for each row of the tree in the module docstring."""
    rows: list[tuple[str, str | None, int]] = []
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        match = _ROW.match(line.strip("\n")[4:] if line.startswith("    ") else line)
        if not match:
            continue
        depth = len(match["indent"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        rows.append((match["name"], stack[-1][1] if stack else None, int(match["code"])))
        stack.append((depth, match["name"]))
    return rows


def test_the_drawn_tree_lists_every_class_once() -> None:
    names = [name for name, _, _ in drawn_tree()]
    assert sorted(names) == sorted(CLASSES)
    assert len(names) == len(set(names))


def tree_params() -> list[object]:
    params: list[object] = []
    for name, parent, code in drawn_tree():
        params.append(pytest.param(name, parent, code, id=name))
    return params


@pytest.mark.parametrize(("name", "parent", "code"), tree_params())
def test_each_class_has_the_drawn_parent_and_exit_code(
    name: str, parent: str | None, code: int
) -> None:
    cls = CLASSES[name]
    if parent is None:
        assert cls is MemdirError
    else:
        assert cls.__bases__ == (CLASSES[parent],)
    assert cls.exit_code == code
    assert exit_code_for(cls("x") if cls is not SecretRefused else cls("x", ())) == code
    assert cls.__doc__ and cls.__doc__.startswith("Raised ")


def test_exit_codes_of_other_exceptions_and_the_constants() -> None:
    assert exit_code_for(RuntimeError("boom")) == errors.EXIT_ERROR == 1
    assert exit_code_for(KeyboardInterrupt()) == 1
    assert (errors.EXIT_OK, errors.EXIT_USAGE, errors.EXIT_NOT_FOUND) == (0, 2, 3)
    assert (errors.EXIT_REFUSED, errors.EXIT_CONFLICT, errors.EXIT_BUSY) == (4, 5, 6)
    assert (errors.EXIT_INTEGRITY, errors.EXIT_SYNC) == (7, 8)


def test_hints_are_carried_and_default_to_none() -> None:
    assert MemdirError("plain").hint is None
    error = errors.NotFound("no backup b-1", hint=Remedy.BACKUPS)
    assert error.hint is Remedy.BACKUPS and str(error) == "no backup b-1"
    limited = errors.RateLimited("slow down", retry_after=12.5, hint=Remedy.SYNC_NOW)
    assert isinstance(limited, SyncFailed)
    assert (limited.retry_after, limited.hint) == (12.5, Remedy.SYNC_NOW)
    assert SyncFailed("down").retry_after is None


def test_secret_refused_carries_findings_and_no_hint() -> None:
    error = SecretRefused("refused: a GitHub token (body, line 3)", (("GitHub token", "body", 3),))
    assert error.findings == (("GitHub token", "body", 3),)
    assert error.hint is None
    assert SecretRefused("x").findings == ()


def test_remedies_are_a_closed_vocabulary_of_kebab_words() -> None:
    values = [r.value for r in Remedy]
    assert len(values) == len(set(values))
    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)*", v) for v in values)
    assert Remedy("sync-login") is Remedy.SYNC_LOGIN


@pytest.mark.parametrize("hint", list(errors.Remedy))
def test_describe_says_every_remedy_in_plain_words(hint: errors.Remedy) -> None:
    text = errors.describe(errors.SyncRefused("sync is off", hint=hint))
    assert text.startswith("sync is off (") and text.endswith(")")
    assert "`" not in text and "--" not in text  # no adapter's syntax


def test_describe_without_a_hint_is_the_message() -> None:
    assert errors.describe(errors.NotFound("no note x")) == "no note x"
    assert errors.describe(ValueError()) == "ValueError"


def test_disk_error_maps_sqlite_refusing_to_open_a_database(tmp_path: Path) -> None:
    import sqlite3

    from memdir.errors import DiskError, disk_error

    with pytest.raises(sqlite3.OperationalError) as info:
        sqlite3.connect(tmp_path / "missing-dir" / "x.sqlite3")
    mapped = disk_error(info.value)
    assert isinstance(mapped, DiskError)
    assert "cannot be opened" in str(mapped)
    assert "may be incomplete" in str(mapped)
    said = disk_error(OSError(errno.ENOSPC, "No space left"), "nothing was changed")
    assert said is not None and str(said) == "the disk is full; nothing was changed"
    assert disk_error(ValueError("x")) is None
