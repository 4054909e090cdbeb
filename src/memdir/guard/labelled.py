"""Secrets named in running text of any of thirteen languages: "Passwort: …", "密码是…", "…입니다".

A label from the lexicon opens a short window on its line.  Words in the window are read in
order: a connector (colon, copula, CJK particle) makes the next words candidate values, a
preposition only the next one, and a value with no grammar around it must look typed or
machine-made on its own.  Hash, public-key and example context closes the window.
After a connector a value may be spread out ("N e b e l 4 2") or a passphrase; a second
label may qualify the first ("Passwort fürs WLAN"); "recovery codes" read the codes after.
A quoted password may hold spaces; a label whose line ends in a colon, says "below" or heads
its line reads one value on the next; "<motdepasse>…</motdepasse>" is a label's element;
disguised labels ("P a s s w o r d:", "Passw0rd:") are read in a second pass.  A question
may hold the label and its answer the value ("pwd del server? è X", "…?\n— ja: X"), and a
sentence may correct it ("正しくは X です").  A door's or a safe's code may be short
("6182D", "3286#"); a Wi-Fi label gives a key; a user name label only a pair's password.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .cursors import Next, Positions
from .hit import PRIO_LABEL, Hit
from .lexicon import (
    ADVERB_WORDS,
    AS_WORDS,
    CJK,
    CJK_CONNECTOR_RE,
    CJK_LETTER_RE,
    CONNECTOR_WORDS,
    DEVICE_PIN,
    LABEL_RE,
    LOGIN,
    NEGATING_RE,
    PASSPHRASE,
    PASSWORD,
    PASSWORD_KINDS,
    PIN,
    PIN_QUALIFIER_RE,
    PREPOSITION_WORDS,
    RECOVERY,
    USER,
    WIFI,
    Label,
    label_for,
)
from .spaced import spaced_password
from .values import (
    access_code,
    class_count,
    diceware_phrase,
    looks_random,
    numeric_password,
    phrase_at,
    phrase_words,
    pin_like,
    prose_password,
    recovery_code,
    sigil_password,
    strong_password,
    token_like,
    wifi_key,
)

__all__ = ["label_span", "labelled_hits"]


def _set(words: str) -> frozenset[str]:
    """A set from whitespace-separated words; keeps long vocabularies readable."""
    return frozenset(words.split())


_QUOTES = "\"'`“”„‚‘’«»‹›「」『』【】《》〈〉"
# A word in the window: anything up to whitespace, a CJK character or a quote.
_WORD_RE = re.compile(f'[^\\s{CJK}"`“”„«»「」『』【】《》〈〉]+')
_WINDOW = 120
_MAX_WORDS = 12
_LEFT_CONTEXT = 32
# End of the sentence the label is in: the value never comes after it.
_SENTENCE_END_RE = re.compile(r"[.!?;](?=\s|$)|[。！？\n]")
_EDGE = "()[]{}<>,;|" + _QUOTES
_LEAD = "(|" + _QUOTES
_TRAIL = ".,;:!?)]}>"
# Turkish glues its case ending to the value with an apostrophe: "Qw3rtyZx91'dir".
_TR_SUFFIX_RE = re.compile(r"['’][a-zçğıöşü]{1,5}$")
# The password of a pair ends where CJK text resumes ("ID: suzuki、パスワード: …").
_PAIR_RE = re.compile(
    f"[^\\s/|:,=]{{1,64}}[ \\t]*[/|:][ \\t]*(?P<pw>[^\\s/|,={CJK}]{{1,128}})(?!=)"
)
_KO_PARTICLES = frozenset("는은이가를을도로으의에만요입값과와 :")
_ZH_NOT_LABEL = frozenset("学學锁鎖箱器本盘機机法管")
# Every value rule needs a digit, a symbol or mixed case inside a word ("hViIMTloiO").
# Groups of capitals ("GWSA-ZBHO") are a door's code.
_VALUE_CHAR_RE = re.compile(
    r"[0-9!#$%&*+@^~]|[a-zß-ÿа-яё][A-ZÀ-ÞА-ЯЁ]|[A-ZÀ-ÞА-ЯЁ]{2}[a-zß-ÿа-яё]|[A-Z]{3}-[A-Z]"
    r"|(?<![.\w])[a-z]{2,12}[._-][a-z]{2,12}[._-][a-z]"  # words joined into a passphrase
)
_GAP_CONNECTOR_RE = re.compile(f"[:=|→]|{CJK_CONNECTOR_RE.pattern}")
# "max_tokens=800", "maxTokens=8", "MAX=8": an assignment in code, not a typed value.
_ASSIGNMENT_RE = re.compile(
    r"(?:[a-z_][a-z0-9_.\-]+|[A-Z_][A-Z0-9_]+|[a-z]+(?:[A-Z][a-z0-9]+)+)=(?=[A-Za-z0-9_\"'$])"
)
_LOGIN_LABEL = Label(LOGIN)
# A user name and the separator before its password, not a path ("~/.cursor/mcp.json").
_USER_NAME_RE = re.compile(r"[A-Za-z0-9][\w.@+-]{0,63}[ \t]*[/|:][ \t]*")
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
# "as" must be among the few words right before the label ("as the NAS password").
# Only a hint (it also matches inside "has"); the words themselves are checked afterwards.
_AS_RE = re.compile("|".join(sorted(AS_WORDS)))
_AS_REACH = 48
_USER_SLASH_RE = re.compile(
    r"(?:login|user(?:name)?|benutzer(?:name)?|логин|utilisateur|usuario|utente|usuário"
    r"|gebruiker|użytkownik|kullanıcı|account|账号|帳號|用户名|id)/$"
)
_NAME_CHARS = frozenset("_/\\.@$%{")
_CODE_WORDS = frozenset(("lambda", "none", "null", "nil", "true", "false", "self", "this"))
_CODE_OPERATORS = frozenset(("+", "&&", "||", "==", "!=", "+=", "..", "++"))
# A value typed with spaces between its characters: "N e b e l 4 2".  Each piece is one
# character, so the run is read in one pass with nothing to backtrack into.
_SPACED_RE = re.compile(r"\S(?: \S){5,63}(?! ?\S)")
# A passphrase of plain words, up to the end of its line: "molen sommer bada kot".
_LOWER = "a-zß-ÿıłńśźżąćęğşа-яё"
_PHRASE_RE = re.compile(
    f"[{_LOWER}]{{3,16}}(?: [{_LOWER}]{{3,16}}){{3,7}}(?=[ \\t]*[.]?[ \\t]*$)", re.MULTILINE
)
# Recovery codes listed after their label, on its line or the lines below.
_ONE_CODE = r"(?:[A-Za-z0-9]{4,6}-[A-Za-z0-9]{4,6}|\d{4} \d{4}|[A-Za-z0-9]{8,12})"
_CODE_RE = re.compile(f"(?<![\\w-]){_ONE_CODE}(?![\\w-])")
# A line that lists codes and nothing else (a bullet or number may lead): codes inside a
# sentence ("see 1Password item 8f3k2a9d") are references, not the codes.
_CODE_LINE_RE = re.compile(
    f"[ \\t:]*(?:(?:[-*•]|\\d{{1,2}}[.)])[ \\t]+)?{_ONE_CODE}(?:[ \\t,;]+{_ONE_CODE})*[ \\t,;]*\\r?"
)
_RECOVERY_REACH = 600
_PIN_QUALIFIER_REACH = 8
# The last characters of those qualifiers: most labels need no regex search at all.
_QUALIFIER_LAST = frozenset("卡款付屏锁鎖机機户戶号座드금좌장dm 禁関ク庫관락문고ıirealа箱柜櫃门門")
_MAX_CODE_LINE = 200
# Where a spaced-out or word-by-word value may start: what `_VALUE_CHAR_RE` cannot see.
_SPREAD_HINT_RE = re.compile(f"\\S(?: \\S){{5}}|[{_LOWER}]{{3,16}}(?: [{_LOWER}]{{3,16}}){{2}}")
# A password manager after a label says where the password is kept ("…в KeePass, запись …").
_VAULTS = frozenset(("keepass", "keepassxc", "1password", "bitwarden", "lastpass", "dashlane"))
_COLON_NEXT_RE = re.compile(r".?[ \t]*[:：]")
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")
# Words after a PIN label that say what it unlocks, keeping the next word its value.
_PIN_OBJECTS = _set(
    """
    card sim phone karte handy carte tarjeta carta cartão cartao kaart telefoon карты карта
    телефона karty telefonu kartı kartın telefon telefono cellulare téléphone telefone
    bancomat del della dello de du des la le der die do da dos das van het от od
    """
)
# "비밀번호 4821", "密码 123456": CJK writes a door or card code right after the label.
_YEAR_RE = re.compile(r"(?:19|20)\d\d")
# ... and ends the sentence with it, or with a copula glued to it ("4821입니다"), unlike
# "비밀번호 1234 같은 건 쓰지 마세요" ("don't use passwords like 1234").
_CJK_CODE_END_RE = re.compile(r"[^\s\d]{0,6}[ \t]*(?:[.,!;)。，、！]|\r?\n|$)")
# The value comes on the line below: "The password is below:", "Kennwort steht unten:".
_BELOW_RE = re.compile(
    r"below|underneath|following|unten|folgend|dessous|suivant|abajo|siguiente|sotto|seguente"
    r"|abaixo|seguinte|hieronder|volgende|ниже|следующ|poniżej|następując|aşağıda|aşağı"
    r"|如下|以下|下面|下方|下記|아래|다음"
)
_NEXT_LINE_REACH = 80
# What may stand before a label that ends a short line: a few words ("New", "새", "新しい",
# "gib mal das WLAN-").
_HEADING_RE = re.compile(r"[ \t#*>-]*(?:[^\W\d_]{1,16}[ \t]+){0,5}[^\W\d_-]{0,16}-?")
# A reply on the line below a question or a request that names a password: it starts with
# a dash or an arrow ("— ja: X", "-> X", "——X"); a bullet ("- x") or a speaker ("B: x",
# "[10:32] Ana: x") answers only a question.
_REPLY_RE = re.compile(
    r"(?P<q>[?？])?[ \t]*\r?\n[ \t]*"
    r"(?P<mark>(?P<dash>[—–―]+|-+>|=>|→)|-(?=[ \t])"
    r"|(?:\[[^\]\n]{1,24}\][ \t]*)?[^\W\d_][\w.-]{0,15}:(?=[ \t]))?[ \t]*"
)
# The sentence after one that names a password, correcting it: "正しくは X です".
_CORRECTION_RE = re.compile(
    r"[ \t]*(?:[^\W\d_]{1,12}[ \t]+){0,2}?"  # "The", "Das", "O", "Het"
    r"(?:正しくは|正しいのは|本当は|正确的是|正確的是|应该是|應該是|정확히는|맞는 |올바른 "
    r"|correct|right one|richtig|korrekt|bon(?:ne)?\b|corret[ao]|giust[ao]|juiste"
    r"|правильн|poprawn|prawidłow|doğru)",
    re.IGNORECASE,
)
# What code assigns: a string, a variable, a number, a name ("max_tokens=800", "mode=fast");
# "VKIW=c68x6M9" or "kolibri=brise=duna431" has "=" inside a typed value instead.
_CODE_VALUE_RE = re.compile(r"[\"'$].*|[A-Za-z_][A-Za-z_.\-]*\d{0,4}|\d+(?:\.\d+)?[A-Za-z%]{0,3}")
_NEXT_VALUE_RE = re.compile(
    r"[ \t]*(?:[-*•>][ \t]+)?[`\"'“„«「]?(\S{1,128}?)[`\"'”“»」]?[ \t]*\r?(?:\n|$)"
)
# "P a s s w o r d:", "密 码：", "Passw0rd:", "Pa$$wort=": a label disguised by spacing
# its letters or by digits and signs for letters; the collapsed word must be a label.
# Words of a spaced label are apart by a wider gap ("m o t  d e  p a s s e :"); a label in
# digits and signs may have up to three words ("m0t de p4sse :", "p4r0l4 d'ordine:").
_DISGUISED_RE = re.compile(
    r"(?<!\S)\w(?P<sep>[ .\-_*・·])\w(?:(?P=sep){1,3}\w){0,24}(?=[ \t]?[:：=])"
    r"|(?<![\w@$])(?=[\w@$'’ \t]{0,40}?[0-9@$])[\w@$'’]{1,12}(?:[ \t][\w@$'’]{1,12}){0,2}"
    r"(?=[ \t]?[:：=])"
)
_LEET = str.maketrans("0134579@$", "oieastgas")
_LEET_CYRILLIC = str.maketrans("0346@", "озчба")  # "пар0ль"
_TR_PASSWORDS = ("şifre", "sifre", "parola")
_PREV_WORD_RE = re.compile(r"(\S{8,64})[ \t]+$")
_ASIDE_RE = re.compile(r"\([^()\s]{1,24}\)[:=]")
_CYRILLIC_RE = re.compile("[\u0400-\u04ff]")
# Cheap test before the disguised-label pass: a spaced-out run or a digit inside a word,
# before a colon.
_DISGUISED_HINT_RE = re.compile(
    r"\w[ .\-_*・·]\w[ \t]?[:：=]|(?<=[^\W\d_])[0-9@$][\w@$'’ \t]{0,30}?[:：=]"
)


def _fold(text: str) -> str:
    folded = text.lower()
    if len(folded) == len(text):
        return folded
    # A character expanded ("İ" lowers to "i" plus a combining dot); fold one by one and
    # keep the first character so offsets stay aligned ("ŞİFRE" still reads "şifre").
    return "".join(ch.lower()[0] for ch in text)


def _is_letter(ch: str) -> bool:
    return ch.isalpha() and not ("\u2e80" <= ch <= "\ud7af")


def label_span(folded: str, start: int, end: int, label: Label) -> bool:
    """Whether the match is a whole label, not the middle of an unrelated word or a name."""
    n = len(folded)
    if label.script == "latin":
        lo = start
        if label.compound:
            while lo > 0 and start - lo < 24 and _is_letter(folded[lo - 1]):
                lo -= 1
        before = folded[lo - 1] if lo > 0 else " "
        if before == "/" and _USER_SLASH_RE.search(folded, max(0, lo - 20), lo):
            before = " "  # "login/password:", "user/pass"
        if _is_letter(before) or before.isdigit() or before in _NAME_CHARS:
            return False
        if before == "-" and not label.compound:
            return False
        if label.weak and (before in _QUOTES or folded[end : end + 1] in _QUOTES):
            return False  # 'pw' in quotes is a string, not someone's label
        i = end
        while i < n and i - end <= label.suffix and _is_letter(folded[i]):
            i += 1
        if i - end > label.suffix:
            return False
        after = folded[i] if i < n else " "
        if label.weak and not (
            after.isspace() or after in ":=：,.;)'’" or CJK_LETTER_RE.match(after)
        ):
            return False  # "kw!MB…", "pw#1": letters inside a value, not a shorthand label
        # "password_file", "token2", "password-protected", "secret.txt": names, not labels.
        if after.isdigit() or after == "_":
            return False
        return not (after in "-." and i + 1 < n and folded[i + 1].isalnum())
    nxt = folded[end] if end < n else ""
    if label.script == "ko":
        return not ("\uac00" <= nxt <= "\ud7af") or nxt in _KO_PARTICLES
    if label.script == "ja":
        return not ("\u30a1" <= nxt <= "\u30ff")
    return nxt not in _ZH_NOT_LABEL


def _clean(word: str) -> str:
    # Brackets and braces at the front stay: "{password!r}", "<token>", "[hidden]" are slots.
    word = word.lstrip(_LEAD).rstrip(_EDGE)
    if len(word) > 4 and word[:2] == word[-2:] in ("**", "__"):
        word = word[2:-2]  # Markdown emphasis around the value
    word = _TR_SUFFIX_RE.sub("", word)
    return word.rstrip(_TRAIL) if word[-1:] in _TRAIL else word


def _judge(kind: str, value: str, mode: str, *, code: bool = False) -> bool:
    """mode: "after" a connector, "next" after a preposition or glued to the label, "near".

    `code`: the label names a door's or a building's code, which may be "6182D" or "GWSA-ZBHO".
    """
    if mode != "near" and kind not in (PIN, DEVICE_PIN) and sigil_password(value):
        return True  # "Kennwort ist »&cometSparrow4496«"
    if kind == PASSPHRASE and mode != "near" and phrase_words(value):
        return True  # "Frase-senha do cofre: cobalt-juniper-harbor-fjord"
    if code and mode != "near" and access_code(value):
        return mode == "after" or (
            any(ch.isdigit() for ch in value) and not _YEAR_RE.fullmatch(value)
        )
    if kind == DEVICE_PIN:
        # "银行卡密码 754648", "카드 비밀번호 1627": a password, or digits even without a connector
        return _judge(PASSWORD, value, mode) or (mode != "near" and pin_like(value))
    if kind == PIN:
        # "PIN 4821": digits right after a PIN label need no connector.
        if mode == "next":
            return pin_like(value)
        return mode == "after" and (pin_like(value) or looks_random(value))
    if kind in PASSWORD_KINDS:
        if mode == "after":
            # After "password:" or "密码是" even six plain digits are the password itself.
            return prose_password(value) or numeric_password(value) or _digits(value, 6)
        if mode == "next":
            return (
                (class_count(value) >= 3 and prose_password(value))
                or looks_random(value)
                or numeric_password(value)
            )
        return strong_password(value)
    if mode == "after":
        return token_like(value)
    if mode == "next":
        return looks_random(value) or (token_like(value) and len(value) >= 16)
    return looks_random(value)


def _digits(value: str, least: int) -> bool:
    return value.isdigit() and len(value) >= least and len(set(value)) > 2


def _login_value(text: str, start: int, end: int) -> tuple[int, int] | None:
    """For "login: alice / s3cret", the span of the password after the user name."""
    m = _PAIR_RE.match(text, start, min(len(text), end + 80))
    if m is None:
        return None
    return m.start("pw"), m.start("pw") + len(_clean(m.group("pw")))


def _scan_window(
    text: str,
    folded: str,
    pos: int,
    label: Label,
    negations: Positions,
    nexts: tuple[Next, Next, Next],
    *,
    answer: bool = False,
    reply: bool = False,
) -> Hit | None:
    """The value a label at `pos` introduces; `answer` reads the clause after its question
    ("pwd del server? è X", "скинь пароль? — держи: X"), where only a connector opens it,
    or a `reply`, after the dash or arrow that starts it on the next line."""
    stop = nexts[0].find(pos)
    end = min(pos + _WINDOW, stop)
    hit = _read_window(text, folded, pos, end, label, negations, nexts, answer=answer, reply=reply)
    if hit is not None or answer or reply or end != stop or negations.within(pos, stop):
        return hit
    if text[stop : stop + 1] == "?":
        line_end = text.find("\n", stop, stop + _WINDOW)
        if line_end != stop + 1:
            return _scan_window(text, folded, stop + 1, label, negations, nexts, answer=True)
    below = _REPLY_RE.match(text, stop)
    if below is not None and (below.group("dash") or (below.group("q") and below.group("mark"))):
        # "hast du das Passwort?\n— ja: X", "скинь пароль плз\n— X": the reply below
        return _scan_window(text, folded, below.end(), label, negations, nexts, reply=True)
    fix = (
        _CORRECTION_RE.match(text, stop + 1) if text[stop : stop + 1] in ("。", ".", "!") else None
    )
    if fix is not None:
        # "パスワード間違ってた。正しくは X です": the next sentence corrects it
        return _scan_window(text, folded, stop + 1, label, negations, nexts, answer=True)
    return None


def _read_window(
    text: str,
    folded: str,
    pos: int,
    end: int,
    label: Label,
    negations: Positions,
    nexts: tuple[Next, Next, Next],
    *,
    answer: bool,
    reply: bool = False,
) -> Hit | None:
    _, value_char, spread = nexts
    # No word in the window can pass a value rule: only a spread-out value might be there.
    spread_only = value_char.find(pos) >= end
    if spread_only and (label.kind not in PASSWORD_KINDS or spread.find(pos) >= end):
        return None
    kind = label.kind
    weak = label.weak or answer or reply
    # How the next word would be judged: "next" right after the label or a preposition,
    # "after" a connector, "near" once a word has come between.
    state = "after" if reply else "near" if answer else "next"
    preposition = False  # the last grammar word was a preposition ("to", Polish "to")
    prev = pos
    between = 0  # words read since the label that were neither grammar nor values
    for count, m in enumerate(_WORD_RE.finditer(text, pos, end)):
        if count >= _MAX_WORDS:
            break
        word = m.group()
        wstart = m.start()
        if word in _CODE_OPERATORS:
            return None  # "PASSWORD = "Zx9" + "...", "f(x) == y": code, not prose
        aside = _ASIDE_RE.match(word)
        if aside is not None and aside.end() < len(word):
            # "パスワード（PW）：x", "password (admin):x": an aside glued to its connector
            wstart += aside.end() - 1
            word = word[aside.end() - 1 :]
        if word[0] in ":=":
            # "密码:x", "key =x": a connector glued to the value
            bare = word.lstrip(":=")
            if not bare:
                if negations.within(prev, m.end()):
                    return None  # "암호화 키 해시: …": a hash of the key
                state = "after"
                prev = m.end()
                continue
            wstart += len(word) - len(bare)
            word = bare
        gap = text[prev:wstart]
        if negations.within(prev, m.end()):
            return None
        prev = m.end()
        lower = folded[wstart : m.end()]
        if state != "after":
            state = _gap_state(gap, state)
        if lower in CONNECTOR_WORDS or (lower.endswith(":") and lower[:-1] in CONNECTOR_WORDS):
            state = "after"
            continue
        if lower in PREPOSITION_WORDS:
            state = "next"
            preposition = True
            continue
        vault = lower.rstrip(",.;:") in _VAULTS
        if vault and not preposition and _COLON_NEXT_RE.match(text, wstart + len(word) - 1):
            continue  # "Phrase de passe du coffre KeePass : …": the vault names what it opens
        if lower in _CODE_WORDS or vault:
            return None  # "token=lambda n: ...", "password = None"
        if kind in (PIN, DEVICE_PIN) and lower.rstrip(":") in _PIN_OBJECTS:
            if lower.endswith(":"):
                state = "after"
            continue  # "PIN карты 4821", "PIN der Karte: 4821": what the PIN unlocks
        other = _label_kind(lower)
        if other is not None:
            if state != "after" and _qualifies(kind, other):
                # "Mot de passe Wi-Fi : …", "la clave del wifi es …", "phrase secrète de la
                # clé GPG : …", "Passwort für den Gastzugang: …": the second label says what
                # the first one opens.
                between += 1
                state = "after" if word.endswith((":", "=")) else "near"
                weak = False  # "pw fürs WLAN", "пасс от вайфая": two labels agree
                continue
            return None  # another label: its own window reads what follows it
        code = _ASSIGNMENT_RE.match(word)
        if code is not None and _CODE_VALUE_RE.fullmatch(_clean(word[code.end() :]) or "_"):
            return None  # "max_tokens=800": code, which the assignment rules read
        if state == "after" and lower in ADVERB_WORDS:
            continue  # "is now X", "ist jetzt X": the value is still to come
        if state == "after" and (len(word) == 1 or (word.isalpha() and word.islower())):
            spread_hit = _spread_value(text, wstart, kind)
            if spread_hit is not None:
                return spread_hit
        if state != "near" and kind in PASSWORD_KINDS and kind != LOGIN:
            # After a preposition too: "changed it to Lotus panda 112-", Polish "… to X".
            opened = state == "after" or (state == "next" and preposition)
            spaced = spaced_password(text, wstart, after=opened and not weak)
            if spaced is not None:
                return Hit(spaced[0], spaced[1], kind, PRIO_LABEL)
        if spread_only:
            between += 1
            state = "after" if word.endswith((":", "=")) else "near"
            continue
        value = _clean(word)
        if value:
            vstart = wstart + word.find(value)
            if kind in (LOGIN, WIFI, USER):
                # "login: alice / s3cret", and "логин/пароль admin/s3cret" with no colon
                if state == "after" or (state == "next" and "/" in word):
                    return _login_hit(text, vstart, value, end, kind)
                state = "after" if word.endswith((":", "=")) else "near"
                continue
            if state == "after" or not weak:
                value = _with_final_mark(text, vstart, value, m.end())
                if _judge(kind, value, state, code=label.code):
                    return Hit(vstart, vstart + len(value), kind, PRIO_LABEL)
                if (
                    state == "next"
                    and label.script != "latin"
                    and kind in PASSWORD_KINDS
                    and pin_like(value)
                    and not _YEAR_RE.fullmatch(value)
                    and _CJK_CODE_END_RE.match(text, vstart + len(value))
                ):
                    return Hit(vstart, vstart + len(value), kind, PRIO_LABEL)
                pin = kind in (PIN, DEVICE_PIN)
                if pin and state == "near" and between == 1 and _digits(value, 6):
                    # "код разблокировки телефона 383435": a genitive, then the digits
                    return Hit(vstart, vstart + len(value), kind, PRIO_LABEL)
        between += 1
        state = "after" if word.endswith((":", "=")) else "near"
    return None


def _qualifies(kind: str, other: str) -> bool:
    """Whether a second label inside a window only says what the first one's secret opens."""
    if other == WIFI:
        return True
    if kind not in PASSWORD_KINDS:
        return False
    if kind == PASSPHRASE and other == PASSWORD:
        return True  # "Кодовая фраза для менеджера паролей: …"
    return other not in PASSWORD_KINDS or (other == LOGIN and kind != LOGIN)


