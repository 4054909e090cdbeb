"""Secrets named in running text of any of thirteen languages: "Passwort: …", "密码是…", "…입니다".

A label from the lexicon opens a short window on its line.  Words in the window are read in
order: a connector (colon, copula, CJK particle) makes the next words candidate values, a
preposition only the next one, and a value with no grammar around it must look typed or
machine-made on its own.  Hash, public-key and example context closes the window.
After a connector a value may also be spread out ("N e b e l 4 2") or be a passphrase of
plain words; a second label in the window may qualify the first ("Passwort fürs WLAN"), and
"recovery codes" labels read the list of codes on the lines below them.
A password may hold spaces when quoted ("„Mare tulp 355&“") or, mixing all four character
classes, fill the rest of its line; a label whose line ends in a colon or says "below" reads
one value alone on the next line; "<motdepasse>…</motdepasse>" is a label's element; and
labels disguised as "P a s s w o r d:", "密 码：" or "Passw0rd:" are read in a second pass.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from .hit import PRIO_LABEL, Hit
from .lexicon import (
    ADVERB_WORDS,
    AS_WORDS,
    CJK_CONNECTOR_RE,
    CONNECTOR_WORDS,
    DEVICE_PIN,
    LABEL_RE,
    LOGIN,
    NEGATING_RE,
    PASSWORD,
    PASSWORD_KINDS,
    PIN,
    PIN_QUALIFIER_RE,
    PREPOSITION_WORDS,
    RECOVERY,
    WIFI,
    Label,
    label_for,
)
from .values import (
    class_count,
    diceware_phrase,
    looks_random,
    numeric_password,
    pin_like,
    prose_password,
    recovery_code,
    strong_password,
    token_like,
)

__all__ = ["labelled_hits"]


def _set(words: str) -> frozenset[str]:
    """A set from whitespace-separated words; keeps long vocabularies readable."""
    return frozenset(words.split())


_CJK = (
    "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uff00-\uffef"
)
_QUOTES = "\"'`“”„‚‘’«»‹›「」『』【】《》〈〉"
# A word in the window: anything up to whitespace, a CJK character or a quote.
_WORD_RE = re.compile(f'[^\\s{_CJK}"`“”„«»「」『』【】《》〈〉]+')
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
_PAIR_RE = re.compile(r"[^\s/|:,=]{1,64}[ \t]*[/|:][ \t]*(?P<pw>[^\s/|,=]{1,128})(?!=)")
_KO_PARTICLES = frozenset("는은이가를을도로으의에만요입값과와 :")
_ZH_NOT_LABEL = frozenset("学學锁鎖箱器本盘機机法")
# Every value rule needs a digit, a symbol or mixed case inside a word ("hViIMTloiO").
_VALUE_CHAR_RE = re.compile(r"[0-9!#$%&*+@^~]|[a-zß-ÿа-яё][A-ZÀ-ÞА-ЯЁ]|[A-ZÀ-ÞА-ЯЁ]{2}[a-zß-ÿа-яё]")
_GAP_CONNECTOR_RE = re.compile(f"[:=|→]|{CJK_CONNECTOR_RE.pattern}")
_CJK_LETTER_RE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
# "max_tokens=800", "maxTokens=8", "MAX=8": an assignment in code, not a typed value.
_ASSIGNMENT_RE = re.compile(
    r"(?:[a-z_][a-z0-9_.\-]*|[A-Z_][A-Z0-9_]*|[a-z]+(?:[A-Z][a-z0-9]+)+)=(?=[A-Za-z0-9_\"'$])"
)
_LOGIN_LABEL = Label(LOGIN)
# "as" must be among the few words right before the label ("as the NAS password").
# Only a hint (it also matches inside "has"); the words themselves are checked afterwards.
_AS_RE = re.compile("|".join(sorted(AS_WORDS)))
_AS_REACH = 48
_LONGEST_HINT = 24  # longer than any negating or "as" word
_READ_AHEAD = 512
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
_QUALIFIER_LAST = frozenset("卡款付屏锁鎖机機户戶号座드금좌장dm ")
_MAX_CODE_LINE = 200
# Where a spaced-out or word-by-word value may start: what `_VALUE_CHAR_RE` cannot see.
_SPREAD_HINT_RE = re.compile(f"\\S(?: \\S){{5}}|[{_LOWER}]{{3,16}}(?: [{_LOWER}]{{3,16}}){{3}}")
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")
# A password typed with spaces: in quotes, or the rest of its line after a colon.
_CLOSING_QUOTES = {
    '"': '"',
    "'": "'",
    "“": "”“",
    "„": "“”",
    "‚": "‘’",
    "‘": "’",
    "«": "»",
    "‹": "›",
    "「": "」",
    "『": "』",
    "`": "`",
}
_MAX_SPACED = 48
# Words after a PIN label that say what it unlocks, keeping the next word its value.
_PIN_OBJECTS = _set(
    """
    card sim phone karte handy carte tarjeta carta cartão cartao kaart telefoon карты карта
    телефона karty telefonu kartı kartın telefon
    """
)
_REST_OF_LINE_RE = re.compile(
    f"([^\\s{_CJK}\"'`“”„«»]+(?: [^\\s{_CJK}\"'`“”„«»]+){{1,3}})[ \\t]*\\r?(?:\\n|$)"
)
_SENTENCE_WORDS = _set(
    """
    at least most min max minimum maximum chars characters letters digits symbols long and or
    the a an of to in with from see ask is are was not no my our your this that same as
    mindestens zeichen und oder der die das mit von ist nicht au moins caractères et ou le la
    les de avec al menos caracteres y o el los con almeno caratteri e pelo menos ou com ten
    minste tekens en of het минимум символов и или не co najmniej znaków lub nie en az
    karakter ve veya must should contain contains include includes enter use have has need
    needs digit symbol symbols letter number numbers siehe muss enthält enthalten voir doit
    contenir ver debe tener vedi deve contenere veja conter zie moet bevatten см должен
    содержать patrz musi zawierać bkz içermeli
    """
)
# The value comes on the line below: "The password is below:", "Kennwort steht unten:".
_BELOW_RE = re.compile(
    r"below|underneath|following|unten|folgend|dessous|suivant|abajo|siguiente|sotto|seguente"
    r"|abaixo|seguinte|hieronder|volgende|ниже|следующ|poniżej|następując|aşağıda|aşağı"
    r"|如下|以下|下面|下方|下記|아래|다음"
)
_NEXT_LINE_REACH = 80
_NEXT_VALUE_RE = re.compile(
    r"[ \t]*(?:[-*•>][ \t]+)?[`\"'“„«「]?(\S{1,128}?)[`\"'”“»」]?[ \t]*\r?(?:\n|$)"
)
# "P a s s w o r d:", "密 码：", "Passw0rd:", "Pa$$wort=": a label disguised by spacing
# its letters or by digits and signs for letters; the collapsed word must be a label.
_DISGUISED_RE = re.compile(
    r"(?<!\S)\w(?P<sep>[ .\-_*])\w(?:(?P=sep)\w){0,14}(?=[ \t]?[:：=])"
    r"|(?<![\w@$])[A-Za-z]{1,12}[0-9@$][A-Za-z0-9@$]{1,12}(?=[ \t]?[:：=])"
)
_LEET = str.maketrans("0134579@$", "oieastgas")
# Cheap test before the disguised-label pass: a spaced-out run or a digit inside a word,
# right before a colon.
_DISGUISED_HINT_RE = re.compile(
    r"\w[ .\-_*]\w[ \t]?[:：=]|[A-Za-z][0-9@$][A-Za-z0-9@$]{0,12}[ \t]?[:：=]"
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


def _label_span(folded: str, start: int, end: int, label: Label) -> bool:
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
        if label.weak and not (after.isspace() or after in ":=：,.;)'’"):
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


def _judge(kind: str, value: str, mode: str) -> bool:
    """mode: "after" a connector, "next" after a preposition or glued to the label, "near"."""
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


class _Positions:
    """Where a regex matches, searched only around labels and only once per character.

    Queries come in order of their label (each starts at most a left context before it), so
    the text already searched is one growing span; a query beyond it searches just the new
    part, overlapping by the longest match so nothing straddling the seam is lost.
    """

    __slots__ = ("_covered", "_regex", "_starts", "_text")

    def __init__(self, regex: re.Pattern[str], text: str) -> None:
        self._regex = regex
        self._text = text
        self._starts: list[int] = []
        self._covered = 0

    def within(self, lo: int, hi: int) -> bool:
        """Whether a match starts in [lo, hi)."""
        if hi > self._covered:
            # Small gaps (the label itself, a short word) are searched too, keeping the span
            # contiguous; a long gap is text no later query reaches back into.
            start = self._covered - _LONGEST_HINT if lo - self._covered <= _WINDOW else lo
            start = max(start, 0)
            # Read ahead: labels often come in runs, and one search per run is cheaper.
            upto = hi + _READ_AHEAD
            seen = self._starts[-1] if self._starts else -1
            for m in self._regex.finditer(self._text, start, upto + _LONGEST_HINT):
                if m.start() > seen and m.start() < upto:
                    self._starts.append(m.start())
            self._covered = upto
        i = bisect.bisect_left(self._starts, lo)
        return i < len(self._starts) and self._starts[i] < hi


class _Next:
    """The next match of a regex at or after a position, remembered between nearby queries.

    Labels can come every few characters; searching each window afresh would rescan the
    same text, while a remembered next match keeps the whole scan linear.
    """

    __slots__ = ("_at", "_from", "_regex", "_text")

    def __init__(self, regex: re.Pattern[str], text: str) -> None:
        self._regex = regex
        self._text = text
        self._from = -1
        self._at = -1

    def find(self, pos: int) -> int:
        """Where the next match starts (len(text) if there is none)."""
        if not (self._from <= pos <= self._at):
            m = self._regex.search(self._text, pos)
            self._from, self._at = pos, (m.start() if m else len(self._text))
        return self._at


def _scan_window(
    text: str,
    folded: str,
    pos: int,
    label: Label,
    negations: _Positions,
    nexts: tuple[_Next, _Next, _Next],
) -> Hit | None:
    sentence_end, value_char, spread = nexts
    end = min(pos + _WINDOW, sentence_end.find(pos))
    # No word in the window can pass a value rule: only a spread-out value might be there.
    spread_only = value_char.find(pos) >= end
    if spread_only and (label.kind not in PASSWORD_KINDS or spread.find(pos) >= end):
        return None
    kind = label.kind
    # How the next word would be judged: "next" right after the label or a preposition,
    # "after" a connector, "near" once a word has come between.
    state = "next"
    prev = pos
    between = 0  # words read since the label that were neither grammar nor values
    for count, m in enumerate(_WORD_RE.finditer(text, pos, end)):
        if count >= _MAX_WORDS:
            break
        word = m.group()
        wstart = m.start()
        if word in _CODE_OPERATORS:
            return None  # "PASSWORD = "Zx9" + "...", "f(x) == y": code, not prose
        if word[0] in ":=":
            # "密码:x", "key =x": a connector glued to the value
            bare = word.lstrip(":=")
            if not bare:
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
            continue
        if lower in _CODE_WORDS:
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
                continue
            return None  # another label: its own window reads what follows it
        if _ASSIGNMENT_RE.match(word):
            return None  # "max_tokens=800": code, which the assignment rules read
        if state == "after" and lower in ADVERB_WORDS:
            continue  # "is now X", "ist jetzt X": the value is still to come
        if state == "after" and (len(word) == 1 or (word.isalpha() and word.islower())):
            spread_hit = _spread_value(text, wstart, kind)
            if spread_hit is not None:
                return spread_hit
        if state != "near" and kind in PASSWORD_KINDS and kind != LOGIN:
            spaced = _spaced_password(text, wstart, after=state == "after" and not label.weak)
            if spaced is not None:
                return Hit(spaced[0], spaced[1], kind, PRIO_LABEL)
        if spread_only:
            between += 1
            state = "after" if word.endswith((":", "=")) else "near"
            continue
        value = _clean(word)
        if value:
            vstart = wstart + word.find(value)
            if kind in (LOGIN, WIFI):
                if state == "after":
                    return _login_hit(text, vstart, value, end, kind)
                state = "after" if word.endswith((":", "=")) else "near"
                continue
            if state == "after" or not label.weak:
                value = _with_final_mark(text, vstart, value, m.end())
                if _judge(kind, value, state):
                    return Hit(vstart, vstart + len(value), kind, PRIO_LABEL)
                pin = kind in (PIN, DEVICE_PIN)
                if pin and state == "near" and between == 1 and _digits(value, 6):
                    # "код разблокировки телефона 383435": a genitive, then the digits
                    return Hit(vstart, vstart + len(value), kind, PRIO_LABEL)
        between += 1
        state = "after" if word.endswith((":", "=")) else "near"
    return None


def _spaced_password(text: str, wstart: int, *, after: bool) -> tuple[int, int] | None:
    """A password with spaces after a connector: quoted ("„Mare tulp 355&“"), or unquoted
    up to the end of its line when it mixes all four character classes ("Lotus panda 112-").
    """
    i = wstart if text[wstart] in "'‘‚" else wstart - 1  # "'" is inside a word's characters
    if i >= 1 and text[i] == " " and text[i - 1] in "«‹":
        i -= 1  # French quotes stand apart from their content: « … »
    opener = text[i] if i >= 0 else ""
    closers = _CLOSING_QUOTES.get(opener)
    if closers is None and not (after and text[wstart : wstart + 1].isalpha()):
        return None  # unquoted, the value starts with a word: "Lotus panda 112-"
    if closers is not None:
        lo = i + 1
        hi = lo
        limit = min(len(text), lo + _MAX_SPACED)
        while hi < limit and text[hi] not in closers and text[hi] != "\n":
            hi += 1
        if hi >= limit or text[hi] not in closers:
            return None
        value = text[lo:hi].strip()
        if " " not in value or not _spaced_value(value, 3):
            return None
        vstart = text.index(value, lo)
        return vstart, vstart + len(value)
    m = _REST_OF_LINE_RE.match(text, wstart, min(len(text), wstart + _MAX_SPACED + 1))
    if m is None or m.group(1).count(" ") < 2 or not _spaced_value(m.group(1), 4):
        return None
    return m.start(1), m.end(1)


def _spaced_value(value: str, classes: int) -> bool:
    words = value.split()
    if not 2 <= len(words) <= 5 or any(w in ("/", "|", "-", "–") for w in words):
        return False
    if any(w.lower().strip(".,;:!?") in _SENTENCE_WORDS for w in words):
        return False  # "at least 12 chars", "see the vault": words about a password
    joined = "".join(words)
    if _CJK_LETTER_RE.search(joined):
        return False
    return (
        any(ch.isdigit() for ch in joined)
        and class_count(joined) >= classes
        and strong_password(joined)
    )


def _qualifies(kind: str, other: str) -> bool:
    """Whether a second label inside a window only says what the first one's secret opens."""
    if other == WIFI:
        return True
    if kind not in PASSWORD_KINDS:
        return False
    return other not in PASSWORD_KINDS or (other == LOGIN and kind != LOGIN)


