"""The pure side of merging (issue 11, §6): which note is kept, the concatenated draft, link
rewriting, and the plan file's shape (round trip; every malformed plan an InvalidInput)."""

from __future__ import annotations

import copy
import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.core import Note, NoteType, Scope
from memdir.core.merging import MAX_MERGED, MergeDraft
from memdir.errors import InvalidInput
from memdir.tidy.merge import (
    PLAN_FORMAT,
    MergePlan,
    PlannedNote,
    concat_draft,
    keeper,
    paragraphs,
    plan_from_json,
    plan_to_json,
    relink,
)

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def note(note_id: str, created: int = 0, updated: int = 0, **fields: Any) -> Note:
    values: dict[str, Any] = {"summary": f"Summary of {note_id}", "body": ""}
    values.update(fields)
    return Note(id=note_id, created_at=created, updated_at=updated, **values)


def key(text: str) -> str:
    """How the draft compares paragraphs: word for word (trailing spaces aside); a one-line
    heading by its words alone (case, spacing and heading marks ignored)."""
    stripped = text.strip()
    if "\n" not in stripped and re.match(r"^#{1,6} ", stripped):
        return "title:" + re.sub(r"\s+", " ", re.sub(r"^#{1,6} ", "", stripped)).strip().casefold()
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def title(summary: str) -> str:
    return "title:" + re.sub(r"\s+", " ", summary).strip().casefold()


def relinked(notes: list[Note], body: str) -> str:
    """`body` with links to the merged notes naming the kept one (as the draft has them)."""
    keep = keeper(notes).id
    return relink(body, {n.id for n in notes} - {keep}, keep)


# -- keeper ------------------------------------------------------------------------------


def test_the_oldest_note_is_kept() -> None:
    notes = [note("b-new", 300), note("c-old", 100), note("a-mid", 200)]
    assert keeper(notes).id == "c-old"


def test_a_tie_is_broken_by_the_lowest_id() -> None:
    notes = [note("zeta", 100), note("alpha", 100), note("mid", 100)]
    assert keeper(notes).id == "alpha"


def test_no_created_at_falls_back_to_updated_at() -> None:
    # created_at 0 (an old note without it): its updated_at is its age.
    notes = [note("has-created", 500, 900), note("only-updated", 0, 400)]
    assert keeper(notes).id == "only-updated"
    # Neither time known: last, whatever its id.
    assert keeper([note("aaa-unknown"), note("zzz-known", 0, 10)]).id == "zzz-known"


ids = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)


