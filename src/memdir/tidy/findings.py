"""The tidy-up list of one scope (§6): six kinds of findings, pure over what it is given.

::

    scope_findings(ScopeView, kinds, now=…, unused_days=…) -> list[Finding]
      same_topic      2–6 live notes whose summary and tag terms largely overlap (topics.py)
      broken_link     a note's [[id]] links that name no note
      missing_file    relative paths a project note names that the project lacks (paths.py)
      unused          neither recalled nor edited for `unused_days`
      too_long        a body over TOO_LONG_CHARS characters
      contradiction   a same-topic candidate pair, neither superseding the other, whose
                      statements disagree (contradiction.py)

The caller (`memdir.memory.tidying`) gathers what needs I/O — the notes, their terms from
the search index, when each was last recalled or edited, which paths exist — into a
`ScopeView`. A finding's id is its kind and a digest of the notes' content hashes, so it
stays the same until a note involved is edited; a dismissal refers to it.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from memdir.core import Note, Scope
from memdir.core.vocab import FindingKind
from memdir.tidy.contradiction import find_contradiction
from memdir.tidy.paths import path_mentions
from memdir.tidy.topics import (
    CONTRADICTION_MIN_MEANING,
    CONTRADICTION_MIN_SCORE,
    SAME_TOPIC_MIN_MEANING,
    SAME_TOPIC_MIN_SCORE,
    candidate_pairs,
    clusters,
    meaning_pairs,
)

__all__ = [
    "DAY_MS",
    "TOO_LONG_CHARS",
    "Finding",
    "ScopeView",
    "finding_id",
    "kind_of",
    "scope_findings",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Finding:
    """One entry of the tidy-up list (§6): what is wrong, with which notes, in one line.

    `id` is derived from `kind` and the content hashes of the notes (`hashes`, in the
    order of `notes`), so it stays the same until one of them is edited.
    """

    id: str
    kind: FindingKind
    scope: Scope
    notes: tuple[str, ...]
    reason: str
    hashes: tuple[str, ...]
    #: for a contradiction checked with the model (`tidy --confirm-with-llm`): its verdict,
    #: ``confirmed`` or ``unconfirmed`` (rejected ones are left out), and its one-line why
    confirmation: str | None = None
    model_says: str | None = None
    #: a same-topic group that only the notes' vectors join (not their shared words):
    #: listed, but never merged automatically
    by_meaning: bool = False


#: A body longer than this many characters is a `too_long` finding (§6).
TOO_LONG_CHARS = 8000
DAY_MS = 86_400_000
_SHOWN = 3  # items a reason names before "and N more"
_SUMMARY_CHARS = 60


def finding_id(kind: FindingKind, hashes: Iterable[str]) -> str:
    """`<kind>-<12 hex digits>`: from the kind and the notes' content hashes (any order)."""
    digest = hashlib.sha256("\n".join([kind.value, *sorted(hashes)]).encode()).hexdigest()
    return f"{kind.value}-{digest[:12]}"


