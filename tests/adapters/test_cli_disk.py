"""A full disk under the memdir home: a clear error and its own exit code, never a traceback.

The disk is real: a small tmpfs mounted for the test (root only, as CI runs) and filled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from disks import fill, needs_root, tmpfs
from memdir.errors import EXIT_DISK

pytestmark = needs_root


@pytest.fixture
def full_home(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "tiny") as tiny:
        yield tiny / "home"


def _memdir(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDIR_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "memdir", "--project", str(project), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _fill(home: Path) -> None:
    fill(home.parent)


@pytest.mark.parametrize("as_json", [False, True])
def test_remember_on_a_full_home_is_a_clear_disk_error(
    full_home: Path, tmp_path: Path, as_json: bool
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    config = ["--json"] if as_json else []
    first = _memdir(project, full_home, "remember", "First note about deploys", *config)
    assert first.returncode == 0, first.stderr
    _fill(full_home)
    second = _memdir(project, full_home, "remember", "Second note about deploys", *config)
    assert second.returncode == EXIT_DISK
    assert "Traceback" not in second.stderr + second.stdout
    out = second.stdout if as_json else second.stderr
    assert "the disk is full" in out
    # ...and what it says is the truth: the note was not written.
    assert "nothing was changed" in out
    listed = _memdir(project, full_home, "list", "--json")
    assert [n["summary"] for n in json.loads(listed.stdout)] == ["First note about deploys"]


def test_doctor_checks_a_full_home_it_cannot_clean(full_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    first = _memdir(project, full_home, "remember", "First note about deploys")
    assert first.returncode == 0, first.stderr
    # A user notes folder made by hand (a clone, say): no lock file, no .gitignore yet.
    user = full_home / "memory" / "user"
    user.mkdir(parents=True, exist_ok=True)
    (user / "by-hand.md").write_text('---\n{"summary": "By hand"}\n---\nbody\n', "utf-8")
    for name in (".gitignore", ".memdir.lock"):
        (user / name).unlink(missing_ok=True)
    # A temp file an interrupted write left: cleaning it needs the lock file, which the
    # full disk refuses (doctor takes the lock only when there is something to clean).
    (user / ".by-hand.md.tmp-1a2b3c4d").write_bytes(b"half a note")
    _fill(full_home)
    doctor = _memdir(project, full_home, "doctor", "--json")
    assert "Traceback" not in doctor.stderr
    report = json.loads(doctor.stdout)  # a report, not a disk error (exit 9)
    assert report["counts"] == {"project": 1, "user": 1}
    assert report["problems"] == []
    # The full disk needs attention: said as a warning, so doctor exits 1.
    assert any("No space left" in w for w in report["warnings"])
    assert doctor.returncode == 1


def test_listing_and_history_keep_working_on_a_full_home(full_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    first = _memdir(project, full_home, "remember", "First note about deploys", "--json")
    assert first.returncode == 0, first.stderr
    note_id = json.loads(first.stdout)["note"]["id"]
    _fill(full_home)
    # An edit made in an editor: recording its version in history needs the full disk.
    path = project / "MEMORY" / f"{note_id}.md"
    path.write_text(path.read_text("utf-8") + "edited by hand\n", "utf-8")
    listed = _memdir(project, full_home, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [n["id"] for n in json.loads(listed.stdout)] == [note_id]
    history = _memdir(project, full_home, "history", note_id, "--json")
    assert history.returncode == 0, history.stderr
    read = _memdir(project, full_home, "read", note_id)
    assert read.returncode == 0 and "edited by hand" in read.stdout


@pytest.mark.parametrize("as_json", [False, True])
def test_a_result_that_cannot_be_printed_says_the_change_was_kept(
    tmp_path: Path, as_json: bool
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    with tmpfs(tmp_path / "out", "1m") as tiny:
        fill(tiny)
        with (tiny / "result.txt").open("w") as out:  # stdout on the full disk
            env = {**os.environ, "MEMDIR_HOME": str(tmp_path / "home")}
            args = ["remember", "A note about deploys", *(["--json"] if as_json else [])]
            done = subprocess.run(
                [sys.executable, "-m", "memdir", "--project", str(project), *args],
                stdout=out,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                timeout=120,
            )
    assert done.returncode == EXIT_DISK
    assert "Traceback" not in done.stderr
    assert "made and kept before that: write a-note-about-deploys" in done.stderr
    assert [p.name for p in (project / "MEMORY").glob("*.md")] != []
