"""Tokens of one statement and the numbers, units and value types read from them: the
base the value readers (`memdir.tidy.when`, `memdir.tidy.values`) build on."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from memdir.tidy.lexicon import (
    CJK_NUMERALS,
    JA_KANA_ROLES,
    JA_MUST_ENDINGS,
    JA_NEGATIVE_ENDINGS,
    JA_NOT_NEGATIVE,
    LATIN_ROLES,
    PERIOD_WORDS,
    UNITS,
    WEEKDAYS,
    ZH_ROLES,
    ZH_WORD_MAX,
    Role,
)

__all__ = [
    "NUMBER_WORDS",
    "ZH_DAY_PARTS",
    "Num",
    "Quantity",
    "Token",
    "Values",
    "cjk_number",
    "every",
    "make_quantity",
    "read_number",
    "tokenize",
    "unit_at",
    "word_number",
]

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


_KANA = "\u3040-\u30ff\u31f0-\u31ff"


# Each alternative is a run of one character class with no nested repetition: linear time.
_TOKEN_RE = re.compile(
    r"(?P<iso>[0-9]{4}[-/][0-9]{1,2}[-/][0-9]{1,2})(?![0-9])"
    r"|(?P<slash>[0-9]{1,2}/[0-9]{1,2}/(?:[0-9]{4}|[0-9]{2}))(?![0-9/])"
    r"|(?P<dmy>[0-9]{1,2}\.[0-9]{1,2}\.(?:[0-9]{4}|[0-9]{2})?)(?=\s|$|[,;:)])"
    r"|(?P<clock>[0-9]{1,2}:[0-9]{2})(?![0-9])"
    r"|(?P<num>[0-9]+(?:[.,][0-9]+)*(?:\.(?=\s+[^\W\d_]))?)"  # "am 1. jedes Monats"
    rf"|(?P<cjk>[{_CJK}]+)"
    r"|(?P<hira>[\u3040-\u309f]+)"
    r"|(?P<kata>[\u30a0-\u30ff\u31f0-\u31ff]+)"
    rf"|(?P<word>[^\W\d_{_CJK}{_KANA}]+)"
    r"|(?P<punct>[,;:()\[\]|])"
    r"|(?P<sym>[-–—~〜%$€£¥/])"
)


_NOT = re.compile(r"n['’]t\b")


NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15,
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90,
    "hundred": 100, "ein": 1, "eine": 1, "einer": 1, "einem": 1, "einen": 1, "zwei": 2,
    "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10,
    "zwölf": 12, "fünfzehn": 15, "zwanzig": 20, "dreißig": 30, "sechzig": 60, "hundert": 100,
    "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "dix": 10, "quinze": 15,
    "vingt": 20, "trente": 30, "soixante": 60, "uno": 1, "una": 1, "dos": 2, "tres": 3,
    "cuatro": 4, "cinco": 5, "diez": 10, "quince": 15, "veinte": 20, "treinta": 30,
    "sesenta": 60, "half": 0.5, "halb": 0.5, "halbe": 0.5, "halben": 0.5, "halber": 0.5,
    "demi": 0.5, "demie": 0.5, "medio": 0.5, "media": 0.5, "anderthalb": 1.5,
    "thirteen": 13, "fourteen": 14, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "seventy": 70, "eighty": 80, "elf": 11, "dreizehn": 13, "vierzehn": 14,
    "sechzehn": 16, "siebzehn": 17, "achtzehn": 18, "neunzehn": 19, "vierzig": 40,
    "fünfzig": 50, "siebzig": 70, "achtzig": 80, "neunzig": 90, "sept": 7,
    "huit": 8, "neuf": 9, "onze": 11, "douze": 12, "treize": 13, "quatorze": 14, "seize": 16,
    "quarante": 40, "cinquante": 50, "cent": 100, "seis": 6, "siete": 7, "ocho": 8,
    "nueve": 9, "once": 11, "doce": 12, "trece": 13, "catorce": 14, "dieciséis": 16,
    "cuarenta": 40, "cincuenta": 50, "noventa": 90, "cien": 100,
}  # fmt: skip


# German and Spanish write 21-99 as one word: "zweiundzwanzig", "veintidós"
for _tens, _ten in (("zwanzig", 20), ("dreißig", 30), ("vierzig", 40), ("fünfzig", 50)):
    for _unit_word, _one in (("ein", 1), ("zwei", 2), ("drei", 3), ("vier", 4), ("fünf", 5),
                             ("sechs", 6), ("sieben", 7), ("acht", 8), ("neun", 9)):  # fmt: skip
        NUMBER_WORDS[f"{_unit_word}und{_tens}"] = _ten + _one


for _unit_word, _one in (("uno", 1), ("dós", 2), ("trés", 3), ("cuatro", 4), ("cinco", 5),
                         ("séis", 6), ("siete", 7), ("ocho", 8), ("nueve", 9)):  # fmt: skip
    NUMBER_WORDS[f"veinti{_unit_word}"] = 20 + _one


#: Calendar lengths that vary: a month (28-31 days), a quarter (89-92), a year (365-366).
_CALENDAR = {
    2592000.0: (28 * 86400.0, 31 * 86400.0),
    7776000.0: (89 * 86400.0, 92 * 86400.0),
    31536000.0: (365 * 86400.0, 366 * 86400.0),
}


_TENS = frozenset({20, 30, 40, 50, 60, 70, 80, 90})


_HALF = frozenset(w for w, v in NUMBER_WORDS.items() if v == 0.5)


ZH_DAY_PARTS = {
    "上午": 0, "早上": 0, "凌晨": 0, "下午": 12, "晚上": 12, "中午": 0, "晚": 12, "早": 0,
    "午前": 0, "午後": 12, "深夜": 0, "早朝": 0, "朝": 0, "夜": 12, "夕方": 12,
}  # fmt: skip


#: Words between a number and its unit of time: "one business day", "drei volle Tage".
_UNIT_ADJECTIVES = frozenset(
    ["business", "working", "calendar", "full", "whole", "volle", "vollen", "ganze", "ganzen"]
)


#: What may follow minutes written 分 (Chinese and Japanese): "15分以内", "30分后".
_AFTER_MINUTES = frozenset({"以内", "以上", "以下", "后", "後", "前", "内", "間", "左右", "钟"})


_MONTH_COUNTERS = frozenset({"ヶ", "か", "カ", "ケ", "ヵ"})


_ZH_EXTRA = frozenset({*ZH_DAY_PARTS, "点", "月", "日", "号", "年"})


_REL = 1e-12  # float rounding only: 30 s and 30.000001 s differ


@dataclass(slots=True)
class Token:
    """One token: `text` is case-folded, `raw` as written; `used` once a value took it."""

    text: str
    raw: str
    kind: str  # iso dmy clock num cjk cjknum word punct sym
    role: Role | None
    used: bool = False


@dataclass(frozen=True, slots=True)
class Quantity:
    """A measured value as an interval in base units (seconds, bytes, percent, currency)."""

    dim: str
    lo: float
    hi: float
    #: the same interval under the other reading of a size unit (MB as 10^6 or 2^20 bytes)
    alt_lo: float
    alt_hi: float

    def compatible(self, other: Quantity) -> bool:
        """Whether the two can describe the same value (same dimension, overlapping)."""
        if self.dim != other.dim:
            return True
        return _overlap(self.lo, self.hi, other.lo, other.hi) or _overlap(
            self.alt_lo, self.alt_hi, other.alt_lo, other.alt_hi
        )


@dataclass(frozen=True, slots=True)
class Num:
    """A bare number (a port, a version, a count) and the words next to it."""

    parts: tuple[int, ...]
    lo: float
    hi: float
    anchors: frozenset[str]

    def compatible(self, other: Num) -> bool:
        """Equal, a version prefix of the other ("20" and "20.11"), or inside its range."""
        if self.lo == self.hi and other.lo == other.hi and self.parts and other.parts:
            n = min(len(self.parts), len(other.parts))
            return self.parts[:n] == other.parts[:n]
        return _overlap(self.lo, self.hi, other.lo, other.hi)


@dataclass(slots=True)
class Values:
    """The typed values of one statement."""

    quantities: list[Quantity] = field(default_factory=list)
    nums: list[Num] = field(default_factory=list)
    dates: list[tuple[int, int, int]] = field(default_factory=list)  # (year|0, month, day|0)
    clocks: list[int] = field(default_factory=list)  # minutes after midnight
    weekdays: set[int] = field(default_factory=set)
    #: whether the statement says when something happens (a schedule verb, a period, a
    #: weekday, a part of the day): then "at 3" is a time of day, not a count
    timed: bool = False
    #: how many times of day it states ("at 2 am and 2 pm": two), however many readings
    #: each has in `clocks` ("um drei" is 3:00 or 15:00)
    moments: int = 0


def _overlap(a_lo: float, a_hi: float, b_lo: float, b_hi: float) -> bool:
    tol = _REL * max(abs(a_lo), abs(a_hi), abs(b_lo), abs(b_hi), 1.0)
    return a_lo <= b_hi + tol and b_lo <= a_hi + tol


def _split_cjk(run: str) -> list[tuple[str, str]]:
    """Greedy longest match of known words; numeral runs kept together; other characters alone."""
    out: list[tuple[str, str]] = []
    i = 0
    n = len(run)
    while i < n:
        j = i
        while j < n and run[j] in CJK_NUMERALS:
            j += 1
        if j > i and any(run[j : j + k] in UNITS for k in (1, 2, 3)):
            out.append((run[i:j], "cjknum"))  # 十分钟 is ten minutes, though 十分 is "very"
            i = j
            continue
        for size in range(min(ZH_WORD_MAX, n - i), 0, -1):
            piece = run[i : i + size]
            if (
                piece in ZH_ROLES
                or piece in UNITS
                or piece in WEEKDAYS
                or piece in PERIOD_WORDS
                or piece in _ZH_EXTRA
            ) and (size > 1 or piece not in CJK_NUMERALS):
                out.append((piece, "cjk"))
                i += size
                break
        else:
            j = i
            while j < n and (run[j] in CJK_NUMERALS or run[j] == "半"):
                j += 1
            if j > i:
                out.append((run[i:j], "cjknum"))
                i = j
            else:
                out.append((run[i], "cjk"))
                i += 1
    return out


def tokenize(text: str) -> list[Token]:
    """The tokens of one statement (NFKC-normalised; "don't" read as "do not")."""
    text = _NOT.sub(" not", unicodedata.normalize("NFKC", text))
    tokens: list[Token] = []
    for match in _TOKEN_RE.finditer(text):
        kind = match.lastgroup or "sym"
        raw = match.group()
        if kind == "cjk":
            for piece, piece_kind in _split_cjk(raw):
                tokens.append(Token(piece, piece, piece_kind, ZH_ROLES.get(piece)))
            continue
        if kind == "hira":  # Japanese particles and endings: function words, or a negation
            tokens.append(Token(raw, raw, "word", _kana_role(raw)))
            continue
        if kind == "kata":  # a Japanese loan word: a content word
            tokens.append(Token(raw, raw, "word", None))
            continue
        folded = raw.casefold()
        role = LATIN_ROLES.get(folded) if kind == "word" else None
        if kind == "sym" and raw in "-–—~〜":
            role = Role.RANGE
        tokens.append(Token(folded, raw, kind, role))
    return tokens


def _kana_role(run: str) -> Role:
    if run in JA_KANA_ROLES:
        return JA_KANA_ROLES[run]
    if run.endswith(JA_MUST_ENDINGS):
        return Role.ALWAYS
    if run.endswith(JA_NEGATIVE_ENDINGS) and run not in JA_NOT_NEGATIVE:
        return Role.NEG
    return Role.STOP


def read_number(text: str) -> tuple[float, tuple[int, ...]] | None:
    """A digit token's value and, for dotted numbers, its version parts."""
    if len(text) > 40:
        return None  # no measurement is that long; int() of thousands of digits is slow
    if "," in text and "." not in text:
        head, _, tail = text.partition(",")
        text = text.replace(",", "") if len(tail) == 3 and "," not in tail else f"{head}.{tail}"
    text = text.replace(",", "")
    parts = tuple(int(p) for p in text.split(".") if p)
    if not parts:
        return None
    if len(parts) > 2:
        return float(parts[0]), parts
    try:
        return float(text), parts
    except ValueError:
        return None


