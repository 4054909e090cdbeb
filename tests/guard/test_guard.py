"""The credential guard against its labelled corpus, plus leak, redaction and robustness checks."""

from __future__ import annotations

import dataclasses
import string
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.guard import Finding, describe, redact, scan_fields, scan_text

from .corpus import (
    ALNUM,
    GH_PAT,
    NEGATIVES,
    POSITIVES,
    PW_DB,
    PW_ENV,
    STRIPE_LIVE,
    Negative,
    Positive,
    tok,
)

KiB = 1024
# Generous: the guard scans 128 KiB in well under a second; this only catches a regression
# to super-linear backtracking, without making the suite flaky on a slow CI machine.
SANITY_SECONDS = 5.0


def _pid(case: Positive | Negative) -> str:
    return case.id


# --- the corpus ---------------------------------------------------------------------------


def test_corpus_is_big_enough_and_ids_unique() -> None:
    assert len(POSITIVES) >= 80
    assert len(NEGATIVES) >= 80
    ids = [c.id for c in POSITIVES] + [c.id for c in NEGATIVES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", POSITIVES, ids=_pid)
def test_positive_is_found_with_kind_and_line(case: Positive) -> None:
    findings = scan_text(case.text)
    assert any(case.kind.lower() in f.kind.lower() and f.line == case.line for f in findings), (
        f"expected {case.kind!r} on line {case.line}, got {findings}"
    )


@pytest.mark.parametrize("case", NEGATIVES, ids=_pid)
def test_negative_is_clean(case: Negative) -> None:
    assert scan_text(case.text) == []


@pytest.mark.parametrize("case", POSITIVES, ids=_pid)
def test_describe_never_contains_the_value(case: Positive) -> None:
    message = describe(scan_fields({"body": case.text}))
    assert message.startswith("refused: ")
    assert "(body, line " in message
    assert "nothing was written" in message
    secret = case.secret
    assert secret not in message
    for i in range(len(secret) - 5):
        assert secret[i : i + 6] not in message, f"leaks {secret[i : i + 6]!r}"


@pytest.mark.parametrize("case", POSITIVES, ids=_pid)
def test_redact_removes_the_value_and_scans_clean(case: Positive) -> None:
    redacted = redact(case.text)
    assert case.secret not in redacted
    assert "[REDACTED:" in redacted
    assert scan_text(redacted) == []


@pytest.mark.parametrize("case", NEGATIVES, ids=_pid)
def test_redact_leaves_clean_text_untouched(case: Negative) -> None:
    assert redact(case.text) == case.text


# --- findings, fields, messages -----------------------------------------------------------


def test_finding_holds_only_kind_and_line() -> None:
    assert [f.name for f in dataclasses.fields(Finding)] == ["kind", "line"]
    finding = scan_text(f"token: {GH_PAT}")[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.line = 2  # type: ignore[misc]
    assert GH_PAT not in repr(finding)


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


def test_redact_keeps_the_surroundings() -> None:
    text = f"before password={PW_ENV} after\nnext line {GH_PAT}."
    assert redact(text) == (
        "before password=[REDACTED:password assignment] after\nnext line [REDACTED:GitHub token]."
    )


def test_secret_deep_in_a_large_body_is_found_on_its_line() -> None:
    filler = "An ordinary sentence about memory notes and retrieval.\n" * 2000
    text = filler + f"token: {GH_PAT}\n" + filler
    assert scan_text(text) == [Finding("GitHub token", 2001)]


def test_provider_fixture_style_tokens_are_refused() -> None:
    # Other suites build fixtures like "ghp_" + "A1b2" * 9; repetitive bodies still count.
    assert scan_text("ghp_" + "A1b2" * 9)[0].kind == "GitHub token"
    assert scan_text("sk-proj-" + "Ab3d" * 12)[0].kind == "OpenAI API key"
    assert scan_text("AKIA" + "ABCD2345" * 2)[0].kind == "AWS access key id"


# --- robustness ---------------------------------------------------------------------------

_FRAGMENTS = st.sampled_from(
    [
        "password",
        "Passwort",
        "密码",
        "token",
        "api_key",
        "secret",
        "=",
        ": ",
        " is ",
        "是",
        '"',
        "'",
        "`",
        "\n",
        " ",
        "://",
        "@",
        "-----BEGIN RSA PRIVATE KEY-----\n",
        "-----END RSA PRIVATE KEY-----",
        "eyJ",
        ".",
        "ghp_",
        "sk-",
        "AKIA",
        "Bearer ",
        "Basic ",
        "--password ",
        "[REDACTED:",
        "]",
        "${",
        "}",
        GH_PAT,
        PW_DB,
        tok("frag", ALNUM, 40),
        "hunter2x!",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_scan_never_raises_and_redaction_is_clean(text: str) -> None:
    findings = scan_text(text)
    assert all(f.line >= 1 for f in findings)
    assert scan_text(redact(text)) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=8)), max_size=40).map("".join))
def test_secret_shaped_noise_never_raises_and_redacts_clean(text: str) -> None:
    findings = scan_text(text)
    assert [f.line for f in findings] == sorted(f.line for f in findings)
    assert all(1 <= f.line <= text.count("\n") + 1 for f in findings)
    assert scan_text(redact(text)) == []


def _repeat(unit: str, size: int = 128 * KiB) -> str:
    return (unit * (size // len(unit) + 1))[:size]


_PATHOLOGICAL = {
    "a": _repeat("a"),
    "equals": _repeat("="),
    "colons": _repeat(":"),
    "spaces": _repeat(" "),
    "newlines": _repeat("\n"),
    "base64": _repeat(tok("b64", string.ascii_letters + string.digits + "+/", 4099)),
    "hex": _repeat(tok("hex", "0123456789abcdef", 4099)),
    "password_eq": _repeat("password="),
    "password_colon": _repeat("password: "),
    "password_is": _repeat("the password is "),
    "key_eq": _repeat("key="),
    "long_identifier": _repeat("password_"),
    "cjk": _repeat("密码是"),
    "bearer": _repeat("Bearer "),
    "pem_headers": _repeat("-----BEGIN RSA PRIVATE KEY-----\n"),
    "jwt_like": _repeat("eyJ" + "a" * 20 + "."),
    "url_like": _repeat("a://b:c"),
    "scheme_then_run": "postgres://u:" + _repeat("p"),
    "telegram_like": _repeat("1234567890:AA"),
    "mysql": _repeat("mysql -u "),
    "netrc": _repeat("machine login password "),
    "aws_ids": _repeat("AKIA" + "A" * 16 + " "),
    "quotes": _repeat('password="'),
    "dots": _repeat("M" + "a" * 23 + "."),
}


@pytest.mark.parametrize("name", sorted(_PATHOLOGICAL))
def test_pathological_128k_inputs_scan_quickly(name: str) -> None:
    text = _PATHOLOGICAL[name]
    start = time.perf_counter()
    scan_text(text)
    redact(text)
    assert time.perf_counter() - start < SANITY_SECONDS
