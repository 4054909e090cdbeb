"""Tag normalisation: trimmed, split on commas and whitespace, de-duplicated in order."""

from __future__ import annotations

import re
from collections.abc import Iterable

from memdir.errors import InvalidInput

__all__ = ["MAX_TAG_LENGTH", "normalize_tags"]

MAX_TAG_LENGTH = 64
_SPLIT = re.compile(r"[,\s]+")


def normalize_tags(tags: str | Iterable[str] | None) -> tuple[str, ...]:
    """Split every entry on commas and whitespace, drop empties and repeats (case-insensitive).

    Order is kept as first seen, so a person's ordering survives a rewrite.
    """
    if tags is None:
        return ()
    items = [tags] if isinstance(tags, str) else list(tags)
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise InvalidInput(f"tags must be strings, got {type(item).__name__}")
        for part in _SPLIT.split(item):
            tag = part.strip()
            if not tag:
                continue
            if "\x00" in tag or any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in tag):
                raise InvalidInput("tags must not contain control characters")
            try:
                tag.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidInput(
                    "tag is not valid Unicode text (cannot be stored as UTF-8)"
                ) from None
            if len(tag) > MAX_TAG_LENGTH:
                raise InvalidInput(
                    f"tag is {len(tag)} characters long; the limit is {MAX_TAG_LENGTH}"
                )
            key = tag.casefold()
            if key not in seen:
                seen.add(key)
                out.append(tag)
    return tuple(out)
