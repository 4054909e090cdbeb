"""Values that config files put below their key: YAML blocks, INI continuations, open quotes.

`password:` with nothing after it, then an indented `Vq83Lm02Xz` (or a `|` block, a TOML
`\"\"\"` string, a .env value whose quote opens at the end of the line), and plain values
nested under a secret-named parent or section (`secrets:` / `[credentials]`), rows of host,
a well-known account and its password with no header naming the column, and the secret
column of a Markdown, tab- or semicolon-separated table whose header names it in any of
the lexicon's languages ("| Пароль |", "Compte;Utilisateur;MDP").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from .hit import PRIO_LABEL, Hit
from .lexicon import LABEL_RE, PASSWORD_KINDS, USER, label_for
from .names import classify_key
from .values import looks_random, prose_password, strong_password, token_like

__all__ = ["structured_hits"]


def _set(words: str) -> frozenset[str]:
    """A set from whitespace-separated words; keeps long vocabularies readable."""
    return frozenset(words.split())


# A key line whose value is empty, a block indicator or an opening quote.
_OPEN_RE = re.compile(r"[:=][ \t]*(?P<block>[|>][-+]?|\"\"\"|'''|\"|')?[ \t]*(?:#[^\n]*)?\r?\n")
_KEY_RE = re.compile(
    r"(?P<indent>[ \t]*)(?:-[ \t]+)?[\"']?(?P<key>[^\s:=\"'#\[\]{}]{1,64})[\"']?[ \t]*"
)
_SECTION_RE = re.compile(r"^\[{1,2}(?P<name>[^\]\n]{1,64})\]{1,2}[ \t]*$", re.MULTILINE)
_CHILD_RE = re.compile(
    r"(?P<indent>[ \t]*)(?:-[ \t]+)?[\"']?(?P<key>[^\s:=\"'#\[\]{}]{1,64})[\"']?[ \t]*[:=][ \t]*"
    r"(?P<value>[^\n#]*?)[ \t]*(?:#[^\n]*)?$"
)
_LIST_ITEM_RE = re.compile(r"[ \t]*-[ \t]+(?P<value>[^\n#]*?)[ \t]*$")
_PARENTS = _set(
    """
    secrets secret credentials creds passwords tokens api_keys apikeys api-keys auth
    passwörter zugangsdaten
    """
)
_PASSWORD_PARENTS = _set(
    """
    passwords passwörter
    """
)
# Children of a secret-named parent that describe the secret rather than hold it.
_DESCRIPTIVE = _set(
    """
    user username name login email mail host hostname url uri endpoint port region type kind
    path file source provider id client_id account enabled required description comment
    length min max format env environment mount store backend engine scope scopes algorithm
    """
)
_TABLE_HEAD_RE = re.compile(
    r"^(?P<head>[ \t]*\|[^\n]{1,400})\r?\n[ \t]*\|?[ \t]*:?-{3,}[-:| \t]*\r?\n", re.MULTILINE
)
# A row of a credentials list with no label column: host, a well-known account name, then
# the password, as fields apart by two spaces, a tab or a bar ("db01   root   Xk29!v…").
_ACCOUNTS = _set(
    """
    root admin administrator postgres sa ubuntu ec2-user pi deploy guest oracle sysadmin
    superuser
    """
)
# Spelled out in three cases: an IGNORECASE alternation scans twice as slowly.
_ACCOUNT_RE = re.compile(
    r"(?<![\w@./-])(?:"
    + "|".join(
        sorted({v for w in _ACCOUNTS for v in (w, w.capitalize(), w.upper())}, key=len)[::-1]
    )
    + r")(?=[ \t]{2}|\t|[ \t]*\|)"
)
_ROW_VALUE_RE = re.compile(
    r"(?:[ \t]{2,}|\t|[ \t]*\|[ \t]*)`?(?P<value>[^\s|`]{6,128})`?[ \t]*(?:\||#|\r?\n|$)"
)
_DATE_IN_RE = re.compile(r"(?:19|20)\d\d[-./]\d\d?[-./]\d\d?|\d\d?:\d\d")
_SINGLE_SPACE_RE = re.compile(r"(?<![ \t]) (?![ \t])")
_MAX_ROW_HEAD = 120
_ROW_FIELD_SEP_RE = re.compile(r"[ \t]{2,}|\t|\|")
_MAX_CHILDREN = 40
_MAX_HEAD = 96


def _key_kind(key: str) -> tuple[str, bool] | None:
    """(kind, is_password) when the key names a secret, by config rules or the lexicon."""
    found = classify_key(key)
    if found is not None:
        return found.kind, found.is_password
    m = LABEL_RE.search(key.lower())
    if m is None or m.start() > 0 or len(key) - m.end() > 3:
        return None  # the key is a label ("Пароль", "MDP", "密码"), not a word around one
    label = label_for(m.group())
    if (label.weak and m.end() < len(key)) or label.kind == USER:
        return None
    kind = label.kind
    return kind, kind in PASSWORD_KINDS


def _secret_value(value: str, is_password: bool) -> bool:
    v = value.strip().strip("\"'")
    if not v:
        return False
    return prose_password(v) or looks_random(v) if is_password else token_like(v)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _lines_from(text: str, pos: int) -> Iterator[tuple[int, str]]:
    n = len(text)
    while pos < n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl
        yield pos, text[pos:end].rstrip("\r")
        pos = end + 1


def _children(
    text: str, pos: int, parent_indent: int | None, passwords: bool = False
) -> Iterator[Hit]:
    """Plain values under a secret-named parent (indented) or section (until the next one)."""
    # Under "passwords:" every item is one; under "secrets:" or "auth:" it must look it.
    judge = prose_password if passwords else strong_password
    child_indent: int | None = None
    for count, (start, line) in enumerate(_lines_from(text, pos)):
        if count >= _MAX_CHILDREN:
            return
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        ind = _indent(line)
        if parent_indent is None:
            if line.lstrip().startswith("["):
                return
        elif ind <= parent_indent:
            return
        if child_indent is None:
            child_indent = ind
        if ind != child_indent:
            continue
        m = _CHILD_RE.fullmatch(line)
        if m is None:
            item = _LIST_ITEM_RE.fullmatch(line)
            if item is not None and judge(item.group("value").strip("\"'")):
                value = item.group("value")
                yield Hit(
                    start + item.start("value"), start + item.end("value"), "password", PRIO_LABEL
                )
            continue
        key = m.group("key").lower()
        if key in _DESCRIPTIVE or classify_key(key) is not None:
            continue  # the key itself is judged on its line by the assignment rules
        value = m.group("value").strip("\"'")
        if value and (strong_password(value) or looks_random(value)):
            vstart = start + m.start("value") + m.group("value").find(value)
            yield Hit(vstart, vstart + len(value), "secret", PRIO_LABEL)


def _below(text: str, pos: int, indent: int, block: str | None) -> tuple[int, str] | None:
    """The first non-blank line after `pos` if it continues the key's value."""
    for count, (start, line) in enumerate(_lines_from(text, pos)):
        if count >= 3:
            return None
        if not line.strip():
            continue
        if block in ('"""', "'''", '"', "'"):
            return start, line
        return (start, line) if _indent(line) > indent else None
    return None


