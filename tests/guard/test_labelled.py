"""Tests for `guard/labelled.py`: a label, a connector and a value, in prose of any language."""

from __future__ import annotations

import pytest

from memdir.guard import redact, scan_text
from memdir.guard.labelled import labelled_hits

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


@pytest.mark.parametrize(
    "text",
    [
        f"Passwort: {' '.join(PW)}",  # spaced out, one character at a time
        f"비밀번호: {' '.join(PW)}",
        f"Mot de passe Wi-Fi : {PW}",  # a second label names what the first one opens
        f"phrase secrète de la clé GPG : {PW}",
        f"Guest Wi-Fi: OfficeGuest / {PW}",  # network / password, like a login
        f"erişim belirteci: {PW}{PW}{PW}",  # "belirteç" softens to "belirteci"
        f"пасс от роутера: {PW}",
        f"ww: {PW}",
        f"Zugang: admin / {PW}",
        f"Le code Wi-Fi est {PW}",
        f"Hier das Passwort für den Gastzugang: {PW}",
    ],
)
def test_spread_values_qualified_labels_and_colloquial_labels(text: str) -> None:
    assert scan_text(text)
    assert PW not in redact(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("PIN 7391", "7391"),
        ("카드 비밀번호 1627", "1627"),
        ("Entsperrcode fürs Diensthandy ist 955107", "955107"),
        ("код разблокировки телефона 383435", "383435"),
        ("telefonun kilit kodu 635513", "635513"),
        ("암호: Sol27?", "Sol27?"),  # the mark ends the line: it is part of the value
        ("phrase secrète : tundra violet marble cactus", "tundra violet marble cactus"),
    ],
)
def test_pins_unlock_codes_and_short_values(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_recovery_codes_listed_below_their_label() -> None:
    codes = ["8f3k2-9dl2x", "a8d7c-1kd83"]
    text = "GitHub recovery codes:\n- " + "\n- ".join(codes) + "\n\nlater: 7a2b9-kk2m3"
    assert _values(text) == codes
    assert _values("Backup codes: 1234 5678 9876 5432") == ["1234 5678", "9876 5432"]


@pytest.mark.parametrize(
    "text",
    [
        "Store your recovery codes somewhere safe.",
        "recovery code format: xxxxx-xxxxx",
        "recovery codes (see 1Password item 8f3k2a9d)",
        "recovery codes used: 3 of 10",
        "wifi: HomeNet-5G",
        "WLAN: Vodafone-A3F2 (5 GHz)",
        "Mot de passe du wifi : demandez à l’accueil",
        "passphrase: ask the infra team",
        "Passphrase: siehe Tresor",
        "Passwort: p a s s w o r d",
        "password: a b c d e f",
        "GPIO pin 18 is the LED",
        "unlock code expires in 30 minutes",
        "What is the password?",
    ],
)
def test_new_rules_leave_look_alikes_alone(text: str) -> None:
    assert scan_text(text) == []


# Chat shorthand, disguised labels, values on the next line, passwords with spaces, XML
# elements named by a label (batch 6 of the multilingual corpus).
@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f"kw fürs WLAN: {PW}", PW),
        (f"oye, la contra del wifi es {PW}", PW),
        (f"psw: {PW}", PW),
        (f"wifiのパスは{PW}です", PW),
        ("btw my pin's 4821", "4821"),
        ("мой пин 4821", "4821"),
        ("pin kodum 4821", "4821"),
        ("계좌 비밀번호 4821", "4821"),
        (f"P a s s w o r t: {PW}", PW),
        (f"P-a-s-s-w-o-r-d: {PW}", PW),
        (f"Passw0rd: {PW}", PW),
        (f"密 码：{PW}", PW),
        (f"The password is below:\n  {PW}\n", PW),
        (f"Пароль ниже:\n\n  {PW}", PW),
        (f"密码如下：\n{PW}", PW),
        ('the admin password is "Deniz kwiat 603+" (with the spaces)', "Deniz kwiat 603+"),
        ("mot de passe : « Hana panda 973! »", "Hana panda 973!"),
        ("senha: Lotus panda 112-", "Lotus panda 112-"),
        (f"<motdepasse>{PW}</motdepasse>", PW),
    ],
)
def test_shorthand_disguised_below_spaced_and_element_values(text: str, value: str) -> None:
    assert value in _values(text)


