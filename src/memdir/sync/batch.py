"""Commit-first batches (§7.3): changes nobody reviews note by note go to the server first.

A consolidation-style batch (merging duplicates, retiring superseded notes) touches
many notes at once. With sync on, every involved note must be fully in sync (this
machine == baseline == server), the commit carries the manifest version it was checked
against, and only when the server accepts is the batch written here. If anything moved
in between, nothing of the batch is written and the caller is told to sync first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from memdir.core import Note, render_note
from memdir.core.vocab import WriteEvent
from memdir.errors import Conflict, DiskError, LimitExceeded, Remedy
from memdir.store import BackupRecord, ScopeStore
from memdir.sync.baseline import RemoteEntry
from memdir.sync.client import Stale
from memdir.sync.comparison import ServerView
from memdir.sync.protocol import Change, CommitRequest, rev_of
from memdir.sync.scope_pass import ScopePass

__all__ = [
    "BatchResult",
    "commit_first",
    "write_all",
]


@dataclass(slots=True)
class BatchResult:
    """What a commit-first batch wrote: on the server (version) and here."""

    version: int | None  # the manifest version after the commit; None: written here only
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    backup_ids: list[str] = field(default_factory=list)
    #: accepted by the server but edited here meanwhile: the next sync merges them
    skipped: list[str] = field(default_factory=list)


def _check_in_sync(
    scope_pass: ScopePass, ids: list[str], server: ServerView
) -> tuple[dict[str, str], dict[str, str]]:
    """The server's and this machine's revision of each note (absent: none); Conflict when
    any is not fully in sync."""
    here = scope_pass.local_state()
    revs, unknown = here.revs, here.unknown
    bases = scope_pass.baseline.bases()
    held = {c.id for c in scope_pass.baseline.conflicts()}
    out: dict[str, str] = {}
    for note_id in ids:
        local, base, remote = revs.get(note_id), bases.get(note_id), server.live.get(note_id)
        if note_id in unknown or note_id in held or not (local == base == remote):
            raise Conflict(
                f"note {note_id} is not in sync with the server (changed on one side, or in a "
                "conflict); nothing of the batch was written",
                hint=Remedy.SYNC_NOW,
            )
        if remote is not None:
            out[note_id] = remote
    return out, {i: revs[i] for i in ids if i in revs}


def commit_first(
    scope_pass: ScopePass,
    writes: Mapping[str, Note | None],
    reason: str,
    *,
    expected: Mapping[str, str] | None = None,
    audit: Sequence[tuple[str, Mapping[str, str | int | None]]] = (),
) -> BatchResult:
    """Commit `writes` (note id -> new note, None: delete) to the server, then write them here
    (with the `audit` entries, when they are written here).

    With `expected` (id -> revision the caller planned from; "" for no file), a note
    whose file differs now refuses the whole batch before anything is sent.
    """
    ids = sorted(writes)
    server = scope_pass.snapshot(scope_pass.have(), True, full=True)
    assert server is not None  # a full listing is never `unchanged`
    remote, local = _check_in_sync(scope_pass, ids, server)
    for note_id, rev in (expected or {}).items():
        if local.get(note_id, "") != rev:
            raise Conflict(f"note {note_id} changed since the batch was made; nothing was written")
    # Every check a local write makes (the credential guard, limits, case clashes) runs
    # before anything is sent: a refused note must not reach the server either.
    quotas = scope_pass.client.quotas
    for note in writes.values():
        if note is not None:
            scope_pass.store.admit(note)
            if note.body_bytes > quotas.max_body_bytes:
                raise LimitExceeded(
                    f"note {note.id}'s body is {note.body_bytes:,} bytes; the sync server takes "
                    f"at most {quotas.max_body_bytes:,} per note — shorten it; nothing was written"
                )
    changes: list[Change] = []
    payload: dict[str, bytes] = {}
    for note_id in ids:
        note = writes[note_id]
        if note is None:
            if note_id in remote:
                changes.append(Change(id=note_id, op="delete", base=remote[note_id]))
            continue
        data = render_note(note)
        payload[note_id] = data
        changes.append(
            Change(
                id=note_id,
                op="put",
                base=remote.get(note_id),
                rev=rev_of(data),
                text=data.decode("utf-8"),
            )
        )
    quota = quotas.max_changes
    if len(changes) > quota:
        raise LimitExceeded(
            f"the batch changes {len(changes)} notes; the server takes {quota} per commit, and "
            "a commit-first batch must go in one piece — split it"
        )
    version = server.version
    # An encrypted scope uploads the batch sealed (`memdir.sync.wire`).
    sent = [s for _, s in scope_pass.wire_changes(changes, server)]
    wires = {c.id: c.rev for c in sent if c.rev is not None}
    if changes:
        try:
            result = scope_pass.client.commit(
                CommitRequest(scope=scope_pass.scope, version=version, changes=sent)
            )
        except Stale:
            raise Conflict(
                "the server changed while the batch was checked; nothing of the batch was written",
                hint=Remedy.SYNC_NOW,
            ) from None
        version = result.version
        wires.update({i: e.rev for i, e in result.notes.items()})
    return _write_here(scope_pass, writes, payload, local, (version, wires), server, reason, audit)


def write_all(
    store: ScopeStore,
    writes: Mapping[str, Note | None],
    reason: str,
    revisions: Mapping[str, str],
    *,
    payload: Mapping[str, bytes] | None = None,
    audit: Sequence[tuple[str, Mapping[str, str | int | None]]] = (),
) -> tuple[list[str], list[BackupRecord]]:
    """Write a batch here all or nothing: the puts (as `payload` bytes, else rendered), then
    the removals, each checked against `revisions` (id -> revision on disk; absent or "":
    no file), replaced and removed versions backed up with `reason`, the `audit` entries
    recorded with it. The ids written and the backups made; Conflict (nothing written)
    when a file is not as expected."""
    items = sorted(writes.items())
    puts = [
        (n, payload[i] if payload is not None else render_note(n), revisions.get(i, ""))
        for i, n in items
        if n is not None
    ]
    removals = [(i, revisions[i]) for i, n in items if n is None and revisions.get(i)]
    made: list[BackupRecord] = []
    saved = store.save_many(
        puts,
        event=WriteEvent.CONSOLIDATE,
        backup_reason=reason,
        removals=removals,
        all_or_nothing=True,
        audit=audit,
        backups=made,
    )
    return list(saved), made


def _write_here(
    scope_pass: ScopePass,
    writes: Mapping[str, Note | None],
    payload: dict[str, bytes],
    local: dict[str, str],
    committed: tuple[int | None, dict[str, str]],
    server: ServerView,
    reason: str,
    audit: Sequence[tuple[str, Mapping[str, str | int | None]]],
) -> BatchResult:
    """Write the accepted batch here, all of it or — when a note was edited here meanwhile —
    none of it (never last-writer-wins, never half a batch): the server holds the batch
    and the next sync pass merges it with the edit three ways, as any change from another
    machine. The baseline records only what was written here. `committed`: the manifest
    version after the commit and the server revision of each note put.
    """
    version, wires = committed
    sealed = scope_pass.wire.sealed
    out = BatchResult(version=version)
    try:
        _, made = write_all(scope_pass.store, writes, reason, local, payload=payload, audit=audit)
    except Conflict:
        out.skipped.extend(sorted(writes))
    except DiskError as exc:
        raise DiskError(
            f"the sync server took the batch (version {version}), but writing it here failed: "
            f"{exc}; `memdir sync` brings it here once the disk is fixed",
            hint=Remedy.SYNC_NOW,
        ) from exc
    else:
        out.written.extend(i for i, n in sorted(writes.items()) if n is not None)
        out.deleted.extend(i for i, n in sorted(writes.items()) if n is None)
        out.backup_ids.extend(r.id for r in made)
    written = not out.skipped
    baseline = scope_pass.baseline
    with baseline.transaction():
        remote = dict(server.remote)
        for note_id in writes:
            if note_id in payload:
                data = payload[note_id]
                wire = wires.get(note_id, rev_of(data))
                remote[note_id] = RemoteEntry(wire)
                if written:
                    baseline.set_base(
                        note_id, rev_of(data), data, server_rev=wire if sealed else None
                    )
            else:
                remote.pop(note_id, None)
                if written:
                    baseline.drop_base(note_id)
        baseline.replace_remote(remote)
        # Deletions' tombstones are not known here: list the manifest again next time.
        baseline.set_version(version if all(n is not None for n in writes.values()) else None)
    return out
