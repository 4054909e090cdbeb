"""The note model: a frozen record of one Markdown note and its canonical content hash."""

from __future__ import annotations

import copy
import hashlib
import json
import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from memdir.core.ids import validate_id
from memdir.core.links import extract_links
from memdir.core.tags import normalize_tags
from memdir.errors import InvalidInput

__all__ = [
    "BIDI_CONTROLS",
    "DEFAULT_SCOPE",
    "FRONTMATTER_KEYS",
    "MAX_SUMMARY_CHARS",
    "Note",
    "NoteType",
    "Scope",
    "check_summary_written",
    "content_hash",
    "normalize_body",
    "parse_scope",
    "parse_type",
]

MAX_SUMMARY_CHARS = 300
#: Frontmatter keys with a field of their own; `Note.extra` holds every other key.
FRONTMATTER_KEYS = (
    "id",
    "summary",
    "type",
    "tags",
    "supersedes",
    "private",
    "createdAt",
    "updatedAt",
)
_NOT_IN_SUMMARY = frozenset({"Cc", "Zl", "Zp"})
#: The bidirectional formatting characters (embeddings, overrides, isolates, marks): text
#: holding them can be shown in another order than it is stored, so a summary written now
#: may not hold them, and the CLI shows them as visible escapes.
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


class NoteType(StrEnum):
    """What a note records (§1.3)."""

    USER = "user"
    FEEDBACK = "feedback"
    PROJECT = "project"
    REFERENCE = "reference"


class Scope(StrEnum):
    """Where a note lives (§1.2)."""

    PROJECT = "project"
    USER = "user"


#: Only `user` notes go to the user scope by default (§1.3).
DEFAULT_SCOPE: dict[NoteType | None, Scope] = {
    NoteType.USER: Scope.USER,
    NoteType.FEEDBACK: Scope.PROJECT,
    NoteType.PROJECT: Scope.PROJECT,
    NoteType.REFERENCE: Scope.PROJECT,
    None: Scope.PROJECT,
}


def parse_type(raw: object) -> NoteType | None:
    """A NoteType from its name (None and '' mean untyped)."""
    if raw is None or raw == "":
        return None
    if isinstance(raw, NoteType):
        return raw
    if isinstance(raw, str):
        try:
            return NoteType(raw)
        except ValueError:
            pass
    names = ", ".join(t.value for t in NoteType)
    raise InvalidInput(f"note type must be one of {names}, got {raw!r}")


def parse_scope(raw: object) -> Scope | None:
    """A Scope from its name (None means 'the default for the note type')."""
    if raw is None:
        return None
    if isinstance(raw, Scope):
        return raw
    if isinstance(raw, str):
        try:
            return Scope(raw)
        except ValueError:
            pass
    raise InvalidInput(f"scope must be 'project' or 'user', got {raw!r}")


def normalize_body(body: str) -> str:
    """Canonical body: LF line endings, no trailing blank lines.

    Files are rendered with one final newline; normalising here makes
    parse(render(note)) == note hold for every body.
    """
    return body.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")


