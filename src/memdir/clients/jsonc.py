"""Read JSON with comments (JSONC) and set one member in it without touching the rest of the text.

VS Code's ``mcp.json``, Zed's ``settings.json`` and Gemini CLI's ``settings.json`` allow
``//`` and ``/* */`` comments and trailing commas; rewriting such a file through
``json.dumps`` would drop every comment the user wrote. So the installer parses the text
into values *with their spans*, splices the one entry it owns into place (replacing its
old value or inserting a new member after the last one), and re-parses the result: the
new document must equal the old one with exactly that member changed, or nothing is
written. Plain JSON is a subset, so the same path serves ``.mcp.json`` and friends and
keeps their formatting too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JsoncError", "loads", "set_member"]

_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"')
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class JsoncError(ValueError):
    """Raised when a text is not JSON (comments and trailing commas allowed)."""

    def __init__(self, message: str, text: str, pos: int) -> None:
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        super().__init__(f"{message} at line {line}, column {col}")


@dataclass(slots=True)
class _Node:
    """A parsed value and where it sits in the text (objects also keep their members)."""

    value: Any
    start: int
    end: int
    #: For objects: key -> (offset of the key's opening quote, the value's node); last wins.
    members: dict[str, tuple[int, _Node]] = field(default_factory=dict)
    #: For objects: the value node of the member written last in the text.
    last: _Node | None = None


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str) -> JsoncError:
        return JsoncError(message, self.text, self.pos)

    def skip(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                eol = text.find("\n", self.pos)
                self.pos = n if eol < 0 else eol + 1
            elif text.startswith("/*", self.pos):
                close = text.find("*/", self.pos + 2)
                if close < 0:
                    raise self.fail("unterminated /* comment")
                self.pos = close + 2
            else:
                return

    def value(self) -> _Node:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of text")
        ch = self.text[self.pos]
        start = self.pos
        if ch == "{":
            return self.obj()
        if ch == "[":
            return self.array()
        if ch == '"':
            return _Node(self.string(), start, self.pos)
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return _Node(literal, start, self.pos)
        match = _NUMBER.match(self.text, self.pos)
        if match is None:
            raise self.fail(f"unexpected character {ch!r}")
        self.pos = match.end()
        raw = match.group()
        number: int | float = float(raw) if any(c in raw for c in ".eE") else int(raw)
        return _Node(number, start, self.pos)

    def string(self) -> str:
        match = _STRING.match(self.text, self.pos)
        if match is None:
            raise self.fail("unterminated string or control character in a string")
        try:
            decoded = json.loads(match.group())
        except json.JSONDecodeError as exc:
            raise self.fail(f"bad string ({exc.msg})") from None
        self.pos = match.end()
        return str(decoded)

    def obj(self) -> _Node:
        node = _Node({}, self.pos, self.pos)
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                break
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a quoted key or '}'")
            key_at = self.pos
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':'")
            self.pos += 1
            child = self.value()
            node.value[key] = child.value
            node.members[key] = (key_at, child)
            node.last = child
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                continue
            if not self.text.startswith("}", self.pos):
                raise self.fail("expected ',' or '}'")
            break
        self.pos += 1
        node.end = self.pos
        return node

    def array(self) -> _Node:
        node = _Node([], self.pos, self.pos)
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                break
            node.value.append(self.value().value)
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                continue
            if not self.text.startswith("]", self.pos):
                raise self.fail("expected ',' or ']'")
            break
        self.pos += 1
        node.end = self.pos
        return node


def _parse(text: str) -> _Node:
    parser = _Parser(text)
    node = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise parser.fail("unexpected text after the document")
    return node


def loads(text: str) -> Any:
    """The value of a JSON text that may hold comments and trailing commas."""
    return _parse(text).value


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _render(value: Any, indent: str, unit: str) -> str:
    """`value` as JSON whose continuation lines start with `indent` (short lists on one line)."""
    if isinstance(value, dict) and value:
        inner = indent + unit
        members = (
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {_render(v, inner, unit)}"
            for k, v in value.items()
        )
        return "{\n" + ",\n".join(members) + f"\n{indent}}}"
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        inner = indent + unit
        items = (f"{inner}{_render(v, inner, unit)}" for v in value)
        return "[\n" + ",\n".join(items) + f"\n{indent}]"
    return json.dumps(value, ensure_ascii=False)


def _unit(text: str) -> str:
    """The file's own indentation step (two spaces when it shows none)."""
    match = re.search(r"\n([ \t]+)[\"{\[]", text)
    if match is None:
        return "  "
    found = match.group(1)
    return "\t" if found.startswith("\t") else " " * min(len(found), 8)


def _insert(text: str, obj: _Node, key: str, value: Any, unit: str) -> str:
    """`text` with the member `key: value` added as the last member of `obj`."""
    outer = _line_indent(text, obj.start)
    if obj.last is None:
        indent = outer + unit
        member = f"{json.dumps(key, ensure_ascii=False)}: {_render(value, indent, unit)}"
        # Whatever sits inside the empty braces (a comment) stays before the new member.
        before = text[: obj.end - 1].rstrip(" \t\r\n")
        return f"{before}\n{indent}{member}\n{outer}{text[obj.end - 1 :]}"
    first_key_at = min(at for at, _ in obj.members.values())
    indent = _line_indent(text, first_key_at)
    if text.rfind("\n", 0, first_key_at) < obj.start:  # members on the brace's line
        indent = outer + unit
    member = f"{json.dumps(key, ensure_ascii=False)}: {_render(value, indent, unit)}"
    end = obj.last.end
    rest = _Parser(text)
    rest.pos = end
    rest.skip()
    trailing = text.startswith(",", rest.pos)  # a trailing comma: keep the style
    after = rest.pos + 1 if trailing else end
    tail = re.match(r"[ \t]*(//[^\n]*)?\n", text[after:])
    # A comment ending the last member's line stays on that line.
    at = after + tail.end() - 1 if tail is not None else after
    if trailing:
        return f"{text[:at]}\n{indent}{member},{text[at:]}"
    return f"{text[:end]},{text[end:at]}\n{indent}{member}{text[at:]}"


def set_member(text: str, outer: str, name: str, value: Any) -> str:
    """`text` with ``doc[outer][name] = value``, everything else kept as written.

    Raises `JsoncError` when the text does not parse and `ValueError` when the document
    is not an object or ``doc[outer]`` is not one, or when the result would differ from
    the intended change anywhere else (never expected; checked because a wrong splice
    would clobber the user's file).
    """
    unit = _unit(text)
    if not text.strip():
        return _render({outer: {name: value}}, "", unit) + "\n"
    root = _parse(text)
    if not isinstance(root.value, dict):
        raise ValueError("the document is not a JSON object")
    expected = json.loads(json.dumps(root.value))
    if outer in root.members:
        _, table = root.members[outer]
        if not isinstance(table.value, dict):
            raise ValueError(f'"{outer}" is not an object')
        if name in table.members:
            key_at, old = table.members[name]
            rendered = _render(value, _line_indent(text, key_at), unit)
            result = text[: old.start] + rendered + text[old.end :]
        else:
            result = _insert(text, table, name, value, unit)
        expected[outer][name] = value
    else:
        result = _insert(text, root, outer, {name: value}, unit)
        expected[outer] = {name: value}
    if loads(result) != expected:
        raise ValueError("the merged text would change more than the one entry")
    return result