def cjk_number(text: str) -> float | None:
    """一, 十五, 三十, 两百, 半: a small Chinese numeral."""
    if text == "半":
        return 0.5
    total = 0
    current = 0
    for ch in text:
        value = CJK_NUMERALS.get(ch)
        if value is None:
            return None
        if value >= 10:
            total += (current or 1) * value
            current = 0
        else:
            current = current * 10 + value if current else value
    total += current
    if text.endswith("半"):
        return total + 0.5
    return float(total)


def unit_at(tokens: list[Token], i: int) -> tuple[tuple[str, float, float], int] | None:
    """The unit at tokens[i] (a Chinese classifier 个 may come first), and the index after it."""
    counted = i < len(tokens) and tokens[i].text == "个" and i + 1 < len(tokens)
    if counted:
        i += 1
    if i + 1 < len(tokens) and tokens[i].text in _MONTH_COUNTERS and tokens[i + 1].text == "月":
        return UNITS["个月"], i + 2  # 3ヶ月, 6か月
    if i + 1 < len(tokens) and tokens[i].text in _UNIT_ADJECTIVES:
        i += 1  # "one business day", "two full weeks"; "2 working copies" is a count
        unit = UNITS.get(tokens[i].text)
        return (unit, i + 1) if unit is not None and unit[0] == "time" else None
    if i < len(tokens) and not tokens[i].used and tokens[i].kind in ("word", "cjk", "sym"):
        if tokens[i].text == "分" and (counted or not _minute_ends(tokens, i + 1)):
            return None  # 3个分支 (three branches), 部分: not minutes
        unit = UNITS.get(tokens[i].text)
        if unit is not None:
            return unit, i + 1
    return None


