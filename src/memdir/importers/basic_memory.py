"""The ``basic-memory`` reader: a basic-memory project folder, one note per Markdown file.

A note has YAML frontmatter ``title`` (default: the file name), ``type`` (default ``note``),
``permalink`` and ``tags`` (a list or a comma string); observations are lines
``- [category] content #tag (context)`` and relations ``- relation_type [[Target]] (context)``,
conventionally under ``## Observations`` and ``## Relations`` but found anywhere. The body is
kept as written; every ``[[Target]]`` (relations and inline links) becomes a ref naming the
target title or permalink (a ``[text](other.md)`` link, one naming that file), observations'
``#tags`` join the frontmatter tags, and each note answers to its title, permalink and file
path so other notes' links resolve. A type that is
one of memdir's four maps to it; another (``Person``, ``decision``) stays in the body as
``Type: …``; the default ``note`` is dropped. Times: frontmatter ``created``/``modified`` if
present, else the file's mtime for the update time.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from memdir.importers import markdown_files as md
from memdir.importers.base import Imported, Problem, Reading

__all__ = ["KIND", "detect", "read"]

KIND = "basic-memory"

_OBSERVATION = re.compile(r"^\s*-\s+\[[^\[\]\n]+\]\s+\S")
_RELATION = re.compile(r"^\s*-\s+[\w-]+\s+\[\[[^\[\]\n]+\]\]")


def detect(path: Path) -> bool:
    """True when a few of the folder's files carry a ``permalink`` in their frontmatter or
    ``- [category] …`` observations under ``## Observations`` (or relations under
    ``## Relations``)."""
    if not path.is_dir():
        return False
    for file in md.sample_markdown(path, limit=12):
        text = md.head(file)
        front, body, _ = md.split_frontmatter(text)
        if front is not None and re.search(r"(?m)^permalink\s*:", front):
            return True
        lines = body.split("\n")
        if "## Observations" in body and any(_OBSERVATION.match(x) for x in lines):
            return True
        if "## Relations" in body and any(_RELATION.match(x) for x in lines):
            return True
    return False


def read(path: Path) -> Reading:
    """Every note file of the project folder."""
    root = md.source_root(path, KIND)
    reading = Reading(kind=KIND, root=root)
    return md.read_each(reading, md.walk_markdown(root, reading.problems), _note)


def _note(source: md.SourceFile, problems: list[Problem]) -> Imported | None:
    parsed = md.parse_file(source, problems)
    if parsed is None:
        return None
    meta, body = parsed
    stem = PurePosixPath(source.key).stem
    title = md.frontmatter_str(meta, "title") or stem
    permalink = md.frontmatter_str(meta, "permalink")
    body = md.strip_title_heading(body, title.strip())
    raw_type = md.frontmatter_str(meta, "type")
    note_type, other_type = md.map_type(raw_type)
    if other_type is not None and other_type.lower() == "note":
        other_type = None
    tags = md.clean_tags([*md.frontmatter_list(meta, "tags"), *md.inline_tags(body)])
    refs = md.RefMaker()
    body = refs.file_links(refs.wikilinks(body), source.key).strip("\n")
    if other_type:
        body = f"{body}\n\nType: {other_type}".lstrip("\n")
    names = [title, permalink or "", stem, md.without_suffix(source.key)]
    if permalink:
        names.append(f"memory://{permalink}")
    aliases = tuple(dict.fromkeys(n.strip() for n in names if n and n.strip()))
    return Imported(
        key=source.key,
        summary=md.clean_summary(title, stem),
        body=body,
        type=note_type,
        tags=tags,
        created_at=md.stamp(meta, "created", "created_at", "date"),
        updated_at=md.stamp(meta, "modified", "updated", "updated_at") or source.mtime_ms,
        refs=tuple(refs.refs),
        aliases=aliases,
        origin=source.key,
    )
