"""Benchmark: many machines of many accounts syncing at once against a real sync server.

Run as ``python bench/server_load.py [--machines 200] [--accounts 50] [--notes 5]
[--edits 3] [--backends dir,postgres,s3] [--replicas 1,3] [--seconds 15] [--dsn DSN]
[--json]``.

For each backend (and each count of ``--replicas``) that many `memdir server serve`
subprocesses listen on free loopback ports over the same storage (tests/sync_server.py),
with the accounts in a fresh data directory, and the machines are spread over them as a
proxy would spread them. With PostgreSQL and S3 the replicas share the rate limiter's
buckets too; the directory backend keeps them per process, so there three replicas let
an account through up to three times as often (the limited phase reports it); PostgreSQL is a
throwaway cluster (tests/postgres_cluster.py; ``--dsn`` or ``MEMDIR_TEST_PG_DSN`` names
an existing server instead, a new database is made in it and dropped), S3 a throwaway
SeaweedFS (tests/seaweed.py). Everything listens on 127.0.0.1 and is stopped and
removed at the end, Ctrl-C included.

The machines are protocol clients (one `httpx.AsyncClient` each, all in one event
loop), spread evenly over the accounts. Each keeps its own view of its scope (note
id -> revision and text) and syncs in rounds with jitter: an incremental snapshot
(`have`, `known_version`), then one commit with a new note of its own and, in some
rounds, an edit of a note of its account that another machine may be editing at the
same time (a line appended to the body). A 409 `stale` makes it take a fresh snapshot
and rebuild the commit against it, as the real client merges; a 429 waits for its
`Retry-After`, a 503 for its `Retry-After` (else a backoff), a transport error for a
backoff; a change found already on the server when rebuilding (its answer was lost)
counts as done.

Phase 1, the server's ``--rate-limit 0``: every machine writes ``--notes`` notes and
``--edits`` edits in the user scope, as fast as the server takes them. Phase 2, the
default limiter (120 requests a minute per account, burst 30; ``--rate-limit``,
``--rate-burst``), in a project scope: the machines write a note per round until
``--seconds`` have passed; every 429 is retried until the request succeeds, and the
requests each account got through are compared with what the limiter allows (burst +
rate × time, the final look included).

Figures per phase: accepted commits per second of wall time, p50/p95/p99 of snapshot
(200s) and commit (200s and 409s) latency, counts of 409 stale (and of those with no
stale ids: the server's compare-and-swap retries ran out), 429, 503, other 5xx,
transport errors, requests given up. Then the convergence check, after every machine
took a final snapshot: each account's manifest holds exactly its machines' new notes
(none lost, none extra), every acknowledged edit's line is in its note, the manifest's
version equals the commits accepted, acknowledged commits got distinct versions and
each note's revisions form one chain (each base the revision before), every machine's
view equals the manifest, and every revision named is fetchable and hashes to its
name. Timing is printed, never asserted; the exit code is 1 when a check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import math
import os
import random
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from memdir.core import Note, parse_note, render_note
from memdir.sync.protocol import rev_of

_REPO = Path(__file__).resolve().parent.parent
# The helpers the tests use to run servers, PostgreSQL and SeaweedFS, shared rather than copied.
sys.path.insert(0, str(_REPO / "tests"))
from sync_server import add_user, auth_headers, running_server  # noqa: E402

BACKENDS = ("dir", "postgres", "s3")
USER_SCOPE: dict[str, str] = {"kind": "user"}
_MAX_ATTEMPTS = 40  # per request, over 429/503/5xx/transport errors
_MAX_REBUILDS = 60  # per round, over 409 stale
_REQUEST_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class Plan:
    """What one run does (the command-line options)."""

    machines: int = 200
    accounts: int = 50
    notes: int = 5
    edits: int = 3
    jitter_s: float = 0.25
    limited_seconds: float = 15.0
    rate_limit: int = 120
    rate_burst: int = 30
    seed: int = 1
    phase_timeout_s: float = 240.0


@dataclass
class Stats:
    """Counts and latencies of one phase (one event loop: no locks needed)."""

    snapshot_ms: list[float] = field(default_factory=list)
    commit_ms: list[float] = field(default_factory=list)
    accepted: int = 0
    stale: int = 0
    stale_cas: int = 0
    rate_limited: int = 0
    retry_after: Counter[int] = field(default_factory=Counter)
    limited_again: int = 0
    busy: int = 0
    server_errors: int = 0
    transport_errors: int = 0
    transport_kinds: Counter[str] = field(default_factory=Counter)
    transport_at: list[float] = field(default_factory=list)  # seconds into the phase
    started: float = 0.0
    unexpected: Counter[str] = field(default_factory=Counter)
    gave_up: int = 0
    lost_answers: int = 0
    admitted: Counter[str] = field(default_factory=Counter)
    span_s: float = 0.0  # from the first request to the last answer of the final look


class GaveUp(Exception):
    """Raised when a request failed `_MAX_ATTEMPTS` times or got an unexpected answer."""


@dataclass
class Intent:
    """A change a machine means to make: a new note, or a line appended to a note."""

    note_id: str
    line: str
    new: bool
    done: bool = False


@dataclass
class Accepted:
    """An acknowledged commit: the version it made and its puts (id -> (base, rev))."""

    version: int
    puts: dict[str, tuple[str | None, str]]


class Machine:
    """One simulated machine: its account, its view of one scope, its pending changes."""

    def __init__(
        self,
        name: str,
        account: str,
        client: httpx.AsyncClient,
        scope: dict[str, str],
        stats: Stats,
    ) -> None:
        self.name = name
        self.account = account
        self.client = client
        self.scope = scope
        self.stats = stats
        self.view: dict[str, tuple[str, str]] = {}  # id -> (rev, text)
        self.version: int | None = None
        self.intents: list[Intent] = []
        self.accepted: list[Accepted] = []
        self.failed: str | None = None
        self.lost_answers = 0

    async def _post(
        self, path: str, body: dict[str, Any], latencies: list[float]
    ) -> httpx.Response:
        """POST until the answer is final (not 429/5xx/transport error); record its latency."""
        stats = self.stats
        waited_for_limit = False
        for attempt in range(_MAX_ATTEMPTS):
            started = time.perf_counter()
            try:
                answer = await self.client.post(path, json=body)
            except httpx.TransportError as exc:
                stats.transport_errors += 1
                stats.transport_kinds[f"{path.rsplit('/', 1)[-1]} {type(exc).__name__}"] += 1
                stats.transport_at.append(round(time.monotonic() - stats.started, 1))
                await asyncio.sleep(min(5.0, 0.1 * 2**attempt))
                continue
            elapsed_ms = (time.perf_counter() - started) * 1000
            status = answer.status_code
            if status == 429:
                stats.rate_limited += 1
                stats.limited_again += waited_for_limit
                wait = int(answer.headers.get("Retry-After", "1"))
                stats.retry_after[wait] += 1
                waited_for_limit = True
                await asyncio.sleep(wait + random.uniform(0, 0.2))
                continue
            stats.admitted[self.account] += 1
            if status >= 500:
                if status == 503:
                    stats.busy += 1
                else:
                    stats.server_errors += 1
                after = answer.headers.get("Retry-After")
                backoff = float(after) if after and after.isdigit() else 0.1 * 2**attempt
                await asyncio.sleep(min(5.0, backoff))
                continue
            if status in (200, 409):
                latencies.append(elapsed_ms)
            return answer
        raise GaveUp(f"{path}: no final answer after {_MAX_ATTEMPTS} attempts")

    async def snapshot(self, *, full: bool = False) -> dict[str, Any]:
        """Bring the view up to date (all texts anew with `full`); return the last answer."""
        held = {rev: text for rev, text in self.view.values()}
        known = None if full else self.version
        have = [] if full else sorted(held)
        fetched: dict[str, str] = {}
        while True:
            body = {"scope": self.scope, "have": have, "known_version": known}
            answer = await self._post("/v1/memory/snapshot", body, self.stats.snapshot_ms)
            if answer.status_code != 200:
                self.stats.unexpected[f"snapshot {answer.status_code}"] += 1
                raise GaveUp(f"snapshot answered {answer.status_code}: {answer.text[:200]}")
            snap: dict[str, Any] = answer.json()
            if snap.get("unchanged"):
                return snap
            for rev, text in snap["objects"].items():
                if rev_of(text.encode()) != rev:
                    raise GaveUp(f"the server sent a text under another revision {rev}")
                fetched[rev] = text
            if not snap["truncated"]:
                break
            have = sorted(set(have) | set(fetched))
        texts = fetched if full else {**held, **fetched}
        missing = [i for i, e in snap["notes"].items() if e["rev"] not in texts]
        if missing:
            raise GaveUp(f"snapshot of {self.account} lacks the texts of {missing[:5]}")
        self.view = {i: (e["rev"], texts[e["rev"]]) for i, e in snap["notes"].items()}
        self.version = snap["version"]
        return snap

    def _applied(self, intent: Intent) -> bool:
        held = self.view.get(intent.note_id)
        return held is not None and intent.line in held[1]

    def _change(self, intent: Intent) -> dict[str, Any]:
        held = self.view.get(intent.note_id)
        if intent.new:
            note = Note(id=intent.note_id, summary=f"load note {intent.note_id}", body=intent.line)
            base = None
        else:
            assert held is not None
            base = held[0]
            old = parse_note(held[1].encode())
            note = dataclasses.replace(old, body=f"{old.body.rstrip()}\n{intent.line}")
        text = render_note(note).decode()
        return {
            "id": note.id,
            "op": "put",
            "base": base,
            "rev": rev_of(text.encode()),
            "text": text,
        }

    async def sync_round(self, intents: Sequence[Intent]) -> None:
        """Snapshot, then commit `intents`, rebuilding against a fresh snapshot on 409."""
        self.intents.extend(intents)
        await self.snapshot()
        for _ in range(_MAX_REBUILDS):
            pending = []
            for intent in intents:
                if not intent.done and self._applied(intent):
                    intent.done = True  # on the server, though its answer never came
                    self.stats.lost_answers += 1
                    self.lost_answers += 1
                if not intent.done:
                    pending.append(intent)
            if not pending:
                return
            changes = [self._change(i) for i in pending]
            body = {"scope": self.scope, "changes": changes}
            answer = await self._post("/v1/memory/commit", body, self.stats.commit_ms)
            if answer.status_code == 200:
                result = answer.json()
                self.stats.accepted += 1
                puts = {c["id"]: (c["base"], c["rev"]) for c in changes}
                self.accepted.append(Accepted(result["version"], puts))
                for intent, change in zip(pending, changes, strict=True):
                    intent.done = True
                    self.view[change["id"]] = (change["rev"], change["text"])
                if self.version is not None and result["version"] == self.version + 1:
                    self.version = result["version"]  # nothing else came in between
                return
            if answer.status_code == 409 and answer.json().get("error") == "stale":
                self.stats.stale += 1
                self.stats.stale_cas += not answer.json().get("ids")
                await self.snapshot()
                continue
            self.stats.unexpected[f"commit {answer.status_code}"] += 1
            raise GaveUp(f"commit answered {answer.status_code}: {answer.text[:200]}")
        raise GaveUp(f"{self.name}: still stale after {_MAX_REBUILDS} rebuilds")

    def pick_target(self, rng: random.Random, exclude: set[str]) -> str | None:
        """A note of the account to edit: half the time one of its two hottest (the first by
        id, which every machine of the account edits), else any, most likely another's."""
        candidates = sorted(set(self.view) - exclude)
        if candidates and rng.random() < 0.5:
            return rng.choice(candidates[:2])
        return rng.choice(candidates) if candidates else None


