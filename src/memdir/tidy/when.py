"""When things happen, as people write it: clock times (digits, words, 12/24-hour, "halb
fünf", "a las diez de la mañana", 晚8点), dates and days of the month, years, and how often
("twice a week", "einmal im Jahr", "une fois par mois")."""

from __future__ import annotations

from memdir.tidy.lexicon import (
    MONTHS,
    PERIOD_WORDS,
    UNITS,
    Role,
)
from memdir.tidy.tokens import (
    NUMBER_WORDS,
    ZH_DAY_PARTS,
    Quantity,
    Token,
    Values,
    every,
    read_number,
    unit_at,
    word_number,
)

__all__ = [
    "AFTERNOON",
    "CLOCK_AFTER",
    "EVENING",
    "NAMED_TIMES",
    "clock_at",
    "clock_words",
    "date_after_number",
    "day_of_month",
    "frequency",
    "hour_at",
    "month_first",
    "slash_date",
    "year_at",
]

#: "once a quarter", "zweimal im Quartal": a quarter only after a count of times ("a quarter
#: of the tests" is a share, "quarter past" a time).
_QUARTERS = dict.fromkeys(("quarter", "quartal", "trimestre"), ("time", 7776000.0, 7776000.0))


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


CLOCK_AFTER = frozenset({"am", "pm", "uhr", "点", "點", "時"})


#: Words after a time of day that put it after noon ("3 Uhr nachmittags", "a las 5 de la
#: tarde", "à 3 heures de l'après-midi", "9 in the evening").
AFTERNOON = frozenset({"pm", "nachmittags", "nachmittag", "tarde", "afternoon"})


#: Evening and night words move only the hours they can mean: "9 in the evening" is 21:00,
#: "2 at night" stays 2:00.
EVENING = frozenset({"abends", "abend", "soir", "evening", "night", "noche", "nuit", "nachts"})


#: Clock words: noon and midnight.
NAMED_TIMES = {
    "noon": 720, "midday": 720, "mittag": 720, "mittags": 720, "midi": 720,
    "mediodía": 720, "midnight": 0, "mitternacht": 0, "minuit": 0, "medianoche": 0,
    "正午": 720, "零時": 0,
}  # fmt: skip


#: Words before a bare hour that make it a time of day: "at 3", "um drei", "a las tres".
_AT_HOUR = frozenset({"at", "um", "à", "las", "la", "gegen", "vers", "ab"})


#: After a day number: "5th", "1st", "1er" (French), "1re", "1º" (Spanish, NFKC "1o").
_ORDINAL_ENDINGS = frozenset({"st", "nd", "rd", "th", "er", "re", "e", "ème", "o"})


#: German words before a day of the month written "1.": "am 1.", "zum 15.", "ab dem 3.".
_DE_DAY_BEFORE = frozenset({"am", "zum", "vom", "dem", "den"})
#: After a day of the month: "the 1st of each month", "le 5 de chaque mois".
_EACH = frozenset(
    {"each", "every", "the", "month", "chaque", "cada", "mois", "mes", "le", "jeden", "jedes"}
)


#: Words before a four-digit year.
#: Words before a four-digit year a thing happened in ("in 2022"), and before one a state
#: runs from or until ("since 2019", "bis 2026": a bound in time, no value to compare).
_YEAR_AT = frozenset({"in", "im", "en", "durante", "jahr", "year", "año", "année"})
#: Words after a bare hour that make it one: "à 3 heures", "a las 3 horas", "3 o'clock", "um 3 Uhr".
_HOUR_WORDS = frozenset({"heures", "heure", "horas", "hora", "o", "uhr"})
_SINCE = frozenset({"since", "seit", "depuis", "desde"})
_YEAR_BOUND = frozenset(
    {
        "since",
        "until",
        "by",
        "from",
        "seit",
        "bis",
        "ab",
        "von",
        "depuis",
        "jusqu",
        "desde",
        "hasta",
    }
)


#: Morning words: after a bare hour they make it a time of day ("diez de la mañana").
_MORNING = frozenset({"morning", "morgens", "früh", "matin", "mañana", "madrugada"})


