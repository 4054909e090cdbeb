"""The tidy-up list of one `Memory` (§6): gathering what `memdir.tidy.findings` needs from
the stores, the search index and the usage statistics, and this machine's dismissals.

Same-topic candidates come from the terms the search index already holds for each note
(its summary and tag columns), so no note is tokenised again and private notes, which are
never indexed, take no part. Dismissals live in ``$MEMDIR_HOME/tidy/dismissed.json``
(0600, never synced), keyed by finding id; the id is derived from the notes' content
hashes, so editing a note makes a new id and the finding comes back.
"""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.config import Settings
from memdir.core import Note, NoteType, Scope, parse_choice
from memdir.core.vocab import FindingKind
from memdir.errors import DiskError, NotFound
from memdir.files import DirLock
from memdir.files.atomic import atomic_write, ensure_private_dir
from memdir.memory.stores import Stores
from memdir.store import ScopeStore, UsageStats

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memdir.extract.llm import ChatClient
    from memdir.retrieve import Retriever
    from memdir.retrieve.retriever import Progress
    from memdir.tidy.findings import Finding, ScopeView

__all__ = [
    "DismissResult",
    "Tidying",
    "parse_kinds",
]


@dataclass(frozen=True, slots=True)
class DismissResult:
    """What `dismiss` did: the finding is no longer listed until one of its notes changes
    (`changed` False: it was dismissed already)."""

    finding: Finding
    changed: bool


#: Dismissals kept at most (the oldest go first): ids of edited notes never match again.
MAX_DISMISSALS = 10_000


def parse_kinds(kinds: FindingKind | str | Iterable[FindingKind | str] | None) -> list[FindingKind]:
    """The kinds asked for, in `FindingKind` order (None or empty: all of them)."""
    if kinds is None:
        return list(FindingKind)
    names = (kinds,) if isinstance(kinds, str) else tuple(kinds)
    wanted = {parse_choice(FindingKind, k, "finding kind") for k in names}
    return [k for k in FindingKind if k in wanted] or list(FindingKind)


@lru_cache(maxsize=1)
def _noise() -> frozenset[str]:
    """Index terms that say nothing about a topic: stop-words and the note type names."""
    from memdir.index.tokenize import DE_STOP_WORDS, EN_STOP_WORDS, index_terms

    words = set(EN_STOP_WORDS | DE_STOP_WORDS)
    for word in [*EN_STOP_WORDS, *DE_STOP_WORDS, *(t.value for t in NoteType)]:
        words.update(index_terms(word))
    return frozenset(words)


