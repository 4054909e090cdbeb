"""Checking the extractor's untrusted answer against what it was shown, then writing it.

The answer is treated as hostile. A malformed answer or one of the wrong shape writes
nothing. Item by item: updates to ids not shown in full are dropped; `supersedes` keeps
only shown ids; links to ids not shown lose their brackets (text kept); credentials are
redacted (and the store's guard still runs on write); summaries become one trimmed line;
a body over `memory.maxNoteBytes` is truncated with a marker saying so (truncating keeps
the start of a note the user paid for, where dropping would lose it all); at most
`MAX_NOTES_PER_PASS` notes are written. New notes refer to each other as ``[[new:N]]``
(N = position in the answer), rewritten to the real ids once all are created. An update
backs up the version it replaces, and is dropped if the file changed since it was shown.
"""

from __future__ import annotations

import builtins
import json
import re
import time
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from memdir.core import Note, NoteType, Scope, validate_id
from memdir.core.note import MAX_SUMMARY_CHARS
from memdir.errors import InvalidInput, MemdirError
from memdir.extract.host import ExtractHost
from memdir.extract.prompt import MAX_NOTES_PER_PASS, PromptContext
from memdir.guard import redact, scan_text

__all__ = [
    "BACKUP_REASON",
    "BRACKETS",
    "TRUNCATED_MARKER",
    "AnswerRejected",
    "Applied",
    "Cleaner",
    "Draft",
    "Dropped",
    "apply_answer",
    "decode_json",
    "parse_answer",
    "storable",
    "truncate",
    "validate",
]

BACKUP_REASON = "replaced by extraction"
TRUNCATED_MARKER = "\n\n[truncated by memdir: the extracted text exceeded memory.maxNoteBytes]"
MAX_TAGS = 20
MAX_TAG_CHARS = 60
#: Room kept per ``[[new:N]]`` for the id it becomes (ids are at most 80 characters).
_ID_ROOM = 80
_FENCE = re.compile(r"\A```[a-zA-Z]*\s*\n(.*)\n```\s*\Z", re.DOTALL)
#: Anything in double brackets, valid id or not: every such link in an answer is checked.
BRACKETS = re.compile(r"\[\[([^\[\]\n]{0,200})\]\]")
_NOT_IN_LINE = frozenset({"Cc", "Zl", "Zp"})
_NEW = re.compile(r"new:(\d{1,3})")
_PLACEHOLDER = re.compile(r"\[\[new:(\d{1,3})\]\]")
_FIELDS: dict[str, tuple[type, ...]] = {
    "action": (str,),
    "id": (str, type(None)),
    "summary": (str,),
    "body": (str, type(None)),
    "type": (str, type(None)),
    "tags": (list, str, type(None)),
    "supersedes": (list, type(None)),
}


class AnswerRejected(MemdirError):
    """Raised when the model's answer is not JSON of the expected shape; nothing is written."""


@dataclass(frozen=True, slots=True)
class Dropped:
    """An item of the answer that was not written, and why (`index`: its position)."""

    index: int
    action: str
    id: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class Draft:
    """A checked item, ready to write (None: keep the updated note's value)."""

    index: int
    action: Literal["create", "update"]
    id: str | None
    summary: str
    body: str
    type: NoteType | None
    tags: tuple[str, ...] | None
    supersedes: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class Applied:
    """What writing an answer did."""

    created: tuple[str, ...]
    updated: tuple[str, ...]
    dropped: tuple[Dropped, ...]
    redactions: int
    warnings: tuple[str, ...]


def decode_json(text: str, consequence: str = "nothing was written") -> Any:
    """The JSON value of a model's answer (a Markdown code fence around it is allowed);
    AnswerRejected, its message ending with `consequence`, when it is not JSON text."""
    if not isinstance(text, str):
        raise AnswerRejected(f"the model's answer is not text; {consequence}")
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        raise AnswerRejected(f"the model's answer is not valid JSON; {consequence}") from None


def parse_answer(text: str) -> builtins.list[Mapping[str, Any]]:
    """The items of ``{"notes": [...]}``; AnswerRejected for anything else."""
    data = decode_json(text)
    notes = data.get("notes") if isinstance(data, dict) else None
    if not isinstance(notes, list):
        raise AnswerRejected(
            'the model\'s answer is not a JSON object with a "notes" list; nothing was written'
        )
    for position, item in enumerate(notes):
        if not isinstance(item, dict):
            raise AnswerRejected(f"notes[{position}] is not an object; nothing was written")
        for key, kinds in _FIELDS.items():
            if key in item and not isinstance(item[key], kinds):
                raise AnswerRejected(
                    f"notes[{position}].{key} has the wrong type; nothing was written"
                )
        if "action" not in item or "summary" not in item:
            raise AnswerRejected(
                f"notes[{position}] lacks an action or a summary; nothing was written"
            )
        for key in ("tags", "supersedes"):
            value = item.get(key)
            if isinstance(value, list) and not all(isinstance(v, str) for v in value):
                raise AnswerRejected(
                    f"notes[{position}].{key} is not a list of strings; nothing was written"
                )
    return notes


