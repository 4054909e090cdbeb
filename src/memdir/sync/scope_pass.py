"""One sync pass of one scope: three-way comparison against the baseline, merge, pull, push.

For every note the pass compares three revisions — this machine (L), the baseline
both sides agreed on at the last sync (B) and the server (S):

- L == S: in sync (the baseline follows);
- L == B: only the server changed — its version is written here (the local one backed up);
- S == B: only this machine changed — uploaded with `base` = S, so the server refuses
  it if anything moved meanwhile (then the pass starts over from a fresh snapshot);
- otherwise both changed: `merge_notes` combines them (both versions backed up first)
  or the note becomes a conflict that holds back only itself.

A server tombstone of exactly the local version deletes it here; an edit against a
deletion keeps the edit. Files memdir cannot parse, and notes past `maxNotes` that a
scan did not load, are never treated as deleted: they are left alone and reported.
Every upload passes the credential guard first (a file edited on disk never met the
store's), so a note that looks like it holds a secret is held here, never sent; the
server refuses one as well, and the pass then holds the notes it names.
Nothing is ever last-writer-wins.

An encrypted scope (§8.2) compares exactly the same way, on plaintext revisions:
`memdir.sync.wire` seals every upload and opens every download, the server view is
translated from the server's revisions of sealed texts to the plaintext revisions
behind them (the baseline keeps both), and texts the server still holds in plain form
(synced before the scope was encrypted) are uploaded again, sealed.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from memdir.core import Note, parse_note, render_note
from memdir.core.vocab import WriteEvent
from memdir.errors import MemdirError, ParseError, SecretRefused, SyncFailed
from memdir.store import ScopeStore, check_secrets
from memdir.sync.baseline import Baseline, RemoteEntry
from memdir.sync.client import SecretInCommit, Stale, SyncClient
from memdir.sync.comparison import LocalFiles, PassReport, Plan, ServerView, Sides
from memdir.sync.merge import merge_notes
from memdir.sync.protocol import (
    Change,
    CommitRequest,
    CommitResult,
    Entry,
    ScopeRef,
    Snapshot,
    SnapshotRequest,
    rev_of,
    sealed_size_limit,
)
from memdir.sync.teamkeys import TeamSealing
from memdir.sync.wire import StateSeal, WireForm

__all__ = ["Aborted", "PassReport", "ScopePass"]

_MAX_RESTARTS = 6
_T = TypeVar("_T")
log = logging.getLogger("memdir.sync")


class Aborted(SyncFailed):
    """Raised inside a pass when sync was switched off; what was done so far is kept."""


class _MissingText(Exception):
    """A text the comparison needs was not in the answer: list the manifest in full."""


class ScopePass:
    """Runs passes for one scope against one server."""

    def __init__(
        self,
        store: ScopeStore,
        baseline: Baseline,
        client: SyncClient,
        scope: ScopeRef,
        *,
        abort: threading.Event | None = None,
        still_on: Callable[[], bool] = lambda: True,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], int],
        read_only: str | None = None,
        team: TeamSealing | None = None,
    ) -> None:
        self.store = store
        #: Why this machine may only pull (a team reader, §12): its changes are held, not sent.
        self.read_only = read_only
        self.baseline = baseline
        self.client = client
        self.scope = scope
        self.abort = abort or threading.Event()
        self._still_on = still_on
        self._sleep = sleep
        self._clock = clock
        #: the note files as this comparison read them (set by each comparison)
        self._files: dict[str, bytes] = {}
        #: how this scope's texts travel: plain, or sealed end to end
        self.wire = WireForm(store.directory, scope.key, team)
        if baseline.sealing is None:
            baseline.sealing = StateSeal(store.directory)

    def run(self) -> PassReport:
        """One pass; restarts from a fresh snapshot when the server moved on meanwhile."""
        report = PassReport(scope=self.store.scope.value)
        start = (self.client.transfer.requests, self.client.transfer.sent)
        received = self.client.transfer.received
        try:
            full = False
            for attempt in range(_MAX_RESTARTS):
                try:
                    self._once(report, full=full)
                    break
                except Stale:
                    # Other machines are committing: a short, growing, random pause
                    # spreads the retries out instead of colliding again at once.
                    self._sleep(random.uniform(0, 0.05 * 2**attempt))
                    continue
                except _MissingText:
                    full = True
            else:
                raise SyncFailed(
                    "the server kept changing during the sync; nothing is lost, sync will retry"
                )
            self.baseline.mark_synced(self._clock())
        finally:
            report.requests = self.client.transfer.requests - start[0]
            report.bytes_sent = self.client.transfer.sent - start[1]
            report.bytes_received = self.client.transfer.received - received
        return report

    def _check_abort(self) -> None:
        # Between requests: the switch may have been turned off here or in another process.
        if self.abort.is_set() or not self._still_on():
            raise Aborted("sync was switched off; the pass stopped and local notes are kept")

    # -- reading both sides ------------------------------------------------------------

    def local_state(self) -> LocalFiles:
        """This machine's side: every note file's revision; parsed only where it changed.

        A file unchanged since the last sync (its revision is the baseline's) was parsed
        then; the others are parsed here, and one that cannot be parsed is not a deletion:
        it is left out of the comparison altogether and reported.
        """
        data = self.store.directory.read_all()
        bases = self.baseline.bases()
        local = LocalFiles(self.store, data, {i: rev_of(b) for i, b in data.items()})
        # A note-named symbolic link is never followed, and it is not a deletion either.
        local.unknown.update(self.store.directory.linked_ids())
        for note_id, rev in local.revs.items():
            if rev != bases.get(note_id):
                local.note(note_id)
        return local

    def snapshot(self, have: set[str], local_changed: bool, *, full: bool) -> ServerView | None:
        """The server's side; None when neither side changed since the last pass.

        A client that synced before first probes with its known version and no `have`
        list (a few hundred bytes each way when nothing changed); only when the manifest
        moved does it ask for the texts it lacks, naming the listed revisions it holds.
        """
        known = None if full or self._plain_on_server() else self.baseline.version
        if known is not None:
            probe = self.client.snapshot(
                SnapshotRequest(scope=self.scope, known_version=known, objects=False)
            )
            if probe.unchanged:
                return None if not local_changed else self._remembered(probe.version)
            if probe.version < known:
                self._server_went_back(known, probe.version)
                raise _MissingText("the server went back in version")
            listed = {e.rev for e in probe.notes.values()}
            if listed <= have:
                return self._view(probe, {})
            # The probe's listing stands; only the texts are fetched (revisions are
            # content-addressed, and a commit against a stale listing is refused).
            _, texts = self._fetch(have & listed, lists=False)
            return self._view(probe, texts)
        snap, texts = self._fetch(have, lists=True)
        return self._view(snap, texts)

    def _fetch(self, have: set[str], *, lists: bool) -> tuple[Snapshot, dict[str, bytes]]:
        """A snapshot and every text not in `have` (asking again while the server truncates).

        The first answer's listing stands; later answers carry texts only.
        """
        request = SnapshotRequest(scope=self.scope, have=sorted(have), lists=lists)
        snap = self.client.snapshot(request)
        texts = self._texts(snap)
        truncated = snap.truncated
        while truncated:
            self._check_abort()
            have = have | texts.keys()
            request = SnapshotRequest(scope=self.scope, have=sorted(have), lists=False)
            more = self.client.snapshot(request)
            got = self._texts(more)
            if not got and more.truncated:
                raise SyncFailed("the sync server keeps truncating its answer without progress")
            texts.update(got)
            truncated = more.truncated
        return snap, texts

    def _server_went_back(self, known: int, now: int) -> None:
        """The manifest is older than the last one seen (a server restored from a backup).

        Its absences and older revisions are not changes anyone made: the baselines are
        set aside, so notes the server lacks are uploaded again and notes that differ
        become conflicts to settle — nothing is deleted or rolled back here.
        """
        log.warning(
            "the sync server's %s manifest went back from version %d to %d (restored from a "
            "backup?); comparing without baselines so nothing is deleted or rolled back",
            self.store.scope.value,
            known,
            now,
        )
        with self.baseline.transaction():
            for note_id in self.baseline.bases():
                self.baseline.drop_base(note_id)
            self.baseline.replace_remote({})
            self.baseline.set_version(None)

    def _recently_synced(self) -> bool:
        """Whether the last pass is within the server's tombstone window (less a day of
        clock skew): then every deletion since has a tombstone still."""
        last = self.baseline.last_sync
        window = (self.client.quotas.tombstone_days - 1) * 86_400_000
        return last is not None and self._clock() - last < window

    def _remembered(self, version: int) -> ServerView:
        """The server's side as the last pass saw it (the manifest has not moved since)."""
        remote = self.baseline.remote()
        # Tombstones past the server's window have dropped out of its manifest by now.
        cutoff = self._clock() - self.client.quotas.tombstone_days * 86_400_000
        remote = {i: e for i, e in remote.items() if e.deleted_at is None or e.deleted_at >= cutoff}
        view = ServerView(
            version=version,
            live={i: e.rev for i, e in remote.items() if e.live},
            tombstones={i: e.rev for i, e in remote.items() if not e.live},
            texts={},
            remote=remote,
        )
        return self._translated(view)

    def _view(self, snap: Snapshot, texts: dict[str, bytes]) -> ServerView:
        remote = {i: RemoteEntry(e.rev) for i, e in snap.notes.items()}
        remote.update({i: RemoteEntry(t.rev, t.deleted_at) for i, t in snap.tombstones.items()})
        view = ServerView(
            version=snap.version,
            live={i: e.rev for i, e in snap.notes.items()},
            tombstones={i: t.rev for i, t in snap.tombstones.items()},
            texts=texts,
            remote=remote,
            plain={i for i, e in snap.notes.items() if e.hash != e.rev},
        )
        return self._translated(view)

    # -- the wire form (end-to-end encryption) ---------------------------------------------

    def have(self, revs: dict[str, str] | None = None) -> set[str]:
        """The server revisions whose texts this machine holds (the request's `have`):
        baselines and, for a plain scope, the note files' revisions `revs`."""
        if not self.wire.sealed:
            return set(self.baseline.bases().values()) | set((revs or {}).values())
        held = {c.server_rev for c in self.baseline.conflicts() if c.server_rev is not None}
        return set(self.baseline.server_revs().values()) | held

    def _plain_on_server(self) -> bool:
        """An encrypted scope whose baseline says the server may hold plain texts: the
        manifest is listed in full, so they are found and uploaded again, sealed."""
        return self.wire.sealed and self.baseline.has_plain_wire()

    def _translated(self, view: ServerView) -> ServerView:
        """The view in plaintext revisions for an encrypted scope (`WireForm.translate`)."""
        return self.wire.translate(view, self.baseline)

    def _server_rev(self, server: ServerView, note_id: str) -> str | None:
        """The server's revision of a live note as the baseline records it (None: plain)."""
        return server.wire.get(note_id) if self.wire.sealed else None

    def wire_changes(
        self, changes: list[Change], server: ServerView, report: PassReport | None = None
    ) -> list[tuple[Change, Change]]:
        """(plaintext change, change as uploaded) for each change (`WireForm.changes`)."""
        limit = sealed_size_limit(self.client.quotas.max_body_bytes)
        return self.wire.changes(changes, server, limit, report)

    def _texts(self, snap: Snapshot) -> dict[str, bytes]:
        texts: dict[str, bytes] = {}
        for rev, text in snap.objects.items():
            data = text.encode("utf-8")
            if rev_of(data) != rev:
                raise SyncFailed(
                    "the sync server sent a note whose bytes do not match its revision; "
                    "nothing was changed"
                )
            texts[rev] = data
        return texts

    # -- one comparison --------------------------------------------------------------

    def _once(self, report: PassReport, *, full: bool) -> None:
        # A restarted comparison finds the conflicts and held notes again.
        report.conflicts.clear()
        report.held.clear()
        self._check_abort()
        self.wire.refresh()
        local = self.local_state()
        self._files = local.data
        revs, unknown = local.revs, local.unknown
        bases = self.baseline.bases()
        ids = (revs.keys() | bases.keys()) - unknown
        local_changed = any(revs.get(i) != bases.get(i) for i in ids)
        legacy = self._plain_on_server()
        server = self.snapshot(self.have(revs), local_changed or legacy, full=full or legacy)
        if server is None:
            report.unchanged = True
            report.version = self.baseline.version
            return
        self._check_abort()
        plan = Plan(held={c.id for c in self.baseline.conflicts()})
        every = ids | server.live.keys() | (server.tombstones.keys() & revs.keys()) | plan.held
        every -= unknown
        for note_id, why in sorted(server.unreadable.items()):
            every.discard(note_id)  # neither pulled, pushed nor deleted: held, said why
            report.held[note_id] = why
        sides = Sides(local, bases, server)
        for note_id in sorted(every):
            self._decide(note_id, sides, plan, report)
        for note_id in sorted(unknown & (server.live.keys() | bases.keys())):
            report.held[note_id] = "the local file cannot be read as a note (see `memdir doctor`)"
        self._apply_pulls(plan, local, server, report)
        self._push(plan, server, revs, report)
        if report.held:
            # Something was skipped: the next pass lists the manifest again rather than
            # trusting `unchanged`, so a pull held back here is retried once it can go.
            self.baseline.set_version(None)

    def _decide(self, note_id: str, sides: Sides, plan: Plan, report: PassReport) -> None:
        revs, server = sides.revs, sides.server
        local, base, remote = revs.get(note_id), sides.bases.get(note_id), server.live.get(note_id)
        if local == remote:
            if local is not None and note_id in server.plain and self.wire.sealed:
                # Synced before this scope was encrypted: the server's copy is plaintext.
                data = self._local_bytes(note_id, local)
                plan.changes.append(
                    Change(id=note_id, op="put", base=remote, rev=local, text=data.decode("utf-8"))
                )
            elif local != base or note_id in plan.held:
                plan.agreed[note_id] = local
            return
        if local == base:
            if remote is not None:
                plan.pulls.append((note_id, self._text(note_id, remote, server, revs)))
            elif note_id in server.tombstones or not self._recently_synced():
                plan.local_deletes.append(note_id)
            else:
                # Gone from the server without a tombstone although this machine synced
                # within the window: the server lost it (a restore), nobody deleted it.
                assert local is not None
                data = self._local_bytes(note_id, local)
                plan.changes.append(
                    Change(id=note_id, op="put", base=None, rev=local, text=data.decode("utf-8"))
                )
            return
        if remote == base:
            tomb = server.tombstones.get(note_id)
            if base is None and local is not None and tomb == local:
                plan.local_deletes.append(note_id)  # deleted on the server, untouched here
            elif local is not None:
                data = self._local_bytes(note_id, local)
                plan.changes.append(
                    Change(id=note_id, op="put", base=remote, rev=local, text=data.decode("utf-8"))
                )
            elif remote is not None:
                plan.changes.append(Change(id=note_id, op="delete", base=remote))
            return
        self._merge(note_id, sides, plan, report)

    def _merge(self, note_id: str, sides: Sides, plan: Plan, report: PassReport) -> None:
        revs, server = sides.revs, sides.server
        remote = server.live.get(note_id)
        base_copy = self.baseline.base(note_id)
        server_data = None if remote is None else self._text(note_id, remote, server, revs)
        try:
            # A purged baseline keeps its revision but no text: there is no common ancestor.
            base_note = (
                parse_note(base_copy.data, file_id=note_id)
                if base_copy is not None and base_copy.data
                else None
            )
            server_note = None if server_data is None else parse_note(server_data, file_id=note_id)
        except ParseError:
            report.held[note_id] = "the server's version cannot be read as a note"
            return
        local_note = sides.local.note(note_id)
        if local_note is None and note_id in revs:
            report.held[note_id] = "the local file cannot be read as a note (see `memdir doctor`)"
            return
        outcome = merge_notes(
            base_note, local_note, server_note, max_body_bytes=self.client.quotas.max_body_bytes
        )
        if not outcome.clean:
            self.baseline.hold(
                note_id,
                server_rev=server.wire.get(note_id),
                server_data=server_data,
                local_rev=revs.get(note_id),
                reasons=outcome.conflicts,
            )
            report.conflicts.append(note_id)
            return
        result = outcome.result
        if result is None:
            if local_note is not None:
                plan.local_deletes.append(note_id)
            if remote is not None:
                plan.changes.append(Change(id=note_id, op="delete", base=remote))
            return
        if server_note is not None and server_data is not None and result.same_content(server_note):
            data = server_data
        elif local_note is not None and result.same_content(local_note):
            data = self._local_bytes(note_id, revs[note_id])
        else:
            data = render_note(result)
        rev = rev_of(data)
        if self.read_only is not None and rev != remote:
            # A merge this machine may not upload: held, so the team's version is not
            # silently kept from it (keep the server's version to follow the team again).
            self.baseline.hold(
                note_id,
                server_rev=server.wire.get(note_id),
                server_data=server_data,
                local_rev=revs.get(note_id),
                reasons=(f"{self.read_only}; the team changed this note too",),
            )
            report.conflicts.append(note_id)
            return
        plan.merged.append(note_id)
        if rev == remote:  # the merge is the server's version: only this machine changes
            plan.pulls.append((note_id, data))
            return
        # The server's version is backed up before the upload replaces it; this machine's
        # is backed up by the write that replaces it (§7.4: both sides, before a merge).
        if server_data is not None:
            self.store.backup(note_id, server_data, "sync merge: the server's version")
        plan.changes.append(
            Change(id=note_id, op="put", base=remote, rev=rev, text=data.decode("utf-8"))
        )
        if rev != revs.get(note_id):
            plan.after[note_id] = data

    def _text(self, note_id: str, rev: str, server: ServerView, revs: dict[str, str]) -> bytes:
        data = server.texts.get(rev)
        if data is not None:
            return data
        if revs.get(note_id) == rev:
            return self._local_bytes(note_id, rev)
        base = self.baseline.base(note_id)
        if base is not None and base.rev == rev:
            return base.data
        held = self.baseline.conflict(note_id)
        if held is not None and held.server_data is not None and rev_of(held.server_data) == rev:
            return held.server_data
        # The same bytes under another id (a copied file): `have` named them, so the
        # server did not send them again.
        for other, other_rev in revs.items():
            if other_rev == rev and other in self._files:
                return self._files[other]
        copy = self.baseline.text_of(rev)
        if copy is not None:
            return copy
        if not server.texts and server.remote:
            raise _MissingText(note_id)
        raise SyncFailed(f"the sync server did not send note {note_id}'s text; sync will retry")

    def _local_bytes(self, note_id: str, rev: str) -> bytes:
        """A note file's bytes as this comparison read them (the disk only for others)."""
        data = self._files.get(note_id)
        if data is None or rev_of(data) != rev:
            data = self.store.directory.read_bytes(note_id)
        if data is None or rev_of(data) != rev:
            raise Stale(f"note {note_id} changed on disk during the sync", (note_id,), None)
        return data

    # -- applying ------------------------------------------------------------------

    def _apply_pulls(
        self, plan: Plan, local: LocalFiles, server: ServerView, report: PassReport
    ) -> None:
        revs = local.revs
        with self.baseline.transaction():
            for note_id, rev in plan.agreed.items():
                if rev is None:
                    self.baseline.drop_base(note_id)
                else:
                    data = self._local_bytes(note_id, rev)
                    wire = self._server_rev(server, note_id)
                    self.baseline.set_base(note_id, rev, data, server_rev=wire)
                self.baseline.release(note_id)
        self._check_abort()
        wires = {i: self._server_rev(server, i) for i, _ in plan.pulls}
        for note_id in self._write_here(plan.pulls, revs, report, wires):
            (report.merged if note_id in plan.merged else report.pulled).append(note_id)
        for note_id in plan.local_deletes:
            self._check_abort()
            note = local.note(note_id)
            try:
                if note is None:
                    raise ParseError(f"the local file of {note_id} cannot be read as a note")
                self.store.remove(
                    note_id,
                    backup_reason="sync: deleted on the server",
                    event=WriteEvent.SYNC_DELETE,
                    expect_hash=note.hash,
                )
            except MemdirError as exc:
                report.held[note_id] = str(exc)
                continue
            with self.baseline.transaction():
                self.baseline.drop_base(note_id)
                self.baseline.release(note_id)
            report.deleted_here.append(note_id)

    def _write_here(
        self,
        writes: list[tuple[str, bytes]],
        revs: dict[str, str],
        report: PassReport,
        wires: dict[str, str | None],
    ) -> list[str]:
        """Write agreed bytes here in one batch (replaced versions backed up); the baseline
        follows for each note written (with `wires`, the server revision of each). Returns
        the ids written."""
        items: list[tuple[Note, bytes, str]] = []
        for note_id, data in writes:
            try:
                items.append((parse_note(data, file_id=note_id), data, revs.get(note_id, "")))
            except MemdirError as exc:
                report.held[note_id] = f"the server's version cannot be read as a note: {exc}"
        outcomes = self.store.save_many(
            items, event=WriteEvent.SYNC, backup_reason="sync: replaced by the server's version"
        )
        written: list[str] = []
        with self.baseline.transaction():
            for note, data, _ in items:
                outcome = outcomes[note.id]
                if isinstance(outcome, MemdirError):
                    report.held[note.id] = str(outcome)
                    continue
                wire = wires.get(note.id)
                self.baseline.set_base(note.id, rev_of(data), data, server_rev=wire)
                self.baseline.release(note.id)
                written.append(note.id)
        return written

    def _push(
        self, plan: Plan, server: ServerView, revs: dict[str, str], report: PassReport
    ) -> None:
        checked = self._within_quota(_guarded(plan.changes, report), server, report)
        if self.read_only is not None:
            for change in checked:
                report.held[change.id] = self.read_only
            checked = []
        changes = self.wire_changes(checked, server, report)
        version = server.version
        exact = True
        with self.baseline.transaction():
            self.baseline.replace_remote(server.remote)
            self.baseline.set_version(version)
        for chunk in _chunks(changes, self.client.quotas.max_changes):
            self._check_abort()
            result = self._commit(chunk, report)
            if result is None:
                continue
            exact = exact and result.version == version + 1
            version = result.version
            with self.baseline.transaction():
                for change, sent in chunk:
                    # A merge's baseline moves only once it is written here as well: if
                    # that write fails, the next pass merges against the old baseline.
                    self._accepted(
                        change,
                        sent,
                        result.notes.get(change.id),
                        set_base=change.id not in plan.after,
                    )
                    (report.deleted_there if change.op == "delete" else report.pushed).append(
                        change.id
                    )
                # Another client's commit between ours means `remote` misses it: forget the
                # version so the next pass lists the manifest again.
                self.baseline.set_version(version if exact else None)
            self.store.audit.append(
                "sync-commit",
                scope=self.store.scope.value,
                origin=self.client.origin,
                count=len(chunk),
            )
            after = [(c.id, plan.after.pop(c.id)) for c, _ in chunk if c.id in plan.after]
            wires: dict[str, str | None] = {
                c.id: s.rev if self.wire.sealed else None for c, s in chunk
            }
            self._write_here(after, revs, report, wires)
            report.merged.extend(c.id for c, _ in chunk if c.id in plan.merged)
        report.version = version if exact else server.version
        for note_id in plan.after:  # merges whose upload was held back: nothing written here
            report.held.setdefault(note_id, "the merged version was not uploaded")

    def _commit(
        self, chunk: list[tuple[Change, Change]], report: PassReport
    ) -> CommitResult | None:
        """Commit a chunk (the changes as uploaded); notes the server refuses as credentials
        are held and the rest committed again (a refused commit stored nothing). None:
        nothing was left to send."""
        while chunk:
            try:
                sent = [s for _, s in chunk]
                return self.client.commit(CommitRequest(scope=self.scope, changes=sent))
            except SecretInCommit as exc:
                refused = set(exc.ids) & {c.id for c, _ in chunk}
                if not refused:
                    raise
                for note_id in refused:
                    report.held[note_id] = (
                        "not uploaded: the sync server refused it as holding what looks like a "
                        "credential; remove the secret and it syncs"
                    )
                chunk[:] = [(c, s) for c, s in chunk if c.id not in refused]
                self._check_abort()
        return None

    def _accepted(
        self, change: Change, sent: Change, entry: Entry | None, *, set_base: bool
    ) -> None:
        """Record an accepted change: `change` in plaintext, `sent` as uploaded."""
        if change.op == "delete":
            self.baseline.drop_base(change.id)
            self.baseline.set_remote(
                change.id, RemoteEntry(sent.base or "", deleted_at=self._clock())
            )
        else:
            assert change.rev is not None and change.text is not None and sent.rev is not None
            wire = entry.rev if entry else sent.rev
            if set_base:
                data = change.text.encode("utf-8")
                server_rev = wire if self.wire.sealed else None
                self.baseline.set_base(change.id, change.rev, data, server_rev=server_rev)
            self.baseline.set_remote(change.id, RemoteEntry(wire))
        self.baseline.release(change.id)

    def _server_body(self, change: Change, server: ServerView) -> int:
        """Body size of the server's version a change replaces (0: none, or not known here)."""
        if change.base is None:
            return 0
        data = server.texts.get(change.base)
        if data is None:
            base = self.baseline.base(change.id)
            data = base.data if base is not None and base.rev == change.base else None
        return _body_bytes_of(data)

    def _within_quota(
        self, changes: list[Change], server: ServerView, report: PassReport
    ) -> list[Change]:
        quotas = self.client.quotas
        live = len(server.live)
        kept: list[Change] = []
        for change in changes:
            if change.op == "put" and change.text is not None:
                body = _body_bytes(change.text)
                # A lowered quota only blocks growth: a note already over it on the
                # server may still shrink (the server makes the same check).
                if body > quotas.max_body_bytes and body > self._server_body(change, server):
                    report.held[change.id] = (
                        f"the body is {body} bytes, over the server's limit of "
                        f"{quotas.max_body_bytes} bytes; it stays on this machine"
                    )
                    continue
                if change.base is None and change.id not in server.live:
                    if live >= quotas.max_notes:
                        report.held[change.id] = (
                            f"the server holds its limit of {quotas.max_notes} notes for this "
                            "scope; the note stays on this machine"
                        )
                        continue
                    live += 1
            kept.append(change)
        return kept


