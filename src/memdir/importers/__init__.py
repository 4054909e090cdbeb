"""Reading the memory of other systems (§5 import): one module per source kind, each a pure
reader from files to `Imported` items; `memdir.memory.importing` assigns ids, runs the
credential guard and writes them. See `memdir.importers.base` for the contract.

The kinds, in the order `detect` tries them (the most specific first; a plain Markdown
folder last, since every other folder kind is one too)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from memdir.core.vocab import ImportKind
from memdir.errors import InvalidInput

__all__ = ["KINDS", "detect", "reader"]

#: kind -> module of `memdir.importers`, in `ImportKind` order (the order detect tries)
KINDS: dict[str, str] = {
    kind.value: {"memdir": "memdir_export"}.get(kind.value, kind.value.replace("-", "_"))
    for kind in ImportKind
}


def reader(kind: str) -> ModuleType:
    """The module reading `kind` (its `read(path)` and `detect(path)`)."""
    name = KINDS.get(kind)
    if name is None:
        raise InvalidInput(f"unknown import kind {kind[:40]!r} (one of: {', '.join(KINDS)})")
    return importlib.import_module(f"memdir.importers.{name}")


def detect(path: Path) -> str:
    """The kind of source at `path`; InvalidInput naming the kinds when none matches."""
    if not path.exists():
        raise InvalidInput(f"nothing to import at {path}: no such file or folder")
    for kind in KINDS:
        try:
            if reader(kind).detect(path):
                return kind
        except OSError:
            continue
    raise InvalidInput(
        f"cannot tell what {path} holds; name its kind with --from ({', '.join(KINDS)})"
    )
