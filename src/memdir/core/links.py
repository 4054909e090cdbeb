"""Wiki links: `[[note-id]]` references found in note bodies."""

from __future__ import annotations

import re

__all__ = ["LINK_PATTERN", "extract_links"]

LINK_PATTERN = re.compile(r"\[\[([a-z0-9][a-z0-9-]{0,79})\]\]")


def extract_links(body: str) -> tuple[str, ...]:
    """Ids linked from a body, in first-seen order, without repeats."""
    seen: dict[str, None] = {}
    for match in LINK_PATTERN.finditer(body):
        seen.setdefault(match.group(1), None)
    return tuple(seen)