def _label_kind(word: str) -> str | None:
    """The kind of the label a word is, if it is one."""
    m = LABEL_RE.search(word)
    if m is None:
        return None
    label = label_for(m.group())
    return label.kind if label_span(word, m.start(), m.end(), label) else None


def _with_final_mark(text: str, vstart: int, value: str, wend: int) -> str:
    """ "password: Sol27?" at the end of a line: the mark is the password's last character.

    Mid-sentence "?" and "!" end the sentence; at the very end of a short line after a
    connector they are far more often typed into the value, and a value that needs them to
    pass the rules would otherwise be too short to judge.
    """
    end = vstart + len(value)
    mark = text[end : end + 1]
    if mark not in ("?", "!") or len(value) >= 8 or end + 1 < wend:
        return value
    rest = text[end + 1 : end + 2]
    return value + mark if rest in ("", "\n", "\r") else value


def _spread_value(text: str, wstart: int, kind: str) -> Hit | None:
    """A value typed with spaces: one character at a time, or a passphrase of plain words."""
    m = _SPACED_RE.match(text, wstart)
    if m is not None:
        joined = m.group().replace(" ", "")
        ok = pin_like(joined) if kind == PIN else _judge(kind, joined, "after")
        if ok or strong_password(joined) or looks_random(joined):
            return Hit(m.start(), m.end(), kind, PRIO_LABEL)
    if kind in PASSWORD_KINDS:
        m = _PHRASE_RE.match(text, wstart)
        if m is not None and diceware_phrase(m.group()):
            return Hit(m.start(), m.end(), kind, PRIO_LABEL)
    span = phrase_at(text, wstart) if kind == PASSPHRASE else None
    return None if span is None else Hit(span[0], span[1], kind, PRIO_LABEL)


