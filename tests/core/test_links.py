"""Tests for `core/links.py`: `[[note-id]]` links found in a body."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.core import Scope
from memdir.core.links import LINK_PATTERN, Link, LinkReport, extract_links


def test_links_in_first_seen_order_without_repeats() -> None:
    body = "See [[b-note]], then [[a-note]] and [[b-note]] again.\n[[c1]]"
    assert extract_links(body) == ("b-note", "a-note", "c1")


def test_only_valid_ids_are_links() -> None:
    body = "[[Upper]] [[-lead]] [[has space]] [[]] [ [x] ] [[a_b]] [[" + "a" * 81 + "]]"
    assert extract_links(body) == ()
    assert extract_links("[[" + "a" * 80 + "]]") == ("a" * 80,)
    assert extract_links("") == ()


def test_a_link_inside_brackets_is_found_once() -> None:
    assert extract_links("[[[x-1]]]") == ("x-1",)


_IDS = st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}", fullmatch=True)


@given(st.lists(_IDS, max_size=8), st.sampled_from([" ", "\n", ", "]))
def test_every_linked_id_comes_back_once(ids: list[str], sep: str) -> None:
    body = sep.join(f"[[{i}]]" for i in ids)
    assert extract_links(body) == tuple(dict.fromkeys(ids))
    assert all(LINK_PATTERN.fullmatch(f"[[{i}]]") for i in ids)


# -- the link report --------------------------------------------------------------------------


def test_dangling_links_are_unresolved_ones_that_are_not_hidden() -> None:
    report = LinkReport(
        "source",
        outgoing=(
            Link("here", Scope.PROJECT, "Here"),
            Link("nowhere", None, None),
            Link("secret-one", None, None),
            Link("gone", None, None),
        ),
        backlinks=(),
        hidden=("secret-one",),
    )
    assert report.dangling == ("nowhere", "gone")
    assert LinkReport("x", (), ()).dangling == ()


def test_frozen_records_refuse_changes() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Link("a", None, None).target = "b"  # type: ignore[misc]
