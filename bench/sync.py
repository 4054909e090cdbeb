"""Benchmark: §7 sync of N user notes through a real `memdir server serve`, per backend.

Run as ``python bench/sync.py [--notes 5000] [--repeat 3] [--edits 10] [--backends dir,postgres]
[--dsn DSN]``. For each backend a server subprocess listens on a free loopback port
with a fresh data directory and one account; two machines, A and B, are two
`Memory.open(None, home=...)` in temporary MEMDIR_HOMEs (user notes only, ``[embed]
provider = "none"``). Scenarios, each timed with perf_counter around `Memory.sync()`
alone, with the requests, bytes sent/received (request and response bodies, from
`PassReport`) and note bodies moved (pulled + pushed + merged):

1. initial upload: A holds N user notes, the server none. The notes are written as
   files with `render_note` (bodies of a few hundred bytes to a few KB, deterministic
   by seed, file times an hour old as in a store at rest) and scanned once by
   `Memory.list()` before the clock starts: the first scan is not counted.
2. initial download: B, with an empty home, signs in (not timed) and pulls N notes.
3. no-change passes: `--repeat` passes on A, then on B, on the same open `Memory`
   (median and max); plus one pass on a freshly opened `Memory` per machine, as a
   `memdir sync` command run does (its note cache is cold).
4. small change: A edits `--edits` notes (files rewritten, as an editor does), then
   A.sync() uploads them and B.sync() downloads them: only those bodies move (`have`).

Targets (§7), printed as PASS/MISS beside the figures, never asserted: an initial sync
under 30 s; a no-change pass under 1 s that moves no note bodies (bytes received
printed: they should be tiny).

PostgreSQL: with ``--dsn`` an existing database is used (the account is uniquely
named and erased afterwards); otherwise a throwaway cluster is started with
``python tests/postgres_cluster.py start`` (as a subprocess) and removed afterwards.
When neither works, the postgres backend is skipped and the reason printed. The
server runs with ``--rate-limit 0`` (a benchmark's back-to-back passes would hit the
per-account limit, which is not what is measured) and ``--max-notes`` raised to N
when N is above the default.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from memdir import Memory
from memdir.core import Note, NoteType, make_id, render_note

_REPO = Path(__file__).resolve().parent.parent
# The server launcher the tests use (tests/sync_server.py), shared rather than copied.
sys.path.insert(0, str(_REPO / "tests"))
from sync_server import MEMDIR_COMMAND as _MEMDIR  # noqa: E402
from sync_server import running_server  # noqa: E402

_CLUSTER_SCRIPT = _REPO / "tests" / "postgres_cluster.py"
_INITIAL_TARGET_S = 30.0
_NO_CHANGE_TARGET_S = 1.0


def _words(text: str) -> list[str]:
    return text.split()


_TOPICS = _words(
    "database migration schema index query cache replica backup restore deploy release "
    "staging rollback pipeline container frontend component layout routing bundle testing "
    "fixture coverage benchmark profiling latency logging metrics tracing alert incident "
    "payment invoice pricing checkout subscription refund customer login session token "
    "permission audit encryption endpoint pagination webhook timeout retry notification "
    "queue worker scheduler export report editor terminal keyboard shortcut theme font"
)
_FILLER = _words(
    "the a of to and in for with on when after before because so that it this we they "
    "prefers uses avoids wants always never usually likes dislikes asked said noted keeps "
    "checks runs writes reads sends fixes breaks moves updates prefers reviews"
)
_NAMES = ("Alice", "Bob", "Chen", "Dana", "Eve", "Farid", "Grace", "Hiro", "Ines", "Jon")


# -- notes ---------------------------------------------------------------------------


def _sentence(rng: random.Random) -> str:
    words = [
        rng.choice(_TOPICS) if rng.random() < 0.35 else rng.choice(_FILLER)
        for _ in range(rng.randint(7, 18))
    ]
    if rng.random() < 0.15:
        words.insert(rng.randrange(len(words)), rng.choice(_NAMES))
    if rng.random() < 0.1:
        words.append(f"({rng.randint(2, 500)} ms)")
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def _body(rng: random.Random) -> str:
    """Markdown of about 200 bytes to 5 KB (log-uniform): paragraphs, lists, code."""
    target = int(200 * 25 ** rng.random())
    parts: list[str] = []
    size = 0
    while size < target:
        kind = rng.random()
        if kind < 0.6:
            part = " ".join(_sentence(rng) for _ in range(rng.randint(1, 4)))
        elif kind < 0.85:
            part = "\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 5)))
        elif kind < 0.95:
            lines = [
                f"{rng.choice(_TOPICS)}_{rng.choice(_TOPICS)} = {rng.randint(0, 9999)}"
                for _ in range(rng.randint(2, 6))
            ]
            part = "```\n" + "\n".join(lines) + "\n```"
        else:
            part = f"## {rng.choice(_TOPICS).capitalize()} {rng.choice(_TOPICS)}"
        parts.append(part)
        size += len(part) + 2
    return "\n\n".join(parts)


def _write_notes(directory: Path, n: int, rng: random.Random) -> tuple[list[str], int]:
    """N user notes as files; their ids and the total body bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    base = 1_700_000_000_000
    taken: set[str] = set()
    body_bytes = 0

    def token(nbytes: int) -> str:
        return f"{rng.getrandbits(nbytes * 8):0{nbytes * 2}x}"

    for i in range(n):
        summary = " ".join(rng.choice(_TOPICS + _FILLER) for _ in range(rng.randint(3, 9)))
        note = Note(
            id=make_id(summary, taken, token=token),
            summary=summary.capitalize(),
            body=_body(rng),
            type=NoteType.USER,
            tags=tuple(sorted(set(rng.sample(_TOPICS, rng.randint(0, 3))))),
            created_at=base + i * 60_000,
            updated_at=base + i * 60_000,
        )
        taken.add(note.id.casefold())
        body_bytes += len(note.body.encode("utf-8"))
        (directory / f"{note.id}.md").write_bytes(render_note(note))
    # As in a store at rest: older than the scan's racy window.
    old = time.time_ns() - 3_600_000_000_000
    for path in directory.glob("*.md"):
        os.utime(path, ns=(old, old))
    return sorted(taken), body_bytes


