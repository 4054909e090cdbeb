"""The automatic consolidation pass (§6): opt-in merging of same-topic notes in long-lived
hosts (the MCP server, the web page).

A pass is due for a scope when `memory.consolidate.auto` is on (a project config can
switch it off, never on) and `cooldownHours` have passed since that scope's last pass on
this machine. It acts only on same-topic findings not dismissed here, at most
`maxMergesPerPass` merges, each a concatenated draft (nothing is lost; every changed
note is backed up with the reason ``auto-merge`` and the merge audited). It leaves
alone a group with a note held back by a sync conflict, and a group whose notes
contradict each other (a person settles that). The last pass of each scope is kept in
``$MEMDIR_HOME/tidy/auto.json`` (0600, machine-local), written before merging so that a
crash does not make the next start repeat it at once.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Protocol

from memdir.config import Settings
from memdir.core import Scope
from memdir.core.vocab import FindingKind
from memdir.errors import Busy, DiskError, MemdirError
from memdir.files import DirLock
from memdir.files.atomic import atomic_write, ensure_private_dir
from memdir.memory.merging import Merging
from memdir.memory.stores import Stores
from memdir.memory.tidying import Tidying
from memdir.tidy.merge import MergeResult

__all__ = [
    "AUTO_SOURCE",
    "AutoConsolidator",
    "Consolidation",
    "ConsolidationReport",
]


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


log = logging.getLogger("memdir.consolidate")

#: The merge plan source (and so the audit reason) of the automatic pass.
AUTO_SOURCE = "auto"
_HOUR_MS = 3_600_000
#: Least wait after a pass, and between two looks at whether one is due.
_MIN_WAIT_S = 60.0
_MIN_CHECK_S = 1.0


class Consolidation:
    """One machine's automatic passes over the open scopes."""

    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        tidying: Tidying,
        merging: Merging,
        *,
        held: Callable[[], set[tuple[Scope, str]]],
        clock: Callable[[], int],
        reopen: Callable[[], AbstractContextManager[_Consolidates]],
    ) -> None:
        self.settings = settings
        self.stores = stores
        self._reopen = reopen
        self.tidying = tidying
        self.merging = merging
        self._held = held
        self._clock = clock
        self.path = stores.home / "tidy" / "auto.json"

    def next_due(self) -> int | None:
        """When a pass is next due for some open scope (Unix ms); None while it is off."""
        if not self.settings.consolidate.auto:
            return None
        last = self._load()
        cooldown = self.settings.consolidate.cooldown_hours * _HOUR_MS
        now = self._clock()
        return min(
            last.get(s.state_key, 0) + cooldown if last.get(s.state_key, 0) <= now else now
            for s in self.stores.chosen(None)
        )

    def run(
        self, *, force: bool = False, stop: threading.Event | None = None
    ) -> ConsolidationReport:
        """Run the automatic consolidation pass (§6) over the scopes that are due: merge
        same-topic notes (concatenated drafts, at most `maxMergesPerPass`), never notes in
        a sync conflict or notes that contradict each other. Off unless
        `memory.consolidate.auto` is on; `force` runs it now over every open scope
        regardless (an explicit request, never a background one). A set `stop` ends the
        pass before its next merge."""
        settings = self.settings.consolidate
        if not settings.auto and not force:
            return ConsolidationReport(False, "memory.consolidate.auto is off")
        ensure_private_dir(self.path.parent)
        try:
            with DirLock(self.path.parent / ".auto.lock", timeout=0.5, label="consolidation"):
                return self._run(force, stop or threading.Event())
        except Busy:
            return ConsolidationReport(
                False, "another process is running a consolidation pass", next_due=None
            )

    def background(
        self, *, first_delay: float = 10.0, check_every: float = 600.0
    ) -> AutoConsolidator | None:
        """A thread that runs the pass whenever it is due, each pass on a memory of its
        own; the caller starts and stops it. None when the pass is switched off."""
        if not self.settings.consolidate.auto:
            return None
        return AutoConsolidator(
            self._reopen,
            self.next_due,
            self._clock,
            first_delay=first_delay,
            check_every=check_every,
        )

    def _run(self, force: bool, stop: threading.Event) -> ConsolidationReport:
        settings = self.settings.consolidate
        now = self._clock()
        last = self._load()
        cooldown = settings.cooldown_hours * _HOUR_MS
        # A last pass "in the future" (a clock set back, a hand-edited file) is due now.
        due = [
            s
            for s in self.stores.chosen(None)
            if force or not 0 <= now - last.get(s.state_key, 0) < cooldown
        ]
        if not due:
            return ConsolidationReport(False, "not due yet (cooldown)", next_due=self.next_due())
        for store in due:
            last[store.state_key] = now
        self._save(last)
        budget = settings.max_merges_per_pass
        merged: builtins.list[MergeResult] = []
        skipped: builtins.list[tuple[str, str]] = []
        held = self._held()
        for store in due:
            findings = self.tidying.findings(
                [FindingKind.SAME_TOPIC, FindingKind.CONTRADICTION], store.scope
            )
            if self.tidying.damaged:
                damaged = "the tidy dismissals file is damaged: nothing is merged until it is fixed"
                skipped.extend(
                    (f.id, damaged) for f in findings if f.kind is FindingKind.SAME_TOPIC
                )
                continue
            clashing = {frozenset(f.notes) for f in findings if f.kind is FindingKind.CONTRADICTION}
            for finding in (f for f in findings if f.kind is FindingKind.SAME_TOPIC):
                why: str | None = _leave_alone(finding.notes, store.scope, held, clashing)
                if why is None and finding.by_meaning:
                    why = "its notes share their meaning, not their words: merge them by hand"
                if why is None and stop.is_set():
                    why = "the host is stopping"
                if why is None and budget <= 0:
                    why = f"the pass merges at most {settings.max_merges_per_pass}"
                if why is not None:
                    skipped.append((finding.id, why))
                    continue
                try:
                    plan = self.merging.plan(finding.notes, scope=store.scope)
                    merged.append(self.merging.apply(replace(plan, source=AUTO_SOURCE)))
                except MemdirError as exc:
                    skipped.append((finding.id, str(exc)))
                    continue
                budget -= 1
        report = ConsolidationReport(
            True,
            None,
            tuple(s.scope for s in due),
            tuple(merged),
            tuple(skipped),
            next_due=self.next_due(),
        )
        for result in merged:
            log.info("merged %s into %s", ", ".join(result.deleted), result.kept)
        return report

    def _load(self) -> dict[str, int]:
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self.path.read_text("utf-8"))
            last = data.get("last") if isinstance(data, dict) else None
            if isinstance(last, dict):
                return {k: v for k, v in last.items() if isinstance(v, int)}
        return {}

    def _save(self, last: dict[str, int]) -> None:
        body = json.dumps({"version": 1, "last": last}, indent=1, sort_keys=True)
        try:
            atomic_write(self.path, body.encode(), mode=0o600)
        except OSError as exc:
            raise DiskError(
                f"cannot record the consolidation pass in {self.path}: {exc.strerror or exc}; "
                "nothing was merged"
            ) from exc


