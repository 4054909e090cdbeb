"""A strict reader of the flat YAML frontmatter people and other tools write (§1.1).

``key: value`` scalars (plain, ``"double"`` with escapes, ``'single'``), flow lists
``[a, "b, c"]``, block lists (``key:`` then ``- a`` lines), one level of nested mapping
(``metadata:`` then ``  type: project``), block scalars (``|``, ``>`` with ``-``/``+``),
comments and blank lines. Anything else is a `FrontmatterError` naming the line, never a
guess (PyYAML is not a dependency). Note files (`memdir.core.frontmatter`) and the
importers of Markdown-based formats both read frontmatter with it.
"""

from __future__ import annotations

import re

__all__ = [
    "FrontmatterError",
    "Scalar",
    "Value",
    "frontmatter_list",
    "frontmatter_str",
    "parse_frontmatter",
    "split_frontmatter",
]

Scalar = str | int | float | bool | None
Value = Scalar | list[Scalar] | dict[str, Scalar | list[Scalar]]


class FrontmatterError(ValueError):
    """Raised when frontmatter is not the flat YAML this parser reads (names the line)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"frontmatter line {line}: {reason}")
        self.line = line
        self.reason = reason


_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_ .\-]*?)\s*:(?:\s+(.*))?$")
_BLOCK_SCALAR = re.compile(r"^([|>])([+-]?)\s*(?:#.*)?$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "/": "/", "0": "\0", " ": " "}


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """(frontmatter text or None, body, the body's first line number). Frontmatter is a first
    line ``---`` and a closing ``---`` (or ``...``) line; without a closing line the whole
    text is body (a leading horizontal rule, not frontmatter)."""
    if not text.startswith("---\n") and text.rstrip(" \t") != "---":
        return None, text, 1
    lines = text.split("\n")
    if lines[0].rstrip(" \t") != "---":
        return None, text, 1
    for index in range(1, len(lines)):
        if lines[index].rstrip(" \t") in ("---", "..."):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    return None, text, 1


def parse_frontmatter(text: str) -> dict[str, Value]:
    """The flat YAML mapping of `text` (see the module docstring); `FrontmatterError` else."""
    out: dict[str, Value] = {}
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        number = index + 2  # the opening fence is line 1
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            raise FrontmatterError(number, "indented line without a key above it")
        match = _KEY.match(line)
        if match is None:
            raise FrontmatterError(number, "expected 'key: value'")
        key, raw = match.group(1), (match.group(2) or "").strip()
        if key in out:
            raise FrontmatterError(number, f"key {key!r} appears twice")
        block = _BLOCK_SCALAR.match(raw)
        if block:
            body, index = _block_scalar(lines, index, block.group(1), block.group(2))
            out[key] = body
        elif raw and not raw.startswith("#"):
            out[key] = _scalar_or_flow(raw, number)
        else:
            value, index = _nested(lines, index, number)
            out[key] = value
    return out


def _nested(lines: list[str], index: int, number: int) -> tuple[Value, int]:
    """A block list or a one-level mapping under an empty ``key:`` (or None when neither)."""
    items: list[Scalar] = []
    mapping: dict[str, Scalar | list[Scalar]] = {}
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            index += 1
            continue
        indented = line[0] in " \t"
        if stripped.startswith("- ") or stripped == "-":
            if mapping:
                raise FrontmatterError(index + 2, "a list item inside a mapping")
            items.append(_scalar(stripped[1:].strip(), index + 2))
            index += 1
            continue
        if not indented:
            break
        if items:
            raise FrontmatterError(index + 2, "a mapping line inside a list")
        match = _KEY.match(stripped)
        if match is None:
            raise FrontmatterError(index + 2, "expected 'key: value'")
        sub, raw = match.group(1), (match.group(2) or "").strip()
        if sub in mapping:
            raise FrontmatterError(index + 2, f"key {sub!r} appears twice")
        index += 1
        if raw:
            value = _scalar_or_flow(raw, index + 1)
            if isinstance(value, dict):  # pragma: no cover - flow mappings are refused
                raise FrontmatterError(index + 1, "nested mappings are not read")
            mapping[sub] = value
        else:
            sub_items: list[Scalar] = []
            while index < len(lines) and lines[index].strip().startswith("- "):
                sub_items.append(_scalar(lines[index].strip()[1:].strip(), index + 2))
                index += 1
            mapping[sub] = sub_items if sub_items else None
    if items:
        return items, index
    if mapping:
        return mapping, index
    return None, index


def _block_scalar(lines: list[str], index: int, style: str, chomp: str) -> tuple[str, int]:
    collected: list[str] = []
    while index < len(lines) and (not lines[index].strip() or lines[index][0] in " \t"):
        collected.append(lines[index])
        index += 1
    indents = [len(x) - len(x.lstrip(" \t")) for x in collected if x.strip()]
    cut = min(indents) if indents else 0
    parts = [x[cut:] if x.strip() else "" for x in collected]
    while parts and not parts[-1]:
        parts.pop()
    if style == ">":
        text = ""
        for part in parts:
            if not part:
                text += "\n"
            elif text and not text.endswith("\n"):
                text += " " + part
            else:
                text += part
    else:
        text = "\n".join(parts)
    if chomp != "-" and text:
        text += "\n"
    return text, index


def _scalar_or_flow(raw: str, number: int) -> Value:
    if raw.startswith("["):
        return _flow_list(raw, number)
    if raw.startswith("{"):
        raise FrontmatterError(number, "flow mappings ({...}) are not read")
    return _scalar(raw, number)


def _flow_list(raw: str, number: int) -> list[Scalar]:
    items: list[Scalar] = []
    pos = 1
    expect_item = True
    while pos < len(raw):
        char = raw[pos]
        if char in " \t":
            pos += 1
        elif char == "]":
            rest = raw[pos + 1 :].strip()
            if rest and not rest.startswith("#"):
                raise FrontmatterError(number, "text after the closing ']'")
            return items
        elif char == ",":
            if expect_item:
                raise FrontmatterError(number, "an empty list item")
            expect_item = True
            pos += 1
        elif not expect_item:
            raise FrontmatterError(number, "expected ',' or ']'")
        elif char in "\"'":
            text, pos = _quoted(raw, pos, number)
            items.append(text)
            expect_item = False
        elif char in "[{":
            raise FrontmatterError(number, "nested lists are not read")
        else:
            end = pos
            while end < len(raw) and raw[end] not in ",]":
                end += 1
            items.append(_plain(raw[pos:end].strip()))
            pos = end
            expect_item = False
    raise FrontmatterError(number, "a list without its closing ']'")


def _scalar(raw: str, number: int) -> Scalar:
    if not raw:
        return None
    if raw[0] in "\"'":
        text, end = _quoted(raw, 0, number)
        rest = raw[end:].strip()
        if rest and not rest.startswith("#"):
            raise FrontmatterError(number, "text after a closing quote")
        return text
    if raw[0] in "[{":
        raise FrontmatterError(number, "a list or mapping where a single value belongs")
    if raw[0] in "&*!|>%@`":
        raise FrontmatterError(number, f"YAML feature {raw[0]!r} is not read")
    comment = re.search(r"\s+#", raw)
    return _plain(raw[: comment.start()] if comment else raw)


def _plain(text: str) -> Scalar:
    lowered = text.lower()
    if lowered in ("", "~", "null"):
        return None
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    if re.fullmatch(r"[-+]?\d{1,18}", text):
        return int(text)
    if re.fullmatch(r"[-+]?\d+\.\d+", text):
        return float(text)
    return text


def _quoted(raw: str, pos: int, number: int) -> tuple[str, int]:
    quote = raw[pos]
    out: list[str] = []
    pos += 1
    while pos < len(raw):
        char = raw[pos]
        if quote == "'" and char == "'":
            if raw[pos + 1 : pos + 2] == "'":
                out.append("'")
                pos += 2
                continue
            return "".join(out), pos + 1
        if quote == '"' and char == '"':
            return "".join(out), pos + 1
        if quote == '"' and char == "\\":
            nxt = raw[pos + 1 : pos + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                pos += 2
                continue
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", raw[pos + 2 : pos + 6]):
                code = int(raw[pos + 2 : pos + 6], 16)
                if 0xD800 <= code <= 0xDFFF:
                    raise FrontmatterError(number, "a lone surrogate escape")
                out.append(chr(code))
                pos += 6
                continue
            raise FrontmatterError(number, f"unknown escape '\\{nxt}'")
        out.append(char)
        pos += 1
    raise FrontmatterError(number, "a quoted value without its closing quote")


def frontmatter_str(meta: dict[str, Value], *keys: str) -> str | None:
    """The first of `keys` holding a non-blank scalar, as text."""
    for key in keys:
        value = meta.get(key)
        if isinstance(value, bool) or value is None or isinstance(value, list | dict):
            continue
        text = str(value).strip()
        if text:
            return text
    return None


def frontmatter_list(meta: dict[str, Value], key: str) -> list[str]:
    """A list key as texts; a plain string is split on commas (``tags: a, b``)."""
    value = meta.get(key)
    if isinstance(value, list):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [str(value)]
    return []
