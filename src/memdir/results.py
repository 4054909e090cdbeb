"""Every public result type of memdir in one module: what `memdir.Memory` and the layers
below it return (dataclasses; frozen and slotted where nobody fills them in step by step).

This module depends only on the note model, so the store, retrieval and sync layers
define nothing public of their own and all import their results from here.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from memdir.core import Note, NoteType, Scope
from memdir.core.vocab import FindingKind
from memdir.errors import IntegrityError

__all__ = [
    "Answer",
    "AnswerStatus",
    "AuditHead",
    "AuditReport",
    "AuditVerification",
    "BackupRecord",
    "BatchResult",
    "Chunk",
    "Citation",
    "Claim",
    "ConflictView",
    "ConsolidationReport",
    "CurrentNote",
    "DismissResult",
    "DoctorReport",
    "EncryptReport",
    "EncryptionStatus",
    "ExportReport",
    "FileProblem",
    "Finding",
    "FindingKind",
    "ForgetPlan",
    "ForgetResult",
    "HistoryEntry",
    "Hit",
    "ImportIssue",
    "ImportReport",
    "Link",
    "LinkReport",
    "MergeDraft",
    "MergePlan",
    "MergeResult",
    "Neighbour",
    "PassReport",
    "PlannedNote",
    "Recall",
    "ReindexStats",
    "Resolution",
    "RestoreResult",
    "ScopeEncryption",
    "ScopeStatus",
    "SignatureState",
    "SupersedeResult",
    "SyncRun",
    "SyncStatus",
    "WriteResult",
    "key_id",
    "plain",
]


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What `remember` did and what the store already holds near it."""

    note: Note
    created: bool
    changed: bool
    revision: str
    nearest: tuple[Neighbour, ...]
    likely_duplicate: bool
    dangling_links: tuple[str, ...]
    duplicate_of: str | None = None


@dataclass(frozen=True, slots=True)
class SupersedeResult:
    """What `supersede` did: `new` now lists `old` in its supersedes (`changed` False: it
    already did, and nothing was written); `revision` is that of `new`'s file."""

    old: Note
    new: Note
    changed: bool
    revision: str
    scope: Scope


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


@dataclass(frozen=True, slots=True)
class DismissResult:
    """What `dismiss` did: the finding is no longer listed until one of its notes changes
    (`changed` False: it was dismissed already)."""

    finding: Finding
    changed: bool


@dataclass(frozen=True, slots=True)
class MergeDraft:
    """The note a merge writes under the kept id (editable before it is applied)."""

    summary: str
    body: str
    type: NoteType | None = None
    tags: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    private: bool = False


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


@dataclass(frozen=True, slots=True)
class ConsolidationReport:
    """What one automatic consolidation pass (§6) did: the merges it made and the
    same-topic findings it left, each with the reason. `ran` is False when no pass was
    due (`reason` says why: switched off, cooling down, another process at it)."""

    ran: bool
    reason: str | None = None
    scopes: tuple[Scope, ...] = ()
    merged: tuple[MergeResult, ...] = ()
    #: (finding id, why it was not merged)
    skipped: tuple[tuple[str, str], ...] = ()
    #: when the next pass is due (Unix ms; None: never, the pass is off)
    next_due: int | None = None


