"""The note stores of one `Memory`: where machine-local state lives, the project and user
scopes, and looking notes up across them (project first, then user).

An id a person types may be a unique prefix of the note's id. `Stores.find`
resolves it once for every adapter: an exact id always wins, a prefix of several notes
is InvalidInput listing them, and an unknown id is NotFound with the closest ids ("did
you mean …", by id and by summary words). Private notes take part in prefixes and
suggestions only when the caller may see them (`hide_private=False`); an exact id
always finds one, and the adapter decides whether to show it.
"""

from __future__ import annotations

import builtins
import difflib
import os
import re
from collections.abc import Callable
from pathlib import Path

from memdir.config import Settings
from memdir.core import Note, Scope, is_valid_id, parse_scope, validate_id
from memdir.core.links import Link
from memdir.errors import InvalidInput, NotFound, Refused
from memdir.files.atomic import atomic_write, ensure_private_dir
from memdir.project import (
    ensure_project_id,
    peek_project_id,
    pending_project_id,
    refused_root,
)
from memdir.store import AuditLog, Backups, History, NoteDirectory, ScopeStore
from memdir.store.problems import skipped_message
from memdir.store.sealing import Sealer

__all__ = ["MAX_CANDIDATES", "Stores", "state_home"]

#: The order in which ids resolve and scopes are listed.
SCOPE_ORDER = (Scope.PROJECT, Scope.USER)

#: How many notes an ambiguous prefix lists, and how many "did you mean" suggests.
MAX_CANDIDATES = 10
_SUGGESTIONS = 5

#: What a typed prefix may hold: the characters of ids (a reserved file name such as
#: `con` is no id, but may begin one).
_PREFIX = re.compile(r"[a-z0-9-]{1,80}")
_WORD = re.compile(r"[^\W_]{3,}")


def state_home(settings: Settings, warn: Callable[[str], None]) -> Path:
    """Where history, backups and the audit log live: $MEMDIR_HOME when it is usable.

    When it cannot be created or written, a project keeps its notes fully usable (§1.2)
    by keeping that machine-local state in `<project>/.memdir/local/` (git-ignored).
    """
    home = settings.home
    root = settings.project_root
    try:
        # Created 0700 like ~/.ssh: user notes keep the mode an editor or git gives any
        # document (umask), and the home folder keeps other users out of all of them.
        ensure_private_dir(home)
        usable = os.access(home, os.W_OK | os.X_OK)
        problem = "it is not writable"
    except OSError as exc:
        usable, problem = False, exc.strerror or str(exc)
    if usable or root is None:
        return home
    fallback = root / ".memdir" / "local"
    ensure_private_dir(fallback)
    ignore = fallback / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, b"# machine-local memdir state, written by memdir\n*\n")
    warn(
        f"cannot use {home} ({problem}): user notes are unavailable, and this project's "
        f"history, backups and audit log are kept in {fallback}"
    )
    return fallback


