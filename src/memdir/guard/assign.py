"""Secrets assigned to secret-sounding names in config, code and EN/DE/ZH prose."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .hit import PRIO_ASSIGN, Hit
from .names import KeyClass, classify_key
from .values import looks_random, password_like, plausible_password, prose_phrase

__all__ = ["assignment_hits"]

# Searched in a lower-cased copy: a case-insensitive alternation is several times slower.
_KEYWORD_RE = re.compile(
    r"passwor[dt]|passwd|passphrase|passcode|kennwort|pwd|pass|pw|secret|token|bearer"
    r"|credentials?|creds|auth|key|schl(?:ü|ue)ssel|session|sessid"
    r"|senha|contrasena|wachtwoord|haslo|sifre|parola|parol|motdepasse|mdp"
    r"|chiave|clave|chave|sleutel|klucz|anahtar|clef|cle_|_cle\b"
    r"|парол|ключ|токен|секрет"
    r"|密码|密碼|口令|密钥|密鑰|秘钥|私钥|令牌"
)
_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZÜ", "abcdefghijklmnopqrstuvwxyzü")


def _fold(text: str) -> str:
    folded = text.lower()
    # lower() keeps offsets only if no character expanded (e.g. "İ" becomes two).
    return folded if len(folded) == len(text) else text.translate(_ASCII_FOLD)


_CJK_FIRST = frozenset("密口秘私令")

# Letters of key names: ASCII, German and Turkish letters ("api_anahtarı") and Cyrillic
# ("пароль_бд").
_CYRILLIC = "абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ"
_IDENT_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-äöüÄÖÜßıİşŞğĞçÇ" + _CYRILLIC
)
_IDENT_RUN_RE = re.compile(r"[A-Za-z0-9_.\-äöüÄÖÜßıİşŞğĞçÇа-яёА-ЯЁ]+")
# Longer runs are not names someone gave a secret; bounding the walk keeps scans linear.
_MAX_IDENT = 64

_PREV_WORD_RE = re.compile(r"([A-Za-z]{2,20})[ \t]+$")

_SEP_RE = re.compile(
    r"""
    [\"'`\]*_]{0,3}
    # "password for the staging DB is ...", "Passwort für den Server lautet ..."
    (?P<phrase>[ \t]+(?:for|für|of|von|on|auf|at|to|zum|zur|des|der|in)
        (?:[ \t]+[^\s:=：|`\"']{1,30}){1,4}?)?
    [ \t]{0,16}
    (?:
        (?P<typed>:[ \t]{0,4}[A-Za-z_&][\w.\[\]|<>]{0,40}[ \t]{0,4}=(?!=)(?=[ \t]*[\"'`]))
      | (?P<op>===|==|:=|=>|=|：|＝|:(?!//))
      | (?P<prose>(?:(?:(?:was|is|has[ \t]+been|wurde)[ \t]+)?
                (?:changed|set|reset|updated|geändert)[ \t]+(?:to|auf|zu)
            |is|was|ist|lautet|war|are|sind)
            (?:[ \t]+(?:now|jetzt|nun))?(?:[ \t]{0,4}[:：=])?)(?=[ \t])
      | (?P<cjk>是|为|為)[ \t]{0,4}[:：]?
      | (?P<cell>(?<=[ \t])\|(?=[ \t]))
      | (?P<quote>)(?=[\"'`“„「])
    )
    [ \t]{0,8}[*_]{0,2}[ \t]{0,4}
    """,
    re.VERBOSE | re.IGNORECASE,
)
_FLAG_SEP_RE = re.compile(r"(?:[ \t]{1,4}|=)")
_XML_SEP_RE = re.compile(r">")

_VALUE_RE = re.compile(
    r"\"(?P<dq>[^\"\n]{0,512})\""
    r"|'(?P<sq>[^'\n]{0,512})'"
    r"|`(?P<bq>[^`\n]{0,512})`"
    r"|[“„](?P<cq>[^”“\n]{0,512})[”“]"
    r"|「(?P<jq>[^」\n]{0,512})」"
    r"|(?P<bare>[^\s\"'`,;&<>|\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]{1,256})"
)
_QUOTED_GROUPS = ("dq", "sq", "bq", "cq", "jq")
_TRAILING = ".,:;)]}>?"
_TAIL_END_RE = re.compile(r"[ \t]*(?:$|[#,;}\])]|//|<!--)", re.MULTILINE)

_CHAINED_RE = re.compile(r"[ \t]*=(?!=)")
# Diceware style: a few lowercase words; a capitalised sentence is a description instead.
_PHRASE_RE = re.compile(r"[a-z0-9]+(?:[ -][a-z0-9]+){1,7}[ \t]*(?=$|#)", re.MULTILINE)

_MARKER_RE = re.compile(r"\[REDACTED:[^\]\n]{0,80}\]")


@dataclass(frozen=True, slots=True)
class _Value:
    start: int
    end: int
    text: str
    quoted: bool


def _identifier(text: str, start: int, end: int) -> tuple[int, int] | None:
    lo = start
    while lo > 0 and text[lo - 1] in _IDENT_CHARS:
        lo -= 1
        if start - lo > _MAX_IDENT:
            return None
    run = _IDENT_RUN_RE.match(text, end)
    hi = run.end() if run else end
    if hi - end > _MAX_IDENT:
        return None
    while hi > lo and text[hi - 1] in ".-":
        hi -= 1
    return lo, hi


def _in_colon_path(text: str, lo: int) -> bool:
    if lo == 0 or text[lo - 1] != ":":
        return False
    start = max(0, lo - _MAX_IDENT)
    head = text[start:lo]
    cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return head[cut + 1 :].count(":") >= 2


def _read_value(text: str, pos: int) -> _Value | None:
    m = _VALUE_RE.match(text, pos)
    if m is None:
        return None
    for group in _QUOTED_GROUPS:
        if m.group(group) is not None:
            return _Value(m.start(group), m.end(group), m.group(group), True)
    raw = m.group("bare")
    value = raw.rstrip(_TRAILING)
    if not value:
        return None
    return _Value(m.start("bare"), m.start("bare") + len(value), value, False)


def _name_for(text: str, lo: int, hi: int) -> str:
    name = text[lo:hi]
    # Prose names span two words ("API key", "client secret", "hashed password").
    if name.isalpha():
        prev = _PREV_WORD_RE.search(text, max(0, lo - 24), lo)
        if prev is not None:
            return f"{prev.group(1)} {name}"
    return name


_HEX_ID_RE = re.compile(r"[0-9a-fA-F]{8,}(?:-[0-9a-fA-F]{4,})*")


def _judge(key: KeyClass, value: _Value, structured: bool) -> bool:
    if key.kind.startswith("session id") and _HEX_ID_RE.fullmatch(value.text):
        return False  # hex session and trace ids are what logs quote; cookies carry the rest
    if not key.is_password:
        if looks_random(value.text):
            return True
        if not key.chosen:
            return False
        # A made-up secret still needs a digit: "db-credentials" names a secret object.
        v = value.text
        return len(v) >= 8 and any(c.isdigit() for c in v) and password_like(v)
    if structured:
        return plausible_password(value.text, phrase=key.phrase, literal=value.quoted)
    return password_like(value.text)


@dataclass(frozen=True, slots=True)
class _Sep:
    """Where the value starts and how sure the syntax makes us that it is a literal."""

    pos: int
    # "code": key=value syntax; "colon": key: value; "prose": key is value; "phrase": key for
    # something is value; "quoted": key `value` (only a quoted value counts)
    mode: str


def _separator(text: str, lo: int, hi: int) -> _Sep | None:
    if (lo >= 2 and text[lo - 2 : lo] == "--") or text.startswith("--", lo):
        # "--password=x" is config-like; "--password x" could be prose about the option
        # ("the --password option"), so it is judged like prose.
        flag = _FLAG_SEP_RE.match(text, hi)
        if flag is None:
            return None
        return _Sep(flag.end(), "code" if flag.group() == "=" else "prose")
    if lo >= 1 and text[lo - 1] == "<":
        xml = _XML_SEP_RE.match(text, hi)
        return _Sep(xml.end(), "code") if xml else None
    m = _SEP_RE.match(text, hi)
    if m is None:
        return None
    op = m.group("op")
    if op == "=" and _after_comma(text, lo):
        return None  # tuple unpacking: "username, password = parts"
    phrase = m.group("phrase") is not None
    if m.group("quote") is not None:
        return None if phrase else _Sep(m.end(), "quoted")
    if m.group("cell") is not None and not _after_cell_bar(text, lo):
        return None
    if phrase:
        # Words between name and value make this a sentence; "=" there is some other code.
        return _Sep(m.end(), "phrase") if op in (None, ":", "：") else None
    if op is None and m.group("typed") is None:
        return _Sep(m.end(), "prose")
    return _Sep(m.end(), "colon" if op in (":", "：") else "code")


def _char_before(text: str, lo: int) -> str:
    i = lo - 1
    while i >= 0 and lo - i < 16 and text[i] in " \t*_`":
        i -= 1
    return text[i] if i >= 0 else ""


def _after_comma(text: str, lo: int) -> bool:
    return _char_before(text, lo) == ","


def _after_cell_bar(text: str, lo: int) -> bool:
    # A Markdown table row "| password | value |", not a regex alternation "a|pass|b".
    return _char_before(text, lo) == "|" and lo >= 2 and text[lo - 1] in " \t*_`"


def _one(text: str, lo: int, hi: int, name: str) -> tuple[Hit | None, int]:
    """Judge one secret-sounding name; also return how far the scan may skip ahead."""
    key = classify_key(name)
    if key is None:
        return None, hi
    sep = _separator(text, lo, hi)
    if sep is None:
        return None, hi
    if sep.mode in ("quoted", "prose", "phrase") and not key.strong:
        return None, hi  # "pass `--quiet` down", "pwd is": verbs and commands, not names
    value = _read_value(text, sep.pos)
    if value is None or (sep.mode == "quoted" and not value.quoted):
        return None, hi
    if not value.quoted and _CHAINED_RE.match(text, value.end):
        return None, hi  # "user = passwd = acct = ''": the value is another variable
    if key.phrase and not value.quoted and sep.mode in ("code", "colon"):
        value = _rest_of_line(text, value)
    if sep.mode == "code" or (value.quoted and sep.mode in ("colon", "prose")):
        structured = True
    elif sep.mode == "colon":
        structured = _TAIL_END_RE.match(text, value.end) is not None
    else:
        structured = False
    if not _judge(key, value, structured):
        # A bare value cannot hold another assignment worth finding ("password=password=..."
        # would otherwise be re-read from every repetition), a quoted one might.
        return None, (hi if value.quoted else value.end)
    return Hit(value.start, value.end, key.kind, PRIO_ASSIGN), value.end


def _rest_of_line(text: str, value: _Value) -> _Value:
    # A passphrase may have spaces: "passphrase: correct horse battery staple".
    m = _PHRASE_RE.match(text, value.start)
    if m is None or prose_phrase(m.group()):
        return value
    phrase = m.group().rstrip()
    return _Value(value.start, value.start + len(phrase), phrase, False)


def assignment_hits(text: str) -> Iterator[Hit]:
    """Yield values given to password/token/secret/key names, in any common syntax."""
    markers = [(m.start(), m.end()) for m in _MARKER_RE.finditer(text)]
    marker_i = 0
    pos = 0
    n = len(text)
    folded = _fold(text)
    while pos < n:
        m = _KEYWORD_RE.search(folded, pos)
        if m is None:
            return
        while marker_i < len(markers) and markers[marker_i][1] <= m.start():
            marker_i += 1
        if marker_i < len(markers) and markers[marker_i][0] <= m.start():
            pos = markers[marker_i][1]
            continue
        if m.group()[0] in _CJK_FIRST:
            lo, hi = m.start(), m.end()
            name = m.group()
        else:
            span = _identifier(text, m.start(), m.end())
            if span is None:
                run = _IDENT_RUN_RE.match(text, m.end())
                pos = run.end() if run else m.end()
                continue
            lo, hi = span
            name = _name_for(text, lo, hi).lstrip("-")
        pos = max(hi, m.end())
        if (lo > 0 and text[lo - 1] == "/") or _in_colon_path(text, lo):
            continue  # a path or ARN segment: /etc/passwd, arn:aws:...:secret:name
        hit, skip = _one(text, lo, hi, name)
        pos = max(pos, skip)
        if hit is not None:
            yield hit
