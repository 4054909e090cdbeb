"""Passwords typed with spaces in them: quoted ("„Mare tulp 355&“"), or filling the rest
of their line after a connector ("Lotus panda 112-")."""

from __future__ import annotations

import re

from .lexicon import CJK, CJK_LETTER_RE
from .values import class_count, strong_password

__all__ = ["spaced_password"]


def _set(words: str) -> frozenset[str]:
    """A set from whitespace-separated words; keeps long vocabularies readable."""
    return frozenset(words.split())


# A password typed with spaces: in quotes, or the rest of its line after a colon.
_CLOSING_QUOTES = {
    '"': '"',
    "'": "'",
    "“": "”“",
    "„": "“”",
    "‚": "‘’",
    "‘": "’",
    "«": "»",
    "‹": "›",
    "「": "」",
    "『": "』",
    "`": "`",
}
_MAX_SPACED = 48
_REST_OF_LINE_RE = re.compile(
    f"([^\\s{CJK}\"'`“”„«»]+(?: [^\\s{CJK}\"'`“”„«»]+){{1,3}})[ \\t]*\\r?(?:\\n|$)"
)
_SENTENCE_WORDS = _set(
    """
    at least most min max minimum maximum chars characters letters digits symbols long and or
    the a an of to in with from see ask is are was not no my our your this that same as
    mindestens zeichen und oder der die das mit von ist nicht au moins caractères et ou le la
    les de avec al menos caracteres y o el los con almeno caratteri e pelo menos ou com ten
    minste tekens en of het минимум символов и или не co najmniej znaków lub nie en az
    karakter ve veya must should contain contains include includes enter use have has need
    needs digit symbol symbols letter number numbers siehe muss enthält enthalten voir doit
    contenir ver debe tener vedi deve contenere veja conter zie moet bevatten см должен
    содержать patrz musi zawierać bkz içermeli
    """
)


def spaced_password(text: str, wstart: int, *, after: bool) -> tuple[int, int] | None:
    """A password with spaces after a connector: quoted ("„Mare tulp 355&“"), or unquoted
    up to the end of its line when it mixes all four character classes ("Lotus panda 112-").
    """
    i = wstart if text[wstart] in "'‘‚" else wstart - 1  # "'" is inside a word's characters
    if i >= 1 and text[i] == " " and text[i - 1] in "«‹":
        i -= 1  # French quotes stand apart from their content: « … »
    opener = text[i] if i >= 0 else ""
    closers = _CLOSING_QUOTES.get(opener)
    if closers is None and not (after and text[wstart : wstart + 1].isalpha()):
        return None  # unquoted, the value starts with a word: "Lotus panda 112-"
    if closers is not None:
        lo = i + 1
        hi = lo
        limit = min(len(text), lo + _MAX_SPACED)
        while hi < limit and text[hi] not in closers and text[hi] != "\n":
            hi += 1
        if hi >= limit or text[hi] not in closers:
            return None
        value = text[lo:hi].strip()
        if " " not in value or not _spaced_value(value, 3):
            return None
        vstart = text.index(value, lo)
        return vstart, vstart + len(value)
    m = _REST_OF_LINE_RE.match(text, wstart, min(len(text), wstart + _MAX_SPACED + 1))
    if m is None or m.group(1).count(" ") < 2 or not _spaced_value(m.group(1), 4):
        return None
    return m.start(1), m.end(1)


def _spaced_value(value: str, classes: int) -> bool:
    words = value.split()
    if not 2 <= len(words) <= 5 or any(w in ("/", "|", "-", "–") for w in words):
        return False
    if any(w.lower().strip(".,;:!?") in _SENTENCE_WORDS for w in words):
        return False  # "at least 12 chars", "see the vault": words about a password
    joined = "".join(words)
    if CJK_LETTER_RE.search(joined):
        return False
    return (
        any(ch.isdigit() for ch in joined)
        and class_count(joined) >= classes
        and strong_password(joined)
    )
