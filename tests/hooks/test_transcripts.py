"""Reading the clients' transcripts back (`memdir.hooks.transcripts`): the three formats
from real captured runs, the ids memdir recalled into them, compaction, subagents, and
damaged, huge or missing files, which never raise.

The fixtures under ``fixtures/`` are trimmed copies of transcripts captured from Claude Code
2.1.197, Codex 0.171.0 and Gemini CLI 0.61.0 (see ``fixtures/README.md``); the hook output
in them was replaced by memdir's own blocks:

- SessionStart → a ``<memory-index>`` (index lines ``- summary [[id]]`` name no recalled note);
- the prompt hook of "hello" → ``[[deploy-checklist]]``, "second" → ``[[release-train]]``,
  "third" and "after compact" → ``[[db-migrations]]``, "/compact" → ``[[flaky-tests]]``.
"""

from __future__ import annotations

import html
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.hooks.transcripts import (
    MAX_BYTES,
    Transcript,
    read_transcript,
    recalled_in_text,
    strip_recalled,
)

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude_session.jsonl"
CLAUDE_SUBAGENT = FIXTURES / "claude_subagent.jsonl"
CODEX = FIXTURES / "codex_compact.jsonl"
GEMINI = FIXTURES / "gemini_session.jsonl"
PREAMBLE = "Notes from memory that may bear on this message (recalled automatically):"


def block(*notes: tuple[str, str]) -> str:
    """A recall block as memdir renders it (summary, id) per note."""
    entries = "\n\n".join(f"## {summary} [[{nid}]]\nbody" for summary, nid in notes)
    marker = f"<!-- memdir:recalled {' '.join(nid for _, nid in notes)} -->"
    return f"<recalled-memory>\n{PREAMBLE}\n\n{entries}\n{marker}\n</recalled-memory>"


def offset_of(path: Path, marker: bytes, nth: int = 0) -> int:
    """The byte offset of the start of the line holding the nth `marker`."""
    data, at = path.read_bytes(), -1
    for _ in range(nth + 1):
        at = data.index(marker, at + 1)
    return data.rfind(b"\n", 0, at) + 1


def roles(transcript: Transcript) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in transcript.messages]


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_the_fixtures_are_small_and_hold_no_capture_machine_path() -> None:
    for path in FIXTURES.glob("*.jsonl"):
        data = path.read_bytes()
        assert len(data) < 20_000, path.name
        for capture in (b"/tmp/hs-", b"hook-samples", b"/root/"):
            assert capture not in data, path.name


# -- Claude Code -------------------------------------------------------------------------------


def test_claude_session_is_read_as_claude_since_its_compaction() -> None:
    """The real file opens with a ``queue-operation`` line, and every line carries
    ``sessionId``: it is still a Claude Code transcript, not a Gemini CLI one."""
    read = read_transcript(CLAUDE)
    assert read.kind == "claude"
    assert read.compactions == 1
    # Only the prompt hook after the compaction is still in the conversation; the index
    # blocks of the SessionStart hooks name no recalled note.
    assert read.recalled == {"db-migrations"}
    messages = roles(read)
    assert ("user", "after compact") in messages
    assert ("assistant", "REPLY THREE") in messages
    assert not any(content in ("hello", "second") for _, content in messages)
    assert not read.subagent


def test_claude_prompt_hook_read_finds_the_same_ids() -> None:
    fast = read_transcript(CLAUDE, messages=False)
    assert fast.kind == "claude"
    assert fast.recalled == {"db-migrations"}
    assert fast.compactions == 1
    assert fast.messages == []


def test_claude_limit_reads_the_file_as_it_was_before_the_compaction() -> None:
    before = offset_of(CLAUDE, b'"compact_boundary"')
    read = read_transcript(CLAUDE, limit=before)
    assert read.kind == "claude"
    assert read.compactions == 0
    assert read.recalled == {"deploy-checklist", "release-train"}
    assert roles(read) == [
        ("user", "hello"),
        ("assistant", "REPLY ONE"),
        ("user", "second"),
        ("assistant", "REPLY TWO"),
    ]


def test_claude_attachment_lines_without_session_ids(tmp_path: Path) -> None:
    """The attachment format alone (no ``sessionId`` on the first line)."""
    path = write_lines(
        tmp_path / "t.jsonl",
        [
            {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "deploy?"}},
            {
                "type": "attachment",
                "attachment": {
                    "type": "hook_additional_context",
                    "content": [block(("Deploy checklist", "deploy-checklist"))],
                    "hookEvent": "UserPromptSubmit",
                },
            },
            {"type": "assistant", "uuid": "a1", "message": {"role": "assistant", "content": "ok"}},
        ],
    )
    read = read_transcript(path)
    assert read.kind == "claude"
    assert read.recalled == {"deploy-checklist"}
    assert [m["id"] for m in read.messages] == ["u1", "a1"]


