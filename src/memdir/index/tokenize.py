"""Text to search terms: normalised, stemmed (English/German) words and CJK character pairs.

The stdlib `sqlite3` cannot register FTS5 tokenizers, so tokenising happens here and
the FTS5 table (``tokenize='unicode61 remove_diacritics 0'``) receives space-separated
terms that it passes through unchanged. Notes and queries go through the same code:
this module is memdir's one definition of a word (search, recall and the duplicate flag
all use it). A query is scanned once, by `query_words`; `memdir.index.query` builds
the analysed query from that scan.

- Text is NFKC-normalised and case-folded. A word is a run of letters and digits;
  ``_`` and every other punctuation mark separate words (``max_tokens`` → ``max``,
  ``token``). An apostrophe between letters joins (``don't`` → ``dont``, ``O'Brien``
  → ``obrien``; the English stemmer first drops a possessive ``'s``). ``’`` and ``ʼ``
  count as apostrophes. Numbers are words: ``2024``, ``v2``; ``3.14`` → ``3``, ``14``.
- Han, Hiragana, Katakana and Hangul runs become overlapping character pairs
  (``机器学习`` → ``机器 器学 学习``); a single character stays as itself.
- Language is decided per text by counting words of small English and German
  stop-word lists (and words with ä/ö/ü/ß). A German text gets German Snowball stems;
  any other text gets English stems, except that a word with an umlaut is German.
  Queries use the same rule for their *primary* stem and add the other language's
  stem as an alternative, so a short query finds notes in either language.
- Every emitted term is one unicode61 token that unicode61 does not change: the few
  characters that Python counts as letters but SQLite does not (its Unicode tables are
  older) are treated as separators, learnt once per character from SQLite itself.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import Stemmer

from memdir.core.links import LINK_PATTERN

__all__ = [
    "DE_STOP_WORDS",
    "EN_STOP_WORDS",
    "FTS5_TOKENIZE",
    "TOKENIZER_VERSION",
    "QueryTerm",
    "QueryWord",
    "detect_language",
    "index_terms",
    "note_recall_terms",
    "query_terms",
    "query_words",
    "recall_terms",
    "stemmer",
]

#: Changes whenever the same text would give different terms: store it with the index.
TOKENIZER_VERSION = "1"

#: The FTS5 tokenizer declaration these terms are made for (they pass it unchanged).
FTS5_TOKENIZE = "unicode61 remove_diacritics 0"

Language = Literal["en", "de"]

# --- stop-words ------------------------------------------------------------------------------
# Function words only (articles, pronouns, auxiliaries, prepositions, conjunctions,
# negation): never a domain word: "may" (the month), "us", "up" and "down" stay searchable.


def _word_set(words: str) -> frozenset[str]:
    return frozenset(w.casefold() for w in words.split())


EN_STOP_WORDS = _word_set(
    """
    a an the this that these those some any each every all both either neither
    i me my mine myself we our ours ourselves you your yours yourself yourselves
    he him his himself she her hers herself it its itself they them their theirs
    themselves what which who whom whose whatever whoever
    am is are was were be been being have has had having do does did doing
    will would shall should can could might must ought
    i'm i've i'd i'll you're you've you'd you'll he's he'd he'll she's she'd she'll
    it's we're we've we'd we'll they're they've they'd they'll that's there's here's
    what's who's let's isn't aren't wasn't weren't hasn't haven't hadn't doesn't
    don't didn't won't wouldn't can't cannot couldn't shouldn't mustn't
    about above across after against along among around at before behind below
    beneath beside besides between beyond by during except for from in inside into
    near of on onto per since than through throughout to toward towards upon via
    with within without
    and but or nor so yet if then else because although though while whereas
    unless until whether as also not no how when where why here there
    """
)

DE_STOP_WORDS = _word_set(
    """
    der die das den dem des ein eine einer eines einem einen
    ich du er sie es wir ihr mich dich sich uns euch mir dir ihm ihn ihnen
    mein meine meiner meines meinem meinen dein deine deiner deinen
    sein seine seiner seines seinem seinen ihre ihrer ihres ihrem ihren
    unser unsere euer eure dieser diese dieses diesem diesen jener jene
    welcher welche welches man wer was wem wen
    bin bist ist sind seid war warst waren wart gewesen
    habe hast hat haben habt hatte hatten werde wirst wird werden werdet
    wurde wurden worden kann kannst können konnte konnten muss musst müssen musste
    soll sollen sollte will willst wollen wollte darf dürfen würde würden
    an auf aus bei mit nach von zu vor über unter durch für gegen ohne um
    zwischen seit bis hinter neben am im zum zur vom beim ins
    und oder aber denn sondern dass ob wenn weil als wie da damit
    nicht kein keine auch noch schon nur so doch ja nein hier dort dann
    """
)

# German function words that are also ordinary English words ("the processes die",
# "MIT licence"): stop-words only in a text detected as German, never evidence for it.
_HOMOGRAPHS = frozenset({"die", "war", "hat", "bin", "den", "man", "mit"})
_EN_EVIDENCE = EN_STOP_WORDS - DE_STOP_WORDS
_DE_EVIDENCE = DE_STOP_WORDS - EN_STOP_WORDS - _HOMOGRAPHS
_STOP_DE_TEXT = DE_STOP_WORDS | EN_STOP_WORDS
_STOP_OTHER_TEXT = EN_STOP_WORDS | (DE_STOP_WORDS - _HOMOGRAPHS)

# --- characters ------------------------------------------------------------------------------

_CJK = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u2e80-\u2fdf"  # CJK and Kangxi radicals
    "\u3005\u3007\u3021-\u3029\u3038-\u303b"  # 々 〇, Hangzhou numerals
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3100-\u318f"  # Bopomofo, Hangul compatibility Jamo
    "\u31a0-\u31bf\u31f0-\u31ff"  # Bopomofo extended, Katakana phonetic extensions
    "\u3400-\u4dbf\u4e00-\u9fff"  # CJK ideographs (extension A, unified)
    "\ua960-\ua97f\uac00-\ud7ff"  # Hangul Jamo extended, syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uffdc"  # half-width Katakana and Hangul
    "\U0001b000-\U0001b16f"  # Kana supplement and extensions
    "\U00020000-\U0003ffff"  # CJK ideographs, supplementary planes
)
_WORD = rf"[^\W_{_CJK}]"
#: A CJK run, or a word of letters/digits whose parts may be joined by apostrophes.
_TOKEN_RE = re.compile(rf"([{_CJK}]+)|({_WORD}+(?:'{_WORD}+)*)")
_NON_WORD_RE = re.compile(r"[\W_]+")
_WORD_CHAR_RE = re.compile(r"[^\W_]")
_UMLAUT_RE = re.compile("[äöü]")

# Characters that need no translation: ASCII (Python and unicode61 agree on it) and
# every non-ASCII character learnt to be stable. `_REMAP` holds the rest, as a
# `str.translate` table: apostrophe look-alikes → "'", unstable letters → " ".
_SAFE: set[str] = {chr(i) for i in range(128)}
_REMAP: dict[int, str] = {0x2019: "'", 0x02BC: "'"}
_REMAP_CHARS: set[str] = {chr(c) for c in _REMAP}
_learn_lock = threading.Lock()
_probe_db: sqlite3.Connection | None = None


def _probe(chars: Sequence[str]) -> dict[str, str] | None:
    """What unicode61 makes of each character on its own (absent: a separator).

    None when this SQLite has no FTS5 (then the index cannot exist either).
    """
    global _probe_db
    try:
        if _probe_db is None:
            db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            db.execute(f"CREATE VIRTUAL TABLE p USING fts5(c, tokenize='{FTS5_TOKENIZE}')")
            db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(p, 'instance')")
            _probe_db = db
        _probe_db.execute("BEGIN")
        try:
            _probe_db.executemany("INSERT INTO p(rowid, c) VALUES (?, ?)", enumerate(chars))
            found = {chars[doc]: term for term, doc in _probe_db.execute("SELECT term, doc FROM v")}
        finally:
            _probe_db.execute("ROLLBACK")
    except sqlite3.Error:
        return None
    return found


def _learn(chars: Iterable[str]) -> None:
    """Classify characters not seen before (only letters/digits can reach a term)."""
    with _learn_lock:
        todo = [c for c in chars if c not in _SAFE and c not in _REMAP_CHARS]
        letters = [c for c in todo if _WORD_CHAR_RE.match(c)]
        found = _probe(letters) if letters else {}
        for c in todo:
            if found is None or c not in letters or found.get(c) == c:
                _SAFE.add(c)
            else:  # SQLite splits or folds it: treat it as a separator on both sides
                _REMAP[ord(c)] = " "
                _REMAP_CHARS.add(c)


def _normalize(text: str) -> str:
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    chars = set(text)
    if not _SAFE.issuperset(chars):
        unknown = chars - _SAFE - _REMAP_CHARS
        if unknown:
            _learn(unknown)
        if not _REMAP_CHARS.isdisjoint(chars):
            text = text.translate(_REMAP)
    return text


# --- stems -----------------------------------------------------------------------------------

_stemmers = threading.local()  # Snowball stemmer objects are not safe to share between threads


def stemmer(language: str) -> Stemmer.Stemmer:
    """This thread's Snowball stemmer for `language` (made once per thread)."""
    found = getattr(_stemmers, language, None)
    if found is None:
        found = Stemmer.Stemmer(language)
        setattr(_stemmers, language, found)
    return found