def _guarded(changes: list[Change], report: PassReport) -> list[Change]:
    """The changes without uploads that look like they hold a credential (each held, with
    the kinds and places of what was found — never the value)."""
    kept: list[Change] = []
    for change in changes:
        if change.op == "put" and change.text is not None:
            try:
                check_secrets(parse_note(change.text.encode("utf-8"), file_id=change.id))
            except SecretRefused as exc:
                places = dict.fromkeys(f"{k} ({f}, line {n})" for k, f, n in exc.findings)
                report.held[change.id] = (
                    "not uploaded: it looks like it holds a credential — "
                    f"{', '.join(places)}; remove the secret (store "
                    "where it lives, e.g. an environment variable name) and it syncs"
                )
                continue
            except MemdirError:
                pass  # unparsable: the server refuses it, naming the note
        kept.append(change)
    return kept


def _body_bytes_of(data: bytes | None) -> int:
    return 0 if data is None else _body_bytes(data.decode("utf-8", errors="replace"))


def _body_bytes(text: str) -> int:
    try:
        return parse_note(text.encode("utf-8")).body_bytes
    except ParseError:
        return len(text.encode("utf-8"))


def _chunks(changes: list[_T], size: int) -> Iterator[list[_T]]:
    for start in range(0, len(changes), max(1, size)):
        yield changes[start : start + size]
