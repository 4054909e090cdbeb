"""The home folder is never a project: `$HOME`, `/` and the memdir home are refused as
project roots, a folder below `$HOME` never resolves to it, memdir outside any project
works on user notes and says so in one line, and read-only commands write nothing into
the project (no `.memdir/`, no `MEMORY/`, no lock file)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from files import snapshot
from memdir.cli.main import main
from memdir.config import load_settings
from memdir.errors import ConfigError
from memdir.project import PROJECT_FILE, find_project_root, refused_root

NOTE = "no project here (the home folder is never one): working on your user notes"


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake $HOME holding the memdir home at ~/.memdir, as on a fresh machine."""
    path = tmp_path / "u"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.setenv("MEMDIR_HOME", str(path / ".memdir"))
    for key, value in {
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.com",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }.items():
        monkeypatch.setenv(key, value)
    return path


def run(cwd: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> Result:
    monkeypatch.chdir(cwd)
    return CliRunner().invoke(main, list(args), env={"COLUMNS": "200"}, catch_exceptions=False)


def git_repo(path: Path, *, commit: bool = True) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    if commit:
        git_commit(path)
    return path


def git_commit(path: Path) -> str:
    """An empty commit; the repository's root commit."""
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "c"], cwd=path, check=True)
    return subprocess.run(
        ["git", "rev-list", "--max-parents=0", "HEAD"],
        cwd=path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_home_root_and_memdir_home_are_refused(user_home: Path) -> None:
    memdir_home = user_home / ".memdir"
    assert refused_root(user_home) == "it is the home folder"
    assert refused_root(Path("/")) == "it is the file-system root"
    assert refused_root(memdir_home, memdir_home) is not None
    assert refused_root(memdir_home / "memory" / "user", memdir_home) is not None
    assert refused_root(user_home / "work", memdir_home) is None


def test_a_folder_below_home_never_resolves_to_home(user_home: Path) -> None:
    # What the old rule left behind: $HOME taken as a project, its id in the memdir home.
    (user_home / PROJECT_FILE).parent.mkdir(parents=True)
    (user_home / PROJECT_FILE).write_text('{"id": "0123456789abcdef"}\n')
    (user_home / ".git").mkdir()  # a dotfiles repository does not make $HOME one either
    below = user_home / "Downloads" / "stuff"
    below.mkdir(parents=True)
    assert find_project_root(below) is None
    assert find_project_root(user_home) is None
    repo = git_repo(user_home / "code" / "app")
    (repo / "src").mkdir()
    assert find_project_root(repo / "src") == repo.resolve()


def test_a_plain_folder_is_no_project_but_a_memdir_one_is(user_home: Path) -> None:
    plain = user_home / "notes"
    plain.mkdir()
    assert find_project_root(plain) is None
    (plain / PROJECT_FILE).parent.mkdir()
    (plain / PROJECT_FILE).write_text('{"id": "fedcba9876543210"}\n')
    assert find_project_root(plain / ".") == plain.resolve()


@pytest.mark.parametrize("where", ["home", "root", "memdir-home", "inside-memdir-home"])
def test_an_explicit_project_naming_one_is_a_clear_error(
    user_home: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    memdir_home = user_home / ".memdir"
    (memdir_home / "memory").mkdir(parents=True)
    target = {
        "home": user_home,
        "root": Path("/"),
        "memdir-home": memdir_home,
        "inside-memdir-home": memdir_home / "memory",
    }[where]
    result = run(user_home, "--project", str(target), "list", monkeypatch=monkeypatch)
    assert result.exit_code == 2
    assert f"{target.resolve()} cannot be a project: it is the" in result.stderr
    assert "without --project to work on your user notes" in result.stderr
    with pytest.raises(ConfigError):
        load_settings(project_root=target)
    assert not (user_home / "MEMORY").exists() and not (memdir_home / "project.json").exists()


def test_in_the_home_folder_memdir_works_on_user_notes(
    user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = run(user_home, "remember", "Answers are terse", "--json", monkeypatch=monkeypatch)
    assert written.exit_code == 0, written.output
    assert written.stderr.strip().splitlines() == [f"warning: {NOTE}"]
    assert json.loads(written.stdout)["note"]["scope"] == "user"
    listed = run(user_home, "list", monkeypatch=monkeypatch)
    assert listed.exit_code == 0 and "Answers are terse" in listed.stdout
    assert listed.stderr == f"warning: {NOTE}\n"
    assert not (user_home / "MEMORY").exists()
    assert not (user_home / PROJECT_FILE).exists()
    refused = run(user_home, "remember", "X", "--scope", "project", monkeypatch=monkeypatch)
    assert refused.exit_code == 4 and "no project is open" in refused.stderr
    # A typed note keeps its type's scope: no quiet move of a project fact to user notes.
    typed = run(user_home, "remember", "Y", "--type", "project", monkeypatch=monkeypatch)
    assert typed.exit_code == 4 and "no project is open" in typed.stderr
    assert "git init" in typed.stderr and "--project DIR" in typed.stderr  # what to do


def test_outside_any_project_memdir_works_on_user_notes(
    user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = user_home / "Downloads"
    plain.mkdir()
    result = run(plain, "remember", "Likes short commits", monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "warning: no project here (not inside a git repository or a folder with "
        ".memdir/project.json): working on your user notes\n"
    )
    assert sorted(p.name for p in plain.iterdir()) == []
    assert len(list((user_home / ".memdir" / "memory" / "user").glob("*.md"))) == 1


READ_ONLY = [
    ("list",),
    ("search", "deploys"),
    ("search", "deploys", "--mode", "all"),
    ("read", "deploys-tuesday"),
    ("read", "deploys"),
    ("history", "deploys-tuesday"),
    ("diff", "deploys-tuesday"),
    ("links", "deploys-tuesday"),
    ("tidy",),
    ("doctor",),
    ("doctor", "--deep"),
    ("recall", "when do deploys go out?"),
    ("retrieve", "deploys"),
    ("backups",),
    ("sync", "status"),
    ("index",),
]


def _project_with_notes_nobody_wrote_here(user_home: Path, *, commit: bool = True) -> Path:
    """A git clone whose MEMORY/ notes were committed elsewhere: no `.memdir/` yet (with
    `commit` false, a fresh `git init` holding notes written by hand: no commit yet)."""
    repo = git_repo(user_home / "code" / "app", commit=commit)
    (repo / "MEMORY").mkdir()
    (repo / "MEMORY" / "deploys-tuesday.md").write_text(
        '---\n{"id":"deploys-tuesday","summary":"Deploys go out on Tuesdays",'
        '"createdAt":1767607200000,"updatedAt":1767607200000}\n---\n'
        "Because of the Wednesday freeze. See [[pricing-cards]].\n",
        encoding="utf-8",
    )
    return repo


@pytest.mark.parametrize("committed", [True, False], ids=["git", "git-no-commit"])
@pytest.mark.parametrize("args", READ_ONLY, ids=[" ".join(a) for a in READ_ONLY])
def test_read_only_commands_write_nothing_into_the_project(
    user_home: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], committed: bool
) -> None:
    repo = _project_with_notes_nobody_wrote_here(user_home, commit=committed)
    before = snapshot(repo)
    result = run(repo, *args, monkeypatch=monkeypatch)
    # doctor reports the dangling link with exit code 1; the rest succeed.
    assert result.exit_code == (1 if args[0] == "doctor" else 0), result.output
    assert snapshot(repo) == before
    assert "no project here" not in result.stderr


@pytest.mark.parametrize("args", READ_ONLY[:3] + READ_ONLY[8:], ids=str)
def test_read_only_commands_outside_a_project_write_nothing_there(
    user_home: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    plain = user_home / "Downloads"
    plain.mkdir()
    before_home = sorted(p.name for p in user_home.iterdir())
    for cwd in (plain, user_home):
        result = run(cwd, *args, monkeypatch=monkeypatch)
        assert result.exit_code in (0, 1), result.output
        assert NOTE.split(" (")[0] in result.stderr
    assert list(plain.iterdir()) == []
    assert sorted(p.name for p in user_home.iterdir()) == sorted({*before_home, ".memdir"})
    assert not (user_home / ".memdir" / "project.json").exists()


def test_a_write_then_records_the_project_id(
    user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _project_with_notes_nobody_wrote_here(user_home)
    assert run(repo, "history", "deploys-tuesday", monkeypatch=monkeypatch).exit_code == 0
    written = run(
        repo, "remember", "Pricing cards", "--id", "pricing-cards", monkeypatch=monkeypatch
    )
    assert written.exit_code == 0, written.output
    root_commit = subprocess.run(
        ["git", "rev-list", "--max-parents=0", "HEAD"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert json.loads((repo / PROJECT_FILE).read_text())["id"] == root_commit
    # The version read before the id was written is in the same history as the write.
    assert len(run(repo, "history", "deploys", "--json", monkeypatch=monkeypatch).stdout) > 2
    history_dirs = list((user_home / ".memdir" / "memory-history").iterdir())
    assert {p.name for p in history_dirs} == {f"project-{root_commit}"}


def test_without_a_commit_the_pending_id_read_with_becomes_the_project_id(
    user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`git init`, read (history and index are kept under a pending id in the home), then
    the first write records that same id: what was gathered while reading stays attached."""
    repo = _project_with_notes_nobody_wrote_here(user_home, commit=False)
    for args in (("search", "deploys"), ("history", "deploys-tuesday")):
        assert run(repo, *args, monkeypatch=monkeypatch).exit_code == 0
    assert not (repo / ".memdir").exists()
    pending = [json.loads(p.read_text()) for p in (user_home / ".memdir" / "projects").iterdir()]
    assert len(pending) == 1 and pending[0]["root"] == str(repo.resolve())
    written = run(
        repo, "remember", "Pricing cards", "--id", "pricing-cards", monkeypatch=monkeypatch
    )
    assert written.exit_code == 0, written.output
    recorded = json.loads((repo / PROJECT_FILE).read_text())
    assert recorded["id"] == pending[0]["id"] and recorded["source"] == "random"
    history_dirs = {p.name for p in (user_home / ".memdir" / "memory-history").iterdir()}
    assert history_dirs == {f"project-{recorded['id']}"}
    shown = json.loads(
        run(repo, "history", "deploys-tuesday", "--json", monkeypatch=monkeypatch).stdout
    )
    assert len(shown) >= 1
    # a commit made afterwards does not change the recorded id
    git_commit(repo)
    assert run(repo, "search", "pricing", monkeypatch=monkeypatch).exit_code == 0
    assert json.loads((repo / PROJECT_FILE).read_text())["id"] == recorded["id"]


def test_a_first_commit_before_any_write_gives_the_root_commit_id(
    user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _project_with_notes_nobody_wrote_here(user_home, commit=False)
    assert run(repo, "search", "deploys", monkeypatch=monkeypatch).exit_code == 0
    root_commit = git_commit(repo)
    written = run(
        repo, "remember", "Pricing cards", "--id", "pricing-cards", monkeypatch=monkeypatch
    )
    assert written.exit_code == 0, written.output
    assert json.loads((repo / PROJECT_FILE).read_text())["id"] == root_commit


def test_a_damaged_pending_id_file_is_replaced(user_home: Path) -> None:
    from memdir.project import pending_project_id

    repo = git_repo(user_home / "code" / "x", commit=False)
    home = user_home / ".memdir"
    first = pending_project_id(repo, home)
    assert pending_project_id(repo, home) == first
    (path,) = (home / "projects").iterdir()
    path.write_text("{not json")
    second = pending_project_id(repo, home)
    assert second != first and pending_project_id(repo, home, create=False) == second
