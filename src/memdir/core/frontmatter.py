"""Note files: parsing and rendering JSON frontmatter between `---` lines (§1.1).

A note file is::

    ---
    {"id":"…","summary":"…","tags":[…],"createdAt":…,"updatedAt":…}
    ---
    body

The JSON is rendered on one line with a fixed key order so files diff cleanly;
a person may pretty-print it and it still parses. Unknown keys are kept in
`Note.extra` and written back after the known ones.
"""

from __future__ import annotations

import json
import math
from typing import Any

from memdir.core.note import FRONTMATTER_KEYS, Note
from memdir.errors import InvalidInput, ParseError

__all__ = ["KNOWN_KEYS", "body_span", "parse_note", "render_note"]

#: Frontmatter keys memdir reads itself; any other key is kept in `Note.extra`.
KNOWN_KEYS = FRONTMATTER_KEYS
_BOM = "\ufeff"
_FENCE = "---"
_BOM_BYTES = _BOM.encode("utf-8")
_FENCE_BYTES = _FENCE.encode("ascii")


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ParseError(f"frontmatter repeats the key {key!r}")
        result[key] = value
    return result


def _split(text: str) -> tuple[str, str]:
    """(frontmatter JSON text, body text) or ParseError."""
    if text.startswith(_BOM):
        text = text[1:]
    first, sep, rest = text.partition("\n")
    if first.rstrip("\r \t") != _FENCE or not sep:
        raise ParseError("no frontmatter: the file must start with a '---' line")
    pos = 0
    while True:
        end = rest.find("\n", pos)
        line = rest[pos:] if end == -1 else rest[pos:end]
        if line.rstrip("\r \t") == _FENCE:
            body = "" if end == -1 else rest[end + 1 :]
            return rest[:pos], body
        if end == -1:
            raise ParseError("frontmatter is not closed by a '---' line")
        pos = end + 1


def body_span(data: bytes) -> tuple[int, int]:
    """UTF-8 byte offsets (start, end) of the body in a note file's raw bytes.

    The body is what parse_note splits off after the closing `---` line (a BOM is
    allowed); `end` leaves out the trailing line breaks that body normalisation drops,
    so ``normalize_body(data[start:end].decode())`` is the parsed body. Raises
    ParseError, as parse_note does, for a file whose body cannot be located (empty,
    binary, not UTF-8, no closed frontmatter); the frontmatter JSON is not checked.
    """
    if not data.strip():
        raise ParseError("empty file")
    if b"\x00" in data:
        raise ParseError("binary file (contains NUL bytes)")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not valid UTF-8 (byte {exc.start})") from None
    pos = len(_BOM_BYTES) if data.startswith(_BOM_BYTES) else 0
    newline = data.find(b"\n", pos)
    if newline == -1 or data[pos:newline].rstrip(b"\r \t") != _FENCE_BYTES:
        raise ParseError("no frontmatter: the file must start with a '---' line")
    pos = newline + 1
    while True:
        newline = data.find(b"\n", pos)
        line = data[pos:] if newline == -1 else data[pos:newline]
        if line.rstrip(b"\r \t") == _FENCE_BYTES:
            start = len(data) if newline == -1 else newline + 1
            break
        if newline == -1:
            raise ParseError("frontmatter is not closed by a '---' line")
        pos = newline + 1
    end = len(data)
    while end > start and data[end - 1] in b"\r\n":
        end -= 1
    return start, end


def _timestamp(doc: dict[str, Any], key: str, fallback: int) -> int:
    value = doc.get(key)
    if value is None:
        return fallback
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ParseError(f"frontmatter {key} must be Unix milliseconds, got {value!r}")
    return int(value)


def _string_list(doc: dict[str, Any], key: str) -> tuple[str, ...]:
    value = doc.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ParseError(f"frontmatter {key} must be a list of strings")
    return tuple(value)


def parse_note(data: bytes, *, file_id: str | None = None, mtime_ms: int = 0) -> Note:
    """Parse a note file's bytes; raise ParseError saying what is wrong.

    `file_id` is the id implied by the file name: it fills a missing `id` and
    must match a present one. `mtime_ms` fills missing timestamps.
    """
    if not data.strip():
        raise ParseError("empty file")
    if b"\x00" in data:
        raise ParseError("binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not valid UTF-8 (byte {exc.start})") from None
    head, body = _split(text)
    try:
        doc = json.loads(head, object_pairs_hook=_reject_duplicates)
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"frontmatter is not valid JSON ({exc.msg}, line {exc.lineno + 1})"
        ) from None
    except RecursionError:
        raise ParseError("frontmatter JSON is nested too deeply") from None
    if not isinstance(doc, dict):
        raise ParseError("frontmatter must be a JSON object")
    note_id = doc.get("id", file_id)
    summary = doc.get("summary")
    if not isinstance(note_id, str):
        raise ParseError("frontmatter has no id (and the file name gives none)")
    if not isinstance(summary, str):
        raise ParseError("frontmatter summary must be a string (it is required)")
    if file_id is not None and note_id != file_id:
        raise ParseError(f"frontmatter id {note_id!r} does not match the file name {file_id}.md")
    private = doc.get("private", False)
    if not isinstance(private, bool):
        raise ParseError("frontmatter private must be true or false")
    created = _timestamp(doc, "createdAt", mtime_ms)
    try:
        return Note(
            id=note_id,
            summary=summary,
            body=body,
            type=doc.get("type"),
            tags=_string_list(doc, "tags"),
            created_at=created,
            updated_at=_timestamp(doc, "updatedAt", max(created, mtime_ms)),
            supersedes=_string_list(doc, "supersedes"),
            private=private,
            extra=tuple((k, v) for k, v in doc.items() if k not in KNOWN_KEYS),
        )
    except InvalidInput as exc:
        raise ParseError(f"invalid note: {exc}") from None


def render_note(note: Note) -> bytes:
    """The file bytes for a note: canonical one-line JSON frontmatter, then the body."""
    doc: dict[str, Any] = {"id": note.id, "summary": note.summary}
    if note.type is not None:
        doc["type"] = note.type.value
    doc["tags"] = list(note.tags)
    if note.supersedes:
        doc["supersedes"] = list(note.supersedes)
    if note.private:
        doc["private"] = True
    doc["createdAt"] = note.created_at
    doc["updatedAt"] = note.updated_at
    for key, value in note.extra:
        doc[key] = value
    head = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    text = f"{_FENCE}\n{head}\n{_FENCE}\n"
    if note.body:
        text += note.body + "\n"
    return text.encode("utf-8")
