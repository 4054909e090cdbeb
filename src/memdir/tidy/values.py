"""Typed values of one statement: quantities with units, dates, clock times, weekdays
and plain numbers (ports, versions), each normalised so that equal values compare equal."""

from __future__ import annotations

import math
import re

from memdir.tidy.lexicon import (
    BOUND_WORDS,
    MONTHS,
    PERIOD_WORDS,
    UNITS,
    WEEKDAYS,
    Role,
)
from memdir.tidy.tokens import (
    NUMBER_WORDS,
    Num,
    Quantity,
    Token,
    Values,
    cjk_number,
    every,
    make_quantity,
    read_number,
    tokenize,
    unit_at,
    word_number,
)
from memdir.tidy.when import (
    AFTERNOON,
    CLOCK_AFTER,
    EVENING,
    NAMED_TIMES,
    clock_at,
    clock_words,
    date_after_number,
    day_of_month,
    frequency,
    hour_at,
    month_first,
    slash_date,
    year_at,
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

#: What makes "N日" a number of days rather than a day of the month: 90日で, 90日経過,
#: 30日以内, 7日后.
_AFTER_DAYS = frozenset({"で", "経過", "以内", "以上", "以下", "后", "後", "保存", "保持", "間"})


#: French counts a week as "huit jours" and two as "quinze jours": 8 days may be 7.
_FRENCH_WEEKS = {8.0: 7.0, 15.0: 14.0}


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


_PER = frozenset({"per", "pro", "je", "par", "por", "每", "a"})


_CLASSIFIERS = frozenset({"人", "位", "名", "次", "台", "条", "项", "天", "件", "個", "回", "つ"})


def _anchors(tokens: list[Token], i: int) -> frozenset[str]:
    found: set[str] = set()
    for step in (-1, 1):
        j = i + step
        seen = 0
        while 0 <= j < len(tokens) and seen < 2:
            t = tokens[j]
            if t.kind == "punct":
                break
            if (
                t.kind in ("word", "cjk")
                and t.role in (None, Role.KEY)
                and t.text not in BOUND_WORDS
            ):
                found.add(t.text)  # a bound word ("höchstens 3") says how, not of what
                break
            seen += 1
            j += step
    return frozenset(found)


def _spelled_number(tokens: list[Token], i: int, values: Values, period: bool) -> int | None:
    """A number in words at tokens[i]: a time of day ("um drei") or a quantity ("two weeks",
    "sept jours"); the index after it."""
    found = word_number(tokens, i)
    if found is None:
        return None
    if found[0] >= 1:
        end = hour_at(tokens, i, found[0], values)
        if end is not None:
            return end
    value, after = found
    unit = unit_at(tokens, after)
    if unit is None or len(tokens[after].text) <= 1:
        if value >= 2 and value == int(value) and after < len(tokens):
            nxt = tokens[after]
            if nxt.kind in ("word", "cjk") and nxt.role in (None, Role.KEY):
                # "drei Knoten", "acht Zeichen": a count, compared like "3 Knoten"
                values.nums.append(Num((int(value),), value, value, _anchors(tokens, i)))
                return after
        return None
    (dim, factor, alt), end = unit
    dim = "period" if period and dim == "time" else dim
    lo = _FRENCH_WEEKS.get(value, value) if tokens[end - 1].text in ("jours", "jour") else value
    values.quantities.append(make_quantity(dim, lo, value, factor, alt))
    return end


def _mark(tokens: list[Token], start: int, end: int) -> None:
    for k in range(start, min(end, len(tokens))):
        tokens[k].used = True


def _range_end(tokens: list[Token], i: int) -> tuple[float, int] | None:
    """After a number at i-1: '- 15', 'to 15', 'bis 15', '到15', 'and 15' (after between)."""
    if i + 1 >= len(tokens):
        return None
    t = tokens[i]
    joiner = t.role is Role.RANGE or t.text in ("to", "and", "und", "et", "y", "à", "a")
    nxt = tokens[i + 1]
    if not joiner or nxt.kind not in ("num", "cjknum"):
        return None
    value = read_number(nxt.text) if nxt.kind == "num" else None
    number = value[0] if value else cjk_number(nxt.text)
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
    if t.text == "日" and nxt is not None:
        pair = nxt.text + (tokens[i + 2].text if i + 2 < len(tokens) else "")
        if nxt.text in _AFTER_DAYS or pair[:2] in _AFTER_DAYS or nxt.text.startswith("ごと"):
            return ("time", 86400.0, 86400.0), i + 1  # 30日保存, 90日ごとに: days
    return None


def _per_unit_count(tokens: list[Token], i: int, seconds: float, values: Values) -> int | None:
    """A count right after 每分钟 / 每秒 (a bound word between allowed): a rate, "每分钟100次",
    "每秒最多5个请求"; not a time of day (每天3点) or a day (每月1号); the index after it."""
    j = i
    while j < len(tokens) and tokens[j].text in BOUND_WORDS and j < i + 2:
        j += 1
    if j >= len(tokens) or tokens[j].kind not in ("num", "cjknum"):
        return None
    after = tokens[j + 1].text if j + 1 < len(tokens) else ""
    if after in CLOCK_AFTER or after in ("号", "日", "分", "月") or UNITS.get(after):
        return None
    parsed = read_number(tokens[j].text) if tokens[j].kind == "num" else None
    value = parsed[0] if parsed else cjk_number(tokens[j].text)
    if value is None or math.isinf(value):
        return None
    rate = value / seconds
    values.quantities.append(Quantity("rate", rate, rate, rate, rate))
    return j + 1


def extract_values(tokens: list[Token]) -> Values:
    """Every typed value in the tokens; the tokens a value took are marked `used`."""
    values = Values()
    values.timed = any(
        t.text in _TIME_CUES
        or t.text in AFTERNOON
        or t.text in EVENING
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
        often = frequency(tokens, i)
        if often is not None:
            quantity, end = often
            values.quantities.append(quantity)
        elif t.kind == "iso":
            y, m, d = (int(p) for p in re.split("[-/]", t.text))
            values.dates.append((y, m, d))
            end = i + 1
        elif t.kind == "slash":
            end = slash_date(t.text, values, i)
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
            values.moments += 1
        elif t.kind in ("num", "cjknum") or (t.kind == "sym" and t.text in "$€£"):
            end = _number_at(tokens, i, values, period)
        elif t.kind == "word" and t.text in MONTHS:
            end = month_first(tokens, i, values)
            if end is None and t.text in NUMBER_WORDS:  # "sept jours": seven, not September
                end = _spelled_number(tokens, i, values, period)
        elif t.text in WEEKDAYS:
            values.weekdays |= WEEKDAYS[t.text]
            end = i + 1
        elif t.text in PERIOD_WORDS:
            values.quantities.append(every(PERIOD_WORDS[t.text]))
            end = i + 1
        elif t.role is Role.PERIOD:
            period_at = i
            unit = unit_at(tokens, i + 1)
            if unit is not None and (i + 2 >= n or tokens[i + 2].text not in WEEKDAYS):
                (_, factor, _), after = unit
                end = _per_unit_count(tokens, after, factor, values)
                if end is None:
                    values.quantities.append(every(factor))
                    end = after
                period_at = -3
        elif t.text in NAMED_TIMES and not (i and tokens[i - 1].text == "-"):  # après-midi
            values.clocks.append(NAMED_TIMES[t.text])
            values.moments += 1
            end = i + 1
        elif t.kind == "word" and t.text in (
            "half",
            "quarter",
            "halb",
            "viertel",
            "quart",
            "cuarto",
        ):
            end = clock_words(tokens, i, values)
            if end is None and t.text in ("quarter", "quart", "cuarto"):
                end = _quarter_hour(tokens, i, values)
            if end is None and t.text in NUMBER_WORDS:
                end = _spelled_number(tokens, i, values, period)
        elif t.kind == "word" and t.text in NUMBER_WORDS:
            end = _spelled_number(tokens, i, values, period)
        if end is not None and end > start:
            _mark(tokens, start, end)
            i = end
        else:
            i += 1
    _times_per_period(values)
    return values


def _quarter_hour(tokens: list[Token], i: int, values: Values) -> int | None:
    """'a quarter of an hour', 'quart d'heure', 'cuarto de hora': 15 minutes; the index after."""
    j = i + 1
    while j < len(tokens) and j <= i + 3 and tokens[j].text in ("of", "an", "a", "d", "de"):
        j += 1
    unit = UNITS.get(tokens[j].text) if j < len(tokens) else None
    if unit is None or unit[:2] != ("time", 3600):
        return None
    values.quantities.append(make_quantity("time", 900, 900, 1, 1))
    return j + 1


def _times_per_period(values: Values) -> None:
    """ "Daily at 2 am and 2 pm" happens every 12 hours, "weekly on Monday and Thursday"
    twice a week: a period stated with several times of day (or weekdays) in it."""
    periods = [q for q in values.quantities if q.dim == "period"]
    if len(periods) != 1:
        return
    (period,) = periods
    day, week = every(86400.0), every(7 * 86400.0)
    if period == day and values.moments >= 2:
        values.quantities[values.quantities.index(period)] = every(86400.0, values.moments)
    elif period == week and len(values.weekdays) >= 2:
        values.quantities[values.quantities.index(period)] = every(
            7 * 86400.0, len(values.weekdays)
        )


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
    parsed = read_number(t.text) if t.kind == "num" else None
    parts = parsed[1] if parsed else ()
    value = parsed[0] if parsed else cjk_number(t.text)
    if value is None or math.isinf(value):
        return None
    if len(parts) <= 2 and prefix_unit is None:
        end = date_after_number(tokens, i, value, values)
        if end is None:
            end = day_of_month(tokens, i, value, values)
        year = year_at(tokens, i, parts) if end is None else None
        if year is not None:
            if year == "point":
                values.dates.append((int(value), 0, 0))  # "in 2022": a year
            end = i + 1  # "since 2019": a bound in time, no value
        if end is None:
            end = clock_at(tokens, i, value, values)
        if end is None and not parts[1:]:
            end = hour_at(tokens, i, value, values)
        elif end is None and re.fullmatch(r"[0-9]{1,2}\.[0-5][0-9]", t.text):
            end = hour_at(tokens, i, parts[0], values, minutes=parts[1])  # "at 7.30"
        if end is not None:
            return end
    hi = value
    end = i + 1
    ranged = _range_end(tokens, end) if len(parts) <= 2 else None
    if ranged is not None:
        hi, end = ranged
    unit = (prefix_unit, end) if prefix_unit is not None else unit_at(tokens, end)
    if unit is None and ranged is None:
        unit = _cjk_span(tokens, end, value, t.kind == "cjknum")
    if unit is None and ranged is not None:
        # "between 5 and 15 minutes" is read above; "5 minutes to 15 minutes" is not needed
        hi, end = value, i + 1
        unit = unit_at(tokens, end)
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
        values.quantities.append(make_quantity(dim, lo, hi, factor, alt))
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
