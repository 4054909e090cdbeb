"""The guard against its multilingual corpus: recall and false-positive floors per language."""

from __future__ import annotations

from collections import defaultdict

import pytest

from memdir.guard import describe, redact, scan_fields, scan_text

from .corpus_multilingual import (
    ALL,
    BLIND,
    EIGHTH,
    ENCODED,
    FRESH,
    HELD,
    LANGUAGES,
    LATE,
    NINTH,
    SEVENTH,
    SIXTH,
    TENTH,
    TUNING,
    Case,
)

RECALL_FLOOR = 0.97
LANGUAGE_RECALL_FLOOR = 0.95
FPR_CEILING = 0.02
# The ninth batch after its round-3 tuning (measured unseen at 0.763, then 0.786 and 0.844
# with FPR 0.0028): it now finds every secret and flags no look-alike.
NINTH_RECALL_FLOOR = 1.0
NINTH_FPR_CEILING = 0.0
# The tenth batch after its round-4 tuning (measured unseen at 0.740, 0.822 and 0.861 with
# FPR 0): six misses of 366 left (a passphrase of plain words mid-sentence, chat answers
# after a speaker or a dash, a label glued to its value); no look-alike flagged.  Kinds are
# small groups (13 emails, 39 chat turns).
TENTH_RECALL_FLOOR = 0.98
TENTH_LANGUAGE_RECALL_FLOOR = 0.96
TENTH_KIND_RECALL_FLOOR = 0.92
TENTH_FPR_CEILING = 0.0


def _found(case: Case) -> bool:
    return any(f.line == case.line for f in scan_text(case.text))


def _rates(cases: tuple[Case, ...]) -> tuple[float, float]:
    positives = [c for c in cases if c.positive]
    negatives = [c for c in cases if not c.positive]
    recall = sum(_found(c) for c in positives) / len(positives)
    fpr = sum(bool(scan_text(c.text)) for c in negatives) / len(negatives)
    return recall, fpr


def _fpr(cases: tuple[Case, ...]) -> float:
    negatives = [c for c in cases if not c.positive]
    return sum(bool(scan_text(c.text)) for c in negatives) / len(negatives) if negatives else 0.0


def test_corpus_is_big_and_covers_every_language() -> None:
    assert len(ALL) >= 400
    assert len({c.id for c in ALL}) == len(ALL)
    for lang in LANGUAGES:
        assert any(c.lang == lang and c.positive for c in ALL), lang
        assert any(c.lang == lang and not c.positive for c in ALL), lang
    for kind in ("prose", "config", "url", "table", "chat", "obfuscated", "lookalike", "encoded"):
        assert any(c.kind == kind for c in ALL), kind


# The sixth batch, after its fixes, finds every secret and flags no look-alike; its floors
# are what it reached, so a change that loses any of it shows here.  The seventh batch was
# tuned on after its first measurement (73.8%): it now finds all but two secrets (193/195,
# both named in its header) and the encoded group finds all; neither flags a look-alike.
# The eighth batch was tuned on after its first measurement (90.6%): it now finds every
# secret and flags no look-alike.
@pytest.mark.parametrize(
    ("batch", "recall_floor", "fpr_ceiling"),
    [
        (TUNING, RECALL_FLOOR, FPR_CEILING),
        (HELD, RECALL_FLOOR, FPR_CEILING),
        (FRESH, RECALL_FLOOR, FPR_CEILING),
        (LATE, RECALL_FLOOR, FPR_CEILING),
        (BLIND, RECALL_FLOOR, FPR_CEILING),
        (SIXTH, 1.0, 0.0),
        (SEVENTH, 0.985, 0.0),
        (ENCODED, 1.0, 0.0),
        (EIGHTH, 1.0, 0.0),
        (NINTH, NINTH_RECALL_FLOOR, NINTH_FPR_CEILING),
        (TENTH, TENTH_RECALL_FLOOR, TENTH_FPR_CEILING),
        (ALL, RECALL_FLOOR, FPR_CEILING),
    ],
    ids=[
        "tuning",
        "held",
        "fresh",
        "late",
        "blind",
        "sixth",
        "seventh",
        "encoded",
        "eighth",
        "ninth",
        "tenth",
        "all",
    ],
)
def test_recall_and_false_positive_floors(
    batch: tuple[Case, ...], recall_floor: float, fpr_ceiling: float
) -> None:
    recall, fpr = _rates(batch)
    assert recall >= recall_floor
    assert fpr <= fpr_ceiling


