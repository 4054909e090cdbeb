"""§3 chunking: ≤768 characters, ~128 overlap, Unicode-safe boundaries, exact file byte offsets."""

from __future__ import annotations

import hashlib
import itertools
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.core import Note, body_span, parse_note, render_note
from memdir.errors import ParseError
from memdir.index.chunking import ChunkSpan, chunk_body, split_points

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HEAD = b'---\n{"id":"n-1","summary":"s"}\n---\n'


def note_file(body: str, *, newline: str = "\n") -> bytes:
    head = HEAD.decode().replace("\n", newline)
    return (head + body + newline).encode("utf-8")


def sentence(i: int) -> str:
    return f"Sentence number {i} talks about deployment, staging and the pricing page."


def check_invariants(data: bytes, chunks: list[ChunkSpan], max_chars: int, overlap: int) -> None:
    first, last = body_span(data)
    if first == last:
        assert chunks == []
        return
    assert chunks[0].start == first
    assert chunks[-1].end == last
    for number, chunk in enumerate(chunks):
        assert chunk.ord == number
        assert data[chunk.start : chunk.end].decode("utf-8") == chunk.text
        assert 0 < len(chunk.text) <= max_chars
        assert chunk.hash == hashlib.sha256(chunk.text.encode("utf-8")).hexdigest()
    for before, after in itertools.pairwise(chunks):
        assert before.start < after.start <= before.end < after.end  # no gaps, moving on
        shared = len(data[after.start : before.end].decode("utf-8"))
        assert shared <= overlap + overlap // 2


# --- examples --------------------------------------------------------------------------------


def test_empty_and_short_bodies() -> None:
    assert chunk_body(HEAD) == []
    assert chunk_body(HEAD + b"\n\n\r\n") == []
    data = note_file("Just one line.")
    [chunk] = chunk_body(data)
    assert chunk.text == "Just one line."
    assert (chunk.start, chunk.end) == (len(HEAD), len(data) - 1)
    assert chunk.ord == 0


def test_a_body_of_exactly_max_chars_is_one_chunk() -> None:
    assert len(chunk_body(note_file("x" * 768))) == 1
    assert len(chunk_body(note_file("x" * 769))) == 2


def test_long_body_breaks_at_paragraphs_with_overlap() -> None:
    paragraphs = [" ".join(sentence(p * 10 + i) for i in range(4)) for p in range(10)]
    data = note_file("\n\n".join(paragraphs))
    chunks = chunk_body(data)
    check_invariants(data, chunks, 768, 128)
    assert len(chunks) > 3
    for chunk in chunks[:-1]:
        assert chunk.text.endswith("\n\n")  # cut at a blank line
    for before, after in itertools.pairwise(chunks):
        shared = before.end - after.start  # ASCII: bytes are characters
        assert 128 <= shared <= 192
        assert after.text[0].isupper()  # the overlap starts at a sentence


def test_without_paragraphs_breaks_at_sentences_then_words() -> None:
    data = note_file(" ".join(sentence(i) for i in range(40)))
    chunks = chunk_body(data)
    check_invariants(data, chunks, 768, 128)
    assert all(c.text.endswith(". ") for c in chunks[:-1])
    words = note_file(" ".join(f"word{i}" for i in range(400)))
    chunks = chunk_body(words)
    check_invariants(words, chunks, 768, 128)
    assert all(c.text.endswith(" ") for c in chunks[:-1])
    assert all(c.text.startswith("word") for c in chunks)


def test_a_word_longer_than_a_chunk_is_cut_at_characters() -> None:
    data = note_file("x" * 2000)
    chunks = chunk_body(data)
    check_invariants(data, chunks, 768, 128)
    assert [len(c.text) for c in chunks[:-1]] == [768] * (len(chunks) - 1)


def test_cjk_sentences_end_at_full_stops() -> None:
    body = "".join(f"这是第{i}个关于机器学习和部署的句子。" for i in range(80))
    data = note_file(body)
    chunks = chunk_body(data)
    check_invariants(data, chunks, 768, 128)
    assert all(c.text.endswith("。") for c in chunks[:-1])
    assert all(c.text.startswith("这是") for c in chunks)


def test_byte_offsets_with_emoji_combining_marks_and_zwj() -> None:
    cluster = ["👨\u200d👩\u200d👧", "e\u0301", "🇩🇪", "❤\ufe0f", "👍🏽", "机", "x"]
    body = "".join(cluster[i % len(cluster)] for i in range(900))  # no spaces at all
    data = note_file(body)
    chunks = chunk_body(data)
    check_invariants(data, chunks, 768, 128)
    for chunk in chunks:
        text = chunk.text
        assert unicodedata.category(text[0])[0] != "M"
        assert text[0] not in "\u200d\U0001f3fd" and text[-1] != "\u200d"
        assert not text.startswith("🇪") and not text.endswith("🇩")