def test_claude_subagent_file_is_detected() -> None:
    read = read_transcript(CLAUDE_SUBAGENT)
    assert read.kind == "claude"
    assert read.subagent is True


def test_claude_main_file_with_sidechain_lines_is_not_a_subagent(tmp_path: Path) -> None:
    lines = [json.loads(raw) for raw in CLAUDE_SUBAGENT.read_text().splitlines()]
    main = dict(lines[0], isSidechain=False)
    read = read_transcript(write_lines(tmp_path / "t.jsonl", [*lines, main]))
    assert read.subagent is False


# -- Codex ---------------------------------------------------------------------------------------


def test_codex_rollout_since_its_last_compaction() -> None:
    read = read_transcript(CODEX)
    assert read.kind == "codex"
    assert read.compactions == 3
    assert read.recalled == {"db-migrations"}
    # What the last compaction kept (Codex keeps the user's messages in its replacement
    # history), then what followed it.
    assert roles(read)[-2:] == [("user", "after compact"), ("assistant", "REPLY FIVE")]
    assert ("user", "hello") in roles(read)[:-2]
    assert all(role == "user" for role, _ in roles(read)[:-2])
    assert not read.subagent


def test_codex_limit_before_the_first_compaction() -> None:
    before = offset_of(CODEX, b'"type":"compacted"')
    read = read_transcript(CODEX, limit=before)
    assert read.kind == "codex"
    assert read.compactions == 0
    # Developer messages of hook output hold the ids; the injected <environment_context>
    # and instructions are not messages of the conversation.
    assert read.recalled == {"deploy-checklist"}
    assert roles(read) == [
        ("user", "hello"),
        ("assistant", "REPLY ONE"),
        ("assistant", "REPLY TWO"),
    ]


def test_codex_limit_between_compactions() -> None:
    read = read_transcript(CODEX, limit=offset_of(CODEX, b'"type":"compacted"', nth=1))
    assert read.compactions == 1
    assert read.recalled == {"release-train"}


def test_codex_subagent_session_meta(tmp_path: Path) -> None:
    lines = [json.loads(raw) for raw in CODEX.read_text().splitlines()]
    lines[0]["payload"]["source"] = {"subagent": "review"}
    read = read_transcript(write_lines(tmp_path / "sub.jsonl", lines))
    assert read.kind == "codex"
    assert read.subagent is True


# -- Gemini CLI ----------------------------------------------------------------------------------


def test_gemini_chat_with_html_escaped_hook_context() -> None:
    raw = GEMINI.read_text()
    assert "&lt;recalled-memory&gt;" in raw and "<recalled-memory>" not in raw
    read = read_transcript(GEMINI)
    assert read.kind == "gemini"
    assert read.recalled == {"deploy-checklist", "release-train", "db-migrations"}
    assert roles(read) == [
        ("user", "hello"),
        ("assistant", "REPLY ONE"),
        ("user", "second"),
        ("assistant", "REPLY TWO"),
        ("user", "third"),
        ("assistant", "REPLY THREE"),
    ]


def test_gemini_limit_reads_the_first_turn_only() -> None:
    read = read_transcript(GEMINI, limit=offset_of(GEMINI, b'"REPLY TWO"'))
    assert read.recalled == {"deploy-checklist", "release-train"}
    assert roles(read)[:2] == [("user", "hello"), ("assistant", "REPLY ONE")]


def test_gemini_single_document_of_older_releases(tmp_path: Path) -> None:
    escaped = html.escape(block(("Deploy checklist", "deploy-checklist")), quote=False)
    escaped = f"<hook_context>{escaped}</hook_context>"
    doc = {
        "sessionId": "s",
        "messages": [
            {"id": "1", "type": "user", "content": [{"text": "hello"}, {"text": escaped}]},
            {"id": "2", "type": "gemini", "content": "hi"},
        ],
    }
    path = tmp_path / "session.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    read = read_transcript(path)
    assert read.kind == "gemini"
    assert read.recalled == {"deploy-checklist"}
    assert roles(read) == [("user", "hello"), ("assistant", "hi")]


# -- text helpers --------------------------------------------------------------------------------


def test_recalled_in_text_reads_headings_inside_blocks_only() -> None:
    text = "## Outside [[outside]]\n" + block(("A", "a-1"), ("B", "b-2")) + "\n## After [[after]]"
    assert recalled_in_text(text) == {"a-1", "b-2"}
    assert recalled_in_text(html.escape(text, quote=False)) == {"a-1", "b-2"}
    assert recalled_in_text("<memory-index>\n- Summary [[x]]\n</memory-index>") == set()