def test_sixth_batch_every_language_and_kind_is_whole() -> None:
    for group in [*LANGUAGES, "prose", "config", "url", "obfuscated", "lookalike"]:
        cases = tuple(c for c in SIXTH if group in (c.lang, c.kind))
        assert all(_found(c) for c in cases if c.positive), group
        assert _fpr(cases) == 0.0, group


def test_seventh_batch_every_language_and_kind_meets_its_floors() -> None:
    # Kinds are smaller groups: one miss of eleven obfuscated labels ("pаrоль") is 0.91.
    floors = dict.fromkeys(LANGUAGES, LANGUAGE_RECALL_FLOOR)
    floors |= dict.fromkeys(("prose", "config", "url", "table", "chat", "lookalike"), 0.99)
    floors["obfuscated"] = 0.9
    for group, floor in floors.items():
        cases = tuple(c for c in SEVENTH if group in (c.lang, c.kind))
        positives = [c for c in cases if c.positive]
        if positives:
            assert sum(map(_found, positives)) / len(positives) >= floor, group
        assert _fpr(cases) == 0.0, group


def test_eighth_batch_every_language_and_kind_is_whole() -> None:
    for group in sorted({c.lang for c in EIGHTH} | {c.kind for c in EIGHTH}):
        cases = tuple(c for c in EIGHTH if group in (c.lang, c.kind))
        assert all(_found(c) for c in cases if c.positive), group
        assert _fpr(cases) == 0.0, group


def test_ninth_batch_every_language_and_kind_is_whole() -> None:
    for group in sorted({c.lang for c in NINTH} | {c.kind for c in NINTH}):
        cases = tuple(c for c in NINTH if group in (c.lang, c.kind))
        assert all(_found(c) for c in cases if c.positive), group
        assert _fpr(cases) == 0.0, group


def test_tenth_batch_every_language_and_kind_meets_its_floors() -> None:
    floors = dict.fromkeys({c.lang for c in TENTH}, TENTH_LANGUAGE_RECALL_FLOOR)
    floors |= dict.fromkeys({c.kind for c in TENTH}, TENTH_KIND_RECALL_FLOOR)
    for group, floor in sorted(floors.items()):
        cases = tuple(c for c in TENTH if group in (c.lang, c.kind))
        positives = [c for c in cases if c.positive]
        assert sum(map(_found, positives)) / len(positives) >= floor, group
        assert _fpr(cases) == 0.0, group


def test_encoded_group_finds_every_token_and_passes_ordinary_encodings() -> None:
    assert all(_found(c) for c in ENCODED if c.positive)
    assert _fpr(ENCODED) == 0.0


def test_every_language_meets_its_recall_floor() -> None:
    by_lang: dict[str, list[Case]] = defaultdict(list)
    for case in ALL:
        if case.positive:
            by_lang[case.lang].append(case)
    low = {
        lang: found
        for lang, cases in by_lang.items()
        if (found := sum(_found(c) for c in cases) / len(cases)) < LANGUAGE_RECALL_FLOOR
    }
    assert low == {}


@pytest.mark.parametrize("case", [c for c in ALL if c.positive], ids=lambda c: c.id)
def test_no_value_is_echoed_and_redaction_removes_it(case: Case) -> None:
    findings = scan_fields({"body": case.text})
    message = describe(findings)
    assert case.secret not in message
    assert all(case.secret not in repr(f) for _, f in findings)
    if findings:
        redacted = redact(case.text)
        assert case.secret not in redacted
        assert scan_text(redacted) == []


@pytest.mark.parametrize("case", [c for c in ALL if not c.positive], ids=lambda c: c.id)
def test_redaction_leaves_look_alikes_alone(case: Case) -> None:
    assert redact(case.text) == case.text