@SETTINGS
@given(st.lists(st.tuples(ids, st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=8))
def test_keeper_is_the_minimum_by_age_then_id(rows: list[tuple[str, int, int]]) -> None:
    unique = {i: (c, u) for i, c, u in rows}
    notes = [note(i, c, u) for i, (c, u) in unique.items()]

    def age(n: Note) -> int:
        return n.created_at if n.created_at else (n.updated_at if n.updated_at else 2**63)

    best = min(notes, key=lambda n: (age(n), n.id))
    assert keeper(notes) is best
    assert keeper(list(reversed(notes))) is best  # the order given does not matter


# -- concat_draft --------------------------------------------------------------------------


def test_the_draft_keeps_every_original() -> None:
    old = note("old", 1, summary="Use pnpm", body="pnpm only.\n\nSince 2024.", tags=["tooling"])
    new = note(
        "new", 2, summary="Package manager", body="Not npm.\n\npnpm only.", tags=["js", "tooling"]
    )
    draft = concat_draft([new, old])
    assert draft.summary == "Use pnpm"
    assert draft.body == "pnpm only.\n\nSince 2024.\n\n## Package manager\n\nNot npm."
    assert draft.tags == ("tooling", "js")  # the oldest's first, in order, once each


def test_a_summary_repeating_another_is_no_heading() -> None:
    a = note("a", 1, summary="Deploys need approval", body="Two people.")
    b = note("b", 2, summary="deploys  NEED approval", body="From the team.")
    c = note("c", 3, summary="Approval rules", body="two   people.")
    draft = concat_draft([a, b, c])
    # "two   people." differs from "Two people." (case, spacing): kept, nothing is lost.
    assert draft.body == "Two people.\n\nFrom the team.\n\n## Approval rules\n\ntwo   people."


def test_tags_type_supersedes_and_private() -> None:
    a = note("a", 1, tags=["x", "y"], supersedes=["old-1"])
    b = note("b", 2, tags=["y", "z"], type="feedback", supersedes=["a", "old-2"], private=True)
    c = note("c", 3, tags=["w"], supersedes=["old-1", "c", "b"])
    draft = concat_draft([c, b, a])
    assert draft.tags == ("x", "y", "z", "w")
    assert draft.type is NoteType.FEEDBACK  # the oldest has none: the first given
    assert draft.supersedes == ("old-1", "old-2")  # merged ids are left out
    assert draft.private is True
    assert concat_draft([a, c]).private is False
    assert concat_draft([note("k", 1, type="project"), b]).type is NoteType.PROJECT


def test_links_to_merged_notes_point_at_the_kept_one() -> None:
    a = note("keep-me", 1, body="Overview.")
    b = note("gone", 2, body="See [[other]] and [[gone-too]].")
    c = note("gone-too", 3, body="Back to [[gone]].")
    draft = concat_draft([a, b, c])
    assert "[[gone]]" not in draft.body and "[[gone-too]]" not in draft.body
    assert "See [[other]] and [[keep-me]]." in draft.body
    assert "Back to [[keep-me]]." in draft.body


def test_paragraphs_equal_after_relinking_are_said_once() -> None:
    # Relinked before repeats are dropped: 'See [[b]].' and 'See [[a]].' are one paragraph.
    a = note("a", 1, summary="A", body="See [[b]].")
    b = note("b", 2, summary="B", body="See [[a]].")
    assert concat_draft([a, b]).body == "See [[a]].\n\n## B"


def test_a_heading_already_in_a_body_is_not_repeated() -> None:
    a = note("a", 1, summary="A", body="Intro.\n\n## Rollout")
    b = note("b", 2, summary="Rollout", body="Canary first.")
    assert paragraphs(concat_draft([a, b]).body) == ["Intro.", "## Rollout", "Canary first."]
    # A body's heading repeating the kept note's summary is said once (as the summary).
    c = note("c", 1, summary="Deploys", body="### deploys\n\nThrough staging.")
    assert concat_draft([c, b]).body == "Through staging.\n\n## Rollout\n\nCanary first."


def test_a_paragraph_one_note_repeats_is_kept_as_it_was() -> None:
    # Only what an earlier note already holds is dropped; one note's own text stays whole.
    a = note("a", 1, summary="A", body="Same.\n\nOther.\n\nSame.")
    b = note("b", 2, summary="B", body="Same.\n\nNew.")
    assert concat_draft([a, b]).body == "Same.\n\nOther.\n\nSame.\n\n## B\n\nNew."


# Paragraph texts from a small alphabet, so that they often repeat (within a note and
# across notes), with heading marks and links to the merged notes (n0..n4) and elsewhere.
words = st.sampled_from(
    ["alpha", "Alpha", "beta", "gamma  delta", "日本", "x y", "Zeta.", "[[n1]]", "[[n0]]", "[[zz]]"]
)
paragraph = st.tuples(
    st.sampled_from(["", "", "## ", "# "]), st.lists(words, min_size=1, max_size=3)
).map(lambda t: t[0] + " ".join(t[1]))
bodies = st.lists(paragraph, max_size=5).map("\n\n".join)
summaries = st.sampled_from(["One", "Two", "one", "Alpha", "beta", "Three things"])


@st.composite
def note_groups(draw: st.DrawFn) -> list[Note]:
    count = draw(st.integers(2, 5))
    return [
        Note(
            id=f"n{i}",
            summary=draw(summaries),
            body=draw(bodies),
            tags=draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=3)),
            created_at=draw(st.integers(0, 3)),
            updated_at=draw(st.integers(0, 3)),
            private=draw(st.booleans()),
        )
        for i in range(count)
    ]