class Cleaner:
    """Cleaning of a model's untrusted text (credentials redacted, summaries one line, tags
    bounded); counts the redactions and collects warnings."""

    def __init__(self) -> None:
        self.redactions = 0
        self.warnings: builtins.list[str] = []

    def clean(self, text: str) -> str:
        """`text` with every credential the guard finds redacted."""
        found = scan_text(text)
        if not found:
            return text
        self.redactions += len(found)
        return redact(text)

    def summary(self, raw: str, limit: int = MAX_SUMMARY_CHARS) -> str:
        """One trimmed line of at most `limit` characters (an ellipsis marks a cut)."""
        line = " ".join(self.clean(raw).split())
        if len(line) > limit:
            line = line[: limit - 1].rstrip() + "…"
        return line

    def tags(self, raw: builtins.list[str] | str | None) -> tuple[str, ...] | None:
        """At most MAX_TAGS short tags; any holding a credential is dropped (None: none given)."""
        if raw is None:
            return None
        items = raw.replace(",", " ").split() if isinstance(raw, str) else raw
        kept: builtins.list[str] = []
        for tag in items[: MAX_TAGS * 2]:
            cleaned = self.clean(tag).strip()
            if cleaned and "[REDACTED" not in cleaned and len(cleaned) <= MAX_TAG_CHARS:
                kept.append(cleaned)
        return tuple(kept[:MAX_TAGS])


class _Checker(Cleaner):
    """Validation of one answer's items against a prompt context; counts what it changed."""

    def __init__(self, ctx: PromptContext, count: int, max_bytes: int) -> None:
        super().__init__()
        self.ctx = ctx
        self.count = count
        self.max_bytes = max_bytes

    def link(self, index: int, match: re.Match[str]) -> str:
        target = match.group(1).strip()
        new = _NEW.fullmatch(target)
        if new is not None and int(new.group(1)) < self.count:
            return f"[[new:{int(new.group(1))}]]"
        if target in self.ctx.shown_ids:
            return f"[[{target}]]"
        self.warnings.append(f"notes[{index}]: link to {target[:80]!r}, a note not shown, unlinked")
        return target

    def body(self, index: int, raw: str | None) -> str:
        text = self.clean(raw or "")
        text = BRACKETS.sub(lambda m: self.link(index, m), text)
        room = self.max_bytes - _ID_ROOM * len(_PLACEHOLDER.findall(text))
        return truncate(text, room, lambda: self.warnings.append(f"notes[{index}]: truncated"))

    def supersedes(
        self, index: int, own: str | None, raw: builtins.list[str] | None
    ) -> tuple[str, ...] | None:
        if raw is None:
            return None
        kept = [s for s in dict.fromkeys(raw) if s in self.ctx.shown_ids and s != own]
        for s in raw:
            if s not in kept:
                self.warnings.append(f"notes[{index}]: supersedes {s[:80]!r} (not shown) ignored")
        return tuple(kept)


def storable(text: str, *, line: bool = False) -> str:
    """`text` as a note can hold it: lone surrogates (which JSON carries and UTF-8 cannot)
    replaced, NULs dropped, and with `line` control and line-separator characters spaced."""
    out = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text).replace("\x00", "")
    if line:
        out = "".join(" " if unicodedata.category(c) in _NOT_IN_LINE else c for c in out)
    return out


