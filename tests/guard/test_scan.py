"""Tests for `guard/scan.py`: line numbers and order, fields, and redaction of what is found."""

from __future__ import annotations

import pytest

from memdir.guard import Finding, redact, scan_fields, scan_text

from .corpus import (
    GH_PAT,
    NEGATIVES,
    POSITIVES,
    PW_DB,
    PW_ENV,
    STRIPE_LIVE,
    Negative,
    Positive,
    case_id,
)


@pytest.mark.parametrize("case", POSITIVES, ids=case_id)
def test_redact_removes_the_value_and_scans_clean(case: Positive) -> None:
    redacted = redact(case.text)
    assert case.secret not in redacted
    assert "[REDACTED:" in redacted
    assert scan_text(redacted) == []


@pytest.mark.parametrize("case", NEGATIVES, ids=case_id)
def test_redact_leaves_clean_text_untouched(case: Negative) -> None:
    assert redact(case.text) == case.text


def test_line_numbers_and_order_with_several_secrets() -> None:
    text = "\n".join(
        [
            "# Deploy notes",
            f"DB_PASSWORD={PW_ENV}",
            "",
            "Nothing secret here.",
            f"Use {GH_PAT} for the mirror.",
            "",
            "```python",
            "import stripe",
            f'stripe.api_key = "{STRIPE_LIVE}"',
            "```",
        ]
    )
    findings = scan_text(text)
    assert [f.line for f in findings] == [2, 5, 9]
    assert [f.kind for f in findings] == [
        "password assignment",
        "GitHub token",
        "Stripe secret key",
    ]


def test_crlf_and_blank_lines_count_as_lines() -> None:
    text = f"a\r\n\r\nb\r\npassword: {PW_DB}\r\n"
    assert scan_text(text) == [Finding("password assignment", 4)]


def test_clean_and_empty_text() -> None:
    assert scan_text("") == []
    assert scan_text("Plain note about retrieval.\nNothing to see.") == []
    assert redact("") == ""


def test_scan_fields_attributes_each_field() -> None:
    found = scan_fields(
        {
            "summary": "Mirror credentials",
            "body": f"Steps:\n1. export DB_PASSWORD={PW_ENV}\n2. run it",
            "tags": f"ci, {GH_PAT}",
        }
    )
    assert found == [
        ("body", Finding("password assignment", 2)),
        ("tags", Finding("GitHub token", 1)),
    ]
    assert scan_fields({"summary": "ok", "body": "fine"}) == []


def test_redact_keeps_the_surroundings() -> None:
    text = f"before password={PW_ENV} after\nnext line {GH_PAT}."
    assert redact(text) == (
        "before password=[REDACTED:password assignment] after\nnext line [REDACTED:GitHub token]."
    )


def test_secret_deep_in_a_large_body_is_found_on_its_line() -> None:
    filler = "An ordinary sentence about memory notes and retrieval.\n" * 2000
    text = filler + f"token: {GH_PAT}\n" + filler
    assert scan_text(text) == [Finding("GitHub token", 2001)]
