"""Tests for `guard/phrasings.py` and the round-3 label rules: codes a safe "opens with",
chat answers below a request, call arguments, HTML cells, sign-led and joined passphrases."""

from __future__ import annotations

import pytest

from memdir.guard import redact, scan_text

PW = "Vq" + "83Lm" + "02Xz"
CODE = "47" + "19"
PHRASE = "-".join(("otter", "quartz", "walnut", "fjord"))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f"La caja fuerte del hotel se abre con {CODE}.", CODE),
        (f"Sejf w pokoju otwiera się kodem {CODE}.", CODE),
        (f"Kasa {CODE} ile açılıyor.", CODE),
        (f"金庫は{CODE}で開きます。", CODE),
        (f"Alarmanlage: Code {CODE}B eingeben, dann Taste AUS.", f"{CODE}B"),
        (f"Gate code for the building is {CODE}*.", f"{CODE}*"),
        (f"Код калитки — {CODE}#.", f"{CODE}#"),
        (f"напомни код от домофона\n{CODE}", CODE),
        (f"Tu as le digicode ?\noui, {CODE}B puis la porte de gauche", f"{CODE}B"),
        (f"Wi-Fiのパスワード教えて\n{PW}!", f"{PW}!"),
        (f"Backup-Code für die Zwei-Faktor-Anmeldung: {CODE}{CODE}", f"{CODE}{CODE}"),
        (f"Резервный код двухфакторной аутентификации: {CODE}{CODE}", f"{CODE}{CODE}"),
        (f"Frase-senha do cofre: {PHRASE}", PHRASE),
        (f"Wachtzin voor de kluis: {PHRASE.replace('-', ' ')}", PHRASE.replace("-", " ")),
        (f"Das Kennwort ist »&{PW}« – Groß- und Kleinschreibung beachten.", f"&{PW}"),
        (f"define('DB_PASSWORD', '{PW}?');", f"{PW}?"),
        (f"<td>Mot de passe</td><td>{PW[:4]}&amp;{PW[4:]}</td>", f"{PW[:4]}&amp;{PW[4:]}"),
        (f"| Dienst | Wachtwoord |\n|---|---|\n| Modem | @{PW} |", f"@{PW}"),
    ],
)
def test_value_is_found_and_redacted(text: str, value: str) -> None:
    assert scan_text(text)
    assert value not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "Пароль хранится в KeePass, запись «Бухгалтерия / Банк-клиент».",
        "Das Passwort liegt in 1Password, Eintrag „Router / Keller“.",
        "Doors open at 1930 and the show opens with 2400 dancers",
        "What is the alarm code policy?\n1234 is not allowed as a code",
        "Wie lautet das WLAN-Passwort?\nKeine Ahnung, frag Tom",
        "Passphrase: ask the infra team",
        "Backup code: use the printed sheet",
        'define("PASSWORD_MIN", "12");',
        "<p>Password: <code>&lt;your password&gt;</code></p>",
        "postgres://user:password@localhost:5432/app",
        "Der Türcode für den Hintereingang steht im Hinweis am Brett.",
        "Kasa 2024 yılında alındı.",
        "1234 people were there when the door opened",
    ],
)
def test_look_alike_passes(text: str) -> None:
    assert scan_text(text) == []