async def _drive(machine: Machine, plan: Plan, index: int, deadline: float | None) -> None:
    """One machine's rounds: `plan.notes` of them (or until `deadline`), edits spread over them."""
    rng = random.Random(plan.seed * 100_003 + index)
    edits_left = plan.edits if deadline is None else 0
    per_round = math.ceil(plan.edits / max(1, plan.notes)) if edits_left else 0
    n = 0
    await asyncio.sleep(rng.uniform(0, plan.jitter_s))
    try:
        while True:
            more_notes = n < plan.notes if deadline is None else time.monotonic() < deadline
            if not more_notes and not edits_left:
                return
            intents: list[Intent] = []
            if more_notes:
                note_id = f"{machine.name}-n{n}"
                intents.append(Intent(note_id, f"written by {machine.name} in round {n}.", True))
                n += 1
            for _ in range(min(per_round, edits_left)):
                target = machine.pick_target(rng, {i.note_id for i in intents})
                if target is None:
                    break
                k = plan.edits - edits_left
                intents.append(Intent(target, f"- edited by {machine.name}, edit {k}.", False))
                edits_left -= 1
            if not intents:  # an edit with nothing to edit yet: look again after a pause
                await asyncio.sleep(rng.uniform(0, plan.jitter_s))
                await machine.snapshot()
                continue
            await machine.sync_round(intents)
            await asyncio.sleep(rng.uniform(0, plan.jitter_s))
    except GaveUp as exc:
        machine.stats.gave_up += 1
        machine.failed = str(exc)


