"""The ``claude-code`` reader: Claude Code's auto-memory folder
(``~/.claude/projects/<project>/memory/``), one fact per Markdown file.

A fact file has YAML frontmatter ``name``, ``description`` and ``type`` (``user``,
``feedback``, ``project``, ``reference``: memdir's four; newer versions nest it as
``metadata: {type: …}``) and a body that may link other facts as ``[[name]]``. The summary is
"name: description" as Claude Code's own index lines show a fact (either alone when the
other is missing or repeats it), so both stay searchable; ``name`` and the file name are
aliases, so links between facts resolve. ``MEMORY.md`` is the index loaded into every session
(links such as ``- [Title](file.md) — hook``): it is not a note, but lines of it that are not
links to files (facts written inline) become one note, "MEMORY.md notes". An index link to a
missing file is reported. Times: the file's mtime (the format keeps none).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from memdir.core.frontmatter import titled_summary
from memdir.importers import markdown_files as md
from memdir.importers.base import Imported, Problem, Reading

__all__ = ["KIND", "detect", "read"]

KIND = "claude-code"
INDEX = "MEMORY.md"

_TYPES = frozenset({"user", "feedback", "project", "reference"})
_INDEX_LINK = md.MD_LINK


def detect(path: Path) -> bool:
    """True for a memory folder (or a project folder holding ``memory/``) whose ``MEMORY.md``
    links its files or whose files carry ``name``/``description``/``type`` frontmatter."""
    root = _memory_root(path)
    if root is None or (root / "memory_summary.md").exists():
        return False
    for file in md.sample_markdown(root, limit=12):
        if file.name != INDEX and _is_fact(md.head_frontmatter(file)):
            return True
    index = root / INDEX
    if index.is_file():
        for match in _INDEX_LINK.finditer(md.head(index)):
            target = md.resolve_link(PurePosixPath(), md.link_href(match))
            if target is not None and (root / target).is_file():
                return True
    return False


def read(path: Path) -> Reading:
    """Every fact file under the memory folder, plus MEMORY.md's inline lines."""
    root = _memory_root(path) or md.source_root(path, KIND)
    reading = Reading(kind=KIND, root=root)
    indexes: list[Path] = []
    for file in md.walk_markdown(root, reading.problems):
        if file.name == INDEX:
            indexes.append(file)  # read after the facts, whose files its links name
            continue
        source = md.read_source(root, file, reading.problems)
        if source is not None:
            item = _fact(source, reading.problems)
            if item is not None:
                reading.items.append(item)
    for path in indexes:
        source = md.read_source(root, path, reading.problems)
        if source is not None:
            item = _index_notes(source, root, reading.problems)
            if item is not None:
                reading.items.append(item)
    return reading


def _memory_root(path: Path) -> Path | None:
    path = path.expanduser()
    if not path.is_dir():
        return None
    inner = path / "memory"
    if path.name != "memory" and inner.is_dir() and not inner.is_symlink():
        return inner
    return path


def _is_fact(meta: dict[str, md.Value]) -> bool:
    kind = _type_of(meta)
    return bool(
        md.frontmatter_str(meta, "name")
        and md.frontmatter_str(meta, "description")
        and kind is not None
        and kind.lower() in _TYPES
    )


def _type_of(meta: dict[str, md.Value]) -> str | None:
    kind = md.frontmatter_str(meta, "type")
    nested = meta.get("metadata")
    if kind is None and isinstance(nested, dict):
        value = nested.get("type")
        kind = value.strip() if isinstance(value, str) and value.strip() else None
    return kind


def _fact(source: md.SourceFile, problems: list[Problem]) -> Imported | None:
    parsed = md.parse_file(source, problems)
    if parsed is None:
        return None
    meta, body = parsed
    stem = PurePosixPath(source.key).stem
    name = md.frontmatter_str(meta, "name")
    heading = md.first_heading(body)
    description = md.frontmatter_str(meta, "description")
    summary = md.clean_summary(titled_summary(name, description), heading, stem)
    if heading:
        body = md.strip_title_heading(body, heading) if heading in (name, summary) else body
    note_type, other_type = md.map_type(_type_of(meta))
    refs = md.RefMaker()
    body = refs.wikilinks(body).strip("\n")
    body = refs.file_links(body, source.key)
    if other_type:
        body = f"{body}\n\nType: {other_type}".lstrip("\n")
    aliases = tuple(dict.fromkeys(a for a in (name, stem, md.without_suffix(source.key)) if a))
    return Imported(
        key=source.key,
        summary=summary,
        body=body,
        type=note_type,
        tags=md.clean_tags(md.frontmatter_list(meta, "tags")),
        updated_at=source.mtime_ms,
        refs=tuple(refs.refs),
        aliases=aliases,
        origin=source.key,
    )


def _index_notes(source: md.SourceFile, root: Path, problems: list[Problem]) -> Imported | None:
    """MEMORY.md's lines that are not links to memory files, as one note (None when all are).
    An index in a subfolder (a folder of several projects' memory) speaks for that folder."""
    folder = PurePosixPath(source.key).parent
    kept: list[str] = []
    for line, prose in md.prose_lines(source.text):
        links = [
            md.link_href(m)
            for m in _INDEX_LINK.finditer(line)
            if md.resolve_link(folder, md.link_href(m))
        ]
        if prose and links:
            for target in links:
                resolved = md.resolve_link(folder, target)
                if resolved and not (root / resolved).exists():
                    problems.append(Problem(source.key, f"links to {target}, which does not exist"))
            continue
        kept.append(line)
    lines = _drop_bare_headings(kept)
    text = "\n".join(lines).strip("\n")
    if not text.strip():
        return None
    refs = md.RefMaker()
    text = refs.wikilinks(text)
    where = folder.as_posix()
    summary = "MEMORY.md notes" if where == "." else md.clean_summary(f"MEMORY.md notes ({where})")
    return Imported(
        key=source.key,
        summary=summary,
        body=text,
        updated_at=source.mtime_ms,
        refs=tuple(refs.refs),
        origin=source.key,
    )


def _drop_bare_headings(lines: list[str]) -> list[str]:
    """Headings (and the index's own title) with nothing but blank lines under them go."""
    out: list[str] = []
    pending: list[str] = []
    for line in lines:
        if re.match(r"^ {0,3}#{1,6}(\s|$)", line):
            pending = [line]
        elif not line.strip():
            (pending if pending else out).append(line)
        else:
            out.extend(pending)
            pending = []
            out.append(line)
    return out