@pytest.mark.parametrize(
    "text",
    [
        "KW 14: Urlaub, danach Release 2.4.1",
        "votó en contra: 12 diputados",
        "パス: /var/log/app.log",
        "Password is below:\n  (ask Jane)",
        "The password is below.\nIt must be 12 characters.",
        "密码如下：\n见1Password",
        'password "must contain 1 digit!"',
        "Passwort: „siehe Tresor 4“",
        "contra: Barça 3-1",
        "P a g e: 12",
        "S3: bucket names",
        "<password>${DB_PASSWORD}</password>",
    ],
)
def test_shorthand_and_below_rules_leave_prose_alone(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "the door code is 4821",
        "alarm code: 9912",
        "garage code 5531",
        "Türcode: 4711",
        "Tresorcode 88123",
        "code de la porte : 2580",
        "código del portal 1234",
        "Il codice della cassaforte è 48213",
        "код домофона 2580",
        "kod do drzwi: 1379",
        "the access code is Xk29LmQ7",
    ],
)
def test_codes_that_open_doors_alarms_and_safes_are_pins(text: str) -> None:
    assert scan_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "area code 415",
        "error code 4821",
        "zip code 94110",
        "status code 404",
        "door code changes every month",
        "alarm code: ask the office",
        "the access code is printed on the badge",
        "entry code 2 of the procedure",
    ],
)
def test_other_codes_and_prose_about_door_codes_are_not(text: str) -> None:
    assert not scan_text(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f"pwd del server? è {PW}", PW),
        (f"скинь пароль? — держи: {PW}", PW),
        (f"utente: mrossi / {PW}", PW),
        (f"логин/пароль admin/{PW}", PW),
        ("공동현관 비밀번호 8160", "8160"),
        ("비밀번호 4821", "4821"),
        ("PIN del telefono 4821", "4821"),
        ("Код от домофона 1712", "1712"),
        ("Erişim kodu: 034372", "034372"),
        ("Frase segreta del portafoglio: kot soleil tanne lotus", "kot soleil tanne lotus"),
        (f"アクセスコードは{PW}です", PW),
        (f"인증키: {PW}xYz", f"{PW}xYz"),
        (f"Network key: {PW}", PW),
        (f"{PW} şifresiyle giriş yap", PW),
        ("Fraza hasła do klucza to Tulp kwiat 119*", "Tulp kwiat 119*"),
    ],
)
def test_questions_user_pairs_door_codes_and_new_labels(text: str, value: str) -> None:
    assert value in _values(text)


@pytest.mark.parametrize(
    "text",
    [
        "identifiant de la requête : 339ed9bb-da4d-4976-aace-5542b8fb7d13",
        "`--scope user`: `~/.cursor/mcp.json`",
        "user id: 3f2a9c1e4b5d6a7f8e9d0c1b2a3f4e5d",
        "비밀번호 2024년 정책",
        "Forgot your password? Reset it at https://example.com/reset",
        "Hasłem przewodnim konferencji jest „Dane dla ludzi”.",
        "내 키는 178이야.",
        "Il token della metropolitana costa 2 euro.",
        "Kullanıcı-adı şifresiyle giriş yapın, Wi-Fi şifresi değişti.",
    ],
)
def test_new_rules_pass_ids_paths_years_and_prose(text: str) -> None:
    assert scan_text(text) == []


@pytest.mark.parametrize(
    "text",
    [
        f"m o t  d e  p a s s e : {PW}",
        f"m0t de p4sse : {PW}",
        f"p4r0l4 d'ordine: {PW}",
        f"şifr3: {PW}",
        f"пар0ль: {PW}",
        f"h@sło: {PW}",
        f"パ・ス・ワ・ー・ド：{PW}",
        f"パスワード（PW）：{PW}",
        f"pass-word: {PW}",
    ],
)
def test_labels_spaced_by_word_written_in_digits_or_with_an_aside(text: str) -> None:
    assert PW in _values(text)


