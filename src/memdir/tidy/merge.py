"""Merging notes (§6), pure: which note is kept, the concatenated draft, link rewriting and
the plan file's shape.

::

    keeper(notes) -> Note                   the oldest note (its id is kept)
    concat_draft(notes) -> MergeDraft       every original, repeats dropped
    relink(body, gone, keep) -> str         [[gone-id]] -> [[keep]]
    plan_to_json(plan) / plan_from_json(data)

A plan carries, for every original, the revision (the file's bytes) and content hash it
was made from; applying it is refused when any differs (`memdir.memory.merging`). The
draft in a plan file may be edited by hand before it is applied: it is checked again
(the note rules, the credential guard, the limits) when it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memdir.core import LINK_PATTERN, Note, NoteType, Scope, is_valid_id
from memdir.core.merging import MAX_MERGED, MergeDraft
from memdir.errors import InvalidInput

__all__ = [
    "PLAN_FORMAT",
    "PLAN_SOURCES",
    "MergePlan",
    "MergeResult",
    "PlannedNote",
    "check_plan_ids",
    "concat_draft",
    "keeper",
    "paragraphs",
    "plan_from_json",
    "plan_to_json",
    "plan_token",
    "relink",
]


@dataclass(frozen=True, slots=True)
class PlannedNote:
    """One original of a merge plan: the revision (file bytes) and content hash it was
    planned from; the plan is refused when either differs on apply."""

    id: str
    revision: str
    hash: str


@dataclass(frozen=True, slots=True)
class MergePlan:
    """What `merge` will do (§6): join `notes` of `scope` into `keep` (the oldest; the
    others are deleted) with `draft` as its new content. `source` says how the draft
    was made: ``concat``, ``llm`` or ``edited``; `warnings` what checking it changed."""

    scope: Scope
    keep: str
    notes: tuple[PlannedNote, ...]
    draft: MergeDraft
    source: str = "concat"
    warnings: tuple[str, ...] = ()

    @property
    def deletes(self) -> tuple[str, ...]:
        """The ids the merge deletes (every original but the kept one)."""
        return tuple(n.id for n in self.notes if n.id != self.keep)

    def to_json(self) -> dict[str, Any]:
        """The plan as the JSON object a plan file holds (`from_json` reads it back)."""
        return plan_to_json(self)

    @classmethod
    def from_json(cls, data: Any) -> MergePlan:
        """A plan from a plan file's JSON object, checked field by field (InvalidInput)."""
        return plan_from_json(data)

    @property
    def token(self) -> str:
        """A digest of what a person agreed to: the notes' revisions and the draft. Applying
        with a token that differs from the plan made now means something changed since."""
        return plan_token(self)


@dataclass(frozen=True, slots=True)
class MergeResult:
    """What a merge did: the kept note, the deleted ones, the notes whose links were
    rewritten, the backups of every changed note, and the server's manifest version when
    it went to the server first (None: written here only). `skipped`: notes the server
    took but that were edited here meanwhile (kept as edited; the next sync merges them)."""

    plan: MergePlan
    kept: str
    deleted: tuple[str, ...]
    relinked: tuple[str, ...]
    backup_ids: tuple[str, ...]
    version: int | None
    skipped: tuple[str, ...] = ()


#: How a plan file may say its draft was made.
PLAN_SOURCES = ("concat", "llm", "edited")
#: The plan file's format marker and version.
PLAN_FORMAT = "memdir-merge-plan"
_PLAN_VERSION = 1
_SPACES = re.compile(r"\s+")
_HEADING = re.compile(r"^#{1,6} ")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def keeper(notes: Sequence[Note]) -> Note:
    """The note whose id a merge keeps: the oldest (created first; then the lowest id)."""
    return min(notes, key=lambda n: (n.created_at or n.updated_at or 2**63, n.id))


def _key(paragraph: str) -> str:
    """What makes two paragraphs the same: their exact text, trailing spaces aside (case,
    indentation and inner spacing can carry meaning: paths, code)."""
    return "\n".join(line.rstrip() for line in paragraph.splitlines()).strip("\n")