def _label_kind(word: str) -> str | None:
    """The kind of the label a word is, if it is one."""
    m = LABEL_RE.search(word)
    if m is None:
        return None
    label = label_for(m.group())
    return label.kind if _label_span(word, m.start(), m.end(), label) else None


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
    return None


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
    return "near" if _CJK_LETTER_RE.search(rest) else "after"


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
        return Hit(span[0], span[1], kind, PRIO_LABEL)
    if looks_random(value):
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
    text: str, folded: str, end: int, kind: str, negations: _Positions, value_char: _Next
) -> Hit | None:
    """A label whose line ends in a colon or says "below", and one value alone on the next."""
    nl = text.find("\n", end, end + _NEXT_LINE_REACH)
    if nl < 0:
        return None
    tail = folded[end:nl].rstrip(" \t\r")
    if not (tail.endswith((":", "：")) or _BELOW_RE.search(tail)):
        return None
    if _SENTENCE_END_RE.search(tail.rstrip(":：")) or negations.within(end, nl):
        return None
    start = nl + 1
    if text.startswith("\n", start) or text.startswith("\r\n", start):
        start = text.find("\n", start) + 1  # one blank line between is fine
    below_end = text.find("\n", start, start + _NEXT_LINE_REACH * 2)
    if value_char.find(start) >= (below_end if below_end >= 0 else len(text)):
        return None  # nothing below that any value rule could pass (see `_VALUE_CHAR_RE`)
    m = _NEXT_VALUE_RE.match(text, start, min(len(text), start + 160))
    if m is None:
        return None
    value = _clean(m.group(1)) if m.group(1)[-1:] in _EDGE else m.group(1)
    if not value or _CJK_LETTER_RE.search(value) or not _judge(kind, value, "after"):
        return None
    vstart = m.start(1) + m.group(1).find(value)
    return Hit(vstart, vstart + len(value), kind, PRIO_LABEL)