@dataclass
class PhaseResult:
    """One phase's figures and the problems the convergence check found."""

    backend: str
    replicas: int
    phase: str
    machines: int
    accounts: int
    wall_s: float
    commits_per_s: float
    snapshot_ms: dict[str, float]
    commit_ms: dict[str, float]
    counts: dict[str, int]
    retry_after: dict[str, int]
    transport_kinds: dict[str, int]
    transport_at: list[float]
    admitted_max: int
    admitted_allowed: int
    limiter_shared: bool
    span_s: float
    notes: int
    edits: int
    problems: list[str]

    @property
    def ok(self) -> bool:
        """True when nothing was lost, extra, refused or left unconverged."""
        return not self.problems


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0, "max": 0.0}
    cuts = (
        statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else values * 99
    )
    return {"p50": cuts[49], "p95": cuts[94], "p99": cuts[98], "max": max(values)}


def check_account(
    account: str, machines: list[Machine], final: Machine
) -> tuple[list[str], int, int]:
    """The convergence problems of one account; the notes and edits it holds."""
    problems: list[str] = [f"{account}: {final.failed}"] if final.failed else []
    notes = {i: rev for i, (rev, _) in final.view.items()}
    texts = {i: text for i, (_, text) in final.view.items()}
    intents = [i for m in machines for i in m.intents]
    uncertain = {i.note_id for i in intents if i.new and not i.done}
    expected = {i.note_id for i in intents if i.new and i.done}
    lost = expected - notes.keys()
    extra = notes.keys() - expected - uncertain
    if lost:
        problems.append(f"{account}: {len(lost)} notes lost, e.g. {sorted(lost)[:3]}")
    if extra:
        problems.append(f"{account}: {len(extra)} notes nobody wrote, e.g. {sorted(extra)[:3]}")
    edits = [i for i in intents if not i.new and i.done]
    lost_edits = [i for i in edits if i.line not in texts.get(i.note_id, "")]
    if lost_edits:
        problems.append(
            f"{account}: {len(lost_edits)} acknowledged edits lost, e.g. {lost_edits[0]}"
        )
    accepted = sorted((a for m in machines for a in m.accepted), key=lambda a: a.version)
    versions = [a.version for a in accepted]
    if len(set(versions)) != len(versions):
        dupes = sorted(v for v, c in Counter(versions).items() if c > 1)
        problems.append(f"{account}: two commits acknowledged with one version: {dupes[:5]}")
    lost_answers = sum(m.lost_answers for m in machines)
    made = final.version or 0
    if not len(accepted) <= made <= len(accepted) + lost_answers:
        problems.append(
            f"{account}: the manifest is at version {made} after {len(accepted)} acknowledged "
            f"commits and {lost_answers} lost answers"
        )
    if not lost_answers:
        chain: dict[str, str | None] = {}
        for commit in accepted:
            for note_id, (base, rev) in commit.puts.items():
                if chain.get(note_id) != base:
                    problems.append(
                        f"{account}: {note_id} at version {commit.version} was based on "
                        f"{base and base[:12]}, not on the revision before it"
                    )
                chain[note_id] = rev
        if chain != notes:
            problems.append(f"{account}: the manifest is not the last acknowledged revisions")
    for machine in machines:
        view = {i: rev for i, (rev, _) in machine.view.items()}
        if view != notes:
            problems.append(f"{machine.name}: its final view differs from the manifest")
        if machine.failed:
            problems.append(f"{machine.name}: gave up: {machine.failed}")
    return problems, len(notes), sum(t.count("\n- edited by ") for t in texts.values())