def truncate(text: str, limit: int, on_cut: Callable[[], None] | None = None) -> str:
    """`text` cut to `limit` UTF-8 bytes with a marker saying so (whole characters only)."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    if on_cut is not None:
        on_cut()
    keep = max(0, limit - len(TRUNCATED_MARKER.encode("utf-8")))
    return data[:keep].decode("utf-8", "ignore").rstrip() + TRUNCATED_MARKER


def validate(
    items: builtins.list[Mapping[str, Any]], ctx: PromptContext, max_bytes: int
) -> tuple[builtins.list[Draft], builtins.list[Dropped], int, builtins.list[str]]:
    """Checked drafts, dropped items, the number of secrets redacted, and warnings."""
    check = _Checker(ctx, len(items), max_bytes)
    drafts: builtins.list[Draft] = []
    dropped: builtins.list[Dropped] = []
    updating: set[str] = set()
    for index, item in enumerate(items):
        outcome = _check_item(check, index, item, updating)
        if isinstance(outcome, Draft):
            drafts.append(outcome)
            if outcome.id is not None:
                updating.add(outcome.id)
        else:
            raw_id = item.get("id")
            shown_id = raw_id.strip()[:80] if isinstance(raw_id, str) else None
            dropped.append(Dropped(index, item["action"].strip()[:20], shown_id, outcome))
    return drafts, dropped, check.redactions, check.warnings


def _check_item(
    check: _Checker, index: int, item: Mapping[str, Any], updating: set[str]
) -> Draft | str:
    """A draft of one item, or the reason it is dropped."""
    action = item["action"].strip().lower()
    raw_id = item.get("id")
    note_id = raw_id.strip() if isinstance(raw_id, str) else None
    if index >= MAX_NOTES_PER_PASS:
        return f"more than {MAX_NOTES_PER_PASS} notes in one pass"
    if action not in ("create", "update"):
        return "action must be 'create' or 'update'"
    if action == "update":
        if note_id is None or note_id not in check.ctx.full_ids:
            return "update to a note that was not shown in full"
        if note_id in updating:
            return "a second update of the same note in one pass"
    elif note_id is not None:
        check.warnings.append(f"notes[{index}]: id of a new note ignored (ids are made)")
        note_id = None
    # Lone surrogates and control characters (JSON carries both) would make the note
    # unwritable or crash the guard: made storable first.
    summary = check.summary(storable(item["summary"], line=True))
    if not summary:
        return "empty summary"
    try:
        note_type = _type(item.get("type"))
    except InvalidInput:
        return f"unknown type {str(item.get('type'))[:20]!r}"
    return Draft(
        index=index,
        action="update" if action == "update" else "create",
        id=note_id,
        summary=summary,
        body=check.body(index, storable(item.get("body") or "")),
        type=note_type,
        tags=check.tags(_storable_tags(item.get("tags"))),
        supersedes=check.supersedes(index, note_id, item.get("supersedes")),
    )


def _storable_tags(raw: builtins.list[str] | str | None) -> builtins.list[str] | str | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        return storable(raw, line=True)
    return [storable(t, line=True) for t in raw]


def _type(raw: str | None) -> NoteType | None:
    if raw is None or not raw.strip():
        return None
    try:
        return NoteType(raw.strip().lower())
    except ValueError:
        raise InvalidInput(f"unknown note type {raw!r}") from None


def apply_answer(memory: ExtractHost, ctx: PromptContext, text: str) -> Applied:
    """Check the answer `text` and write what survives (AnswerRejected if it is malformed)."""
    items = parse_answer(text)
    drafts, dropped, redactions, warnings = validate(items, ctx, memory.settings.max_note_bytes)
    written: dict[int, tuple[Note, Scope]] = {}
    created: builtins.list[str] = []
    updated: builtins.list[str] = []
    for draft in drafts:
        try:
            result = _write(memory, ctx, draft)
        except MemdirError as exc:
            dropped.append(Dropped(draft.index, draft.action, draft.id, f"not written: {exc}"))
            continue
        if result is None:
            warnings.append(f"notes[{draft.index}]: update of {draft.id} changes nothing")
            continue
        written[draft.index] = result
        (created if draft.action == "create" else updated).append(result[0].id)
    _resolve_new_links(memory, written, warnings)
    return Applied(tuple(created), tuple(updated), tuple(dropped), redactions, tuple(warnings))


def _write(memory: ExtractHost, ctx: PromptContext, draft: Draft) -> tuple[Note, Scope] | None:
    """Create or update one note; None for an update that changes nothing."""
    if draft.action == "create":
        result = memory.notes.remember(
            draft.summary,
            body=draft.body,
            type=draft.type,
            tags=draft.tags or (),
            supersedes=draft.supersedes or (),
        )
        scope = result.note.scope
        assert scope is not None
        return result.note, scope
    shown = next(s for s in ctx.full if s.note.id == draft.id)
    old = shown.note
    note = replace(
        old,
        summary=draft.summary,
        body=draft.body,
        type=draft.type if draft.type is not None else old.type,
        tags=draft.tags if draft.tags is not None else old.tags,
        supersedes=draft.supersedes if draft.supersedes is not None else old.supersedes,
        updated_at=max(int(time.time() * 1000), old.updated_at + 1),
    )
    if note.same_content(old):
        return None
    # Through the store, not `remember`: the replaced version is backed up first, and the
    # write is refused (Conflict) if the file changed after the model was shown it.
    outcome = memory.notes.save_over(
        note, scope=shown.scope, revision=shown.revision, backup_reason=BACKUP_REASON
    )
    return outcome.note, shown.scope


def _resolve_new_links(
    memory: ExtractHost, written: dict[int, tuple[Note, Scope]], warnings: builtins.list[str]
) -> None:
    """Second pass: ``[[new:N]]`` becomes ``[[<id of item N>]]``, or loses its brackets."""

    def resolve(match: re.Match[str]) -> str:
        target = written.get(int(match.group(1)))
        return f"[[{target[0].id}]]" if target is not None else f"new:{match.group(1)}"

    for note, scope in written.values():
        if not _PLACEHOLDER.search(note.body):
            continue
        body = truncate(_PLACEHOLDER.sub(resolve, note.body), memory.settings.max_note_bytes)
        try:
            validate_id(note.id)
            memory.notes.remember(note.summary, body=body, scope=scope, id=note.id)
        except MemdirError as exc:
            warnings.append(f"links of {note.id} to new notes not resolved: {exc}")