def _disguised_hits(text: str, folded: str) -> Iterator[Hit]:
    """Values after labels written "P a s s w o r d:", "密 码：" or "Passw0rd:"."""
    negations = _Positions(NEGATING_RE, folded)
    nexts = (
        _Next(_SENTENCE_END_RE, text),
        _Next(_VALUE_CHAR_RE, text),
        _Next(_SPREAD_HINT_RE, text),
    )
    for m in _DISGUISED_RE.finditer(folded):
        sep = m.group("sep")
        word = (m.group().replace(sep, "") if sep else m.group()).translate(_LEET)
        found = LABEL_RE.match(word)
        if word == m.group() or found is None:
            continue
        label = label_for(found.group())
        rest = word[found.end() :]
        if len(rest) > label.suffix or (rest and not rest.isalpha()):
            continue
        if not _label_span(word, 0, found.end(), label):
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
    negations = _Positions(NEGATING_RE, folded)
    as_words = _Positions(_AS_RE, folded)
    nexts = (
        _Next(_SENTENCE_END_RE, text),
        _Next(_VALUE_CHAR_RE, text),
        _Next(_SPREAD_HINT_RE, text),
    )
    pos = 0
    recovery_read = 0  # a later label inside a region already read adds nothing
    for m in LABEL_RE.finditer(folded):
        if m.start() < pos:
            continue
        label = label_for(m.group())
        if not _label_span(folded, m.start(), m.end(), label):
            continue
        if label.kind in PASSWORD_KINDS and folded[m.start() - 1 : m.start()] == "/":
            label = _LOGIN_LABEL  # "login/password: alice / s3cret" gives a pair
        elif (
            label.kind in PASSWORD_KINDS
            and folded[m.start() - 1 : m.start()] in _QUALIFIER_LAST
            and PIN_QUALIFIER_RE.search(folded, max(0, m.start() - _PIN_QUALIFIER_REACH), m.start())
        ):
            label = Label(DEVICE_PIN, label.compound, label.suffix, label.script, label.weak)
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
            hit = _value_below(text, folded, end, label.kind, negations, nexts[1])
        if (
            hit is None
            and label.kind in PASSWORD_KINDS
            and as_words.within(max(line_start, m.start() - _AS_REACH), m.start())
        ):
            hit = _value_before(text, folded, line_start, m.start(), label)
        if hit is not None:
            pos = hit.end
            yield hit