async def _phase(
    urls: Sequence[str], tokens: dict[str, str], plan: Plan, scope: dict[str, str], limited: bool
) -> tuple[Stats, float, list[Machine], dict[str, Machine]]:
    stats = Stats()
    limits = httpx.Limits(max_connections=4, max_keepalive_connections=4)
    timeout = httpx.Timeout(_REQUEST_TIMEOUT_S)
    accounts = sorted(tokens)
    machines: list[Machine] = []
    async with contextlib.AsyncExitStack() as stack:
        for index in range(plan.machines):
            account = accounts[index % len(accounts)]
            client = httpx.AsyncClient(
                base_url=urls[index % len(urls)],  # machines spread over the replicas
                headers=auth_headers(tokens[account]),
                limits=limits,
                timeout=timeout,
            )
            await stack.enter_async_context(client)
            name = f"m{index:03d}"
            machines.append(Machine(name, account, client, scope, stats))
        started = stats.started = time.monotonic()
        deadline = started + plan.limited_seconds if limited else None
        drives = [_drive(m, plan, i, deadline) for i, m in enumerate(machines)]
        try:
            await asyncio.wait_for(asyncio.gather(*drives), plan.phase_timeout_s)
        except TimeoutError:
            for machine in machines:
                machine.failed = machine.failed or f"the phase ran over {plan.phase_timeout_s:g} s"
        wall = time.monotonic() - started
        # The final look: every machine's incremental snapshot, then one full one per account.
        finals = {
            m.account: Machine(f"{m.account}-witness", m.account, m.client, scope, stats)
            for m in reversed(machines)
        }
        everyone = [*machines, *finals.values()]
        looks = [m.snapshot(full=m in finals.values()) for m in everyone]
        for machine, outcome in zip(
            everyone, await asyncio.gather(*looks, return_exceptions=True), strict=True
        ):
            if isinstance(outcome, BaseException):
                machine.failed = f"final snapshot: {outcome}"
        stats.span_s = time.monotonic() - started
    return stats, wall, machines, finals


