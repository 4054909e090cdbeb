"""The labelled sets of issue 27 (tests/tidy/sets/): well formed, and the detector keeps
its precision on them (bench/tidy_sets.py prints every figure, per language)."""

from __future__ import annotations

import importlib

import pytest
from tests.tidy.sets import LANGUAGES, Pair, Topic

from memdir.tidy.contradiction import find_contradiction


def _load(lang: str) -> tuple[list[Pair], list[Topic]]:
    module = importlib.import_module(f"tests.tidy.sets.{lang}")
    return list(module.PAIRS), list(module.TOPICS)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_language_has_a_broad_labelled_set(lang: str) -> None:
    pairs, topics = _load(lang)
    assert len(pairs) >= 40 and all(p.lang == lang for p in pairs)
    assert 15 <= sum(p.contradicts for p in pairs) <= len(pairs) - 15
    assert sum(t.same for t in topics) >= 14 and sum(not t.same for t in topics) >= 14
    assert all(2 <= len(t.notes) <= 6 for t in topics)
    ids = [p.id for p in pairs] + [t.id for t in topics]
    assert len(ids) == len(set(ids))


def test_notes_close_in_meaning_are_judged_with_precision() -> None:
    tp = fp = fn = 0
    for lang in LANGUAGES:
        for pair in _load(lang)[0]:
            a, b = (f"{n[0]}\n{n[1]}" for n in (pair.a, pair.b))
            found = find_contradiction(a, b, related=True) is not None
            tp += found and pair.contradicts
            fp += found and not pair.contradicts
            fn += not found and pair.contradicts
    # measured when this test was written: precision 0.86, recall 0.52; since round 3's
    # value reading: precision 0.93, recall 0.65
    assert tp / (tp + fp) >= 0.85
    assert tp / (tp + fn) >= 0.6


def test_the_held_aside_pairs_are_broad_and_judged_with_precision() -> None:
    """The pairs written blind to the detector (never tuned on): every language, hard
    negatives, and the detector's figures on them kept (0.87 / 0.45 when written; before
    round 3's value reading 0.78 / 0.32)."""
    from tests.tidy.sets.aside import PAIRS

    assert len({p.id for p in PAIRS}) == len(PAIRS)
    for lang in LANGUAGES:
        mine = [p for p in PAIRS if p.lang == lang]
        assert sum(p.contradicts for p in mine) >= 16 and sum(not p.contradicts for p in mine) >= 14
    tp = fp = fn = 0
    for pair in PAIRS:
        a, b = (f"{n[0]}\n{n[1]}" for n in (pair.a, pair.b))
        found = find_contradiction(a, b, related=True) is not None
        tp += found and pair.contradicts
        fp += found and not pair.contradicts
        fn += not found and pair.contradicts
    assert tp / (tp + fp) >= 0.8
    assert tp / (tp + fn) >= 0.4
