"""What an agent is shown from memory: the prompt index (§4.1) and per-message recall (§4.2).

Pure: notes in, text out; no I/O. `Recaller` keeps the terms of every note it has
seen, keyed by (scope, id, content hash), so a repeated call only analyses the message,
once (`memdir.index.query.analyse`).

Scoring. The message's analysed terms (stems in English and German, CJK character
pairs, from the tokenizer that indexes notes); stop-words and one-letter words are dropped
and a repeated term counts once. Each remaining term t gets a weight

    w(t) = min(1.5, ln((N + 20) / (df(t) + 1)) / ln 21) × (0.35 if t is a weak word)

where N is the number of notes recall may see and df(t) how many of them hold t
anywhere. A term held by one note of about 25 weighs about 1.0; by a fifth of the notes
about 0.5; the +20 keeps a small store from treating every word as rare. Weak words are
conversational words that any message may carry ("please", "use", "heute", "可以").
A CJK pair that continues the previous pair of the same run (数据, 据库 of 数据库) counts
0.25 of its weight, so a Chinese word weighs about what one English word does.

A note's score is the sum over the message's terms of 1.0 × w(t) when t is in the
note's summary or tags, else 0.3 × w(t) when t is in its body. A note is attached
only when some term hits its summary or tags, and only from `min_score` (1.2) up:
two distinctive terms in summary or tags (2 × ~1.0), or one very distinctive term
(w ≥ 0.9) with body support; one ordinary word in common is never enough. A short
message is held to less: a note scoring `COVERED_SHARE` (0.8) of the message's whole
term weight is attached from `COVERED_FLOOR` × `min_score` (0.48) up, so "deploys?" or "When are
deploys?" recall the note "Deploys go out on Tuesdays" in a store of three notes,
where "deploys" alone weighs 0.8. A term no note holds weighs most, so a message about
something the notes never mention is not covered by any of them.
"""

from __future__ import annotations

import math
import operator
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from memdir.config import RecallSettings
from memdir.core import Note, Scope
from memdir.guidance import EMPTY_INDEX
from memdir.index.query import AnalysedQuery, analyse
from memdir.index.stored import StoredTerms
from memdir.index.tokenize import note_recall_terms, query_terms

__all__ = [
    "BODY_WEIGHT",
    "Recall",
    "Recaller",
    "Scored",
    "prompt_index",
    "recalled_ids",
    "render_recall",
    "superseded_ids",
]


@dataclass(frozen=True, slots=True)
class Recall:
    """What recall attaches to one user message; empty (falsy `count`) in the normal case."""

    #: The ``<recalled-memory>…</recalled-memory>`` text ("" when nothing is attached).
    block: str = ""
    note_ids: tuple[str, ...] = ()
    #: What the host stores on the message, so a resumed session does not attach them again.
    metadata: dict[str, Any] = field(default_factory=dict)
    count: int = 0
    #: What a frontend shows: "recalled N memories" ("" when nothing is attached).
    label: str = ""


#: Weight of a body hit relative to a summary or tag hit.
BODY_WEIGHT = 0.3
#: Weight of a CJK pair continuing a matched pair of the same run.
CJK_CONTINUATION = 0.25
WEAK_WEIGHT = 0.35
#: A note holding this share of a message's term weight (summary and tags counting in
#: full) is attached below `min_score`, never below `COVERED_FLOOR` × `min_score`.
COVERED_SHARE = 0.8
COVERED_FLOOR = 0.4
#: `recall.minScore`'s default.
DEFAULT_MIN_SCORE = 1.2
MAX_TERM_WEIGHT = 1.5
_SMOOTHING = 20
_LINKED_PER_NOTE = 5
_OPEN = "<recalled-memory>"
_CLOSE = "</recalled-memory>"
_PREAMBLE = (
    "Notes from memory that may bear on this message (recalled automatically; "
    "they may be out of date — check before relying on them):"
)