def run_phase(
    backend: str, urls: Sequence[str], tokens: dict[str, str], plan: Plan, *, limited: bool
) -> PhaseResult:
    """Run one phase against the server replicas at `urls` and check convergence."""
    scope = (
        {"kind": "project", "project": f"load-{uuid.uuid4().hex[:12]}"} if limited else USER_SCOPE
    )
    stats, wall, machines, finals = asyncio.run(_phase(urls, tokens, plan, scope, limited))
    problems: list[str] = []
    notes = edits = 0
    for account, final in sorted(finals.items()):
        own = [m for m in machines if m.account == account]
        found, held, edited = check_account(account, own, final)
        problems += found
        notes += held
        edits += edited
    if stats.unexpected:
        problems.append(f"unexpected answers: {dict(stats.unexpected)}")
    allowed = 0
    shared = backend != "dir" or len(urls) == 1  # the dir backend's buckets are per process
    if limited:
        allowed = int(plan.rate_burst + plan.rate_limit / 60 * stats.span_s + 1)
        busiest = max(stats.admitted.values(), default=0)
        if busiest > allowed and shared:
            problems.append(
                f"the limiter let {busiest} requests of one account through, not {allowed}"
            )
    counts = {
        "accepted": stats.accepted,
        "stale": stats.stale,
        "stale_cas": stats.stale_cas,
        "rate_limited": stats.rate_limited,
        "limited_again": stats.limited_again,
        "busy_503": stats.busy,
        "other_5xx": stats.server_errors,
        "transport": stats.transport_errors,
        "lost_answers": stats.lost_answers,
        "gave_up": stats.gave_up,
    }
    return PhaseResult(
        backend=backend,
        replicas=len(urls),
        phase="limited" if limited else "unlimited",
        machines=plan.machines,
        accounts=len(tokens),
        wall_s=wall,
        commits_per_s=stats.accepted / wall if wall else 0.0,
        snapshot_ms=_percentiles(stats.snapshot_ms),
        commit_ms=_percentiles(stats.commit_ms),
        counts=counts,
        retry_after={str(k): v for k, v in sorted(stats.retry_after.items())},
        transport_kinds=dict(stats.transport_kinds),
        transport_at=stats.transport_at,
        admitted_max=max(stats.admitted.values(), default=0),
        admitted_allowed=allowed,
        limiter_shared=shared,
        span_s=stats.span_s,
        notes=notes,
        edits=edits,
        problems=problems,
    )


@contextlib.contextmanager
def postgres_database(dsn: str | None) -> Iterator[str]:
    """A DSN of a new, empty database: in `dsn`'s server, else in a throwaway cluster."""
    import psycopg
    from psycopg import conninfo, sql

    with contextlib.ExitStack() as stack:
        admin = dsn or os.environ.get("MEMDIR_TEST_PG_DSN")
        if not admin:
            import postgres_cluster

            cluster = postgres_cluster.start_cluster()
            stack.callback(cluster.stop)
            admin = cluster.dsn
        name = f"memdir_bench_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

        def drop() -> None:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )

        stack.callback(drop)
        yield conninfo.make_conninfo(admin, dbname=name)


