"""Markdown parsing the file-based readers share: safe file reading, a strict parser of the flat
YAML frontmatter these formats use, titles, ``#tags`` and ``[[wikilinks]]`` turned into refs.

Nothing here raises for bad content: `FrontmatterError` is the one exception, raised by
`parse_frontmatter` and caught by each reader, which reports it as a `Problem`.

The frontmatter parser is `memdir.core.flat_yaml` (note files read the same YAML).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from memdir.core import NoteType, normalize_tags
from memdir.core.flat_yaml import (
    FrontmatterError,
    Value,
    frontmatter_list,
    frontmatter_str,
    parse_frontmatter,
    split_frontmatter,
)
from memdir.core.frontmatter import one_line_summary
from memdir.core.tags import MAX_TAG_LENGTH
from memdir.errors import InvalidInput
from memdir.importers import base
from memdir.importers.base import Problem, Ref

__all__ = [
    "MD_LINK",
    "SKIPPED_DIRS",
    "FrontmatterError",
    "RefMaker",
    "SourceFile",
    "Value",
    "clean_summary",
    "clean_tags",
    "first_heading",
    "frontmatter_list",
    "frontmatter_str",
    "head",
    "head_frontmatter",
    "inline_tags",
    "link_href",
    "map_type",
    "parse_file",
    "parse_frontmatter",
    "prose_lines",
    "read_each",
    "read_source",
    "resolve_link",
    "sample_markdown",
    "source_root",
    "split_frontmatter",
    "stamp",
    "strip_title_heading",
    "walk_markdown",
    "without_suffix",
]

#: Folders never read: the vault's settings and bin, version control.
SKIPPED_DIRS = frozenset({".obsidian", ".trash", ".git", ".hg", ".svn", "node_modules"})

# -- files ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A text file of a source: its key (POSIX path relative to the root), text and mtime."""

    key: str
    path: Path
    text: str
    mtime_ms: int | None


def walk_markdown(
    root: Path, problems: list[Problem], *, suffixes: tuple[str, ...] = (".md",)
) -> Iterator[Path]:
    """Markdown files under `root` in sorted order: hidden folders, `SKIPPED_DIRS` and
    symlinks are not entered (a symlink leading outside the root is reported)."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            problems.append(Problem(_rel(root, Path(folder)) or ".", _os_reason(exc)))
            continue
        subdirs: list[Path] = []
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink():
                if not _inside(root, path):
                    problems.append(
                        Problem(
                            _rel(root, path), "a symlink leading outside the source; not followed"
                        )
                    )
                continue
            if entry.is_dir(follow_symlinks=False):
                if not entry.name.startswith(".") and entry.name not in SKIPPED_DIRS:
                    subdirs.append(path)
            elif entry.name.lower().endswith(suffixes) and not entry.name.startswith("."):
                yield path
        stack.extend(reversed(subdirs))


def read_each(
    reading: base.Reading,
    files: Iterable[Path],
    to_item: Callable[[SourceFile, list[Problem]], base.Imported | None],
) -> base.Reading:
    """`reading` with an item from each file `to_item` makes one of (every file read with
    `read_source`; what cannot be read or made an item is a Problem)."""
    for file in files:
        source = read_source(reading.root, file, reading.problems)
        if source is not None:
            item = to_item(source, reading.problems)
            if item is not None:
                reading.items.append(item)
    return reading


def read_source(root: Path, path: Path, problems: list[Problem]) -> SourceFile | None:
    """The file's text (BOM dropped, line endings LF), or None with a Problem saying why:
    too large, unreadable, not UTF-8 (or holding NUL), or a symlink (never followed)."""
    key = _rel(root, path)
    limit = base.MAX_SOURCE_BYTES
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            problems.append(Problem(key, "a symlink; not followed"))
            return None
        if not stat.S_ISREG(info.st_mode):
            problems.append(Problem(key, "not a regular file"))
            return None
        if info.st_size > limit:
            problems.append(
                Problem(key, f"{info.st_size} bytes, over the {limit}-byte limit; not read")
            )
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        problems.append(Problem(key, _os_reason(exc)))
        return None
    if len(data) > limit:
        problems.append(Problem(key, f"over the {limit}-byte limit; not read"))
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem(key, f"not UTF-8 text (byte {exc.start}); not read"))
        return None
    if "\x00" in text:
        problems.append(Problem(key, "contains NUL characters (not a text file); not read"))
        return None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    mtime = int(info.st_mtime * 1000) if info.st_mtime > 0 else None
    return SourceFile(key=key, path=path, text=text, mtime_ms=mtime)


def _rel(root: Path, path: Path) -> str:
    try:
        return PurePosixPath(path.relative_to(root).as_posix()).as_posix()
    except ValueError:
        return path.name


def _inside(root: Path, path: Path) -> bool:
    try:
        target = path.resolve(strict=True)
        target.relative_to(root.resolve())
    except (OSError, ValueError, RuntimeError):
        return False
    return True


def _os_reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "cannot be read: permission denied"
    return f"cannot be read: {exc.strerror or type(exc).__name__}"


# -- frontmatter ---------------------------------------------------------------------------

# -- text ----------------------------------------------------------------------------------

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_TAG = re.compile(r"(?:(?<=\s)|^)#([\w][\w/\-]*)", re.UNICODE)
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]*?)\]\]")
#: A Markdown link ``[text](href)`` or ``[text](<href with spaces>)`` (see `link_href`).
MD_LINK = re.compile(
    r"(?<!!)\[([^\]\n]*)\]\(\s*(?:<([^<>\n]+)>|([^)\s<>]+))(?:\s+\"[^\"\n]*\")?\s*\)"
)


def link_href(match: re.Match[str]) -> str:
    """The href of an `MD_LINK` match."""
    return match.group(2) or match.group(3) or ""


def prose_lines(text: str) -> Iterator[tuple[str, bool]]:
    """Each line with whether it is prose (False inside fenced code blocks and for fences)."""
    fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            yield line, False
        elif fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            yield line, False
        else:
            yield line, True


def first_heading(text: str, level: int = 1) -> str | None:
    """The text of the first ATX heading of `level` outside code blocks."""
    for line, prose in prose_lines(text):
        if not prose:
            continue
        match = _HEADING.match(line)
        if match and len(match.group(1)) == level and (match.group(2) or "").strip():
            return (match.group(2) or "").strip()
    return None


def strip_title_heading(body: str, title: str) -> str:
    """The body without a leading ``# title`` line that only repeats the title."""
    lines = body.split("\n")
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        match = _HEADING.match(line)
        if match and len(match.group(1)) == 1 and (match.group(2) or "").strip() == title:
            return "\n".join(lines[index + 1 :]).strip("\n")
        break
    return body.strip("\n")


