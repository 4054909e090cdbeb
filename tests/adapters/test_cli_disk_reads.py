"""Read commands keep working when the memdir home's disk is full or read-only; writes still
fail with exit 9.

The disk is real: a small tmpfs mounted for the test (root only, as CI runs), filled to
the last byte or remounted read-only. The notes are edited by hand after the index was
last updated, so the index is behind on some of them: searches leave those out (never a
deleted note, never a note's old text) and say so once on stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from disks import fill, tmpfs
from memdir.errors import EXIT_DISK

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mount") is None, reason="mounting a tmpfs needs root"
)

MISSED = "results may miss 2 notes added or changed since it was last updated"
SEARCHES = [
    ("search", "deploys"),
    ("search", "--json", "deploys"),
    ("search", "--method", "lexical", "deploys"),
    ("search", "--method", "hybrid", "deploys"),
    ("search", "--mode", "all", "deploys", "--method", "vector"),
    ("search", "--mode", "phrase", "staging cluster"),
    ("retrieve", "deploys"),
    ("retrieve", "--json", "--method", "lexical", "deploys"),
]


@pytest.fixture
def tiny(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs, unmounted afterwards."""
    with tmpfs(tmp_path / "tiny") as mount:
        yield mount


def _memdir(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDIR_HOME": str(home), "COLUMNS": "250"}
    return subprocess.run(
        [sys.executable, "-m", "memdir", "--project", str(project), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _note(project: Path, note_id: str, summary: str, body: str) -> None:
    head = json.dumps({"id": note_id, "summary": summary, "createdAt": 1, "updatedAt": 1})
    path = project / "MEMORY" / f"{note_id}.md"
    path.write_text(f"---\n{head}\n---\n{body}\n", encoding="utf-8")
    os.utime(path, (1_700_000_000, 1_700_000_000))  # at rest: its stamp alone is trusted


def _setup(tmp_path: Path, home: Path, *, index: bool = True) -> Path:
    """A project of three notes, indexed (unless not `index`), then edited by hand: one
    changed, one deleted, one added."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "MEMORY").mkdir()
    home.mkdir()
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    _note(project, "staging", "Deploys go through the staging cluster first", "See [[rollbacks]].")
    _note(project, "rollbacks", "Rollbacks of deploys need approval", "Ask the on-call person.")
    _note(project, "old", "Old deploys checklist", "Obsolete steps.")
    assert _memdir(project, home, "doctor").returncode == 0  # the home's folders exist
    if index:
        assert _memdir(project, home, "search", "deploys").returncode == 0
    _note(project, "rollbacks", "Rollbacks of deploys need approval", "Ask the release manager.")
    (project / "MEMORY" / "old.md").unlink()
    _note(project, "hand", "Deploys written by hand", "In an editor.")
    return project


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


def test_reads_on_a_full_home_answer_from_the_index_without_what_changed_since(
    tiny: Path, tmp_path: Path
) -> None:
    home = tiny / "home"
    project = _setup(tmp_path, home)
    filler = fill(tiny)

    for args in SEARCHES:
        done = _memdir(project, home, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr + done.stdout
        assert _warnings(done.stderr) == [
            f"warning: the search index of the project notes cannot be updated (the disk is "
            f"full): {MISSED}"
        ], args
        # Never a deleted note, never the old text of a changed one.
        assert "old" not in done.stdout.split() and "on-call" not in done.stdout, args
    hits = json.loads(_memdir(project, home, "search", "--json", "deploys").stdout)
    assert [h["note_id"] for h in hits] == ["staging"]

    for args in (("list",), ("read", "rollbacks"), ("links", "staging"), ("doctor",)):
        done = _memdir(project, home, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr, args
    assert "release manager" in _memdir(project, home, "read", "rollbacks").stdout
    recalled = _memdir(project, home, "recall", "how do deploys reach the staging cluster")
    assert recalled.returncode == 0 and "staging" in recalled.stdout
    assert "Traceback" not in recalled.stderr

    written = _memdir(project, home, "remember", "A new note about deploys")
    assert written.returncode == EXIT_DISK and "the disk is full" in written.stderr
    reindexed = _memdir(project, home, "reindex")
    assert reindexed.returncode == EXIT_DISK

    filler.unlink()  # room again: the index catches up, nothing was left broken
    done = _memdir(project, home, "search", "--json", "deploys")
    assert done.returncode == 0 and _warnings(done.stderr) == []
    hits = json.loads(done.stdout)
    assert {h["note_id"] for h in hits} == {"staging", "rollbacks", "hand"}
    assert any(h["snippet"] == "Ask the release manager." for h in hits)
    deep = _memdir(project, home, "doctor", "--deep")
    assert deep.returncode == 0, deep.stdout + deep.stderr


def test_with_no_index_on_a_full_home_search_builds_one_in_memory(
    tiny: Path, tmp_path: Path
) -> None:
    home = tiny / "home"
    project = _setup(tmp_path, home, index=False)
    fill(tiny)
    done = _memdir(project, home, "search", "--json", "deploys")
    assert done.returncode == 0, done.stderr
    assert {h["note_id"] for h in json.loads(done.stdout)} == {"staging", "rollbacks", "hand"}
    assert _warnings(done.stderr) == [
        "warning: the search index of the project notes cannot be written (the disk is full): "
        "searching a temporary index built in memory from the note files"
    ]


def test_a_read_only_index_folder_is_searched_and_reindex_fails(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = _setup(tmp_path, home)
    index = home / "index"
    # The index folder alone made read-only (a bind mount), as a read-only disk would be.
    subprocess.run(["mount", "--bind", str(index), str(index)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(index)], check=True)
        done = _memdir(project, home, "search", "deploys")
        assert done.returncode == 0, done.stderr
        assert "staging" in done.stdout and "on-call" not in done.stdout
        assert _warnings(done.stderr) == [
            "warning: the search index of the project notes cannot be updated (the file system "
            f"is read-only): {MISSED}"
        ]
        reindexed = _memdir(project, home, "reindex")
        assert reindexed.returncode == EXIT_DISK
        assert "error: the file system is read-only: the search index" in reindexed.stderr
    finally:
        subprocess.run(["umount", "-l", str(index)], check=False)
