"""The fault matrix: run a `memdir` write under strace, fail one syscall, check what is left.

A *scenario* prepares a fresh project and MEMDIR_HOME, names the command to run and
says what the note files look like before and after it. A counting run (strace, no
injection) learns how many calls of each syscall the command makes; every case then
re-runs the command on a fresh copy with one of those calls failing (ENOSPC, EIO) or
the process killed at it, and checks, in a fresh process without injection, that:

* the command exited 0, or exited 9 (the disk refused) with a message and no traceback;
  a killed command may have any outcome;
* every note file is the old or the new version, complete; nothing but the lock, the
  `.gitignore` and temp files is left beside them;
* the exit code tells the truth: 0 means the new state holds, an error means nothing
  changed — unless its message says the change was made and kept ("kept": the result
  could not be printed, a forget's clean-up failed after the note was removed, a sync's
  later scope failed), and then the new state holds; an audit entry exists for every
  successful write;
* `memdir list`, `history ID --json` (its newest entry is the file on disk),
  `audit verify --json` and `doctor --json` succeed afterwards.

`tests/faults/test_syscall_faults.py` runs the matrix; `bench/faults.py` prints it.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.errors import EXIT_DISK

from .scenarios import Case, Scenario, audit_entries, note_files

STRACE = "strace"
#: Children followed, quietly.
TRACE = (STRACE, "-f", "-qq")
#: Only the traced calls stop the process (a seccomp filter): faster, but strace then
#: cannot deliver an injected signal (a kill is never injected), so errors only.
FILTERED = ("--seccomp-bpf",)
SYSCALLS = (
    "write",
    "pwrite64",
    "rename",
    "renameat",
    "renameat2",
    "fsync",
    "fdatasync",
    "unlink",
    "unlinkat",
    "link",
    "linkat",
    "openat",
    "ftruncate",
)
FAULTS = ("ENOSPC", "EIO", "kill")
KILLED = (-9, 128 + 9)  # strace re-raises the tracee's SIGKILL on itself
VERIFY = Path(__file__).with_name("verify.py")
TIMEOUT = 180
_CALL = re.compile(r"^(\d+) +(\w+)\((.*)$")
#: Fixed for every run, so that a counting run and the injected runs make the same calls:
#: no .pyc written by Python itself (src/ may change between runs), one hash seed.
_ENV = {
    "COLUMNS": "200",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "MEMDIR_SYNC_TOKEN": None,
    "EDITOR": None,
    "PYTHONWARNINGS": None,
    # The model cache in the case's home, as users have it (`seed_models`).
    "MEMDIR_MODEL_CACHE": None,
}


def strace_problem() -> str | None:
    """Why the matrix cannot run here (no strace, no ptrace), or None when it can."""
    if shutil.which(STRACE) is None:
        return "strace is not installed (apt-get install strace)"
    injected, probe = _probe(())
    if injected:
        return None
    if "ptrace" in probe.stderr.lower() or "not permitted" in probe.stderr.lower():
        return f"ptrace is not permitted here: {probe.stderr.strip()[:200]}"
    return f"strace cannot inject faults here (exit {probe.returncode}): {probe.stderr[:200]}"


def _probe(extra: Sequence[str]) -> tuple[bool, subprocess.CompletedProcess[str]]:
    """Whether strace (with `extra` options) fails a write of /bin/sh, and its run."""
    with tempfile.TemporaryDirectory(prefix="memdir-strace-probe-") as tmp:
        log = Path(tmp) / "probe.trace"
        probe = subprocess.run(
            [*TRACE, *extra, "-o", str(log), "-e", "trace=write", *_PROBE_FAULT],
            capture_output=True,
            text=True,
            timeout=60,
        )
        return log.exists() and "(INJECTED)" in log.read_text(errors="replace"), probe


def _filtered() -> tuple[str, ...]:
    """`FILTERED` where this strace injects errors with it, else nothing."""
    if not _FILTER_WORKS:
        _FILTER_WORKS.append(_probe(FILTERED)[0])
    return FILTERED if _FILTER_WORKS[0] else ()


_FILTER_WORKS: list[bool] = []
_PROBE_FAULT = ("-e", "inject=write:error=ENOSPC:when=1", "/bin/sh", "-c", "echo probe")


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _ENV}
    env.update({k: v for k, v in _ENV.items() if v is not None})
    env["MEMDIR_HOME"] = str(home)
    return env


def prepared(scenario: Scenario, root: Path) -> Case:
    """A fresh case of `scenario` in `root`. Its home holds the local model's cache as a
    user's does once memdir searched by meaning (the ONNX graph built, the vocabulary
    table, the weights' hash check), unless the scenario is the model's first use: then
    the faulted run builds that cache itself."""
    case = scenario.prepare(root)
    if not scenario.first_model_use:
        target = case.home / "models"
        target.mkdir(parents=True, exist_ok=True)
        for source in _built_models().iterdir():
            if source.is_file():
                try:  # each cache file is replaced by a rename, never written in place
                    os.link(source, target / source.name)
                except OSError:
                    shutil.copy2(source, target / source.name)
    return case


_BUILT_MODELS: list[Path] = []


def _built_models() -> Path:
    """The model cache memdir itself leaves in a home after a search, made once."""
    with _PREPARING:
        if not _BUILT_MODELS:
            root = Path(tempfile.mkdtemp(prefix="memdir-fault-models-"))
            atexit.register(shutil.rmtree, root, True)
            project, home = root / "P", root / "H"
            (project / ".git").mkdir(parents=True)
            home.mkdir()
            for args in (
                ["remember", "The model cache is built once", "--body", "By a search."],
                ["search", "model cache", "--json"],
            ):
                subprocess.run(
                    [sys.executable, "-m", "memdir", "--project", str(project), *args],
                    env=environment(home),
                    check=True,
                    capture_output=True,
                    timeout=TIMEOUT,
                )
            if not any((home / "models").glob("*.onnx")):
                raise AssertionError(f"a search left no model cache in {home / 'models'}")
            _BUILT_MODELS.append(home / "models")
        return _BUILT_MODELS[0]


# -- counting and targets ----------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """The Nth call of a syscall (strace's `when=N` counts calls of that syscall)."""

    syscall: str
    when: int
    what: str
    #: Which call with this `what` it is (1: the first one writing that file or fd).
    nth: int = 1


@dataclass
class Plan:
    """What a clean run of a scenario does: its calls and the audit actions it appends."""

    scenario: str
    calls: dict[str, list[str]]
    audit: list[tuple[str, str | None]]
    pids: int
    stdout: str = ""

    def targets(self, syscall: str) -> list[Target]:
        """The calls a fault can hit: for openat only those that create (O_CREAT)."""
        out = []
        seen: Counter[str] = Counter()
        for n, args in enumerate(self.calls.get(syscall, []), start=1):
            what = _what(syscall, args)
            seen[_norm(what)] += 1
            if syscall == "openat" and "O_CREAT" not in args:
                continue
            out.append(Target(syscall, n, what, seen[_norm(what)]))
        return out


def _what(syscall: str, args: str) -> str:
    path = re.search(r'"([^"]*)"', args)
    if syscall in {"write", "pwrite64", "fsync", "fdatasync", "ftruncate"}:
        fd_match = re.match(r"\d+", args)
        fd = fd_match.group(0) if fd_match else "?"
        return {"1": "stdout", "2": "stderr"}.get(fd, f"fd {fd}")
    if path:
        return _short(path.group(1))
    return args[:40]


def describe_call(syscall: str, args: str) -> str:
    """What a traced call touches: a short path, or the fd (stdout, stderr, fd N)."""
    return _what(syscall, args)


def _short(path: str) -> str:
    for marker in ("/P/", "/H/"):
        if marker in path:
            return marker.strip("/") + "/" + path.split(marker, 1)[1]
    return path


def parse_trace(text: str) -> tuple[dict[str, list[str]], int]:
    """Calls of each syscall by the first traced process, in order; the number of pids."""
    calls: dict[str, list[str]] = {}
    pids: list[str] = []
    for line in text.splitlines():
        match = _CALL.match(line)
        if not match:
            continue
        pid, name, args = match.groups()
        if pid not in pids:
            pids.append(pid)
        if pid == pids[0]:
            calls.setdefault(name, []).append(args)
    return calls, len(pids)


def count(scenario: Scenario, root: Path) -> Plan:
    """The counting run: the command under strace without injection, on a fresh case."""
    case = prepared(scenario, root)
    trace = root / "count.trace"
    seq = _last_seq(case.home)
    proc = subprocess.run(
        [
            *TRACE,
            "-o",
            str(trace),
            "-e",
            "trace=" + ",".join(SYSCALLS),
            *case.command(),
        ],
        capture_output=True,
        text=True,
        env=environment(case.home),
        timeout=TIMEOUT,
    )
    if proc.returncode != 0:
        raise AssertionError(f"{scenario.name}: clean run failed: {proc.stdout}{proc.stderr}")
    files, _ = note_files(case)
    off = scenario.new_state(case, files)
    if off:
        raise AssertionError(f"{scenario.name}: clean run did not reach its new state: {off}")
    extra = scenario.after_success(case)
    if extra:
        raise AssertionError(f"{scenario.name}: clean run: {extra}")
    calls, pids = parse_trace(trace.read_text(errors="replace"))
    audit = [_audit_key(e) for e in audit_entries(case.home) if e.get("seq", 0) > seq]
    return Plan(scenario.name, calls, audit, pids, proc.stdout)


def _audit_key(entry: dict[str, Any]) -> tuple[str, str | None]:
    fields = entry.get("fields") or {}
    return str(entry.get("action")), fields.get("note_id")


def _last_seq(home: Path) -> int:
    entries = audit_entries(home)
    return int(entries[-1].get("seq", 0)) if entries else 0


def pick(n: int, cap: int, rotation: int = 0) -> list[int]:
    """Indices 1..n, or when n > cap: the first, the last and cap-2 spread between them.

    `rotation` shifts the spread ones, so that each fault hits different middle calls.
    """
    if cap <= 0 or n <= cap:
        return list(range(1, n + 1))
    chosen = {1, n}
    inner = max(cap - 2, 0)
    step = (n - 2) / max(inner, 1)
    offset = ((rotation % 3) + 1) / 4
    for k in range(inner):
        chosen.add(min(n - 1, 2 + int((k + offset) * step)))
    return sorted(chosen)


#: The calls SQLite makes (on the derived index and the sync state): many and alike, so
#: they get one call fewer than `cap` (at least the first and the last).
SQLITE_CALLS = frozenset({"pwrite64", "fdatasync", "ftruncate"})


def select(plan: Plan, fault: str, cap: int) -> list[Target]:
    """The targets a fault hits: per syscall, `pick` of its calls."""
    rotation = FAULTS.index(fault)
    out: list[Target] = []
    for syscall in SYSCALLS:
        targets = plan.targets(syscall)
        n = max(2, cap - 1) if cap > 0 and syscall in SQLITE_CALLS else cap
        out.extend(targets[i - 1] for i in pick(len(targets), n, rotation))
    return out


# -- running a case ----------------------------------------------------------------------


@dataclass
class Result:
    scenario: str
    fault: str
    target: Target
    outcome: str  # "ok", "error", "kept", "killed", "missed" (the fault never fired)
    returncode: int
    hit: str = ""
    problems: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    #: The fault hit another call than the counting run's Nth (the run took another turn).
    drift: bool = False
    #: The injected run's calls of the syscall (normalised), to find the target again.
    seen: list[str] = field(default_factory=list, repr=False)

    def describe(self) -> str:
        t = self.target
        head = (
            f"{self.scenario} | {t.syscall} #{t.when} ({t.what}) | {self.fault} | "
            f"exit {self.returncode} ({self.outcome})"
        )
        if self.drift:
            head += f" | hit instead: {self.hit}"
        return head + "".join(f"\n    - {p}" for p in self.problems)


def inject_args(target: Target, fault: str) -> list[str]:
    action = "signal=SIGKILL" if fault == "kill" else f"error={fault}"
    return [
        *(() if fault == "kill" else _filtered()),
        "-e",
        f"trace={target.syscall}",
        "-e",
        f"inject={target.syscall}:{action}:when={target.when}",
    ]


def run_case(scenario: Scenario, case: Case, target: Target, fault: str) -> Result:
    trace = case.root / "inject.trace"
    seq = _last_seq(case.home)
    argv = [*TRACE, *inject_args(target, fault), "-o", str(trace), *case.command()]
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=environment(case.home),
        timeout=TIMEOUT,
        cwd=case.root,
    )
    text = trace.read_text(errors="replace") if trace.exists() else ""
    hit = _hit(text, fault)
    rc = proc.returncode
    if rc in KILLED:
        outcome = "killed"
    elif not hit:
        outcome = "missed"
    else:
        outcome = "ok" if rc == 0 else "error"
    out = proc.stdout + proc.stderr
    if outcome == "error" and any(said in out for said in KEPT):
        outcome = "kept"
    result = Result(scenario.name, fault, target, outcome, rc, hit, [], argv)
    problems = result.problems
    if outcome != "killed":
        if "Traceback" in out:
            problems.append("traceback in the output:\n" + _indent(out[-1500:]))
        if outcome in ("error", "kept"):
            if rc != EXIT_DISK:
                problems.append(f"exit {rc}, not {EXIT_DISK} (the disk refused): {out[-300:]!r}")
            if not _message(proc.stdout, proc.stderr):
                problems.append("no error message")
    result.drift = bool(hit) and _norm(_hit_what(target.syscall, hit)) != _norm(target.what)
    calls, _ = parse_trace(text)
    result.seen = [_norm(_what(target.syscall, args)) for args in calls.get(target.syscall, [])]

    files, strays = note_files(case)
    if strays:
        problems.append(f"unexpected files beside the notes: {strays}")
    problems.extend(_state_problems(scenario, case, files, outcome, rc))
    if outcome == "ok":
        problems.extend(scenario.after_success(case))
        problems.extend(_audit_problems(case, seq, _expected_audit(scenario, case)))
    problems.extend(verify(scenario, case, files))
    return result


