"""The JSON-with-comments editor behind `mcp install`: parse, splice one member, keep the rest."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.clients.jsonc import JsoncError, loads, set_member

ENTRY = {"command": "memdir", "args": ["mcp", "serve"], "env": {"MEMDIR_HOME": "/h/ü"}}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
documents = st.dictionaries(st.text(max_size=8), values, max_size=5)


def test_comments_and_trailing_commas_parse() -> None:
    text = '// head\n{\n  "a": [1, 2,], /* b */ "b": {"c": "//not a comment",},\n}\n'
    assert loads(text) == {"a": [1, 2], "b": {"c": "//not a comment"}}
    assert loads('{"s": "a\\u00fc\\n"}') == {"s": "aü\n"}


@pytest.mark.parametrize(
    "text",
    ['{"a": 1', '{"a" 1}', "{a: 1}", '{"a": 1} x', '{"a": "x\n"}', '{"a": 1 /* open', "[1,,]"],
)
def test_broken_texts_are_errors_with_a_position(text: str) -> None:
    with pytest.raises(JsoncError, match="line 1"):
        loads(text)


@settings(max_examples=200, deadline=None)
@given(
    doc=documents,
    indent=st.sampled_from([None, 2, 4, "\t"]),
    outer=st.sampled_from(["mcpServers", "servers"]),
)
def test_set_member_changes_exactly_one_member(
    doc: dict[str, Any], indent: Any, outer: str
) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    if outer in doc and not isinstance(doc[outer], dict):
        with pytest.raises(ValueError):
            set_member(text, outer, "memdir", ENTRY)
        return
    result = set_member(text, outer, "memdir", ENTRY)
    expected = json.loads(text)
    expected.setdefault(outer, {})["memdir"] = ENTRY
    assert loads(result) == expected
    assert set_member(result, outer, "memdir", ENTRY) == result  # replacing with itself: no change


def test_comments_survive_insert_and_replace() -> None:
    text = (
        "// Zed settings\n{\n"
        '  "theme": "One Dark", // the theme\n'
        '  "context_servers": {\n'
        "    // mine\n"
        '    "other": { "command": "x", "args": [] } // keep\n'
        "  }\n}\n"
    )
    inserted = set_member(text, "context_servers", "memdir", ENTRY)
    for comment in ("// Zed settings", "// the theme", "// mine", "// keep"):
        assert comment in inserted
    assert loads(inserted)["context_servers"]["other"] == {"command": "x", "args": []}
    replaced = set_member(inserted, "context_servers", "memdir", {**ENTRY, "args": ["x"]})
    assert replaced.count("// keep") == 1 and loads(replaced)["context_servers"]["memdir"][
        "args"
    ] == ["x"]
    # The rest of the file is byte for byte what it was.
    assert replaced.startswith(text[: text.index('"other"')])


def test_empty_objects_and_files() -> None:
    assert loads(set_member("", "servers", "memdir", ENTRY)) == {"servers": {"memdir": ENTRY}}
    assert loads(set_member("{}", "servers", "memdir", ENTRY)) == {"servers": {"memdir": ENTRY}}
    text = '{\n  "servers": {\n    // nothing yet\n  }\n}\n'
    out = set_member(text, "servers", "memdir", ENTRY)
    assert "// nothing yet" in out and loads(out) == {"servers": {"memdir": ENTRY}}


def test_non_object_documents_are_refused() -> None:
    with pytest.raises(ValueError, match="not a JSON object"):
        set_member("[]", "servers", "memdir", ENTRY)
    with pytest.raises(ValueError, match="not an object"):
        set_member('{"servers": []}', "servers", "memdir", ENTRY)