class Stores:
    """The open scopes' `ScopeStore`s, their shared backups and audit log, and lookup."""

    def __init__(self, settings: Settings, home: Path, warn: Callable[[str], None]) -> None:
        self.settings = settings
        self.home = home
        self._warn = warn
        self.backups = Backups(home / "memory-backups")
        self.audit = AuditLog(home / "audit", lock_timeout=settings.lock_timeout)
        self.by_scope: dict[Scope, ScopeStore] = {}
        #: The home's sealer once it has a keyring (§8.2).
        self.sealer: Sealer | None = None
        self._project_recorded = False
        if settings.memory_dir is not None and settings.project_root is not None:
            root = settings.project_root
            # Reading never writes into the project: a git root's id is its root commit,
            # known without `.memdir/project.json`, which the first write then records.
            # Without a commit, a pending id kept in the home stands in until then.
            self.by_scope[Scope.PROJECT] = project = self._make(
                Scope.PROJECT,
                settings.memory_dir,
                lambda: History(home / "memory-history" / f"project-{self._read_id(root)}"),
            )
            project.on_change(lambda _id, _event: self._record_project(root))
        else:
            warn(_no_project_note())
        user_dir = settings.user_dir
        try:
            ensure_private_dir(user_dir)
        except OSError as exc:
            warn(
                f"user notes are unavailable: cannot create {user_dir} ({exc.strerror}); "
                "project notes work as usual"
            )
        else:
            self.by_scope[Scope.USER] = self._make(
                Scope.USER, user_dir, lambda: History(home / "memory-history" / "user")
            )

    def watch(self) -> dict[Scope, str | None]:
        """Watch every open scope's directory (see `Memory.watch_files`); why each is not."""
        out: dict[Scope, str | None] = {}
        for store in self.chosen(None):
            store.directory.watch()
            store.directory.changes()  # sets the watch up now, to tell why it cannot be
            store.directory.forget_changes()  # the next refresh looks at every file
            out[store.scope] = store.directory.watch_reason
        return out

    def find_sealer(self, find: Callable[[], Sealer | None]) -> None:
        """Ask `find` for the home's sealer when a directory needs one and has none yet."""
        for store in self.by_scope.values():
            store.directory.find_sealer = find
        self.backups.opener = find

    def attach_sealer(self, sealer: Sealer) -> None:
        """Open and seal the files of encrypted scopes with the home's `sealer` (§8.2)."""
        self.sealer = sealer
        for store in self.by_scope.values():
            store.directory.sealer = sealer
        self.backups.opener = lambda: sealer
        self.backups.sealing = self._backup_sealer

    def _backup_sealer(self, scope: str) -> Sealer | None:
        store = self.by_scope.get(Scope(scope)) if scope in {s.value for s in Scope} else None
        return store.directory.sealer_for_writes() if store is not None else None

    def _read_id(self, root: Path) -> str:
        """The id reading uses: the project's own, else the pending one kept in the home
        (InvalidInput when that cannot be kept: reading goes on, writing is refused)."""
        try:
            found = peek_project_id(root) or pending_project_id(root, self.home)
            if found is not None:
                return found
            raise FileNotFoundError("no pending id was kept")
        except OSError as exc:
            raise InvalidInput(
                f"this project has no id yet (no commit, no .memdir/project.json) and none "
                f"can be kept in {self.home / 'projects'} ({exc.strerror or exc}): make that "
                "folder writable, or commit once"
            ) from None

    def peek_project_id(self) -> str | None:
        """The open project's id as reading sees it, writing nothing (None: no project, or
        no id yet)."""
        root = self.settings.project_root
        if root is None:
            return None
        return peek_project_id(root) or pending_project_id(root, self.home, create=False)

    def project_id(self) -> str:
        """The open project's id, recorded in `.memdir/project.json` if it is not yet
        (a write or a sync); the pending id used while reading becomes it."""
        root = self.settings.project_root
        if root is None:
            raise InvalidInput("no project is open")
        pending = pending_project_id(root, self.home, create=False)
        return ensure_project_id(root, pending=pending)

    def _record_project(self, root: Path) -> None:
        if not self._project_recorded:
            self.project_id()
            self._project_recorded = True

    def _make(self, scope: Scope, path: Path, history: Callable[[], History]) -> ScopeStore:
        directory = NoteDirectory(
            scope, path, lock_timeout=self.settings.lock_timeout, max_notes=self.settings.max_notes
        )
        return ScopeStore(
            directory,
            history,
            self.backups,
            self.audit,
            max_note_bytes=self.settings.max_note_bytes,
        )

    @property
    def scopes(self) -> tuple[Scope, ...]:
        """The scopes available, project first."""
        return tuple(s for s in SCOPE_ORDER if s in self.by_scope)

    def store(self, scope: Scope) -> ScopeStore:
        """The store of `scope`; Refused when that scope is not open."""
        store = self.by_scope.get(scope)
        if store is None:
            why = (
                "no project is open here; run it inside a git repository (`git init` makes "
                "one) or name the project with `memdir --project DIR`"
                if scope is Scope.PROJECT
                else "the user directory is unavailable"
            )
            raise Refused(f"the {scope.value} scope cannot be used: {why}")
        return store

    def directory(self, scope: Scope | str) -> Path:
        """The note directory of a scope."""
        return self.store(parse_scope(scope) or Scope.PROJECT).path

    def file_stamps(
        self, scope: Scope | str | None = None
    ) -> dict[Scope, dict[str, tuple[int, int, int, int]]]:
        """(size, mtime_ns, inode, ctime_ns) of every note file of `scope` (None: each
        open scope), by id, without reading any file: what a long-lived page polls to see
        that a note changed here, in another process or in an editor."""
        return {s.scope: s.directory.stamps()[0] for s in self.chosen(scope)}

    def chosen(self, scope: Scope | str | None) -> tuple[ScopeStore, ...]:
        """The store of `scope`, or every open store (project first) for None."""
        parsed = parse_scope(scope)
        if parsed is None:
            return tuple(self.by_scope[s] for s in self.scopes)
        return (self.store(parsed),)

    def all_notes(self, scope: Scope | str | None = None) -> builtins.list[Note]:
        """Every loaded note of the chosen scopes (warns about notes above maxNotes)."""
        notes: builtins.list[Note] = []
        for store in self.chosen(scope):
            scan = store.scan()
            if scan.over_limit:
                self._warn(
                    f"the {store.scope.value} scope holds {scan.over_limit} notes above "
                    f"memory.maxNotes ({self.settings.max_notes}); the least recently changed "
                    "are not loaded"
                )
            if scan.problems:
                self._warn(
                    skipped_message(store.scope, store.path, [p.path.name for p in scan.problems])
                )
            notes.extend(scan.notes.values())
        return notes

    def find(
        self, note_id: str, scope: Scope | str | None = None, *, hide_private: bool = True
    ) -> tuple[ScopeStore, Note]:
        """The store holding note `note_id` (or the one note whose id it begins) and the
        note, project first.

        An exact id wins; a prefix of several notes is InvalidInput listing them (at most
        MAX_CANDIDATES, with summaries); no match is NotFound suggesting the closest ids.
        With `hide_private` (the default, safe for any caller) private notes are matched
        by their exact id only and never listed or suggested.
        """
        if not isinstance(note_id, str) or not _PREFIX.fullmatch(note_id):
            validate_id(note_id)  # says what is wrong with it
        wanted = parse_scope(scope)
        stores = self.chosen(wanted)
        if is_valid_id(note_id):
            for store in stores:
                note = store.get(note_id)
                if note is not None:
                    return store, note
        notes = self._visible(stores, hide_private)
        key = note_id
        matches = [(store, n) for store, n in notes if n.id.startswith(key)]
        if len(matches) == 1:
            return matches[0]
        where = f" in the {wanted.value} scope" if wanted is not None else ""
        if matches:
            shown = "\n".join(f"  {n.id}  {_clip(n.summary)}" for _, n in matches[:MAX_CANDIDATES])
            more = len(matches) - MAX_CANDIDATES
            raise InvalidInput(
                f"{note_id} is the beginning of {len(matches)} note ids{where}; give more of "
                f"the id:\n{shown}" + (f"\n  … and {more} more" if more > 0 else "")
            )
        close = _closest(key, [n for _, n in notes])
        if close:
            listed = "\n".join(f"  {n.id}  {_clip(n.summary)}" for n in close)
            raise NotFound(f"no note {note_id}{where}; did you mean:\n{listed}")
        raise NotFound(f"no note {note_id}{where}")

    def resolve(
        self,
        note_id: str,
        scope: Scope | str | None = None,
        *,
        hide_private: bool = True,
        kept: bool = False,
    ) -> str:
        """The full id `note_id` names (see `find`). With `kept`, an exact id of a note no
        longer on disk whose history remains is its own answer (history, diff, purge)."""
        if kept and is_valid_id(note_id):
            # An exact id wins over a prefix, also when its note is gone and only its
            # history is left (`pnpm` forgotten, `pnpm-x` on disk).
            stores = self.chosen(scope)
            if any(s.get(note_id) is not None or s.history.revisions(note_id) for s in stores):
                return note_id
        return self.find(note_id, scope, hide_private=hide_private)[1].id

    def _visible(
        self, stores: tuple[ScopeStore, ...], hide_private: bool
    ) -> builtins.list[tuple[ScopeStore, Note]]:
        """The notes of `stores` a prefix may match, one per id (project first)."""
        seen: set[str] = set()
        out: builtins.list[tuple[ScopeStore, Note]] = []
        for store in stores:
            for note in sorted(store.scan().notes.values(), key=lambda n: n.id):
                if note.id in seen or (hide_private and note.private):
                    continue
                seen.add(note.id)
                out.append((store, note))
        return out

    def exists(self, note_id: str) -> bool:
        """True when a file for `note_id` exists in an open scope."""
        return any(store.directory.file_for(note_id).is_file() for store in self.chosen(None))

    def taken_ids(self) -> set[str]:
        """Every id on disk in any scope, casefolded (a new id must differ from all)."""
        return {i.casefold() for s in self.by_scope.values() for i in s.directory.ids_on_disk()}

    @staticmethod
    def resolve_link(target: str, notes: dict[tuple[Scope | None, str], Note]) -> Link:
        """Where `[[target]]` points: project first, then user; scope None when dangling."""
        for scope in SCOPE_ORDER:
            note = notes.get((scope, target))
            if note is not None:
                return Link(target, scope, note.summary)
        return Link(target, None, None)


