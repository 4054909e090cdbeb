"""Benchmark: what encryption at rest (§8.2) costs: unlock, reads, writes, search, converting.

Run as ``python bench/encryption.py [--runs 7] [--notes 1000] [--convert 5000]``. Three
stores are made in a temporary directory, each in a home of its own (one keyring and one
unlock agent per home), with the embedder off (``[embed] provider = "none"``, lexical
search only) and note files written directly (no history):

- an encrypted store of `--notes` notes, and a plain copy of it for comparison;
- a plain store of `--convert` notes that is encrypted, then decrypted.

Timed, as the median of `--runs` (min–max beside it):

- ``memdir unlock --password-file F`` as a process: Argon2id (64 MiB, 3 passes) plus
  the agent started (fresh: after ``memdir lock``), or handed the key (agent running);
  and the Argon2id key derivation alone, in-process;
- ``memdir read ID`` and ``memdir remember …`` as processes, and `Memory.read` /
  `Memory.remember` in a process that has the store open;
- `Memory.search` in-process: the first query after `Memory.open` (the agent holds the
  index image: it is fetched), the first after an unlock (no image: built from the
  sealed files), and warm;
- ``memdir encrypt`` and ``memdir decrypt`` of `--convert` notes: wall and CPU seconds
  (user + system of the command's process; the agent runs apart and is not counted).

Every agent is locked and the directory removed at the end. No assertions: the figures
are printed for people to read. Wall-clock on a shared machine: compare rows of one run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path

from memdir import Memory
from memdir.core import Note, render_note
from memdir.crypto.agent import AgentClient, AgentUnavailable, socket_path
from memdir.store.sealing import load_keyring

_VOCABULARY = (
    "pricing layout cards borders fills grid column release deploy database backup cache "
    "token schema migration review feedback design colour spacing typography latency queue "
    "worker index search recall summary invoice customer account report chart export import"
)
_WORDS = _VOCABULARY.split()
PASSWORD = "bench-encryption-password"
NO_EMBEDDER = '[embed]\nprovider = "none"\n'

Stats = tuple[float, float, float]


def _write_notes(directory: Path, count: int, rng: random.Random) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    past = time.time() - 86_400
    for i in range(count):
        words = rng.sample(_WORDS, 14)
        note = Note(
            id=f"n{i}",
            summary=f"{' '.join(words[:4]).capitalize()} ({i})",
            body=" ".join(words[4:]) + f". Figure {i * 7}.",
            tags=tuple(words[:2]),
            created_at=1_780_000_000_000 + i,
            updated_at=1_780_000_000_000 + i * 1000,
        )
        path = directory / f"{note.id}.md"
        path.write_bytes(render_note(note))
        os.utime(path, (past, past))  # a store at rest: timestamps old enough to trust


class Store:
    """One project and its home, and the memdir command run on them."""

    def __init__(self, root: Path, runtime: Path, notes: int, rng: random.Random) -> None:
        self.project, self.home, self.tmp = root / "project", root / "home", root / "tmp"
        for path in (self.project / ".git", self.home, self.tmp):
            path.mkdir(parents=True)
        (self.home / "config.toml").write_text(NO_EMBEDDER, encoding="utf-8")
        _write_notes(self.project / "MEMORY", notes, rng)
        self.runtime = runtime
        self.password_file = root / "password"
        self.password_file.write_text(PASSWORD + "\n", encoding="utf-8")
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")},
            "MEMDIR_HOME": str(self.home),
            "XDG_RUNTIME_DIR": str(runtime),
            "TMPDIR": str(self.tmp),
            "COLUMNS": "120",
        }

    @property
    def socket(self) -> Path:
        return socket_path(self.home, {"XDG_RUNTIME_DIR": str(self.runtime)})

    def run(self, *args: str) -> float:
        """Wall milliseconds of one `memdir` process (it must succeed)."""
        argv = [sys.executable, "-m", "memdir", "--project", str(self.project), *args]
        start = time.perf_counter()
        proc = subprocess.run(
            argv, env=self.env, stdin=subprocess.DEVNULL, capture_output=True, text=True
        )
        elapsed = (time.perf_counter() - start) * 1000
        if proc.returncode != 0:
            raise SystemExit(f"memdir {' '.join(args)} failed: {proc.stderr[-500:]}")
        return elapsed

    def run_cpu(self, *args: str) -> tuple[float, float]:
        """Wall and CPU seconds (user + system) of one `memdir` process."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = self.run(*args) / 1000
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu

    def unlock(self) -> float:
        return self.run("unlock", "--password-file", str(self.password_file))

    def lock(self) -> None:
        self.run("lock")
        deadline = time.monotonic() + 10
        while AgentClient(self.socket).running() and time.monotonic() < deadline:
            time.sleep(0.01)

    @contextlib.contextmanager
    def memory(self) -> Iterator[Memory]:
        os.environ["XDG_RUNTIME_DIR"] = str(self.runtime)  # the agent this process asks
        with Memory.open(self.project, home=self.home, embedder=None) as m:
            yield m


def _stats(samples: Sequence[float]) -> Stats:
    return statistics.median(samples), min(samples), max(samples)


def _repeat(measure: Callable[[], float], runs: int, *, warm: bool = True) -> Stats:
    if warm:
        measure()  # untimed: byte-code and page caches
    return _stats([measure() for _ in range(runs)])


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def _row(label: str, enc: Stats | None, plain: Stats | None = None, unit: str = "ms") -> None:
    def cell(s: Stats | None) -> str:
        if s is None:
            return f"{'–':>26}"
        digits = 1 if s[0] < 10 else 0
        return f"{s[0]:9.{digits}f} {unit} ({s[1]:.{digits}f}–{s[2]:.{digits}f})".rjust(26)

    print(f"{label:<52}{cell(enc)}{cell(plain)}")


