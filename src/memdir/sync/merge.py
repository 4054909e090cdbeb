"""The pure three-way merge of notes and their bodies (§7.4): never last-writer-wins."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from merge3 import Merge3

from memdir.core.note import Note

__all__ = ["NoteMerge", "TextMerge", "merge_notes", "merge_text"]

_T = TypeVar("_T")

_START = "<<<<<<< this machine\n"
_BASE = "||||||| baseline\n"
_MID = "=======\n"
_END = ">>>>>>> server\n"

_NO_BASELINE = "no baseline copy: both sides have different versions"
_BODY_CLASH = "both sides changed the same or adjacent lines of the body"


class _Missing:
    """A value that is absent (a frontmatter key or a tag a version does not have)."""

    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


class _LineMatcher(difflib.SequenceMatcher[str]):
    """difflib's matcher without its "popular element" heuristic.

    With autojunk on, a line repeated in over 1% of a 200+ line text (a blank line, say)
    can never start a match, which turns edits in separate places into false conflicts.
    """

    def __init__(
        self,
        isjunk: Callable[[str], bool] | None = None,
        a: Sequence[str] = "",
        b: Sequence[str] = "",
        autojunk: bool = True,
    ) -> None:
        super().__init__(isjunk, a, b, autojunk=False)


@dataclass(frozen=True, slots=True)
class TextMerge:
    """The outcome of a line merge: the text, a draft with conflict markers when not clean."""

    text: str
    conflicts: int

    @property
    def clean(self) -> bool:
        """True when no region conflicted and `text` is the merged text."""
        return self.conflicts == 0


def _split(text: str) -> tuple[list[str], bool]:
    """Lines of `text`, each ending in LF, and whether the text lacked a final LF.

    Splitting on LF only (not `str.splitlines`) keeps U+2028, U+0085 and the like inside
    their lines, as editors show them. A missing final LF is added for the merge and
    merged as a flag of its own, so appending below an unterminated last line does not
    count as a change to that line.
    """
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    unterminated = parts[-1] != ""
    if unterminated:
        lines.append(parts[-1] + "\n")
    return lines, unterminated


def merge_text(base: str, local: str, server: str) -> TextMerge:
    """Line-by-line diff3 of `local` (this machine) and `server` against `base`.

    Changes in separate places combine; changes to the same or adjacent lines conflict.
    Each conflicting region is rendered as::

        <<<<<<< this machine
        ...
        ||||||| baseline
        ...
        =======
        ...
        >>>>>>> server

    with every marker on a line of its own, even when a region is the unterminated end
    of a text.
    """
    base_lines, base_open = _split(base)
    local_lines, local_open = _split(local)
    server_lines, server_open = _split(server)
    # merge3's matcher protocol wants list[tuple[int, int, int]] where difflib returns
    # list[Match]: even difflib.SequenceMatcher itself does not type-check against it.
    merger = Merge3(
        base_lines,
        local_lines,
        server_lines,
        sequence_matcher=_LineMatcher,  # type: ignore[arg-type]
    )
    out: list[str] = []
    conflicts = 0
    for group in merger.merge_groups():
        if group[0] == "conflict":
            _, base_part, local_part, server_part = group
            conflicts += 1
            out.append(_START)
            out.extend(local_part)
            out.append(_BASE)
            out.extend(base_part)
            out.append(_MID)
            out.extend(server_part)
            out.append(_END)
        else:
            out.extend(group[1])
    text = "".join(out)
    # Whether the text ends in LF is merged like any other change: the side that changed it wins
    # (a boolean changed on both sides was changed to the same value).
    unterminated = local_open if local_open != base_open else server_open
    if unterminated and text.endswith("\n"):
        text = text[:-1]
    return TextMerge(text=text, conflicts=conflicts)


@dataclass(frozen=True, slots=True)
class NoteMerge:
    """The outcome of merging one note.

    `result` is the merged note (None: the note is deleted) and is None whenever
    `conflicts` is not empty. `conflicts` holds human-readable reasons. `draft` is, for a
    conflict, a best-effort merged note to edit by hand: the body carries conflict markers
    and this machine's summary, type, privacy and frontmatter values win where they clash.
    """

    result: Note | None
    conflicts: tuple[str, ...]
    draft: Note | None = None

    @property
    def clean(self) -> bool:
        """True when the note merged without conflicts."""
        return not self.conflicts


def _pick(base: object, local: _T, server: _T) -> tuple[_T, bool]:
    """Three-way choice of one value: the side that changed it; (local, True) on a clash."""
    if local == server:
        return local, False
    if local == base:
        return server, False
    if server == base:
        return local, False
    return local, True


def _merge_set(
    base: tuple[str, ...] | None,
    local: tuple[str, ...],
    server: tuple[str, ...],
    key: Callable[[str], str],
) -> tuple[str, ...]:
    """Merge as sets: one side's additions stay, one side's removals go.

    Items are compared by `key`. Order: this machine's items, then the server's additions
    in the server's order. Where both sides spell a kept item differently, the side that
    changed the spelling wins (this machine's when both did).
    """
    if local == server or server == base:
        return local
    if local == base:
        return server
    in_base = {key(item): item for item in base or ()}
    in_local = {key(item): item for item in local}
    in_server = {key(item): item for item in server}

    def kept(k: str) -> bool:
        if k in in_base:
            return k in in_local and k in in_server
        return True  # added by one side or both

    out = [
        _pick(in_base.get(k, _MISSING), spelled, in_server.get(k, _MISSING))[0]
        for k, spelled in in_local.items()
        if kept(k)
    ]
    out += [spelled for k, spelled in in_server.items() if k not in in_local and kept(k)]
    return tuple(out)


def _merge_extra(
    base: tuple[tuple[str, Any], ...] | None,
    local: tuple[tuple[str, Any], ...],
    server: tuple[tuple[str, Any], ...],
) -> tuple[tuple[tuple[str, Any], ...], list[str]]:
    """Unknown frontmatter keys merged key by key (absence counts as a value).

    Returns the pairs (this machine's key order, then the server's new keys) and the keys
    both sides changed differently (this machine's value, or absence, is kept for those).
    """
    in_base = dict(base or ())
    in_local = dict(local)
    in_server = dict(server)
    keys = list(in_local) + [k for k in in_server if k not in in_local]
    keys += [k for k in in_base if k not in in_local and k not in in_server]
    pairs: list[tuple[str, Any]] = []
    clashes: list[str] = []
    for k in keys:
        value, clash = _pick(
            in_base.get(k, _MISSING), in_local.get(k, _MISSING), in_server.get(k, _MISSING)
        )
        if clash:
            clashes.append(k)
        if value is not _MISSING:
            pairs.append((k, value))
    return tuple(pairs), clashes


def _located_like(note: Note, local: Note | None) -> Note:
    """`note` with this machine's scope and path where this machine's copy has them."""
    if local is None:
        return note
    scope = local.scope if local.scope is not None else note.scope
    path = local.path if local.path is not None else note.path
    return replace(note, scope=scope, path=path)


def _merge_fields(base: Note | None, local: Note, server: Note) -> tuple[Note, list[str]]:
    """Field-by-field merge of two changed versions; the note and the reasons it conflicts."""
    reasons: list[str] = []
    b: Any = base if base is not None else _MISSING

    def pick_field(name: str, what: str) -> Any:
        value, clash = _pick(
            getattr(b, name, _MISSING), getattr(local, name), getattr(server, name)
        )
        if clash:
            reasons.append(f"both sides changed {what}")
        return value

    summary = pick_field("summary", "the summary")
    note_type = pick_field("type", "the type")
    private = pick_field("private", "whether the note is private")
    extra, clashing_keys = _merge_extra(base.extra if base else None, local.extra, server.extra)
    reasons += [f"both sides changed the frontmatter key {k!r}" for k in clashing_keys]
    body = merge_text(base.body if base else "", local.body, server.body)
    if not body.clean:
        places = f" ({body.conflicts} places)" if body.conflicts > 1 else ""
        reasons.append(_BODY_CLASH + places)
    tags = _merge_set(base.tags if base else None, local.tags, server.tags, str.casefold)
    supersedes = _merge_set(
        base.supersedes if base else None, local.supersedes, server.supersedes, str
    )
    versions = [v for v in (base, local, server) if v is not None]
    created = [v.created_at for v in versions if v.created_at]
    merged = Note(
        id=local.id,
        summary=summary,
        body=body.text,
        type=note_type,
        tags=tags,
        created_at=min(created, default=0),
        updated_at=max(v.updated_at for v in versions),
        supersedes=supersedes,
        private=private,
        extra=extra,
    )
    return _located_like(_located_like(merged, server), local), reasons


def _one_sided(base: Note | None, survivor: Note | None) -> NoteMerge:
    """The merge when one side has no note: a deletion goes through unless the other side
    edited the note (an edit against a deletion keeps the edit); a new note is kept."""
    if survivor is None or (base is not None and survivor.same_content(base)):
        return NoteMerge(result=None, conflicts=())
    return NoteMerge(result=survivor, conflicts=())


def merge_notes(
    base: Note | None, local: Note | None, server: Note | None, *, max_body_bytes: int
) -> NoteMerge:
    """Three-way merge of one note: `base` as of the last sync, `local` here, `server` there.

    None stands for "no such note" (never synced, or deleted). Versions are equal when
    their content is (`Note.same_content`: timestamps do not count). One-sided changes are
    taken; an edit against a deletion keeps the edit; a note changed on both sides is
    merged field by field (summary, type and privacy from the side that changed them, tags
    and supersedes as sets, unknown frontmatter key by key, the body line by line). What
    cannot be combined is a conflict: two different summaries, types, privacy flags or
    values of one frontmatter key, changes to the same or adjacent body lines, a merged
    body over `max_body_bytes` and larger than both sides, or two different versions with
    no baseline copy.
    """
    if local is not None and server is not None and local.same_content(server):
        return NoteMerge(result=local, conflicts=())
    if local is None:
        return _one_sided(base, server)
    if server is None:
        return _one_sided(base, local)
    if base is None:
        draft, _ = _merge_fields(None, local, server)
        return NoteMerge(result=None, conflicts=(_NO_BASELINE,), draft=draft)
    if local.same_content(base):
        return NoteMerge(result=_located_like(server, local), conflicts=())
    if server.same_content(base):
        return NoteMerge(result=local, conflicts=())
    merged, reasons = _merge_fields(base, local, server)
    if not reasons:
        size = merged.body_bytes
        if size > max_body_bytes and size > max(local.body_bytes, server.body_bytes):
            reasons.append(f"the merged body is {size} bytes, over the {max_body_bytes}-byte limit")
    if reasons:
        return NoteMerge(result=None, conflicts=tuple(reasons), draft=merged)
    return NoteMerge(result=merged, conflicts=())
