"""Tests for `guard/_labelled.py`: a label, a connector and a value, in prose of any language."""

from __future__ import annotations

import pytest

from memdir.guard import redact, scan_text
from memdir.guard._labelled import labelled_hits

PW = "Vq" + "83Lm" + "02Xz"


def _values(text: str) -> list[str]:
    return [text[h.start : h.end] for h in labelled_hits(text)]


@pytest.mark.parametrize(
    "text",
    [
        f"Mein Datenbankpasswort lautet {PW}.",
        f"le mot de passe est maintenant {PW}",
        f"The password for the admin panel is now set to {PW}.",
        f"密码改成了{PW}",
        f"パスワードを{PW}に変更しました",
        f"비밀번호는 {PW}입니다",
        f"şifresi {PW}'dir",
        f"Kenn\u00adwort: {PW}",
        f"use {PW} as the NAS password",
        f"**Passwort:** **{PW}**",
        f"ŞİFRE: {PW}",  # "İ" lowers to two characters
        f"haslo do wifi to {PW}",  # typed without "ł"
        f"contrasena: {PW}",
        f"user: admin pass: {PW}",
        "银行卡密码是 580274",
    ],
)
def test_value_is_found_and_redacted(text: str) -> None:
    assert scan_text(text)
    redacted = redact(text)
    assert PW not in redacted
    assert "580274" not in redacted


@pytest.mark.parametrize(
    "text",
    [
        "Passwort vergessen?",
        "The password must be at least 12 characters.",
        "Password: see the 1Password entry",
        "密码：见1Password",
        "密码长度至少8位",
        "비밀번호를 입력하세요:",
        "PIN: 4-stellig",
        "Tokenizer: tiktoken cl100k_base, 8192 tokens max.",
        f'PASSWORD = "Zx9" + "{PW}"',  # code assembling a value, read by the assignment rules
        "checksum of the secret key file is " + "ab12" * 16,
        "print(f'password={password!r}')",
        "passwd = HTTPPasswordMgr()",
        "r'case|pwd|true|CurrentPass'",
    ],
)
def test_prose_about_secrets_is_not_a_secret(text: str) -> None:
    assert _values(text) == []


def test_login_pair_marks_only_the_password() -> None:
    text = f"login: alice / {PW}"
    assert _values(text) == [PW]
    assert _values("login: alice / (ask Bob)") == []


def test_a_label_inside_a_random_value_is_not_a_label() -> None:
    token = "4AXyuqDGLlZ7Iw4TloQAJS11fUXsYZois4PWhc"
    assert _values(f"токен доступа: {token}") == [token]
