"""The contract every importer keeps (§5 import).

::

    read(path: Path) -> Reading          one source kind's reader (a module per kind)
    detect(path: Path) -> str | None     which kind a path holds (None: none known)

A reader never writes and never raises for bad content: a file or line it cannot use is a
`Problem` (which file, why), the rest is read. It raises `InvalidInput` only when the path
is not a source of its kind at all. Each `Imported` item has a `key` that is stable for
as long as the source is (a file's path relative to the source root, an entity's name, a
mem0 id): with the source's root it is the pointer kept in the note (``source``
frontmatter key), so a second import finds what the first one wrote.

Links: a reader writes a reference to another item of the source as ``[[ref:N]]`` in the
body, `refs[N]` saying what it names (a key or a title as the source spells it, and the
text to keep when nothing of that name is imported). The importer resolves them to ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from memdir.core import NoteType, Scope

__all__ = [
    "MAX_SOURCE_BYTES",
    "REF_PATTERN",
    "Imported",
    "Problem",
    "Reading",
    "Ref",
    "iso_ms",
]

#: A single source file larger than this is reported, not read (a note's limit is far less).
MAX_SOURCE_BYTES = 64 << 20
#: A reference a reader left in a body: ``[[ref:N]]``, N indexing `Imported.refs`.
REF_PATTERN = re.compile(r"\[\[ref:(\d{1,5})\]\]")


@dataclass(frozen=True, slots=True)
class Ref:
    """What a ``[[ref:N]]`` names: `target` (a key or title of the source) and the `text` kept
    in place of the link when no imported or existing note answers to it."""

    target: str
    text: str


@dataclass(frozen=True, slots=True)
class Imported:
    """One note read from a source, before it has an id."""

    key: str
    summary: str
    body: str = ""
    type: NoteType | None = None
    tags: tuple[str, ...] = ()
    #: Unix ms, where the source says (None: unknown; the import time is used)
    created_at: int | None = None
    updated_at: int | None = None
    refs: tuple[Ref, ...] = ()
    #: other names the item answers to when another item links to it (a title, a permalink)
    aliases: tuple[str, ...] = ()
    #: the file it came from (shown with refusals and problems), relative to the source root
    origin: str = ""
    #: the id to keep (memdir's own export; None: one is made from the summary)
    id: str | None = None
    #: the scope the source puts it in (memdir's own export; None: by type, or --scope)
    scope: Scope | None = None
    supersedes: tuple[str, ...] = ()
    private: bool = False
    #: frontmatter keys memdir does not know, kept as they are (memdir's own export)
    extra: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True, slots=True)
class Problem:
    """Something of the source that was not read: where (file, line) and why."""

    origin: str
    reason: str


@dataclass(slots=True)
class Reading:
    """What a reader found at a source path."""

    kind: str
    root: Path
    items: list[Imported] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def iso_ms(value: object) -> int | None:
    """Unix ms from an ISO-8601 text (``Z`` or an offset; naive means UTC), a Unix time in
    seconds or ms, or None for anything else."""
    from datetime import UTC, datetime

    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
        if number <= 0:
            return None
        return int(number if number > 1e11 else number * 1000)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    stamp = int(parsed.timestamp() * 1000)
    return stamp if stamp > 0 else None
