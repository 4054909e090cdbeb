"""A note's summary is evidence (issue 24, item B): found at its bytes in the file, gated,
sent as a passage of its own, and citable — a fact stated only there gets answered.

The unit tests build note files with the real renderer; the end-to-end ones go through
`Memory.ask` with lexical search and the scripted chat server on loopback.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from extract import ChatServer, completion
from loopback import serving
from memdir import Memory
from memdir.answer import (
    build_messages,
    check_answer,
    select_evidence,
    summaries_wanted,
    summary_passage,
    with_summaries,
)
from memdir.answer.check import AnswerStatus
from memdir.core import Note
from memdir.core.frontmatter import render_note
from memdir.memory.asking import read_note_file
from memdir.retrieve.hits import Chunk

from . import answered, chunk, cite

TUESDAYS = "Deploys go out on Tuesdays"
QUESTION = "When do deploys go out?"


def file_chunk(data: bytes, note_id: str, summary: str, *, text: str = "") -> Chunk:
    """The chunk retrieve would give for a note file `data` (its body's first bytes, or
    the empty row of a note without a body)."""
    base = chunk(note_id, text, revision=hashlib.sha256(data).hexdigest())
    start = data.index(text.encode()) if text else 0
    return dataclasses.replace(
        base, start=start, end=start + len(text.encode()), summary=summary, path=""
    )


# -- finding the summary in the file -----------------------------------------------------------


def test_the_summary_passage_is_the_summary_text_at_its_bytes() -> None:
    data = render_note(Note(id="deploys", summary=TUESDAYS))
    passage = summary_passage(file_chunk(data, "deploys", TUESDAYS), data)
    assert passage is not None
    assert passage.text == TUESDAYS and passage.summary == TUESDAYS
    assert data[passage.start : passage.end] == TUESDAYS.encode()
    assert passage.revision == hashlib.sha256(data).hexdigest()
    assert passage.chunk_hash == hashlib.sha256(TUESDAYS.encode()).hexdigest()


@pytest.mark.parametrize(
    "summary",
    ['Say "ship it" on Tuesdays', "Déploiements le mardi — 火曜日", "a\\b path C:\\deploy"],
)
def test_an_escaped_summary_is_found_at_its_json_bytes(summary: str) -> None:
    data = render_note(Note(id="deploys", summary=summary, body="Other text."))
    passage = summary_passage(file_chunk(data, "deploys", summary), data)
    assert passage is not None and passage.text == summary
    assert json.loads(b'"' + data[passage.start : passage.end] + b'"') == summary


def test_a_hand_written_pretty_frontmatter_is_read_too() -> None:
    data = (
        b'---\n{\n  "id": "deploys",\n  "extra": {"summary": "not this one"},\n'
        b'  "summary" :  "Deploys go out on Tuesdays"\n}\n---\nBody.\n'
    )
    passage = summary_passage(file_chunk(data, "deploys", TUESDAYS), data)
    assert passage is not None
    assert data[passage.start : passage.end] == TUESDAYS.encode()


def test_no_summary_passage_without_the_revisions_bytes() -> None:
    data = render_note(Note(id="deploys", summary=TUESDAYS))
    c = file_chunk(data, "deploys", TUESDAYS)
    edited = data.replace(b"Tuesdays", b"Fridays!")
    assert summary_passage(c, edited) is None  # the file changed since it was indexed
    other = file_chunk(edited, "deploys", TUESDAYS)
    assert summary_passage(other, edited) is None  # it no longer says that
    assert summary_passage(file_chunk(b"no frontmatter", "x", "x"), b"no frontmatter") is None


def test_a_summary_the_chunks_already_say_is_not_added() -> None:
    body = "Our deploys use the blue green strategy on staging."
    same = dataclasses.replace(chunk("a", body), summary="Blue green deploys")
    more = dataclasses.replace(chunk("b", "Deploys go out weekly."), summary=TUESDAYS)
    empty = dataclasses.replace(chunk("c", ""), summary=TUESDAYS)
    assert summaries_wanted([same, more, empty]) == (more, empty)
    # One per note: a second chunk of `b` holding the summary's words drops it.
    second = dataclasses.replace(chunk("b", "Tuesdays it is.", start=400), summary=TUESDAYS)
    assert summaries_wanted([more, second]) == ()


def test_summaries_go_just_before_their_notes_first_chunk() -> None:
    a, b = chunk("a", "First."), chunk("b", "Second.")
    b2 = chunk("b", "Second, again.", start=300)
    summary_b = dataclasses.replace(b, text="B's summary", start=20, end=31)
    assert with_summaries([a, b, b2], [summary_b]) == (a, summary_b, b, b2)


def test_a_summary_only_fact_passes_the_gate_is_sent_and_can_be_cited() -> None:
    data = render_note(Note(id="deploys", summary=TUESDAYS))
    empty = file_chunk(data, "deploys", TUESDAYS)
    assert select_evidence(QUESTION, [empty]) == ()  # the body alone is no evidence
    passage = summary_passage(empty, data)
    assert passage is not None
    chosen = select_evidence(QUESTION, with_summaries([empty], [passage]))
    assert chosen == (passage,)
    user = build_messages(QUESTION, chosen)[1]["content"]
    document = json.loads(user.split("\n", 1)[1].rpartition("\n\n")[0])
    assert document["passages"] == [
        {
            "note_id": "deploys",
            "revision": passage.revision,
            "start": passage.start,
            "end": passage.end,
            "part": "summary",
            "text": TUESDAYS,
        }
    ]
    ok = check_answer(answered(("Deploys go out on Tuesdays.", [cite(passage)])), chosen, "m")
    assert ok.status is AnswerStatus.ANSWERED
    past = cite(passage, end=passage.end + 2)  # the closing quote and the comma: not summary
    assert check_answer(answered(("Tuesdays.", [past])), chosen, "m").status is (
        AnswerStatus.REFUSED
    )


def test_the_note_file_is_read_without_following_links(tmp_path: Path) -> None:
    data = render_note(Note(id="deploys", summary=TUESDAYS))
    real = tmp_path / "deploys.md"
    real.write_bytes(data)
    link = tmp_path / "link.md"
    link.symlink_to(real)
    c = file_chunk(data, "deploys", TUESDAYS)
    assert read_note_file(dataclasses.replace(c, path=str(real))) == data
    assert read_note_file(dataclasses.replace(c, path=str(link))) is None
    assert read_note_file(dataclasses.replace(c, path=str(tmp_path / "gone.md"))) is None
    assert read_note_file(dataclasses.replace(c, path=str(tmp_path))) is None


# -- through Memory.ask ------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with serving(ChatServer()) as srv:
        yield srv


@pytest.fixture
def memory(project: Path, home: Path, server: ChatServer) -> Iterator[Memory]:
    (home / "config.toml").write_text(
        f'[embed]\nprovider = "none"\n[llm]\nurl = "{server.url}"\nmodel = "small-model"\n',
        encoding="utf-8",
    )
    with Memory.open(project, home=home) as m:
        m.remember(TUESDAYS, id="deploys")  # a summary, no body
        m.remember("Cats", "Mia adopted two cats last spring.", id="cats")
        yield m


def summary_citation(memory: Memory) -> dict[str, Any]:
    data = (memory.stores.directory("project") / "deploys.md").read_bytes()
    start = data.index(TUESDAYS.encode())
    return {
        "note_id": "deploys",
        "revision": hashlib.sha256(data).hexdigest(),
        "start": start,
        "end": start + len(TUESDAYS.encode()),
    }


def sent(server: ChatServer) -> list[dict[str, Any]]:
    (seen,) = server.seen
    user = seen.body["messages"][1]["content"]
    document: dict[str, Any] = json.loads(user.split("\n", 1)[1].rpartition("\n\n")[0])
    return document["passages"]  # type: ignore[no-any-return]


def test_a_fact_stated_only_in_the_summary_is_answered(memory: Memory, server: ChatServer) -> None:
    assert memory.search(QUESTION)[0].note_id == "deploys"  # search ranks it first
    where = summary_citation(memory)
    server.answer(completion(answered(("Deploys go out on Tuesdays.", [where]))))
    answer = memory.ask(QUESTION)
    assert answer.status is AnswerStatus.ANSWERED, answer.reason
    assert answer.text == "Deploys go out on Tuesdays." and answer.chunks_sent == 1
    (citation,) = answer.claims[0].citations
    raw = (memory.stores.directory("project") / "deploys.md").read_bytes()
    assert raw[citation.start : citation.end].decode() == TUESDAYS
    assert sent(server) == [{**where, "part": "summary", "text": TUESDAYS}]


def test_a_citation_beyond_the_summary_bytes_is_refused(memory: Memory, server: ChatServer) -> None:
    where = summary_citation(memory)
    server.answer(completion(answered(("Tuesdays.", [{**where, "start": where["start"] - 12}]))))
    answer = memory.ask(QUESTION)
    assert answer.status is AnswerStatus.REFUSED
    assert answer.reason is not None and "outside every passage" in answer.reason


def test_a_summary_and_its_body_are_both_sent_when_each_says_something(
    open_memory_with: Callable[[str, str], Memory], server: ChatServer
) -> None:
    memory = open_memory_with(TUESDAYS, "Deploys go out from the release branch, after review.")
    server.answer(completion('{"status": "insufficient_evidence"}'))
    memory.ask(QUESTION)
    assert [p["part"] for p in sent(server)] == ["summary", "body"]


@pytest.fixture
def open_memory_with(
    project: Path, home: Path, server: ChatServer
) -> Iterator[Callable[[str, str], Memory]]:
    opened: list[Memory] = []

    def make(summary: str, body: str) -> Memory:
        (home / "config.toml").write_text(
            f'[embed]\nprovider = "none"\n[llm]\nurl = "{server.url}"\nmodel = "m"\n',
            encoding="utf-8",
        )
        m = Memory.open(project, home=home)
        opened.append(m)
        m.remember(summary, body, id="deploys")
        return m

    yield make
    for m in opened:
        m.close()
