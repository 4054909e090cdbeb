"""Tests for `guard/structured.py`: values below their key, in secret-named blocks and tables."""

from __future__ import annotations

import pytest

from memdir.guard import Finding, scan_text
from memdir.guard.structured import structured_hits

PW = "Vq" + "83Lm" + "02Xz"


def _values(text: str) -> list[str]:
    return [text[h.start : h.end] for h in structured_hits(text)]


@pytest.mark.parametrize(
    "text",
    [
        f"password:\n    {PW}\n",
        f"db:\n  password: |\n    {PW}\n",
        f"[database]\npassword =\n    {PW}\n",
        f'password = """\n{PW}"""\n',
        f'DB_PASSWORD="\n{PW}\n"\n',
        f"secrets:\n  github: {PW}!x\n",
        f"[credentials]\nadmin = {PW}!x\n",
        f"passwords:\n  - {PW}\n",
    ],
)
def test_value_below_or_inside_is_found(text: str) -> None:
    assert any(PW in v for v in _values(text))


@pytest.mark.parametrize(
    "text",
    [
        "password:\n  file: /run/secrets/db_password\n",
        "secrets:\n  path: /etc/app/secrets\n  enabled: true\n",
        "[credentials]\nprovider = vault\nregion = eu-west-1\n",
        "password:\n  ${DB_PASSWORD}\n",
        "token:\n  ttl: 3600\n",
        "password:\nnext_key: value\n",  # not indented: the value is empty
    ],
)
def test_descriptions_and_references_are_not_values(text: str) -> None:
    assert _values(text) == []


def test_password_column_of_a_markdown_table() -> None:
    text = f"| host | password |\n|---|---|\n| db | {PW} |\n| web | (none) |\n"
    assert _values(text) == [PW]
    assert scan_text(text) == [Finding("password assignment", 3)]


@pytest.mark.parametrize(
    "text",
    [
        f"db01.internal   root   {PW}   # prod",
        f"| db01 | root | {PW} |",
        f"srv01\tadmin\t{PW}",
    ],
)
def test_account_rows_without_a_label_column(text: str) -> None:
    assert _values(text) == [PW]


@pytest.mark.parametrize(
    "text",
    [
        "db01  root  /dev/sda1",
        "web01  root  rebooted-2024-03-11",
        "api01   deploy   2024-05-01T10:00:00Z",
        "Run as root  --no-sandbox",
        "| web01 | admin | enabled |",
        f"log in as root  {PW} is not how we do it, says the runbook",
    ],
)
def test_account_rows_leave_other_rows_alone(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(
    "text",
    [
        f"Compte;Utilisateur;MDP\nFTP;deploy;{PW}",
        f"Service\tUser\tPassword\nRouter\tadmin\t{PW}",
        f"| Сервис | Логин | Пароль |\n|---|---|---|\n| NAS | admin | {PW} |",
        f"| 服务 | 用户名 | 密码 |\n|---|---|---|\n| NAS | admin | ={PW} |",
    ],
)
def test_password_column_of_a_delimited_or_foreign_table(text: str) -> None:
    assert any(PW in value for value in _values(text))


@pytest.mark.parametrize(
    "text",
    [
        "Compte;Utilisateur;MDP\nFTP;deploy;voir le coffre",
        "Name\tUser\tScore\nalice\tbob\t42",
        "| Сервис | Логин | Пароль |\n|---|---|---|\n| NAS | admin | в сейфе |",
    ],
)
def test_delimited_tables_without_a_secret_column_or_value(text: str) -> None:
    assert _values(text) == []
