"""Reading the reference MCP memory server's knowledge graph (``memory.jsonl``) into notes.

The server (modelcontextprotocol/servers, ``src/memory/index.ts``) keeps one JSON object a
line, entities first, then relations, lines joined by ``\\n``::

    {"type":"entity","name":"Ada","entityType":"person","observations":["Writes Rust"]}
    {"type":"relation","from":"Ada","to":"Acme","relationType":"works_at"}

Before August 2025 the same lines were written to ``memory.json`` (the server renames it);
its ``read_graph`` tool and ``memory://knowledge-graph`` resource answer one pretty-printed
object ``{"entities": [...], "relations": [...]}``, which is read too.

An entity becomes a note keyed by its name: the summary is "name (entityType)", the body
its observations as a list, then one ``- relationType [[ref:N]]`` line per relation from
it. A relation to an entity not in the file keeps its name as text; one from an unknown
entity has no note to live in and is reported. A repeated entity name (the server never
writes one, a hand edit or two servers sharing the file can) is merged into the first:
its new observations are appended and the repeat is reported. Source text that looks
like a reader reference (``[[ref:``) is escaped so the importer leaves it alone.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.core.note import MAX_SUMMARY_CHARS
from memdir.errors import InvalidInput
from memdir.importers.base import MAX_SOURCE_BYTES, Imported, Problem, Reading, Ref

__all__ = ["KIND", "detect", "read"]

KIND = "mcp-memory"
#: The file names the server uses, newest first.
FILE_NAMES = ("memory.jsonl", "memory.json")
_BOM = b"\xef\xbb\xbf"
_HEAD_BYTES = 64 << 10
_NOT_IN_SUMMARY = frozenset({"Cc", "Zl", "Zp"})


@dataclass(slots=True)
class _Entity:
    name: str
    entity_type: str
    observations: list[str]
    origin: str
    seen: set[str] = field(default_factory=set)
    links: list[tuple[str, str]] = field(default_factory=list)


def _source_file(path: Path) -> Path:
    if path.is_dir():
        for name in FILE_NAMES:
            candidate = path / name
            if candidate.is_file():
                return candidate
        raise InvalidInput(f"{path} holds no {' or '.join(FILE_NAMES)}")
    if not path.is_file():
        raise InvalidInput(f"{path} is not a file")
    return path


def _is_record(value: object) -> bool:
    return isinstance(value, dict) and (
        (value.get("type") == "entity" and isinstance(value.get("name"), str))
        or (value.get("type") == "relation" and isinstance(value.get("from"), str))
    )


def detect(path: Path) -> bool:
    """True when `path` is (or is a folder holding) a memory graph file whose first line is
    an entity or relation record, or a saved ``read_graph`` answer."""
    try:
        source = _source_file(path)
        if path.is_file() and source.suffix.lower() not in (".jsonl", ".json"):
            return False
        with source.open("rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except (InvalidInput, OSError):
        return False
    head = head.removeprefix(_BOM).lstrip()
    first = head.split(b"\n", 1)[0].strip()
    try:
        if _is_record(json.loads(first)):
            return True
    except (ValueError, RecursionError):
        pass
    return head.startswith(b"{") and b'"entities"' in head and b'"entityType"' in head


def _storable(text: str) -> str:
    """Text a note can hold: lone surrogates (JSON escapes) replaced, NULs dropped."""
    fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return fixed.replace("\x00", "")


def _one_line(text: str) -> str:
    kept = "".join(
        " " if unicodedata.category(c) in _NOT_IN_SUMMARY else c for c in _storable(text)
    )
    return " ".join(kept.split())


def _cut(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _escape_refs(text: str) -> str:
    return text.replace("[[ref:", "[[ref\\:")


def _records(data: bytes, name: str) -> tuple[list[tuple[str, object]], list[Problem]]:
    """(origin, parsed JSON value) of every non-blank line, or of a ``read_graph`` object."""
    data = data.removeprefix(_BOM)
    stripped = data.strip()
    problems: list[Problem] = []
    if stripped.startswith(b"{"):
        graph = _graph_object(stripped)
        if graph is not None:
            return _graph_records(graph, name, problems), problems
    out: list[tuple[str, object]] = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        line = raw.strip()
        if not line:
            continue
        origin = f"{name}:{number}"
        try:
            out.append((origin, json.loads(line.decode("utf-8"))))
        except UnicodeDecodeError as exc:
            problems.append(Problem(origin, f"not valid UTF-8 (byte {exc.start})"))
        except ValueError as exc:
            problems.append(Problem(origin, f"not valid JSON ({str(exc)[:80]})"))
        except RecursionError:
            problems.append(Problem(origin, "JSON nested too deeply"))
    return out, problems


def _graph_object(data: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict) and ("entities" in value or "relations" in value):
        return value
    return None


def _graph_records(
    graph: dict[str, Any], name: str, problems: list[Problem]
) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for key, kind in (("entities", "entity"), ("relations", "relation")):
        values = graph.get(key, [])
        if not isinstance(values, list):
            problems.append(Problem(f"{name}: {key}", "not a list"))
            continue
        for index, value in enumerate(values):
            record = dict(value, type=kind) if isinstance(value, dict) else value
            out.append((f"{name}: {key}[{index}]", record))
    return out


def _text_list(value: object) -> list[str] | None:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return list(value)


def _read_entity(
    record: dict[str, Any], origin: str, entities: dict[str, _Entity], problems: list[Problem]
) -> None:
    name = record.get("name")
    if not isinstance(name, str) or not _one_line(name):
        problems.append(Problem(origin, "entity has no name"))
        return
    entity_type = record.get("entityType", "")
    observations = _text_list(record.get("observations"))
    if not isinstance(entity_type, str) or observations is None:
        problems.append(
            Problem(origin, "entity needs a text entityType and a list of text observations")
        )
        return
    known = entities.get(name)
    if known is None:
        entity = _Entity(name, entity_type, [], origin)
        entities[name] = entity
    else:
        entity = known
        problems.append(
            Problem(
                origin,
                f"entity {_cut(_one_line(name), 80)!r} repeats {known.origin}; "
                "its observations were merged into it",
            )
        )
    for text in observations:
        if text.strip() and text not in entity.seen:
            entity.seen.add(text)
            entity.observations.append(text)


def _read_relation(
    record: dict[str, Any],
    origin: str,
    relations: list[tuple[str, str, str, str]],
    problems: list[Problem],
) -> None:
    ends = [record.get(k) for k in ("from", "to", "relationType")]
    if not all(isinstance(v, str) and _one_line(v) for v in ends):
        problems.append(Problem(origin, "relation needs text from, to and relationType"))
        return
    source, target, kind = (str(v) for v in ends)
    relations.append((source, target, kind, origin))


def _note(entity: _Entity, name: str) -> Imported:
    summary = _one_line(entity.name)
    kind = _cut(_one_line(entity.entity_type), 60)
    if kind:
        summary = f"{_cut(summary, MAX_SUMMARY_CHARS - len(kind) - 3)} ({kind})"
    lines = []
    for text in entity.observations:
        first, *rest = _escape_refs(_storable(text)).strip().splitlines() or [""]
        lines.append(f"- {first}")
        lines.extend(f"  {more}" if more.strip() else "" for more in rest)
    refs: list[Ref] = []
    if entity.links:
        if lines:
            lines.append("")
        for kind_text, target in entity.links:
            shown = _one_line(target)
            lines.append(f"- {_escape_refs(_one_line(kind_text))} [[ref:{len(refs)}]]")
            refs.append(Ref(target=target, text=_escape_refs(shown)))
    return Imported(
        key=entity.name,
        summary=_cut(summary),
        body="\n".join(lines),
        refs=tuple(refs),
        aliases=(entity.name,),
        origin=f"{entity.origin} ({_cut(_one_line(entity.name), 60)})",
    )


def read(path: Path) -> Reading:
    """The entities of the graph at `path` (a file, or a folder holding one) as notes."""
    source = _source_file(path)
    name = source.name
    reading = Reading(kind=KIND, root=source)
    try:
        size = source.stat().st_size
        if size > MAX_SOURCE_BYTES:
            reading.problems.append(
                Problem(name, f"{size} bytes, over the {MAX_SOURCE_BYTES} a source file may be")
            )
            return reading
        data = source.read_bytes()
    except OSError as exc:
        reading.problems.append(Problem(name, f"cannot be read ({exc.strerror or exc})"))
        return reading
    records, problems = _records(data, name)
    reading.problems.extend(problems)
    entities: dict[str, _Entity] = {}
    relations: list[tuple[str, str, str, str]] = []
    for origin, record in records:
        if not isinstance(record, dict):
            reading.problems.append(Problem(origin, "not a JSON object"))
        elif record.get("type") == "entity":
            _read_entity(record, origin, entities, reading.problems)
        elif record.get("type") == "relation":
            _read_relation(record, origin, relations, reading.problems)
        else:
            reading.problems.append(Problem(origin, "neither an entity nor a relation"))
    seen: set[tuple[str, str, str]] = set()
    for source_name, target, kind, origin in relations:
        entity = entities.get(source_name)
        if entity is None:
            reading.problems.append(
                Problem(
                    origin, f"relation from unknown entity {_cut(_one_line(source_name), 80)!r}"
                )
            )
            continue
        if (source_name, target, kind) not in seen:
            seen.add((source_name, target, kind))
            entity.links.append((kind, target))
    reading.items.extend(_note(entity, name) for entity in entities.values())
    return reading