#: What an error message says when the change was made and kept before the failure.
KEPT = ("made and kept before that", "was forgotten (its file removed")

#: Every case's result in this process, for the summary table.
RESULTS: list[Result] = []

_EXPECTED_AUDIT: dict[str, list[tuple[str, str | None]]] = {}


def _expected_audit(scenario: Scenario, case: Case) -> list[tuple[str, str | None]]:
    return _EXPECTED_AUDIT.get(scenario.name, [])


def remember_audit(plan: Plan) -> None:
    """Keep what a clean run appended to the audit log, for successful cases to match."""
    _EXPECTED_AUDIT[plan.scenario] = plan.audit


def _audit_problems(case: Case, seq: int, expected: list[tuple[str, str | None]]) -> list[str]:
    got = Counter(_audit_key(e) for e in audit_entries(case.home) if e.get("seq", 0) > seq)
    missing = Counter(_anonymous(expected)) - Counter(_anonymous(list(got.elements())))
    if missing:
        return [f"succeeded, but no audit entry for {sorted(missing.elements())}"]
    return []


def _anonymous(keys: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    # A new note's id may differ between runs (its suffix); match its action only.
    return [(action, None if action == "write" else note_id) for action, note_id in keys]


def _state_problems(
    scenario: Scenario, case: Case, files: dict[str, bytes], outcome: str, returncode: int
) -> list[str]:
    is_old = files == case.before
    off_new = scenario.new_state(case, files)
    is_new = off_new is None
    if is_old and is_new:  # reindex: the files never change
        return []
    if outcome == "missed":  # the fault never fired: the exit code alone tells
        outcome = "ok" if returncode == 0 else "error"
    if outcome == "ok" and not is_new:
        return [f"exit 0 but the new state does not hold: {off_new}"]
    if outcome == "error" and not is_old:
        state = "the new state" if is_new else f"a changed state ({off_new})"
        return [f"exit non-zero but the note files hold {state}, not the old one"]
    if outcome == "kept" and not is_new:
        if scenario.batch and not scenario.partial(case, files):
            return []  # a sync that kept its first scopes' pulls and said so
        return [f"said the change was kept, but the new state does not hold: {off_new}"]
    if outcome == "killed" and not (is_old or is_new):
        if scenario.batch:
            torn = scenario.partial(case, files)
            return [f"torn note after the kill: {torn}"] if torn else []
        return [f"neither the old nor the new state: {off_new}"]
    return []


def _message(stdout: str, stderr: str) -> bool:
    if stderr.strip():
        return True
    try:
        doc = json.loads(stdout)
    except ValueError:
        return bool(stdout.strip())
    return bool(isinstance(doc, dict) and (doc.get("error") or {}).get("message"))


def _hit(trace: str, fault: str) -> str:
    lines = trace.splitlines()
    if fault == "kill":
        for i, line in enumerate(lines):
            if "+++ killed by SIGKILL" in line:
                return _short_line(lines[i - 1]) if i else "killed"
        return ""
    for line in lines:
        if "(INJECTED)" in line:
            return _short_line(line)
    return ""


def _hit_what(syscall: str, hit: str) -> str:
    return _what(syscall, hit.split("(", 1)[1] if "(" in hit else hit)


def _norm(what: str) -> str:
    """`what` without the parts that differ between runs: hashes, temp suffixes, times."""
    w = re.sub(r"[0-9a-f]{8,}", "#", what.replace('"', ""))
    w = re.sub(r"-\w{8}\.tmp\b", "-#.tmp", w)
    w = re.sub(r"-[0-9a-f]{4}(?=\.)", "-#", w)
    w = re.sub(r"/[0-9a-f]{2}/", "/#/", w)
    return re.sub(r"\d", "0", w)


def _short_line(line: str) -> str:
    line = re.sub(r"^\d+ +", "", line)
    return _short_paths(line)[:200]


def _short_paths(text: str) -> str:
    return re.sub(r'"(/[^"]*?/(P|H)/)', r'"\2/', text)


def _indent(text: str) -> str:
    return "\n".join("      " + line for line in text.splitlines())


# -- the checks in a fresh process -------------------------------------------------------


def verify(scenario: Scenario, case: Case, files: dict[str, bytes]) -> list[str]:
    """Run list, history, audit verify, doctor (and searches) in a fresh process."""
    notes = {name: data for name, data in files.items()}
    request = {
        "project": str(case.project),
        "home": str(case.home),
        "notes": [
            {"id": name.split("/", 1)[1][:-3], "scope": name.split("/", 1)[0]} for name in notes
        ],
        "search": [word for word, _ in _searches(scenario, files)],
    }
    proc = subprocess.run(
        [sys.executable, str(VERIFY), json.dumps(request)],
        capture_output=True,
        text=True,
        env=environment(case.home),
        timeout=TIMEOUT,
    )
    if proc.returncode != 0:
        return [f"the checks crashed (exit {proc.returncode}): {proc.stderr[-1500:]}"]
    report = json.loads(proc.stdout)
    problems: list[str] = []
    for run in report["runs"]:
        label = "memdir " + " ".join(run["args"])
        if run["traceback"]:
            problems.append(f"{label}: traceback\n" + _indent(run["traceback"][-1500:]))
        elif run["exit"] != 0:
            problems.append(
                f"{label}: exit {run['exit']}: {(run['stdout'] + run['stderr'])[-400:]}"
            )
    by_args = {tuple(run["args"]): run for run in report["runs"]}
    for name, data in notes.items():
        file = name.split("/", 1)[1]
        run = by_args.get(("history", file[:-3], "--json"))
        if run is None or run["exit"] != 0:
            continue
        entries = json.loads(run["stdout"])
        revision = hashlib.sha256(data).hexdigest()
        if not entries:
            problems.append(f"history {file[:-3]}: no entries for a note on disk")
        elif not entries[-1].get("current") or entries[-1].get("revision") != revision:
            problems.append(
                f"history {file[:-3]}: newest entry {entries[-1]} is not the file on disk "
                f"({revision[:12]})"
            )
    audit = by_args.get(("audit", "verify", "--json"))
    if audit and audit["exit"] == 0:
        doc = json.loads(audit["stdout"])
        if not doc.get("ok") or doc.get("problems"):
            problems.append(f"audit verify: {doc.get('problems')}")
    doctor = by_args.get(("doctor", "--json"))
    if doctor and doctor["stdout"].strip():
        doc = json.loads(doctor["stdout"])
        if not doc.get("ok") or doc.get("problems"):
            problems.append(
                f"doctor: problems {doc.get('problems')}, index {doc.get('index')}, "
                f"integrity {doc.get('integrity')}"
            )
    for word, note_id in _searches(scenario, files):
        run = by_args.get(("search", word, "--json"))
        if run and run["exit"] == 0 and note_id not in run["stdout"]:
            problems.append(f"search {word!r} does not find {note_id}")
    return problems


def _searches(scenario: Scenario, files: dict[str, bytes]) -> list[tuple[str, str]]:
    """The scenario's searches whose note is on disk (by id prefix)."""
    ids = [name.split("/", 1)[1] for name in files]
    return [(w, i) for w, i in scenario.search if any(n.startswith(i) for n in ids)]


# -- the matrix --------------------------------------------------------------------------


def run_matrix(
    scenario: Scenario,
    fault: str,
    plan: Plan,
    root: Path,
    *,
    cap: int,
    workers: int,
) -> list[Result]:
    """Every selected target of `plan` with `fault`, each on a fresh case; the results.

    A case is prepared just before its run, as the counting run's was: the calls a
    command makes depend a little on how old the files it finds are.
    """
    targets = select(plan, fault, cap)

    def attempt(where: Path, target: Target) -> Result:
        with _PREPARING:  # the Python API in threads: one at a time
            case = prepared(scenario, where)
        try:
            return run_case(scenario, case, target, fault)
        finally:
            shutil.rmtree(case.root, ignore_errors=True)

    def one(item: tuple[int, Target]) -> Result:
        i, target = item
        result = attempt(root / f"case-{i}", target)
        again = _retarget(target, result)
        if again is not None:  # once more, at where the meant call was in that run
            result = attempt(root / f"case-{i}-again", again)
        return result

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, enumerate(targets)))