def kind_of(finding_id: str) -> FindingKind | None:
    """The kind a finding id names, or None when it names none."""
    kind, dash, digest = finding_id.rpartition("-")
    if not dash or len(digest) != 12 or any(c not in "0123456789abcdef" for c in digest):
        return None
    try:
        return FindingKind(kind)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class ScopeView:
    """What the findings of one scope are computed from."""

    scope: Scope
    notes: Sequence[Note]
    #: note id -> its summary and tag terms, as the search index holds them (notes the
    #: index leaves out, such as private ones, have none and take no part in same-topic
    #: or contradiction findings)
    terms: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: note id -> its unit vector (the mean of its chunks' vectors; absent when vectors
    #: are off or the note has none yet: it is then compared by its terms alone)
    vectors: Mapping[str, npt.NDArray[np.float32]] = field(default_factory=dict)
    #: note id -> when it was last recalled or edited (Unix ms; absent: unknown)
    last_used: Mapping[str, int] = field(default_factory=dict)
    #: whether a `[[target]]` names a note (in any open scope)
    link_target: Callable[[str], bool] = lambda _target: True
    #: whether a relative path named by a note exists in the project (None: not a
    #: project scope, no missing-file findings)
    path_exists: Callable[[str, Note], bool] | None = None


def _finding(kind: FindingKind, scope: Scope, notes: Sequence[Note], reason: str) -> Finding:
    hashes = tuple(n.hash for n in notes)
    return Finding(
        finding_id(kind, hashes), kind, scope, tuple(n.id for n in notes), reason, hashes
    )


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    more = len(items) - _SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def _quoted(summary: str) -> str:
    if len(summary) > _SUMMARY_CHARS:
        summary = summary[: _SUMMARY_CHARS - 1].rstrip() + "…"
    return f'"{summary}"'


def _superseded(notes: Sequence[Note]) -> set[str]:
    return {old for n in notes for old in n.supersedes}


def _skipped(live: Sequence[Note]) -> frozenset[tuple[int, int]]:
    """Index pairs (lower first) of a note and a note it supersedes: never a finding."""
    index = {n.id: i for i, n in enumerate(live)}
    return frozenset(
        (min(i, j), max(i, j))
        for n in live
        for old in n.supersedes
        if (j := index.get(old)) is not None and (i := index[n.id]) != j
    )


def _topic_findings(view: ScopeView, kinds: Collection[FindingKind]) -> list[Finding]:
    superseded = _superseded(view.notes)
    live = sorted(
        (n for n in view.notes if n.id in view.terms and n.id not in superseded and not n.private),
        key=lambda n: n.id,
    )
    skip = _skipped(live)
    words = candidate_pairs(
        [view.terms[n.id] for n in live], min_score=CONTRADICTION_MIN_SCORE, skip=skip
    )
    meaning = meaning_pairs(
        [view.vectors.get(n.id) for n in live], min_score=CONTRADICTION_MIN_MEANING, skip=skip
    )
    out: list[Finding] = []
    if FindingKind.SAME_TOPIC in kinds:
        close = [p for p in words if p.score >= SAME_TOPIC_MIN_SCORE]
        worded = list(close)
        close += [p for p in meaning if p.score >= SAME_TOPIC_MIN_MEANING]
        close.sort(key=lambda p: (-p.score, p.first, p.second))
        order = {i: n.id for i, n in enumerate(live)}
        for group in clusters(close, order):
            notes = [live[i] for i in group]
            reason = f"{len(notes)} notes on one topic: " + ", ".join(
                _quoted(n.summary) for n in notes
            )
            finding = _finding(FindingKind.SAME_TOPIC, view.scope, notes, reason)
            members = set(group)
            inside = [p for p in worded if p.first in members and p.second in members]
            if [tuple(sorted(group))] != [tuple(sorted(g)) for g in clusters(inside, order)]:
                finding = replace(finding, by_meaning=True)  # words alone do not join it
            out.append(finding)
    if FindingKind.CONTRADICTION in kinds:
        by_words = {(p.first, p.second) for p in words}
        related = {(p.first, p.second) for p in meaning}
        for first, second in sorted(by_words | related):
            a, b = live[first], live[second]
            try:
                found = find_contradiction(a, b, related=(first, second) in related)
            except (ValueError, ArithmeticError, IndexError, KeyError) as exc:
                # a text the value reader cannot take costs that pair, not the whole list
                log.warning("contradiction check of %s and %s skipped: %r", a.id, b.id, exc)
                continue
            if found is not None:
                out.append(_finding(FindingKind.CONTRADICTION, view.scope, [a, b], found.reason))
    return out


def _broken_links(view: ScopeView) -> list[Finding]:
    out: list[Finding] = []
    for note in view.notes:
        dangling = [f"[[{t}]]" for t in note.links if not view.link_target(t)]
        if dangling:
            names = "names no note" if len(dangling) == 1 else "name no note"
            reason = f"links to {_listed(dangling)}, which {names}"
            out.append(_finding(FindingKind.BROKEN_LINK, view.scope, [note], reason))
    return out


def _missing_files(view: ScopeView) -> list[Finding]:
    exists = view.path_exists
    if exists is None:
        return []
    out: list[Finding] = []
    for note in view.notes:
        missing = [p for p in path_mentions(note.body) if not exists(p, note)]
        if missing:
            verb = "does" if len(missing) == 1 else "do"
            reason = f"names {_listed(missing)}, which {verb} not exist in the project"
            out.append(_finding(FindingKind.MISSING_FILE, view.scope, [note], reason))
    return out


def _unused(view: ScopeView, now: int, days: int) -> list[Finding]:
    if days <= 0:
        return []
    out: list[Finding] = []
    for note in view.notes:
        last = view.last_used.get(note.id)
        if not last or now - last < days * DAY_MS:
            continue
        idle = (now - last) // DAY_MS
        reason = (
            f"neither recalled nor edited for {idle} days (memory.consolidate.unusedDays is {days})"
        )
        out.append(_finding(FindingKind.UNUSED, view.scope, [note], reason))
    return out


def _too_long(view: ScopeView) -> list[Finding]:
    out: list[Finding] = []
    for note in view.notes:
        size = len(note.body)
        if size > TOO_LONG_CHARS:
            reason = (
                f"the body is {size:,} characters long (over {TOO_LONG_CHARS:,}): "
                "split it or cut it down"
            )
            out.append(_finding(FindingKind.TOO_LONG, view.scope, [note], reason))
    return out


def scope_findings(
    view: ScopeView,
    kinds: Collection[FindingKind] = tuple(FindingKind),
    *,
    now: int,
    unused_days: int,
) -> list[Finding]:
    """The findings of the `kinds` asked for in one scope, in the order of `FindingKind`,
    then by their first note's id."""
    out: list[Finding] = []
    if FindingKind.SAME_TOPIC in kinds or FindingKind.CONTRADICTION in kinds:
        out.extend(_topic_findings(view, kinds))
    if FindingKind.BROKEN_LINK in kinds:
        out.extend(_broken_links(view))
    if FindingKind.MISSING_FILE in kinds:
        out.extend(_missing_files(view))
    if FindingKind.UNUSED in kinds:
        out.extend(_unused(view, now, unused_days))
    if FindingKind.TOO_LONG in kinds:
        out.extend(_too_long(view))
    rank = {k: i for i, k in enumerate(FindingKind)}
    out.sort(key=lambda f: (rank[f.kind], f.notes, f.id))
    return out