def test_strip_recalled_leaves_the_user_text() -> None:
    text = f"<hook_context>{html.escape(block(('A', 'a')))}</hook_context>\n\nhello"
    assert strip_recalled(text) == "hello"
    assert strip_recalled(block(("A", "a")) + "\nplain") == "plain"


# -- damage, size, absence -----------------------------------------------------------------------


def test_a_torn_last_line_keeps_the_rest(tmp_path: Path) -> None:
    data = CLAUDE.read_bytes()
    path = tmp_path / "torn.jsonl"
    path.write_bytes(data + b'{"type":"user","message":{"role":"user","content":"ha')
    read = read_transcript(path)
    assert read.recalled == {"db-migrations"}
    assert ("user", "after compact") in roles(read)
    # and a limit that cuts a line in the middle
    cut = read_transcript(CODEX, limit=offset_of(CODEX, b'"REPLY FIVE"') + 40)
    assert cut.kind == "codex" and cut.compactions == 2
    assert ("user", "hello") in roles(cut)  # kept by the compaction before the cut


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n\n\n",
        b"\x00\xff\xfe" * 1000,
        os.urandom(4096),
        b'\xff\xfe\n{not json\n[1,2,3]\n"str"\n',
        b'{"type":"user","message":"oops"}\n{"payload":7,"timestamp":1}\n',
        b'{"sessionId":"s"}\n{"$set":{"messages":"nope"}}\n{"type":1,"id":[]}\n',
    ],
)
def test_garbage_never_raises(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(data)
    for messages in (True, False):
        read = read_transcript(path, messages=messages)
        assert read.recalled == set()


def test_missing_unreadable_and_absent_paths(tmp_path: Path) -> None:
    assert read_transcript(None) == Transcript()
    assert read_transcript("") == Transcript()
    assert read_transcript(tmp_path / "nope.jsonl") == Transcript()
    assert read_transcript(tmp_path) == Transcript()  # a folder
    assert read_transcript(CLAUDE, limit=0).recalled == set()
    assert read_transcript(CLAUDE, limit=-5).recalled == set()


def _huge(tmp_path: Path, early: str, late: str) -> Path:
    """A Claude transcript over MAX_BYTES: a compaction and a block at its start, a block
    at its end."""
    path = tmp_path / "huge.jsonl"
    filler = json.dumps(
        {"type": "assistant", "message": {"role": "assistant", "content": "x" * 4000}}
    ).encode()
    head = [
        {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
        {"type": "attachment", "attachment": {"content": [block(("Early", early))]}},
    ]
    tail = {"type": "attachment", "attachment": {"content": [block(("Late", late))]}}
    with path.open("wb") as fh:
        for line in head:
            fh.write(json.dumps(line).encode() + b"\n")
        for _ in range((MAX_BYTES + 6 * 1024 * 1024) // (len(filler) + 1)):
            fh.write(filler + b"\n")
        fh.write(json.dumps(tail).encode() + b"\n")
    assert path.stat().st_size > MAX_BYTES + 5 * 1024 * 1024
    return path


def test_a_70_mb_transcript_is_read_from_its_tail(tmp_path: Path) -> None:
    path = _huge(tmp_path, "early-note", "late-note")
    for messages in (False, True):
        read = read_transcript(path, messages=messages)
        assert read.kind == "claude"
        assert read.recalled == {"late-note"}


def test_a_70_mb_transcript_counts_the_compactions_of_the_part_read(tmp_path: Path) -> None:
    """Only the tail is read, so a compaction before it is not counted (hooks keep the
    highest count they saw, so the count a session works with never goes back); the
    ids before that compaction are released all the same."""
    path = _huge(tmp_path, "early-note", "late-note")
    read = read_transcript(path, messages=False)
    assert read.compactions == 0 and "early-note" not in read.recalled


# -- property: arbitrary lines -------------------------------------------------------------------

IDS = st.from_regex(r"[a-z][a-z0-9-]{0,11}", fullmatch=True)
TEXT = st.text(max_size=40)


@st.composite
def block_texts(draw: st.DrawFn) -> tuple[str, set[str]]:
    """A text holding blocks (plain or HTML-escaped) and stray headings; the ids that are in
    headings inside blocks."""
    parts: list[str] = []
    inside: set[str] = set()
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["block", "escaped", "stray", "text", "close-only"]))
        ids = draw(st.lists(IDS, min_size=1, max_size=3))
        if kind in ("block", "escaped"):
            text = block(*((draw(TEXT).replace("\n", " "), i) for i in ids))
            inside.update(ids)
            parts.append(html.escape(text, quote=False) if kind == "escaped" else text)
        elif kind == "stray":
            parts.append("\n".join(f"## S [[{i}]]" for i in ids))
        elif kind == "close-only":
            parts.append("\n".join(f"## S [[{i}]]" for i in ids) + "\n</recalled-memory>")
        else:
            parts.append(draw(TEXT))
    return "\n".join(parts), inside


@st.composite
def lines(draw: st.DrawFn) -> tuple[bytes, set[str]]:
    out: list[bytes] = []
    written: set[str] = set()
    for _ in range(draw(st.integers(0, 8))):
        text, inside = draw(block_texts())
        shape = draw(
            st.sampled_from(
                ["claude", "claude-att", "codex", "gemini", "gemini-set", "json", "bytes", "marker"]
            )
        )
        line: Any
        if shape == "claude":
            role = draw(st.sampled_from(["user", "assistant"]))
            line = {"type": role, "sessionId": "s", "isSidechain": draw(st.booleans())}
            line["message"] = {"role": role, "content": text}
        elif shape == "claude-att":
            line = {"type": "attachment", "attachment": {"content": [text]}}
        elif shape == "codex":
            line = {
                "timestamp": "t",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": draw(st.sampled_from(["user", "assistant", "developer"])),
                    "content": [{"type": "input_text", "text": text}],
                },
            }
        elif shape == "gemini":
            line = {"id": draw(TEXT), "type": "user", "content": [{"text": text}]}
        elif shape == "gemini-set":
            line = {"$set": {"messages": [{"id": "m", "type": "gemini", "content": text}]}}
        elif shape == "marker":
            line = draw(
                st.sampled_from(
                    [
                        {"type": "system", "subtype": "compact_boundary"},
                        {"type": "compacted", "payload": {"message": "m"}},
                        {"type": "user", "isCompactSummary": True},
                    ]
                )
            )
        elif shape == "json":
            line = draw(
                st.recursive(
                    st.none() | st.booleans() | st.integers() | TEXT,
                    lambda inner: (
                        st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3)
                    ),
                    max_leaves=8,
                )
            )
        else:
            out.append(draw(st.binary(max_size=60)).replace(b"\n", b" "))
            continue
        raw = json.dumps(line, separators=(",", ":")) if draw(st.booleans()) else json.dumps(line)
        if inside and shape != "json":
            written |= inside
        out.append(raw.encode())
    data = b"\n".join(out)
    if draw(st.booleans()) and data:
        data = data[: draw(st.integers(0, len(data)))]  # torn anywhere
    return data, written


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines(), st.booleans(), st.none() | st.integers(-10, 5000))
def test_arbitrary_lines_never_raise_and_recall_only_written_ids(
    tmp_path_factory: pytest.TempPathFactory,
    case: tuple[bytes, set[str]],
    messages: bool,
    limit: int | None,
) -> None:
    data, written = case
    path = tmp_path_factory.mktemp("prop") / "t.jsonl"
    path.write_bytes(data)
    read = read_transcript(path, messages=messages, limit=limit)
    assert read.recalled <= written
    assert read.compactions >= 0
    assert read.kind in ("", "claude", "codex", "gemini")
    for message in read.messages:
        assert message["role"] in ("user", "assistant")
        assert isinstance(message["content"], str)