def _in_process(store: Store, runs: int, ids: list[str]) -> dict[str, Stats]:
    out: dict[str, Stats] = {}
    rng = random.Random(5)
    first_read: list[float] = []
    for note_id in rng.sample(ids, runs):
        with store.memory() as m:
            first_read.append(_timed(partial(m.read, note_id)))
    out["read first"] = _stats(first_read)
    with store.memory() as m:
        m.read(ids[0])  # the first read lists the directory once
        out["read"] = _stats([_timed(partial(m.read, i)) for i in rng.sample(ids, runs * 5)])
        out["remember"] = _stats(
            [
                _timed(partial(m.remember, f"Bench write {k}", body="a body", id=f"w-ip-{k}"))
                for k in range(runs * 3)
            ]
        )
    first: list[float] = []
    for k in range(runs):
        with store.memory() as m:
            first.append(_timed(partial(m.search, _WORDS[k % len(_WORDS)])))
    out["search first"] = _stats(first)
    with store.memory() as m:
        m.search("deploy")
        out["search warm"] = _stats(
            [_timed(partial(m.search, w)) for w in rng.choices(_WORDS, k=runs * 5)]
        )
    return out


def _first_search_after_unlock(store: Store, runs: int) -> Stats:
    samples: list[float] = []
    for k in range(runs):
        store.lock()
        store.unlock()  # the agent starts empty: no index image yet
        with store.memory() as m:
            samples.append(_timed(partial(m.search, _WORDS[k % len(_WORDS)])))
    return _stats(samples)


def _argon2(store: Store, runs: int) -> Stats:
    ring = load_keyring(store.home)
    assert ring is not None
    return _stats([_timed(lambda: ring.open_with_password(PASSWORD.encode())) for _ in range(runs)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="samples per figure")
    parser.add_argument("--notes", type=int, default=1000, help="notes in the read/write store")
    parser.add_argument("--convert", type=int, default=5000, help="notes encrypted, decrypted")
    args = parser.parse_args()
    runs = args.runs

    base = Path(tempfile.mkdtemp(prefix="mb-enc-", dir="/tmp"))  # AF_UNIX paths are short
    runtime = base / "rt"
    runtime.mkdir(mode=0o700)
    stores: list[Store] = []
    try:
        enc = Store(base / "enc", runtime, args.notes, random.Random(3))
        plain = Store(base / "plain", runtime, args.notes, random.Random(3))
        big = Store(base / "big", runtime, args.convert, random.Random(4))
        stores += [enc, plain, big]
        enc.run("encrypt", "--password-file", str(enc.password_file))
        ids = [f"n{i}" for i in range(args.notes)]

        def fresh_unlock() -> float:
            enc.lock()
            return enc.unlock()

        unlock_fresh = _repeat(fresh_unlock, runs)
        unlock_running = _repeat(enc.unlock, runs)
        argon2 = _argon2(enc, runs)
        rng = random.Random(9)
        counter = iter(range(10**6))

        def read(store: Store) -> float:
            return store.run("read", rng.choice(ids))

        def write(store: Store) -> float:
            return store.run("remember", "Bench write", "--body", "b", "--id", f"w{next(counter)}")

        cli_read = {s: _repeat(partial(read, s), runs) for s in (enc, plain)}
        cli_write = {s: _repeat(partial(write, s), runs) for s in (enc, plain)}
        enc.run("search", "deploy")  # the agent holds the index image, as in use
        plain.run("search", "deploy")
        inproc = {s: _in_process(s, runs, ids) for s in (enc, plain)}
        after_unlock = _first_search_after_unlock(enc, runs)

        encrypt = big.run_cpu("encrypt", "--password-file", str(big.password_file))
        big.lock()
        decrypt = big.run_cpu("decrypt", "--password-file", str(big.password_file))

        print(f"{args.notes:,}-note store, embedder off; median of {runs} (min–max)")
        print(f"{'':<52}{'encrypted':>26}{'plain':>26}")
        _row("memdir unlock (Argon2id + agent start, fresh)", unlock_fresh)
        _row("memdir unlock (Argon2id, agent running)", unlock_running)
        _row("  Argon2id key derivation alone, in-process", argon2)
        _row("memdir read ID (process)", cli_read[enc], cli_read[plain])
        _row(
            "Memory.read, first after Memory.open",
            inproc[enc]["read first"],
            inproc[plain]["read first"],
        )
        _row("Memory.read, warm (parsed notes cached)", inproc[enc]["read"], inproc[plain]["read"])
        _row("memdir remember (process)", cli_write[enc], cli_write[plain])
        _row("Memory.remember (in-process)", inproc[enc]["remember"], inproc[plain]["remember"])
        _row(
            "Memory.search, first after open (image in agent)",
            inproc[enc]["search first"],
            inproc[plain]["search first"],
        )
        _row("Memory.search, first after unlock (built from files)", after_unlock)
        _row("Memory.search, warm", inproc[enc]["search warm"], inproc[plain]["search warm"])
        print()
        print(f"converting {args.convert:,} notes (one process each)      wall s     CPU s")
        for label, (wall, cpu) in (
            ("memdir encrypt (incl. making the keyring)", encrypt),
            ("memdir decrypt (incl. unlocking)", decrypt),
        ):
            print(f"{label:<52}{wall:>9.1f}{cpu:>10.1f}")
    finally:
        for store in stores:
            with contextlib.suppress(AgentUnavailable, OSError):
                AgentClient(store.socket).lock()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