#: Minutes past the hour in words: "et demie", "y media", "et quart", "y cuarto".
_PAST_HOUR = {"demie": 30, "media": 30, "quart": 15, "cuarto": 15}


_AT = frozenset({"at", "à", "a", "um", "las", "vers", "gegen", "ab", "dès"})


def frequency(tokens: list[Token], i: int) -> tuple[Quantity, int] | None:
    """'twice a week', 'einmal im Jahr', 'trois fois par mois', '3 times a day': how often
    something happens, as the period in seconds between times; the index after it."""
    t = tokens[i]
    j = i + 1
    count: float | None = _TIMES_WORDS.get(t.text)
    if count is None:
        if t.kind == "num":
            parsed = read_number(t.text)
            count = parsed[0] if parsed else None
        elif t.kind == "word" and t.text in NUMBER_WORDS:
            found = word_number(tokens, i)
            count, j = found if found is not None else (None, j)
        if count is None or j >= len(tokens) or tokens[j].text not in _TIMES_AFTER:
            return None
        j += 1
    between = 0
    while j < len(tokens) and tokens[j].text in _PER_PERIOD and between < 2:
        j, between = j + 1, between + 1
    word = tokens[j].text if j < len(tokens) else ""
    if not count or count <= 0:
        return None
    if not between and word in PERIOD_WORDS:
        return every(PERIOD_WORDS[word], count), j + 1  # "twice daily", "3 times weekly"
    unit = UNITS.get(word) or _QUARTERS.get(word)
    if not between or unit is None or unit[0] != "time":
        return None
    return every(unit[1], count), j + 1


def clock_at(tokens: list[Token], i: int, hour: float, values: Values) -> int | None:
    """`hour` followed by am/pm, Uhr, 点 (+半 / +N 分), or h30: a clock time; the next index."""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if nxt is None or nxt.used or not (nxt.text in CLOCK_AFTER or nxt.text == "h"):
        return None
    minutes = 0
    end = i + 2
    if nxt.text == "h":
        if end < len(tokens) and tokens[end].text.isdigit() and len(tokens[end].text) == 2:
            minutes = int(tokens[end].text)
            end += 1
        elif i == 0 or tokens[i - 1].text not in _AT:
            return None  # "6 h" is a duration, "à 18h" and "14h30" are times of day
    elif nxt.text in ("点", "點", "時") and end < len(tokens):
        if tokens[end].text == "半":
            minutes, end = 30, end + 1
        elif tokens[end].kind == "num" and end + 1 < len(tokens) and tokens[end + 1].text == "分":
            parsed = read_number(tokens[end].text)
            if parsed is None or parsed[1][1:] or not 0 <= parsed[0] < 60:
                return None  # 3点1,5分: not one time
            minutes, end = int(parsed[0]), end + 2
    h = int(hour)
    # an "am" says which half of the day, whatever "pm" comes later ("2 am and 2 pm")
    if (nxt.text == "pm" or (nxt.text != "am" and _after_noon(tokens, end, h))) and h < 12:
        h += 12
    if nxt.text == "am" and h == 12:
        h = 0
    if i > 0 and tokens[i - 1].text in ZH_DAY_PARTS and h < 12:
        h += ZH_DAY_PARTS[tokens[i - 1].text]
        tokens[i - 1].used = True
    values.clocks.append((h % 24) * 60 + minutes)
    values.moments += 1
    return _past_day_part(tokens, end) if nxt.text not in ("am", "pm") else end


def _past_day_part(tokens: list[Token], i: int) -> int:
    """The index after a part of the day that follows a time (up to three words, not past a
    comma: "in the evening", "de la mañana", "du soir", "nachmittags"), else `i`: the clock
    took those words, so they do not stand as words of the statement's subject."""
    for j in range(i, min(i + 3, len(tokens))):
        t = tokens[j]
        if t.kind == "punct":
            break
        if t.text in AFTERNOON or t.text in EVENING or t.text in _MORNING:
            return j + 1
        if t.text == "après" and j + 2 < len(tokens) and tokens[j + 2].text == "midi":
            return j + 3
    return i


