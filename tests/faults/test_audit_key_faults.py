"""The audit key unreadable (an I/O error) while a write is recorded: a disk error, never
an integrity one, and the outcome it reports is the truth.

The key is read twice per append: once before any entry is written (to know the head can
be signed) and once to sign the new head after the entries are durable. Found by the
syscall fault matrix (an `import` whose injected EIO drifted onto the key's open): the
read failing was reported as tampering (exit 7) while the notes were kept.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memdir import Memory
from memdir.errors import EXIT_DISK

from .harness import STRACE, environment, strace_problem
from .scenarios import Case, Scenario, audit_entries

_PROBLEM = strace_problem()
pytestmark = pytest.mark.skipif(_PROBLEM is not None, reason=f"no fault injection: {_PROBLEM}")


def _case(root: Path) -> Case:
    project, home = Scenario.dirs(root)
    with Memory.open(project, home=home) as m:
        m.remember("First", body="signed once, so the key exists", id="first")
    argv = ["remember", "Second", "--body", "the blue cluster", "--id", "second", "--json"]
    return Case("audit-key", root, project, home, argv, {})


def _run(case: Case, when: int) -> subprocess.CompletedProcess[str]:
    key = case.home / "audit" / "audit.key"
    assert key.is_file()
    return subprocess.run(
        [
            STRACE,
            "-f",
            "-qq",
            "-o",
            str(case.root / "trace"),
            "-P",
            str(key),
            "-e",
            "trace=openat",
            "-e",
            f"inject=openat:error=EIO:when={when}",
            *case.command(),
        ],
        capture_output=True,
        text=True,
        env=environment(case.home),
        timeout=180,
        cwd=case.root,
    )


def test_the_key_unreadable_before_recording_refuses_with_a_disk_error(tmp_path: Path) -> None:
    case = _case(tmp_path)
    before = len(audit_entries(case.home))
    proc = _run(case, when=1)
    assert "(INJECTED)" in (case.root / "trace").read_text()
    assert proc.returncode == EXIT_DISK, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert "I/O error" in error["message"] and "nothing was changed" in error["message"]
    assert not (case.project / "MEMORY" / "second.md").exists()
    assert len(audit_entries(case.home)) == before


def test_the_key_unreadable_after_recording_keeps_the_write(tmp_path: Path) -> None:
    case = _case(tmp_path)
    before = len(audit_entries(case.home))
    proc = _run(case, when=2)
    assert "(INJECTED)" in (case.root / "trace").read_text()
    # The entry is durable, so the write is done: the head, one batch behind, is named by
    # the next append (as after a crash there).
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (case.project / "MEMORY" / "second.md").is_file()
    assert len(audit_entries(case.home)) == before + 1
    with Memory.open(case.project, home=case.home) as m:
        m.remember("Third", body="signs the head again", id="third")
        report = m.audit.verify()
    assert report.ok, report.problems