def _leave_alone(
    notes: tuple[str, ...],
    scope: Scope,
    held: set[tuple[Scope, str]],
    clashing: set[frozenset[str]],
) -> str | None:
    """Why a same-topic group is not merged automatically, or None."""
    stuck = [n for n in notes if (scope, n) in held]
    if stuck:
        return f"{', '.join(stuck)} is held back by a sync conflict"
    for pair in combinations(notes, 2):
        if frozenset(pair) in clashing:
            return f"{pair[0]} and {pair[1]} contradict each other: settle that first"
    return None


class _Runs(Protocol):
    def run(
        self, *, force: bool = False, stop: threading.Event | None = None
    ) -> ConsolidationReport: ...


class _Consolidates(Protocol):
    @property
    def consolidation(self) -> _Runs: ...


class AutoConsolidator:
    """A daemon thread that runs the pass when due, each on a fresh memory from `reopen`.

    It waits `first_delay` seconds after `start` (so a host's start-up is not slowed),
    then runs a pass whenever one is due, checking at most every `check_every` seconds.
    `reports` keeps the passes that ran (the newest last, at most 100).
    """

    def __init__(
        self,
        reopen: Callable[[], AbstractContextManager[_Consolidates]],
        next_due: Callable[[], int | None],
        clock: Callable[[], int],
        *,
        first_delay: float = 10.0,
        check_every: float = 600.0,
    ) -> None:
        self._reopen = reopen
        self._next_due = next_due
        self._clock = clock
        self._first_delay = first_delay
        self._check_every = check_every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="memdir-consolidate", daemon=True)
        self.reports: builtins.list[ConsolidationReport] = []
        self.errors: builtins.list[str] = []

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def is_alive(self) -> bool:
        """Whether the thread runs (started, and not ended yet)."""
        return self._thread.is_alive()

    def stop(self, timeout: float = 30.0) -> None:
        """Ask the thread to end and wait for a merge under way to finish (a pass stops
        before its next merge; each merge is one all-or-nothing batch)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _loop(self) -> None:
        wait = self._first_delay
        while not self._stop.wait(wait):
            due = self._next_due()
            if due is None:
                return  # switched off: the config is read once per process
            floor = _MIN_CHECK_S
            if due <= self._clock():
                self._pass()
                due = self._next_due()
                # At least a minute between passes, whatever cooldownHours says (0 is allowed).
                floor = _MIN_WAIT_S
            left = ((due or 0) - self._clock()) / 1000
            wait = max(floor, min(self._check_every, left))

    def _pass(self) -> None:
        try:
            with self._reopen() as memory:
                report = memory.consolidation.run(stop=self._stop)
        except MemdirError as exc:
            self.errors.append(str(exc))
            log.warning("the consolidation pass failed: %s", exc)
            return
        except Exception as exc:  # never let a bug kill the host
            self.errors.append(repr(exc))
            log.exception("the consolidation pass failed")
            return
        if report.ran:
            self.reports.append(report)
            del self.reports[:-100]