def _recovery_hits(text: str, pos: int) -> list[Hit]:
    """Codes listed after a "recovery codes" label: on lines of their own, up to a few
    hundred characters on, and no further than a blank line once the list has begun."""
    hi = min(len(text), pos + _RECOVERY_REACH)
    hits: list[Hit] = []
    lines: dict[int, bool] = {}
    for m in _CODE_RE.finditer(text, pos, hi):
        if hits and _BLANK_LINE_RE.search(text, hits[-1].end, m.start()):
            break
        if not recovery_code(m.group()):
            continue
        start = max(pos, text.rfind("\n", pos, m.start()) + 1)
        if start == pos and not hits and m.start() - pos <= _NEXT_LINE_REACH:
            # "Backup-Code für die Zwei-Faktor-Anmeldung: 8210…": words, a colon, the code
            colon = max(text.rfind(":", pos, m.start()), text.rfind("：", pos, m.start()))
            if colon >= 0 and not _SENTENCE_END_RE.search(text, pos, colon):
                start = colon + 1
        if start not in lines:
            stop = text.find("\n", m.end(), start + _MAX_CODE_LINE + 1)
            stop = len(text) if stop < 0 else stop
            fits = stop - start <= _MAX_CODE_LINE
            lines[start] = fits and _CODE_LINE_RE.fullmatch(text, start, stop) is not None
        if lines[start]:
            hits.append(Hit(m.start(), m.end(), RECOVERY, PRIO_LABEL))
    return hits


