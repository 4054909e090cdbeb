"""Benchmark: the syscall fault matrix of `memdir`'s write paths, printed as a table.

Run as ``python bench/faults.py [--cap 4] [--workers N] [--only remember,sync] [--faults
ENOSPC,EIO,kill]``. Needs strace (Debian: ``apt-get install strace``) and the right to
ptrace. For each write path (remember new and replace, forget, forget --purge, backups
restore, reindex, a sync pull against a loopback `memdir server serve`) a counting run
learns the command's write/pwrite64/rename/fsync/fdatasync/unlink/openat(O_CREAT)/
ftruncate… calls; then each selected call in turn fails with ENOSPC, with EIO, or the
process is SIGKILLed there (``--cap`` calls per syscall and fault: the first, the last
and ones spread between; ``--cap 0`` runs every call), each on a fresh project and
MEMDIR_HOME, and the invariants of `tests/faults/harness.py` are checked in a fresh
process. Prints write path × fault → cases and outcomes, then every failing case.

``python bench/faults.py --repro PATH SYSCALL WHEN FAULT [--keep DIR]`` runs one case
(PATH: a word of the write path's name, e.g. ``remember``, ``purge``, ``sync``; WHEN:
the call's number, or a part of its path such as ``memory-sync``) and prints the shell
command that reproduces it on the prepared directories.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_REPO / "tests"))
from faults import harness, scenarios  # noqa: E402
from sync_server import add_user, running_server  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cap", type=int, default=4, help="calls per syscall and fault (0: all)")
    parser.add_argument("--workers", type=int, default=harness.default_workers())
    parser.add_argument("--only", default="", help="comma-separated words of write-path names")
    parser.add_argument("--faults", default=",".join(harness.FAULTS))
    parser.add_argument(
        "--repro",
        nargs=4,
        metavar=("PATH", "SYSCALL", "WHEN", "FAULT"),
        help="run one case (e.g. remember fsync 2 EIO), print its command and outcome",
    )
    parser.add_argument("--keep", type=Path, help="with --repro: prepare the case here, keep it")
    args = parser.parse_args()
    problem = harness.strace_problem()
    if problem:
        print(f"cannot run: {problem}", file=sys.stderr)
        return 2
    faults = [f for f in args.faults.split(",") if f]
    words = [w for w in args.only.split(",") if w]
    if args.repro:
        words = [args.repro[0]]
    results: list[harness.Result] = []
    started = time.perf_counter()
    with ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memdir-faults-")))
        world = None
        wanted = [s for s in scenarios.scenarios() if not words or any(w in s.name for w in words)]
        if any(isinstance(s, scenarios.SyncPull) for s in wanted):
            data = root / "server"
            data.mkdir()
            token = add_user(data, "alice")
            server = stack.enter_context(running_server(data, extra_args=["--rate-limit", "0"]))
            world = scenarios.make_sync_world(root / "world", server.url, token)
        if args.repro:
            chosen = next(s for s in scenarios.scenarios(world) if s.name == wanted[0].name)
            return _repro(chosen, args.repro[1:], args.keep or root)
        for n, scenario in enumerate(scenarios.scenarios(world)):
            if scenario.name not in {s.name for s in wanted}:
                continue
            plan = harness.count(scenario, root / f"count-{n}")
            harness.remember_audit(plan)
            for fault in faults:
                t = time.perf_counter()
                got = harness.run_matrix(
                    scenario,
                    fault,
                    plan,
                    root / f"run-{n}-{fault}",
                    cap=args.cap,
                    workers=args.workers,
                )
                results.extend(got)
                print(
                    f"{scenario.name:<26}{fault:<8}{len(got):>4} cases "
                    f"{time.perf_counter() - t:6.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
    print(harness.table(results))
    print(
        f"\n{len(results)} cases in {time.perf_counter() - started:.0f} s ({args.workers} workers)"
    )
    drifted = [r for r in results if r.drift]
    if drifted:
        print(f"\n{len(drifted)} cases hit another call than the counting run's Nth:")
        for r in drifted:
            print(
                f"  {r.scenario} | {r.target.syscall} #{r.target.when} ({r.target.what}) | "
                f"{r.fault} | hit {r.hit}"
            )
    failed = [r for r in results if r.problems]
    if failed:
        print(f"\n{len(failed)} failing cases:")
        for r in failed:
            print(r.describe())
    return 1 if failed else 0


def _repro(scenario: scenarios.Scenario, spec: list[str], root: Path) -> int:
    """One case: prepared under `root`, its shell command printed, run, and checked."""
    syscall, which, fault = spec
    plan = harness.count(scenario, root / "count")
    harness.remember_audit(plan)
    calls = plan.calls.get(syscall, [])
    if which.isdigit():
        when = int(which)
    else:  # the first call whose path or fd contains WHEN, e.g. "memory-sync"
        found = [t.when for t in plan.targets(syscall) if which in t.what]
        if not found:
            print(f"no {syscall} call touches {which!r}", file=sys.stderr)
            return 2
        when = found[0]
    what = harness.describe_call(syscall, calls[when - 1]) if when <= len(calls) else "?"
    target = harness.Target(syscall, when, what)
    case = scenario.prepare(root / "case")
    inject = " ".join(shlex.quote(a) for a in harness.inject_args(target, fault))
    command = " ".join(shlex.quote(a) for a in case.command())
    print(f"# {scenario.name}, {syscall} #{when} ({what}), {fault}; prepared in {case.root}")
    print(f"MEMDIR_HOME={case.home} strace -f -qq -o /dev/null {inject} {command}")
    result = harness.run_case(scenario, case, target, fault)
    print(result.describe())
    return 1 if result.problems else 0


if __name__ == "__main__":
    sys.exit(main())
