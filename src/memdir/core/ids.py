"""Note ids: validation against traversal and reserved names, and generation from a summary."""

from __future__ import annotations

import functools
import re
import secrets
import unicodedata
from collections.abc import Callable, Iterable

from memdir.errors import InvalidInput

__all__ = ["ID_PATTERN", "MAX_ID_LENGTH", "is_valid_id", "make_id", "slugify", "validate_id"]

MAX_ID_LENGTH = 80
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,79}")

# File names Windows refuses whatever the extension: `<id>.md` must stay portable.
_WINDOWS_RESERVED = frozenset(
    ["con", "prn", "aux", "nul"]
    + [f"com{i}" for i in range(10)]
    + [f"lpt{i}" for i in range(10)]
    + ["conin$", "conout$"]
)
_SLUG_WORDS = 5
_SLUG_CHARS = 40


def _describe(raw: object) -> str:
    text = repr(raw)
    return text if len(text) <= 60 else text[:57] + "..."


def validate_id(raw: object) -> str:
    """Return `raw` if it is a valid note id, else raise InvalidInput saying why."""
    if not isinstance(raw, str):
        raise InvalidInput(f"note id must be a string, got {type(raw).__name__}")
    if raw == "":
        raise InvalidInput("note id must not be empty")
    if "\x00" in raw:
        raise InvalidInput("note id must not contain NUL")
    if "/" in raw or "\\" in raw or ".." in raw:
        raise InvalidInput(f"note id {_describe(raw)} must not contain '/', '\\' or '..'")
    if len(raw) > MAX_ID_LENGTH:
        raise InvalidInput(f"note id is {len(raw)} characters long; the limit is {MAX_ID_LENGTH}")
    if raw != raw.lower() and ID_PATTERN.fullmatch(raw.lower()):
        raise InvalidInput(
            f"note id {_describe(raw)} has upper-case letters; ids are lower-case "
            f"(did you mean {raw.lower()!r}?)"
        )
    if not ID_PATTERN.fullmatch(raw):
        raise InvalidInput(
            f"note id {_describe(raw)} is not valid: use lower-case letters, digits and '-', "
            "starting with a letter or digit"
        )
    if raw in _WINDOWS_RESERVED:
        raise InvalidInput(f"note id {raw!r} is a reserved file name on Windows")
    return raw


def is_valid_id(raw: object) -> bool:
    """True when `raw` passes validate_id."""
    if isinstance(raw, str):
        return _is_valid_name(raw)
    return False


@functools.lru_cache(maxsize=262_144)
def _is_valid_name(raw: str) -> bool:
    # Every query checks every file name in a note directory: remember the answers.
    try:
        validate_id(raw)
    except InvalidInput:
        return False
    return True


def slugify(summary: str) -> str:
    """Lower-case ASCII slug of the first few words of a summary ('' when nothing is left)."""
    ascii_text = unicodedata.normalize("NFKD", summary).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for word in words[:_SLUG_WORDS]:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > _SLUG_CHARS:
            break
        slug = candidate
    if not slug and words:
        slug = words[0][:_SLUG_CHARS]
    return slug


def make_id(
    summary: str,
    taken: Iterable[str] | Callable[[str], bool] = (),
    *,
    token: Callable[[int], str] = secrets.token_hex,
) -> str:
    """A fresh id: slug of the summary plus a short random suffix not in `taken`.

    `taken` is a collection of existing ids or a predicate; the comparison is
    case-insensitive so two ids never differ only in case.
    """
    if callable(taken):
        is_taken = taken
    else:
        existing = {t.casefold() for t in taken}

        def is_taken(candidate: str) -> bool:
            return candidate.casefold() in existing

    base = slugify(summary) or "note"
    if base in _WINDOWS_RESERVED:
        base = f"{base}-note"
    for attempt in range(64):
        # Three hex digits read well; widen the suffix if the slug is crowded.
        suffix = token(2)[:3] if attempt < 16 else token(4)
        candidate = f"{base[: MAX_ID_LENGTH - len(suffix) - 1]}-{suffix}"
        if not is_taken(candidate):
            return validate_id(candidate)
    raise InvalidInput(f"could not find a free id for summary {summary[:40]!r}")
