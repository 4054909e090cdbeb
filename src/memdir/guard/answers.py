"""Secrets written in a few fixed shapes that no generic label reads: the answer to an
account-recovery security question, a keypad code closed by "*" or "#", a number on a safe,
and a password given to a command-line flag."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .hit import PRIO_LABEL, Hit
from .lexicon import PASSWORD, PIN, SECRET

__all__ = ["answer_hits"]

# "Security question … mother's maiden name: X" — the answer after the last colon of the
# line recovers the account, so it is as good as a password.
# A question label alone before its colon names the question ("Sicherheitsfrage:
# Lieblingsfarbe"), so the answer needs the question between them.
_QUESTION_RE = re.compile(
    r"(?P<q>(?i:security question|sicherheitsfrage|question secrète|pregunta de seguridad"
    r"|domanda di sicurezza|pergunta de segurança|beveiligingsvraag|контрольный вопрос"
    r"|pytanie pomocnicze|güvenlik sorusu)|密保问题|秘密の質問|보안 질문)"
    r"|(?i:mother'?s maiden name|geburtsname der mutter|nom de jeune fille|apellido de soltera"
    r"|cognome da nubile|nome de solteira|meisjesnaam|девичья фамилия|nazwisko panieńskie"
    r"|kızlık soyadı)|娘家姓|旧姓|결혼 전 성"
)
# The answer: one or two words of letters, alone up to the end of the line or sentence.
_ANSWER_RE = re.compile(
    r"[ \t]*([^\W\d_][\w'’-]{0,30}(?: [^\W\d_][\w'’-]{0,30})?)[ \t]*[.。]?[ \t]*$"
)
_NOT_ANSWERS = frozenset(
    ("none", "n/a", "required", "optional", "yes", "no", "unknown", "keine", "aucune", "ninguna")
)
# A keypad code closed by "#" or "*", or wrapped in both ("*691342#", "61420*", "6124#").
_KEYPAD_RE = re.compile(
    r"(?:(?<=^)|(?<=[\s:：>\"'(]))(\*\d{4,8}#|\d{4,8}[#*])(?=$|[\s.,;!)\"'。，、])"
    r"|(?<![A-Za-z0-9*#])(\*\d{4,8}#)(?![\w*#])",
    re.M,
)
_YEAR_RE = re.compile(r"(?:19|20)\d\d\*")
# A price with a footnote star ("ab 1299* … *inkl. MwSt."): another star, or money, nearby.
_PRICE_RE = re.compile(r"(?i)[*€$£¥₽₺%]|\b(?:eur|euro|usd|dollars?|zł|руб|tl|lira|yen)\b")
# "Cofre do quarto: 8010", "Tresor im Büro: Kombination 07766", "The safe … opens with 828978".
_SAFE_RE = re.compile(
    r"(?i:\b(?:(?:the|a|hotel|room|office|wall|home|gun) safe|safe (?:combination|code)"
    r"|tresor|coffre-fort|coffre|caja fuerte|cassaforte|cofre|kluis|sejf|сейф"
    r"|\w+(?:deki|daki|teki|taki) kasa)\b)|保险箱|保險箱|金庫|금고"
)
_SAFE_VALUE_RE = re.compile(
    r"[^\n:：]{0,40}?(?:[:：][ \t]*(?i:(?:kombination|combinatie|combination|code|combinación"
    r"|combinazione|combinação|szyfr|kod|şifre)[ \t]+)?|(?i: opens with | öffnet mit ))"
    r"(\d{4,8})(?=[ \t]*(?:[.,;!(]|$))",
    re.M,
)
# A password handed to a command: "redis-server --requirepass X", "aws configure set
# aws_secret_access_key X".
_FLAG_RE = re.compile(
    r"(?:--requirepass|--masterauth|aws configure set (?:aws_secret_access_key|aws_session_token))"
    r"[ \t]+([^\s$<{[\"'`]\S{5,})"
)


def _priced(text: str, start: int, end: int) -> bool:
    """A star after digits marks a footnote when its line has money or another star."""
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", end)
    hi = len(text) if hi < 0 else hi
    return bool(_PRICE_RE.search(text, lo, start) or _PRICE_RE.search(text, end, hi)) or (
        "\n*" in text or "(*" in text
    )


def answer_hits(text: str) -> Iterator[Hit]:
    """Every security-question answer, keypad code, safe number and flag password."""
    for m in _QUESTION_RE.finditer(text):
        stop = text.find("\n", m.end())
        stop = len(text) if stop < 0 else stop
        colon = max(text.rfind(":", m.end(), stop), text.rfind("：", m.end(), stop))
        if colon < 0 or (m.group("q") and not text[m.end() : colon].strip(" \t-–—:：")):
            continue
        a = _ANSWER_RE.match(text, colon + 1, stop)
        if a and a.group(1).lower() not in _NOT_ANSWERS:
            yield Hit(a.start(1), a.end(1), PASSWORD, PRIO_LABEL)
    for m in _KEYPAD_RE.finditer(text):
        g = 1 if m.group(1) else 2
        value = m.group(g)
        if _YEAR_RE.fullmatch(value) or (value[-1] == "*" and _priced(text, m.start(g), m.end(g))):
            continue
        yield Hit(m.start(g), m.end(g), PIN, PRIO_LABEL)
    for m in _SAFE_RE.finditer(text):
        v = _SAFE_VALUE_RE.match(text, m.end())
        if v and not re.fullmatch(r"(?:19|20)\d\d", v.group(1)):
            yield Hit(v.start(1), v.end(1), PIN, PRIO_LABEL)
    for m in _FLAG_RE.finditer(text):
        yield Hit(m.start(1), m.end(1), SECRET, PRIO_LABEL)
