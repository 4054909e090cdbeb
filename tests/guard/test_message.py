"""Tests for `guard/message.py`: a refusal names kind, field and line, never the value."""

from __future__ import annotations

import pytest

from memdir.guard import Finding, describe, scan_fields

from .corpus import POSITIVES, Positive, case_id


@pytest.mark.parametrize("case", POSITIVES, ids=case_id)
def test_describe_never_contains_the_value(case: Positive) -> None:
    message = describe(scan_fields({"body": case.text}))
    assert message.startswith("refused: ")
    assert "(body, line " in message
    assert "nothing was written" in message
    secret = case.secret
    assert secret not in message
    for i in range(len(secret) - 5):
        assert secret[i : i + 6] not in message, f"leaks {secret[i : i + 6]!r}"


def test_describe_lists_every_finding_once() -> None:
    found = [
        ("body", Finding("GitHub token", 3)),
        ("body", Finding("GitHub token", 3)),
        ("summary", Finding("AWS access key id", 1)),
        ("body", Finding("password assignment", 7)),
    ]
    message = describe(found)
    assert message.count("GitHub token") == 1
    assert "a GitHub token (body, line 3)" in message
    assert "an AWS access key id (summary, line 1)" in message
    assert "a password assignment (body, line 7)" in message
    assert message.endswith(
        "nothing was written. Remove the secret (store where it lives, e.g. an environment "
        "variable name, instead of the value)."
    )


def test_describe_single_finding_matches_the_spec_wording() -> None:
    message = describe([("body", Finding("GitHub token", 3))])
    assert message == (
        "refused: this looks like a GitHub token (body, line 3); nothing was written. "
        "Remove the secret (store where it lives, e.g. an environment variable name, "
        "instead of the value)."
    )
    assert describe([]) == ""
