"""The ``codex`` reader: OpenAI Codex's generated memories (``~/.codex/memories/``, or
``$CODEX_HOME/memories``; the Codex home itself is accepted too).

The folder, as Codex's memory pipeline writes it (a git repository it manages):

- ``MEMORY.md``: the handbook, blocks each opening ``# Task Group: <name>`` with ``scope:``,
  ``applies_to:``, ``## Task <n>`` sections (``### rollout_summary_files`` lines carrying
  ``updated_at=<time>``, ``### keywords``) and ``## User preferences`` / ``## Reusable
  knowledge`` / ``## Failures and how to do differently`` — one note per block;
- ``memory_summary.md``: first line ``v1``, then ``## User Profile``, ``## User preferences``,
  ``## General Tips`` (one note each; the first two are type ``user``) and ``## What's in
  Memory`` (an index of MEMORY.md, not imported);
- ``rollout_summaries/<time>-<thread>[-slug].md`` (``trace_summaries/`` in some versions):
  one session's recap, header lines
  ``thread_id:``, ``updated_at:``, ``rollout_path:``, ``cwd:``, ``git_branch:``, a blank line,
  then ``# <one-sentence summary>`` and task sections — one note each, timed by ``updated_at``;
- ``skills/<name>/SKILL.md``: a reusable procedure with ``name``/``description`` frontmatter
  — one note each (its scripts and templates are not read);
- ``extensions/ad_hoc/notes/*.md``: notes a person wrote for Codex to consolidate — one each;
- ``extensions/<name>/resources/*.md``: an extension's durable resources (the source
  material Codex consolidates, kept until their source removes them) — one note each,
  tagged with the extension's name.

A ``# Task Group:`` line always starts a block, even after a code fence a block left open
(the handbook's blocks must each start with one): an unclosed fence never swallows the
groups after it. Not read, each listed with its reason: ``raw_memories.md`` (a temporary
merge of the same rollouts), the phase-2 diff, extension instructions and manifests, a
skill's other files, and any Markdown file Codex's writer does not make. Mentions of
``rollout_summaries/….md`` and ``skills/…/SKILL.md`` in MEMORY.md and the summary become
refs to those notes. The older layout (``memories/<bucket>/memory/`` with
``memory_summary.md``, ``MEMORY.md``, ``consolidated.md``) is read the same way, file by
file, keys keeping the bucket path.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path, PurePosixPath

from memdir.core import NoteType
from memdir.importers import markdown_files as md
from memdir.importers.base import Imported, Problem, Reading, iso_ms

__all__ = ["KIND", "detect", "read"]

KIND = "codex"

_HANDBOOKS = frozenset({"MEMORY.md", "consolidated.md"})
_EXTENSION_ROOTS = frozenset({"extensions", "memories_extensions"})
_GROUP = re.compile(r"^# Task Group:")
_SUMMARY = "memory_summary.md"
#: Per-session recaps: ``rollout_summaries/`` (``trace_summaries/`` in some Codex versions).
_ROLLOUT_FOLDERS = frozenset({"rollout_summaries", "trace_summaries"})
_USER_SECTIONS = frozenset({"user profile", "user preferences"})
_INDEX_SECTIONS = frozenset({"what's in memory", "what’s in memory"})
_PATH_MENTION = re.compile(
    r"(?<![\w/.\-])((?:rollout_summaries/[^\s<>()\[\],`'\"]+?\.md)|(?:skills/[\w.\-]+/SKILL\.md))"
)
_UPDATED = re.compile(r"updated_at=([0-9][0-9T:.\-+Z]*)")
_HEADER = re.compile(r"^([a-z_]+):\s?(.*)$")


def detect(path: Path) -> bool:
    """True for a Codex memories folder: ``memory_summary.md`` starting ``v1``, a
    ``rollout_summaries/`` folder, ``raw_memories.md``, a MEMORY.md of ``# Task Group:``
    blocks, or the older ``<bucket>/memory/`` layout."""
    root = _codex_root(path)
    if root is None:
        return False
    if _looks_like_memories(root):
        return True
    try:
        buckets = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())[:50]
    except OSError:
        return False
    return any(_looks_like_memories(bucket / "memory") for bucket in buckets)


def read(path: Path) -> Reading:
    """Every handbook block, summary section, rollout summary, skill and ad-hoc note."""
    root = _codex_root(path) or md.source_root(path, KIND)
    reading = Reading(kind=KIND, root=root)
    for file in md.walk_markdown(root, reading.problems):
        key = PurePosixPath(file.relative_to(root).as_posix())
        role = _role(key)
        if role is None:
            reading.problems.append(Problem(key.as_posix(), _unread_reason(key)))
            continue
        source = md.read_source(root, file, reading.problems)
        if source is None:
            continue
        if role == "handbook":
            reading.items.extend(_handbook(source, reading.problems))
        elif role == "summary":
            reading.items.extend(_summary(source, reading.problems))
        elif role == "rollout":
            item = _rollout(source, reading.problems)
            if item is not None:
                reading.items.append(item)
        else:
            item = _document(source, reading.problems, skill=role == "skill")
            if item is not None and role.startswith("resource:"):
                tags = md.clean_tags([role.removeprefix("resource:"), *item.tags])
                item = dataclasses.replace(item, tags=tags)
            if item is not None:
                reading.items.append(item)
    return reading


def _codex_root(path: Path) -> Path | None:
    path = path.expanduser()
    if not path.is_dir():
        return None
    inner = path / "memories"
    if inner.is_dir() and not inner.is_symlink() and not (path / _SUMMARY).exists():
        return inner
    return path


def _looks_like_memories(folder: Path) -> bool:
    if not folder.is_dir():
        return False
    summary = folder / _SUMMARY
    if summary.is_file() and md.head(summary, 64).split("\n", 1)[0].strip() == "v1":
        return True
    if (folder / "rollout_summaries").is_dir() or (folder / "raw_memories.md").is_file():
        return True
    if (folder / "raw_memories").is_dir() and (folder / _SUMMARY).exists():
        return True
    handbook = folder / "MEMORY.md"
    return handbook.is_file() and "# Task Group:" in md.head(handbook)


def _role(key: PurePosixPath) -> str | None:
    parts = key.parts
    if key.name in _HANDBOOKS:
        return "handbook"
    if key.name == _SUMMARY:
        return "summary"
    if len(parts) >= 2 and parts[-2] in _ROLLOUT_FOLDERS:
        return "rollout"
    if key.name == "SKILL.md" and len(parts) >= 3 and parts[-3] == "skills":
        return "skill"
    if len(parts) >= 4 and parts[-4] in _EXTENSION_ROOTS:
        if parts[-3:-1] == ("ad_hoc", "notes"):
            return "note"
        if parts[-2] == "resources":
            return f"resource:{parts[-3]}"
    return None


def _unread_reason(key: PurePosixPath) -> str:
    """Why a Markdown file of a Codex memories folder is not imported."""
    parts = key.parts
    if key.name == "raw_memories.md" or "raw_memories" in parts[:-1]:
        return (
            "Codex's raw per-session memories, the input its consolidation merges into the "
            "handbook (imported from there); not imported"
        )
    if "skills" in parts[:-2]:
        skill = parts[parts.index("skills") + 1]
        return f"a file of skill {skill} (its SKILL.md is the imported note); not imported"
    roots = [n for n, part in enumerate(parts[:-2]) if part in _EXTENSION_ROOTS]
    if roots:
        extension = parts[roots[0] + 1]
        return (
            f"a file of the {extension} extension that is neither a note (ad_hoc/notes/*.md) "
            "nor a resource (resources/*.md), such as its instructions; not imported"
        )
    if key.stem.startswith("phase") and key.stem.endswith("diff"):
        return "Codex's record of its last consolidation's changes, not a memory; not imported"
    return "not a file Codex's memory writer makes; not imported"


def _sections(text: str, level: int) -> list[tuple[str | None, list[str]]]:
    """The text split at headings of `level` (outside code): (heading or None, lines)."""
    mark = "#" * level + " "
    out: list[tuple[str | None, list[str]]] = [(None, [])]
    for line, prose in md.prose_lines(text):
        if prose and line.startswith(mark) and line[len(mark) :].strip():
            out.append((line[len(mark) :].strip().rstrip("#").strip(), []))
        else:
            out[-1][1].append(line)
    return out


def _blocks(text: str) -> list[tuple[str | None, list[str]]]:
    """The handbook's blocks: split at every ``# Task Group:`` line (whatever fence an
    earlier block left open), each block then at its own top-level headings."""
    chunks: list[list[str]] = [[]]
    for line in text.split("\n"):
        if _GROUP.match(line) and chunks[-1]:
            chunks.append([])
        chunks[-1].append(line)
    out: list[tuple[str | None, list[str]]] = []
    for chunk in chunks:
        for heading, lines in _sections("\n".join(chunk), 1):
            if heading is None and out and not "\n".join(lines).strip():
                continue
            out.append((heading, lines))
    return out


def _unique_key(base_key: str, name: str, taken: set[str]) -> str:
    key = f"{base_key}#{name}"
    number = 2
    while key in taken:
        key = f"{base_key}#{name} ({number})"
        number += 1
    taken.add(key)
    return key


def _path_refs(body: str, folder: PurePosixPath, refs: md.RefMaker) -> str:
    out: list[str] = []
    for line, prose in md.prose_lines(body):
        if prose:
            line = _PATH_MENTION.sub(
                lambda m: refs.marker((folder / m.group(1)).as_posix(), m.group(1)), line
            )
        out.append(line)
    return "\n".join(out)


def _handbook(source: md.SourceFile, problems: list[Problem]) -> list[Imported]:
    if not source.text.strip():
        problems.append(Problem(source.key, "empty file; nothing to import"))
        return []
    folder = PurePosixPath(source.key).parent
    taken: set[str] = set()
    items: list[Imported] = []
    for heading, lines in _blocks(source.text):
        text = "\n".join(lines).strip("\n")
        if heading is None:
            if not text.strip():
                continue
            heading = "Codex memory handbook"
        title = re.sub(r"^Task Group:\s*", "", heading).strip() or heading
        refs = md.RefMaker()
        body = _path_refs(refs.wikilinks(text), folder, refs)
        times = [t for t in (iso_ms(x) for x in _UPDATED.findall(text)) if t is not None]
        items.append(
            Imported(
                key=_unique_key(source.key, title, taken),
                summary=md.clean_summary(title),
                body=body,
                created_at=min(times) if times else None,
                updated_at=max(times) if times else source.mtime_ms,
                refs=tuple(refs.refs),
                aliases=(title,),
                origin=source.key,
            )
        )
    return items


def _summary(source: md.SourceFile, problems: list[Problem]) -> list[Imported]:
    text = source.text
    if text.split("\n", 1)[0].strip() == "v1":
        text = text.split("\n", 1)[1] if "\n" in text else ""
    if not text.strip():
        problems.append(Problem(source.key, "empty file; nothing to import"))
        return []
    folder = PurePosixPath(source.key).parent
    taken: set[str] = set()
    items: list[Imported] = []
    for heading, lines in _sections(text, 2):
        body_text = "\n".join(lines).strip("\n")
        if heading is None or heading.casefold() in _INDEX_SECTIONS or not body_text.strip():
            continue
        refs = md.RefMaker()
        body = _path_refs(refs.wikilinks(body_text), folder, refs)
        items.append(
            Imported(
                key=_unique_key(source.key, heading, taken),
                summary=md.clean_summary(f"{heading} (Codex memory summary)"),
                body=body,
                type=NoteType.USER if heading.casefold() in _USER_SECTIONS else None,
                updated_at=source.mtime_ms,
                refs=tuple(refs.refs),
                origin=source.key,
            )
        )
    return items


def _rollout(source: md.SourceFile, problems: list[Problem]) -> Imported | None:
    if not source.text.strip():
        problems.append(Problem(source.key, "empty file; nothing to import"))
        return None
    lines = source.text.split("\n")
    header: dict[str, str] = {}
    index = 0
    while index < len(lines) and (match := _HEADER.match(lines[index])):
        header[match.group(1)] = match.group(2).strip()
        index += 1
    body = "\n".join(lines[index:]).strip("\n")
    stem = PurePosixPath(source.key).stem
    thread = header.get("thread_id", "")
    heading = md.first_heading(body)
    first_line = next((x.strip() for x in body.split("\n") if x.strip()), "")
    summary = md.clean_summary(heading, first_line, f"Codex session {thread or stem}")
    if heading:
        body = md.strip_title_heading(body, heading)
    refs = md.RefMaker()
    body = refs.wikilinks(body)
    where = [
        f"thread {thread}" if thread else "",
        f"cwd {header['cwd']}" if "cwd" in header else "",
    ]
    if header.get("git_branch"):
        where.append(f"branch {header['git_branch']}")
    context = ", ".join(x for x in where if x)
    if context:
        body = f"{body}\n\nCodex session: {context}".lstrip("\n")
    when = iso_ms(header.get("updated_at"))
    return Imported(
        key=source.key,
        summary=summary,
        body=body,
        created_at=when,
        updated_at=when or source.mtime_ms,
        refs=tuple(refs.refs),
        aliases=tuple(x for x in (stem, thread) if x),
        origin=source.key,
    )


def _document(source: md.SourceFile, problems: list[Problem], *, skill: bool) -> Imported | None:
    """A skill's SKILL.md or an ad-hoc note: frontmatter (if any), title, body."""
    parsed = md.parse_file(source, problems)
    if parsed is None:
        return None
    meta, body = parsed
    key = PurePosixPath(source.key)
    stem = key.parent.name if skill else key.stem
    name = md.frontmatter_str(meta, "name", "title")
    description = md.frontmatter_str(meta, "description")
    heading = md.first_heading(body)
    first_line = next((x.strip() for x in body.split("\n") if x.strip()), "")
    if skill:
        label = name or stem
        summary = md.clean_summary(f"Skill {label}: {description}" if description else None, label)
    else:
        summary = md.clean_summary(name, heading, first_line, stem)
    if heading and heading in (name, summary):
        body = md.strip_title_heading(body, heading)
    refs = md.RefMaker()
    body = refs.wikilinks(body).strip("\n")
    return Imported(
        key=source.key,
        summary=summary,
        body=body,
        tags=md.clean_tags(md.frontmatter_list(meta, "tags")),
        updated_at=source.mtime_ms,
        refs=tuple(refs.refs),
        aliases=tuple(dict.fromkeys(x for x in (name, stem) if x)),
        origin=source.key,
    )
