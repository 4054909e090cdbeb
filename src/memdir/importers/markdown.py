"""The ``markdown`` reader: a plain folder of Markdown files or an Obsidian vault, one note per
file (the fallback kind, detected last).

- title: frontmatter ``title``, else the first ``# heading``, else the file name; a leading
  heading that repeats the title is dropped from the body;
- tags: frontmatter ``tags`` (a list or a comma string) and inline ``#tags`` of prose;
- ``[[Target]]``, ``[[Target|alias]]``, ``[[Target#heading]]`` become refs naming the target
  (answered by a file's name, its path without ``.md``, its title and frontmatter ``aliases``);
  ``![[embeds]]`` become their plain name; ``[text](other.md)`` links to another file of
  the folder become refs naming that file;
- times: frontmatter ``created``/``date`` and ``updated``/``modified``, else the file's mtime
  for the update time;
- skipped: ``.obsidian/``, ``.trash/``, hidden folders, symlinks, files other than ``.md``.

An empty file and a file whose frontmatter does not parse are problems (not imported).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from memdir.importers import markdown_files as md
from memdir.importers.base import Imported, Problem, Reading

__all__ = ["KIND", "detect", "read"]

KIND = "markdown"


def detect(path: Path) -> bool:
    """True when `path` is a Markdown file or a folder with one near its top."""
    if path.is_file():
        return path.suffix.lower() == ".md"
    return path.is_dir() and bool(md.sample_markdown(path, limit=1))


def read(path: Path) -> Reading:
    """Every Markdown file under `path` (or the one file `path` names) as an item."""
    if path.is_file() and path.suffix.lower() == ".md":
        root = path.parent
        files: list[Path] = [path]
        problems: list[Problem] = []
    else:
        root = md.source_root(path, KIND)
        problems = []
        files = list(md.walk_markdown(root, problems))
    return md.read_each(Reading(kind=KIND, root=root, problems=problems), files, note_from_file)


def note_from_file(source: md.SourceFile, problems: list[Problem]) -> Imported | None:
    """One file as an item (None with a Problem when it is empty or its frontmatter is bad)."""
    parsed = md.parse_file(source, problems)
    if parsed is None:
        return None
    meta, body = parsed
    stem = PurePosixPath(source.key).stem
    title = md.frontmatter_str(meta, "title") or md.first_heading(body) or stem
    summary = md.clean_summary(title, stem)
    body = md.strip_title_heading(body, title.strip())
    note_type, other_type = md.map_type(md.frontmatter_str(meta, "type"))
    tags = md.clean_tags(
        [
            *md.frontmatter_list(meta, "tags"),
            *md.frontmatter_list(meta, "tag"),
            *md.inline_tags(body),
        ]
    )
    refs = md.RefMaker()
    body = refs.file_links(refs.wikilinks(body), source.key).strip("\n")
    if other_type:
        body = f"{body}\n\nType: {other_type}".lstrip("\n")
    aliases = _unique(
        [title, stem, md.without_suffix(source.key), *md.frontmatter_list(meta, "aliases")]
    )
    return Imported(
        key=source.key,
        summary=summary,
        body=body,
        type=note_type,
        tags=tags,
        created_at=md.stamp(meta, "created", "date", "created_at"),
        updated_at=md.stamp(meta, "updated", "modified", "updated_at") or source.mtime_ms,
        refs=tuple(refs.refs),
        aliases=aliases,
        origin=source.key,
    )


def _unique(names: list[str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for name in names:
        text = name.strip()
        if text:
            seen.setdefault(text.casefold(), text)
    return tuple(seen.values())
