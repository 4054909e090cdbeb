"""§7.4 three-way merge: bodies line by line, notes field by field, never last-writer-wins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memdir.core import Note, NoteType
from memdir.core.note import Scope
from memdir.sync.merge import NoteMerge, TextMerge, merge_notes, merge_text

LIMIT = 131072
MARKERS = ("<<<<<<< this machine", "||||||| baseline", "=======", ">>>>>>> server")


def note(**fields: Any) -> Note:
    """A note with defaults for every field a test does not care about."""
    values: dict[str, Any] = {
        "id": "n1",
        "summary": "a summary",
        "body": "one\ntwo\nthree\nfour\nfive",
        "created_at": 1000,
        "updated_at": 1000,
    }
    values.update(fields)
    return Note(**values)


def merged(base: Note | None, local: Note | None, server: Note | None) -> NoteMerge:
    return merge_notes(base, local, server, max_body_bytes=LIMIT)


def clean_result(base: Note | None, local: Note | None, server: Note | None) -> Note:
    outcome = merged(base, local, server)
    assert outcome.clean, outcome.conflicts
    assert outcome.conflicts == ()
    assert outcome.result is not None
    return outcome.result


# --- merge_text ---------------------------------------------------------------------------


def test_text_edits_in_separate_places_combine() -> None:
    out = merge_text("1\n2\n3\n4\n5", "ONE\n2\n3\n4\n5", "1\n2\n3\n4\nFIVE")
    assert out == TextMerge("ONE\n2\n3\n4\nFIVE", 0)
    assert out.clean


def test_text_same_line_conflicts_with_markers_and_all_three_versions() -> None:
    out = merge_text("1\n2\n3", "1\nlocal\n3", "1\nserver\n3")
    assert not out.clean
    assert out.conflicts == 1
    assert out.text == (
        "1\n<<<<<<< this machine\nlocal\n||||||| baseline\n2\n=======\nserver\n>>>>>>> server\n3"
    )


def test_text_adjacent_lines_conflict() -> None:
    out = merge_text("1\n2\n3\n4", "1\nTWO\n3\n4", "1\n2\nTHREE\n4")
    assert out.conflicts == 1
    assert "TWO" in out.text
    assert "THREE" in out.text


def test_text_one_unchanged_line_between_edits_is_enough() -> None:
    out = merge_text("1\n2\n3\n4\n5", "1\nTWO\n3\n4\n5", "1\n2\n3\nFOUR\n5")
    assert out == TextMerge("1\nTWO\n3\nFOUR\n5", 0)


def test_text_two_conflicting_regions_are_counted() -> None:
    base = "1\n2\n3\n4\n5\n6\n7"
    out = merge_text(base, "A\n2\n3\n4\n5\n6\nG", "a\n2\n3\n4\n5\n6\ng")
    assert out.conflicts == 2
    assert out.text.count("<<<<<<< this machine\n") == 2


def test_text_insertions_at_both_ends_combine() -> None:
    out = merge_text("a\nb\nc", "top\na\nb\nc", "a\nb\nc\nbottom")
    assert out == TextMerge("top\na\nb\nc\nbottom", 0)


def test_text_append_below_unterminated_last_line_is_not_an_edit_of_it() -> None:
    # Note bodies never end in a newline: appending must not clash with an edit two lines up.
    out = merge_text("a\nb\nc", "A\nb\nc", "a\nb\nc\nd")
    assert out == TextMerge("A\nb\nc\nd", 0)


def test_text_both_append_different_lines_conflict() -> None:
    out = merge_text("a", "a\nlocal", "a\nserver")
    assert out.conflicts == 1


def test_text_same_change_on_both_sides_is_clean() -> None:
    assert merge_text("a\nb", "a\nB", "a\nB") == TextMerge("a\nB", 0)


def test_text_deletion_on_one_side_goes() -> None:
    assert merge_text("a\nb\nc\nd", "a\nc\nd", "a\nb\nc\nD") == TextMerge("a\nc\nD", 0)


def test_text_markers_on_their_own_lines_without_trailing_newline() -> None:
    out = merge_text("x", "local", "server")
    assert out.conflicts == 1
    lines = out.text.split("\n")
    for marker in MARKERS:
        assert marker in lines, (marker, lines)
    assert lines[0] == MARKERS[0]
    assert lines[-1] == MARKERS[-1]
    assert "local" in lines
    assert "x" in lines
    assert "server" in lines


def test_text_markers_on_their_own_lines_with_mixed_trailing_newlines() -> None:
    out = merge_text("x\n", "local", "server\n")
    assert not out.clean
    lines = out.text.split("\n")
    for marker in MARKERS:
        assert marker in lines


def test_text_trailing_newline_change_is_merged_like_a_change() -> None:
    assert merge_text("a\nb", "a\nb\n", "A\nb") == TextMerge("A\nb\n", 0)
    assert merge_text("a\nb\n", "a\nb\n", "A\nb") == TextMerge("A\nb", 0)


@pytest.mark.parametrize(
    ("base", "local", "server", "expected"),
    [
        ("", "", "", ""),
        ("", "", "new", "new"),
        ("", "new", "", "new"),
        ("old", "", "old", ""),
        ("old", "old", "", ""),
        ("a\n\nb", "a\n\nb", "a\n\n\nb", "a\n\n\nb"),
    ],
)
def test_text_empty_and_blank_inputs(base: str, local: str, server: str, expected: str) -> None:
    assert merge_text(base, local, server) == TextMerge(expected, 0)


def test_text_empty_base_both_sides_different_conflict() -> None:
    out = merge_text("", "mine", "theirs")
    assert out.conflicts == 1
    assert out.text.split("\n") == [
        "<<<<<<< this machine",
        "mine",
        "||||||| baseline",
        "=======",
        "theirs",
        ">>>>>>> server",
    ]


def test_text_cjk_emoji_and_unicode_line_separators_stay_in_their_lines() -> None:
    base = "日本語\n🙂 x\u2028y\nend"
    local = "日本語のテキスト\n🙂 x\u2028y\nend"
    server = "日本語\n🙂 x\u2028y\nend 👩‍👩‍👧"
    out = merge_text(base, local, server)
    assert out == TextMerge("日本語のテキスト\n🙂 x\u2028y\nend 👩‍👩‍👧", 0)


def test_text_separate_edits_in_a_long_text_with_many_blank_lines_combine() -> None:
    # difflib's autojunk never starts a match on a line found in over 1% of a 200+ line
    # text (a blank line): the blank run between the two local edits would look replaced,
    # and the server's insertion inside that run would conflict.
    lines = "\n\n".join(f"paragraph {i}" for i in range(150)).split("\n")
    at = lines.index("paragraph 50")
    lines[at + 1 : at + 2] = ["", "", "", ""]
    nxt = lines.index("paragraph 51")
    local = list(lines)
    local[at] = "LOCAL 50"
    local[nxt] = "LOCAL 51"
    server = list(lines)
    server.insert(at + 3, "SERVER")
    out = merge_text("\n".join(lines), "\n".join(local), "\n".join(server))
    expected = list(local)
    expected.insert(at + 3, "SERVER")
    assert out == TextMerge("\n".join(expected), 0)


# --- merge_notes: equal, missing and one-sided --------------------------------------------


def test_both_missing_is_nothing() -> None:
    assert merged(None, None, None) == NoteMerge(None, ())
    assert merged(note(), None, None) == NoteMerge(None, ())


def test_equal_sides_give_local_whatever_the_base() -> None:
    local = note(body="same", updated_at=5)
    server = note(body="same", updated_at=9)
    assert merged(note(body="old"), local, server).result is local
    assert merged(None, local, server).result is local


def test_equality_ignores_timestamps() -> None:
    base = note(updated_at=1)
    server = note(summary="server summary", updated_at=2)
    local = note(updated_at=99)  # touched, content unchanged
    assert clean_result(base, local, server).summary == "server summary"


def test_one_sided_change_is_taken_from_either_side() -> None:
    base = note()
    changed = note(summary="changed", tags=("x",))
    assert clean_result(base, base, changed).same_content(changed)
    assert clean_result(base, changed, base).same_content(changed)


def test_server_change_keeps_this_machines_location() -> None:
    path = Path("/tmp/n1.md")
    local = note().located(Scope.USER, path)
    result = clean_result(note(), local, note(summary="changed"))
    assert result.summary == "changed"
    assert result.scope is Scope.USER
    assert result.path == path


def test_no_baseline_one_side_present_is_taken() -> None:
    only = note(summary="only")
    assert merged(None, only, None) == NoteMerge(only, ())
    assert merged(None, None, only) == NoteMerge(only, ())


def test_no_baseline_both_present_and_different_conflict_with_a_draft() -> None:
    local = note(summary="mine", body="my body", tags=("a",))
    server = note(summary="theirs", body="their body", tags=("b",))
    outcome = merged(None, local, server)
    assert not outcome.clean
    assert outcome.result is None
    assert outcome.conflicts == ("no baseline copy: both sides have different versions",)
    assert outcome.draft is not None
    assert outcome.draft.summary == "mine"
    assert set(outcome.draft.tags) == {"a", "b"}
    assert "my body" in outcome.draft.body
    assert "their body" in outcome.draft.body
    assert MARKERS[0] in outcome.draft.body.split("\n")


def test_deleted_here_and_unchanged_there_is_deleted() -> None:
    base = note()
    assert merged(base, None, note(updated_at=77)) == NoteMerge(None, ())


def test_deleted_there_and_unchanged_here_is_deleted() -> None:
    base = note()
    assert merged(base, note(updated_at=77), None) == NoteMerge(None, ())


def test_edit_against_deletion_keeps_the_edit_both_directions() -> None:
    base = note()
    edited = note(body="edited")
    assert merged(base, None, edited) == NoteMerge(edited, ())
    assert merged(base, edited, None) == NoteMerge(edited, ())


# --- merge_notes: field by field ----------------------------------------------------------


def test_summary_from_the_side_that_changed_it_body_from_the_other() -> None:
    base = note()
    local = note(summary="better summary")
    server = note(body="one\ntwo\nthree\nfour\nFIVE")
    result = clean_result(base, local, server)
    assert result.summary == "better summary"
    assert result.body == "one\ntwo\nthree\nfour\nFIVE"
    # and the other way round
    result = clean_result(base, server, local)
    assert result.summary == "better summary"
    assert result.body == "one\ntwo\nthree\nfour\nFIVE"


def test_body_edits_in_separate_places_combine() -> None:
    base = note()
    local = note(body="ONE\ntwo\nthree\nfour\nfive")
    server = note(body="one\ntwo\nthree\nfour\nFIVE")
    assert clean_result(base, local, server).body == "ONE\ntwo\nthree\nfour\nFIVE"


def test_body_same_line_conflicts() -> None:
    base = note()
    outcome = merged(base, note(body="one\nTWO here"), note(body="one\nTWO there"))
    assert outcome.conflicts == ("both sides changed the same or adjacent lines of the body",)
    assert outcome.result is None


def test_body_adjacent_lines_conflict_with_a_marked_draft() -> None:
    base = note()
    local = note(body="one\nTWO\nthree\nfour\nfive", summary="local summary")
    server = note(body="one\ntwo\nTHREE\nfour\nfive", tags=("new",))
    outcome = merged(base, local, server)
    assert outcome.conflicts == ("both sides changed the same or adjacent lines of the body",)
    draft = outcome.draft
    assert draft is not None
    lines = draft.body.split("\n")
    for marker in MARKERS:
        assert marker in lines
    assert draft.summary == "local summary"
    assert draft.tags == ("new",)


def test_summary_clash_conflicts_and_draft_keeps_local_summary() -> None:
    base = note()
    outcome = merged(base, note(summary="mine"), note(summary="theirs"))
    assert outcome.conflicts == ("both sides changed the summary",)
    assert outcome.result is None
    assert outcome.draft is not None
    assert outcome.draft.summary == "mine"


def test_type_clash_conflicts_and_draft_keeps_local_type() -> None:
    base = note(type=NoteType.PROJECT)
    outcome = merged(base, note(type=NoteType.USER), note(type=NoteType.REFERENCE))
    assert outcome.conflicts == ("both sides changed the type",)
    assert outcome.draft is not None
    assert outcome.draft.type is NoteType.USER


def test_type_from_the_side_that_changed_it() -> None:
    base = note(type=NoteType.PROJECT)
    local = note(type=None, body="one\ntwo\nthree\nfour\nFIVE")
    server = note(type=NoteType.PROJECT, summary="changed")
    result = clean_result(base, local, server)
    assert result.type is None
    assert result.summary == "changed"
    assert clean_result(base, server, local).type is None


def test_private_from_the_side_that_changed_it() -> None:
    base = note()
    result = clean_result(base, note(private=True), note(summary="changed"))
    assert result.private is True
    assert result.summary == "changed"


def test_several_clashes_are_all_reported() -> None:
    base = note()
    local = note(summary="mine", type=NoteType.USER, body="one\nX")
    server = note(summary="theirs", type=NoteType.PROJECT, body="one\nY")
    assert merged(base, local, server).conflicts == (
        "both sides changed the summary",
        "both sides changed the type",
        "both sides changed the same or adjacent lines of the body",
    )


def test_tags_added_on_each_side_combine() -> None:
    base = note(tags=("a", "b"))
    local = note(tags=("a", "b", "local"), summary="changed")
    server = note(tags=("a", "b", "server"))
    result = clean_result(base, local, server)
    assert result.tags == ("a", "b", "local", "server")


def test_tags_removed_on_one_side_go() -> None:
    base = note(tags=("a", "b", "c"))
    local = note(tags=("a", "c"), summary="changed")  # removed b
    server = note(tags=("a", "b", "c", "d"))  # added d
    assert clean_result(base, local, server).tags == ("a", "c", "d")
    # removed on the server, added here
    assert clean_result(base, server, local).tags == ("a", "c", "d")


def test_tags_removed_on_one_side_and_kept_on_the_other_go_even_if_other_changed_body() -> None:
    base = note(tags=("a", "b"))
    local = note(tags=("b",), summary="changed")
    server = note(tags=("a", "b"), body="edited")
    assert clean_result(base, local, server).tags == ("b",)


def test_tags_compare_case_insensitively_and_keep_the_changed_spelling() -> None:
    base = note(tags=("api", "old"))
    local = note(tags=("API", "old"), summary="changed")  # respelled api
    server = note(tags=("api",))  # removed old
    result = clean_result(base, local, server)
    assert result.tags == ("API",)
    # the server respelled, this machine did not
    result = clean_result(base, server, local)
    assert result.tags == ("API",)


def test_tags_added_on_both_sides_in_different_case_appear_once() -> None:
    base = note(tags=())
    local = note(tags=("Design",), summary="changed")
    server = note(tags=("design", "x"))
    assert clean_result(base, local, server).tags == ("Design", "x")


def test_tag_order_local_first_then_server_additions_in_server_order() -> None:
    base = note(tags=("m",))
    local = note(tags=("z", "m", "a"), summary="changed")
    server = note(tags=("q", "m", "b"))
    assert clean_result(base, local, server).tags == ("z", "m", "a", "q", "b")


def test_supersedes_merge_as_sets() -> None:
    base = note(supersedes=("old-1", "old-2"))
    local = note(supersedes=("old-1", "old-2", "new-here"), summary="changed")
    server = note(supersedes=("old-2",))
    assert clean_result(base, local, server).supersedes == ("old-2", "new-here")


def test_extra_keys_added_changed_and_removed_per_side() -> None:
    base = note(extra=(("keep", 1), ("drop", 2), ("edit", 3)))
    local = note(extra=(("keep", 1), ("edit", 3), ("mine", "m")), summary="changed")
    server = note(extra=(("keep", 1), ("drop", 2), ("edit", 30), ("theirs", [1, 2])))
    result = clean_result(base, local, server)
    assert result.extra == (("keep", 1), ("edit", 30), ("mine", "m"), ("theirs", [1, 2]))


def test_extra_key_clash_conflicts_naming_the_key() -> None:
    base = note(extra=(("status", "draft"),))
    local = note(extra=(("status", "done"),))
    server = note(extra=(("status", "dropped"),))
    outcome = merged(base, local, server)
    assert outcome.conflicts == ("both sides changed the frontmatter key 'status'",)
    assert outcome.draft is not None
    assert outcome.draft.extra == (("status", "done"),)


def test_extra_key_removed_here_and_changed_there_conflicts() -> None:
    base = note(extra=(("status", "draft"),))
    outcome = merged(base, note(extra=()), note(extra=(("status", "done"),)))
    assert outcome.conflicts == ("both sides changed the frontmatter key 'status'",)


def test_extra_key_added_on_both_sides_with_the_same_value_is_clean() -> None:
    base = note()
    local = note(extra=(("k", {"a": 1}),), summary="changed")
    server = note(extra=(("k", {"a": 1}),), body="edited")
    assert clean_result(base, local, server).extra == (("k", {"a": 1}),)


def test_timestamps_smallest_created_largest_updated() -> None:
    base = note(created_at=500, updated_at=600)
    local = note(created_at=0, updated_at=900, summary="changed")
    server = note(created_at=700, updated_at=800, body="edited")
    result = clean_result(base, local, server)
    assert result.created_at == 500
    assert result.updated_at == 900


def test_timestamps_zero_created_is_ignored_unless_all_are_zero() -> None:
    base = note(created_at=0, updated_at=0)
    local = note(created_at=0, updated_at=0, summary="changed")
    server = note(created_at=300, updated_at=0, body="edited")
    assert clean_result(base, local, server).created_at == 300
    server = note(created_at=0, updated_at=0, body="edited")
    assert clean_result(base, local, server).created_at == 0


def test_merged_note_keeps_id_and_this_machines_location() -> None:
    path = Path("/tmp/n1.md")
    base = note()
    local = note(summary="changed").located(Scope.PROJECT, path)
    result = clean_result(base, local, note(body="edited"))
    assert result.id == "n1"
    assert result.scope is Scope.PROJECT
    assert result.path == path


# --- merge_notes: quota -------------------------------------------------------------------


def test_merge_that_grows_the_body_past_the_limit_conflicts() -> None:
    base = note(body="head\nmiddle\ntail")
    local = note(body="head\n" + "L" * 60 + "\nmiddle\ntail")
    server = note(body="head\nmiddle\n" + "S" * 60 + "\ntail")
    outcome = merge_notes(base, local, server, max_body_bytes=100)
    size = len(("head\n" + "L" * 60 + "\nmiddle\n" + "S" * 60 + "\ntail").encode())
    assert outcome.conflicts == (f"the merged body is {size} bytes, over the 100-byte limit",)
    assert outcome.result is None
    assert outcome.draft is not None
    assert outcome.draft.body.count("L" * 60) == 1
    # The same merge under a larger limit is clean.
    assert merge_notes(base, local, server, max_body_bytes=size).clean


def test_merge_not_larger_than_the_larger_side_is_allowed_over_the_limit() -> None:
    # Both sides are already over the limit; the merge does not grow the note past them.
    base = note(body="a\n" + "x" * 200 + "\nb")
    local = note(body="A\n" + "x" * 200 + "\nb")
    server = note(body="a\n" + "x" * 200 + "\nB")
    outcome = merge_notes(base, local, server, max_body_bytes=100)
    assert outcome.clean
    assert outcome.result is not None
    assert outcome.result.body == "A\n" + "x" * 200 + "\nB"


def test_quota_counts_utf8_bytes_not_characters() -> None:
    base = note(body="a\nb\nc")
    local = note(body="日本\nb\nc")  # 6 + 4 bytes
    server = note(body="a\nb\n語語")  # 4 + 6 bytes
    assert not merge_notes(base, local, server, max_body_bytes=11).clean  # 6+1+1+1+6 = 15
    assert merge_notes(base, local, server, max_body_bytes=15).clean


# --- odd inputs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base_body", "local_body", "server_body"),
    [
        ("", "", "x"),
        ("", "a", "b"),
        ("x", "", ""),
        ("🙂", "🙂👩‍👩‍👧", "🙂\n日本"),
        ("a\n\n\nb", "a\n\nb", "a\n\n\n\nb"),
        ("line\u2028other", "line\u2028OTHER", "LINE\u2028other"),
    ],
)
def test_odd_bodies_never_raise(base_body: str, local_body: str, server_body: str) -> None:
    outcome = merged(
        note(body=base_body), note(body=local_body, summary="l"), note(body=server_body)
    )
    assert outcome.clean == (outcome.result is not None)
    assert outcome.clean or outcome.draft is not None