def _next_line_hits(text: str) -> Iterator[Hit]:
    for m in _OPEN_RE.finditer(text):
        line_start = text.rfind("\n", max(0, m.start() - _MAX_HEAD), m.start()) + 1
        head = _KEY_RE.fullmatch(text, line_start, m.start())
        if head is None:
            continue
        key = head.group("key")
        indent = len(head.group("indent"))
        block = m.group("block")
        if block is None and key.lower() in _PARENTS:
            yield from _children(text, m.end(), indent, key.lower() in _PASSWORD_PARENTS)
            continue
        found = _key_kind(key)
        if found is None:
            continue
        kind, is_password = found
        below = _below(text, m.end(), indent, block)
        if below is None:
            continue
        start, line = below
        content = line.strip()
        if block in ('"""', "'''", '"', "'"):
            content = content.split(block, 1)[0].strip()
        elif content.startswith("- "):
            content = content[2:].strip()
        elif _CHILD_RE.fullmatch(line) is not None:
            yield from _children(text, m.end(), indent)
            continue
        content = content.strip("\"'")
        if _secret_value(content, is_password):
            vstart = text.find(content, start)
            yield Hit(vstart, vstart + len(content), kind, PRIO_LABEL)


def _section_hits(text: str) -> Iterator[Hit]:
    for m in _SECTION_RE.finditer(text):
        last = re.split(r"[.\s]", m.group("name").strip().strip("\"'").lower())[-1]
        if last in _PARENTS:
            yield from _children(text, m.end() + 1, None)


