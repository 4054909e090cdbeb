"""Pure note domain, no I/O: the note model, frontmatter, ids, hashes, links, tags and the
closed vocabularies (`memdir.core.vocab`)."""

from memdir.core.frontmatter import KNOWN_KEYS, body_span, parse_note, render_note
from memdir.core.ids import MAX_ID_LENGTH, is_valid_id, make_id, slugify, validate_id
from memdir.core.links import LINK_PATTERN, extract_links
from memdir.core.note import (
    DEFAULT_SCOPE,
    Note,
    NoteType,
    Scope,
    content_hash,
    normalize_body,
    parse_scope,
    parse_type,
)
from memdir.core.tags import normalize_tags
from memdir.core.vocab import (
    AccessLevel,
    KeepSide,
    SearchMethod,
    SearchMode,
    WriteEvent,
    choices,
    parse_choice,
)

__all__ = [
    "DEFAULT_SCOPE",
    "KNOWN_KEYS",
    "LINK_PATTERN",
    "MAX_ID_LENGTH",
    "AccessLevel",
    "KeepSide",
    "Note",
    "NoteType",
    "Scope",
    "SearchMethod",
    "SearchMode",
    "WriteEvent",
    "body_span",
    "choices",
    "content_hash",
    "extract_links",
    "is_valid_id",
    "make_id",
    "normalize_body",
    "normalize_tags",
    "parse_choice",
    "parse_note",
    "parse_scope",
    "parse_type",
    "render_note",
    "slugify",
    "validate_id",
]