@SETTINGS
@given(note_groups())
def test_no_paragraph_is_lost_or_repeated(notes: list[Note]) -> None:
    draft = concat_draft(notes)
    out = paragraphs(draft.body)
    keys = [key(p) for p in out]
    # Said once, unless one original itself says it more often (its own text stays whole).
    most: Counter[str] = Counter()
    for n in notes:
        for k, count in Counter(key(p) for p in paragraphs(relinked(notes, n.body))).items():
            most[k] = max(most[k], count)
    for k, count in Counter(keys).items():
        assert count <= max(1, most[k]), (k, out)
    # Every paragraph of every original is there (or is the merged note's summary, or the
    # heading made of an original's summary).
    said = set(keys) | {title(draft.summary)}
    for n in notes:
        for p in paragraphs(relinked(notes, n.body)):
            assert key(p) in said, (p, n.id, draft.body)
    gone = {n.id for n in notes} - {keeper(notes).id}
    assert not any(f"[[{i}]]" in draft.body for i in gone)
    # Every other original's summary is there too (as a heading, or said already).
    for n in notes:
        assert title(n.summary) in said
    assert draft.summary == keeper(notes).summary
    assert draft.tags == tuple(dict.fromkeys(t for t in _ordered(notes) for t in t.tags))
    assert draft.private is any(n.private for n in notes)


def _ordered(notes: list[Note]) -> list[Note]:
    keep = keeper(notes)
    rest = sorted(
        (n for n in notes if n is not keep),
        key=lambda n: (n.created_at or n.updated_at or 2**63, n.id),
    )
    return [keep, *rest]


@SETTINGS
@given(note_groups())
def test_the_keepers_body_comes_first(notes: list[Note]) -> None:
    keep = keeper(notes)
    fresh = [p for p in paragraphs(relinked(notes, keep.body)) if key(p) != title(keep.summary)]
    out = paragraphs(concat_draft(notes).body)
    assert [key(p) for p in out[: len(fresh)]] == [key(p) for p in fresh]


def _note(note_id: str, summary: str, body: str, at: int) -> Note:
    return Note(id=note_id, summary=summary, body=body, created_at=at, updated_at=at)


def test_the_concat_draft_keeps_code_blocks_whole() -> None:
    a = _note("setup-a", "Setup script", "Set the counter:\n\nx = 1", 1)
    code = "```python\nimport os\n\nx = 1\n\nprint(os.environ['HOME'], x)\n```"
    b = _note("setup-b", "Setup script steps", code, 2)
    draft = concat_draft([a, b])
    assert code in draft.body, draft.body


def test_the_concat_draft_keeps_paragraphs_that_differ_in_case_or_indentation() -> None:
    a = _note("cfg-a", "Config path", "The config lives in /etc/App/config.yml", 1)
    b = _note("cfg-b", "Config path again", "The config lives in /etc/app/config.yml", 2)
    assert "/etc/app/config.yml" in concat_draft([a, b]).body
    c = _note("py-a", "Deploy loop", "```\nif ok:\n    deploy()\nrollback()\n```", 1)
    d = _note("py-b", "Deploy loop fixed", "```\nif ok:\n    deploy()\n    rollback()\n```", 2)
    assert "    rollback()" in concat_draft([c, d]).body


# -- relink --------------------------------------------------------------------------------


def test_relink_rewrites_exact_link_ids_only() -> None:
    body = "[[a]] [[ab]] [[a-b]] [[ba]] [[A]] [[ a ]] [a] a [[a]]s `[[a]]` [[[a]]]"
    assert relink(body, {"a"}, "keep") == (
        "[[keep]] [[ab]] [[a-b]] [[ba]] [[A]] [[ a ]] [a] a [[keep]]s `[[keep]]` [[[keep]]]"
    )
    assert relink(body, set(), "keep") == body
    assert relink("[[x]] [[y]] [[z]]", {"x", "z"}, "k") == "[[k]] [[y]] [[k]]"


link_ids = st.sampled_from(["a", "ab", "b", "a-b", "ba", "k"])
pieces = st.lists(
    st.one_of(link_ids.map(lambda i: f"[[{i}]]"), st.sampled_from([" ", "a", "[", "]", "x\n"])),
    max_size=12,
)


@SETTINGS
@given(pieces, st.sets(link_ids, max_size=3))
def test_relink_changes_only_the_gone_links(parts: list[str], gone: set[str]) -> None:
    body = "".join(parts)
    out = relink(body, gone, "keep")
    expected = "".join("[[keep]]" if p.startswith("[[") and p[2:-2] in gone else p for p in parts)
    # Pieces only make links where a piece is one; adjacent brackets can make a new one.
    if "[[" not in "".join(p for p in parts if not p.startswith("[[")) and "[[[" not in body:
        assert out == expected
    assert re.sub(r"\[\[[a-z0-9-]+\]\]", "L", out) == re.sub(r"\[\[[a-z0-9-]+\]\]", "L", body)


