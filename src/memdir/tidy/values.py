"""Tokens and typed values of one statement: quantities with units, dates, clock times, weekdays
and plain numbers (ports, versions), each normalised so that equal values compare equal."""

from __future__ import annotations

import math
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
    r"(?P<iso>[0-9]{4}-[0-9]{1,2}-[0-9]{1,2})(?![0-9])"
    r"|(?P<dmy>[0-9]{1,2}\.[0-9]{1,2}\.(?:[0-9]{4}|[0-9]{2})?)(?=\s)"
    r"|(?P<clock>[0-9]{1,2}:[0-9]{2})(?![0-9])"
    r"|(?P<num>[0-9]+(?:[.,][0-9]+)*)"
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
}  # fmt: skip
_HALF = frozenset(w for w, v in _NUMBER_WORDS.items() if v == 0.5)
_CLOCK_AFTER = frozenset({"am", "pm", "uhr", "点", "點", "時"})
_ZH_DAY_PARTS = {
    "上午": 0, "早上": 0, "凌晨": 0, "下午": 12, "晚上": 12, "中午": 0,
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
_AT_HOUR = frozenset({"at", "um", "à", "las", "gegen", "vers", "ab"})
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
    if i < len(tokens) and tokens[i].text == "个" and i + 1 < len(tokens):
        i += 1
    if i + 1 < len(tokens) and tokens[i].text in _MONTH_COUNTERS and tokens[i + 1].text == "月":
        return UNITS["个月"], i + 2  # 3ヶ月, 6か月
    if i < len(tokens) and not tokens[i].used and tokens[i].kind in ("word", "cjk", "sym"):
        unit = UNITS.get(tokens[i].text)
        if unit is not None:
            return unit, i + 1
    return None


def _quantity(dim: str, lo: float, hi: float, factor: float, alt: float) -> Quantity:
    return Quantity(dim, lo * factor, hi * factor, lo * alt, hi * alt)


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


def _hour_at(tokens: list[Token], i: int, hour: float, values: Values) -> int | None:
    """A bare hour after "at"/"um"/"à"/"a las" ("at 3", "um drei", "à 3 heures", "a las
    tres de la tarde"), not a count of something: a time of day; the index after it."""
    if i == 0 or tokens[i - 1].text not in _AT_HOUR or not (0 <= hour <= 24):
        return None
    if not values.timed:
        return None  # "capped at 3", "keep the replicas at 3": a count
    if hour != int(hour):
        return None
    end = i + 1
    nxt = tokens[end] if end < len(tokens) else None
    if nxt is not None and nxt.text in ("heures", "heure", "horas", "hora", "o", "sharp"):
        end += 1
        if nxt.text == "o" and end < len(tokens) and tokens[end].text == "clock":
            end += 1
    elif (
        nxt is not None
        and (_unit_at(tokens, end) is not None or nxt.kind in ("word", "cjk"))
        and nxt.text not in _AFTERNOON
        and nxt.role is not Role.STOP
    ):
        return None  # "at 3 replicas", "um 5 Minuten": a count, not a time
    h = int(hour)
    if _after_noon(tokens, end, h) and h < 12:
        h += 12
    values.clocks.append((h % 24) * 60)
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
    period = False  # after every/alle/每: the next duration is a period
    i = 0
    while i < n:
        t = tokens[i]
        if t.used:
            i += 1
            continue
        start = i
        end: int | None = None
        if t.kind == "iso":
            y, m, d = (int(p) for p in t.text.split("-"))
            values.dates.append((y, m, d))
            end = i + 1
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
            period = False
        elif t.kind == "word" and t.text in MONTHS:
            end = _month_first(tokens, i, values)
        elif t.text in WEEKDAYS:
            values.weekdays |= WEEKDAYS[t.text]
            end = i + 1
        elif t.text in PERIOD_WORDS:
            seconds = PERIOD_WORDS[t.text]
            values.quantities.append(Quantity("period", seconds, seconds, seconds, seconds))
            end = i + 1
        elif t.role is Role.PERIOD:
            period = True
            unit = _unit_at(tokens, i + 1)
            if unit is not None and (i + 2 >= n or tokens[i + 2].text not in WEEKDAYS):
                (_, factor, _), after = unit
                values.quantities.append(Quantity("period", factor, factor, factor, factor))
                end = after
                period = False
        elif t.text in _NAMED_TIMES and not (i and tokens[i - 1].text == "-"):  # après-midi
            values.clocks.append(_NAMED_TIMES[t.text])
            end = i + 1
        elif t.kind == "word" and t.text in _NUMBER_WORDS:
            found = _word_number(tokens, i)
            if found is not None and found[0] >= 1:
                end = _hour_at(tokens, i, found[0], values)
            if found is not None and end is None:
                value, after = found
                unit = _unit_at(tokens, after)
                if unit is not None and len(tokens[after].text) > 1:
                    (dim, factor, alt), end = unit
                    dim = "period" if period and dim == "time" else dim
                    values.quantities.append(_quantity(dim, value, value, factor, alt))
                    period = False
        if end is not None and end > start:
            _mark(tokens, start, end)
            i = end
        else:
            i += 1
    return values


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
            end = _clock(tokens, i, value, values)
        if end is None and not parts[1:]:
            end = _hour_at(tokens, i, value, values)
        if end is not None:
            return end
    hi = value
    end = i + 1
    ranged = _range_end(tokens, end) if len(parts) <= 2 else None
    if ranged is not None:
        hi, end = ranged
    unit = (prefix_unit, end) if prefix_unit is not None else _unit_at(tokens, end)
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