class Tidying:
    """Findings over the open scopes, and dismissing them on this machine."""

    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        usage: UsageStats,
        *,
        retriever: Callable[[], Retriever],
        chat: Callable[[], ChatClient],
        clock: Callable[[], int],
        warn: Callable[[str], None],
    ) -> None:
        self.settings = settings
        self._chat = chat
        self.stores = stores
        self.usage = usage
        self._retriever = retriever
        self._clock = clock
        self._warn = warn
        self.path = stores.home / "tidy" / "dismissed.json"
        #: whether the dismissals file was found damaged when last read
        self.damaged = False

    # -- findings ------------------------------------------------------------------------

    def findings(
        self,
        kinds: FindingKind | str | Iterable[FindingKind | str] | None = None,
        scope: Scope | str | None = None,
        *,
        hide_private: bool = False,
        confirm_with_llm: bool = False,
        include_dismissed: bool = False,
        progress: Progress | None = None,
    ) -> builtins.list[Finding]:
        """The tidy-up list (§6): findings of `kinds` (None: all six) in `scope` (None: every
        open scope, project first), without those dismissed on this machine.

        Each finding has a stable id (its kind and the hashes of its notes), the note ids
        and a one-line reason. With `hide_private`, findings about private notes are left
        out (what an MCP caller may see). With `confirm_with_llm`, the `[llm]` model checks
        each contradiction: those it rejects are left out, the others carry its verdict.
        Same-topic and contradiction findings compare notes by meaning too when vectors
        are on: notes not embedded yet are embedded first (`progress` shows it).
        """
        from memdir.tidy.findings import scope_findings

        wanted = parse_kinds(kinds)
        stores = self.stores.chosen(scope)
        targets = self._link_targets() if FindingKind.BROKEN_LINK in wanted else set()
        dismissed = set() if include_dismissed else set(self._load())
        now = self._clock()
        out: builtins.list[Finding] = []
        for store in stores:
            view = self._view(store, wanted, targets, progress)
            private = {n.id for n in view.notes if n.private} if hide_private else set()
            for finding in scope_findings(
                view, wanted, now=now, unused_days=self.settings.consolidate.unused_days
            ):
                if finding.id in dismissed:
                    continue
                if private.intersection(finding.notes):
                    continue
                out.append(finding)
        return self.confirmed(out, self._chat()) if confirm_with_llm else out

    def _view(
        self,
        store: ScopeStore,
        kinds: builtins.list[FindingKind],
        targets: set[str],
        progress: Progress | None = None,
    ) -> ScopeView:
        from memdir.retrieve.note_vectors import note_vectors
        from memdir.tidy.findings import ScopeView

        notes = self.stores.all_notes(store.scope)
        terms: dict[str, frozenset[str]] = {}
        vectors: dict[str, npt.NDArray[np.float32]] = {}
        if FindingKind.SAME_TOPIC in kinds or FindingKind.CONTRADICTION in kinds:
            terms = self._terms(store, notes)
            vectors = note_vectors(
                self._retriever(), store, terms, progress=progress, warn=self._warn
            )
        last_used: dict[str, int] = {}
        if FindingKind.UNUSED in kinds:
            last_used = self._last_used(store, notes)
        path_exists = None
        root = self.settings.project_root
        if store.scope is Scope.PROJECT and root is not None:
            path_exists = _PathCheck(root).exists
        return ScopeView(
            scope=store.scope,
            notes=notes,
            terms=terms,
            vectors=vectors,
            last_used=last_used,
            link_target=targets.__contains__,
            path_exists=path_exists,
        )

    def _link_targets(self) -> set[str]:
        """Every id a `[[link]]` may name: note files in any open scope, parseable or not."""
        return {i for s in self.stores.by_scope.values() for i in s.directory.ids_on_disk()}

    def _terms(self, store: ScopeStore, notes: builtins.list[Note]) -> dict[str, frozenset[str]]:
        """Summary and tag terms of each indexed note, read from the search index."""
        from memdir.index.db import IndexDamaged

        retriever = self._retriever()
        for attempt in (1, 2):
            try:
                self._refresh(retriever, store)
                return self._stored_terms(retriever, store, notes)
            except IndexDamaged:  # replaced by an empty index: refresh refills it
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _refresh(self, retriever: Retriever, store: ScopeStore) -> None:
        """Bring the index up to date; when the disk refuses, go on with it as it is."""
        from memdir.index.refusal import refusal

        try:
            retriever.refresh(store)
        except Exception as exc:  # the disk refusing is told apart by `refusal`
            reason = refusal(exc, retriever.index_path(store))
            if reason is None:
                raise
            self._warn(
                f"the search index of the {store.scope.value} notes cannot be updated "
                f"({reason}): same-topic and contradiction findings may miss notes changed "
                "since it was last updated"
            )

    @staticmethod
    def _stored_terms(
        retriever: Retriever, store: ScopeStore, notes: builtins.list[Note]
    ) -> dict[str, frozenset[str]]:
        index = retriever.index(store)
        loaded = {n.id: n for n in notes if not n.private}
        first: dict[str, tuple[int, int]] = {}
        for chunk, (note_id, ordinal) in index.keys(index.chunks_of(loaded)).items():
            if note_id not in first or ordinal < first[note_id][0]:
                first[note_id] = (ordinal, chunk)
        owner = {chunk: note_id for note_id, (_, chunk) in first.items()}
        noise = _noise()
        out: dict[str, frozenset[str]] = {}
        for chunk, (summary, _body, meta) in index.stored_terms(owner).items():
            words = frozenset(t for t in (*summary, *meta) if len(t) > 1 and t not in noise)
            if words:
                out[owner[chunk]] = words
        return out

    def _last_used(self, store: ScopeStore, notes: builtins.list[Note]) -> dict[str, int]:
        """When each note was last recalled (usage statistics) or edited (updatedAt, mtime)."""
        recalled = self.usage.load(store.state_key)
        stamps, _ = store.directory.stamps()
        out: dict[str, int] = {}
        for note in notes:
            stamp = stamps.get(note.id)
            mtime = stamp[1] // 1_000_000 if stamp else 0
            out[note.id] = max(note.updated_at, mtime, recalled.get(note.id, {}).get("last", 0))
        return out

    def confirmed(
        self, findings: builtins.list[Finding], chat: ChatClient
    ) -> builtins.list[Finding]:
        """`findings` with each contradiction checked by the model (§4.3 rules: its answer
        is untrusted): those it rejects are left out (a warning says how many), the others
        carry its verdict. Private notes are never sent; their pairs stay unconfirmed."""
        from memdir.extract.confirm import confirm_contradictions

        candidates = []
        for finding in findings:
            if finding.kind is not FindingKind.CONTRADICTION or len(finding.notes) != 2:
                continue
            store = self.stores.store(finding.scope)
            a, b = (store.get(i) for i in finding.notes)
            if a is not None and b is not None:
                candidates.append((finding.id, a, b, finding.reason))
        if not candidates:
            return findings
        verdicts = {c.finding_id: c for c in confirm_contradictions(chat, candidates)}
        out: builtins.list[Finding] = []
        rejected = 0
        for finding in findings:
            verdict = verdicts.get(finding.id)
            if verdict is None:
                out.append(finding)
            elif verdict.verdict == "rejected":
                rejected += 1
            else:
                out.append(replace(finding, confirmation=verdict.verdict, model_says=verdict.why))
        if rejected:
            self._warn(
                f"{rejected} contradiction finding{'s' if rejected != 1 else ''} the model did "
                "not confirm left out (run without --confirm-with-llm to see them)"
            )
        return out

    # -- dismissals ----------------------------------------------------------------------

    def dismiss(self, finding_id: str) -> DismissResult:
        """Leave a finding out of `findings` on this machine until one of its notes is edited.
        NotFound for an id not listed now (unknown, or a note changed); dismissing a finding
        twice changes nothing (`changed` False)."""
        from memdir.tidy.findings import kind_of

        kind = kind_of(finding_id) if isinstance(finding_id, str) else None
        found = None
        if kind is not None:
            found = next(
                (f for f in self.findings([kind], include_dismissed=True) if f.id == finding_id),
                None,
            )
        if found is None:
            raise NotFound(
                f"no finding {finding_id}: it was never listed, or a note it was about has "
                "changed or gone since (run memdir tidy for the current list)"
            )
        ensure_private_dir(self.path.parent)
        with DirLock(
            self.path.parent / ".dismissed.lock",
            timeout=self.settings.lock_timeout,
            label="tidy dismissals",
        ):
            data = self._load()
            if self.damaged:  # kept for a person to look at, never overwritten
                aside = self.path.with_name(f"dismissed.json.damaged-{self._clock()}")
                try:
                    self.path.rename(aside)
                except OSError as exc:
                    raise DiskError(
                        f"the dismissals file {self.path} is damaged and cannot be moved "
                        f"aside ({exc.strerror or exc}); nothing was dismissed"
                    ) from exc
                self._warn(f"the damaged dismissals file was kept as {aside}")
            if finding_id in data:
                return DismissResult(found, changed=False)
            data[finding_id] = {
                "kind": found.kind.value,
                "scope": found.scope.value,
                "notes": list(found.notes),
                "hashes": list(found.hashes),
                "at": self._clock(),
            }
            if len(data) > MAX_DISMISSALS:
                oldest = sorted(data, key=lambda k: data[k].get("at", 0))
                for key in oldest[: len(data) - MAX_DISMISSALS]:
                    del data[key]
            body = json.dumps({"version": 1, "dismissed": data}, indent=1, sort_keys=True)
            try:
                atomic_write(self.path, body.encode(), mode=0o600)
            except OSError as exc:
                raise DiskError(
                    f"cannot record the dismissal in {self.path}: {exc.strerror or exc}"
                ) from exc
        return DismissResult(found, changed=True)

    def _load(self) -> dict[str, dict[str, Any]]:
        """finding id -> what was dismissed; {} when nothing was. A file that exists but
        cannot be read or parsed sets `damaged` (and a warning): the automatic pass then
        merges nothing, and the next dismissal moves it aside instead of overwriting it."""
        self.damaged = False
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            return self._damaged(f"cannot be read ({exc.strerror or exc})")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return self._damaged("is not valid JSON")
        dismissed = data.get("dismissed") if isinstance(data, dict) else None
        if not isinstance(dismissed, dict):
            return self._damaged('has no "dismissed" object')
        return {k: v for k, v in dismissed.items() if isinstance(v, dict)}

    def _damaged(self, why: str) -> dict[str, dict[str, Any]]:
        self.damaged = True
        self._warn(
            f"the tidy dismissals file {self.path} {why}: dismissed findings are listed "
            "again, and the automatic pass merges nothing until it is fixed or removed"
        )
        return {}


class _PathCheck:
    """Whether a path a project note names exists: relative to the project root or to the
    note's own directory. A path that leads out of the project counts as existing (there
    is nothing to check it against)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._seen: dict[str, bool] = {}

    def exists(self, path: str, note: Note) -> bool:
        bases = [self.root]
        if note.path is not None and note.path.parent != self.root:
            bases.append(note.path.parent)
        inside = False
        for base in bases:
            candidate = os.path.normpath(base / path)
            if os.path.commonpath([candidate, str(self.root)]) != str(self.root):
                continue
            inside = True
            known = self._seen.get(candidate)
            if known is None:
                known = self._seen[candidate] = os.path.lexists(candidate)
            if known:
                return True
        return not inside