# Words any conversation carries: a match on them says nothing about a note.
_WEAK_WORDS = """
    use using used please thanks thank ok okay hi hello hey yes yeah sure just really very
    much many more most good great nice fine new make get go going want need like know think
    see look let help thing things stuff way time today now still again something anything
    everything actually maybe probably quick quickly little bit lot work try done tell show
    give take put keep one two first last next other same well right back able
    bitte danke hallo ja okay gut neu neue neuen machen mach mal jetzt heute immer etwas
    alles ganz sehr viel viele mehr gerne schnell kurz einfach brauche brauchen geht gehen
    sagen zeig zeigen hilf helfen ding sache sachen arbeit arbeiten eigentlich vielleicht
    gibt gib geben nochmal wieder
    我们 你们 他们 什么 怎么 这个 那个 一个 一下 可以 没有 不是 就是 现在 今天 帮我 请问
    谢谢 你好 需要 知道 觉得 还是 已经 因为 所以 但是 如果 然后 这样 那样 时候 问题 东西
    一些 有点 应该 为什 么样 一起 这里 那里 的话 好的 是不 不要 我想 想要 看看 一点
"""


@cache
def _weak_stems() -> frozenset[str]:
    return frozenset(
        alt for word in _WEAK_WORDS.split() for q in query_terms(word) for alt in q.alternatives
    )


# -- the prompt index (§4.1) -----------------------------------------------------------------


def superseded_ids(notes: Iterable[Note]) -> frozenset[str]:
    """Ids that some note lists in its `supersedes` (a note never supersedes itself)."""
    return frozenset(s for n in notes for s in n.supersedes if s != n.id)


def _index_line(note: Note) -> str:
    kind = f" ({note.type.value})" if note.type is not None else ""
    return f"- {note.summary} [[{note.id}]]{kind}"


def prompt_index(notes: Sequence[Note], index_chars: int) -> str:
    """One line per note, most recently updated first, within `index_chars`; the rest counted.

    Private and superseded notes are left out. With nothing to list, `EMPTY_INDEX`.
    """
    gone = superseded_ids(notes)
    shown = sorted(
        (n for n in notes if not n.private and n.id not in gone),
        key=lambda n: (-n.updated_at, n.id),
    )
    if not shown:
        return EMPTY_INDEX
    lines: list[str] = []
    used = 0
    for note in shown:
        line = _index_line(note)
        cost = len(line) + (1 if lines else 0)
        if used + cost > index_chars:
            break
        lines.append(line)
        used += cost
    rest = len(shown) - len(lines)
    if rest:
        lines.append(f"and {rest} more — use the memory tool to search them")
    return "\n".join(lines)


# -- history ----------------------------------------------------------------------------------


