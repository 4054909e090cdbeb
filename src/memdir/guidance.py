"""The guidance text memdir ships to tell an agent when a note is worth writing and when not."""

from __future__ import annotations

__all__ = ["EMPTY_INDEX", "GUIDANCE"]

GUIDANCE = """\
Write a memory note only for what will matter in a later conversation and cannot be found again:
- feedback: the user corrected you, or confirmed an approach that was not obvious;
- user: the user's role, expertise or a preference in how they like to work;
- project: a decision and its reason, a constraint, or work in progress that the code does not show;
- reference: where outside information lives (a dashboard, a ticket tracker, a document, a person).
Do not write what the code, the git history or the docs already say, the state of the current
task, secrets (tokens, passwords, keys), or guesses you have not confirmed with the user.
One fact per note, with a one-line summary that says the fact itself, not its topic.
Tags: the words someone would search for, synonyms included, and the term in the other
language the user works in (e.g. database, datenbank, 数据库).
Link related notes with [[note-id]] in the body; say why, and how to apply it.
Search first: update the existing note rather than writing a duplicate.
When a decision changes, write the new note with `supersedes` naming the old one.
"""

#: What replaces the prompt index when there are no notes at all (§4.1).
EMPTY_INDEX = """\
No memory notes yet. Write one when the user corrects you, confirms an approach, states a \
preference, or makes a decision whose reason the code will not show.
Do not write what the code, git history or docs already say, task state, secrets or guesses.\
"""
