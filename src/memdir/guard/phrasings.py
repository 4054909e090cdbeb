"""Phrasings the label windows do not read: a code a safe "opens with", "Code 7638B eingeben",
a chat answer on the line below its question or request, `define('DB_PASSWORD', '…')`, and
an HTML cell or `<code>` element after a password label, with its entities escaped.

Each is one regex with a cheap prefilter, so text without these shapes costs one search.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

from .hit import PRIO_LABEL, Hit
from .labelled import label_span
from .lexicon import (
    LABEL_RE,
    NEGATING_RE,
    PASSWORD,
    PASSWORD_KINDS,
    PIN,
    RECOVERY,
    USER,
    WIFI,
    label_for,
)
from .values import (
    access_code,
    class_count,
    is_placeholder,
    looks_random,
    pin_like,
    prose_password,
    sigil_password,
)

__all__ = ["phrasing_hits"]

_CODE_VALUE = r"(?P<v>\d[0-9A-Za-z]{2,9}[#*]?)(?![\w#*])"
# The code ends its clause: "se abre con 2437.", unlike "opens with 2400 dancers".
_CLAUSE_END = r"(?=[ \t]*(?:[.,;:!)]|\r?\n|$))"
# "La caja fuerte del hotel se abre con 2437", "De kluis … gaat open met 9581".
_OPENS_RE = re.compile(
    r"(?<!\w)(?:safe|door|gate|lock(?:er|box)?|caja fuerte|puerta|portal|cofre|porta|portão"
    r"|kluis|deur|poort|sejf|drzwi|brama|furtka|tresor|tür|tor|coffre|porte|portail"
    r"|cassaforte|cancello|portone|сейф|двер|калитк|ворот|kasa|kapı)"
    r"[^\n.!?]{0,40}?"
    r"(?:opens with|unlocks with|se abre con|abre con|abre com|gaat open met|opent met"
    r"|otwiera się|öffnet (?:sich )?mit|lässt sich mit|s'ouvre avec|si apre con"
    r"|открывается)"
    r"[ \t]+(?:(?:the|el|le|o|de|dem|der|il) )?(?:(?:code|código|codice|kodem|kod|кодом|szyfrem)"
    r" )?" + _CODE_VALUE + _CLAUSE_END,
    re.IGNORECASE,
)
# The code before the verb: "Kasa 4821 ile açılıyor", "金庫は4821で開きます", "금고는 4821로 열려".
_OPENS_AFTER_RE = re.compile(
    r"(?:kasa|kapı|金庫|ドア|門|金库|保险箱|保險箱|门|금고|문|현관)[^\n.!?。]{0,30}?"
    r"(?<![0-9A-Za-z#*])(?P<v>\d[0-9A-Za-z]{2,9}[#*]?)"
    r"(?:[ \t]+(?:ile|koduyla|şifresiyle)[ \t]+açıl|で開|(?:으로|로) 열|打开|打開|开门|開門)",
    re.IGNORECASE,
)
# "Code 7638B eingeben", "type code 4821 then", "введите код 1234"
_ENTER_RE = re.compile(
    r"(?<!\w)(?:code|kod|код|kodu|código|codice)[ \t]+" + _CODE_VALUE + r"[ \t,]+"
    r"(?:eingeben|eintippen|tippen|enter|type|drücken|saisir|taper|introducir|teclear|marcar"
    r"|digitare|inserire|digitar|invoeren|intoetsen|wpisz|wprowadź|введите|набери|gir|tuşla)",
    re.IGNORECASE,
)
# A question or a request for a secret ("напомни код от домофона", "Wi-Fiのパスワード教えて").
_ASKS_RE = re.compile(
    r"[?？]\s*$|教えて|おしえて|知りたい|알려|뭐야|뭐였|告诉|告訴|发我|發我|多少|напомни|скажи|скинь"
    r"|подскажи|remind me|tell me|send me|schick|sag mir|dime|dimmi|ricordami|diz|manda"
    r"|stuur|zeg|przypomnij|podaj|wyślij|hatırlat|söyle|gönder|neydi|nedir|rappelle|envoie",
    re.IGNORECASE,
)
# The answer line: a "yes" may come first ("oui, 6217B puis …").
_ANSWER_RE = re.compile(
    r"[ \t]*(?:(?:yes|yep|ja|oui|sí|si|sim|да|tak|evet|ok|はい|うん|네|응|是的|嗯)[,、，!]?[ \t]+)?"
    r"(?P<v>[^\s]{4,64}?)[.,!。、]?(?P<rest>[ \t]+\S[^\n]*)?[ \t]*\r?(?:\n|$)",
    re.IGNORECASE,
)
# define('DB_PASSWORD', '…'), setenv("API_TOKEN", "…"), ini_set('smtp_pass', '…')
_CALL_RE = re.compile(
    r"(?<![\w.])(?:define|setenv|putenv|ini_set|set|env|config)[ \t]*\([ \t]*(?P<q1>['\"])"
    r"(?P<key>[\w.\-]{1,64})(?P=q1)[ \t]*,[ \t]*(?P<q2>['\"])(?P<v>[^'\"\n]{4,256})(?P=q2)"
    r"[ \t]*\)",
    re.IGNORECASE,
)
_SECRET_KEY_RE = re.compile(r"pass|pwd|secret|token|api_?key|private_?key|auth", re.IGNORECASE)
# <code>…</code>, <td>…</td> after a label ("Password: <code>…", "<td>Mot de passe</td><td>…")
_ELEMENT_RE = re.compile(
    r"<(?P<tag>code|kbd|samp|tt|td|b|strong|span|pre)(?:[ \t][^<>]{0,80})?>"
    r"(?P<v>[^<>\s]{4,128})</(?P=tag)>",
    re.IGNORECASE,
)
_TAG_RE = re.compile(r"<[^<>]{0,120}>")
_LABEL_END_RE = re.compile(r"[ \t:：=]*$")
_PREFILTER_RE = re.compile(
    r"open|abre|otwiera|öffnet|lässt|ouvre|apre|открыва|açıl|開|开|열|\n|\(|<(?:code|kbd|samp|tt|td|b|strong"
    r"|span|pre)|eingeben|enter|type",
    re.IGNORECASE,
)
_YEAR_RE = re.compile(r"(?:19|20)\d\d")


def _door_code(value: str) -> bool:
    return access_code(value) and not _YEAR_RE.fullmatch(value)


def _typed(value: str) -> bool:
    """A password typed alone: three classes and not a word, random, or sign-led."""
    return (
        (class_count(value) >= 3 and prose_password(value))
        or looks_random(value)
        or sigil_password(value)
    )


def _last_label(line: str) -> tuple[str, bool, int] | None:
    """The kind of the last label on a line, whether it names a door's or a safe's code, and
    where it ends."""
    folded = line.lower()
    found: tuple[str, bool, int] | None = None
    for m in LABEL_RE.finditer(folded):
        label = label_for(m.group())
        if label.weak or label.kind in (USER, RECOVERY):
            continue
        if label_span(folded, m.start(), m.end(), label):
            found = (label.kind, label.code, m.end())
    return found


def _answers(text: str) -> Iterator[Hit]:
    """A value opening the line after a question or a request naming a password or a code."""
    pos = 0
    while True:
        nl = text.find("\n", pos)
        if nl < 0:
            return
        line = text[pos:nl]
        pos = nl + 1
        if len(line) > 120 or not _ASKS_RE.search(line) or NEGATING_RE.search(line.lower()):
            continue  # "What is the alarm code policy?": a question about codes
        found = _last_label(line)
        if found is None:
            continue
        kind, code, _ = found
        m = _ANSWER_RE.match(text, pos)
        if m is None:
            continue
        value = m.group("v")
        if kind == PIN or code:
            ok = _door_code(value) and (code or pin_like(value))
        elif m.group("rest"):
            ok = False  # a password answer stands alone on its line
        else:
            ok = kind in (*PASSWORD_KINDS, WIFI) and _typed(value)
        if ok:
            yield Hit(m.start("v"), m.end("v"), PIN if code else kind, PRIO_LABEL)


def _elements(text: str) -> Iterator[Hit]:
    for m in _ELEMENT_RE.finditer(text):
        before = _TAG_RE.sub(" ", text[max(0, m.start() - 80) : m.start()])
        before = _LABEL_END_RE.sub("", before)[-40:]
        found = _last_label(before)
        if found is None or found[0] not in PASSWORD_KINDS or found[2] < len(before) - 2:
            continue
        # An escaped "<" or ">" is a typed sign there, not a template's slot.
        value = html.unescape(m.group("v")).replace("<", "#").replace(">", "#")
        if value != m.group("v") and (prose_password(value) or looks_random(value)):
            yield Hit(m.start("v"), m.end("v"), found[0], PRIO_LABEL)


def phrasing_hits(text: str) -> Iterator[Hit]:
    """Yield codes, chat answers, call arguments and HTML cells the other rules miss."""
    if _PREFILTER_RE.search(text) is None:
        return
    for regex in (_OPENS_RE, _OPENS_AFTER_RE, _ENTER_RE):
        for m in regex.finditer(text):
            if _door_code(m.group("v")):
                yield Hit(m.start("v"), m.end("v"), PIN, PRIO_LABEL)
    if "\n" in text:
        yield from _answers(text)
    if "(" in text:
        for m in _CALL_RE.finditer(text):
            value = m.group("v")
            if not _SECRET_KEY_RE.search(m.group("key")) or is_placeholder(value, literal=True):
                continue
            if prose_password(value) or looks_random(value):
                yield Hit(m.start("v"), m.end("v"), PASSWORD, PRIO_LABEL)
    if "<" in text:
        yield from _elements(text)
