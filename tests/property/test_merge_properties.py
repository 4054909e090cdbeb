"""Property tests for the §7.4 three-way merge: identities, symmetry, one-sided lines, tag sets."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.core import Note, NoteType
from memdir.sync.merge import TextMerge, merge_notes, merge_text

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LIMIT = 131072
MARKERS = ("<<<<<<< this machine", "||||||| baseline", "=======", ">>>>>>> server")
UNIQUE = "only-on-one-side"

# A small alphabet so that both sides often touch the same lines.
line_alphabet = st.sampled_from(["a", "b", "c", "", "d e", "日本", "🙂 x"])
line_lists = st.lists(line_alphabet, max_size=8)


def join(lines: list[str], final_newline: bool = False) -> str:
    text = "\n".join(lines)
    return text + "\n" if final_newline and lines else text


texts = st.builds(join, line_lists, st.booleans())


@st.composite
def edited(draw: st.DrawFn, base: list[str]) -> list[str]:
    """A copy of `base` with most lines kept, some dropped, replaced or preceded by new ones."""
    out: list[str] = []
    actions = st.sampled_from(["keep"] * 5 + ["drop", "replace", "insert"])
    for line in base:
        action = draw(actions)
        if action == "insert":
            out.append(draw(line_alphabet))
            out.append(line)
        elif action == "keep":
            out.append(line)
        elif action == "replace":
            out.append(draw(line_alphabet))
    if draw(st.integers(min_value=0, max_value=3)) == 0:
        out += draw(st.lists(line_alphabet, min_size=1, max_size=2))
    return out


@st.composite
def text_triples(draw: st.DrawFn) -> tuple[str, str, str]:
    """A base text and two edited copies (each with or without a final newline)."""
    base = draw(line_lists)
    return (
        join(base, draw(st.booleans())),
        join(draw(edited(base)), draw(st.booleans())),
        join(draw(edited(base)), draw(st.booleans())),
    )


# Notes: every field from a small set of values, so that sides often agree or clash.
summaries = st.sampled_from(["first", "second", "third"])
types = st.sampled_from([None, NoteType.USER, NoteType.PROJECT])
tag_lists = st.lists(st.sampled_from(["a", "b", "c", "d", "A", "B"]), max_size=5)
supersedes_lists = st.lists(st.sampled_from(["id-1", "id-2", "id-3"]), max_size=3)
extras = st.dictionaries(
    st.sampled_from(["k1", "k2", "k3"]), st.sampled_from([1, 2, "x"]), max_size=3
).map(lambda d: tuple(d.items()))
timestamps = st.integers(min_value=0, max_value=5)


@st.composite
def note_versions(draw: st.DrawFn, body_lines: list[str]) -> Note:
    return Note(
        id="n1",
        summary=draw(summaries),
        body=join(draw(edited(body_lines))),
        type=draw(types),
        tags=tuple(draw(tag_lists)),
        created_at=draw(timestamps),
        updated_at=draw(timestamps),
        supersedes=tuple(draw(supersedes_lists)),
        private=draw(st.booleans()),
        extra=draw(extras),
    )


@st.composite
def note_triples(draw: st.DrawFn) -> tuple[Note | None, Note | None, Note | None]:
    """Base, this machine's and the server's version; each is missing now and then."""
    body = draw(line_lists)
    missing = st.integers(min_value=0, max_value=4).map(lambda n: n == 0)
    versions = [None if draw(missing) else draw(note_versions(body)) for _ in range(3)]
    # Start from the base often, so that one-sided and field-by-field merges are common.
    for i in (1, 2):
        from_base = draw(st.integers(min_value=0, max_value=3)) > 0
        if versions[0] is not None and versions[i] is not None and from_base:
            versions[i] = draw(changed_field(versions[0], body))
    return versions[0], versions[1], versions[2]


@st.composite
def changed_field(draw: st.DrawFn, base: Note, body_lines: list[str]) -> Note:
    """`base` with one field redrawn."""
    which = draw(st.sampled_from(["summary", "body", "type", "tags", "extra", "private", "none"]))
    fields: dict[str, Any] = {
        "id": base.id,
        "summary": base.summary,
        "body": base.body,
        "type": base.type,
        "tags": base.tags,
        "created_at": base.created_at,
        "updated_at": draw(timestamps),
        "supersedes": base.supersedes,
        "private": base.private,
        "extra": base.extra,
    }
    if which == "summary":
        fields["summary"] = draw(summaries)
    elif which == "body":
        fields["body"] = join(draw(edited(body_lines)))
    elif which == "type":
        fields["type"] = draw(types)
    elif which == "tags":
        fields["tags"] = tuple(draw(tag_lists))
    elif which == "extra":
        fields["extra"] = draw(extras)
    elif which == "private":
        fields["private"] = not base.private
    return Note(**fields)


def content(note: Note | None) -> tuple[Any, ...] | None:
    """What two merges must agree on (`Note.same_content`, with tags, supersedes and extra as
    sets: their order follows this machine). Timestamps do not count: when both sides have
    the same content, this machine's copy is the result, timestamps and all."""
    if note is None:
        return None
    return (
        note.id,
        note.summary,
        note.body,
        note.type,
        note.private,
        frozenset(t.casefold() for t in note.tags),
        frozenset(note.supersedes),
        frozenset(note.extra),
    )