def _check_encodable(text: str, what: str) -> None:
    """Refuse lone surrogates: such text cannot be written to a UTF-8 file."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(
            f"{what} is not valid Unicode text (cannot be stored as UTF-8)"
        ) from None


def _check_summary(summary: object) -> str:
    if not isinstance(summary, str):
        raise InvalidInput("summary must be a string")
    _check_encodable(summary, "summary")
    text = summary.strip()
    if not text:
        raise InvalidInput("summary is required and must not be blank")
    if any(unicodedata.category(c) in _NOT_IN_SUMMARY for c in text):
        raise InvalidInput("summary must be a single line without control characters")
    if len(text) > MAX_SUMMARY_CHARS:
        raise InvalidInput(
            f"summary is {len(text)} characters long; the limit is {MAX_SUMMARY_CHARS}"
        )
    return text


def check_summary_written(summary: str) -> None:
    """Refuse writing a summary with a bidirectional formatting character (`BIDI_CONTROLS`).

    Checked when a note is written, not when one is read: a note saved before the rule
    still loads (and every display shows the character as an escape), but it is not
    written again with it. Control characters are refused for every note, read or written.
    """
    found = sorted({f"U+{ord(c):04X}" for c in summary if c in BIDI_CONTROLS})
    if found:
        raise InvalidInput(
            f"summary holds a bidirectional formatting character ({', '.join(found)}), "
            "which can make it display in another order than it is written; remove it"
        )


def _check_extra(extra: object) -> tuple[tuple[str, Any], ...]:
    """Unknown frontmatter keys: unique strings, none a known key, values JSON-serialisable."""
    try:
        pairs = tuple((key, value) for key, value in extra)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise InvalidInput("extra must be (key, value) pairs") from None
    seen: set[str] = set()
    for key, value in pairs:
        if not isinstance(key, str) or key in FRONTMATTER_KEYS or key in seen:
            raise InvalidInput(
                f"extra frontmatter key {key!r} must be a string, unique, and not one of "
                + ", ".join(FRONTMATTER_KEYS)
            )
        seen.add(key)
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError, RecursionError):
            raise InvalidInput(
                f"extra frontmatter key {key!r} has a value JSON cannot hold"
            ) from None
    return pairs


def content_hash(
    summary: str,
    tags: tuple[str, ...],
    body: str,
    type: NoteType | None = None,
    supersedes: tuple[str, ...] = (),
) -> str:
    """SHA-256 over the canonical serialisation of a note's content (§1.1).

    `type` and `supersedes` enter only when present, so notes written before
    they existed keep their hashes. Tags are a set: their order does not count.
    """
    doc: dict[str, Any] = {"body": body, "summary": summary, "tags": sorted(set(tags))}
    if type is not None:
        doc["type"] = type.value
    if supersedes:
        doc["supersedes"] = sorted(set(supersedes))
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Note:
    """One note. `scope` and `path` are set when the note was loaded from a directory."""

    id: str
    summary: str
    body: str = ""
    type: NoteType | None = None
    tags: tuple[str, ...] = ()
    created_at: int = 0
    updated_at: int = 0
    supersedes: tuple[str, ...] = ()
    private: bool = False
    #: Unknown frontmatter keys, kept verbatim and in order for forward compatibility.
    extra: tuple[tuple[str, Any], ...] = field(default=(), compare=True)
    scope: Scope | None = field(default=None, compare=False)
    path: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        validate_id(self.id)
        object.__setattr__(self, "summary", _check_summary(self.summary))
        if not isinstance(self.body, str):
            raise InvalidInput("body must be a string")
        if "\x00" in self.body:
            raise InvalidInput("body must not contain NUL characters")
        _check_encodable(self.body, "body")
        object.__setattr__(self, "body", normalize_body(self.body))
        object.__setattr__(self, "type", parse_type(self.type))
        object.__setattr__(self, "tags", normalize_tags(self.tags))
        sup = tuple(dict.fromkeys(validate_id(s) for s in self.supersedes))
        object.__setattr__(self, "supersedes", sup)
        object.__setattr__(self, "extra", _check_extra(self.extra))
        for name in ("created_at", "updated_at"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidInput(f"{name} must be a non-negative integer (Unix ms)")

    @property
    def hash(self) -> str:
        """The §1.1 content hash that sync baselines and dismissals refer to."""
        return content_hash(self.summary, self.tags, self.body, self.type, self.supersedes)

    @property
    def links(self) -> tuple[str, ...]:
        """Ids this note links to with `[[id]]`, in order."""
        return extract_links(self.body)

    @property
    def body_bytes(self) -> int:
        """Size of the body in UTF-8 bytes (what `memory.maxNoteBytes` limits)."""
        return len(self.body.encode("utf-8"))

    def located(self, scope: Scope, path: Path) -> Note:
        """This note, marked as living at `path` in `scope` (a copy: the fields are
        already valid, so they are not checked again, which a scan of thousands of notes
        would pay for)."""
        out = copy.copy(self)
        object.__setattr__(out, "scope", scope)
        object.__setattr__(out, "path", path)
        return out

    def same_content(self, other: Note) -> bool:
        """True when both notes would produce identical files apart from timestamps."""
        return (
            self.hash == other.hash
            and self.private == other.private
            and self.extra == other.extra
            and self.tags == other.tags
        )