_PREPARING = threading.RLock()


def _retarget(target: Target, result: Result) -> Target | None:
    """The meant call's index in a drifted run (the nth call on the same file), if seen."""
    if not result.drift:
        return None
    want, k = _norm(target.what), 0
    for n, what in enumerate(result.seen, start=1):
        if what == want:
            k += 1
            if k == target.nth:
                return None if n == target.when else Target(target.syscall, n, target.what, k)
    return None


def default_workers() -> int:
    """One case more than the cores (at most 5): a traced command spends much of its run
    stopped while strace handles its calls, so with a worker per core a core idles."""
    return max(2, min(5, (os.cpu_count() or 2) + 1))


def table(results: Sequence[Result]) -> str:
    """Write path × fault → cases and outcomes, plus the failing cases' count."""
    rows: dict[tuple[str, str], Counter[str]] = {}
    order: list[str] = []
    for r in results:
        if r.scenario not in order:
            order.append(r.scenario)
        c = rows.setdefault((r.scenario, r.fault), Counter())
        c["cases"] += 1
        c[r.outcome] += 1
        if r.problems:
            c["failed"] += 1
        if r.drift:
            c["drift"] += 1
    head = f"{'write path':<26}{'fault':<8}{'cases':>6}{'ok':>6}{'error':>7}{'kept':>6}"
    head += f"{'killed':>7}"
    head += f"{'missed':>7}{'drift':>6}{'FAILED':>8}"
    lines = [head, "-" * len(head)]
    total: Counter[str] = Counter()
    for name in order:
        for fault in FAULTS:
            row = rows.get((name, fault))
            if row is None:
                continue
            total.update(row)
            lines.append(_row(name, fault, row))
    lines.append("-" * len(head))
    lines.append(_row("total", "", total))
    return "\n".join(lines)


def _row(name: str, fault: str, c: Counter[str]) -> str:
    return (
        f"{name:<26}{fault:<8}{c['cases']:>6}{c['ok']:>6}{c['error']:>7}{c['kept']:>6}"
        f"{c['killed']:>7}"
        f"{c['missed']:>7}{c['drift']:>6}{c['failed']:>8}"
    )