@lru_cache(maxsize=1 << 16)
def _stem_en(word: str) -> str:
    if word.isdigit():
        return word
    stem = str(stemmer("english").stemWord(word))  # drops a possessive 's itself
    return stem.replace("'", "") or word.replace("'", "")


@lru_cache(maxsize=1 << 16)
def _stem_de(word: str) -> str:
    word = word.replace("'", "")
    if word.isdigit():
        return word
    return str(stemmer("german").stemWord(word)) or word


def _bigrams(run: str) -> list[str]:
    if len(run) < 3:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


# --- scanning --------------------------------------------------------------------------------


def _scan(text: str) -> tuple[list[tuple[str, str]], Language | None]:
    """(CJK run, word) pairs in order — exactly one of each pair is set — and the language."""
    norm = _normalize(text)
    pieces: list[tuple[str, str]] = _TOKEN_RE.findall(norm)
    en = de = 0
    for _, word in pieces:
        if word in _EN_EVIDENCE:
            en += 1
        elif word in _DE_EVIDENCE or (not word.isascii() and _UMLAUT_RE.search(word)):
            de += 1
    if not text.isascii():
        de += text.count("ß") + text.count("ẞ")  # case folding turned them into "ss"
    if de >= 2 and de > en:
        return pieces, "de"
    if en >= 2 and en > de:
        return pieces, "en"
    return pieces, None


