"""The credential guard against its labelled corpus, plus leak, redaction and robustness checks."""

from __future__ import annotations

import string
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.guard import redact, scan_text

from .corpus import ALNUM, GH_PAT, NEGATIVES, POSITIVES, PW_DB, Negative, Positive, case_id, tok

KiB = 1024


# Generous: the guard scans 128 KiB in well under a second; this only catches a regression
# to super-linear backtracking, without making the suite flaky on a slow CI machine.
SANITY_SECONDS = 5.0


def test_corpus_is_big_enough_and_ids_unique() -> None:
    assert len(POSITIVES) >= 80
    assert len(NEGATIVES) >= 80
    ids = [c.id for c in POSITIVES] + [c.id for c in NEGATIVES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", POSITIVES, ids=case_id)
def test_positive_is_found_with_kind_and_line(case: Positive) -> None:
    findings = scan_text(case.text)
    assert any(case.kind.lower() in f.kind.lower() and f.line == case.line for f in findings), (
        f"expected {case.kind!r} on line {case.line}, got {findings}"
    )


@pytest.mark.parametrize("case", NEGATIVES, ids=case_id)
def test_negative_is_clean(case: Negative) -> None:
    assert scan_text(case.text) == []


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
    start = time.process_time()  # CPU time: load elsewhere does not count
    scan_text(text)
    redact(text)
    assert time.process_time() - start < SANITY_SECONDS


# Label-like runs in every language the lexicon knows: each label opens a window, so these
# check that windows stay bounded and nothing backtracks.
_LABEL_RUNS = {
    "de_compound_colon": _repeat("Datenbankpasswort: "),
    "fr_label_is": _repeat("le mot de passe est "),
    "ru_label": _repeat("пароль "),
    "ja_label_particle": _repeat("パスワードは"),
    "ko_label_particle": _repeat("비밀번호는 "),
    "login_pairs": _repeat("login: a / "),
    "as_the_password": _repeat("Xy7!pQ2m as the password "),
    "label_no_space": _repeat("passwordtokensecret"),
    "yaml_empty_keys": _repeat("password:\n"),
    "yaml_nested_secrets": "secrets:\n" + _repeat("  a: b\n"),
    "table_header": "| password |\n|---|\n" + _repeat("| x |\n"),
    "zero_width": _repeat("a\u200b"),
    "full_width": _repeat("ｐａｓｓｗｏｒｄ："),
    "spaced_label": _repeat("P a s s w o r d: "),
    "spaced_letters": _repeat("a b "),
    "leet_label": _repeat("Passw0rd: Pa$$w0rt= "),
    "below_lines": _repeat("The password is below:\n"),
    "quoted_phrase": _repeat('password: "Ab 1! '),
    "phrase_lines": _repeat("senha: Lotus panda 112- "),
    "xml_elements": _repeat("<motdepasse>"),
    "account_rows": _repeat("db01  root  "),
    "account_words": _repeat("root admin "),
    "session_cookies": _repeat("session=a; "),
    "chat_shorthand": _repeat("kw pw psw contra パス "),
}


@pytest.mark.parametrize("name", sorted(_LABEL_RUNS))
def test_label_like_runs_scan_quickly(name: str) -> None:
    text = _LABEL_RUNS[name]
    start = time.process_time()  # CPU time: load elsewhere does not count
    scan_text(text)
    redact(text)
    assert time.process_time() - start < SANITY_SECONDS


_LABELS = st.sampled_from(
    [
        "Passwort",
        "mot de passe",
        "contraseña",
        "пароль",
        "hasło",
        "şifre",
        "密码",
        "パスワード",
        "비밀번호",
        "token",
        "login",
        " is ",
        " ist ",
        "是",
        "は",
        "는",
        ": ",
        "\n  ",
        "|",
        "---",
        " as ",
        "\u200b",
        "ｘ",
        "Xy7!pQ2m",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_LABELS, st.text(max_size=6)), max_size=60).map("".join))
def test_multilingual_noise_never_raises_and_redacts_clean(text: str) -> None:
    findings = scan_text(text)
    assert all(1 <= f.line <= text.count("\n") + 1 for f in findings)
    assert scan_text(redact(text)) == []