def _gap_state(gap: str, state: str) -> str:
    """A connector in the text between words makes the next word the value, unless more
    words (CJK has no spaces: "密码：见X" is "password: see X") follow the connector."""
    ends = [m.end() for m in _GAP_CONNECTOR_RE.finditer(gap)]
    if not ends:
        return state
    rest = gap[ends[-1] :]
    return "near" if CJK_LETTER_RE.search(rest) else "after"


def _value_before(text: str, folded: str, line_start: int, start: int, label: Label) -> Hit | None:
    """ "use X as the password", "X als Passwort": a value a few words before an "as"."""
    lo = max(line_start, start - _WINDOW)
    words = list(_WORD_RE.finditer(text, lo, start))[-_MAX_WORDS:]
    for i in range(len(words) - 1, -1, -1):
        if folded[words[i].start() : words[i].end()] in AS_WORDS:
            break
    else:
        return None
    if len(words) - i > 4:
        return None  # the "as" belongs to something else in a long clause
    for m in reversed(words[max(0, i - 4) : i]):
        value = _clean(m.group())
        if value and (strong_password(value) or looks_random(value)):
            vstart = m.start() + m.group().find(value)
            return Hit(vstart, vstart + len(value), label.kind, PRIO_LABEL)
    return None


def _login_hit(text: str, vstart: int, value: str, end: int, kind: str) -> Hit | None:
    span = _login_value(text, vstart, end)
    if span is not None and prose_password(text[span[0] : span[1]]):
        if kind != USER:
            return Hit(span[0], span[1], kind, PRIO_LABEL)
        if _USER_NAME_RE.fullmatch(text, vstart, span[0]):
            return Hit(span[0], span[1], LOGIN, PRIO_LABEL)  # "user: alice / s3cret"
    if kind == WIFI and wifi_key(value):
        return Hit(vstart, vstart + len(value), kind, PRIO_LABEL)  # "wifi casa nonna: X"
    if kind == USER:
        return None  # a user name alone, however random, is no secret
    if looks_random(value) and not _UUID_RE.fullmatch(value):
        # "identifiant de la requête : <uuid>": an identifier, not a login's secret
        return Hit(vstart, vstart + len(value), kind, PRIO_LABEL)
    return None


