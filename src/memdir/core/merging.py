"""What a merge joins: the draft written under the kept id (tidy and extraction build it)."""

from __future__ import annotations

from dataclasses import dataclass

from memdir.core.note import NoteType

__all__ = ["MAX_MERGED", "MergeDraft"]

#: Notes one merge may join (a same-topic finding names 2–6): tidy's plans and
#: extraction's model drafts both hold to it.
MAX_MERGED = 20


@dataclass(frozen=True, slots=True)
class MergeDraft:
    """The note a merge writes under the kept id (editable before it is applied)."""

    summary: str
    body: str
    type: NoteType | None = None
    tags: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    private: bool = False
