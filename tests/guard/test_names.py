"""Tests for `guard/names.py`: which key names are secret-sounding, and how they are labelled."""

from __future__ import annotations

import pytest

from memdir.guard.names import KeyClass, classify_key


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("DB_PASSWORD", KeyClass(True, "password assignment")),
        ("dbPassword", KeyClass(True, "password assignment")),
        ("PASSWORD_1", KeyClass(True, "password assignment")),
        ("Passwort", KeyClass(True, "password assignment")),
        ("密码", KeyClass(True, "password assignment")),
        ("passphrase", KeyClass(True, "passphrase assignment", phrase=True)),
        ("pass", KeyClass(True, "password assignment", strong=False)),
        ("GITHUB_TOKEN", KeyClass(False, "GitHub token")),
        ("session_token", KeyClass(False, "session token assignment")),
        ("api_key", KeyClass(False, "API key assignment")),
        ("AWS_SECRET_ACCESS_KEY", KeyClass(False, "AWS secret access key")),
        ("stripe_secret_key", KeyClass(False, "Stripe secret key")),
    ],
)
def test_secret_names_are_classified_and_labelled(name: str, expected: KeyClass) -> None:
    assert classify_key(name) == expected


@pytest.mark.parametrize("name", ["key", "monkey", "password_hint", "token_type", "", "username"])
def test_ordinary_names_are_not_secret(name: str) -> None:
    assert classify_key(name) is None


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("SENHA_BANCO", "password assignment"),
        ("db_wachtwoord", "password assignment"),
        ("haslo", "password assignment"),
        ("sessionid", "session id assignment"),
        ("PHPSESSID", "session id assignment"),
    ],
)
def test_foreign_password_and_session_keys(name: str, kind: str) -> None:
    found = classify_key(name)
    assert found is not None and found.kind == kind


@pytest.mark.parametrize("name", ["senha_file", "senha_policy", "wachtwoord_hint"])
def test_foreign_password_keys_that_describe_it(name: str) -> None:
    assert classify_key(name) is None


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("chiave_api", "API key assignment"),
        ("cle_api", "API key assignment"),
        ("api_anahtari", "API key assignment"),
        ("clave_secreta", "secret key assignment"),
        ("chave_secreta", "secret key assignment"),
        ("geheimer_schluessel", "secret key assignment"),
        ("geheime_sleutel", "secret key assignment"),
        ("klucz_tajny", "secret key assignment"),
        ("пароль_бд", "password assignment"),
        ("ключ_api", "key assignment"),
    ],
)
def test_foreign_keys_qualified_as_secret(name: str, kind: str) -> None:
    found = classify_key(name)
    assert found is not None and found.kind == kind


@pytest.mark.parametrize(
    "name", ["chiave", "clave_primaria", "chiave_file", "klucz_obcy", "пароль"]
)
def test_foreign_keys_without_a_secret_qualifier(name: str) -> None:
    assert classify_key(name) is None