@dataclass(frozen=True, slots=True)
class ImportIssue:
    """Something of an import source that did not become a note: where and why (a
    refusal names the guard's kind and line, never the value)."""

    source: str
    reason: str


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What `memdir import` did (or, with `dry_run`, would do)."""

    kind: str
    source: str
    dry_run: bool
    imported: int
    updated: int
    unchanged: int
    #: items the credential guard or the limits refused
    refused: tuple[ImportIssue, ...]
    #: what the reader could not read (malformed lines, unreadable or empty files)
    problems: tuple[ImportIssue, ...]
    #: ids of the notes imported or updated
    notes: tuple[str, ...]
    updated_notes: tuple[str, ...] = ()
    by_type: dict[str, int] = field(default_factory=dict)
    by_scope: dict[str, int] = field(default_factory=dict)
    backup_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ExportReport:
    """What `memdir export` wrote: the file (or folder), its format and the notes per scope."""

    path: Path
    format: str
    notes: int
    by_scope: dict[str, int]
    #: note files left out because they cannot be parsed (see `memdir doctor`)
    skipped: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CurrentNote:
    """A note as it is on disk now, with the scope it is in and the revision of those bytes."""

    note: Note
    scope: Scope
    revision: str


@dataclass(frozen=True, slots=True)
class Link:
    """A `[[target]]` link and the scope it resolves in (None when dangling)."""

    target: str
    scope: Scope | None
    summary: str | None


@dataclass(frozen=True, slots=True)
class LinkReport:
    """A note's outgoing links, backlinks and dangling links."""

    note_id: str
    outgoing: tuple[Link, ...]
    backlinks: tuple[Link, ...]
    #: Targets that exist but are not shown to this caller (listed without scope).
    hidden: tuple[str, ...] = ()
    #: The notes shown to this caller that supersede this one (§1.1).
    superseded_by: tuple[str, ...] = ()

    @property
    def dangling(self) -> tuple[str, ...]:
        """Targets that name no note."""
        return tuple(
            link.target
            for link in self.outgoing
            if link.scope is None and link.target not in self.hidden
        )


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One version (or deletion) in a note's history on this machine."""

    revision: str | None
    ts: int
    event: str
    hash: str | None
    current: bool


@dataclass(frozen=True, slots=True)
class ForgetPlan:
    """What `forget` will remove, for the confirm step."""

    note: Note
    scope: Scope
    path: Path
    purge: bool
    keeps_backup: bool
    history_versions: int
    backups: int


@dataclass(frozen=True, slots=True)
class ForgetResult:
    """What `forget` removed and the checks that verified it."""

    note_id: str
    scope: Scope
    backup: BackupRecord | None
    purged_versions: int
    purged_backups: int
    checks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """A restored note and the backup of the version it replaced, if any."""

    note: Note
    backup_id: str
    replaced_backup: BackupRecord | None


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """Health of the note directories: unparseable files, dangling links, limits, warnings."""

    problems: tuple[FileProblem, ...]
    dangling: tuple[tuple[str, str], ...]
    warnings: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)
    directories: dict[str, str] = field(default_factory=dict)
    leftovers: tuple[Path, ...] = ()
    #: Temp files of interrupted writes that doctor removed.
    cleaned: int = 0
    #: The search indexes: damage found now or earlier (each was rebuilt from the files),
    #: and with `deep`, where an index disagrees with the files.
    index: tuple[str, ...] = ()
    #: With `deep`: history objects, backups and audit log entries that fail verification.
    integrity: tuple[str, ...] = ()
    #: Whether the slow checks ran (doctor --deep).
    deep: bool = False

    @property
    def ok(self) -> bool:
        """True when nothing needs attention."""
        return not (
            self.problems
            or self.dangling
            or self.warnings
            or self.leftovers
            or self.index
            or self.integrity
        )


@dataclass(frozen=True, slots=True)
class BackupRecord:
    """One backup. `reason`, `scope` and `origin` are None for legacy backups."""

    id: str
    note_id: str | None
    created_at: int
    reason: str | None
    scope: str | None
    origin: Path | None
    revision: str
    note_hash: str | None
    path: Path


@dataclass(frozen=True, slots=True)
class FileProblem:
    """A file in a note directory that memdir skips and reports (doctor)."""

    scope: Scope
    path: Path
    reason: str


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What ``AuditLog.verify`` found; ``head_seq``/``head_hash`` name the log's last entry."""

    ok: bool
    entries: int
    head_seq: int
    head_hash: str
    problems: tuple[str, ...]

    def raise_if_failed(self) -> None:
        """Raise IntegrityError listing the problems, for callers that want an exception."""
        if not self.ok:
            raise IntegrityError("audit log failed verification: " + "; ".join(self.problems))


