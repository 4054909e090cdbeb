"""The sync client of one `Memory`: sign-in, the switch, scope binding, passes, conflict resolution.

Each logical scope (the user's notes, each project's notes) is bound to the first
account and server origin that synced it; signed in elsewhere, that scope pauses and
says why (§7.1) — there is no one-click rebinding. Resolving a conflict only changes
this machine (the note file and the baseline); the next pass uploads the outcome.

The HTTP client, the pass scope_pass and the wire models (httpx, pydantic, merge3) are
imported by the methods that talk to a server: reading the switch, the status or the
held conflicts (every agent view does) must not pay for them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.core import Note, Scope, make_id, parse_note, render_note
from memdir.core.vocab import KeepSide, WriteEvent, choices, parse_choice
from memdir.errors import (
    Conflict,
    IntegrityError,
    InvalidInput,
    Locked,
    MemdirError,
    NotFound,
    ParseError,
    Remedy,
    SyncFailed,
    SyncRefused,
    describe,
)
from memdir.files.atomic import ensure_private_dir
from memdir.files.lock import DirLock
from memdir.store import ScopeStore, revision_of
from memdir.sync.account import Credentials, SyncAccount, check_token
from memdir.sync.baseline import Baseline, Binding, HeldConflict
from memdir.sync.comparison import PassReport
from memdir.sync.wire import StateSeal

if TYPE_CHECKING:
    import httpx

    from memdir.crypto.seal import SealKeys
    from memdir.sync.batch import BatchResult
    from memdir.sync.client import SyncClient
    from memdir.sync.protocol import ScopeRef, TeamDoc
    from memdir.sync.teamkeys import TeamSealing

__all__ = [
    "ConflictView",
    "Replica",
    "Resolution",
    "ScopeStatus",
    "SyncRun",
    "SyncStatus",
]


@dataclass(frozen=True, slots=True)
class ScopeStatus:
    """Sync state of one scope on this machine."""

    scope: str
    bound_to: str | None
    paused: str | None
    last_sync: int | None
    version: int | None
    conflicts: int
    #: The team whose shared notes these are (§12), None for the account's own.
    team: str | None = None


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
    #: The paused scopes whose notes are end-to-end encrypted and could not be opened.
    locked: set[str] = field(default_factory=set)

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


_MARKERS = ("<<<<<<< ", ">>>>>>> ", "||||||| ")


class Replica:
    """Sync for the scopes of one `Memory`."""

    def __init__(
        self,
        root: Path,
        stores: Mapping[Scope, ScopeStore],
        project_id: Callable[[], str] | None,
        *,
        clock: Callable[[], int],
        lock_timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        peek_project_id: Callable[[], str | None] | None = None,
    ) -> None:
        self.root = root
        self.account = SyncAccount(root)
        self._stores = stores
        self._project_id = project_id
        #: The project's id as reading sees it, writing nothing (status must not write).
        self._peek_project_id = peek_project_id or project_id
        self._clock = clock
        self._transport = transport
        self._lock_timeout = lock_timeout
        self._baselines: dict[Scope, Baseline] = {}

    def close(self) -> None:
        """Close the scopes' sync state databases."""
        for baseline in self._baselines.values():
            baseline.close()
        self._baselines.clear()

    def _baseline(self, scope: Scope) -> Baseline:
        baseline = self._baselines.get(scope)
        if baseline is None:
            store = self._stores[scope]
            baseline = Baseline(self.root / f"{store.state_key}.sqlite")
            baseline.sealing = StateSeal(store.directory)  # an encrypted scope's copies
            self._baselines[scope] = baseline
        return baseline

    def _existing(self, scope: Scope) -> Baseline | None:
        """The scope's sync state if it ever synced (reading never creates the file)."""
        if scope in self._baselines:
            return self._baselines[scope]
        if (self.root / f"{self._stores[scope].state_key}.sqlite").exists():
            return self._baseline(scope)
        return None

    def _pass_lock(self, scope: Scope) -> DirLock:
        """One pass per scope at a time on this machine (a CLI run beside a long-running
        process's background sync waits for the other's pass to end)."""
        key = self._stores[scope].state_key
        return DirLock(
            self.root / f"{key}.lock", timeout=self._lock_timeout, label=f"the sync of {key}"
        )

    def _ref(self, scope: Scope) -> ScopeRef:
        from memdir.sync.protocol import ScopeRef

        if scope is Scope.USER:
            return ScopeRef(kind="user")
        if self._project_id is None:
            raise InvalidInput("no project is open")
        project = self._project_id()
        return ScopeRef(kind="project", project=project, team=self.account.team_of(project))

    def _team(self, scope: Scope) -> str | None:
        """The team whose shared notes the scope is (§12), None for the account's own."""
        if scope is Scope.USER or self._peek_project_id is None:
            return None
        project = self._peek_project_id()
        return None if project is None else self.account.team_of(project)

    def _client(self, credentials: Credentials) -> SyncClient:
        from memdir.sync.client import SyncClient

        return SyncClient(credentials.server, credentials.token, transport=self._transport)

    # -- account ---------------------------------------------------------------------

    def login(self, server: str, token: str) -> SyncStatus:
        """Check the token against the server and store the sign-in (0600)."""
        from memdir.sync.client import SyncClient

        token = check_token(token)
        with SyncClient(server, token, transport=self._transport) as client:
            identity = client.identity()
        self.account.save(Credentials(server.rstrip("/"), identity.user, token))
        return self.status()

    def logout(self) -> bool:
        """Forget the stored sign-in (the switch and the scope bindings stay)."""
        return self.account.sign_out()

    def set_enabled(self, on: bool) -> SyncStatus:
        """Turn cloud requests on or off for every scope (persisted)."""
        self.account.set_enabled(on)
        return self.status()

    def _paused(self, scope: Scope, credentials: Credentials | None) -> str | None:
        baseline = self._existing(scope)
        if credentials is None or baseline is None:
            return None
        from memdir.sync.client import origin_of

        bound = baseline.binding
        here = Binding(credentials.user, origin_of(credentials.server), self._team(scope))
        if bound is None or bound == here:
            return None
        if (bound.user, bound.origin) == (here.user, here.origin):
            return (
                f"the {scope.value} notes were first synced as {bound.describe()}; they are "
                f"now set to sync as {here.describe()}. Sync is paused for them: `memdir team "
                "link --move` (or `unlink --move`) moves them (memdir never moves notes by itself)"
            )
        return (
            f"the {scope.value} notes were first synced as {bound.describe()}; you are signed in "
            f"as {here.describe()}. Sync is paused for them: sign in to that account again to "
            "go on (memdir never moves notes to another account by itself)"
        )

    def status(self) -> SyncStatus:
        """The switch, the sign-in and each scope's sync state."""
        credentials = self.account.credentials()
        scopes = []
        for scope in self._stores:
            baseline = self._existing(scope)
            bound = baseline.binding if baseline else None
            scopes.append(
                ScopeStatus(
                    scope=scope.value,
                    bound_to=bound.describe() if bound else None,
                    paused=self._paused(scope, credentials),
                    last_sync=baseline.last_sync if baseline else None,
                    version=baseline.version if baseline else None,
                    conflicts=len(baseline.conflicts()) if baseline else 0,
                    team=self._team(scope),
                )
            )
        return SyncStatus(
            enabled=self.account.enabled,
            server=credentials.server if credentials else None,
            user=credentials.user if credentials else None,
            scopes=tuple(scopes),
        )

    # -- passes ----------------------------------------------------------------------

    def keys(self) -> dict[str, Scope]:
        """Scheduler keys (the scopes' state names) of the open scopes."""
        return {self._stores[s].state_key: s for s in self._stores}

    def run(
        self, scopes: tuple[Scope, ...] | None = None, *, abort: threading.Event | None = None
    ) -> SyncRun:
        """One pass over each scope (both by default); raises when sync cannot run at all."""
        from memdir.sync.keyring import publish_keyring
        from memdir.sync.scope_pass import ScopePass

        if not self.account.enabled:
            raise SyncRefused("sync is off; notes stay local", hint=Remedy.SYNC_ON)
        credentials = self.account.credentials()
        if credentials is None:
            raise SyncRefused("not signed in to a sync server", hint=Remedy.SYNC_LOGIN)
        for scope in scopes or ():
            if scope not in self._stores:
                raise InvalidInput(f"there are no {scope.value} notes here to sync")
        run = SyncRun()
        locked: list[Locked] = []
        with self._client(credentials) as client:
            for scope in scopes or tuple(self._stores):
                paused = self._paused(scope, credentials)
                try:
                    ref = self._ref(scope)
                except MemdirError as exc:  # e.g. a damaged .memdir/project.json
                    paused = paused or f"the project's identity cannot be read: {describe(exc)}"
                read_only = team_keys = None
                if paused is None and ref.team is not None:
                    try:
                        paused, read_only, team_keys = self._team_check(
                            client, scope, ref.team, credentials.user
                        )
                    except Locked as exc:  # an encrypted team's keys: locked, or none shared
                        locked.append(exc)
                        run.paused[scope.value] = describe(exc)
                        run.locked.add(scope.value)
                        continue
                    except (Conflict, IntegrityError, InvalidInput, SyncRefused) as exc:
                        # The team's keys could not be brought up to date (not the server
                        # being unreachable: that fails the run as always).
                        run.paused[scope.value] = f"team {ref.team}: {describe(exc)}"
                        continue
                if paused is not None:
                    run.paused[scope.value] = paused
                    continue
                baseline = self._baseline(scope)
                scope_pass = ScopePass(
                    self._stores[scope],
                    baseline,
                    client,
                    ref,
                    abort=abort,
                    still_on=lambda: self.account.enabled,
                    clock=self._clock,
                    read_only=read_only,
                    team=team_keys,
                )
                with self._pass_lock(scope):
                    # Checked again under the lock: `memdir team link` may have moved these
                    # notes between the check above and now.
                    if self._paused(scope, credentials) or self._ref(scope) != ref:
                        run.paused[scope.value] = (
                            f"the {scope.value} notes were linked or moved meanwhile; sync again"
                        )
                        continue
                    if baseline.binding is None:
                        # Bound before the first pass writes anything: a pass that fails
                        # half-way still ties these notes to this account (§7.1).
                        baseline.bind(Binding(credentials.user, client.origin, ref.team))
                    try:
                        report = scope_pass.run()
                        if scope_pass.wire.sealed:
                            publish_keyring(client, self.root.parent)
                    except Locked as exc:
                        # Encrypted and locked (or no keyring here): nothing of this scope
                        # was read or written; the other scopes go on.
                        locked.append(exc)
                        run.paused[scope.value] = describe(exc)
                        run.locked.add(scope.value)
                        continue
                    except Conflict as exc:
                        if team_keys is None:
                            raise
                        # An encrypted team's key epoch ended under the pass (a removal):
                        # this scope waits for the next sync, the others go on.
                        run.paused[scope.value] = f"team {ref.team}: {describe(exc)}"
                        continue
                run.reports.append(report)
        if locked and not run.reports:
            raise locked[0]
        return run

    def _team_check(
        self, client: SyncClient, scope: Scope, team: str, user: str
    ) -> tuple[str | None, str | None, TeamSealing | None]:
        """(why the team's notes pause, why this machine only pulls them, the keys of an
        end-to-end encrypted team): the server is asked for the caller's role (and an
        encrypted team's keys) before every pass of a team's notes. Locked when an
        encrypted team's keys cannot be opened here (locked, no keyring, none shared)."""
        from memdir.sync.teamkeys import team_sealing

        try:
            doc = client.team(team, history=False)
        except (NotFound, SyncRefused) as exc:
            return f"team {team}: {describe(exc)}", None, None
        directory = self._stores[scope].directory
        sealing = None
        if doc.keys is None and self.account.team_encrypted(client.origin, team):
            return (
                f"team {team} is end-to-end encrypted, but the sync server at {client.origin} "
                "now lists it as a plain team (an older server, or one whose team document was "
                "changed): nothing is sent, so no note leaves this machine unsealed",
                None,
                None,
            )
        if doc.keys is not None:
            self.account.mark_team_encrypted(client.origin, team)
            home = self._home_keys(f"nothing of team {team}'s notes was sent")
            try:
                sealing = team_sealing(client, doc, user, home)
            except Conflict as exc:  # another member key for this account: not replaced
                return describe(exc), None, None
        elif directory.marker() is not None:
            return (
                f"the {scope.value} notes are encrypted with your own key and linked to team "
                f"{team}, whose notes are not end-to-end encrypted: they are not sent "
                "(`memdir team unlink`, decrypt them, or use a team made with `memdir team "
                "create --encrypted`)",
                None,
                None,
            )
        if doc.you == "reader":
            return (
                None,
                f"not uploaded: you are a reader of team {team}, so your changes to its notes "
                "stay on this machine",
                sealing,
            )
        return None, None, sealing

    def _signed_in(self) -> Credentials:
        credentials = self.account.credentials()
        if credentials is None:
            raise SyncRefused("not signed in to a sync server", hint=Remedy.SYNC_LOGIN)
        return credentials

    def create_team(self, team: str, *, encrypted: bool = False) -> TeamDoc:
        """Create a team on the signed-in server, owned by this account; `encrypted`: its
        notes end-to-end encrypted, with epoch 1 wrapped for this home's member key."""
        from memdir.sync.teamkeys import first_epoch

        credentials = self._signed_in()
        keys = None
        if encrypted:
            home = self._home_keys("no team was created")
            keys = first_epoch(team, credentials.user, home)
        with self._client(credentials) as client:
            doc = client.create_team(team, keys)
            if keys is not None:
                # Remembered first: whatever the server answers, nothing is sent to the
                # team from this machine in plain text.
                self.account.mark_team_encrypted(client.origin, team)
                if doc.keys is None:
                    raise SyncFailed(
                        f"the sync server at {client.origin} made team {team} without keys (it "
                        "does not support end-to-end encrypted teams: upgrade it). Nothing is "
                        f"sent to the team from this machine; ask the server's operator to "
                        "remove the team"
                    )
            return doc

    def enrol_team_key(self, team: str) -> TeamDoc:
        """Make this home's member key the account's in an encrypted team, replacing the
        one enrolled (another member's sync then wraps the team's keys for it)."""
        from memdir.sync.teamkeys import replace_member_key

        home = self._home_keys("nothing was changed")
        with self._client(self._signed_in()) as client:
            return replace_member_key(client, team, home)

    def _home_keys(self, outcome: str) -> SealKeys:
        """This home's unlocked keys (a member key comes from them); Locked without."""
        sealers = [s.directory.sealer for s in self._stores.values()]
        sealer = next((s for s in sealers if s is not None), None)
        if sealer is None:
            raise Locked(
                "an end-to-end encrypted team needs this memdir home's keyring to hold your "
                "member key: `memdir unlock` fetches your account's from the sync server "
                f"(`memdir encrypt` makes the account's first one); {outcome}",
                hint=Remedy.UNLOCK,
            )
        return sealer.keys()

    def team(self, team: str) -> TeamDoc:
        """A team of this account's: members, roles, revocations and its history."""
        with self._client(self._signed_in()) as client:
            return client.team(team)

    def change_team(self, team: str, action: str, member: str, role: str | None) -> TeamDoc:
        """One membership change, made against the team as the server has it now."""
        from pydantic import ValidationError

        from memdir.sync.protocol import TeamChange, check_team_name

        check_team_name(team)
        try:
            change_of = TeamChange.model_validate(
                {"parent": "0" * 64, "action": action, "member": member, "role": role}
            )
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'change'}: {e['msg']}"
                for e in exc.errors()
            )
            raise InvalidInput(f"not a team change: {problems}") from None
        with self._client(self._signed_in()) as client:
            head = client.team(team, history=False).head
            return client.change_team(team, change_of.model_copy(update={"parent": head}))

    def link_team(self, team: str | None, *, move: bool = False) -> SyncStatus:
        """Sync this project's notes as `team`'s shared notes (None: as the account's own).

        Notes that synced elsewhere before are moved only with `move`, and only by the
        account they synced as: their sync state is reset, so the next pass is a first
        sync that merges them with the other side (uploads what is only here, downloads
        what is only there, holds conflicts; a note the other side deleted in exactly the
        version held here is deleted here too, backed up first). Refused while conflicts
        are held. The state is reset in place, under the scope's pass lock, so another
        process of this machine syncing the same notes sees the reset at its next pass."""
        from memdir.sync.client import origin_of
        from memdir.sync.protocol import check_team_name

        if self._project_id is None or Scope.PROJECT not in self._stores:
            raise InvalidInput("no project is open: run this inside the project to share")
        if team is not None:
            check_team_name(team)
        project = self._project_id()
        credentials = self.account.credentials()
        ensure_private_dir(self.root)
        with self._pass_lock(Scope.PROJECT):
            baseline = self._existing(Scope.PROJECT)
            bound = baseline.binding if baseline is not None else None
            if baseline is not None and bound is not None and bound.team != team:
                here = (credentials.user, origin_of(credentials.server)) if credentials else None
                if here != (bound.user, bound.origin):
                    raise Conflict(
                        f"this project's notes synced as {bound.describe()}; only that account "
                        "can move them: sign in as it first"
                    )
                if not move:
                    where = f"team {bound.team}'s notes" if bound.team else "your own notes"
                    raise Conflict(
                        f"this project's notes synced as {where} at {bound.origin}; pass "
                        "--move to sync them the new way (a first sync merges them with the "
                        "other side)"
                    )
                if baseline.conflicts():
                    raise Conflict(
                        "this project's notes hold sync conflicts; resolve them first "
                        "(`memdir sync conflicts`)"
                    )
                if self._pending(Scope.PROJECT, baseline):
                    raise Conflict(
                        "this project's notes have changes not synced yet (edits, deletions, "
                        "or forgotten notes): run `memdir sync` first, then move them"
                    )
                baseline.reset()
            self.account.link_team(project, team)
        return self.status()

    def _pending(self, scope: Scope, baseline: Baseline) -> bool:
        """Whether the scope has local changes the baseline has not seen synced: a note
        edited, created or deleted here since the last pass."""
        directory = self._stores[scope].directory
        bases = baseline.bases()
        on_disk = {i for i in directory.ids_on_disk() if not i.startswith(".")}
        if on_disk != bases.keys():
            return True
        for note_id, rev in bases.items():
            data = directory.read_bytes(note_id)
            if data is None or revision_of(data) != rev:
                return True
        return False

    def commit_first(
        self,
        scope: Scope,
        writes: Mapping[str, Note | None],
        reason: str,
        *,
        expected: Mapping[str, str] | None = None,
        audit: Sequence[tuple[str, Mapping[str, str | int | None]]] = (),
    ) -> BatchResult | None:
        """Commit a batch to the server before writing it here; None when sync does not apply.

        Sync applies when it is on, signed in, and the scope is bound to this account
        (it synced before); otherwise the caller writes locally and the batch syncs
        later like any local edit.
        """
        from memdir.sync.batch import commit_first
        from memdir.sync.scope_pass import ScopePass

        credentials = self.account.credentials()
        if not self.account.enabled or credentials is None or scope not in self._stores:
            return None
        baseline = self._existing(scope)
        if baseline is None or baseline.binding is None or self._paused(scope, credentials):
            return None
        if self._team(scope) is not None:
            return None  # a team's notes: written here, synced by the next pass
        ref = self._ref(scope)
        with self._client(credentials) as client:
            scope_pass = ScopePass(self._stores[scope], baseline, client, ref, clock=self._clock)
            with self._pass_lock(scope):
                # Checked again under the lock: `memdir team link --move` may have reset
                # these notes' state or linked them meanwhile; then the batch is written
                # here and synced by the next pass.
                if (
                    baseline.binding is None
                    or self._paused(scope, credentials)
                    or self._team(scope) is not None
                    or self._ref(scope) != ref
                ):
                    return None
                return commit_first(scope_pass, writes, reason, expected=expected, audit=audit)

    # -- conflicts -------------------------------------------------------------------

    def conflicts(self) -> list[ConflictView]:
        """Every held-back note of the open scopes."""
        views = []
        for scope in self._stores:
            baseline = self._existing(scope)
            if baseline is None:
                continue
            store = self._stores[scope]
            for held in baseline.conflicts():
                base = baseline.base(held.id)
                local = store.directory.read_bytes(held.id)
                views.append(
                    ConflictView(
                        id=held.id,
                        scope=scope.value,
                        reasons=held.reasons,
                        baseline=_text(base.data) if base is not None else None,
                        local=_text(local),
                        server=_text(held.server_data),
                        found_at=held.found_at,
                    )
                )
        return views

    def _held(self, note_id: str, scope: Scope | None) -> tuple[Scope, HeldConflict]:
        for candidate in (scope,) if scope is not None else tuple(self._stores):
            baseline = self._existing(candidate) if candidate in self._stores else None
            if baseline is None:
                continue
            held = baseline.conflict(note_id)
            if held is not None:
                return candidate, held
        raise NotFound(f"note {note_id} has no sync conflict")

    def draft(self, note_id: str, scope: Scope | None = None) -> str:
        """A merged draft of a conflicted note for hand editing (markers where sides clash)."""
        from memdir.sync.merge import merge_notes

        found, held = self._held(note_id, scope)
        store, baseline = self._stores[found], self._baseline(found)
        local = store.directory.read_bytes(note_id)
        base = baseline.base(note_id)
        notes = [
            _parsed(d, note_id) for d in (base.data if base else None, local, held.server_data)
        ]
        outcome = merge_notes(*notes, max_body_bytes=2**31)
        draft = outcome.result if outcome.clean else outcome.draft
        draft = draft or notes[1] or notes[2]
        if draft is None:
            raise NotFound(f"note {note_id} is deleted on both sides; nothing to edit")
        return render_note(draft).decode("utf-8")

    def resolve(
        self,
        note_id: str,
        *,
        keep: KeepSide | str | None = None,
        text: str | None = None,
        scope: Scope | None = None,
    ) -> Resolution:
        """Settle a conflict on this machine: keep local, server, both, or an edited text."""
        if (keep is None) == (text is None):
            raise InvalidInput(
                f"give exactly one of a side to keep ({', '.join(choices(KeepSide))}) "
                "or an edited text"
            )
        side = parse_choice(KeepSide, keep, "the side to keep") if keep is not None else None
        found, _ = self._held(note_id, scope)
        with self._pass_lock(found):  # not while a pass of this scope runs
            return self._resolve(found, note_id, side, text)

    def _resolve(
        self, found: Scope, note_id: str, keep: KeepSide | None, text: str | None
    ) -> Resolution:
        held = self._held(note_id, found)[1]
        store, baseline = self._stores[found], self._baseline(found)
        local = store.directory.read_bytes(note_id)
        local_rev = revision_of(local) if local is not None else None
        backups: list[str] = []
        new_id: str | None = None

        def set_aside(data: bytes | None, whose: str) -> None:
            if data is not None:
                backups.append(store.backup(note_id, data, f"sync conflict: {whose} set aside").id)

        if keep is KeepSide.LOCAL:
            set_aside(held.server_data, "the server's version")
        elif keep is KeepSide.SERVER:
            set_aside(local, "this machine's version")
            if held.server_data is None:
                if local is not None:
                    store.remove(note_id, backup_reason=None, event=WriteEvent.RESOLVE_DELETE)
            else:
                self._write(store, note_id, held.server_data, local_rev)
        elif keep is KeepSide.BOTH:
            if held.server_data is None or local is None:
                raise InvalidInput(
                    "one side deleted the note, so there are not two versions to keep; "
                    "use --keep local or --keep server"
                )
            server_note = _parsed(held.server_data, note_id)
            assert server_note is not None
            new_id = make_id(server_note.summary, taken=store.directory.ids_on_disk())
            copy = replace(server_note, id=new_id)
            store.save(copy, event=WriteEvent.RESOLVE, expect_revision="")
        else:
            assert text is not None
            data = _edited(text, note_id)
            set_aside(local, "this machine's version")
            set_aside(held.server_data, "the server's version")
            self._write(store, note_id, data, local_rev)
        with baseline.transaction():
            # The server's version becomes the baseline: the next pass sees only this
            # machine's outcome as a change and uploads it against that exact revision.
            if held.server_rev is not None and held.server_data is not None:
                rev = revision_of(held.server_data)  # of the plaintext; the server's differs
                baseline.set_base(  # when the scope travels sealed (memdir.sync.wire)
                    note_id, rev, held.server_data, server_rev=held.server_rev
                )
            else:
                baseline.drop_base(note_id)
            baseline.release(note_id)
        kept = keep.value if keep is not None else "edited"
        return Resolution(note_id, found.value, kept, new_id, tuple(backups))

    @staticmethod
    def _write(store: ScopeStore, note_id: str, data: bytes, expected: str | None) -> None:
        note = _parsed(data, note_id)
        assert note is not None
        try:
            store.save(note, raw=data, event=WriteEvent.RESOLVE, expect_revision=expected or "")
        except Conflict:
            raise Conflict(
                f"note {note_id} changed on this machine while resolving; nothing was written — "
                "look at it again"
            ) from None

    def held(self) -> set[tuple[Scope, str]]:
        """(scope, id) of every note held back by a sync conflict (kept out of agents' view)."""
        out: set[tuple[Scope, str]] = set()
        for scope in self._stores:
            baseline = self._existing(scope)
            if baseline is not None:
                out.update((scope, c.id) for c in baseline.conflicts())
        return out

    def purge(self, scope: Scope, note_id: str) -> None:
        """Scrub the copies of a forgotten note kept for sync (forget --purge)."""
        baseline = self._existing(scope) if scope in self._stores else None
        if baseline is not None:
            with self._pass_lock(scope):
                baseline.purge(note_id)

    def holds_copy(self, scope: Scope, note_id: str) -> bool:
        """True when the sync state still keeps a text of the note."""
        baseline = self._existing(scope) if scope in self._stores else None
        if baseline is None:
            return False
        base = baseline.base(note_id)
        return bool(base and base.data) or baseline.conflict(note_id) is not None


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")


def _parsed(data: bytes | None, note_id: str) -> Note | None:
    if not data:
        return None
    try:
        return parse_note(data, file_id=note_id)
    except ParseError:
        return None


def _edited(text: str, note_id: str) -> bytes:
    if any(line.startswith(_MARKERS) for line in text.splitlines()):
        raise InvalidInput("the edited note still has conflict markers; nothing was written")
    data = text.encode("utf-8")
    try:
        note = parse_note(data, file_id=note_id)
    except (ParseError, MemdirError) as exc:
        raise InvalidInput(f"the edited note cannot be read: {exc}; nothing was written") from None
    if note.id != note_id:
        raise InvalidInput(f"the edited note must keep its id {note_id}")
    return data