def _element_value(text: str, start: int, kind: str) -> Hit | None:
    """ "<motdepasse>Xk29…</motdepasse>": an XML element named by a label holds its value."""
    stop = text.find("<", start, start + 256)
    if stop < 0:
        return None
    value = text[start:stop].strip()
    if not value or "\n" in value or not _judge(kind, value, "after"):
        return None
    vstart = text.index(value, start)
    return Hit(vstart, vstart + len(value), kind, PRIO_LABEL)


def _value_below(
    text: str,
    folded: str,
    start: int,
    end: int,
    label: Label,
    negations: Positions,
    value_char: Next,
) -> Hit | None:
    """A label whose line ends in a colon or says "below", or that is the line's heading
    ("新しいパスワード", "New password"), and one value alone on the next."""
    nl = text.find("\n", end, end + _NEXT_LINE_REACH)
    if nl < 0:
        return None
    kind = label.kind
    tail = folded[end:nl].rstrip(" \t\r")
    below = _BELOW_RE.search(tail) is not None
    # A bare heading ("新しいパスワード") or a question ("wifi pw?") above a value alone.
    heading = kind != PIN and (
        tail.endswith(("?", "？")) or (not tail and _short_lead(folded, start))
    )
    if not (tail.endswith((":", "：")) or below or heading):
        return None
    # "…は下記の通りです。", "is as follows.": a sentence about the line below may end first.
    core = tail.rstrip(":：。.") if below else tail.rstrip(":：?？")
    if _SENTENCE_END_RE.search(core) or negations.within(end, nl):
        return None
    start = nl + 1
    if heading and text.startswith(("\n", "\r\n"), start):
        return None  # a heading above a paragraph
    if text.startswith("\n", start) or text.startswith("\r\n", start):
        start = text.find("\n", start) + 1  # one blank line between is fine
    below_end = text.find("\n", start, start + _NEXT_LINE_REACH * 2)
    if value_char.find(start) >= (below_end if below_end >= 0 else len(text)):
        return None  # nothing below that any value rule could pass (see `_VALUE_CHAR_RE`)
    m = _NEXT_VALUE_RE.match(text, start, min(len(text), start + 160))
    if m is None:
        return None
    value = _clean(m.group(1)) if m.group(1)[-1:] in _EDGE else m.group(1)
    # Under a bare heading the value must look typed on its own, as if glued to its label.
    mode = "next" if heading else "after"
    if not value or CJK_LETTER_RE.search(value) or not _judge(kind, value, mode, code=label.code):
        return None
    vstart = m.start(1) + m.group(1).find(value)
    return Hit(vstart, vstart + len(value), kind, PRIO_LABEL)