def test_crlf_files_keep_their_line_endings_and_never_split_them() -> None:
    body = "\r\n\r\n".join(" ".join(sentence(p * 5 + i) for i in range(3)) for p in range(12))
    data = note_file(body, newline="\r\n")
    chunks = chunk_body(data)
    check_invariants(data, chunks, 768, 128)
    assert any("\r\n" in c.text for c in chunks)
    for chunk in chunks:
        assert not chunk.text.startswith("\n") and not chunk.text.endswith("\r")
    crlf_only = note_file("ab" + "\r\n" * 1000 + "cd")
    chunks = chunk_body(crlf_only)
    check_invariants(crlf_only, chunks, 768, 128)
    for chunk in chunks:
        assert not chunk.text.startswith("\n") and not chunk.text.endswith("\r")


def test_bom_and_fence_lines_in_the_body() -> None:
    body = ("---\n" + sentence(1) + "\n") * 60
    data = b"\xef\xbb\xbf" + note_file(body)
    chunks = chunk_body(data)
    check_invariants(data, chunks, 768, 128)
    assert chunks[0].text.startswith("---\n")


def test_hashes_are_stable_and_edits_stay_local() -> None:
    paragraphs = [" ".join(sentence(p * 10 + i) for i in range(4)) for p in range(10)]
    data = note_file("\n\n".join(paragraphs))
    first = chunk_body(data)
    assert chunk_body(data) == first
    edited = chunk_body(note_file("\n\n".join([*paragraphs[:-1], "A different ending."])))
    assert [c.hash for c in edited[:3]] == [c.hash for c in first[:3]]
    moved = chunk_body(
        b"---\n" + b'{"id":"n-1","summary":"other","tags":["x"]}' + data[len(HEAD) - 5 :]
    )
    assert [c.hash for c in moved] == [c.hash for c in first]  # same text, same hash
    assert moved[0].start != first[0].start


def test_unparseable_files_raise_parse_error() -> None:
    for data in (b"", b"---", b"---\n{}\n", b"---\n\xff\n---\n"):
        with pytest.raises(ParseError):
            chunk_body(data)


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError):
        chunk_body(note_file("x"), max_chars=100, overlap=50)
    with pytest.raises(ValueError):
        split_points("x", 1, 0)
    assert split_points("abcdef", 2, 0) == [(0, 2), (2, 4), (4, 6)]


def test_chunks_of_a_rendered_note_cover_its_body() -> None:
    note = Note(id="n-2", summary="s", body="\n\n".join(sentence(i) * 3 for i in range(30)))
    data = render_note(note)
    chunks = chunk_body(data)
    check_invariants(data, chunks, 768, 128)
    first, last = body_span(data)
    assert data[first:last].decode() == parse_note(data).body


# --- properties ------------------------------------------------------------------------------

pieces = st.sampled_from(
    [
        *("---\n", "\n---\n", "\r\n", "\r", "\n", "\n\n", "\r\n\r\n", " ", "  ", "\t", ". ", "! "),
        *("。", "？", "🙂", "👨\u200d👩\u200d👧", "🇩🇪🇫🇷", "e\u0301", "\u0308", "\u200d", "\ufe0f"),
        *("机器学习", "한국어", "\u1100\u1161\u11a8", "x" * 40, "word ", "Sentence. ", "\u2028"),
    ]
)
chars = st.characters(codec="utf-8", exclude_characters="\x00")
bodies = st.lists(st.one_of(st.text(chars), pieces), max_size=40).map("".join)
sizes = st.integers(min_value=8, max_value=120).flatmap(
    lambda m: st.tuples(st.just(m), st.integers(min_value=0, max_value=(m - 1) // 2))
)


@SETTINGS
@given(bodies, sizes, st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_chunk_invariants_for_any_body(
    body: str, size: tuple[int, int], newline: str, bom: bool
) -> None:
    max_chars, overlap = size
    data = (b"\xef\xbb\xbf" if bom else b"") + note_file(body, newline=newline)
    chunks = chunk_body(data, max_chars=max_chars, overlap=overlap)
    check_invariants(data, chunks, max_chars, overlap)
    assert chunk_body(data, max_chars=max_chars, overlap=overlap) == chunks  # deterministic


@SETTINGS
@given(st.lists(st.one_of(st.text(chars, max_size=30), pieces), max_size=200).map("".join))
def test_default_sizes_for_any_body(body: str) -> None:
    data = note_file(body)
    check_invariants(data, chunk_body(data), 768, 128)


# User-perceived characters: a chunk boundary must fall between them, never inside one.
clusters = st.sampled_from(
    [
        *("a", "b", " ", "\n", "\r\n", ".", "。", "机", "한", "-"),
        *("e\u0301", "x\u0308\u0301", "👍🏽", "👨\u200d👩\u200d👧", "❤\ufe0f", "🇩🇪", "🇫🇷"),
        *("1\ufe0f\u20e3", "\u1100\u1161\u11a8", "\U0001f3f4\U000e0067\U000e0062\U000e007f"),
    ]
)


@SETTINGS
@given(st.lists(clusters, max_size=400), st.integers(min_value=24, max_value=200))
def test_boundaries_never_split_a_character(parts: list[str], max_chars: int) -> None:
    body = "".join(parts)
    boundaries = {0}
    for part in parts:
        boundaries.add(max(boundaries) + len(part))
    spans = split_points(body, max_chars, max_chars // 6)
    for start, end in spans:
        assert start in boundaries and end in boundaries, (start, end)