def _minute_ends(tokens: list[Token], i: int) -> bool:
    """Whether a 分 at i-1 ends there (十五分で, 15分以内, 30分，): minutes, not part of a word."""
    return i >= len(tokens) or tokens[i].kind != "cjk" or tokens[i].text in _AFTER_MINUTES


def make_quantity(dim: str, lo: float, hi: float, factor: float, alt: float) -> Quantity:
    if dim in ("time", "period") and factor in _CALENDAR:
        # "a month" and "four weeks" or "30 days", "twice a month" and "every two weeks",
        # "quarterly" and "every 90 days" are one length
        short, long = _CALENDAR[factor]
        return Quantity(dim, lo * short, hi * long, lo * short, hi * long)
    return Quantity(dim, lo * factor, hi * factor, lo * alt, hi * alt)


def every(seconds: float, count: float = 1.0) -> Quantity:
    """The period of something that happens `count` times every `seconds`."""
    return make_quantity("period", 1 / count, 1 / count, seconds, seconds)


def word_number(tokens: list[Token], i: int) -> tuple[float, int] | None:
    """'half a', 'eine halbe', 'two', 'une demi': a spelled-out multiplier and the next index."""
    value: float | None = None
    j = i
    while j < len(tokens) and j < i + 3 and tokens[j].kind == "word":
        word = tokens[j].text
        number = NUMBER_WORDS.get(word)
        if number is None:
            break
        if word in _HALF:
            value = (value or 1) * 0.5
        elif value is None:
            value = float(number)
        j += 1
    if value is None or j == i:
        return None
    if (
        value in _TENS
        and j + 1 < len(tokens)
        and tokens[j].text in ("-", "et", "y", "and")
        and 0 < NUMBER_WORDS.get(tokens[j + 1].text, 0) < 10
        and tokens[j + 1].text not in ("a", "an")
    ):
        return value + NUMBER_WORDS[tokens[j + 1].text], j + 2  # twenty-one, vingt-deux
    if j < len(tokens) and tokens[j].text == "-":  # une demi-heure
        j += 1
    return value, j
