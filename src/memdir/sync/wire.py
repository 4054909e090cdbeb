"""How one scope's note texts travel and rest in sync state: plain, or sealed end to end (§8.2).

A scope whose note directory is encrypted (it has the `.memdir-encrypted` marker) sends
every note text sealed: ``seal(keys, plaintext, kind=WIRE, context="<scope>/<note id>")``
where the scope is the server's name for it (`ScopeRef.key`: ``user`` or
``project/<id>``, the same on every machine of the account). The wire revision is the
SHA-256 of that sealed text, so the server's own ``rev == sha256(text)`` check holds and
it stores ciphertext it cannot read. Every text that arrives for such a scope must be
sealed and open under exactly that context: a sealed text moved to another note id (or
scope), a plain text for an encrypted scope, or a text sealed by another key is refused
and nothing is written.

The notes of an end-to-end encrypted team (§12) travel sealed with the team's current
epoch key instead (`TeamSealing`, whatever this machine's directory is), and open with
whichever epoch key the text names; on this machine they rest as its directory keeps
them.

A directory without the marker that meets sealed texts (a second machine joining) is
marked encrypted with the home's key id before any of them is written, so plaintext
never lands on its disk; without a keyring, or while locked, the scope stops with
`Locked`.

`WireForm.translate` turns the server's view of an encrypted scope into plaintext
revisions (each server revision translated only for the note id the baseline recorded
it under) and `WireForm.changes` seals the uploads. `StateSeal` seals the copies the
sync state keeps on this machine (baselines, the server's side of a conflict) with kind
STATE while the directory is encrypted.
"""

from __future__ import annotations

from memdir.crypto.seal import Kind, is_sealed, key_id_of, open_sealed, seal
from memdir.errors import IntegrityError, LimitExceeded, Locked, Remedy, SyncFailed
from memdir.store import NoteDirectory
from memdir.store.sealing import Marker, Sealer, write_marker
from memdir.sync.baseline import Baseline
from memdir.sync.comparison import PassReport, ServerView
from memdir.sync.protocol import Change, is_sealed_text, rev_of
from memdir.sync.teamkeys import TeamSealing

__all__ = ["StateSeal", "WireForm"]

_NO_KEYRING = (
    "the sync server holds the {scope} notes encrypted, and this memdir home has no "
    "keyring to open them: unlock with the account's password (or its recovery key) — "
    "`memdir unlock` fetches the keyring from the server; nothing was written"
)


def _sealer(directory: NoteDirectory, what: str) -> Sealer:
    sealer = directory.sealer
    if sealer is None:
        raise Locked(_NO_KEYRING.format(scope=what), hint=Remedy.UNLOCK)
    return sealer


class StateSeal:
    """Seals a sync state copy while the directory is encrypted; opens sealed ones."""

    def __init__(self, directory: NoteDirectory) -> None:
        self.directory = directory

    def seal(self, context: str, data: bytes) -> bytes:
        """`data` as the sync state stores it: sealed when the directory is encrypted."""
        if not data or self.directory.marker() is None:
            return data
        sealer = _sealer(self.directory, self.directory.scope.value)
        return sealer.seal(Kind.STATE, context, data)

    def open(self, context: str, data: bytes) -> bytes:
        """The plaintext of a stored copy (a plain one as it is)."""
        if not is_sealed(data):
            return data
        sealer = _sealer(self.directory, self.directory.scope.value)
        return open_sealed(
            sealer.keys(), data, kind=Kind.STATE, context=context, where="a sync state copy"
        ).data