def _no_project_note() -> str:
    """The one line saying no project is open (the home folder is never one)."""
    try:
        here: Path | None = Path.cwd()
    except OSError:
        here = None
    if here is not None and refused_root(here) is not None:
        why = "the home folder is never one"
    else:
        why = "not inside a git repository or a folder with .memdir/project.json"
    return f"no project here ({why}): working on your user notes"


def _clip(summary: str, width: int = 60) -> str:
    return summary if len(summary) <= width else summary[: width - 1] + "…"


def _closest(key: str, notes: builtins.list[Note]) -> builtins.list[Note]:
    """The notes whose id is closest to `key`, then those whose summary holds its words."""
    by_id = {n.id: n for n in notes}
    picked = difflib.get_close_matches(key, list(by_id), n=_SUGGESTIONS, cutoff=0.6)
    words = {w.casefold() for w in _WORD.findall(key.replace("-", " "))}
    if words and len(picked) < _SUGGESTIONS:
        holders: dict[str, set[str]] = {}
        for n in notes:
            for w in _WORD.findall(n.summary):
                holders.setdefault(w.casefold(), set()).add(n.id)
        hits: dict[str, int] = {}
        for word in words:
            near = difflib.get_close_matches(word, list(holders), n=3, cutoff=0.8)
            for note_id in set().union(*(holders[w] for w in near)) if near else ():
                hits[note_id] = hits.get(note_id, 0) + 1
        ranked = sorted((i for i in hits if i not in picked), key=lambda i: (-hits[i], i))
        picked += ranked[: _SUGGESTIONS - len(picked)]
    return [by_id[i] for i in picked]