# -- the plan file -------------------------------------------------------------------------


def a_plan(**changes: Any) -> MergePlan:
    values: dict[str, Any] = {
        "scope": Scope.PROJECT,
        "keep": "old-a1",
        "notes": (PlannedNote("old-a1", "r" * 64, "h" * 64), PlannedNote("new-b2", "s", "t")),
        "draft": MergeDraft("Summary", "Body\n\ntext", NoteType.PROJECT, ("x",), ("prev",), True),
        "source": "concat",
        "warnings": ("w",),
    }
    values.update(changes)
    return MergePlan(**values)


def test_the_plan_file_shape() -> None:
    doc = plan_to_json(a_plan())
    assert doc == {
        "format": PLAN_FORMAT,
        "version": 1,
        "scope": "project",
        "keep": "old-a1",
        "notes": [
            {"id": "old-a1", "revision": "r" * 64, "hash": "h" * 64},
            {"id": "new-b2", "revision": "s", "hash": "t"},
        ],
        "source": "concat",
        "draft": {
            "summary": "Summary",
            "type": "project",
            "tags": ["x"],
            "supersedes": ["prev"],
            "private": True,
            "body": "Body\n\ntext",
        },
        "warnings": ["w"],
    }
    assert plan_from_json(doc) == a_plan()


texts = st.text(st.characters(blacklist_categories=["Cs"]), max_size=30)
valid_ids = st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}", fullmatch=True).filter(
    lambda s: ".." not in s and s not in {"con", "nul", "aux", "prn"}
)


@st.composite
def plans(draw: st.DrawFn) -> MergePlan:
    from memdir.core import is_valid_id

    chosen = draw(st.lists(valid_ids.filter(is_valid_id), min_size=2, max_size=6, unique=True))
    return MergePlan(
        scope=draw(st.sampled_from(list(Scope))),
        keep=draw(st.sampled_from(chosen)),
        notes=tuple(PlannedNote(i, draw(texts), draw(texts)) for i in chosen),
        draft=MergeDraft(
            summary=draw(texts),
            body=draw(texts),
            type=draw(st.none() | st.sampled_from(list(NoteType))),
            tags=tuple(draw(st.lists(texts, max_size=3))),
            supersedes=tuple(draw(st.lists(texts, max_size=3))),
            private=draw(st.booleans()),
        ),
        source=draw(st.sampled_from(["concat", "llm", "edited"])),
        warnings=tuple(draw(st.lists(texts, max_size=2))),
    )


@SETTINGS
@given(plans())
def test_a_plan_round_trips(plan: MergePlan) -> None:
    import json

    doc = plan_to_json(plan)
    assert plan_from_json(doc) == plan
    assert plan_from_json(json.loads(json.dumps(doc))) == plan  # through the file's text too


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    *parents, last = path.split(".")
    where: Any = out
    for part in parents:
        where = where[int(part)] if isinstance(where, list) else where[part]
    if value is _DROP:
        del where[last]
    elif isinstance(where, list):
        where[int(last)] = value
    else:
        where[last] = value
    return out


