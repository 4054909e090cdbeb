"""The JSON the web API answers with: notes, note views, search hits and plain results.

Shapes are those of docs/web.md; times are Unix milliseconds, enums their values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memdir.core import Note
from memdir.core.links import LinkReport
from memdir.core.plain import plain
from memdir.core.vocab import FindingKind
from memdir.errors import ErrorKind, MemdirError, SecretRefused, kind_of
from memdir.web.render import render_body

if TYPE_CHECKING:
    from memdir import CurrentNote, Hit

__all__ = [
    "STATUS",
    "error_body",
    "finding_kinds_json",
    "hit_json",
    "jsonable",
    "note_json",
    "view_json",
]

#: The HTTP status of each error kind (docs/web.md).
STATUS: dict[ErrorKind, int] = {
    ErrorKind.INVALID: 400,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.REFUSED: 422,
    ErrorKind.CONFLICT: 409,
    ErrorKind.BUSY: 423,
    ErrorKind.DISK: 507,
    ErrorKind.DAMAGED: 500,
    ErrorKind.UNAVAILABLE: 503,
    ErrorKind.INTERNAL: 500,
}

#: The kinds of finding whose notes the tidy-up page offers to merge.
_MERGED = frozenset({FindingKind.SAME_TOPIC, FindingKind.CONTRADICTION})
#: The kinds of finding where, for two notes, the page offers that one supersede the other.
_SUPERSEDED = frozenset({FindingKind.CONTRADICTION})


def finding_kinds_json() -> dict[str, dict[str, Any]]:
    """Every kind of finding (`memdir.core.vocab.FindingKind`, in its order) as the tidy-up
    page shows it: its label (``same_topic`` is "Same topic") and whether it offers `merge`
    and `supersede` (dismissing is offered for every kind)."""
    return {
        kind.value: {
            "label": kind.value.replace("_", " ").capitalize(),
            "merge": kind in _MERGED,
            "supersede": kind in _SUPERSEDED,
        }
        for kind in FindingKind
    }


def jsonable(value: Any) -> Any:
    """Plain JSON data from results: dataclasses (notes as `note_json`), enums, paths,
    tuples (paths as text)."""

    def notes(item: Any) -> Any:
        return note_json(item, with_hash=True) if isinstance(item, Note) else NotImplemented

    return plain(value, properties=("deletes", "dangling", "conflicts", "changed"), special=notes)


def note_json(
    note: Note, revision: str | None = None, *, with_hash: bool = False
) -> dict[str, Any]:
    """A note without its body (`revision` None where the caller has none: lists); its
    content `hash` too with `with_hash` (computed, so left out of long lists)."""
    out = {
        "id": note.id,
        "scope": note.scope.value if note.scope else None,
        "summary": note.summary,
        "type": note.type.value if note.type else None,
        "tags": list(note.tags),
        "created": note.created_at,
        "updated": note.updated_at,
        "supersedes": list(note.supersedes),
        "private": note.private,
        "revision": revision,
    }
    if with_hash:
        out["hash"] = note.hash
    return out


def view_json(current: CurrentNote, links: LinkReport, superseded_by: list[str]) -> dict[str, Any]:
    """The note view: the note, its body raw and rendered, links, backlinks, superseded_by."""
    note = current.note
    out = note_json(note, current.revision, with_hash=True)
    out["scope"] = current.scope.value
    resolved = {link.target: link.summary for link in links.outgoing if link.scope is not None}
    out["body"] = note.body
    out["html"] = render_body(note.body, resolved)
    out["links"] = [_link(link) for link in links.outgoing]
    out["backlinks"] = [_link(link) for link in links.backlinks]
    out["superseded_by"] = superseded_by
    return out


def _link(link: Any) -> dict[str, Any]:
    return {
        "target": link.target,
        "scope": link.scope.value if link.scope else None,
        "summary": link.summary,
    }


def hit_json(hit: Hit) -> dict[str, Any]:
    """One search hit."""
    return {
        "id": hit.note_id,
        "scope": hit.scope.value,
        "summary": hit.summary,
        "snippet": hit.snippet,
        "score": hit.score,
        "superseded_by": hit.superseded_by,
        "match": hit.match,
        "weak": hit.weak,
        "type": hit.type.value if hit.type else None,
        "tags": list(hit.tags),
    }


def error_body(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """The status and `{"error": {"kind", "message", "hint"}}` of a failure (`hint`: a
    `memdir.errors.Remedy` value or None). memdir's messages never hold a secret (the guard
    names the kind and line only); anything memdir did not raise on purpose is said
    without its details."""
    kind = kind_of(exc)
    hint: str | None = None
    if isinstance(exc, MemdirError):
        message = str(exc) or type(exc).__name__
        if isinstance(exc, SecretRefused):
            message = f"the credential guard found a secret: {message}"
        hint = exc.hint.value if exc.hint is not None else None
    else:
        message = "the memory page failed unexpectedly; the terminal running memdir ui says why"
    return STATUS[kind], {"error": {"kind": kind.value, "message": message, "hint": hint}}
