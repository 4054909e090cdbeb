"""Wiki links: `[[note-id]]` references found in note bodies, and what a note's links resolve to."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the note model imports this module
    from memdir.core.note import Scope

__all__ = [
    "LINK_PATTERN",
    "Link",
    "LinkReport",
    "extract_links",
]


@dataclass(frozen=True, slots=True)
class Link:
    """A `[[target]]` link and the scope it resolves in (None when dangling)."""

    target: str
    scope: Scope | None
    summary: str | None


@dataclass(frozen=True, slots=True)
class LinkReport:
    """A note's outgoing links, backlinks and dangling links."""

    note_id: str
    outgoing: tuple[Link, ...]
    backlinks: tuple[Link, ...]
    #: Targets that exist but are not shown to this caller (listed without scope).
    hidden: tuple[str, ...] = ()
    #: The notes shown to this caller that supersede this one (§1.1).
    superseded_by: tuple[str, ...] = ()

    @property
    def dangling(self) -> tuple[str, ...]:
        """Targets that name no note."""
        return tuple(
            link.target
            for link in self.outgoing
            if link.scope is None and link.target not in self.hidden
        )


LINK_PATTERN = re.compile(r"\[\[([a-z0-9][a-z0-9-]{0,79})\]\]")


def extract_links(body: str) -> tuple[str, ...]:
    """Ids linked from a body, in first-seen order, without repeats."""
    seen: dict[str, None] = {}
    for match in LINK_PATTERN.finditer(body):
        seen.setdefault(match.group(1), None)
    return tuple(seen)
