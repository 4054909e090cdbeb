"""Tokens and typed values of one statement: quantities with units, dates, clock times, weekdays
and plain numbers (ports, versions), each normalised so that equal values compare equal."""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field

from memdir.tidy.lexicon import (
    BOUND_WORDS,
    CJK_NUMERALS,
    JA_KANA_ROLES,
    JA_MUST_ENDINGS,
    JA_NEGATIVE_ENDINGS,
    JA_NOT_NEGATIVE,
    LATIN_ROLES,
    MONTHS,
    PERIOD_WORDS,
    UNITS,
    WEEKDAYS,
    ZH_ROLES,
    ZH_WORD_MAX,
    Role,
)

__all__ = [
    "Num",
    "Quantity",
    "Token",
    "Values",
    "extract_values",
    "parse_quantities",
    "tokenize",
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

_NUMBER_WORDS = {
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
        _NUMBER_WORDS[f"{_unit_word}und{_tens}"] = _ten + _one
for _unit_word, _one in (("uno", 1), ("dós", 2), ("trés", 3), ("cuatro", 4), ("cinco", 5),
                         ("séis", 6), ("siete", 7), ("ocho", 8), ("nueve", 9)):  # fmt: skip
    _NUMBER_WORDS[f"veinti{_unit_word}"] = 20 + _one
#: Calendar lengths that vary: a month (28-31 days), a quarter (89-92), a year (365-366).
_CALENDAR = {
    2592000.0: (28 * 86400.0, 31 * 86400.0),
    7776000.0: (89 * 86400.0, 92 * 86400.0),
    31536000.0: (365 * 86400.0, 366 * 86400.0),
}
#: "once a quarter", "zweimal im Quartal": a quarter only after a count of times ("a quarter
#: of the tests" is a share, "quarter past" a time).
_QUARTERS = dict.fromkeys(("quarter", "quartal", "trimestre"), ("time", 7776000.0, 7776000.0))
_TENS = frozenset({20, 30, 40, 50, 60, 70, 80, 90})
#: "once a week", "zweimal im Monat", "dreimal die Woche": how often, as a count of times
_TIMES_WORDS = {
    "once": 1, "twice": 2, "thrice": 3, "einmal": 1, "zweimal": 2, "dreimal": 3,
    "viermal": 4, "fünfmal": 5,
}  # fmt: skip
#: Words after a count that make it a count of times ("3 times", "drei Mal", "deux fois").
_TIMES_AFTER = frozenset({"times", "mal", "fois", "veces", "vez", "x"})
#: Words between a count of times and its period: "a week", "im Monat", "par mois", "al año".
_PER_PERIOD = frozenset(
    [
        "a",
        "an",
        "per",
        "each",
        "every",
        "im",
        "pro",
        "die",
        "in",
        "der",
        "par",
        "al",
        "por",
        "la",
        "le",
        "cada",
        "the",
    ]
)
_HALF = frozenset(w for w, v in _NUMBER_WORDS.items() if v == 0.5)
_CLOCK_AFTER = frozenset({"am", "pm", "uhr", "点", "點", "時"})
_ZH_DAY_PARTS = {
    "上午": 0, "早上": 0, "凌晨": 0, "下午": 12, "晚上": 12, "中午": 0, "晚": 12, "早": 0,
    "午前": 0, "午後": 12, "深夜": 0, "早朝": 0, "朝": 0, "夜": 12, "夕方": 12,
}  # fmt: skip
#: Words after a time of day that put it after noon ("3 Uhr nachmittags", "a las 5 de la
#: tarde", "à 3 heures de l'après-midi", "9 in the evening").
_AFTERNOON = frozenset({"pm", "nachmittags", "nachmittag", "tarde", "afternoon"})
#: Evening and night words move only the hours they can mean: "9 in the evening" is 21:00,
#: "2 at night" stays 2:00.
_EVENING = frozenset({"abends", "abend", "soir", "evening", "night", "noche", "nuit", "nachts"})
#: Clock words: noon and midnight.
_NAMED_TIMES = {
    "noon": 720, "midday": 720, "mittag": 720, "mittags": 720, "midi": 720,
    "mediodía": 720, "midnight": 0, "mitternacht": 0, "minuit": 0, "medianoche": 0,
    "正午": 720, "零時": 0,
}  # fmt: skip
#: Words before a bare hour that make it a time of day: "at 3", "um drei", "a las tres".
_AT_HOUR = frozenset({"at", "um", "à", "las", "la", "gegen", "vers", "ab"})
#: After a day number: "5th", "1st", "1er" (French), "1re", "1º" (Spanish, NFKC "1o").
_ORDINAL_ENDINGS = frozenset({"st", "nd", "rd", "th", "er", "re", "e", "ème", "o"})
#: German words before a day of the month written "1.": "am 1.", "zum 15.", "ab dem 3.".
_DE_DAY_BEFORE = frozenset({"am", "zum", "vom", "dem", "den", "bis", "ab"})
#: What makes "N日" a number of days rather than a day of the month: 90日で, 90日経過,
#: 30日以内, 7日后.
_AFTER_DAYS = frozenset({"で", "経過", "以内", "以上", "以下", "后", "後", "保存", "保持", "間"})
#: Words before a four-digit year.
_YEAR_BEFORE = frozenset(
    [
        "in",
        "since",
        "until",
        "by",
        "from",
        "seit",
        "im",
        "bis",
        "ab",
        "von",
        "depuis",
        "en",
        "jusqu",
        "desde",
        "hasta",
        "durante",
    ]
)
#: French counts a week as "huit jours" and two as "quinze jours": 8 days may be 7.
_FRENCH_WEEKS = {8.0: 7.0, 15.0: 14.0}
#: Morning words: after a bare hour they make it a time of day ("diez de la mañana").
_MORNING = frozenset({"morning", "morgens", "früh", "matin", "mañana", "madrugada"})
#: Minutes past the hour in words: "et demie", "y media", "et quart", "y cuarto".
_PAST_HOUR = {"demie": 30, "media": 30, "quart": 15, "cuarto": 15}
_TIME_CUES = frozenset(
    " ".join(
        (
            "start starts started starting begin begins kicks runs run opens open closes close",
            "meet meets held happens scheduled fires triggers morning mornings o'clock beginnt",
            "beginnen startet starten läuft laufen öffnet schließt findet treffen morgens früh",
            "commence commencent démarre démarrent tourne tournent ouvre ouvrent ferme ferment",
            "lance matin empieza empiezan arranca arrancan corre corren abre abren cierra",
            "cierran comienza comienzan mañana madrugada",
        )
    ).split()
)
#: Words between a number and its unit of time: "one business day", "drei volle Tage".
_UNIT_ADJECTIVES = frozenset(
    ["business", "working", "calendar", "full", "whole", "volle", "vollen", "ganze", "ganzen"]
)
#: What may follow minutes written 分 (Chinese and Japanese): "15分以内", "30分后".
_AFTER_MINUTES = frozenset({"以内", "以上", "以下", "后", "後", "前", "内", "間", "左右", "钟"})
_MONTH_COUNTERS = frozenset({"ヶ", "か", "カ", "ケ", "ヵ"})
_ZH_EXTRA = frozenset({*_ZH_DAY_PARTS, "点", "月", "日", "号", "年"})
_REL = 1e-12  # float rounding only: 30 s and 30.000001 s differ
_AT = frozenset({"at", "à", "a", "um", "las", "vers", "gegen", "ab", "dès"})
_PER = frozenset({"per", "pro", "je", "par", "por", "每", "a"})
_CLASSIFIERS = frozenset({"人", "位", "名", "次", "台", "条", "项", "天", "件", "個", "回", "つ"})


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


def _overlap(a_lo: float, a_hi: float, b_lo: float, b_hi: float) -> bool:
    tol = _REL * max(abs(a_lo), abs(a_hi), abs(b_lo), abs(b_hi), 1.0)
    return a_lo <= b_hi + tol and b_lo <= a_hi + tol


# --- tokens ----------------------------------------------------------------------------------


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


# --- values ----------------------------------------------------------------------------------


def _number(text: str) -> tuple[float, tuple[int, ...]] | None:
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


def _cjk_number(text: str) -> float | None:
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


def _unit_at(tokens: list[Token], i: int) -> tuple[tuple[str, float, float], int] | None:
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


def _quantity(dim: str, lo: float, hi: float, factor: float, alt: float) -> Quantity:
    if dim in ("time", "period") and factor in _CALENDAR:
        # "a month" and "four weeks" or "30 days", "twice a month" and "every two weeks",
        # "quarterly" and "every 90 days" are one length
        short, long = _CALENDAR[factor]
        return Quantity(dim, lo * short, hi * long, lo * short, hi * long)
    return Quantity(dim, lo * factor, hi * factor, lo * alt, hi * alt)


def _every(seconds: float, count: float = 1.0) -> Quantity:
    """The period of something that happens `count` times every `seconds`."""
    return _quantity("period", 1 / count, 1 / count, seconds, seconds)


def _anchors(tokens: list[Token], i: int) -> frozenset[str]:
    found: set[str] = set()
    for step in (-1, 1):
        j = i + step
        seen = 0
        while 0 <= j < len(tokens) and seen < 2:
            t = tokens[j]
            if t.kind == "punct":
                break
            if t.kind in ("word", "cjk") and t.role in (None, Role.KEY):
                found.add(t.text)
                break
            seen += 1
            j += step
    return frozenset(found)


def _frequency(tokens: list[Token], i: int) -> tuple[Quantity, int] | None:
    """'twice a week', 'einmal im Jahr', 'trois fois par mois', '3 times a day': how often
    something happens, as the period in seconds between times; the index after it."""
    t = tokens[i]
    j = i + 1
    count: float | None = _TIMES_WORDS.get(t.text)
    if count is None:
        if t.kind == "num":
            parsed = _number(t.text)
            count = parsed[0] if parsed else None
        elif t.kind == "word" and t.text in _NUMBER_WORDS:
            found = _word_number(tokens, i)
            count, j = found if found is not None else (None, j)
        if count is None or j >= len(tokens) or tokens[j].text not in _TIMES_AFTER:
            return None
        j += 1
    between = 0
    while j < len(tokens) and tokens[j].text in _PER_PERIOD and between < 2:
        j, between = j + 1, between + 1
    word = tokens[j].text if j < len(tokens) else ""
    unit = UNITS.get(word) or _QUARTERS.get(word)
    if not between or unit is None or unit[0] != "time" or not count or count <= 0:
        return None
    return _every(unit[1], count), j + 1


def _spelled_number(tokens: list[Token], i: int, values: Values, period: bool) -> int | None:
    """A number in words at tokens[i]: a time of day ("um drei") or a quantity ("two weeks",
    "sept jours"); the index after it."""
    found = _word_number(tokens, i)
    if found is None:
        return None
    if found[0] >= 1:
        end = _hour_at(tokens, i, found[0], values)
        if end is not None:
            return end
    value, after = found
    unit = _unit_at(tokens, after)
    if unit is None or len(tokens[after].text) <= 1:
        return None
    (dim, factor, alt), end = unit
    dim = "period" if period and dim == "time" else dim
    lo = _FRENCH_WEEKS.get(value, value) if tokens[end - 1].text in ("jours", "jour") else value
    values.quantities.append(_quantity(dim, lo, value, factor, alt))
    return end


def _word_number(tokens: list[Token], i: int) -> tuple[float, int] | None:
    """'half a', 'eine halbe', 'two', 'une demi': a spelled-out multiplier and the next index."""
    value: float | None = None
    j = i
    while j < len(tokens) and j < i + 3 and tokens[j].kind == "word":
        word = tokens[j].text
        number = _NUMBER_WORDS.get(word)
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
        and 0 < _NUMBER_WORDS.get(tokens[j + 1].text, 0) < 10
        and tokens[j + 1].text not in ("a", "an")
    ):
        return value + _NUMBER_WORDS[tokens[j + 1].text], j + 2  # twenty-one, vingt-deux
    if j < len(tokens) and tokens[j].text == "-":  # une demi-heure
        j += 1
    return value, j


def _mark(tokens: list[Token], start: int, end: int) -> None:
    for k in range(start, min(end, len(tokens))):
        tokens[k].used = True


def _clock(tokens: list[Token], i: int, hour: float, values: Values) -> int | None:
    """`hour` followed by am/pm, Uhr, 点 (+半 / +N 分), or h30: a clock time; the next index."""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if nxt is None or nxt.used or not (nxt.text in _CLOCK_AFTER or nxt.text == "h"):
        return None
    minutes = 0
    end = i + 2
    if nxt.text == "h":
        if end < len(tokens) and tokens[end].kind == "num" and len(tokens[end].text) == 2:
            minutes = int(tokens[end].text)
            end += 1
        elif i == 0 or tokens[i - 1].text not in _AT:
            return None  # "6 h" is a duration, "à 18h" and "14h30" are times of day
    elif nxt.text in ("点", "點", "時") and end < len(tokens):
        if tokens[end].text == "半":
            minutes, end = 30, end + 1
        elif tokens[end].kind == "num" and end + 1 < len(tokens) and tokens[end + 1].text == "分":
            minutes, end = int(float(tokens[end].text)), end + 2
    h = int(hour)
    if (nxt.text == "pm" or _after_noon(tokens, end, h)) and h < 12:
        h += 12
    if nxt.text == "am" and h == 12:
        h = 0
    if i > 0 and tokens[i - 1].text in _ZH_DAY_PARTS and h < 12:
        h += _ZH_DAY_PARTS[tokens[i - 1].text]
        tokens[i - 1].used = True
    values.clocks.append((h % 24) * 60 + minutes)
    return end


def _after_noon(tokens: list[Token], i: int, hour: int) -> bool:
    """Whether the words right after a time (up to three, not past a comma) put `hour`
    after noon: "de la tarde", "in the afternoon", "de l'après-midi", "9 in the evening"."""
    for j in range(i, min(i + 3, len(tokens))):
        t = tokens[j]
        if t.kind == "punct":
            return False
        if t.text in _AFTERNOON or (t.text in _EVENING and 6 <= hour <= 11):
            return True
        if t.text == "après" and j + 2 < len(tokens) and tokens[j + 2].text == "midi":
            return True
    return False


def _hour_at(
    tokens: list[Token], i: int, hour: float, values: Values, minutes: int = 0
) -> int | None:
    """A bare hour after "at"/"um"/"à"/"a las" ("at 3", "um drei", "à 3 heures", "a las
    tres de la tarde", "at 7.30"), or before a part of the day ("diez de la mañana"), not
    a count of something: a time of day; the index after it."""
    day_part = _day_part_after(tokens, i + 1)
    if not (0 <= hour <= 24) or hour != int(hour):
        return None
    if not day_part and (i == 0 or tokens[i - 1].text not in _AT_HOUR):
        return None
    # "capped at 3", "keep the replicas at 3": a count; Spanish "a las" is always an hour
    end = i + 1
    nxt = tokens[end] if end < len(tokens) else None
    named = nxt is not None and nxt.text in ("heures", "heure", "horas", "hora", "o")
    if not (values.timed or day_part or named or tokens[i - 1].text in ("las", "la")):
        return None
    if nxt is not None and nxt.text in ("heures", "heure", "horas", "hora", "o", "sharp"):
        end += 1
        if nxt.text == "o" and end < len(tokens) and tokens[end].text == "clock":
            end += 1
    elif (
        nxt is not None
        and (_unit_at(tokens, end) is not None or nxt.kind in ("word", "cjk"))
        and nxt.text not in _AFTERNOON
        and nxt.role is not Role.STOP
        and not day_part
    ):
        return None  # "at 3 replicas", "um 5 Minuten": a count, not a time
    if (
        not minutes
        and end + 1 < len(tokens)
        and tokens[end].text in ("et", "y")
        and tokens[end + 1].text in _PAST_HOUR
    ):
        minutes, end = _PAST_HOUR[tokens[end + 1].text], end + 2  # "et demie", "y cuarto"
    h = int(hour)
    if _after_noon(tokens, end, h) and h < 12:
        h += 12
    values.clocks.append((h % 24) * 60 + minutes)
    return end


def _day_part_after(tokens: list[Token], i: int) -> bool:
    """Whether a part of the day follows (up to three words, not past a comma): "de la
    mañana", "in the morning", "du soir", "nachmittags"."""
    for j in range(i, min(i + 3, len(tokens))):
        t = tokens[j]
        if t.kind == "punct":
            return False
        if t.text in _AFTERNOON or t.text in _EVENING or t.text in _MORNING:
            return True
    return False


def _clock_words(tokens: list[Token], i: int, values: Values) -> int | None:
    """'half past seven', 'quarter to nine', 'halb fünf' (4:30), 'Viertel nach acht': a time
    of day in words; the index after it."""
    word = tokens[i].text
    j = i + 1
    if word in ("half", "quarter") and j < len(tokens) and tokens[j].text in ("past", "to"):
        offset = (30 if word == "half" else 15) * (1 if tokens[j].text == "past" else -1)
        j += 1
    elif word == "viertel" and j < len(tokens) and tokens[j].text in ("nach", "vor"):
        offset = 15 if tokens[j].text == "nach" else -15
        j += 1
    elif word == "halb":
        offset = -30
    else:
        return None
    if j >= len(tokens):
        return None
    nxt = tokens[j]
    parsed = _number(nxt.text) if nxt.kind == "num" else None
    found = _word_number(tokens, j) if nxt.text in _NUMBER_WORDS else None
    hour = parsed[0] if parsed and not parsed[1][1:] else (found[0] if found else None)
    if hour is None or not (1 <= hour <= 12) or hour != int(hour):
        return None
    end = j + 1
    if end < len(tokens) and tokens[end].text == "uhr":
        end += 1
    h = int(hour)
    if _after_noon(tokens, end, h) and h < 12:
        h += 12
    values.clocks.append((h * 60 + offset) % 1440)
    return end


def _range_end(tokens: list[Token], i: int) -> tuple[float, int] | None:
    """After a number at i-1: '- 15', 'to 15', 'bis 15', '到15', 'and 15' (after between)."""
    if i + 1 >= len(tokens):
        return None
    t = tokens[i]
    joiner = t.role is Role.RANGE or t.text in ("to", "and", "und", "et", "y", "à", "a")
    nxt = tokens[i + 1]
    if not joiner or nxt.kind not in ("num", "cjknum"):
        return None
    value = _number(nxt.text) if nxt.kind == "num" else None
    number = value[0] if value else _cjk_number(nxt.text)
    if number is None:
        return None
    return number, i + 2


def _cjk_span(
    tokens: list[Token], i: int, value: float, spelled: bool
) -> tuple[tuple[str, float, float], int] | None:
    """年 and 日 after a number as a length of time, where they do not name a date: 一年,
    半年, 3年 (not 2025年: a year), 90日で / 90日経過 (not 5日に: the 5th)."""
    if i >= len(tokens):
        return None
    t = tokens[i]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if t.text == "年" and (spelled or value < 100):
        if nxt is not None and nxt.kind in ("num", "cjknum"):
            return None  # 3年2月: a date
        return ("time", 31536000.0, 31536000.0), i + 1
    if t.text == "日" and nxt is not None and nxt.text in _AFTER_DAYS:
        return ("time", 86400.0, 86400.0), i + 1
    return None


def _year_at(tokens: list[Token], i: int, parts: tuple[int, ...]) -> bool:
    """Whether the number at i is a year: four digits after "in", "since", "seit", "depuis",
    "desde"... ("Migrated to Postgres in 2022" names no version of Postgres)."""
    return (
        len(parts) == 1
        and len(tokens[i].text) == 4
        and 1900 <= parts[0] <= 2199
        and i > 0
        and tokens[i - 1].text in _YEAR_BEFORE
    )


def _per_unit_count(tokens: list[Token], i: int, seconds: float, values: Values) -> int | None:
    """A count right after 每分钟 / 每秒 (a bound word between allowed): a rate, "每分钟100次",
    "每秒最多5个请求"; not a time of day (每天3点) or a day (每月1号); the index after it."""
    j = i
    while j < len(tokens) and tokens[j].text in BOUND_WORDS and j < i + 2:
        j += 1
    if j >= len(tokens) or tokens[j].kind not in ("num", "cjknum"):
        return None
    after = tokens[j + 1].text if j + 1 < len(tokens) else ""
    if after in _CLOCK_AFTER or after in ("号", "日", "分", "月") or UNITS.get(after):
        return None
    parsed = _number(tokens[j].text) if tokens[j].kind == "num" else None
    value = parsed[0] if parsed else _cjk_number(tokens[j].text)
    if value is None or math.isinf(value):
        return None
    rate = value / seconds
    values.quantities.append(Quantity("rate", rate, rate, rate, rate))
    return j + 1


def _day_of_month(tokens: list[Token], i: int, day: float, values: Values) -> int | None:
    """A day of the month without its month: "on the 5th", "the 1st of each month", "am 1.
    jedes Monats", "le 1er", "el día 5", "每月1号", "毎月5日"; the index after it."""
    if not (1 <= day <= 31) or day != int(day):
        return None
    t = tokens[i]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    before = [tok.text for tok in tokens[max(0, i - 2) : i]]
    end = i + 1
    if nxt is not None and nxt.text in _ORDINAL_ENDINGS and nxt.kind == "word":
        end += 1  # 5th, 1er, 1.º
        after = tokens[end].text if end < len(tokens) else ""
        dated = (
            before[-1:] in (["on"], ["le"], ["el"])
            or before == ["on", "the"]
            or after in ("of", "du", "de")
            or after == ""
        )
    elif before[-1:] and before[-1] in _DE_DAY_BEFORE:
        # "am 1. jedes Monats"; "immer am 10" (the full stop went with the sentence)
        dated = t.raw.endswith(".") or nxt is None or nxt.kind == "punct"
    elif nxt is not None and nxt.text == "号":
        dated, end = True, end + 1
    elif nxt is not None and nxt.text == "日":
        dated, end = bool(before) and before[-1] in ("每月", "毎月"), end + 1
    else:
        dated = before[-2:] == ["el", "día"] or (
            before[-1:] in (["le"], ["el"])
            and end + 1 < len(tokens)
            and tokens[end].text in ("de", "du")
            and tokens[end + 1].text in ("chaque", "mois", "cada", "mes")
        )
    if not dated:
        return None
    values.dates.append((0, 0, int(day)))
    return end


def _date_after_number(tokens: list[Token], i: int, day: float, values: Values) -> int | None:
    """'15 March', '15. März', '15 de marzo', '3月15日': a date; the index after it."""
    j = i + 1
    if j < len(tokens) and tokens[j].text == "de":
        j += 1
    if j < len(tokens) and tokens[j].text in MONTHS and 1 <= day <= 31:
        year = 0
        end = j + 1
        if end < len(tokens) and tokens[end].kind == "num" and len(tokens[end].text) == 4:
            year = int(tokens[end].text)
            end += 1
        values.dates.append((year, MONTHS[tokens[j].text], int(day)))
        return end
    if j < len(tokens) and tokens[j].text == "月" and 1 <= day <= 12:
        month = int(day)
        end = j + 1
        d = 0
        if (
            end + 1 < len(tokens)
            and tokens[end].kind == "num"
            and tokens[end + 1].text in ("日", "号")
        ):
            d = int(float(tokens[end].text))
            end += 2
        year = 0
        if i >= 2 and tokens[i - 1].text == "年" and tokens[i - 2].kind == "num":
            year = int(float(tokens[i - 2].text))
            tokens[i - 2].used = tokens[i - 1].used = True
        values.dates.append((year, month, d))
        return end
    return None


def extract_values(tokens: list[Token]) -> Values:
    """Every typed value in the tokens; the tokens a value took are marked `used`."""
    values = Values()
    values.timed = any(
        t.text in _TIME_CUES
        or t.text in _AFTERNOON
        or t.text in _EVENING
        or t.text in PERIOD_WORDS
        or t.text in WEEKDAYS
        or t.role is Role.PERIOD
        for t in tokens
    )
    n = len(tokens)
    period_at = -3  # where every/alle/每 stood: a duration right after it is a period
    i = 0
    while i < n:
        t = tokens[i]
        if t.used:
            i += 1
            continue
        start = i
        period = i - period_at <= 2  # "every 3 days", "tous les 90 jours"
        end: int | None = None
        often = _frequency(tokens, i)
        if often is not None:
            quantity, end = often
            values.quantities.append(quantity)
        elif t.kind == "iso":
            y, m, d = (int(p) for p in re.split("[-/]", t.text))
            values.dates.append((y, m, d))
            end = i + 1
        elif t.kind == "slash":
            end = _slash_date(t.text, values, i)
        elif t.kind == "dmy":
            pieces = [p for p in t.text.split(".") if p]
            year = int(pieces[2]) if len(pieces) > 2 else 0
            values.dates.append(
                (year + 2000 if 0 < year < 100 else year, int(pieces[1]), int(pieces[0]))
            )
            end = i + 1
        elif t.kind == "clock":
            hours, _, mins = t.text.partition(":")
            minute = int(hours) * 60 + int(mins)
            end = i + 1
            if end < n and tokens[end].text in ("pm", "am"):
                if tokens[end].text == "pm" and int(hours) < 12:
                    minute += 720
                end += 1
            values.clocks.append(minute)
        elif t.kind in ("num", "cjknum") or (t.kind == "sym" and t.text in "$€£"):
            end = _number_at(tokens, i, values, period)
        elif t.kind == "word" and t.text in MONTHS:
            end = _month_first(tokens, i, values)
            if end is None and t.text in _NUMBER_WORDS:  # "sept jours": seven, not September
                end = _spelled_number(tokens, i, values, period)
        elif t.text in WEEKDAYS:
            values.weekdays |= WEEKDAYS[t.text]
            end = i + 1
        elif t.text in PERIOD_WORDS:
            values.quantities.append(_every(PERIOD_WORDS[t.text]))
            end = i + 1
        elif t.role is Role.PERIOD:
            period_at = i
            unit = _unit_at(tokens, i + 1)
            if unit is not None and (i + 2 >= n or tokens[i + 2].text not in WEEKDAYS):
                (_, factor, _), after = unit
                end = _per_unit_count(tokens, after, factor, values)
                if end is None:
                    values.quantities.append(_every(factor))
                    end = after
                period_at = -3
        elif t.text in _NAMED_TIMES and not (i and tokens[i - 1].text == "-"):  # après-midi
            values.clocks.append(_NAMED_TIMES[t.text])
            end = i + 1
        elif t.kind == "word" and t.text in ("half", "quarter", "halb", "viertel"):
            end = _clock_words(tokens, i, values)
            if end is None and t.text in _NUMBER_WORDS:
                end = _spelled_number(tokens, i, values, period)
        elif t.kind == "word" and t.text in _NUMBER_WORDS:
            end = _spelled_number(tokens, i, values, period)
        if end is not None and end > start:
            _mark(tokens, start, end)
            i = end
        else:
            i += 1
    return values


def _slash_date(text: str, values: Values, i: int) -> int | None:
    """'15/12/2025' (day first, as most of the world writes it) or '12/15/2025' (month
    first, when the day cannot be the month): a date; the index after it."""
    first, second, year = (int(p) for p in text.split("/"))
    day, month = (second, first) if first <= 12 < second else (first, second)
    if not (1 <= day <= 31 and 1 <= month <= 12):
        return None
    values.dates.append((year + 2000 if year < 100 else year, month, day))
    return i + 1


def _month_first(tokens: list[Token], i: int, values: Values) -> int | None:
    """'September 30, 2026', 'March 15': a month name then a day number."""
    j = i + 1
    if j < len(tokens) and tokens[j].kind == "num" and "." not in tokens[j].text:
        day = int(tokens[j].text.replace(",", "") or 0)
        if 1 <= day <= 31:
            end = j + 1
            year = 0
            if end + 1 < len(tokens) and tokens[end].text == ",":
                end += 1
            if end < len(tokens) and tokens[end].kind == "num" and len(tokens[end].text) == 4:
                year = int(tokens[end].text)
                end += 1
            values.dates.append((year, MONTHS[tokens[i].text], day))
            return end
    return None


def _number_at(tokens: list[Token], i: int, values: Values, period: bool) -> int | None:
    """A number at tokens[i]: a quantity, range, date, clock time or bare number."""
    t = tokens[i]
    prefix_unit: tuple[str, float, float] | None = None
    if t.kind == "sym":  # $5, €20
        if i + 1 >= len(tokens) or tokens[i + 1].kind != "num":
            return None
        prefix_unit = UNITS.get(t.text)
        i += 1
        t = tokens[i]
    parsed = _number(t.text) if t.kind == "num" else None
    parts = parsed[1] if parsed else ()
    value = parsed[0] if parsed else _cjk_number(t.text)
    if value is None or math.isinf(value):
        return None
    if len(parts) <= 2 and prefix_unit is None:
        end = _date_after_number(tokens, i, value, values)
        if end is None:
            end = _day_of_month(tokens, i, value, values)
        if end is None and _year_at(tokens, i, parts):
            values.dates.append((int(value), 0, 0))  # "in 2022", "seit 2019": a year
            end = i + 1
        if end is None:
            end = _clock(tokens, i, value, values)
        if end is None and not parts[1:]:
            end = _hour_at(tokens, i, value, values)
        elif end is None and re.fullmatch(r"[0-9]{1,2}\.[0-5][0-9]", t.text):
            end = _hour_at(tokens, i, parts[0], values, minutes=parts[1])  # "at 7.30"
        if end is not None:
            return end
    hi = value
    end = i + 1
    ranged = _range_end(tokens, end) if len(parts) <= 2 else None
    if ranged is not None:
        hi, end = ranged
    unit = (prefix_unit, end) if prefix_unit is not None else _unit_at(tokens, end)
    if unit is None and ranged is None:
        unit = _cjk_span(tokens, end, value, t.kind == "cjknum")
    if unit is None and ranged is not None:
        # "between 5 and 15 minutes" is read above; "5 minutes to 15 minutes" is not needed
        hi, end = value, i + 1
        unit = _unit_at(tokens, end)
        if unit is None:
            ranged = _range_end(tokens, end)
            hi, end = ranged if ranged is not None else (value, end)
    if unit is not None and unit[0] is not None:
        (dim, factor, alt), end = unit
        if period and dim == "time":
            dim = "period"
        lo, hi = min(value, hi), max(value, hi)
        if lo == hi and tokens[end - 1].text in ("jours", "jour"):
            lo = _FRENCH_WEEKS.get(lo, lo)
        values.quantities.append(_quantity(dim, lo, hi, factor, alt))
        return end
    rate = _rate(tokens, end)
    if rate is not None:
        factor, end = rate
        values.quantities.append(
            Quantity("rate", value / factor, hi / factor, value / factor, hi / factor)
        )
        return end
    if t.kind == "cjknum":
        if end < len(tokens) and tokens[end].text in _CLASSIFIERS:
            values.nums.append(Num((), value, value, frozenset({tokens[end].text})))
            return end + 1
        return None  # a Chinese numeral without a unit is too often part of a word
    lo, hi = min(value, hi), max(value, hi)
    values.nums.append(Num(parts if lo == hi else (), lo, hi, _anchors(tokens, i)))
    return end


def _rate(tokens: list[Token], i: int) -> tuple[float, int] | None:
    """'requests per minute', '/min', 'pro Stunde', '每分钟' after a number: the unit's seconds."""
    j = i
    if j < len(tokens) and tokens[j].kind == "word" and tokens[j].role is None:
        j += 1  # the counted noun: "100 requests per minute"
    if j + 1 < len(tokens) and (tokens[j].text in _PER or tokens[j].text == "/"):
        unit = UNITS.get(tokens[j + 1].text)
        if unit is not None and unit[0] == "time":
            return unit[1], j + 2
    return None


def parse_quantities(text: str) -> tuple[Quantity, ...]:
    """The quantities with units in `text` (for tests and callers that only need those)."""
    return tuple(extract_values(tokenize(text)).quantities)