# -- what names attached notes, and what does not (review findings) -----------------------------


def test_only_memdir_marker_in_hook_output_names_attached_notes(tmp_path: Path) -> None:
    """A heading in a note's body names nothing; a block quoted by a tool result or typed by
    the user attaches nothing either (it could hide a note for the rest of a session)."""
    body_heading = block(("Release process", "release")).replace(
        "body", "body\n## Related [[bravo-note]]"
    )
    assert recalled_in_text(body_heading) == {"release"}
    quoted = block(("Pricing", "pricing-cards"))
    lines = [
        {"type": "user", "message": {"role": "user", "content": quoted}, "uuid": "u1"},
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": quoted}],
            },
            "uuid": "u2",
        },
        {"type": "attachment", "attachment": {"content": [block(("Deploys", "deploys"))]}},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    for messages in (False, True):
        assert read_transcript(path, messages=messages).recalled == {"deploys"}


def test_a_fifo_or_device_is_never_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    results: list[Any] = []

    def read_both() -> None:
        for path in (fifo, Path("/dev/zero")):
            read = read_transcript(path)
            results.append((read.kind, read.messages, read.recalled))

    reader = threading.Thread(target=read_both, daemon=True)
    reader.start()
    reader.join(120)  # a FIFO with no writer would block an open() forever
    assert not reader.is_alive(), "read_transcript waited on a FIFO"
    assert results == [("", [], set())] * 2