def _edit_notes(directory: Path, ids: list[str], rng: random.Random) -> None:
    """Rewrite each note with an extra paragraph, as a person in an editor would."""
    from memdir.core import parse_note

    for note_id in ids:
        path = directory / f"{note_id}.md"
        note = parse_note(path.read_bytes(), file_id=note_id)
        edited = Note(
            id=note.id,
            summary=note.summary,
            body=note.body + "\n\n" + _sentence(rng),
            type=note.type,
            tags=note.tags,
            created_at=note.created_at,
            updated_at=note.updated_at + 1,
        )
        path.write_bytes(render_note(edited))


# -- server and cluster -----------------------------------------------------------------


@contextmanager
def _server(data: Path, backend: str, dsn: str | None, max_notes: int) -> Iterator[str]:
    """`memdir server serve` on a free loopback port; yields its URL, stops it after."""
    extra = ["--rate-limit", "0"]
    if max_notes > 5000:
        extra += ["--max-notes", str(max_notes)]
    with running_server(data, backend=backend, dsn=dsn, extra_args=extra) as server:
        yield server.url


def _memdir(*args: str, dsn: str | None = None) -> None:
    env = dict(os.environ)
    env.pop("MEMDIR_SERVER_DSN", None)
    if dsn is not None:
        env["MEMDIR_SERVER_DSN"] = dsn
    result = subprocess.run([*_MEMDIR, *args], capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"memdir {args[0]} {args[1]} failed: {result.stderr.strip()[-1000:]}")


class _Unavailable(RuntimeError):
    """No PostgreSQL cluster could be started here; the message says why."""


