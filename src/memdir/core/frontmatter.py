"""Note files: parsing and rendering JSON frontmatter between `---` lines (§1.1).

A note file is::

    ---
    {"id":"…","summary":"…","tags":[…],"createdAt":…,"updatedAt":…}
    ---
    body

The JSON is rendered on one line with a fixed key order so files diff cleanly;
a person may pretty-print it and it still parses. Unknown keys are kept in
`Note.extra` and written back after the known ones.

Notes written by hand are read too (with the file name giving the id): YAML frontmatter
(what Obsidian, basic-memory and Claude Code's memory files hold; the flat YAML of
`memdir.core.flat_yaml`) and plain Markdown with no frontmatter at all, whose summary is
its first heading or line. Such a file stays as it was written until memdir rewrites the
note, which it then does in the canonical form (`is_canonical_form`).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from datetime import UTC, date, datetime
from typing import Any

from memdir.core.flat_yaml import (
    FrontmatterError,
    Value,
    frontmatter_list,
    frontmatter_str,
    parse_frontmatter,
)
from memdir.core.note import FRONTMATTER_KEYS, MAX_SUMMARY_CHARS, Note, NoteType
from memdir.errors import InvalidInput, ParseError

__all__ = [
    "KNOWN_KEYS",
    "body_span",
    "is_canonical_form",
    "one_line_summary",
    "parse_note",
    "render_note",
    "titled_summary",
]

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
        form = _form(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ParseError(f"not valid UTF-8 (byte {exc.start})") from None
    pos = start = len(_BOM_BYTES) if data.startswith(_BOM_BYTES) else 0
    if form == "plain":
        if _first_line_of(data[pos:].decode("utf-8")) is None:
            raise _no_text()
    else:
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
    form = _form(text)
    if form != "json":
        if file_id is None:
            raise ParseError("no frontmatter: the file must start with a '---' line")
        return _hand_written(text, form, file_id, mtime_ms)
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


def _form(text: str) -> str:
    """How a note file is written: "json" (memdir's frontmatter, also pretty-printed or with
    a damaged fence, which `_split` reports), "yaml" or "plain" (no frontmatter)."""
    if text.startswith(_BOM):
        text = text[1:]
    first, sep, rest = text.partition("\n")
    if first.rstrip("\r \t") != _FENCE or not sep:
        # memdir's frontmatter after blank lines, or with its fence damaged, is a damaged
        # note, not a plain one: it is reported, never read as a note of other text
        head_lines = [line.strip() for line in text.split("\n", 6)[:6] if line.strip()]
        damaged = any(line.startswith("{") and _JSON_KEY.search(line) for line in head_lines)
        fenced = head_lines[:1] == [_FENCE] and head_lines[1:2] != [] and head_lines[1][0] == "{"
        return "json" if damaged or fenced else "plain"
    if rest.lstrip(" \t\r\n")[:1] in ("{", "[", '"'):
        return "json"
    for line in rest.split("\n"):
        if line.rstrip("\r \t") == _FENCE:
            return "yaml"
    return "plain"  # an opening rule never closed: a horizontal rule, not frontmatter


#: A memdir frontmatter key at the start of a JSON object ('{"id":', '{ "summary" :').
_JSON_KEY = re.compile(r'^\{\s*"(?:id|summary|type|tags|createdAt|updatedAt)"\s*:')
#: git's conflict markers: a file holding them is the unfinished merge of two versions.
_CONFLICT = re.compile(r"^(?:<{7}|={7}|>{7})(?: |$)", re.MULTILINE)


def is_canonical_form(data: bytes) -> bool:
    """Whether a note file holds memdir's JSON frontmatter (a file written by hand in YAML
    or plain Markdown is backed up before memdir rewrites it in that form)."""
    try:
        return _form(data.decode("utf-8")) == "json"
    except UnicodeDecodeError:
        return False


def _no_text() -> ParseError:
    """A file with neither frontmatter nor a line of text to take a summary from."""
    return ParseError(
        "no frontmatter, and no line of text to take a summary from: "
        "the file must start with a '---' line or hold some text"
    )


_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$")
_CODE_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LINE_MARKS = re.compile(r"^\s*(?:[-*+>]|\d{1,3}[.)])\s+|^\s*>\s*")
_INLINE_MARKS = re.compile(r"[*_`]+|\[\[|\]\]")
#: YAML keys naming when a note was made or changed (ISO dates or Unix milliseconds).
_CREATED_KEYS = ("createdAt", "created", "date", "created_at")
_UPDATED_KEYS = ("updatedAt", "updated", "modified", "updated_at", "lastmod")
#: YAML keys memdir maps itself (kept in `extra` all the same when they are no memdir key).
_SUMMARY_KEYS = ("summary",)
_TITLE_KEYS = ("title", "name")
_DESCRIPTION_KEYS = ("description",)


def one_line_summary(text: str) -> str:
    """Text made one summary line: control and line-separator characters become spaces,
    runs of space shrink, and a text over the summary limit is cut at a word with "…"."""
    cleaned = "".join(
        " " if unicodedata.category(c) in ("Cc", "Zl", "Zp", "Cs") else c for c in text
    )
    cleaned = " ".join(cleaned.split())
    if len(cleaned) > MAX_SUMMARY_CHARS:
        cut = cleaned[: MAX_SUMMARY_CHARS - 1]
        space = cut.rfind(" ")
        cleaned = (cut[:space] if space > MAX_SUMMARY_CHARS // 2 else cut).rstrip() + "…"
    return cleaned


_SLUG = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")


def titled_summary(title: str | None, description: str | None) -> str | None:
    """A summary from a title (`name`) and a one-line description, as Claude Code's own
    MEMORY.md index lines show a memory ("Title — hook"): both when both say something.
    A name that is an identifier (`user-role`, `pnpm_only`) names the file, not the fact:
    the description alone is the summary then."""
    if title and description and _SLUG.fullmatch(title):
        return description
    if title and description and description.casefold() not in title.casefold():
        if title.casefold() in description.casefold():
            return description
        return f"{title}: {description}"
    return title or description


def _first_line_of(body: str) -> str | None:
    """The body's first heading, else its first line of prose (list and quote marks and
    emphasis dropped), outside code blocks; None when there is none."""
    fenced = False
    first: str | None = None
    for line in body.split("\n"):
        if _CODE_FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not line.strip():
            continue
        heading = _HEADING.match(line)
        if heading:
            return heading.group(1)
        if first is None and not set(line.strip()) <= set("-*_=#|: "):
            first = _INLINE_MARKS.sub("", _LINE_MARKS.sub("", line))
    return first


_YAML_COMMENT = re.compile(r"(?:^|\s)#(.*)$", re.MULTILINE)
#: Times after this (the year 9999) are no time a note was written: read as none.
_LATEST_MS = 253_402_300_799_999


def _scalar_taken(doc: dict[str, Value], key: str) -> bool:
    value = doc.get(key)
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _list_taken(value: Value | None) -> bool:
    if isinstance(value, str):
        return True
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _ms(value: Value | None) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _LATEST_MS:
        return value
    return None


def _when(doc: dict[str, Value], keys: tuple[str, ...], fallback: int) -> int:
    """Unix milliseconds from the first of `keys` that holds a time (ms, or an ISO date or
    date-time; a date-time without a zone is read as UTC); `fallback` when none does."""
    for key in keys:
        value = doc.get(key)
        ms = _ms(value)
        if ms is not None:
            # memdir's own keys hold milliseconds; another tool's number under its own
            # name (`created: 1700000000`) is Unix seconds when it is that small
            return ms * 1000 if key not in KNOWN_KEYS and ms < 100_000_000_000 else ms
        if isinstance(value, str) and value.strip():
            text = value.strip().replace("Z", "+00:00")
            try:
                moment = datetime.fromisoformat(text)
            except ValueError:
                try:
                    day = date.fromisoformat(text[:10])
                except ValueError:
                    continue
                moment = datetime(day.year, day.month, day.day)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            try:
                ms = int(moment.timestamp() * 1000)
            except (OverflowError, ValueError):
                continue
            if 0 <= ms <= _LATEST_MS:
                return ms
    return fallback


def _hand_written(text: str, form: str, file_id: str, mtime_ms: int) -> Note:
    """A note written by hand: YAML frontmatter or none (see the module docstring)."""
    if text.startswith(_BOM):
        text = text[1:]
    if _CONFLICT.search(text):
        raise ParseError(
            "holds git conflict markers (<<<<<<<, =======, >>>>>>>): finish the merge by hand"
        )
    doc: dict[str, Value] = {}
    body = text
    comments: list[str] = []
    if form == "yaml":
        head, body = _split(text)
        try:
            doc = parse_frontmatter(head.replace("\r", ""))
        except FrontmatterError as exc:
            raise ParseError(
                f"frontmatter is neither memdir's JSON nor the YAML it reads ({exc})"
            ) from None
        # Comments are part of what the person wrote: kept (and so read by the guard).
        comments = [m.group(1).strip() for m in _YAML_COMMENT.finditer(head) if m.group(1).strip()]
    stated = doc.get("id")
    if stated is not None and str(stated) != file_id:
        raise ParseError(f"frontmatter id {stated!r} does not match the file name {file_id}.md")
    summary = frontmatter_str(doc, *_SUMMARY_KEYS) or titled_summary(
        frontmatter_str(doc, *_TITLE_KEYS), frontmatter_str(doc, *_DESCRIPTION_KEYS)
    )
    first_line = _first_line_of(body)
    if form == "plain" and first_line is None:
        raise _no_text()
    summary = one_line_summary(summary or first_line or file_id.replace("-", " ")) or file_id
    raw_type = frontmatter_str(doc, "type")
    note_type: NoteType | None = None
    if raw_type is not None:
        try:
            note_type = NoteType(raw_type.lower())
        except ValueError:
            note_type = None
    private = doc.get("private", False)
    if not isinstance(private, bool):
        raise ParseError("frontmatter private must be true or false")
    tags = [t.lstrip("#") for t in frontmatter_list(doc, "tags") if t.lstrip("#")]
    created = _when(doc, _CREATED_KEYS, mtime_ms)
    # The keys memdir took as they are; every other key and value is kept in `extra`.
    taken = {"id", "private"}
    taken.update(k for k in ("summary", "type") if k in doc and _scalar_taken(doc, k))
    if note_type is None:
        taken.discard("type")
    taken.update(k for k in ("tags", "supersedes") if _list_taken(doc.get(k)))
    taken.update(k for k in ("createdAt", "updatedAt") if _ms(doc.get(k)) is not None)
    extra: list[tuple[str, Any]] = []
    names = set(doc)
    for key, value in doc.items():
        if key in taken:
            continue
        # A key memdir knows holding a value it does not take (a source's own `type`, a
        # time it cannot read) is kept under another name, never dropped.
        name = key
        if key in KNOWN_KEYS:
            name = f"source{key[:1].upper()}{key[1:]}"
            while name in names:
                name += "_"
            names.add(name)
        extra.append((name, value))
    if comments:
        name = "frontmatterComments"
        while name in names:
            name += "_"
        extra.append((name, comments))
    try:
        return Note(
            id=file_id,
            summary=summary,
            body=body,
            type=note_type,
            tags=tuple(tags),
            created_at=created,
            updated_at=_when(doc, _UPDATED_KEYS, max(created, mtime_ms)),
            supersedes=tuple(frontmatter_list(doc, "supersedes")),
            private=private,
            extra=tuple(extra),
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
