"""§1.2 project identity: `.memdir/project.json`, git root commits, random ids, renames."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import subprocess
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from memdir import InvalidInput, Memory
from memdir.core import Note, render_note
from memdir.project import PROJECT_FILE, ensure_project_id, find_project_root, load_project_id
from memdir.store import revision_of


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key, value in {
        "GIT_AUTHOR_NAME": "Test Author",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_COMMITTER_NAME": "Test Committer",
        "GIT_COMMITTER_EMAIL": "committer@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(tmp_path),
    }.items():
        monkeypatch.setenv(key, value)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout.strip()


def make_repo(path: Path, commits: int = 2) -> str:
    """A git repository with `commits` commits; returns the root commit hash."""
    path.mkdir(parents=True)
    git(path, "init", "-q")
    for i in range(commits):
        (path / "file.txt").write_text(f"change {i}\n")
        git(path, "add", "file.txt")
        git(path, "commit", "-q", "-m", f"commit {i}")
    return git(path, "rev-list", "--max-parents=0", "HEAD") if commits else ""


def test_git_repository_uses_its_root_commit(tmp_path: Path, git_env: None) -> None:
    root_commit = make_repo(tmp_path / "repo")
    assert re.fullmatch(r"[0-9a-f]{40}", root_commit)
    assert git(tmp_path / "repo", "rev-parse", "HEAD") != root_commit
    assert ensure_project_id(tmp_path / "repo") == root_commit
    doc = json.loads((tmp_path / "repo" / PROJECT_FILE).read_text())
    assert doc["id"] == root_commit and doc["source"] == "git-root-commit"


def test_every_clone_agrees_on_the_id(tmp_path: Path, git_env: None) -> None:
    root_commit = make_repo(tmp_path / "repo")
    git(tmp_path, "clone", "-q", str(tmp_path / "repo"), str(tmp_path / "clone"))
    assert (
        ensure_project_id(tmp_path / "clone") == root_commit == ensure_project_id(tmp_path / "repo")
    )


def test_repository_without_commits_gets_a_random_id(tmp_path: Path, git_env: None) -> None:
    make_repo(tmp_path / "repo", commits=0)
    project_id = ensure_project_id(tmp_path / "repo")
    assert re.fullmatch(r"[0-9a-f]{32}", project_id)


def test_plain_directory_gets_a_random_id_that_persists(tmp_path: Path) -> None:
    first = ensure_project_id(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{32}", first)
    assert json.loads((tmp_path / PROJECT_FILE).read_text())["source"] == "random"
    assert ensure_project_id(tmp_path) == first
    assert load_project_id(tmp_path) == first
    other = tmp_path / "other"
    other.mkdir()
    assert ensure_project_id(other) != first


def test_load_returns_none_before_the_id_exists(tmp_path: Path) -> None:
    assert load_project_id(tmp_path) is None
    assert not (tmp_path / ".memdir").exists()


def test_renaming_a_git_folder_keeps_the_id(tmp_path: Path, git_env: None) -> None:
    root_commit = make_repo(tmp_path / "repo", commits=1)
    assert ensure_project_id(tmp_path / "repo") == root_commit
    (tmp_path / "repo").rename(tmp_path / "renamed")
    assert ensure_project_id(tmp_path / "renamed") == root_commit


def test_renaming_the_folder_keeps_the_id(tmp_path: Path) -> None:
    (tmp_path / "old-name").mkdir()
    before = ensure_project_id(tmp_path / "old-name")
    (tmp_path / "old-name").rename(tmp_path / "new-name")
    assert ensure_project_id(tmp_path / "new-name") == before


def test_renamed_project_keeps_its_history(tmp_path: Path, home: Path) -> None:
    old = tmp_path / "old-name"
    old.mkdir()
    m = Memory.open(old, home=home)
    m.remember("Deploy on Fridays is forbidden", body="v1", id="deploy-1")
    m.remember("Deploy on Fridays is forbidden", body="v2", id="deploy-1")
    old.rename(tmp_path / "new-name")
    moved = Memory.open(tmp_path / "new-name", home=home)
    assert [e.event for e in moved.notes.history("deploy-1")] == ["write", "write"]
    assert moved.read("deploy-1").body == "v2"


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"[]",
        b'"an id"',
        b"{}",
        b'{"id": 5}',
        b'{"id": "short"}',
        b'{"id": "../../../../etc/passwd"}',
        b"\xff\xfe\x00",
        b"",
    ],
)
def test_corrupt_project_file_is_refused_and_never_overwritten(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / PROJECT_FILE
    path.parent.mkdir()
    path.write_bytes(content)
    with pytest.raises(InvalidInput, match="project"):
        load_project_id(tmp_path)
    with pytest.raises(InvalidInput):
        ensure_project_id(tmp_path)
    assert path.read_bytes() == content


def test_memory_refuses_project_writes_with_a_corrupt_project_file(
    project: Path, home: Path
) -> None:
    path = project / PROJECT_FILE
    path.parent.mkdir()
    path.write_bytes(b"{corrupt")
    m = Memory.open(project, home=home)
    with pytest.raises(InvalidInput, match="not a valid project file"):
        m.remember("A project decision", body="text", id="decision-1")
    assert not (project / "MEMORY" / "decision-1.md").exists()  # nothing half-written
    assert path.read_bytes() == b"{corrupt"
    m.remember("My preference", type="user", id="pref-1")  # the user scope is unaffected
    assert m.read("pref-1").summary == "My preference"


def test_reading_goes_on_with_a_corrupt_project_file(project: Path, home: Path) -> None:
    notes = project / "MEMORY"
    notes.mkdir()
    data = render_note(Note(id="kept-1", summary="Written by hand", body="v1"))
    (notes / "kept-1.md").write_bytes(data)
    path = project / PROJECT_FILE
    path.parent.mkdir()
    path.write_bytes(b"{corrupt")
    m = Memory.open(project, home=home)
    for _ in range(2):
        assert [n.id for n in m.notes.list()] == ["kept-1"]
        assert [h.note_id for h in m.search("hand")] == ["kept-1"]
    assert path.read_bytes() == b"{corrupt"
    path.unlink()  # the person fixes it: history picks up the version on disk
    m.remember("Written by hand", body="v2", id="kept-1")
    first = m.notes.history("kept-1")[0]
    assert (first.event, first.revision) == ("observed", revision_of(data))


def test_find_project_root_from_a_subdirectory(tmp_path: Path, git_env: None) -> None:
    make_repo(tmp_path / "repo", commits=1)
    deep = tmp_path / "repo" / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_project_root(deep) == (tmp_path / "repo").resolve()
    assert find_project_root(tmp_path / "repo") == (tmp_path / "repo").resolve()


def test_find_project_root_prefers_the_nearest_project_file(tmp_path: Path, git_env: None) -> None:
    make_repo(tmp_path / "repo", commits=1)
    inner = tmp_path / "repo" / "packages" / "app"
    (inner / ".memdir").mkdir(parents=True)
    (inner / PROJECT_FILE).write_text('{"id": "inner-project-0001"}')
    (inner / "lib").mkdir()
    assert find_project_root(inner / "lib") == inner.resolve()


def test_a_plain_folder_is_no_project(tmp_path: Path) -> None:
    plain = tmp_path / "plain" / "sub"
    plain.mkdir(parents=True)
    assert find_project_root(plain) is None


def test_losing_a_creation_race_returns_the_winners_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    winner = {"id": "winner-0123456789abcdef", "source": "random"}

    def other_process_writes_first(root: Path) -> None:
        (root / PROJECT_FILE).parent.mkdir(parents=True, exist_ok=True)
        (root / PROJECT_FILE).write_text(json.dumps(winner))
        return None

    assert ensure_project_id(tmp_path, root_commit=other_process_writes_first) == winner["id"]
    assert json.loads((tmp_path / PROJECT_FILE).read_text()) == winner
    assert sorted(p.name for p in (tmp_path / ".memdir").iterdir()) == ["project.json"]


def _race(root: str, barrier: Barrier, queue: multiprocessing.Queue[str]) -> None:
    barrier.wait(10)
    queue.put(ensure_project_id(Path(root)))


def test_processes_opening_a_new_project_at_once_agree(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    for attempt in range(5):
        root = tmp_path / f"p{attempt}"
        root.mkdir()
        barrier = ctx.Barrier(6)
        queue: multiprocessing.Queue[str] = ctx.Queue()
        procs = [ctx.Process(target=_race, args=(str(root), barrier, queue)) for _ in range(6)]
        for proc in procs:
            proc.start()
        ids = {queue.get(timeout=30) for _ in procs}
        for proc in procs:
            proc.join(10)
        assert len(ids) == 1
        assert ids == {load_project_id(root)}


@pytest.mark.parametrize(
    ("rev_parse_exit", "expected"),
    [(1, None), (128, None), (0, "error")],
    ids=["no commit yet", "no repository git reads", "commits but no answer"],
)
def test_a_git_that_names_no_root_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rev_parse_exit: int, expected: str | None
) -> None:
    """git answering nothing for a repository that has commits (an I/O error on its output,
    a killed process) is an error, never "no commit": the project must not take another
    identity (a pending or random id) and lose its sync state."""
    from memdir.errors import InvalidInput
    from memdir.project import git_root_commit

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text(
        "#!/bin/sh\n"
        'case "$3" in\n'
        "  rev-list) exit 0 ;;\n"  # no output: its write failed
        f"  rev-parse) [ {rev_parse_exit} = 0 ] && echo {'a' * 40}; exit {rev_parse_exit} ;;\n"
        "esac\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    if expected is None:
        assert git_root_commit(repo) is None
    else:
        with pytest.raises(InvalidInput, match="could not name the root commit"):
            git_root_commit(repo)
