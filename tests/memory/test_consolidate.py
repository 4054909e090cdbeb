"""The automatic consolidation pass through `Memory` (issue 11, §6), on a fake clock: off by
default, switched on by the user config only, cooldown hours, the merge cap, same-topic
findings only, never dismissed ones, contradicting groups or notes held by a sync conflict;
and the background thread that runs it."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from files import write_project_config
from memdir import Memory
from memdir.config import load_settings
from memdir.core.vocab import FindingKind
from memdir.errors import MemdirError
from memdir.memory.consolidating import ConsolidationReport
from sync_server import add_user, running_server

HOUR_MS = 3_600_000
LEXICAL = '[embed]\nprovider = "none"\n'
AUTO = LEXICAL + "[memory.consolidate]\nauto = true\n"

#: Three same-topic pairs (each its own finding), none contradicting.
PAIRS = [
    (
        ("Use pnpm for package management", "pnpm only."),
        ("Package management uses pnpm", "Not npm."),
    ),
    (
        ("Deploy the api with helm charts", "helm."),
        ("Helm charts deploy the api", "Charts in ops/."),
    ),
    (
        ("Release notes go to the blog every Friday", "Friday."),
        ("The blog gets release notes every Friday", "Blog."),
    ),
]


class Clock:
    """A fake clock (Unix ms): it stands still unless moved."""

    def __init__(self, start: int = 1_790_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance(self, hours: float) -> None:
        self.now += int(hours * HOUR_MS)


def open_memory(project: Path | None, home: Path, clock: Callable[[], int]) -> Memory:
    return Memory(load_settings(home=home, project_root=project), clock=clock)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def make(project: Path, home: Path, clock: Clock) -> Iterator[Callable[[str], Memory]]:
    """Open a memory with this user config (written first)."""
    opened: list[Memory] = []

    def make(config: str) -> Memory:
        (home / "config.toml").write_text(config)
        m = open_memory(project, home, clock)
        opened.append(m)
        return m

    try:
        yield make
    finally:
        for m in opened:
            m.close()


def plant(
    memory: Memory, pairs: list[tuple[tuple[str, str], tuple[str, str]]] = PAIRS
) -> list[tuple[str, str]]:
    """Each pair's note ids (oldest first), after checking each pair is one finding. The
    clock moves a second before each note, so the first of a pair is the older one."""
    clock = memory.clock
    assert isinstance(clock, Clock)
    out = []
    for (s1, b1), (s2, b2) in pairs:
        clock.advance(1 / 3600)
        first = memory.remember(s1, b1).note.id
        clock.advance(1 / 3600)
        second = memory.remember(s2, b2).note.id
        out.append((first, second))
    found = {f.notes for f in memory.tidy.findings([FindingKind.SAME_TOPIC])}
    assert {tuple(sorted(p)) for p in out} <= found, found
    return out


def exists(memory: Memory, note_id: str, scope: str = "project") -> bool:
    return (memory.stores.directory(scope) / f"{note_id}.md").is_file()


def merged_pairs(report: ConsolidationReport) -> set[tuple[str, ...]]:
    return {tuple(sorted((r.kept, *r.deleted))) for r in report.merged}


# -- on and off ----------------------------------------------------------------------------


def test_off_by_default(make: Callable[[str], Memory]) -> None:
    memory = make(LEXICAL)
    pairs = plant(memory)
    report = memory.consolidation.run()
    assert report.ran is False
    assert report.reason == "memory.consolidate.auto is off"
    assert report.merged == () and report.next_due is None
    assert all(exists(memory, i) for p in pairs for i in p)
    assert memory.consolidation.background() is None
    assert memory.consolidation.next_due() is None


def test_on_through_the_user_config(make: Callable[[str], Memory]) -> None:
    memory = make(AUTO)
    pairs = plant(memory)
    report = memory.consolidation.run()
    assert report.ran is True and report.reason is None
    assert merged_pairs(report) == {tuple(sorted(p)) for p in pairs}
    for first, second in pairs:
        assert exists(memory, first) and not exists(memory, second)  # the oldest is kept
    assert memory.tidy.findings([FindingKind.SAME_TOPIC]) == []
    assert memory.audit.verify().ok


def test_forced_runs_even_when_off(make: Callable[[str], Memory]) -> None:
    memory = make(LEXICAL)
    pairs = plant(memory)
    report = memory.consolidation.run(force=True)
    assert report.ran and len(report.merged) == len(pairs)


def test_a_project_config_can_switch_it_off(make: Callable[[str], Memory], project: Path) -> None:
    write_project_config(project, "[memory.consolidate]\nauto = false\n")
    memory = make(AUTO)
    pairs = plant(memory)
    report = memory.consolidation.run()
    assert report.ran is False and "off" in (report.reason or "")
    assert all(exists(memory, i) for p in pairs for i in p)
    assert memory.consolidation.background() is None


def test_a_project_config_cannot_switch_it_on(make: Callable[[str], Memory], project: Path) -> None:
    write_project_config(project, "[memory.consolidate]\nauto = true\n")
    memory = make(LEXICAL)
    pairs = plant(memory)
    assert any("can switch it off but only the user config" in w for w in memory.warnings)
    report = memory.consolidation.run()
    assert report.ran is False
    assert all(exists(memory, i) for p in pairs for i in p)


# -- cooldown and caps ---------------------------------------------------------------------


def test_cooldown_hours(make: Callable[[str], Memory], clock: Clock) -> None:
    memory = make(AUTO + "cooldownHours = 5\n")
    plant(memory, PAIRS[:1])
    passed_at = clock.now
    report = memory.consolidation.run()
    assert report.ran and len(report.merged) == 1
    due_at = passed_at + 5 * HOUR_MS
    assert report.next_due == due_at
    (second,) = plant(memory, PAIRS[1:2])
    clock.now = due_at - 1
    again = memory.consolidation.run()
    assert again.ran is False and again.reason == "not due yet (cooldown)"
    assert again.next_due == due_at
    assert exists(memory, second[1])
    # Another process (a fresh Memory on the same home) sees the same cooldown.
    other = make(AUTO + "cooldownHours = 5\n")
    assert other.consolidation.run().ran is False
    clock.now = due_at
    due = memory.consolidation.run()
    assert due.ran and merged_pairs(due) == {tuple(sorted(second))}
    assert not exists(memory, second[1])
    assert due.next_due == due_at + 5 * HOUR_MS


def test_an_explicit_pass_ignores_the_cooldown(make: Callable[[str], Memory]) -> None:
    memory = make(AUTO)
    plant(memory, PAIRS[:1])
    assert memory.consolidation.run().ran
    plant(memory, PAIRS[1:2])
    assert memory.consolidation.run().ran is False
    forced = memory.consolidation.run(force=True)
    assert forced.ran and len(forced.merged) == 1


@pytest.mark.parametrize("key", ["maxMergesPerPass", "maxMerges"])
def test_the_merges_per_pass_are_capped(
    make: Callable[[str], Memory], clock: Clock, key: str
) -> None:
    memory = make(AUTO + f"{key} = 1\n")
    assert memory.settings.consolidate.max_merges_per_pass == 1
    pairs = plant(memory)
    report = memory.consolidation.run()
    assert report.ran and len(report.merged) == 1
    assert len(report.skipped) == 2
    assert all(why == "the pass merges at most 1" for _, why in report.skipped)
    left = {f.id for f in memory.tidy.findings([FindingKind.SAME_TOPIC])}
    assert {fid for fid, _ in report.skipped} == left
    # The next pass (once due) takes the next one.
    clock.advance(24)
    assert len(memory.consolidation.run().merged) == 1
    clock.advance(24)
    assert len(memory.consolidation.run().merged) == 1
    assert all(not exists(memory, second) for _, second in pairs)


def test_zero_merges_per_pass_merges_nothing(make: Callable[[str], Memory]) -> None:
    memory = make(AUTO + "maxMergesPerPass = 0\n")
    pairs = plant(memory)
    report = memory.consolidation.run()
    assert report.ran and report.merged == () and len(report.skipped) == 3
    assert all(exists(memory, i) for p in pairs for i in p)


# -- what the pass acts on -----------------------------------------------------------------


def test_only_same_topic_findings_are_acted_on(make: Callable[[str], Memory]) -> None:
    memory = make(AUTO)
    (pair,) = plant(memory, PAIRS[:1])
    broken = memory.remember("Pricing page layout", "See [[pricing-grid-a91]].").note.id
    long = memory.remember("A very long note", "word " * 2000).note.id
    files = {
        i: (memory.stores.directory("project") / f"{i}.md").read_bytes() for i in (broken, long)
    }
    kinds = {f.kind for f in memory.tidy.findings()}
    assert {FindingKind.BROKEN_LINK, FindingKind.TOO_LONG} <= kinds
    report = memory.consolidation.run()
    assert merged_pairs(report) == {tuple(sorted(pair))}
    assert {
        i: (memory.stores.directory("project") / f"{i}.md").read_bytes() for i in files
    } == files
    kinds = {f.kind for f in memory.tidy.findings()}
    assert {FindingKind.BROKEN_LINK, FindingKind.TOO_LONG} <= kinds


def test_a_dismissed_finding_is_not_merged(make: Callable[[str], Memory]) -> None:
    memory = make(AUTO)
    pairs = plant(memory, PAIRS[:2])
    by_notes = {f.notes: f.id for f in memory.tidy.findings([FindingKind.SAME_TOPIC])}
    memory.tidy.dismiss(by_notes[tuple(sorted(pairs[0]))])
    report = memory.consolidation.run()
    assert merged_pairs(report) == {tuple(sorted(pairs[1]))}
    assert exists(memory, pairs[0][0]) and exists(memory, pairs[0][1])


def test_a_group_that_contradicts_itself_is_left(make: Callable[[str], Memory]) -> None:
    memory = make(AUTO)
    (pair,) = plant(memory, PAIRS[:1])
    for summary in ("Pricing cards use fills", "Staging database is read-only on weekends"):
        memory.remember(summary, "Unrelated.")  # enough notes for the topic to stand out
    a = memory.remember("Deploy timeout is 30 seconds", "It times out after 30 s.").note.id
    b = memory.remember("Deploy timeout is 60 seconds", "It times out after 60 s.").note.id
    findings = memory.tidy.findings()
    (contra,) = [f for f in findings if f.kind is FindingKind.CONTRADICTION]
    assert set(contra.notes) == {a, b}
    same = [f for f in findings if f.kind is FindingKind.SAME_TOPIC and set(f.notes) >= {a, b}]
    assert same, findings  # the pair is on one topic too: a candidate for merging
    report = memory.consolidation.run()
    assert merged_pairs(report) == {tuple(sorted(pair))}
    (why,) = [why for fid, why in report.skipped if fid == same[0].id]
    assert why.endswith("contradict each other: settle that first")
    assert a in why and b in why
    assert exists(memory, a) and exists(memory, b)


def test_backups_of_an_automatic_merge_say_auto_merge(make: Callable[[str], Memory]) -> None:
    memory = make(AUTO)
    (pair,) = plant(memory, PAIRS[:1])
    linker = memory.remember("Elsewhere", f"See [[{pair[1]}]].").note.id
    report = memory.consolidation.run()
    (result,) = report.merged
    assert result.plan.source == "auto"
    backups = {b.id: b for b in memory.backups(limit=None)}
    made = [backups[i] for i in result.backup_ids]
    assert {b.note_id for b in made} == {pair[0], pair[1], linker}
    assert {b.reason for b in made} == {"auto-merge"}
    merges = [e for e in memory.stores.audit.entries() if e.action == "merge"]
    assert merges and any(e.fields.get("reason") == "auto draft" for e in merges)
    assert memory.read(linker).body == f"See [[{pair[0]}]]."


def test_a_group_with_a_note_held_by_a_sync_conflict_is_left(tmp_path: Path, clock: Clock) -> None:
    data = tmp_path / "srv"
    data.mkdir()
    token = add_user(data, "alice")
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(running_server(data, extra_args=["--rate-limit", "0"]))
        machines = []
        for name, config in (("a", LEXICAL), ("b", AUTO)):
            home = tmp_path / f"home-{name}"
            home.mkdir()
            (home / "config.toml").write_text(config)
            m = stack.enter_context(open_memory(None, home, clock))
            m.sync.login(server.url, token)
            machines.append(m)
        a, b = machines
        ids = []
        for (s1, b1), (s2, b2) in PAIRS[:2]:
            ids.append(
                (
                    a.remember(s1, b1 + "\nline two", scope="user").note.id,
                    a.remember(s2, b2, scope="user").note.id,
                )
            )
        a.sync.run()
        b.sync.run()
        held = ids[0][0]
        for m, text in ((a, "from a"), (b, "from b")):
            path = m.stores.directory("user") / f"{held}.md"
            path.write_bytes(path.read_bytes().replace(b"line two", f"line {text}".encode()))
        a.sync.run()
        assert b.sync.run().conflicts == 1
        held_file = (b.stores.directory("user") / f"{held}.md").read_bytes()
        partner = (b.stores.directory("user") / f"{ids[0][1]}.md").read_bytes()
        report = b.consolidation.run()
        assert report.ran
        assert merged_pairs(report) == {tuple(sorted(ids[1]))}
        assert any(f"{held} is held back by a sync conflict" in why for _, why in report.skipped)
        assert (b.stores.directory("user") / f"{held}.md").read_bytes() == held_file
        assert (b.stores.directory("user") / f"{ids[0][1]}.md").read_bytes() == partner
        # The merge that was made went to the server first: machine a gets it.
        assert all(r.version is not None for r in report.merged)
        a.sync.run()
        assert not (a.stores.directory("user") / f"{ids[1][1]}.md").exists()


# -- the background thread -----------------------------------------------------------------


def _wait_for(condition: Callable[[], bool], seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_the_background_thread_runs_a_pass_and_stops(make: Callable[[str], Memory]) -> None:
    memory = make(AUTO)
    pairs = plant(memory)
    consolidator = memory.consolidation.background(first_delay=0.1)
    assert consolidator is not None
    consolidator.start()
    try:
        assert _wait_for(lambda: bool(consolidator.reports)), consolidator.errors
    finally:
        consolidator.stop()
    assert not consolidator.is_alive()
    assert consolidator.errors == []
    (report,) = consolidator.reports
    assert merged_pairs(report) == {tuple(sorted(p)) for p in pairs}
    assert all(not exists(memory, second) for _, second in pairs)


def test_the_background_thread_waits_for_the_cooldown(
    make: Callable[[str], Memory], clock: Clock
) -> None:
    memory = make(AUTO)
    assert memory.consolidation.run().ran  # a pass just ran: the next is due in 24 hours
    pairs = plant(memory, PAIRS[:1])
    consolidator = memory.consolidation.background(first_delay=0.1, check_every=0.2)
    assert consolidator is not None
    consolidator.start()
    try:
        # Not due: the thread checks and waits (at least a second between checks).
        assert not _wait_for(lambda: bool(consolidator.reports), 0.5)
        assert all(exists(memory, i) for p in pairs for i in p)
        clock.advance(24)
        assert _wait_for(lambda: bool(consolidator.reports)), consolidator.errors
    finally:
        consolidator.stop()
    assert not consolidator.is_alive()
    assert not exists(memory, pairs[0][1])


# -- a damaged dismissals file, a clock set back, a stop during a merge -----------------------


@pytest.fixture
def auto_memory(make: Callable[[str], Memory], clock: Clock) -> tuple[Memory, Clock]:
    """A memory with the automatic pass on (the user config), and its clock."""
    return make(AUTO), clock


def _pair(memory: Memory, clock: Clock) -> tuple[str, str]:
    clock.advance(1 / 3600)
    a = memory.remember("Use pnpm for package management", "pnpm only.").note.id
    clock.advance(1 / 3600)
    b = memory.remember("Package management uses pnpm", "Not npm.").note.id
    found = [f for f in memory.tidy.findings([FindingKind.SAME_TOPIC]) if set(f.notes) == {a, b}]
    assert found
    return a, b


def test_a_damaged_dismissals_file_does_not_let_the_pass_merge_dismissed_groups(
    auto_memory: tuple[Memory, Clock], home: Path
) -> None:
    memory, clock = auto_memory
    a, b = _pair(memory, clock)
    finding = next(
        f for f in memory.tidy.findings([FindingKind.SAME_TOPIC]) if set(f.notes) == {a, b}
    )
    memory.tidy.dismiss(finding.id)  # "do not merge these"
    path = home / "tidy" / "dismissed.json"
    # A torn write by another tool, a bad hand edit, a disk error: the file is garbage.
    path.write_text(path.read_text("utf-8")[:-7])
    try:
        report = memory.consolidation.run(force=True)
    except MemdirError:
        return  # a clear error is a fix
    merged = {r.kept for r in report.merged} | {d for r in report.merged for d in r.deleted}
    assert not ({a, b} & merged), "the dismissed pair was merged"


def test_a_clock_that_went_back_does_not_stop_the_pass_for_a_year(
    auto_memory: tuple[Memory, Clock],
) -> None:
    memory, clock = auto_memory
    _pair(memory, clock)
    clock.advance(24 * 365)  # the clock ran a year ahead (a bad RTC, a VM restore) ...
    assert memory.consolidation.run().ran
    clock.advance(-24 * 365)  # ... and was set right
    clock.advance(25)  # more than cooldownHours (24) later
    _pair_again(memory, clock)
    report = memory.consolidation.run()
    assert report.ran, report.reason


def _pair_again(memory: Memory, clock: Clock) -> tuple[str, str]:
    clock.advance(1 / 3600)
    a = memory.remember("Deploy the api with helm charts", "helm.").note.id
    clock.advance(1 / 3600)
    b = memory.remember("Helm charts deploy the api", "Charts in ops/.").note.id
    return a, b


def test_stop_leaves_no_merge_running_after_it_returns(
    auto_memory: tuple[Memory, Clock], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.memory.merging import Merging

    memory, clock = auto_memory
    _pair(memory, clock)
    _pair_again(memory, clock)
    clock.advance(1 / 3600)
    memory.remember("Release notes go to the blog every Friday", "Friday.")
    clock.advance(1 / 3600)
    memory.remember("The blog gets release notes every Friday", "Blog.")
    real = Merging.apply
    started: list[float] = []
    running = threading.Event()

    def slow_apply(self: Merging, plan: Any) -> Any:
        started.append(time.monotonic())
        running.set()
        time.sleep(0.6)  # a large scope, a slow disk, a sync server round trip
        return real(self, plan)

    monkeypatch.setattr(Merging, "apply", slow_apply)
    worker = memory.consolidation.background(first_delay=0.01, check_every=60)
    assert worker is not None
    worker.start()
    assert running.wait(20)
    worker.stop()  # the host is shutting down: stop waits for the merge under way
    stopped = time.monotonic()
    alive = worker.is_alive()
    worker.stop(30)  # (waits for the thread, were it still running)
    later = [t for t in started if t > stopped]
    assert not alive and not later, f"alive after stop: {alive}; merges begun after: {len(later)}"