class WireForm:
    """The wire form of one scope's note texts."""

    def __init__(
        self, directory: NoteDirectory, scope: str, team: TeamSealing | None = None
    ) -> None:
        self.directory = directory
        #: The server's name of the scope (`ScopeRef.key`), bound into every sealed text.
        self.scope = scope
        #: An encrypted team's keys: texts travel sealed with them instead.
        self.team = team
        self._sealed: bool | None = None

    @property
    def sealed(self) -> bool:
        """Whether texts travel sealed: an encrypted team's, or the local directory is
        encrypted (read from its marker once per comparison: see `refresh`)."""
        if self.team is not None:
            return True
        if self._sealed is None:
            self._sealed = self.directory.marker() is not None
        return self._sealed

    def refresh(self) -> None:
        """Read the directory's marker again at the next question (a new comparison)."""
        self._sealed = None

    def context(self, note_id: str) -> str:
        """The associated data naming a wire text: scope and note id."""
        return f"{self.scope}/{note_id}"

    def encode(self, note_id: str, plain: bytes) -> bytes:
        """The text to upload for a note's plaintext (sealed when the scope is encrypted)."""
        if not self.sealed:
            return plain
        if self.team is not None:
            keys = self.team.sealing_keys()
            return seal(keys, plain, kind=Kind.WIRE, context=self.context(note_id))
        sealer = _sealer(self.directory, self.directory.scope.value)
        marker = self.directory.marker()
        if marker is not None:
            sealer.check(marker, self.directory.path)
        return seal(sealer.keys(), plain, kind=Kind.WIRE, context=self.context(note_id))

    def decode(self, note_id: str, text: bytes) -> bytes:
        """The plaintext of a downloaded text of `note_id`, checked against the scope's form.

        A sealed text for a plain directory first marks the directory encrypted (`join`);
        a plain text for an encrypted one is refused (SyncFailed), and so is a sealed text
        that does not open as this note of this scope (IntegrityError). Nothing is written
        here either way."""
        if is_sealed(text) and not self.sealed:
            self.join(text)
        if not self.sealed:
            return text
        if not is_sealed(text):
            raise SyncFailed(
                f"the sync server sent note {note_id} of the encrypted {self.scope} notes in "
                "plain text; it was not written (an older or unencrypted machine may have "
                "uploaded it: encrypt that machine's notes too)"
            )
        if self.team is not None:
            keys = self.team.opening_keys(key_id_of(text))
        else:
            keys = _sealer(self.directory, self.directory.scope.value).keys()
        return open_sealed(
            keys,
            text,
            kind=Kind.WIRE,
            context=self.context(note_id),
            where=f"the server's text of note {note_id}",
        ).data

    def join(self, text: bytes) -> None:
        """Mark the plain local directory encrypted with the home's key (a sealed text of
        that key arrived); `Locked` without a keyring or while locked, IntegrityError when
        the text names another key. Done before any pulled note is written."""
        sealer = _sealer(self.directory, self.directory.scope.value)
        keys = sealer.keys()  # Locked while locked: nothing marked, nothing written
        found = key_id_of(text)
        if found != keys.key_id:
            shown = found.hex() if found is not None else "an unreadable key id"
            raise IntegrityError(
                f"the sync server holds the {self.scope} notes sealed by another key ({shown}) "
                f"than this memdir home's ({sealer.key_id}); nothing was written"
            )
        with self.directory.lock():
            if self.directory.marker() is None:
                write_marker(self.directory.path, Marker(sealer.key_id, "encrypted"))
        self._sealed = True

    def translate(self, view: ServerView, baseline: Baseline) -> ServerView:
        """For an encrypted scope, the view with plaintext revisions (`wire` keeps the
        server's) and its texts opened; a plain scope's view as it is.

        A sealed text arriving for a plain directory marks it encrypted first
        (`join`). Each text must open as the note that lists it (under every id
        that lists it): a text replayed under another id is refused. A server revision is
        translated only for the note id the baseline recorded it for."""
        view.wire = dict(view.live)
        listed: dict[str, list[str]] = {}
        for note_id, rev in sorted(view.live.items()):
            listed.setdefault(rev, []).append(note_id)
        sealed = [t for r, t in view.texts.items() if r in listed and is_sealed_text(t)]
        if sealed and not self.sealed:
            self.join(sealed[0])  # before anything is written here
        if not self.sealed:
            return view
        raw, view.texts = view.texts, {}
        opened: dict[tuple[str, str], str] = {}
        for wire_rev, text in sorted(raw.items()):
            for note_id in listed.get(wire_rev, ()):
                try:
                    plain = self.decode(note_id, text)
                except (IntegrityError, Locked, SyncFailed) as exc:
                    if self.team is None:
                        raise
                    # One member's text that does not open here holds that note back,
                    # never the team's other notes.
                    view.unreadable[note_id] = f"not synced: {exc}"
                    continue
                opened[note_id, wire_rev] = rev_of(plain)
                view.texts[rev_of(plain)] = plain
        bases, wires = baseline.bases(), baseline.server_revs()
        held = {
            c.id: (c.server_rev, rev_of(c.server_data))
            for c in baseline.conflicts()
            if c.server_rev is not None and c.server_data is not None
        }

        def plain_of(note_id: str, wire_rev: str) -> str:
            if (note_id, wire_rev) in opened:
                return opened[note_id, wire_rev]
            if wires.get(note_id) == wire_rev:
                return bases[note_id]
            if note_id in held and held[note_id][0] == wire_rev:
                return held[note_id][1]
            return wire_rev  # unknown here: matches no plaintext revision

        view.live = {i: plain_of(i, r) for i, r in view.live.items()}
        view.tombstones = {i: plain_of(i, r) for i, r in view.tombstones.items()}
        return view

    def changes(
        self,
        changes: list[Change],
        server: ServerView,
        limit: int,
        report: PassReport | None = None,
    ) -> list[tuple[Change, Change]]:
        """(plaintext change, change as uploaded) for each change: sealed for an encrypted
        scope, against the server's revisions. A sealed text over `limit` bytes (the
        server's `sealed_size_limit`) is held (with `report`; without, LimitExceeded)."""
        if not self.sealed:
            return [(c, c) for c in changes]
        out: list[tuple[Change, Change]] = []
        for change in changes:
            base = None if change.base is None else server.wire.get(change.id, change.base)
            if change.op == "delete":
                out.append((change, Change(id=change.id, op="delete", base=base)))
                continue
            assert change.text is not None
            text = self.encode(change.id, change.text.encode("utf-8"))
            if len(text) > limit:
                message = (
                    f"sealed, note {change.id} is {len(text)} bytes, over the server's limit of "
                    f"{limit}; it stays on this machine"
                )
                if report is None:
                    raise LimitExceeded(message)
                report.held[change.id] = message
                continue
            sealed = Change(
                id=change.id, op="put", base=base, rev=rev_of(text), text=text.decode("ascii")
            )
            out.append((change, sealed))
        return out