def _spoken_clock(values: Values, h: int, minutes: int, day_part: bool) -> None:
    """A time of day said without am/pm or a part of the day ("um drei", "half past four"):
    either half of the day, so "um halb fünf" and 16:30 agree, and 2:00 and "at three" do not."""
    values.clocks.append((h % 24) * 60 + minutes)
    if not day_part and 1 <= h <= 11:
        values.clocks.append((h + 12) * 60 + minutes)
    elif not day_part and h == 12:
        values.clocks.append(minutes)  # "at 12": noon or midnight
    values.moments += 1


def _after_noon(tokens: list[Token], i: int, hour: int) -> bool:
    """Whether the words right after a time (up to three, not past a comma) put `hour`
    after noon: "de la tarde", "in the afternoon", "de l'après-midi", "9 in the evening"."""
    for j in range(i, min(i + 3, len(tokens))):
        t = tokens[j]
        if t.kind == "punct":
            return False
        if t.text in AFTERNOON or (t.text in EVENING and 6 <= hour <= 11):
            return True
        if t.text == "après" and j + 2 < len(tokens) and tokens[j + 2].text == "midi":
            return True
    return False


def hour_at(
    tokens: list[Token], i: int, hour: float, values: Values, minutes: int = 0
) -> int | None:
    """A bare hour after "at"/"um"/"à"/"a las" ("at 3", "um drei", "à 3 heures", "a las
    tres de la tarde", "at 7.30"), or before a part of the day ("diez de la mañana"), not
    a count of something: a time of day; the index after it."""
    day_part = _past_day_part(tokens, i + 1) > i + 1
    if not (0 <= hour <= 24) or hour != int(hour):
        return None
    if not day_part and (i == 0 or tokens[i - 1].text not in _AT_HOUR):
        return None
    # "capped at 3", "keep the replicas at 3": a count; Spanish "a las" is always an hour
    end = i + 1
    nxt = tokens[end] if end < len(tokens) else None
    named = nxt is not None and nxt.text in _HOUR_WORDS
    if not (values.timed or day_part or named or tokens[i - 1].text in ("las", "la")):
        return None
    if nxt is not None and (nxt.text in _HOUR_WORDS or nxt.text == "sharp"):
        end += 1
        if nxt.text == "o" and end < len(tokens) and tokens[end].text == "clock":
            end += 1
    elif (
        nxt is not None
        and (unit_at(tokens, end) is not None or nxt.kind in ("word", "cjk"))
        and nxt.text not in AFTERNOON
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
    after = _past_day_part(tokens, end)
    _spoken_clock(values, h, minutes, after > end)
    return after


def clock_words(tokens: list[Token], i: int, values: Values) -> int | None:
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
    parsed = read_number(nxt.text) if nxt.kind == "num" else None
    found = word_number(tokens, j) if nxt.text in NUMBER_WORDS else None
    hour = parsed[0] if parsed and not parsed[1][1:] else (found[0] if found else None)
    if hour is None or not (1 <= hour <= 12) or hour != int(hour):
        return None
    end = j + 1
    if end < len(tokens) and tokens[end].text == "uhr":
        end += 1
    h = int(hour)
    if _after_noon(tokens, end, h) and h < 12:
        h += 12
    after = _past_day_part(tokens, end)
    minutes = (h * 60 + offset) % 1440
    _spoken_clock(values, minutes // 60, minutes % 60, after > end)
    return after


def year_at(tokens: list[Token], i: int, parts: tuple[int, ...]) -> str | None:
    """ "point" when the number at i is a year a thing happened in ("Migrated to Postgres in
    2022" names no version of Postgres), "bound" for a year a state runs from or until
    ("since 2019", "bis 2026"), None when it is no year ("loads in 2000 ms", "from 2000
    connections", "bis 2000 Anfragen pro Minute")."""
    if not (len(parts) == 1 and len(tokens[i].text) == 4 and 1900 <= parts[0] <= 2199 and i):
        return None
    before = tokens[i - 1].text
    kind = "point" if before in _YEAR_AT else "bound" if before in _YEAR_BOUND else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if kind is None or (
        nxt is not None
        and (
            unit_at(tokens, i + 1) is not None
            or nxt.text in ("/", "per", "pro", "par", "por")
            # "from 2000 connections"; "seit 2019 nutzen wir" is a year all the same
            or (nxt.kind == "word" and nxt.role is None and before not in _SINCE)
        )
    ):
        return None
    return kind


def day_of_month(tokens: list[Token], i: int, day: float, values: Values) -> int | None:
    """A day of the month without its month: "on the 5th", "the 1st of each month", "am 1.
    jedes Monats", "le 1er", "el día 5", "每月1号", "毎月5日"; the index after it."""
    if not (1 <= day <= 31) or day != int(day):
        return None
    t = tokens[i]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    before = [tok.text for tok in tokens[max(0, i - 2) : i]]
    end = i + 1
    month = 0
    if nxt is not None and nxt.text in _ORDINAL_ENDINGS and nxt.kind == "word":
        end += 1  # 5th, 1er, 1.º
        after = [tok.text for tok in tokens[end : end + 2]]
        if after[:1] and after[0] in MONTHS:  # "le 1er mai"
            month, end = MONTHS[after[0]], end + 1
        elif after[:1] in (["of"], ["de"], ["du"]) and after[1:] and after[1] in MONTHS:
            month, end = MONTHS[after[1]], end + 2  # "the 3rd of May"
        # "on the 5th", "the 1st of each month", "le 1er du mois"; not "the 3rd attempt"
        dated = (
            bool(month)
            or not after
            or tokens[end].kind == "punct"
            or after[0] in _EACH
            or (after[0] in ("of", "du", "de") and after[1:] != [] and after[1] in _EACH)
        )
    elif before[-1:] and before[-1] in _DE_DAY_BEFORE:
        # "am 1. jedes Monats", "ab dem 3."; "immer am 10" (the full stop went with the
        # sentence; "bis 10" at an end is a bound)
        ends = nxt is None or nxt.kind == "punct"
        dated = t.raw.endswith(".") or (ends and before[-1] in ("am", "zum", "vom"))
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
    values.dates.append((0, month, int(day)))
    return end


def date_after_number(tokens: list[Token], i: int, day: float, values: Values) -> int | None:
    """'15 March', '15. März', '15 de marzo', '3月15日': a date; the index after it."""
    j = i + 1
    if j < len(tokens) and tokens[j].text == "de":
        j += 1
    if j < len(tokens) and tokens[j].text in MONTHS and 1 <= day <= 31:
        year = 0
        end = j + 1
        if end < len(tokens) and tokens[end].text.isdigit() and len(tokens[end].text) == 4:
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
            and tokens[end].text.isdigit()
            and tokens[end + 1].text in ("日", "号")
        ):
            d = int(tokens[end].text)  # 3月15日; not 3月10,15日 (two days)
            end += 2
        year = 0
        if i >= 2 and tokens[i - 1].text == "年" and tokens[i - 2].text.isdigit():
            year = int(tokens[i - 2].text)
            tokens[i - 2].used = tokens[i - 1].used = True
        values.dates.append((year, month, d))
        return end
    return None


def slash_date(text: str, values: Values, i: int) -> int | None:
    """'15/12/2025' (day first, as most of the world writes it) or '12/15/2025' (month
    first, when the day cannot be the month): a date; the index after it."""
    first, second, year = (int(p) for p in text.split("/"))
    day, month = (second, first) if first <= 12 < second else (first, second)
    if not (1 <= day <= 31 and 1 <= month <= 12):
        return None
    values.dates.append((year + 2000 if year < 100 else year, month, day))
    return i + 1


def month_first(tokens: list[Token], i: int, values: Values) -> int | None:
    """'September 30, 2026', 'March 15': a month name then a day number."""
    j = i + 1
    if j < len(tokens) and tokens[j].kind == "num" and "." not in tokens[j].text:
        day = int(tokens[j].text.replace(",", "") or 0)
        if 1 <= day <= 31:
            end = j + 1
            year = 0
            if end + 1 < len(tokens) and tokens[end].text == ",":
                end += 1
            if end < len(tokens) and tokens[end].text.isdigit() and len(tokens[end].text) == 4:
                year = int(tokens[end].text)
                end += 1
            values.dates.append((year, MONTHS[tokens[i].text], day))
            return end
    return None