def _cjk_units(run: str) -> list[str]:
    if run.isalnum():
        return _bigrams(run)
    # CJK blocks hold a few punctuation marks (・, ゛): they separate.
    return [b for part in _NON_WORD_RE.split(run) if part for b in _bigrams(part)]


def detect_language(text: str) -> Language | None:
    """ "de" or "en" when the stop-word evidence is clear, None for short or undecided text."""
    return _scan(text)[1]


def index_terms(text: str) -> list[str]:
    """Every term of `text` in order, stop-words included: what FTS5 stores for a note."""
    pieces, language = _scan(text)
    stem = _stem_de if language == "de" else _stem_en
    german = language == "de"
    out: list[str] = []
    for run, word in pieces:
        if run:
            out.extend(_cjk_units(run))
        elif german or word.isascii() or not _UMLAUT_RE.search(word):
            out.append(stem(word))
        else:
            out.append(_stem_de(word))
    return out


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One query word (or CJK pair) and the stems that match it."""

    #: Stems that match this word, deduplicated; the first is what index_terms emits.
    alternatives: tuple[str, ...]
    is_stop: bool
    #: The word as typed, normalised and lower-cased.
    surface: str
    #: True for a CJK character pair (or a lone CJK character), False for a word.
    cjk: bool = False


@dataclass(frozen=True, slots=True)
class QueryWord:
    """A `QueryTerm` with its English and German stems (the variants of a phrase)."""

    term: QueryTerm
    english: str
    german: str


def query_words(text: str) -> list[QueryWord]:
    """One QueryWord per word or CJK pair of a query, in order (stop-words flagged, not dropped).

    This is the one query-side scan of a text; `memdir.index.query.analyse` builds
    everything a search needs from it.
    """
    pieces, language = _scan(text)
    stops = _STOP_DE_TEXT if language == "de" else _STOP_OTHER_TEXT
    words: list[QueryWord] = []
    for run, word in pieces:
        if run:
            for unit in _cjk_units(run):
                words.append(QueryWord(QueryTerm((unit,), False, unit, True), unit, unit))
            continue
        en, de = _stem_en(word), _stem_de(word)
        german_first = language == "de" or (not word.isascii() and _UMLAUT_RE.search(word))
        primary, other = (de, en) if german_first else (en, de)
        if primary == other or language == "en":
            # A query recognised as English keeps only the stem index_terms would store:
            # German stems of English words only add noise.
            alternatives: tuple[str, ...] = (primary,)
        else:
            alternatives = (primary, other)
        words.append(QueryWord(QueryTerm(alternatives, word in stops, word), en, de))
    return words


def query_terms(text: str) -> list[QueryTerm]:
    """The QueryTerms of `query_words` (for texts that need no phrase variants: notes, recall)."""
    return [w.term for w in query_words(text)]


def recall_terms(text: str) -> frozenset[str]:
    """The terms recall matches a note's text by: every stem alternative of its words,
    stop words and lone ASCII characters left out."""
    return frozenset(
        alt
        for q in query_terms(text)
        if not q.is_stop and (len(q.surface) > 1 or not q.surface.isascii())
        for alt in q.alternatives
    )


def note_recall_terms(
    summary: str, tags: Sequence[str], body: str
) -> tuple[frozenset[str], frozenset[str]]:
    """(head, body) terms of a note for recall: the head holds the summary and the tags,
    the body its text with `[[links]]` left out, less what the head holds."""
    head = recall_terms(summary + "\n" + "\n".join(tags))
    return head, recall_terms(LINK_PATTERN.sub(" ", body)) - head