def set_rule(base: set[str], local: set[str], server: set[str]) -> set[str]:
    """§7.4: what one side added stays, what one side removed goes."""
    return {
        t
        for t in base | local | server
        if (t in base and t in local and t in server)
        or (t not in base and (t in local or t in server))
    }


# --- merge_text ---------------------------------------------------------------------------


@SETTINGS
@given(texts, texts)
def test_text_identical_sides_merge_to_that_side(base: str, same: str) -> None:
    assert merge_text(base, same, same) == TextMerge(same, 0)


@SETTINGS
@given(text_triples())
def test_text_one_unchanged_side_gives_the_other(triple: tuple[str, str, str]) -> None:
    base, changed, _ = triple
    assert merge_text(base, base, changed) == TextMerge(changed, 0)
    assert merge_text(base, changed, base) == TextMerge(changed, 0)


@SETTINGS
@given(text_triples())
def test_text_merge_is_symmetric(triple: tuple[str, str, str]) -> None:
    base, x, y = triple
    one, other = merge_text(base, x, y), merge_text(base, y, x)
    assert one.clean == other.clean
    assert one.conflicts == other.conflicts
    if one.clean:
        assert one.text == other.text


@SETTINGS
@given(text_triples())
def test_text_markers_stand_on_their_own_lines(triple: tuple[str, str, str]) -> None:
    out = merge_text(*triple)
    lines = out.text.split("\n")
    for marker in MARKERS:
        assert lines.count(marker) == out.conflicts
        assert sum(marker in line for line in lines) == out.conflicts


@SETTINGS
@given(text_triples(), st.integers(min_value=0), st.booleans())
def test_text_line_added_by_one_side_survives_a_clean_merge(
    triple: tuple[str, str, str], position: int, on_local: bool
) -> None:
    base, x, y = triple
    lines = x.split("\n") if x else []
    lines.insert(position % (len(lines) + 1), UNIQUE)
    x = "\n".join(lines)
    out = merge_text(base, x, y) if on_local else merge_text(base, y, x)
    if out.clean:
        assert UNIQUE in out.text.split("\n")
    else:
        assert UNIQUE in out.text  # the draft shows it inside a conflict region


# --- merge_notes --------------------------------------------------------------------------


@SETTINGS
@given(note_triples())
def test_notes_identical_sides_merge_to_that_side(
    triple: tuple[Note | None, Note | None, Note | None],
) -> None:
    base, same, _ = triple
    out = merge_notes(base, same, same, max_body_bytes=LIMIT)
    assert out.clean
    if same is None:
        assert out.result is None
    else:
        assert out.result is not None
        assert out.result.same_content(same)


@SETTINGS
@given(note_triples())
def test_notes_one_unchanged_side_gives_the_other(
    triple: tuple[Note | None, Note | None, Note | None],
) -> None:
    base, _, changed = triple
    for out in (
        merge_notes(base, base, changed, max_body_bytes=LIMIT),
        merge_notes(base, changed, base, max_body_bytes=LIMIT),
    ):
        assert out.clean
        if changed is None:
            assert out.result is None
        else:
            assert out.result is not None
            assert out.result.same_content(changed)


@SETTINGS
@given(note_triples())
def test_notes_merge_is_symmetric(triple: tuple[Note | None, Note | None, Note | None]) -> None:
    base, x, y = triple
    one = merge_notes(base, x, y, max_body_bytes=LIMIT)
    other = merge_notes(base, y, x, max_body_bytes=LIMIT)
    assert one.clean == other.clean
    assert len(one.conflicts) == len(other.conflicts)
    if one.clean:
        assert content(one.result) == content(other.result)
    else:
        assert one.result is None
        assert other.result is None
        assert one.draft is not None
        assert other.draft is not None


@SETTINGS
@given(
    st.lists(tag_lists, min_size=3, max_size=3),
    st.lists(supersedes_lists, min_size=3, max_size=3),
    st.booleans(),
    st.booleans(),
)
def test_notes_tags_and_supersedes_follow_the_set_rule(
    tags: list[list[str]], supersedes: list[list[str]], local_edits: bool, server_edits: bool
) -> None:
    base = Note(
        id="n1", summary="s", body="1\n2\n3", tags=tuple(tags[0]), supersedes=tuple(supersedes[0])
    )
    local = Note(
        id="n1",
        summary="changed" if local_edits else "s",
        body="1\n2\n3",
        tags=tuple(tags[1]),
        supersedes=tuple(supersedes[1]),
    )
    server = Note(
        id="n1",
        summary="s",
        body="1\n2\nthree" if server_edits else "1\n2\n3",
        tags=tuple(tags[2]),
        supersedes=tuple(supersedes[2]),
    )
    out = merge_notes(base, local, server, max_body_bytes=LIMIT)
    assert out.clean
    assert out.result is not None

    def folded(note: Note) -> set[str]:
        return {t.casefold() for t in note.tags}

    assert folded(out.result) == set_rule(folded(base), folded(local), folded(server))
    assert len(out.result.tags) == len(folded(out.result))
    assert set(out.result.supersedes) == set_rule(
        set(base.supersedes), set(local.supersedes), set(server.supersedes)
    )
