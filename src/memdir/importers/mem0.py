"""Reading a mem0 export (a JSON file of memories) into notes.

The shapes read, all lists of memory objects (``id``, ``memory``, ``hash``, ``metadata``,
``created_at``, ``updated_at``, ``user_id``/``agent_id``/``run_id``, on the platform also
``categories``, ``app_id``, ``expiration_date``):

- ``Memory.get_all()`` of the open-source library: ``{"results": [...]}`` (v1.1, the only
  form since mem0 1.0; before the v3 pipeline a graph store added ``"relations"``, which
  name graph entities, not memories, and are reported, not read), or the bare list that
  ``version="v1.0"`` gave;
- ``MemoryClient.get_all()`` of the platform: ``{"count", "next", "previous",
  "results": [...]}`` (one page; concatenated pages as a bare list work too);
- the dashboard's JSON export: ``{"memories": [{"id", "content", ...}], "total"}``.

The platform's structured export (``create_memory_export``/``get_memory_export``) answers
an object in a schema the user wrote, not memories; it is not a source of this kind.

A memory is keyed by its mem0 id; its summary is the first line of its text (cut to the
summary limit), its body the whole text and a ``from mem0: …`` line naming the ids it
was stored under and its categories, which also become its tags. A malformed item is a
problem named by its index; a repeated id keeps the first. Text that looks like a reader
reference (``[[ref:``) is escaped so the importer leaves it alone.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from memdir.core import normalize_tags
from memdir.core.note import MAX_SUMMARY_CHARS
from memdir.errors import InvalidInput
from memdir.importers.base import MAX_SOURCE_BYTES, Imported, Problem, Reading, iso_ms

__all__ = ["KIND", "detect", "read"]

KIND = "mem0"
_BOM = b"\xef\xbb\xbf"
_HEAD_BYTES = 64 << 10
_NOT_IN_SUMMARY = frozenset({"Cc", "Zl", "Zp"})
#: The keys under which a source's memories are listed, by shape.
_LIST_KEYS = ("results", "memories")
#: Text of a memory: ``memory`` everywhere but the dashboard export (``content``).
_TEXT_KEYS = ("memory", "content")
#: Who a memory was stored for, in the order the ``from mem0`` line names them.
_OWNER_KEYS = ("user_id", "agent_id", "app_id", "run_id", "actor_id", "role")
_HEAD_SHAPE = re.compile(rb'^\s*(\[\s*\{|\{\s*"(results|memories|count)"\s*:)')
_METADATA_CHARS = 200
_TAG_SEPARATORS = re.compile(r"[,\s]+")


def detect(path: Path) -> bool:
    """True for a ``.json`` file that opens as a list of memories or a ``results``/
    ``memories`` object and names a ``memory``/``content`` text near its start."""
    if not path.is_file() or path.suffix.lower() != ".json":
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD_BYTES).removeprefix(_BOM)
    except OSError:
        return False
    if not _HEAD_SHAPE.match(head) or b'"memdir-export"' in head:
        return False
    return b'"id"' in head and (b'"memory"' in head or b'"content"' in head)


def _storable(text: str) -> str:
    """Text a note can hold: lone surrogates (JSON escapes) replaced, NULs dropped."""
    fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return fixed.replace("\x00", "")


def _one_line(text: str) -> str:
    kept = "".join(" " if unicodedata.category(c) in _NOT_IN_SUMMARY else c for c in text)
    return " ".join(kept.split())


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _summary(text: str) -> str:
    for line in text.splitlines():
        single = _one_line(line)
        if single:
            return _cut(single, MAX_SUMMARY_CHARS)
    return ""


def _tags(value: object) -> tuple[str, ...]:
    """The categories that make valid tags (a bad one is dropped, not the memory)."""
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list):
        return ()
    kept: list[str] = []
    for item in values:
        if not isinstance(item, str):
            continue
        # one category is one tag: memdir splits tags on commas and spaces
        joined = _TAG_SEPARATORS.sub("-", _storable(item).strip()).strip("-")
        try:
            kept.extend(normalize_tags(joined))
        except InvalidInput:
            continue
    return normalize_tags(kept)


def _provenance(memory: dict[str, Any], tags: tuple[str, ...]) -> str:
    parts = []
    for key in _OWNER_KEYS:
        value = memory.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            parts.append(f"{key}={_cut(_one_line(_storable(str(value))), 80)}")
    if tags:
        parts.append(f"categories={', '.join(tags)}")
    metadata = memory.get("metadata")
    if isinstance(metadata, dict) and metadata:
        try:
            shown = json.dumps(metadata, ensure_ascii=False, sort_keys=True, default=str)
        except (TypeError, ValueError, RecursionError):
            shown = ""
        if shown:
            parts.append(f"metadata={_cut(_one_line(_storable(shown)), _METADATA_CHARS)}")
    return "from mem0: " + "; ".join(parts) if parts else "from mem0"


def _item(memory: object, origin: str) -> Imported | str:
    """The note of one memory, or why it cannot be one."""
    if not isinstance(memory, dict):
        return "not a JSON object"
    raw_id = memory.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
        return "has no id"
    key = _one_line(_storable(str(raw_id)))
    if not key:
        return "has no id"
    text = next((memory[k] for k in _TEXT_KEYS if isinstance(memory.get(k), str)), None)
    if text is None:
        return "has no memory text"
    text = _storable(text).replace("\r\n", "\n").replace("\r", "\n").strip()
    summary = _summary(text)
    # the importer reads "[[ref:N]]" as a reader's link; a memory's own text keeps its words
    text = text.replace("[[ref:", "[[ref\\:")
    if not summary:
        return "its memory text is empty"
    tags = _tags(memory.get("categories"))
    created = iso_ms(memory.get("created_at"))
    updated = iso_ms(memory.get("updated_at"))
    return Imported(
        key=key,
        summary=summary,
        body=f"{text}\n\n{_provenance(memory, tags)}",
        tags=tags,
        created_at=created,
        updated_at=updated if updated is not None else created,
        origin=origin,
    )


def _memories(doc: object, name: str) -> tuple[list[object], str, list[Problem]]:
    """(the memories, the label their index is shown under, problems of the wrapper)."""
    if isinstance(doc, list):
        return doc, name, []
    if isinstance(doc, dict):
        for key in _LIST_KEYS:
            values = doc.get(key)
            if isinstance(values, list):
                problems = []
                relations = doc.get("relations")
                if isinstance(relations, list) and relations:
                    problems.append(
                        Problem(
                            f"{name}: relations",
                            f"{len(relations)} graph relations name entities, not memories; "
                            "not imported",
                        )
                    )
                return values, f"{name}: {key}", problems
    raise InvalidInput(
        f"{name} is not a mem0 export: expected a list of memories or an object with "
        "'results' (get_all) or 'memories' (the dashboard export); a structured export "
        "(create_memory_export) holds answers to its schema, not memories"
    )


def read(path: Path) -> Reading:
    """The memories of the mem0 export file at `path` as notes."""
    if not path.is_file():
        raise InvalidInput(f"{path} is not a file (a mem0 export is one JSON file)")
    name = path.name
    reading = Reading(kind=KIND, root=path)
    try:
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            reading.problems.append(
                Problem(name, f"{size} bytes, over the {MAX_SOURCE_BYTES} a source file may be")
            )
            return reading
        data = path.read_bytes().removeprefix(_BOM)
    except OSError as exc:
        reading.problems.append(Problem(name, f"cannot be read ({exc.strerror or exc})"))
        return reading
    if not data.strip():
        reading.problems.append(Problem(name, "empty file"))
        return reading
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        reading.problems.append(Problem(name, f"not valid UTF-8 (byte {exc.start})"))
        return reading
    except ValueError as exc:
        reading.problems.append(Problem(name, f"not valid JSON ({str(exc)[:80]})"))
        return reading
    except RecursionError:
        reading.problems.append(Problem(name, "JSON nested too deeply"))
        return reading
    memories, label, problems = _memories(doc, name)
    reading.problems.extend(problems)
    seen: dict[str, str] = {}
    for index, memory in enumerate(memories):
        origin = f"{label}[{index}]"
        item = _item(memory, origin)
        if isinstance(item, str):
            reading.problems.append(Problem(origin, item))
        elif item.key in seen:
            reading.problems.append(
                Problem(origin, f"repeats the id of {seen[item.key]}; the first is kept")
            )
        else:
            seen[item.key] = origin
            reading.items.append(item)
    return reading