def _short_lead(text: str, pos: int) -> bool:
    """Whether the line up to `pos` holds at most a few words ("New", "gib mal das")."""
    lo = text.rfind("\n", max(0, pos - _NEXT_LINE_REACH), pos) + 1
    if lo == 0 and pos > _NEXT_LINE_REACH:
        return False
    return _HEADING_RE.fullmatch(text, lo, pos) is not None


def _disguised_hits(text: str, folded: str) -> Iterator[Hit]:
    """Values after labels written "P a s s w o r d:", "密 码：" or "Passw0rd:"."""
    negations = Positions(NEGATING_RE, folded)
    nexts = (
        Next(_SENTENCE_END_RE, text),
        Next(_VALUE_CHAR_RE, text),
        Next(_SPREAD_HINT_RE, text),
    )
    for m in _DISGUISED_RE.finditer(folded):
        sep = m.group("sep")
        word = m.group()
        if sep:
            word = re.sub(f"{re.escape(sep)}{{2,}}", "\0", word).replace(sep, "")
            word = word.replace("\0", " ")
        elif not any(ch in "0123456789@$" for ch in word):
            continue  # words before a colon, with no digit or sign standing in for a letter
        leet = _LEET_CYRILLIC if _CYRILLIC_RE.search(word) else _LEET
        word = word.translate(leet)
        found = LABEL_RE.match(word)
        if word == m.group() or found is None:
            continue
        label = label_for(found.group())
        rest = word[found.end() :]
        if len(rest) > label.suffix or (rest and not rest.isalpha()):
            continue
        if not label_span(word, 0, found.end(), label):
            continue
        line_start = folded.rfind("\n", max(0, m.start() - _LEFT_CONTEXT), m.start()) + 1
        if negations.within(max(line_start, m.start() - _LEFT_CONTEXT), m.start()):
            continue
        hit = _scan_window(text, folded, m.end(), label, negations, nexts)
        if hit is not None:
            yield hit


