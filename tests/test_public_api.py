"""The public namespace: a sorted `__all__`, every name importable (lazily), one rooted tree."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import memdir
import memdir.errors
from memdir import MemdirError


def test_all_is_sorted_and_unique() -> None:
    assert list(memdir.__all__) == sorted(memdir.__all__)
    assert len(set(memdir.__all__)) == len(memdir.__all__)


@pytest.mark.parametrize("name", memdir.__all__)
def test_every_public_name_is_importable(name: str) -> None:
    module = importlib.import_module("memdir")
    assert getattr(module, name) is not None
    namespace: dict[str, object] = {}
    exec(f"from memdir import {name}", namespace)
    assert namespace[name] is getattr(memdir, name)


@pytest.mark.parametrize("package", ["memdir", "memdir.retrieve"])
def test_lazy_map_matches_the_type_checking_imports(package: str) -> None:
    # The names type checkers see (the `if TYPE_CHECKING:` block) are the names imported
    # at run time (the `_EXPORTS` map), from the same modules, and together they are
    # `__all__`. Both are read from the source, as a reader sees them.
    module = importlib.import_module(package)
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1
    typed = {
        alias.name: node.module
        for node in blocks[0].body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    (exports,) = [
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id == "_EXPORTS"
        and node.value is not None
    ]
    assert typed == exports
    assert set(module.__all__) - {"__version__"} == set(exports)
    for name, where in exports.items():
        assert getattr(module, name) is getattr(importlib.import_module(where), name)


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        memdir.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    assert set(memdir.__all__) <= set(dir(memdir))


def test_the_version_imports_nothing_else() -> None:
    code = (
        "import sys\n"
        "from memdir import __version__\n"
        "print(sorted(m for m in sys.modules if m.startswith('memdir')))\n"
        "print(sorted(m for m in ('numpy', 'httpx', 'pydantic', 'click', 'rich') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["['memdir', 'memdir._lazy', 'memdir._version']", "[]"]


def test_fixed_names_of_the_spec_are_public(tmp_path: Path) -> None:
    """§5 fixes these names on a `Memory`; they are the nouns' own bound methods."""
    for name in ("Memory", "Note", "Hit", "WriteResult", "MemdirError"):
        assert name in memdir.__all__
    memory = memdir.Memory.open(tmp_path / "project", tmp_path / "home")
    try:
        fixed = {
            "remember": memory.notes.remember,
            "read": memory.notes.read,
            "list": memory.notes.list,
            "history": memory.notes.history,
            "diff": memory.notes.diff,
            "links": memory.notes.links,
            "search": memory.index.search,
            "retrieve": memory.index.retrieve,
            "reindex": memory.index.reindex,
            "forget": memory.upkeep.forget,
            "doctor": memory.upkeep.doctor,
            "restore": memory.backups.restore,
            "prompt_index": memory.agent.prompt_index,
            "recall": memory.agent.recall,
        }
        for name, method in fixed.items():
            assert getattr(memory, name) == method, name
        assert callable(memory.backups) and callable(memory.close) and callable(memory.ask)
        assert callable(memdir.Memory.open)
    finally:
        memory.close()


def _exception_classes() -> list[type[BaseException]]:
    # Through __all__, not vars(memdir): the public names are imported on first use.
    public = [getattr(memdir, name) for name in memdir.__all__]
    found = {
        obj
        for obj in [*public, *vars(memdir.errors).values()]
        if inspect.isclass(obj)
        and issubclass(obj, BaseException)
        and obj.__module__.startswith("memdir")
    }
    return sorted(found, key=lambda cls: cls.__name__)


EXCEPTIONS = _exception_classes()


def test_exceptions_are_found() -> None:
    names = {cls.__name__ for cls in EXCEPTIONS}
    assert {"MemdirError", "NotFound", "Refused", "SecretRefused", "Conflict", "Busy"} <= names


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda cls: cls.__name__)
def test_exception_has_docstring_and_common_base(cls: type[BaseException]) -> None:
    assert issubclass(cls, MemdirError)
    doc = inspect.getdoc(cls)
    assert doc and doc != inspect.getdoc(MemdirError.__base__), f"{cls.__name__} has no docstring"
    assert cls.__doc__ and cls.__doc__.strip()
    assert cls.__name__ in memdir.__all__


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda cls: cls.__name__)
def test_each_exception_maps_to_an_exit_code(cls: type[MemdirError]) -> None:
    code = memdir.errors.exit_code_for(cls("x"))
    assert isinstance(code, int) and 1 <= code <= 9
    assert memdir.errors.exit_code_for(ValueError("x")) == 1
