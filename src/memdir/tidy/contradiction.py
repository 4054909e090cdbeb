"""Model-free contradiction detection between two notes on the same topic (§6).

::

    find_contradiction(a, b) -> Contradiction | None
      split_statements    summary, body lines, sentences, "key: value" lines
      read_statement      tokens -> key words (stemmed), typed values, choices, polarity
      _conflict           same key (and no contrasting subject) with values that cannot
                          both hold, or the same claim with its polarity flipped

A statement's *key* is what it is about: its content words once values, polarity words and
function words are gone. Two statements are compared only when their keys largely overlap
and the words that differ do not name parallel subjects (staging vs production). Values are
normalised before they are compared: 30 s = half a minute, 5 GB = 5000 MB, 2 pm = 14:00, a
range holds the values inside it, "20" is a prefix of version "20.11". The past does not
count: "used to be X, now Y" asserts Y, "switched from X to Y" asserts Y, "instead of X"
and a contrast after a comma ("X, not Y") assert nothing about Y.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from functools import lru_cache

from memdir.core import Note
from memdir.index.tokenize import stemmer
from memdir.tidy.lexicon import (
    BOUND_WORDS,
    CONTRAST_CLASSES,
    MONTHS,
    STEM_LANGUAGE_HINTS,
    VALUE_VERBS,
    Role,
)
from memdir.tidy.values import Num, Quantity, Token, extract_values, tokenize

__all__ = [
    "EXCERPT_MAX_CHARS",
    "Contradiction",
    "Statement",
    "find_contradiction",
    "read_statement",
    "split_statements",
]

#: The longest excerpt a finding's reason quotes, in characters.
EXCERPT_MAX_CHARS = 120
_MAX_STATEMENTS = 200  # per note: keeps a pathological note from costing n*m comparisons
_MAX_STATEMENT_CHARS = 2000
_CHOICE_MAX_WORDS = 2

# A full stop after a digit ends a sentence only before a capital ("runs 3.11. Use uv"), not
# inside a German date ("am 31.03. fällig").
_SENTENCE_END = re.compile(
    r"(?<![0-9])[.!?](?=\s)|(?<=[0-9])\.(?=\s+[A-ZÀ-Þ\u3400-\u9fff])|[。！？；;]"
)
_BULLET = re.compile(r"^\s*(?:[-*+•]|[0-9]{1,3}[.)]|#{1,6})\s+")
_MARKUP = re.compile(r"[*_`>]+")
_FROM_WORDS = frozenset({"from", "von", "de", "desde", "从"})
_TO_WORDS = frozenset({"to", "auf", "zu", "nach", "à", "vers", "a", "hacia", "到"})
_OWN_VERBS = frozenset({"owns", "leads", "maintains", "manages", "handles", "负责"})
_ARTICLES = frozenset({"the", "der", "die", "das", "le", "la", "el", "los", "las", "les"})
_CLAUSE_END = ("punct",)
#: Two values of one dimension further apart than this factor measure different things
#: (a retention of 30 days and a timeout of 10 seconds), when no shared words say otherwise.
_MAGNITUDE = 20.0
#: "al menos", "por lo menos", "au moins": at least
_AT_LEAST_BEFORE = frozenset({"al", "lo", "au"})


@dataclass(frozen=True, slots=True)
class Contradiction:
    """Two statements, one from each note, that cannot both be true."""

    first: str
    second: str
    #: what differs: quantity, date, clock, weekday, number, choice or polarity
    kind: str

    @property
    def reason(self) -> str:
        """One line a person understands: `"a" vs "b"`."""
        return f'"{self.first}" vs "{self.second}"'


@dataclass(frozen=True, slots=True)
class Statement:
    """One claim of a note, analysed once."""

    text: str
    key: frozenset[str]
    #: the key's words before stemming (what the contrast classes name)
    words: frozenset[str]
    quantities: tuple[Quantity, ...]
    nums: tuple[Num, ...]
    dates: tuple[tuple[int, int, int], ...]
    clocks: tuple[int, ...]
    weekdays: frozenset[int]
    choices: tuple[frozenset[str], ...]
    polarity: int
    #: the bound or span it states: upper ("under", "at most", "最多"), lower ("at least",
    #: "以上"), span ("between") or None
    bound: str | None = None


# --- statements ------------------------------------------------------------------------------


def _excerpt(text: str) -> str:
    text = " ".join(_MARKUP.sub("", text).split())
    if len(text) > EXCERPT_MAX_CHARS:
        text = text[: EXCERPT_MAX_CHARS - 1].rstrip() + "…"
    return text


def split_statements(text: str) -> list[str]:
    """Sentences, bullet items and "key: value" lines of a text, each one line."""
    out: list[str] = []
    in_code = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code or not line.strip():
            continue
        line = _BULLET.sub("", line)
        start = 0
        for match in _SENTENCE_END.finditer(line):
            if match.start() and line[match.start() - 1].isdigit() and _month_follows(line, match):
                continue  # "am 15. März"
            piece = line[start : match.start()].strip()
            if piece:
                out.append(piece[:_MAX_STATEMENT_CHARS])
            start = match.end()
        piece = line[start:].strip().rstrip(".")
        if piece:
            out.append(piece[:_MAX_STATEMENT_CHARS])
        if len(out) >= _MAX_STATEMENTS:
            break
    return out[:_MAX_STATEMENTS]


def _month_follows(line: str, match: re.Match[str]) -> bool:
    rest = line[match.end() :].split(maxsplit=1)
    return bool(rest) and rest[0].strip(",.").casefold() in MONTHS


def _language(tokens: list[Token]) -> str:
    votes: dict[str, int] = {}
    for t in tokens:
        lang = STEM_LANGUAGE_HINTS.get(t.text)
        if lang is not None:
            votes[lang] = votes.get(lang, 0) + 1
    return max(votes, key=lambda k: (votes[k], k == "english")) if votes else "english"


def _drop_past(tokens: list[Token]) -> list[Token]:
    """Only what the statement asserts now: after 'now', the target of a switch, no 'instead of'."""
    now = [i for i, t in enumerate(tokens) if t.role is Role.NOW]
    if now:
        tokens = tokens[now[-1] + 1 :]
    elif any(t.role is Role.HIST for t in tokens) or _used_to(tokens):
        return []
    if any(t.role is Role.SWITCH for t in tokens):
        start = next((i for i, t in enumerate(tokens) if t.text in _FROM_WORDS), None)
        if start is not None:
            stop = next(
                (
                    i
                    for i in range(start + 1, len(tokens))
                    if tokens[i].text in _TO_WORDS or tokens[i].role is Role.SWITCH
                ),
                None,
            )
            if stop is not None:
                tokens = [*tokens[:start], *tokens[stop:]]
    out: list[Token] = []
    skip = 0
    for i, t in enumerate(tokens):
        if (t.role is Role.INSTEAD and _instead(tokens, i)) or _contrast(tokens, i):
            skip = 4
            continue
        if skip:
            if t.kind == "punct":
                skip = 0
            else:
                skip -= 1
                continue
        out.append(t)
    return out


def _instead(tokens: list[Token], i: int) -> bool:
    """'instead of', 'rather than', 'statt', 'au lieu de', 'en lugar de', '而不是'."""
    word = tokens[i].text
    if word in ("lieu", "lugar", "vez"):
        return i > 0 and tokens[i - 1].text in ("au", "en")
    if word == "rather":
        return i + 1 < len(tokens) and tokens[i + 1].text == "than"
    return True


def _contrast(tokens: list[Token], i: int) -> bool:
    """A negation that only sets an alternative aside after a comma: "fills, not borders",
    "Tuesdays, never Mondays", "Postgres, nicht MySQL", "le mardi, pas le lundi". It says
    what is *not* chosen, as 'instead of' does, and flips nothing of the claim before it."""
    if tokens[i].role is not Role.NEG or i < 2 or tokens[i - 1].text not in (",", "，", "、"):
        return False
    # a claim before the comma, and a short alternative after it (not a clause of its own)
    rest = list(itertools.takewhile(lambda t: t.kind != "punct", tokens[i + 1 :]))
    return (
        any(t.kind == "word" for t in tokens[: i - 1])
        and 0 < len(rest) <= 4
        and not any(t.role in (Role.USE, Role.COPULA, Role.NEG) for t in rest)
    )


def _used_to(tokens: list[Token]) -> bool:
    return any(a.text == "used" and b.text == "to" for a, b in itertools.pairwise(tokens))


def _choice_after(tokens: list[Token], i: int) -> frozenset[str] | None:
    """Up to two content words right after tokens[i] (a use verb or 'switched … to')."""
    words: list[str] = []
    j = i + 1
    while j < len(tokens) and tokens[j].role is Role.STOP and not words and j < i + 3:
        j += 1
    while j < len(tokens) and len(words) < _CHOICE_MAX_WORDS:
        t = tokens[j]
        if t.used or t.kind not in ("word", "cjk") or t.role not in (None, Role.KEY):
            break
        words.append(t.text)
        t.used = True
        j += 1
    return frozenset(words) if words else None


def _clause_value(tokens: list[Token], i: int) -> frozenset[str] | None:
    """A short clause-final object of a copula or colon: 'is Alice', 'Owner: Bob', '是张伟'."""
    words: list[int] = []
    j = i + 1
    while j < len(tokens) and tokens[j].role is Role.TITLE:
        j += 1
    while j < len(tokens) and tokens[j].kind not in _CLAUSE_END:
        t = tokens[j]
        if t.used or t.kind not in ("word", "cjk") or t.role not in (None, Role.KEY):
            return None
        words.append(j)
        j += 1
        if len(words) > _CHOICE_MAX_WORDS:
            return None
    if not words:
        return None
    for k in words:
        tokens[k].used = True
    return frozenset(tokens[k].text for k in words)


def _choices(tokens: list[Token]) -> list[frozenset[str]]:
    found: list[frozenset[str]] = []
    for i, t in enumerate(tokens):
        value: frozenset[str] | None = None
        if t.role is Role.USE or (t.role is Role.SWITCH and t.kind == "cjk"):
            value = _choice_after(tokens, i)
        elif t.role is Role.RUN and i + 1 < len(tokens) and tokens[i + 1].text in (
            "on", "auf", "mit", "sur", "en", "with",
        ):  # fmt: skip
            value = _choice_after(tokens, i + 1)
        elif t.text in _TO_WORDS and any(x.role is Role.SWITCH for x in tokens):
            value = _choice_after(tokens, i)
        elif t.role is Role.COPULA or (t.kind == "punct" and t.text == ":"):
            value = _clause_value(tokens, i)
            if value is None and t.role is Role.COPULA and i > 0:
                value = _subject_name(tokens, i)
        elif t.text in _OWN_VERBS and i > 0:
            value = _subject_name(tokens, i)
        if value:
            found.append(value)
    return found


def _subject_name(tokens: list[Token], i: int) -> frozenset[str] | None:
    """'Alice is the release manager', 'Alice owns billing', '张伟负责发布': the subject."""
    if tokens[i].role is Role.COPULA and (
        i + 1 >= len(tokens) or tokens[i + 1].text not in _ARTICLES
    ):
        return None
    subject = [t for t in tokens[:i] if t.kind in ("word", "cjk")]
    if len(subject) != 1 or subject[0].used or subject[0].role not in (None, Role.KEY):
        return None
    if subject[0].kind == "word" and not subject[0].raw[:1].isupper():
        return None
    subject[0].used = True
    return frozenset({subject[0].text})


def _polarity(tokens: list[Token]) -> int:
    sign = 1
    for i, t in enumerate(tokens):
        # "is off", "turned off"; German "aus" ends many verbs ("tauschen ... aus", "fällt
        # aus"), so only "ist aus" says off
        copula = i > 0 and tokens[i - 1].role is Role.COPULA
        ends = i + 1 == len(tokens) or tokens[i + 1].kind == "punct"
        off = (t.text == "off" and (ends or copula)) or (t.text == "aus" and copula)
        if t.role in (Role.NEG, Role.NEGB) or off:
            sign = -sign
    return sign


def _stem(word: str, language: str) -> str:
    if not word.isascii() and not word.isalpha():
        return word
    if any("\u3400" <= ch <= "\u9fff" for ch in word):
        return word
    return str(stemmer(language).stemWord(word))


@lru_cache(maxsize=1 << 14)
def read_statement(text: str) -> Statement | None:
    """One statement analysed: None when it asserts nothing current (only past values)."""
    tokens = tokenize(text)
    language = _language(tokens)
    tokens = _drop_past(tokens)
    if not tokens:
        return None
    values = extract_values(tokens)
    choices = _choices(tokens)
    key: set[str] = set()
    words: set[str] = set()
    for t in tokens:
        if t.used or t.kind not in ("word", "cjk"):
            continue
        if t.role in (Role.USE, Role.RUN, Role.SWITCH):
            key.add("\x00use")
        elif t.role in (None, Role.KEY) and (len(t.text) > 1 or t.kind == "cjk"):
            key.add(_stem(t.text, language))
            words.add(t.text)
    stemmed = tuple(frozenset(_stem(w, language) for w in c) for c in choices)
    return Statement(
        text=_excerpt(text),
        key=frozenset(key),
        words=frozenset(words),
        quantities=tuple(values.quantities),
        nums=tuple(values.nums),
        dates=tuple(values.dates),
        clocks=tuple(values.clocks),
        weekdays=frozenset(values.weekdays),
        choices=stemmed,
        polarity=_polarity(tokens),
        bound=_bound(tokens),
    )


def _bound(tokens: list[Token]) -> str | None:
    """The bound the statement states, by its first bound word a value did not take ("60/min":
    a unit, not a minimum); "al menos", "au moins", "por lo menos" (at least) bound from
    below though "menos" and "moins" alone (less) bound from above."""
    for i, t in enumerate(tokens):
        # a CJK bound word a rate took ("每分钟最多100次") still bounds it
        if (t.used and t.kind != "cjk") or t.text not in BOUND_WORDS:
            continue
        if t.text in ("menos", "moins") and i and tokens[i - 1].text in _AT_LEAST_BEFORE:
            return "lower"
        return BOUND_WORDS[t.text]
    return None


# --- comparison ------------------------------------------------------------------------------


def _contrasting(only_a: frozenset[str], only_b: frozenset[str]) -> bool:
    return any(only_a & c and only_b & c for c in CONTRAST_CLASSES)


def _substituted(only_a: frozenset[str], only_b: frozenset[str]) -> bool:
    """One short word (or CJK word) swapped for another: a parallel statement about another
    subject ("API workers get 2 GB" vs "batch workers get 8 GB"), not a restatement."""
    only_a, only_b = only_a - VALUE_VERBS, only_b - VALUE_VERBS
    if not only_a or not only_b:
        return False
    if _word_count(only_a) != 1 or _word_count(only_b) != 1:
        return False
    # Ansprechpartner / Ansprechpartnerin, webhook / webhooks: one word, not two subjects
    return not any(x[:5] == y[:5] and len(x) >= 5 and len(y) >= 5 for x in only_a for y in only_b)


def _word_count(words: frozenset[str]) -> int:
    """Latin words count one each; CJK characters count one per two (a typical word)."""
    cjk = sum(1 for w in words if len(w) == 1 and "\u3400" <= w <= "\u9fff")
    return len(words) - cjk + (cjk + 1) // 2


def _same_choice(a: frozenset[str], b: frozenset[str]) -> bool:
    if a & b:
        return True
    return any(
        len(x) >= 4 and len(y) >= 4 and (x.startswith(y) or y.startswith(x)) for x in a for y in b
    )


def _quantities_clash(a: Statement, b: Statement, magnitude: float = math.inf) -> bool:
    """Some dimension both measure where no two of their values can be the same; with
    `magnitude`, only values within that factor of each other count."""
    for dim in {q.dim for q in a.quantities} & {q.dim for q in b.quantities}:
        qa = [q for q in a.quantities if q.dim == dim]
        qb = [q for q in b.quantities if q.dim == dim]
        if any(x.compatible(y) for x in qa for y in qb):
            continue
        if any(_within(x, y, magnitude) for x in qa for y in qb):
            return True
    return False


def _within(x: Quantity, y: Quantity, factor: float) -> bool:
    if math.isinf(factor):
        return True
    mid_x, mid_y = (x.lo + x.hi) / 2, (y.lo + y.hi) / 2
    if mid_x <= 0 or mid_y <= 0:
        return False
    return max(mid_x, mid_y) / min(mid_x, mid_y) <= factor


def _nums_clash(a: Statement, b: Statement) -> bool:
    return _nums_clash_one_way(a, b) or _nums_clash_one_way(b, a)


def _nums_clash_one_way(a: Statement, b: Statement) -> bool:
    """Some number of `a` has partners in `b` (numbers next to the same word), none equal."""
    if not a.nums or not b.nums:
        return False
    anchored = False
    for x in a.nums:
        partners = [y for y in b.nums if _anchored(x, y)]
        if partners:
            anchored = True
            if not any(x.compatible(y) for y in partners):
                return True
    if anchored:
        return False
    return not any(x.compatible(y) for x in a.nums for y in b.nums)


def _anchored(x: Num, y: Num) -> bool:
    """Whether two numbers stand next to the same word, or to one word's forms ("replica" /
    "replicas", "Postgres" / "PostgreSQL")."""
    if x.anchors & y.anchors:
        return True
    return any(
        min(len(p), len(q)) >= 4 and (p.startswith(q) or q.startswith(p))
        for p in x.anchors
        for q in y.anchors
    )


def _dates_clash(a: Statement, b: Statement) -> bool:
    if not a.dates or not b.dates:
        return False

    def same(x: tuple[int, int, int], y: tuple[int, int, int]) -> bool:
        return all(p == q or not p or not q for p, q in zip(x, y, strict=True))

    return not any(same(x, y) for x in a.dates for y in b.dates)


def _conflict(a: Statement, b: Statement, related: bool) -> tuple[str, float] | None:
    shared = a.key & b.key
    only_a, only_b = a.words - b.words, b.words - a.words
    if _contrasting(only_a, only_b) or _substituted(only_a, only_b):
        return None
    union = a.key | b.key
    jaccard = len(shared) / len(union) if union else 0.0
    cover = len(shared) / min(len(a.key), len(b.key)) if shared else 0.0
    if not shared or (jaccard < 0.5 and not (cover == 1.0 and len(shared) >= 2)):
        # Notes close in meaning say one thing in other words: their typed values still
        # clash, though their words differ ("backup at 02:00" / "snapshot kicks off at 3").
        return _typed_conflict(a, b, jaccard - 1.0) if related else None
    clash = None if _within_bound(a, b) else _value_clash(a, b)
    if a.polarity != b.polarity:
        # "runs at 2" vs "does not run at 3 on Sundays": a negation qualifying another
        # value flips nothing both claim; the same claim negated is a clash
        return ("polarity", jaccard) if clash is None and jaccard >= 0.75 else None
    return (clash, jaccard) if clash is not None else None


def _value_clash(a: Statement, b: Statement) -> str | None:
    """The kind of typed value or choice on which two statements of one key differ."""
    if _quantities_clash(a, b):
        return "quantity"
    if _dates_clash(a, b):
        return "date"
    if a.clocks and b.clocks and not set(a.clocks) & set(b.clocks):
        return "clock"
    if a.weekdays and b.weekdays and not a.weekdays & b.weekdays:
        return "weekday"
    if _nums_clash(a, b):
        return "number"
    if (
        a.choices
        and b.choices
        and not any(_same_choice(x, y) for x in a.choices for y in b.choices)
    ):
        return "choice"
    return None


def _typed_conflict(a: Statement, b: Statement, jaccard: float) -> tuple[str, float] | None:
    """A clash of two statements whose words differ, in notes close in meaning (`jaccard`
    comes less 1: such a clash ranks below any found by shared words): only values
    that say what they measure count — a quantity of one dimension and a like magnitude
    (30 days vs two weeks; not 30 days vs 10 seconds, which measure different things),
    a time of day, a weekday, a date, a version of the same major number, or numbers next
    to the same word. Choices and negations need shared words (the ordinary path)."""
    if a.polarity != b.polarity:
        return None  # "runs at 2" vs "does not run at 3": not one claim restated
    if _within_bound(a, b):
        return None  # a limit and a value within it ("under 300 ms" vs "about 180 ms")
    if _quantities_clash(a, b, _MAGNITUDE):
        return "quantity", jaccard
    if _dates_clash(a, b):
        return "date", jaccard
    if a.clocks and b.clocks and not set(a.clocks) & set(b.clocks):
        return "clock", jaccard
    if a.weekdays and b.weekdays and not a.weekdays & b.weekdays:
        return "weekday", jaccard
    if _versions_clash(a, b) or _anchored_nums_clash(a, b):
        return "number", jaccard
    return None


def _within_bound(a: Statement, b: Statement) -> bool:
    """Whether one of the two states a bound or span ("under 300 ms", "at least 12",
    "between 2 and 5") and the other, stating none, has values like its own that all lie
    on the allowed side: a limit and a value within it, not two values of one thing."""
    if (a.bound is None) == (b.bound is None):
        return False
    bound, other = (a, b) if a.bound is not None else (b, a)
    spans: list[tuple[list[float], list[tuple[float, float]]]] = []
    for dim in {q.dim for q in other.quantities}:
        limits = [v for q in bound.quantities if q.dim == dim for v in (q.lo, q.hi)]
        if limits:
            spans.append((limits, [(q.lo, q.hi) for q in other.quantities if q.dim == dim]))
    if bound.nums and other.nums:
        limits = [v for y in bound.nums for v in (y.lo, y.hi)]
        spans.append((limits, [(x.lo, x.hi) for x in other.nums]))
    if not spans:
        return False
    for limits, values in spans:
        low, high = min(limits), max(limits)
        for lo, hi in values:
            if bound.bound == "upper" and hi > high:
                return False
            if bound.bound == "lower" and lo < low:
                return False
            if bound.bound == "span" and (lo < low or hi > high):
                return False  # "either" holds any value: which side it bounds is unsaid
    return True


def _echoed(x: Statement, others: list[Statement], kind: str) -> bool:
    """Whether some statement of `others` holds `x`'s value of the clashing `kind` too (the
    note restates it: "backup at 02:00, report at 07:00" next to "backup at 02:00")."""
    for z in others:
        if kind == "clock" and set(x.clocks) & set(z.clocks):
            return True
        if kind == "weekday" and x.weekdays & z.weekdays:
            return True
        if kind == "date" and x.dates and z.dates and not _dates_clash(x, z):
            return True
        if kind == "quantity" and any(
            q.dim == r.dim and q.compatible(r) for q in x.quantities for r in z.quantities
        ):
            return True
        if kind == "number" and any(m.compatible(n) for m in x.nums for n in z.nums):
            return True
    return False


def _versions_clash(a: Statement, b: Statement) -> bool:
    """Versions (two parts or more) of the same major number, none equal: 3.11 vs 3.12."""
    va = [x for x in a.nums if len(x.parts) >= 2]
    vb = [y for y in b.nums if len(y.parts) >= 2]
    same_major = [(x, y) for x in va for y in vb if x.parts[0] == y.parts[0]]
    return bool(same_major) and not any(x.compatible(y) for x in va for y in vb)


def _anchored_nums_clash(a: Statement, b: Statement) -> bool:
    for x, y in ((a, b), (b, a)):
        for num in x.nums:
            partners = [other for other in y.nums if _anchored(num, other)]
            if partners and not any(num.compatible(other) for other in partners):
                return True
    return False


def _statements(note: Note | str) -> list[Statement]:
    if isinstance(note, Note):
        texts = [note.summary, *split_statements(note.body)]
    else:
        texts = split_statements(note)
    out: list[Statement] = []
    for text in texts:
        statement = read_statement(text)
        if statement is not None and (statement.key or _has_values(statement)):
            out.append(statement)  # "Daily: 9:30" says when, though no word says what
    return out


def _has_values(statement: Statement) -> bool:
    return bool(statement.quantities or statement.dates or statement.clocks or statement.weekdays)


def find_contradiction(
    a: Note | str, b: Note | str, *, related: bool = False
) -> Contradiction | None:
    """The clearest pair of conflicting statements between two same-topic notes, or None.

    A note is a `Note` (its summary and body are read) or plain text. Notes where one
    supersedes the other never contradict: the newer one replaced the older on purpose.
    `related`: the notes are close in meaning (by their vectors), so statements in other
    words are compared by their typed values too (`_typed_conflict`).
    """
    if (
        isinstance(a, Note)
        and isinstance(b, Note)
        and (a.id in b.supersedes or b.id in a.supersedes)
    ):
        return None
    best: tuple[float, Contradiction] | None = None
    mine, theirs = _statements(a), _statements(b)
    for x in mine:
        for y in theirs:
            found = _conflict(x, y, related)
            if (
                found is not None
                and found[1] < 0
                and (_echoed(x, theirs, found[0]) or _echoed(y, mine, found[0]))
            ):
                continue  # a clash in other words, but the other note states this value too
            if found is not None and (best is None or found[1] > best[0]):
                best = (found[1], Contradiction(x.text, y.text, found[0]))
    return best[1] if best else None