def labelled_hits(text: str) -> Iterator[Hit]:
    """Yield values that a secret-naming label introduces in prose, chat or notes."""
    yield from _labelled_hits(text)
    if _DISGUISED_HINT_RE.search(text):
        yield from _disguised_hits(text, _fold(text))


def _labelled_hits(text: str) -> Iterator[Hit]:
    folded = _fold(text)
    negations = Positions(NEGATING_RE, folded)
    as_words = Positions(_AS_RE, folded)
    nexts = (
        Next(_SENTENCE_END_RE, text),
        Next(_VALUE_CHAR_RE, text),
        Next(_SPREAD_HINT_RE, text),
    )
    pos = 0
    recovery_read = 0  # a later label inside a region already read adds nothing
    for m in LABEL_RE.finditer(folded):
        if m.start() < pos:
            continue
        label = label_for(m.group())
        if not label_span(folded, m.start(), m.end(), label):
            continue
        if label.kind in PASSWORD_KINDS and folded[m.start() - 1 : m.start()] == "/":
            label = _LOGIN_LABEL  # "login/password: alice / s3cret" gives a pair
        elif (
            label.kind in PASSWORD_KINDS
            and folded[m.start() - 1 : m.start()] in _QUALIFIER_LAST
            and PIN_QUALIFIER_RE.search(folded, max(0, m.start() - _PIN_QUALIFIER_REACH), m.start())
        ):
            # what a door or a safe asks for may also be a short code ("현관 … 1350C")
            label = Label(DEVICE_PIN, label.compound, label.suffix, label.script, label.weak, True)
        line_start = folded.rfind("\n", max(0, m.start() - _LEFT_CONTEXT), m.start()) + 1
        if negations.within(max(line_start, m.start() - _LEFT_CONTEXT), m.start()):
            continue
        if label.kind == RECOVERY:
            if m.start() >= recovery_read:
                recovery_read = m.end() + _RECOVERY_REACH
                codes = _recovery_hits(text, m.end())
                if codes:
                    pos = codes[-1].end
                    yield from codes
            continue
        end = m.end()
        if label.script == "latin":
            while end < len(folded) and end - m.end() <= label.suffix and _is_letter(folded[end]):
                end += 1
        if folded[m.start() - 1 : m.start()] == "<" and text[end : end + 1] == ">":
            hit = _element_value(text, end + 1, label.kind)
            if hit is not None:
                pos = hit.end
                yield hit
                continue
        hit = _scan_window(text, folded, end, label, negations, nexts)
        if hit is None and label.kind != RECOVERY:
            hit = _value_below(text, folded, m.start(), end, label, negations, nexts[1])
        if (
            hit is None
            and label.kind in PASSWORD_KINDS
            and as_words.within(max(line_start, m.start() - _AS_REACH), m.start())
        ):
            hit = _value_before(text, folded, line_start, m.start(), label)
        if hit is None and folded.startswith(_TR_PASSWORDS, m.start()):
            hit = _owner_value(text, line_start, m.start(), label.kind)
        if hit is not None:
            pos = hit.end
            yield hit


def _owner_value(text: str, line_start: int, start: int, kind: str) -> Hit | None:
    """Turkish puts what a password belongs to before it: "Xr7#kLm2Qp şifresiyle giriş yap"
    ("log in with the password X"); only a strong password there is one."""
    prev = _PREV_WORD_RE.search(text, max(line_start, start - 80), start)
    if prev is None:
        return None
    value = _clean(prev.group(1))
    if not any(ch.isdigit() for ch in value) or not strong_password(value):
        return None  # "Kullanıcı-adı şifresiyle": a compound word, not a password
    vstart = prev.start(1) + prev.group(1).find(value)
    return Hit(vstart, vstart + len(value), kind, PRIO_LABEL)