@pytest.mark.parametrize(
    "text",
    [
        f"what's the router pw again?\n-> {PW}",
        f"hast du das neue Passwort?\n— ja: {PW}",
        f"скинь пароль от роутера плз\n— {PW}",
        f"路由器密码多少来着？\n——{PW}",
        f"wifi password?\nB: {PW}",
        f"ごめん、さっきのパスワード間違ってた。正しくは {PW} です",
        f"Sorry, the password I sent was wrong. The correct one is {PW}",
    ],
)
def test_a_reply_below_a_question_or_a_correction_gives_the_value(text: str) -> None:
    assert _values(text) == [PW]


@pytest.mark.parametrize(
    "text",
    [
        "Wie lautet das WLAN-Passwort?\n- steht auf dem Router",
        "Quel est le digicode ?\n— Aucune idée, appelle le gardien.",
        "What's the password policy?\n- Min12Chars!",  # a policy, not the password
        "パスワード間違ってた。正しくはメモを見てね。",
    ],
)
def test_replies_that_give_no_value(text: str) -> None:
    assert _values(text) == []


def test_a_label_heading_its_line_reads_one_value_below() -> None:
    assert _values(f"新しいパスワード\n{PW}") == [PW]
    assert _values(f"Neues Passwort\n{PW}") == [PW]
    assert _values(f"wat was het wachtwoord ook alweer?\n{PW}") == [PW]
    assert _values("Password\nhunter2") == []  # below a bare heading it must look typed
    assert _values(f"Passwort\n\n{PW}") == []  # a heading above a paragraph
    assert _values(f"gib mal das WLAN-Passwort\n{PW}") == [PW]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Door access code: 6182D", "6182D"),
        ("Zugangscode für das Hoftor: 3959C", "3959C"),
        ("Codice di accesso al cancello del magazzino: GWSA-ZBHO", "GWSA-ZBHO"),
        ("출입 코드는 1350C입니다", "1350C"),
        ("현관 도어락 번호: 509657", "509657"),
        ("La combinazione della cassaforte è 481510.", "481510"),
        ("Kasanın şifresini 38706695 yaptım.", "38706695"),
        ("Safe combination: 38-12-77", "38-12-77"),
    ],
)
def test_door_and_safe_codes_may_be_short(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize(
    "text",
    [
        "Access code: TBD",
        "Access code: ABCD-EFGH",
        "Der Zugangscode gilt bis 2025.",
        "Bitte den Zugangscode nicht weitergeben.",
        "La combinazione di tasti è Ctrl+Alt+Canc",
        "the access code v2 API",
    ],
)
def test_words_about_codes_are_not_codes(text: str) -> None:
    assert _values(text) == []


def test_wifi_key_after_a_qualifier_but_not_the_network_name() -> None:
    assert _values("wifi casa nonna: marmor#kolibri#komeet617") == ["marmor#kolibri#komeet617"]
    assert _values("wifi: itvDEpr%WgPv2") == ["itvDEpr%WgPv2"]
    assert _values("WLAN: Vodafone-4C2A") == []
    assert _values("wifi: FRITZ!Box 7590 KL") == []


def test_equals_inside_a_value_is_not_code() -> None:
    assert _values("Mit dem Passwort kolibri=brise=duna431 kommst du rein.") == [
        "kolibri=brise=duna431"
    ]
    assert _values("パスワード: VKIW=c68x6M9 です。") == ["VKIW=c68x6M9"]
    assert _values("token limit max_tokens=4096, temperature=0.7") == []


def test_a_key_labelled_with_an_aside_but_not_its_hash() -> None:
    key = "a76fc98e" * 8
    assert _values(f"백업 암호화 키(유출 금지): {key}") == [key]
    assert _values(f"암호화 키 해시: {key}") == []
