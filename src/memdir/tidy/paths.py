"""Relative file paths a note names (for the `missing_file` finding): careful, not greedy.

A mention counts when it is unmistakably a path:

- a backticked span without spaces that holds a `/` (``src/memdir/cli/``) or ends in a
  common file extension (``pyproject.toml``);
- outside backticks, a word that starts with ``./`` or ``../``, or has a `/` and ends in
  a file extension (``src/a/b.py``).

Never: URLs and domains (``https://…``, ``github.com/x``), absolute and home paths
(``/etc/hosts``, ``~/x``), ``e.g.``, words joined by a slash (``and/or``, ``read/write``),
globs and placeholders (``*.py``, ``<id>.md``, ``$HOME/x``), dates and fractions, and
anything inside a fenced code block (commands there may create what they name). A line
reference (``a.py:12``, ``a.py#L3``) and trailing punctuation are dropped.
"""

from __future__ import annotations

import re

__all__ = ["path_mentions"]

#: Extensions a bare backticked name must end in to count as a file.
# fmt: off
FILE_EXTENSIONS = frozenset((
    "bash", "c", "cfg", "cjs", "conf", "cpp", "cs", "css", "csv", "go", "gradle", "h", "hpp",
    "htm", "html", "ini", "ipynb", "java", "jpg", "js", "json", "jsonl", "jsx", "kt", "lock",
    "log", "md", "mjs", "mk", "php", "png", "proto", "py", "pyi", "rb", "rs", "rst", "scss",
    "sh", "sql", "svg", "swift", "toml", "ts", "tsx", "txt", "vue", "xml", "yaml", "yml",
    "zsh",
))
# fmt: on

_BACKTICKED = re.compile(r"`([^`\s]+)`")
# Outside backticks only a word holding a slash can count: the others are not looked at.
_SLASHED = re.compile(r"[^\s()\[\]<>\"'`,;]*/[^\s()\[\]<>\"'`,;]*")
_PATH_CHARS = re.compile(r"[A-Za-z0-9_.\-/@+]+")
_LINE_REF = re.compile(r"(?::\d+(?::\d+)?|#L\d+(?:-L?\d+)?)$")
_DOMAIN = re.compile(r"^(?:[a-z0-9-]+\.)+[a-z]{2,}$", re.IGNORECASE)
_HAS_LETTER = re.compile(r"[A-Za-z]")
_TRAILING = ".,;:!?)"


def _extension(name: str) -> str | None:
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem.strip(".") or not ext:
        return None
    return ext.lower()


def _clean(token: str) -> str | None:
    """The path in `token` without a line reference or trailing punctuation, or None
    when it cannot be a relative path of the project."""
    token = token.rstrip(_TRAILING)
    token = _LINE_REF.sub("", token).rstrip(_TRAILING)
    if not token or "://" in token or token.startswith(("/", "~", "\\", "-")):
        return None
    if not _PATH_CHARS.fullmatch(token) or not _HAS_LETTER.search(token):
        return None
    if token in (".", "..", "./", "../") or "//" in token:
        return None
    head = token.split("/", 1)[0]
    domain = "/" in token and head not in (".", "..") and _DOMAIN.match(head)
    if domain and _extension(head) not in FILE_EXTENSIONS:
        return None  # github.com/x, docs.python.org/3/
    return token


def _counts(token: str, backticked: bool) -> bool:
    if token.startswith(("./", "../")):
        return True
    last = token.rstrip("/").rsplit("/", 1)[-1]
    ext = _extension(last)
    if backticked:
        return "/" in token or ext in FILE_EXTENSIONS
    return "/" in token.rstrip("/") and ext is not None and ext in FILE_EXTENSIONS


def path_mentions(body: str) -> list[str]:
    """The relative paths `body` names, in first-seen order, without repeats."""
    seen: dict[str, None] = {}
    in_code = False
    for line in body.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
            continue
        if in_code:
            continue
        if "`" not in line and "/" not in line:
            continue
        for match in _BACKTICKED.finditer(line):
            token = _clean(match.group(1))
            if token is not None and _counts(token, backticked=True):
                seen.setdefault(token, None)
        rest = _BACKTICKED.sub(" ", line) if "`" in line else line
        for match in _SLASHED.finditer(rest):
            token = _clean(match.group(0))
            if token is not None and _counts(token, backticked=False):
                seen.setdefault(token, None)
    return list(seen)