@contextlib.contextmanager
def _aws_env(values: dict[str, str]) -> Iterator[None]:
    """Set the AWS variables the server subprocess inherits; restore them afterwards."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def backend_args(
    backend: str, *, dsn: str | None = None, s3: tuple[str, str, str] | None = None
) -> Iterator[tuple[str | None, list[str]]]:
    """The DSN and extra `serve` arguments of `backend`, its store started if need be.

    `s3` is (endpoint, bucket, prefix) of a store whose credentials are in the environment.
    """
    if backend == "dir":
        yield None, []
    elif backend == "postgres":
        with postgres_database(dsn) as database:
            yield database, []
    elif backend == "s3":
        with contextlib.ExitStack() as stack:
            if s3 is None:
                from seaweed import running_seaweed

                weed = stack.enter_context(running_seaweed())
                stack.enter_context(_aws_env(weed.env()))
                s3 = (weed.endpoint, weed.make_bucket("memdir-load"), "load")
            endpoint, bucket, prefix = s3
            yield None, ["--s3-endpoint", endpoint, "--bucket", bucket, "--prefix", prefix]
    else:
        raise ValueError(f"unknown backend {backend!r}; use {', '.join(BACKENDS)}")


def run_backend(
    backend: str,
    plan: Plan,
    work: Path,
    *,
    dsn: str | None = None,
    s3: tuple[str, str, str] | None = None,
    phases: Sequence[bool] = (False, True),
    replicas: int = 1,
) -> list[PhaseResult]:
    """Both phases (or `phases`: False unlimited, True limited) against one backend, served
    by `replicas` server processes over the same storage (and accounts file)."""
    data = work / f"server-{backend}-x{replicas}"
    data.mkdir(parents=True)
    tokens = {f"acct{i:03d}": add_user(data, f"acct{i:03d}") for i in range(plan.accounts)}
    results = []
    with backend_args(backend, dsn=dsn, s3=s3) as (database, extra):
        for limited in phases:
            rate = (
                [str(plan.rate_limit), "--rate-burst", str(plan.rate_burst)] if limited else ["0"]
            )
            args = [*extra, "--rate-limit", *rate]
            with contextlib.ExitStack() as servers:
                urls = [
                    servers.enter_context(
                        running_server(data, backend=backend, dsn=database, extra_args=args)
                    ).url
                    for _ in range(replicas)
                ]
                results.append(run_phase(backend, urls, tokens, plan, limited=limited))
    return results


def _table(results: list[PhaseResult]) -> None:
    header = (
        f"{'backend':<9}{'repl':>4} {'phase':<10}{'wall s':>7}{'commit/s':>9}"
        f"{'snap p50/p95/p99 ms':>22}"
        f"{'commit p50/p95/p99 ms':>24}{'409':>6}{'429':>6}{'5xx':>5}{'net':>5}{'notes':>7}"
        f"{'edits':>6}  converged"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        s, c, n = r.snapshot_ms, r.commit_ms, r.counts
        snap = f"{s['p50']:.0f}/{s['p95']:.0f}/{s['p99']:.0f}"
        commit = f"{c['p50']:.0f}/{c['p95']:.0f}/{c['p99']:.0f}"
        print(
            f"{r.backend:<9}{r.replicas:>4} {r.phase:<10}{r.wall_s:>7.1f}"
            f"{r.commits_per_s:>9.1f}{snap:>22}"
            f"{commit:>24}{n['stale']:>6}{n['rate_limited']:>6}"
            f"{n['busy_503'] + n['other_5xx']:>5}{n['transport']:>5}{r.notes:>7}{r.edits:>6}"
            f"  {'yes' if r.ok else 'NO'}"
        )
    for r in results:
        n = r.counts
        net = f" {r.transport_kinds} at {r.transport_at} s" if r.transport_at else ""
        print(
            f"\n[{r.backend} ×{r.replicas} {r.phase}] {n['accepted']} commits accepted; "
            f"409 stale {n['stale']}"
            f" ({n['stale_cas']} with no stale ids: compare-and-swap retries ran out); "
            f"503 {n['busy_503']}, other 5xx {n['other_5xx']}, transport errors {n['transport']}"
            f"{net}, "
            f"answers lost {n['lost_answers']}, requests given up {n['gave_up']}"
        )
        if r.phase == "limited":
            print(
                f"  rate limiter: {n['rate_limited']} answers 429, Retry-After seconds seen "
                f"{r.retry_after or '{}'}, {n['limited_again']} 429s again after waiting; the "
                f"busiest account got {r.admitted_max} requests through, the limiter allows "
                f"{r.admitted_allowed} in {r.span_s:.1f} s (final look included)"
                + (
                    ""
                    if r.limiter_shared
                    else f"; the {r.backend} backend keeps buckets per replica, so "
                    f"{r.replicas} replicas allow up to {r.replicas}× that (not checked)"
                )
            )
        for problem in r.problems[:20]:
            print(f"  PROBLEM: {problem}")
        if len(r.problems) > 20:
            print(f"  … and {len(r.problems) - 20} more problems")


_DEFAULTS = Plan()


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> int:
    """Parse the options, run every backend, print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--machines", type=int, default=_DEFAULTS.machines)
    parser.add_argument("--accounts", type=int, default=_DEFAULTS.accounts)
    parser.add_argument("--notes", type=int, default=_DEFAULTS.notes, help="new notes per machine")
    parser.add_argument("--edits", type=int, default=_DEFAULTS.edits, help="edits per machine")
    parser.add_argument("--seconds", type=float, default=_DEFAULTS.limited_seconds, help="phase 2")
    parser.add_argument(
        "--rate-limit", type=int, default=_DEFAULTS.rate_limit, help="phase 2, per minute"
    )
    parser.add_argument("--rate-burst", type=int, default=_DEFAULTS.rate_burst, help="phase 2")
    parser.add_argument(
        "--jitter", type=float, default=_DEFAULTS.jitter_s, help="seconds between rounds"
    )
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument(
        "--replicas", default="1", help="server processes per backend, e.g. 1,3 (one run each)"
    )
    parser.add_argument("--dsn", help="an existing PostgreSQL server (a database is made in it)")
    parser.add_argument("--seed", type=int, default=_DEFAULTS.seed)
    parser.add_argument(
        "--timeout", type=float, default=_DEFAULTS.phase_timeout_s, help="per phase"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.machines < args.accounts or args.accounts < 1:
        parser.error("--machines must be at least --accounts, and --accounts at least 1")
    plan = Plan(
        machines=args.machines,
        accounts=args.accounts,
        notes=args.notes,
        edits=args.edits,
        jitter_s=args.jitter,
        limited_seconds=args.seconds,
        rate_limit=args.rate_limit,
        rate_burst=args.rate_burst,
        seed=args.seed,
        phase_timeout_s=args.timeout,
    )
    backends = [b for b in args.backends.split(",") if b]
    try:
        counts = [int(n) for n in args.replicas.split(",") if n]
    except ValueError:
        parser.error("--replicas takes numbers, e.g. 1,3")
    if not counts or min(counts) < 1:
        parser.error("--replicas takes numbers of at least 1")
    signal.signal(signal.SIGTERM, _raise_interrupt)
    results: list[PhaseResult] = []
    skipped: dict[str, str] = {}
    if not args.json:
        print(
            f"server load: {plan.machines} machines over {plan.accounts} accounts, "
            f"{plan.notes} notes and {plan.edits} edits each; "
            f"limited phase {plan.limited_seconds:g} s"
        )
    with tempfile.TemporaryDirectory(prefix="memdir-load-") as work:
        for backend in backends:
            for replicas in counts:
                if not args.json:
                    print(f"[{backend} ×{replicas}] running…", flush=True)
                try:
                    results += run_backend(
                        backend, plan, Path(work), dsn=args.dsn, replicas=replicas
                    )
                except (RuntimeError, ImportError) as exc:  # no PostgreSQL, no SeaweedFS here
                    reason = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
                    skipped[f"{backend} ×{replicas}"] = reason
    if args.json:
        doc = {
            "plan": dataclasses.asdict(plan),
            "results": [dataclasses.asdict(r) | {"ok": r.ok} for r in results],
            "skipped": skipped,
        }
        print(json.dumps(doc, indent=2))
    else:
        print()
        _table(results)
        for backend, reason in skipped.items():
            print(f"{backend} SKIPPED: {reason}")
    return 0 if results and all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