@contextmanager
def _cluster(work: Path) -> Iterator[str]:
    """A throwaway PostgreSQL via tests/postgres_cluster.py; yields its DSN."""
    if not _CLUSTER_SCRIPT.is_file():
        raise _Unavailable(f"{_CLUSTER_SCRIPT} not found (run from a source checkout)")
    env_file = work / "pg.env"
    started = subprocess.run(
        [sys.executable, str(_CLUSTER_SCRIPT), "start", "--env-file", str(env_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        if started.returncode != 0 or not env_file.exists():
            reason = (started.stderr or started.stdout).strip().splitlines()
            raise _Unavailable(reason[-1] if reason else "could not start a PostgreSQL cluster")
        values = dict(
            line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line
        )
        yield values["MEMDIR_TEST_PG_DSN"]
    finally:
        if env_file.exists():
            subprocess.run(
                [sys.executable, str(_CLUSTER_SCRIPT), "stop", "--env-file", str(env_file)],
                capture_output=True,
                check=False,
            )


# -- measuring --------------------------------------------------------------------------


@dataclass
class Figure:
    """One scenario's figures; `times` holds one sample per pass."""

    backend: str
    scenario: str
    times: list[float] = field(default_factory=list)
    requests: int = 0
    sent: int = 0
    received: int = 0
    bodies: int = 0
    target: str = ""
    verdict: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def worst(self) -> float:
        return max(self.times)


def _timed_sync(memory: Memory, figure: Figure) -> Figure:
    """One `sync()` added to `figure`: time, and per-pass maxima of requests, bytes, bodies."""
    start = time.perf_counter()
    run = memory.sync.run()
    figure.times.append(time.perf_counter() - start)
    if run.paused:
        raise RuntimeError(f"sync paused: {run.paused}")
    reports = run.reports
    figure.requests = max(figure.requests, sum(r.requests for r in reports))
    figure.sent = max(figure.sent, sum(r.bytes_sent for r in reports))
    figure.received = max(figure.received, sum(r.bytes_received for r in reports))
    moved = sum(len(r.pulled) + len(r.pushed) + len(r.merged) for r in reports)
    figure.bodies = max(figure.bodies, moved)
    held = {k: v for r in reports for k, v in r.held.items()}
    conflicts = sum(len(r.conflicts) for r in reports)
    if held or conflicts:
        print(f"    note: {len(held)} held, {conflicts} conflicts: {list(held.items())[:3]}")
    return figure


def _size(n: int) -> str:
    if n < 10_000:
        return f"{n} B"
    if n < 10_000_000:
        return f"{n / 1024:.0f} KiB"
    return f"{n / 1024 / 1024:.1f} MiB"


def _show(figure: Figure) -> None:
    spread = (
        f" (median; passes in order: {', '.join(f'{t:.3f}' for t in figure.times)} s)"
        if len(figure.times) > 1
        else ""
    )
    print(
        f"  {figure.scenario:<26} {figure.median:8.3f} s{spread}   {figure.requests} requests"
        f"   sent {_size(figure.sent)}   received {_size(figure.received)}"
        f"   bodies moved {figure.bodies}   {figure.verdict}".rstrip(),
        flush=True,
    )


def _judge_initial(figure: Figure, n: int) -> None:
    figure.target = f"< {_INITIAL_TARGET_S:.0f} s, {n} bodies"
    ok = figure.worst < _INITIAL_TARGET_S and figure.bodies == n
    figure.verdict = "PASS" if ok else "MISS"


def _judge_no_change(figure: Figure) -> None:
    figure.target = f"< {_NO_CHANGE_TARGET_S:.0f} s, 0 bodies"
    ok = figure.worst < _NO_CHANGE_TARGET_S and figure.bodies == 0
    figure.verdict = "PASS" if ok else "MISS"


def _judge_edit(figure: Figure, edits: int) -> None:
    figure.target = f"{edits} bodies"
    figure.verdict = "PASS" if figure.bodies == edits else "MISS"


def _open(home: Path) -> Memory:
    return Memory.open(None, home=home)


def _prepare_home(home: Path, n: int) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text(
        f'[memory]\nmaxNotes = {max(n, 5000)}\n\n[embed]\nprovider = "none"\n',
        encoding="utf-8",
    )


def run_backend(backend: str, dsn: str | None, args: argparse.Namespace) -> list[Figure]:
    """Every scenario against one backend; the figures in order."""
    n = args.notes
    rng = random.Random(args.seed)
    base = Path(tempfile.mkdtemp(prefix=f"memdir-bench-sync-{backend}-"))
    figures: list[Figure] = []
    memories: list[Memory] = []
    user = f"bench-{secrets.token_hex(4)}"
    data = base / "server"
    try:
        home_a, home_b = base / "home-a", base / "home-b"
        _prepare_home(home_a, n)
        _prepare_home(home_b, n)
        started = time.perf_counter()
        ids, body_bytes = _write_notes(home_a / "memory" / "user", n, rng)
        files = sum(p.stat().st_size for p in (home_a / "memory" / "user").glob("*.md"))
        print(
            f"  wrote {n} note files on A in {time.perf_counter() - started:.1f} s: "
            f"{_size(files)} ({_size(body_bytes)} of bodies, mean {body_bytes // max(n, 1)} B)"
        )
        data.mkdir()
        token_file = base / "token"
        _memdir("server", "user", "add", user, "--data", str(data), "--token-out", str(token_file))
        token = token_file.read_text().strip()

        with _server(data, backend, dsn, n) as url:
            a = _open(home_a)
            memories.append(a)
            started = time.perf_counter()
            listed = len(a.notes.list())
            print(
                f"  A's first scan (Memory.list(), not counted below): {listed} notes "
                f"in {time.perf_counter() - started:.2f} s"
            )
            a.sync.login(url, token)

            figure = _timed_sync(a, Figure(backend, "initial upload (A)"))
            _judge_initial(figure, n)
            _show(figure)
            figures.append(figure)

            b = _open(home_b)
            memories.append(b)
            b.sync.login(url, token)
            figure = _timed_sync(b, Figure(backend, "initial download (B)"))
            _judge_initial(figure, n)
            _show(figure)
            figures.append(figure)

            for name, memory in (("A", a), ("B", b)):
                figure = Figure(backend, f"no-change ({name})")
                for _ in range(args.repeat):
                    _timed_sync(memory, figure)
                _judge_no_change(figure)
                _show(figure)
                figures.append(figure)
            for name, home in (("A", home_a), ("B", home_b)):
                fresh = _open(home)
                try:
                    figure = _timed_sync(fresh, Figure(backend, f"no-change ({name}, fresh open)"))
                finally:
                    fresh.close()
                _judge_no_change(figure)
                _show(figure)
                figures.append(figure)

            edited = sorted(rng.sample(ids, min(args.edits, len(ids))))
            _edit_notes(home_a / "memory" / "user", edited, rng)
            figure = _timed_sync(a, Figure(backend, f"{len(edited)} edits: upload (A)"))
            _judge_edit(figure, len(edited))
            _show(figure)
            figures.append(figure)
            figure = _timed_sync(b, Figure(backend, f"{len(edited)} edits: download (B)"))
            _judge_edit(figure, len(edited))
            _show(figure)
            figures.append(figure)
            same = all(
                (home_a / "memory" / "user" / f"{i}.md").read_bytes()
                == (home_b / "memory" / "user" / f"{i}.md").read_bytes()
                for i in edited
            )
            if not same:
                print("  MISS: B's copies of the edited notes differ from A's")
        return figures
    finally:
        for memory in memories:
            memory.close()
        if dsn is not None and backend == "postgres":
            try:
                _memdir(
                    *("server", "erase", user, "--data", str(data)),
                    *("--backend", "postgres", "--yes"),
                    dsn=dsn,
                )
            except RuntimeError as error:
                print(f"  could not erase the bench account {user}: {error}")
        shutil.rmtree(base, ignore_errors=True)


def _table(figures: list[Figure]) -> None:
    header = (
        f"{'backend':<9} {'scenario':<28} {'median s':>9} {'max s':>8} {'req':>4} "
        f"{'sent':>9} {'received':>9} {'bodies':>6}  {'target':<20} result"
    )
    print(header)
    print("-" * len(header))
    for f in figures:
        print(
            f"{f.backend:<9} {f.scenario:<28} {f.median:9.3f} {f.worst:8.3f} {f.requests:>4} "
            f"{_size(f.sent):>9} {_size(f.received):>9} {f.bodies:>6}  {f.target:<20} {f.verdict}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--notes", type=int, default=5000, help="user notes on machine A")
    parser.add_argument("--repeat", type=int, default=3, help="no-change passes per machine")
    parser.add_argument("--edits", type=int, default=10, help="notes A edits for scenario 4")
    parser.add_argument("--seed", type=int, default=1, help="seed for the notes and edits")
    parser.add_argument("--backends", default="dir,postgres", help="comma-separated: dir, postgres")
    parser.add_argument(
        "--dsn",
        default=None,
        help="an existing PostgreSQL database for the postgres backend (else a throwaway one)",
    )
    args = parser.parse_args()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    for backend in backends:
        if backend not in ("dir", "postgres"):
            parser.error(f"unknown backend {backend!r}")

    print(f"sync benchmark: {args.notes} user notes, loopback server, seed {args.seed}")
    figures: list[Figure] = []
    skipped: dict[str, str] = {}
    for backend in backends:
        print(f"\n[{backend}]", flush=True)
        if backend == "dir":
            figures += run_backend("dir", None, args)
            continue
        if args.dsn is not None:
            figures += run_backend("postgres", args.dsn, args)
            continue
        work = Path(tempfile.mkdtemp(prefix="memdir-bench-pg-"))
        try:
            with ExitStack() as stack:
                try:
                    dsn = stack.enter_context(_cluster(work))
                except _Unavailable as error:
                    skipped["postgres"] = str(error)
                    print(f"  postgres SKIPPED: {error} (pass --dsn for an existing database)")
                    continue
                print("  throwaway PostgreSQL cluster started (tests/postgres_cluster.py)")
                figures += run_backend("postgres", dsn, args)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    print()
    _table(figures)
    for backend, reason in skipped.items():
        print(f"{backend:<9} SKIPPED: {reason}")
    print(
        f"\nmachine: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()} {platform.machine()}"
    )


if __name__ == "__main__":
    main()
