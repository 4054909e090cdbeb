"""Labelled tidy-up sets written for issue 27, one module per language, before any tuning.

Each language module (`en`, `de`, `fr`, `es`, `zh`, `ja`) defines

- `PAIRS`: notes pairs on one topic, labelled whether they contradict (different values
  for the same attribute of the same thing) or not (hard negatives: the same value
  written otherwise, another subject, another attribute, history, a range, detail);
- `TOPICS`: groups of notes, labelled whether they are one topic a person would merge
  (`same=True`: restatements and paraphrases, often sharing few words) or must stay
  apart (`same=False`: the same words about different things, or one topic with
  complementary facts that a merge would not simplify).

A note is `(summary, body)`, as a person or an agent would write it in a project's
memory. bench/tidy_sets.py measures the detector and the whole tidy-up list on them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LANGUAGES", "NoteText", "Pair", "Topic"]

LANGUAGES = ("en", "de", "fr", "es", "zh", "ja")

NoteText = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Pair:
    """Two notes on one topic and whether they contradict each other."""

    id: str
    lang: str
    #: what the pair is about: clock, duration, count, version, name, yesno, retention,
    #: limit, date, weekday, choice (contradicting); or units, subject, attribute,
    #: history, range, elaboration, restated (compatible)
    kind: str
    contradicts: bool
    a: NoteText
    b: NoteText


@dataclass(frozen=True, slots=True)
class Topic:
    """Notes that form one same-topic finding (`same`) or must not be grouped at all."""

    id: str
    lang: str
    #: paraphrase, duplicate (same); samewords, complementary (not same)
    kind: str
    same: bool
    notes: tuple[NoteText, ...]
