"""Plain JSON data from result dataclasses, for an adapter to print or send."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["plain"]


def plain(
    value: Any,
    *,
    properties: tuple[str, ...] = (),
    special: Callable[[Any], Any] | None = None,
) -> Any:
    """Plain JSON data from results — dataclasses, enums, paths, mappings, sequences — for
    an adapter to print or send. The listed `properties` of a dataclass are added beside
    its fields; `special` may answer for a value first (anything but `NotImplemented`)."""
    if special is not None:
        answer = special(value)
        if answer is not NotImplemented:
            return answer

    def again(item: Any) -> Any:
        return plain(item, properties=properties, special=special)

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: again(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in properties:
            if isinstance(getattr(type(value), name, None), property):
                out[name] = again(getattr(value, name))
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): again(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [again(v) for v in value]
    return value