def _title(text: str) -> str | None:
    """The words of a one-line heading or a summary (case and spacing aside), else None."""
    if "\n" in text.strip():
        return None
    return _SPACES.sub(" ", _HEADING.sub("", text.strip())).strip().casefold() or None


def _is_heading(paragraph: str) -> bool:
    return "\n" not in paragraph.strip() and bool(_HEADING.match(paragraph.strip()))


def paragraphs(body: str) -> list[str]:
    """The body's blocks, split on blank lines outside fenced code (a fence is one block)."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in body.split("\n"):
        marker = _FENCE.match(line)
        if fence is None and marker is not None:
            fence = marker.group(1)[0] * 3
        elif fence is not None and marker is not None and marker.group(1).startswith(fence):
            fence = None
        elif fence is None and not line.strip():
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return [b.strip("\n") for b in blocks if b.strip()]


def relink(body: str, gone: Collection[str], keep: str) -> str:
    """`body` with every `[[id]]` naming one of `gone` pointing at `keep` instead."""
    if not gone:
        return body

    def swap(match: re.Match[str]) -> str:
        return f"[[{keep}]]" if match.group(1) in gone else match.group(0)

    return LINK_PATTERN.sub(swap, body)


def concat_draft(notes: Sequence[Note]) -> MergeDraft:
    """All originals in one note: the oldest's summary and body first, then each other's
    summary as a heading and its body, oldest first; a paragraph an earlier note holds
    word for word (fenced code is one paragraph), or a heading repeating a summary or
    heading, is not repeated, so nothing is lost and duplicates are said once; links to the merged
    notes name the kept one. Tags are joined, the type is the oldest's (or the first one
    given), `supersedes` joins the originals' (less the merged notes)."""
    keep = keeper(notes)
    ordered = [keep, *sorted((n for n in notes if n is not keep), key=_age)]
    ids = {n.id for n in notes}
    gone = ids - {keep.id}
    seen: set[str] = set()
    titles = {_title(keep.summary)}
    parts: list[str] = []
    for index, note in enumerate(ordered):
        # Links to the merged notes name the kept note first, so paragraphs that differed
        # only there are one; a paragraph an earlier note holds word for word is said once,
        # and so is a heading that repeats a summary or an earlier heading (a note's own
        # repeats are its own business and kept).
        fresh: list[str] = []
        for paragraph in paragraphs(relink(note.body, gone, keep.id)):
            if _key(paragraph) in seen or (_is_heading(paragraph) and _title(paragraph) in titles):
                continue
            fresh.append(paragraph)
        seen.update(_key(p) for p in fresh)
        titles.update(_title(p) for p in fresh if _is_heading(p))
        if index and _title(note.summary) not in titles:
            parts.append(f"## {note.summary}")
            titles.add(_title(note.summary))
        parts.extend(fresh)
    body = "\n\n".join(parts)
    tags = tuple(dict.fromkeys(t for n in ordered for t in n.tags))
    note_type = keep.type or next((n.type for n in ordered if n.type is not None), None)
    supersedes = tuple(dict.fromkeys(s for n in ordered for s in n.supersedes if s not in ids))
    return MergeDraft(
        summary=keep.summary,
        body=body,
        type=note_type,
        tags=tags,
        supersedes=supersedes,
        private=any(n.private for n in notes),
    )


def _age(note: Note) -> tuple[int, str]:
    return (note.created_at or note.updated_at or 2**63, note.id)


# -- the plan file -------------------------------------------------------------------


def plan_to_json(plan: MergePlan) -> dict[str, Any]:
    """The plan as the JSON object `plan_from_json` reads back."""
    draft = plan.draft
    return {
        "format": PLAN_FORMAT,
        "version": _PLAN_VERSION,
        "scope": plan.scope.value,
        "keep": plan.keep,
        "notes": [{"id": n.id, "revision": n.revision, "hash": n.hash} for n in plan.notes],
        "source": plan.source,
        "draft": {
            "summary": draft.summary,
            "type": draft.type.value if draft.type is not None else None,
            "tags": list(draft.tags),
            "supersedes": list(draft.supersedes),
            "private": draft.private,
            "body": draft.body,
        },
        "warnings": list(plan.warnings),
    }


