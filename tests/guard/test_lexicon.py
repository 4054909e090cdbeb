"""Tests for `memdir.guard.lexicon`: every label is found by the one factored regex."""

from __future__ import annotations

import re

from memdir.guard import lexicon


def test_factored_regex_finds_what_the_plain_alternation_finds() -> None:
    # The factored alternation must keep the branch order (longest label first).
    plain = re.compile("|".join(p for p, _ in lexicon.ENTRIES))
    samples = " ".join(
        [
            "Passwort passwörter mot de passe mot_de_passe contraseña parola d'ordine",
            "palavra-passe wachtwoord пароль паролем hasło şifreniz 密码 パスワード 비밀번호",
            "api key api_key secret key client secret access key private key login pin code",
            "zugangsdaten identifiants credenciales учетные данные dane logowania",
        ]
    )
    got = [(m.start(), m.end()) for m in lexicon.LABEL_RE.finditer(samples)]
    assert got == [(m.start(), m.end()) for m in plain.finditer(samples)]
    assert len(got) >= 25


def test_matched_words_map_back_to_their_kind() -> None:
    expected = {
        "passwort": "password",
        "mot de passe": "password",
        "mot_de_passe": "password",
        "пароль": "password",
        "hasło": "password",
        "secret key": "secret key",
        "secret": "secret",
        "zugangsdaten": "login password",
        "暗証番号": "PIN",
        "トークン": "token",
        "비밀번호": "password",
        "api-key": "API key",
    }
    for word, kind in expected.items():
        m = lexicon.LABEL_RE.match(word)
        assert m is not None, word
        assert lexicon.label_for(m.group()).kind == kind, word


def test_languages_are_all_present() -> None:
    scripts = {label.script for _, label in lexicon.ENTRIES}
    assert scripts == {"latin", "zh", "ja", "ko"}