def inline_tags(text: str) -> list[str]:
    """``#tags`` of prose: not in code, not a heading's marks, not a URL's fragment, and
    not only digits (``#123`` is an issue number)."""
    found: list[str] = []
    for line, prose in prose_lines(text):
        if not prose or _HEADING.match(line):
            continue
        for match in _TAG.finditer(_INLINE_CODE.sub(" ", line)):
            tag = match.group(1).rstrip("/-")
            if tag and not tag.replace("_", "").isdigit() and not tag.isdigit():
                found.append(tag)
    return found


def clean_tags(raw: Iterable[str]) -> tuple[str, ...]:
    """Tags memdir accepts (a leading ``#`` dropped); one it would refuse is left out."""
    out: list[str] = []
    for item in raw:
        text = item.strip().lstrip("#").strip()
        if not text or len(text) > MAX_TAG_LENGTH:
            continue
        try:
            out.extend(normalize_tags(text))
        except InvalidInput:
            continue
    return normalize_tags(out)


def clean_summary(*candidates: str | None) -> str:
    """The first candidate with text, made one line (control characters dropped) and cut to
    memdir's summary limit; "untitled" when none has text."""
    for candidate in candidates:
        text = one_line_summary(candidate or "")
        if text:
            return text
    return "untitled"


def map_type(raw: str | None) -> tuple[NoteType | None, str | None]:
    """(memdir type, or None; the source's own type when it is not one of memdir's, to keep
    in the body)."""
    if raw is None:
        return None, None
    try:
        return NoteType(raw.strip().lower()), None
    except ValueError:
        return None, raw.strip() or None