def recalled_ids(history: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """Ids attached to messages still in the conversation (§4.2).

    Read from each message's ``metadata["memdir"]["recalled"]``. A message marked
    ``{"memdir": {"compacted": true}}`` releases its own ids and those of every message
    before it: compaction discards the start of a conversation. Malformed entries are
    skipped.
    """
    held: set[str] = set()
    for message in history:
        meta = message.get("metadata") if isinstance(message, Mapping) else None
        ours = meta.get("memdir") if isinstance(meta, Mapping) else None
        if not isinstance(ours, Mapping):
            continue
        if ours.get("compacted") is True:
            held.clear()
            continue
        ids = ours.get("recalled")
        if isinstance(ids, list | tuple):
            held.update(i for i in ids if isinstance(i, str))
    return frozenset(held)


# -- scoring ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scored:
    """A note that passed the threshold, with its score."""

    note: Note
    score: float


@dataclass(slots=True)
class _Entry:
    #: None for a note known by its stored terms only (read from its file if chosen).
    note: Note | None
    hash: str
    head: frozenset[str]
    body: frozenset[str]
    note_id: str = ""
    updated_at: int = 0

    def __post_init__(self) -> None:
        if self.note is not None:
            self.note_id, self.updated_at = self.note.id, self.note.updated_at


@dataclass(frozen=True, slots=True)
class _Term:
    alternatives: tuple[str, ...]
    weak: bool
    #: True for a CJK pair that overlaps the pair before it in the message.
    continues: bool


def _message_terms(message: AnalysedQuery) -> list[_Term]:
    weak = _weak_stems()
    out: list[_Term] = []
    seen: set[tuple[str, ...]] = set()
    prev = ""
    for q in message.terms:
        surface = q.surface
        cjk = q.cjk and len(surface) == 2  # a pair, not a lone character
        continues = cjk and len(prev) == 2 and prev[1] == surface[0]
        prev = surface if cjk else ""
        if q.is_stop or (len(surface) < 2 and surface.isascii()) or q.alternatives in seen:
            continue
        seen.add(q.alternatives)
        is_weak = surface in weak or q.alternatives[0] in weak
        out.append(_Term(q.alternatives, is_weak, continues))
    return out


_Key = tuple[Scope | None, str]
#: Scored notes read (from their files, when stored) for one block: more never fit it.
_MATERIALISED = 50


class Recaller:
    """Scores messages against notes; keeps each note's terms until the note changes.

    Thread-safe; one instance per `Memory`.
    """

    def __init__(self) -> None:
        self._entries: dict[_Key, _Entry] = {}
        #: Reads a stored entry's note from its file (see `recall_stored`).
        self._loader: Callable[[Scope | None, str], Note | None] | None = None
        #: The notes of the last `_sync`, in order: the same objects again need no look.
        self._synced: list[Note] = []
        self._df: dict[str, int] = {}
        self._head_postings: dict[str, set[_Key]] = {}
        self._gone: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    # -- the term cache

    def _add(self, key: _Key, entry: _Entry) -> None:
        self._entries[key] = entry
        for term in entry.head | entry.body:
            self._df[term] = self._df.get(term, 0) + 1
        for term in entry.head:
            self._head_postings.setdefault(term, set()).add(key)

    def _remove(self, key: _Key) -> None:
        entry = self._entries.pop(key)
        for term in entry.head | entry.body:
            left = self._df[term] - 1
            if left:
                self._df[term] = left
            else:
                del self._df[term]
        for term in entry.head:
            keys = self._head_postings[term]
            keys.discard(key)
            if not keys:
                del self._head_postings[term]

    def _sync(self, notes: Iterable[Note]) -> None:
        """Bring the cache in line with `notes`: only new or changed notes are tokenised."""
        given = notes if isinstance(notes, list) else list(notes)
        last = self._synced
        if len(given) == len(last) and all(map(operator.is_, given, last)):
            return  # the very notes of the last call (the store hands back the same objects)
        self._synced = []
        self._sync_all(given)
        self._synced = given.copy()

    def _sync_all(self, notes: list[Note]) -> None:
        seen: set[_Key] = set()
        gone: set[str] = set()
        entries = self._entries
        for note in notes:
            if note.supersedes:
                gone.update(s for s in note.supersedes if s != note.id)
            if note.private:
                continue
            key = (note.scope, note.id)
            seen.add(key)
            entry = entries.get(key)
            if entry is not None:
                if entry.note is note:  # the store hands back the same object until it changes
                    continue
                note_hash = note.hash
                if entry.hash == note_hash:
                    entry.note, entry.updated_at = note, note.updated_at
                    continue
                self._remove(key)
            else:
                note_hash = note.hash
            head, body = note_recall_terms(note.summary, note.tags, note.body)
            self._add(key, _Entry(note, note_hash, head, body))
        if len(seen) != len(entries):
            for key in [k for k in entries if k not in seen]:
                self._remove(key)
        self._gone = frozenset(gone)

    def _resolve(self, note_id: str) -> Note | None:
        """A link target that recall may show: project scope first (§1.4), never private."""
        if note_id in self._gone:
            return None
        for scope in (Scope.PROJECT, Scope.USER, None):
            entry = self._entries.get((scope, note_id))
            if entry is not None:
                return entry.note if entry.note is not None else self._load((scope, note_id))
        return None

    def _load(self, key: _Key) -> Note | None:
        """The note of a stored entry, read from its file (None: gone, or no longer the
        note whose terms were stored: changed, now private)."""
        entry = self._entries.get(key)
        loader = self._loader
        if entry is None or loader is None:
            return None
        note = loader(key[0], key[1])
        if note is None or note.private or note.hash != entry.hash:
            return None
        entry.note = note
        return note

    # -- scoring

    def _weight(self, term: _Term, total: int) -> float:
        df = max(self._df.get(a, 0) for a in term.alternatives)
        idf = math.log((total + _SMOOTHING) / (df + 1)) / math.log(_SMOOTHING + 1)
        weight = max(0.0, min(MAX_TERM_WEIGHT, idf))
        return weight * WEAK_WEIGHT if term.weak else weight

    def _score_locked(
        self, message: str, min_score: float, exclude: Collection[str]
    ) -> list[tuple[float, _Key, _Entry]]:
        terms = _message_terms(analyse(message))
        if not terms:
            return []
        total = len(self._entries)
        weights = [self._weight(t, total) for t in terms]
        # A short message a note answers whole ("deploys?") passes with less than
        # `min_score`: its few terms are all the message says.
        said = sum(
            w * (CJK_CONTINUATION if t.continues else 1.0)
            for t, w in zip(terms, weights, strict=True)
        )
        min_score = max(COVERED_FLOOR * min_score, min(min_score, COVERED_SHARE * said))
        candidates: set[_Key] = set()
        for term in terms:
            for alt in term.alternatives:
                candidates |= self._head_postings.get(alt, set())
        found: list[tuple[float, _Key, _Entry]] = []
        for key in candidates:
            entry = self._entries[key]
            if entry.note_id in self._gone or entry.note_id in exclude:
                continue
            score = _score(entry, terms, weights)
            if score >= min_score:
                found.append((score, key, entry))
        found.sort(key=lambda f: (-f[0], -f[2].updated_at, f[2].note_id))
        return found

    def _notes_of(self, found: Sequence[tuple[float, _Key, _Entry]]) -> list[tuple[Note, float]]:
        """The notes of scored entries, stored ones read from their files (at most
        `_MATERIALISED` of them: more never fit one block)."""
        out: list[tuple[Note, float]] = []
        for score, key, entry in found[:_MATERIALISED]:
            note = entry.note if entry.note is not None else self._load(key)
            if note is not None:
                out.append((note, score))
        return out

    def score(
        self,
        message: str,
        notes: Iterable[Note],
        *,
        min_score: float = DEFAULT_MIN_SCORE,
        exclude: Collection[str] = (),
    ) -> list[Scored]:
        """Notes scoring at least `min_score` for `message`, best first (see the module doc).

        Private and superseded notes and the ids in `exclude` are never returned.
        """
        with self._lock:
            self._sync(notes)
            found = self._score_locked(message, min_score, frozenset(exclude))
            return [Scored(n, score) for n, score in self._notes_of(found)]

    def recall(
        self,
        message: str,
        notes: Iterable[Note],
        settings: RecallSettings,
        *,
        exclude: Collection[str] = (),
    ) -> Recall:
        """The recall for one message: the best notes within `per_turn` and `budget_chars`."""
        with self._lock:
            self._sync(notes)
            if settings.per_turn <= 0:
                return Recall()
            scored = self._score_locked(message, settings.min_score, frozenset(exclude))
            return render_recall([n for n, _ in self._notes_of(scored)], self._resolve, settings)

    def is_empty(self) -> bool:
        """True when no note has been taken in yet (a first recall)."""
        with self._lock:
            return not self._entries

    def recall_stored(
        self,
        message: str,
        stored: Iterable[StoredTerms],
        notes: Iterable[Note],
        load: Callable[[Scope | None, str], Note | None],
        settings: RecallSettings,
        *,
        exclude: Collection[str] = (),
    ) -> Recall:
        """The recall for one message over notes known by their stored terms (read from
        their files only when chosen or linked: a short-lived process need not read every
        note) and `notes` read whole; gives what `recall` gives over the same notes.
        Only for a Recaller that holds nothing yet."""
        with self._lock:
            if self._entries:
                raise RuntimeError("recall_stored needs a Recaller that holds nothing yet")
            self._loader = load
            gone: set[str] = set()
            for item in stored:
                if item.supersedes:
                    gone.update(s for s in item.supersedes if s != item.note_id)
                entry = _Entry(None, item.note_hash, item.head, item.body)
                entry.note_id, entry.updated_at = item.note_id, item.updated_at
                self._add((item.scope, item.note_id), entry)
            for note in notes:  # those read whole
                gone.update(s for s in note.supersedes if s != note.id)
                if not note.private:
                    head, body = note_recall_terms(note.summary, note.tags, note.body)
                    self._add((note.scope, note.id), _Entry(note, note.hash, head, body))
            self._gone = frozenset(gone)
            if settings.per_turn <= 0:
                return Recall()
            scored = self._score_locked(message, settings.min_score, frozenset(exclude))
            return render_recall([n for n, _ in self._notes_of(scored)], self._resolve, settings)


def _score(entry: _Entry, terms: Sequence[_Term], weights: Sequence[float]) -> float:
    head = body = 0.0
    prev_head = False
    for term, weight in zip(terms, weights, strict=True):
        in_head = any(a in entry.head for a in term.alternatives)
        if in_head:
            head += weight * (CJK_CONTINUATION if term.continues and prev_head else 1.0)
        elif any(a in entry.body for a in term.alternatives):
            body += weight * BODY_WEIGHT * (CJK_CONTINUATION if term.continues else 1.0)
        prev_head = in_head
    return head + body if head > 0 else 0.0


# -- the block --------------------------------------------------------------------------------


def _trim(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ""
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def _shares(sizes: Sequence[int], budget: int) -> list[int]:
    """Split `budget` between bodies: equal shares, what a short body leaves goes to the rest."""
    shares = [0] * len(sizes)
    open_ = sorted(range(len(sizes)), key=lambda i: sizes[i])
    left = max(0, budget)
    while open_:
        share = left // len(open_)
        i = open_[0]
        if sizes[i] <= share:
            shares[i] = sizes[i]
            left -= sizes[i]
            open_.pop(0)
            continue
        for j in open_:
            shares[j] = share
        break
    return shares


def render_recall(
    chosen: Sequence[Note], resolve: Callable[[str], Note | None], settings: RecallSettings
) -> Recall:
    """The block for the best `chosen` notes that fit `per_turn` and `budget_chars`.

    A note's summary, id and the summaries of the notes it links to (found with
    `resolve`; None leaves a link out; notes shown in the block are not listed again)
    must fit whole; the bodies share what is left, a long one trimmed.
    """
    heads: list[tuple[Note, str]] = []
    # A link to a note shown in the same block (or to itself) is not listed again.
    shown = {n.id for n in chosen[: settings.per_turn]}
    used = 0
    for note in chosen:
        if len(heads) >= settings.per_turn:
            break
        lines = [f"## {note.summary} [[{note.id}]]"]
        for target in note.links:
            linked = None if target in shown or target == note.id else resolve(target)
            if linked is not None and len(lines) <= _LINKED_PER_NOTE:
                lines.append(f"linked: {linked.summary} [[{linked.id}]]")
        head = "\n".join(lines)
        cost = len(head) + 2  # the blank line between entries
        if used + cost > settings.budget_chars:
            continue
        heads.append((note, head))
        used += cost
    if not heads:
        return Recall()
    shares = _shares([len(n.body) + 1 for n, _ in heads], settings.budget_chars - used)
    entries: list[str] = []
    for (note, head), share in zip(heads, shares, strict=True):
        body = _trim(note.body, share - 1) if note.body else ""
        title, _, links = head.partition("\n")
        entries.append("\n".join(part for part in (title, body, links) if part))
    ids = tuple(n.id for n, _ in heads)
    block = "\n".join((_OPEN, _PREAMBLE, "", "\n\n".join(entries), _CLOSE))
    label = f"recalled {len(ids)} {'memory' if len(ids) == 1 else 'memories'}"
    return Recall(block, ids, {"memdir": {"recalled": list(ids)}}, len(ids), label)