def _field(data: Mapping[str, Any], key: str, kinds: type | tuple[type, ...], where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kinds) or isinstance(value, bool) is not (kinds is bool):
        raise InvalidInput(f"the merge plan's {where}{key} is missing or of the wrong type")
    return value


def _strings(data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"the merge plan's {where}{key} must be a list of strings")
    return tuple(value)


def plan_from_json(data: Any) -> MergePlan:
    """A plan read back from its JSON object; InvalidInput naming what is wrong."""
    if not isinstance(data, dict) or data.get("format") != PLAN_FORMAT:
        raise InvalidInput(f'not a merge plan (no "format": "{PLAN_FORMAT}")')
    version = data.get("version")
    if type(version) is not int or version != _PLAN_VERSION:
        raise InvalidInput(
            f"merge plan version {version!r} is not one this memdir reads ({_PLAN_VERSION})"
        )
    try:
        scope = Scope(_field(data, "scope", str, ""))
    except ValueError:
        raise InvalidInput("the merge plan's scope must be 'project' or 'user'") from None
    keep = _field(data, "keep", str, "")
    raw_notes = _field(data, "notes", list, "")
    notes: list[PlannedNote] = []
    for i, item in enumerate(raw_notes):
        if not isinstance(item, dict):
            raise InvalidInput(f"the merge plan's notes[{i}] is not an object")
        where = f"notes[{i}]."
        note_id = _field(item, "id", str, where)
        if not is_valid_id(note_id):
            raise InvalidInput(f"the merge plan's {where}id {note_id[:80]!r} is not a note id")
        notes.append(
            PlannedNote(
                note_id, _field(item, "revision", str, where), _field(item, "hash", str, where)
            )
        )
    raw = _field(data, "draft", dict, "")
    type_name = raw.get("type")
    if type_name is not None and not isinstance(type_name, str):
        raise InvalidInput("the merge plan's draft.type must be a note type or null")
    try:
        note_type = NoteType(type_name) if type_name else None
    except ValueError:
        raise InvalidInput(
            f"the merge plan's draft.type {str(type_name)[:40]!r} is no note type"
        ) from None
    private = raw.get("private", False)
    if not isinstance(private, bool):
        raise InvalidInput("the merge plan's draft.private must be true or false")
    draft = MergeDraft(
        summary=_field(raw, "summary", str, "draft."),
        body=_field(raw, "body", str, "draft."),
        type=note_type,
        tags=_strings(raw, "tags", "draft."),
        supersedes=_strings(raw, "supersedes", "draft."),
        private=private,
    )
    source = data.get("source", "concat")
    if source not in PLAN_SOURCES:
        # Free text here would reach the audit log; "auto" is the background pass's alone.
        raise InvalidInput(f"the merge plan's source must be one of {', '.join(PLAN_SOURCES)}")
    plan = MergePlan(
        scope=scope,
        keep=keep,
        notes=tuple(notes),
        draft=draft,
        source=source,
        warnings=_strings(data, "warnings", ""),
    )
    check_plan_ids(plan)
    return plan


def plan_token(plan: MergePlan) -> str:
    """A digest of what a person agreed to: the notes' revisions and the draft. Applying
    with a token that differs from the plan made now means something changed since."""
    import hashlib

    doc = plan_to_json(plan)
    doc.pop("warnings", None)
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def check_plan_ids(plan: MergePlan) -> None:
    """InvalidInput unless the plan names 2–`MAX_MERGED` distinct notes, `keep` among them."""
    ids = [n.id for n in plan.notes]
    if len(set(ids)) != len(ids):
        raise InvalidInput("a merge names the same note twice")
    if len(ids) < 2:
        raise InvalidInput("a merge needs at least two different notes")
    if len(ids) > MAX_MERGED:
        raise InvalidInput(f"a merge joins at most {MAX_MERGED} notes ({len(ids)} given)")
    if plan.keep not in ids:
        raise InvalidInput(f"the merge plan keeps {plan.keep[:80]!r}, which it does not merge")