def _cells(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the cells of a table row "| a | b |" in text[start:end]."""
    bars = [i for i in range(start, end) if text[i] == "|"]
    return list(itertools.pairwise(bars))


def _table_hits(text: str) -> Iterator[Hit]:
    """Markdown tables whose header names a password, token or secret column."""
    for m in _TABLE_HEAD_RE.finditer(text):
        columns: dict[int, tuple[str, bool]] = {}
        for i, (lo, hi) in enumerate(_cells(text, m.start("head"), m.end("head"))):
            name = text[lo + 1 : hi].strip()
            found = _key_kind(name) if name else None
            if found is not None:
                columns[i] = found
        if not columns:
            continue
        for start, line in _lines_from(text, m.end()):
            if not line.lstrip().startswith("|"):
                break
            for i, (lo, hi) in enumerate(_cells(text, start, start + len(line))):
                if i not in columns:
                    continue
                kind, is_password = columns[i]
                cell = text[lo + 1 : hi]
                value = cell.strip().strip("`*_\"'")
                if value and _cell_secret(value, is_password):
                    vstart = lo + 1 + cell.find(value)
                    yield Hit(vstart, vstart + len(value), kind, PRIO_LABEL)


def _cell_secret(value: str, is_password: bool) -> bool:
    """A table cell under a password or token column: "=XQ6*hV…" keeps its leading sign."""
    judge = prose_password if is_password else token_like
    if judge(value):
        return True
    return is_password and value[:1] in "=!#*+$%&@" and strong_password(value[1:])


_DELIMITERS = ("\t", ";")
_MAX_FIELD = 40
_MAX_DELIMITED_ROWS = 200


def _delimited_hits(text: str) -> Iterator[Hit]:
    """Tab- or semicolon-separated rows under a header line that names a secret column."""
    for start, line in _lines_from(text, 0):
        for delim in _DELIMITERS:
            if line.count(delim) < 2 or len(line) > 400:
                continue
            fields = line.split(delim)
            columns: dict[int, tuple[str, bool]] = {}
            for i, field in enumerate(fields):
                name = field.strip().strip("\"'")
                if name and len(name) <= _MAX_FIELD and not any(c.isdigit() for c in name):
                    found = _key_kind(name)
                    if found is not None:
                        columns[i] = found
            if not columns:
                continue
            below = text.find("\n", start) + 1
            if not below:
                continue
            for count, (row_start, row) in enumerate(_lines_from(text, below)):
                cells = row.split(delim)
                if count >= _MAX_DELIMITED_ROWS or len(cells) != len(fields):
                    break
                offset = row_start
                for i, cell in enumerate(cells):
                    if i in columns:
                        value = cell.strip().strip("\"'`")
                        kind, is_password = columns[i]
                        if value and _cell_secret(value, is_password):
                            vstart = offset + cell.find(value)
                            yield Hit(vstart, vstart + len(value), kind, PRIO_LABEL)
                    offset += len(cell) + 1


def _account_row_hits(text: str) -> Iterator[Hit]:
    """A password in a row of host, account and password fields, with no header naming it."""
    for m in _ACCOUNT_RE.finditer(text):
        line_start = text.rfind("\n", max(0, m.start() - _MAX_ROW_HEAD), m.start()) + 1
        if not line_start and m.start() > _MAX_ROW_HEAD:
            continue  # a long line: prose, not a row
        before = text[line_start : m.start()]
        stripped = before.rstrip(" \t")
        gap = before[len(stripped) :]
        if not (stripped.endswith("|") or len(gap) >= 2 or "\t" in gap):
            continue  # fields are apart by a bar, a tab or two spaces
        # Something (a host, a service) comes before the account: a row, not a sentence.
        head = stripped.strip(" \t|")
        if not head or len(_ROW_FIELD_SEP_RE.split(head)) > 3 or _SINGLE_SPACE_RE.search(head):
            continue
        row = _ROW_VALUE_RE.match(text, m.end(), min(len(text), m.end() + 160))
        if row is None:
            continue
        value = row.group("value")
        if _DATE_IN_RE.search(value):
            continue  # "rebooted-2024-03-11", "2024-05-01T10:00Z": a log or status column
        if strong_password(value) or looks_random(value):
            yield Hit(row.start("value"), row.end("value"), "password", PRIO_LABEL)


def structured_hits(text: str) -> Iterator[Hit]:
    """Yield secrets written below their key or inside a secret-named block of a config."""
    yield from _account_row_hits(text)
    if "\n" not in text:
        return
    yield from _next_line_hits(text)
    if "[" in text:
        yield from _section_hits(text)
    if "|" in text:
        yield from _table_hits(text)
    if "\t" in text or ";" in text:
        yield from _delimited_hits(text)