#: How a head's signature stands: ``signed`` (checks against this machine's key), ``unsigned``
#: (a legacy head and no key: a warning), ``invalid`` (a failure), ``absent`` (no head).
SignatureState = Literal["signed", "unsigned", "invalid", "absent"]


@dataclass(frozen=True, slots=True)
class AuditVerification(AuditReport):
    """What ``AuditLog.verify`` found, with the head's signature state, the key it was checked
    against (this machine's public key, None when it has none) and warnings that do not fail
    verification (a legacy unsigned head)."""

    signature: SignatureState
    key: str | None
    warnings: tuple[str, ...]


def key_id(public_key: str) -> str:
    """A short name for a public key (64 hex digits): 16 hex digits of its SHA-256."""
    return hashlib.sha256(bytes.fromhex(public_key)).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class AuditHead:
    """The newest entry as the head names it, signed by the machine key ``key`` at ``ts``.

    ``ts``, ``key`` and ``sig`` are all None for a legacy head, written before heads were
    signed. ``key`` is the Ed25519 public key (64 hex digits), ``sig`` the signature (128)."""

    seq: int
    hash: str
    ts: int | None = None
    key: str | None = None
    sig: str | None = None

    @property
    def signed(self) -> bool:
        """Whether the head carries a signature."""
        return self.sig is not None

    @property
    def key_id(self) -> str | None:
        """A short name of the signing key (`key_id`)."""
        return None if self.key is None else key_id(self.key)


@dataclass(slots=True)
class PassReport:
    """What one pass of one scope did."""

    scope: str
    version: int | None = None
    unchanged: bool = False
    pulled: list[str] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    deleted_here: list[str] = field(default_factory=list)
    deleted_there: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    held: dict[str, str] = field(default_factory=dict)
    requests: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0

    @property
    def changed(self) -> bool:
        """True when anything moved in either direction."""
        return bool(
            self.pulled or self.pushed or self.merged or self.deleted_here or self.deleted_there
        )


@dataclass(slots=True)
class BatchResult:
    """What a commit-first batch wrote: on the server (version) and here."""

    version: int | None  # the manifest version after the commit; None: written here only
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    backup_ids: list[str] = field(default_factory=list)
    #: accepted by the server but edited here meanwhile: the next sync merges them
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ScopeStatus:
    """Sync state of one scope on this machine."""

    scope: str
    bound_to: str | None
    paused: str | None
    last_sync: int | None
    version: int | None
    conflicts: int


@dataclass(frozen=True, slots=True)
class SyncStatus:
    """Whether sync is on, where it goes, and each scope's state."""

    enabled: bool
    server: str | None
    user: str | None
    scopes: tuple[ScopeStatus, ...]


@dataclass(slots=True)
class SyncRun:
    """The outcome of one `memdir sync`: a report per scope that ran, a reason per paused one."""

    reports: list[PassReport] = field(default_factory=list)
    paused: dict[str, str] = field(default_factory=dict)

    @property
    def conflicts(self) -> int:
        """Conflicts found by this run."""
        return sum(len(r.conflicts) for r in self.reports)


@dataclass(frozen=True, slots=True)
class ConflictView:
    """A held-back note: the baseline, this machine's and the server's version (None: deleted)."""

    id: str
    scope: str
    reasons: tuple[str, ...]
    baseline: str | None
    local: str | None
    server: str | None
    found_at: int