_DROP = object()
GOOD = plan_to_json(a_plan())


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("format", "something-else", "not a merge plan"),
        ("format", _DROP, "not a merge plan"),
        ("version", 2, "version 2"),
        ("version", "1", "version '1'"),
        ("version", _DROP, "version None"),
        ("scope", "team", "scope must be"),
        ("scope", None, "scope"),
        ("keep", _DROP, "keep is missing"),
        ("keep", 7, "keep is missing or of the wrong type"),
        ("keep", "elsewhere-c3", "keeps 'elsewhere-c3', which it does not merge"),
        ("notes", _DROP, "notes is missing"),
        ("notes", {"old-a1": {}}, "notes is missing or of the wrong type"),
        ("notes.0", "old-a1", r"notes\[0\] is not an object"),
        ("notes.0.id", "../x", r"notes\[0\].id '../x' is not a note id"),
        ("notes.0.id", "a/b", "is not a note id"),
        ("notes.0.id", "Old-A1", "is not a note id"),
        ("notes.0.id", _DROP, r"notes\[0\].id is missing"),
        ("notes.1.id", "old-a1", "names the same note twice"),
        ("notes.1.revision", None, r"notes\[1\].revision is missing"),
        ("notes.1.hash", 5, r"notes\[1\].hash is missing"),
        ("draft", _DROP, "draft is missing"),
        ("draft", "a body", "draft is missing or of the wrong type"),
        ("draft.summary", _DROP, "draft.summary is missing"),
        ("draft.body", ["a"], "draft.body is missing"),
        ("draft.type", "memo", "draft.type 'memo' is no note type"),
        ("draft.type", 3, "draft.type must be a note type or null"),
        ("draft.private", "yes", "draft.private must be true or false"),
        ("draft.private", 1, "draft.private must be true or false"),
        ("draft.private", None, "draft.private must be true or false"),
        ("draft.tags", "x", "draft.tags must be a list of strings"),
        ("draft.tags", [1], "draft.tags must be a list of strings"),
        ("draft.supersedes", [None], "draft.supersedes must be a list of strings"),
        ("warnings", "w", "warnings must be a list of strings"),
    ],
)
def test_a_bad_plan_is_refused_naming_the_problem(path: str, value: Any, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        plan_from_json(_set(GOOD, path, value))


def test_one_note_and_too_many_notes_are_refused() -> None:
    one = _set(GOOD, "notes", GOOD["notes"][:1])
    with pytest.raises(InvalidInput, match="at least two different notes"):
        plan_from_json(one)
    with pytest.raises(InvalidInput, match="at least two"):
        plan_from_json(_set(GOOD, "notes", []))
    many = [{"id": f"n-{i}", "revision": "r", "hash": "h"} for i in range(MAX_MERGED + 1)]
    doc = _set(_set(GOOD, "notes", many), "keep", "n-0")
    with pytest.raises(InvalidInput, match=f"at most {MAX_MERGED} notes \\({MAX_MERGED + 1}"):
        plan_from_json(doc)
    doc = _set(_set(GOOD, "notes", many[:MAX_MERGED]), "keep", "n-0")
    assert len(plan_from_json(doc).notes) == MAX_MERGED


def test_not_an_object_is_refused() -> None:
    for value in (None, [], [GOOD], "plan", 3, True):
        with pytest.raises(InvalidInput, match="not a merge plan"):
            plan_from_json(value)


def test_optional_fields_have_defaults() -> None:
    doc = copy.deepcopy(GOOD)
    for name in ("source", "warnings"):
        del doc[name]
    for name in ("type", "tags", "supersedes", "private"):
        del doc["draft"][name]
    plan = plan_from_json(doc)
    assert plan.source == "concat" and plan.warnings == ()
    assert plan.draft == MergeDraft("Summary", "Body\n\ntext")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


@SETTINGS
@given(json_values)
def test_any_json_value_is_a_plan_or_invalid_input(value: Any) -> None:
    try:
        plan = plan_from_json(value)
    except InvalidInput:
        return
    assert isinstance(plan, MergePlan)  # only a real plan gets through


_PATHS = [
    "format",
    "version",
    "scope",
    "keep",
    "notes",
    "notes.0",
    "notes.1",
    "notes.0.id",
    "notes.0.revision",
    "notes.1.hash",
    "source",
    "draft",
    "draft.summary",
    "draft.body",
    "draft.type",
    "draft.tags",
    "draft.supersedes",
    "draft.private",
    "warnings",
]


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(_PATHS), json_values), min_size=1, max_size=4))
def test_a_damaged_plan_is_a_plan_or_invalid_input(damage: list[tuple[str, Any]]) -> None:
    doc: Any = copy.deepcopy(GOOD)
    for path, value in damage:
        try:
            doc = _set(doc, path, value)
        except (KeyError, IndexError, TypeError, ValueError):
            continue  # an earlier change removed what this one names
    try:
        plan = plan_from_json(doc)
    except InvalidInput:
        return
    # Whatever is accepted is a plan `apply` can check: 2+ distinct valid ids, keep among them.
    from memdir.core import is_valid_id

    named = [n.id for n in plan.notes]
    assert len(set(named)) == len(named) >= 2 and plan.keep in named
    assert all(is_valid_id(i) for i in named)
    assert isinstance(plan.draft.private, bool)


def test_a_boolean_version_is_refused() -> None:
    with pytest.raises(InvalidInput, match="version True"):
        plan_from_json(_set(GOOD, "version", True))