@dataclass(slots=True)
class RefMaker:
    """Turns links into ``[[ref:N]]`` markers, one `Ref` per distinct (target, text)."""

    refs: list[Ref] = field(default_factory=list)
    _seen: dict[tuple[str, str], int] = field(default_factory=dict)

    def marker(self, target: str, text: str) -> str:
        key = (target, text)
        index = self._seen.get(key)
        if index is None:
            index = len(self.refs)
            self.refs.append(Ref(target=target, text=text))
            self._seen[key] = index
        return f"[[ref:{index}]]"

    def wikilinks(self, body: str) -> str:
        """``[[Target]]``, ``[[Target|alias]]`` and ``[[Target#heading]]`` in prose become refs
        (target: the name before ``#``/``|``; text: the alias, else the name); ``![[embed]]``
        becomes its plain name; a ``[[ref:N]]`` already in code is kept as text through a ref
        that names nothing, so the importer cannot misread it."""
        out: list[str] = []
        for line, prose in prose_lines(body):
            if not prose:
                out.append(base.REF_PATTERN.sub(lambda m: self.marker("", m.group(0)), line))
                continue
            out.append(self._line(line))
        return "\n".join(out)

    def file_links(self, body: str, key: str) -> str:
        """``[text](other.md)`` links in prose to another file of the source become refs
        naming that file's key (relative to the linking file; URLs and links leaving the root
        stay as they are)."""
        folder = PurePosixPath(key).parent

        def one(match: re.Match[str]) -> str:
            target = resolve_link(folder, link_href(match))
            if target is None:
                return match.group(0)
            return self.marker(target, match.group(1).strip() or target)

        out: list[str] = []
        for line, prose in prose_lines(body):
            out.append(MD_LINK.sub(one, line) if prose and "](" in line else line)
        return "\n".join(out)

    def _line(self, line: str) -> str:
        pieces: list[str] = []
        last = 0
        for code in _INLINE_CODE.finditer(line):
            pieces.append(_WIKILINK.sub(self._one, line[last : code.start()]))
            pieces.append(
                base.REF_PATTERN.sub(lambda m: self.marker("", m.group(0)), code.group(0))
            )
            last = code.end()
        pieces.append(_WIKILINK.sub(self._one, line[last:]))
        return "".join(pieces)

    def _one(self, match: re.Match[str]) -> str:
        if base.REF_PATTERN.fullmatch(match.group(0)):
            return self.marker("", match.group(0))
        inner = match.group(2)
        target, _, alias = inner.partition("|")
        name = target.split("#", 1)[0].strip()
        shown = alias.strip() or name or target.strip()
        if match.group(1):
            return shown or match.group(0)
        if not name:
            return shown or match.group(0)
        if name.lower().endswith(".md"):
            name = name[:-3]
        return self.marker(name, shown)


def resolve_link(folder: PurePosixPath, href: str) -> str | None:
    """The key a relative ``.md`` link names (percent-escapes decoded), or None for an URL,
    an absolute path or a path leaving the root."""
    href = unquote(href.split("#", 1)[0])
    if not href.lower().endswith(".md") or ":" in href or href.startswith("/"):
        return None
    parts: list[str] = []
    for part in (folder / href).parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) if parts else None


# -- shared reader steps -------------------------------------------------------------------


def parse_file(source: SourceFile, problems: list[Problem]) -> tuple[dict[str, Value], str] | None:
    """(frontmatter, body) of a read file, or None with a Problem: an empty file (nothing to
    import) or frontmatter that does not parse (the file is skipped, not guessed at)."""
    if not source.text.strip():
        problems.append(Problem(source.key, "empty file; nothing to import"))
        return None
    front, body, _ = split_frontmatter(source.text)
    if front is None:
        return {}, body
    try:
        return parse_frontmatter(front), body
    except FrontmatterError as exc:
        problems.append(Problem(source.key, f"{exc}; file not imported"))
        return None


def stamp(meta: dict[str, Value], *keys: str) -> int | None:
    """Unix ms of the first of `keys` that holds a date or time."""
    for key in keys:
        value = meta.get(key)
        if isinstance(value, str | int | float):
            ms = base.iso_ms(value)
            if ms is not None:
                return ms
    return None


def source_root(path: Path, kind: str) -> Path:
    """`path` as a source folder; `InvalidInput` when it is not a folder at all."""
    root = path.expanduser()
    if not root.is_dir():
        raise InvalidInput(f"{kind}: {path} is not a folder")
    return root


def sample_markdown(root: Path, limit: int = 20, max_entries: int = 400) -> list[Path]:
    """Up to `limit` Markdown files under `root`, looking at no more than `max_entries`
    directory entries (for detection, which must stay cheap)."""
    found: list[Path] = []
    seen = 0
    stack = [root]
    while stack and len(found) < limit and seen < max_entries:
        folder = stack.pop(0)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if entry.name.startswith(".") or entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIRS:
                    stack.append(Path(entry.path))
            elif entry.name.lower().endswith(".md"):
                found.append(Path(entry.path))
                if len(found) >= limit:
                    break
    return found


def head(path: Path, size: int = 8192) -> str:
    """The first `size` bytes of a file as text (BOM and CR dropped); "" when unreadable."""
    try:
        if path.is_symlink():
            return ""
        with path.open("rb") as handle:
            data = handle.read(size)
    except OSError:
        return ""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def head_frontmatter(path: Path) -> dict[str, Value]:
    """The frontmatter of a file's first bytes ({} when it has none or it does not parse)."""
    front, _, _ = split_frontmatter(head(path))
    if front is None:
        return {}
    try:
        return parse_frontmatter(front)
    except FrontmatterError:
        return {}


def without_suffix(key: str) -> str:
    return key[:-3] if key.lower().endswith(".md") else key