@dataclass(frozen=True, slots=True)
class Resolution:
    """What resolving a conflict did; `new_id` is the server's copy kept beside (keep both)."""

    id: str
    scope: str
    kept: str
    new_id: str | None
    backup_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Hit:
    """A note found by `search`: its best chunk decides the score and the snippet."""

    note_id: str
    score: float
    snippet: str
    scope: Scope
    path: str
    summary: str
    revision: str
    superseded_by: str | None = None
    #: How the note matched: "words" (full-text), "meaning" (vectors) or "both".
    match: str = "words"
    type: NoteType | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Chunk:
    """A chunk found by `retrieve`, with where it lives in its file."""

    note_id: str
    revision: str
    chunk_hash: str
    start: int
    end: int
    score: float
    source: str
    scope: Scope
    path: str
    text: str
    summary: str
    match: str = "words"


@dataclass(frozen=True, slots=True)
class ReindexStats:
    """What `reindex` did."""

    notes: int
    chunks: int
    embedded: int
    embedder: str | None
    seconds: float


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An existing note close to a given one."""

    note_id: str
    summary: str
    scope: Scope | None
    score: float


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


def plain(
    value: Any,
    *,
    properties: tuple[str, ...] = (),
    special: Callable[[Any], Any] | None = None,
) -> Any:
    """Plain JSON data from results — dataclasses, enums, paths, mappings, sequences — for
    an adapter to print or send. The listed `properties` of a dataclass are added beside
    its fields; `special` may answer for a value first (anything but `NotImplemented`)."""
    if special is not None:
        answer = special(value)
        if answer is not NotImplemented:
            return answer

    def again(item: Any) -> Any:
        return plain(item, properties=properties, special=special)

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: again(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in properties:
            if isinstance(getattr(type(value), name, None), property):
                out[name] = again(getattr(value, name))
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): again(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [again(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class ScopeEncryption:
    """Whether one scope's notes are encrypted: ``plain``, ``encrypting`` (a conversion
    under way or killed: run encrypt again), ``encrypted`` or ``decrypting``."""

    scope: Scope
    path: Path
    state: str


@dataclass(frozen=True, slots=True)
class EncryptionStatus:
    """The encryption of a memdir home (§8.2)."""

    #: Whether this home has a keyring (was ever encrypted here).
    keyring: bool
    #: The key id (16 hex digits) of the keyring's master key.
    key_id: str | None
    #: Whether the unlock agent holds the key now.
    unlocked: bool
    #: Seconds of inactivity left before the agent locks (None: locked).
    idle_left: float | None
    scopes: tuple[ScopeEncryption, ...]


@dataclass(frozen=True, slots=True)
class EncryptReport:
    """What `encrypt` or `decrypt` converted."""

    scopes: tuple[ScopeEncryption, ...]
    notes: int
    objects: int
    backups: int
    seconds: float
    #: The recovery key of a keyring made by this call: shown once, never stored.
    recovery_key: str | None = None


class AnswerStatus(enum.StrEnum):
    """How `Memory.ask` ended (§10)."""

    #: Every claim cites a chunk that was sent to the model.
    ANSWERED = "answered"
    #: No relevant chunk was found (no model was called), or the model found no answer in them.
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"
    #: The model's answer failed the checks (shape, citations, a credential): none is given.
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class Citation:
    """Where a claim's support lies: UTF-8 byte offsets `start`..`end` in note `note_id`'s
    file at `revision` (within a chunk that was sent to the model)."""

    note_id: str
    revision: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Claim:
    """One statement of an answer and the chunks it rests on (at least one)."""

    text: str
    citations: tuple[Citation, ...]


@dataclass(frozen=True, slots=True)
class Answer:
    """A grounded answer to a question (§10): `text` and `claims` only when `status` is
    answered; `reason` says why otherwise. `chunks_sent` counts the chunks the model saw
    (0: no model was called); `model` is the one that answered (None: none was asked)."""

    status: AnswerStatus
    text: str
    claims: tuple[Claim, ...]
    chunks_sent: int
    model: str | None
    reason: str | None = None

    @property
    def cited_ids(self) -> tuple[str, ...]:
        """The note ids the claims cite, in order of first citation."""
        return tuple(dict.fromkeys(c.note_id for claim in self.claims for c in claim.citations))
