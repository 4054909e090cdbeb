"""Project identity: finding a project's root and its stable id in `.memdir/project.json`.

A project is a git root or a folder holding `.memdir/project.json` — never the home
folder, the file-system root or the memdir home (whose `.memdir/` would otherwise make
`$HOME` a project and every folder below it part of it). A git repository takes its
root commit hash as id, so every clone agrees; any other directory gets a random id.
Once written, the id never changes, so a renamed or moved folder keeps its sync state
and usage statistics.

Reading never writes into a project. A git repository with no commit yet (or a folder
whose `.memdir/project.json` is not written yet) has no id to read, so until the first
commit or the first write it uses a *pending* id kept in the memdir home
(`projects/<hash of the root path>.json`); the first write records that same id in the
project, so history, the index and statistics gathered while reading stay attached.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from memdir.errors import InvalidInput
from memdir.files.atomic import atomic_create, atomic_write, ensure_private_dir

__all__ = [
    "PROJECT_FILE",
    "ensure_project_id",
    "find_project_root",
    "git_root_commit",
    "load_project_id",
    "peek_project_id",
    "pending_project_id",
    "refused_root",
]

PROJECT_FILE = Path(".memdir") / "project.json"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{7,127}")


def refused_root(root: Path, memdir_home: Path | None = None) -> str | None:
    """Why `root` can never be a project (the home folder, `/`, the memdir home or a folder
    inside it, the folder whose `.memdir/` is the memdir home), or None when it can be."""
    root = root.resolve()
    if root == Path(root.anchor):
        return "it is the file-system root"
    try:
        if root == Path.home().resolve():
            return "it is the home folder"
    except RuntimeError:  # no home directory can be determined: nothing to refuse
        pass
    if memdir_home is not None:
        home = memdir_home.resolve()
        if root == home or home in root.parents:
            return f"it is the memdir home {home} or inside it"
        if root / ".memdir" == home:
            return f"its .memdir/ is the memdir home {home}"
    return None


def find_project_root(start: Path) -> Path | None:
    """The nearest ancestor of `start` (itself included) that is a git root or holds
    `.memdir/project.json`, skipping the home folder and `/`; None when there is none:
    then there is no project here, and memdir works on user notes only."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if refused_root(candidate) is not None:
            continue
        if (candidate / PROJECT_FILE).is_file() or (candidate / ".git").exists():
            return candidate
    return None


def git_root_commit(root: Path) -> str | None:
    """The root commit of the git repository at `root` (the lowest, if it has several);
    None when `root` is not a repository, git is missing or the history is empty.

    git failing on a repository that has commits (a full disk, a killed process, an I/O
    error) is InvalidInput, never None: a repository whose root commit cannot be read now
    must not take another identity (a pending or random id) and lose its sync state.
    """
    if not (root / ".git").exists():
        return None
    out = _git(root, "rev-list", "--max-parents=0", "HEAD")
    if out is None:
        return None  # git is not installed
    for attempt in range(2):
        commits = sorted(line.strip() for line in out.stdout.splitlines() if line.strip())
        if out.returncode == 0 and commits:
            return commits[0]
        if attempt == 0:
            head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD")
            if head is None or head.returncode not in (0, 1):
                return None  # no repository git will read here (broken, or "dubious")
            if head.returncode == 1:
                return None  # a repository with no commit yet
            # HEAD names a commit, yet git did not name the root: once more
            again = _git(root, "rev-list", "--max-parents=0", "HEAD")
            if again is None:
                return None
            out = again
    detail = (out.stderr or "").strip().splitlines()
    raise InvalidInput(
        f"git could not name the root commit of {root}"
        + (f" ({detail[-1][:200]})" if detail else f" (exit {out.returncode})")
        + ": nothing was changed; try again"
    )


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    """git's answer in `root` (None when git is not installed); InvalidInput when it
    could not be run or did not answer in time."""
    try:
        return subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except FileNotFoundError:
        return None
    except (OSError, subprocess.SubprocessError) as exc:
        raise InvalidInput(f"git could not be run in {root} ({exc}): try again") from None


def load_project_id(root: Path) -> str | None:
    """The id stored in `<root>/.memdir/project.json`, None when there is none yet."""
    path = root / PROJECT_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        doc = json.loads(raw.decode("utf-8"))
        value = doc["id"]
    except (ValueError, KeyError, TypeError):
        raise InvalidInput(
            f"{path} is not a valid project file (expected JSON with an 'id'); "
            "fix it by hand — memdir does not replace it because the id keeps sync state attached"
        ) from None
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise InvalidInput(f"{path} holds an invalid project id {value!r}")
    return value


def peek_project_id(root: Path) -> str | None:
    """The project's id without writing anything: the stored one, else a git root commit
    (what `ensure_project_id` would store); None when only a new random id would do."""
    return load_project_id(root) or git_root_commit(root)


def _pending_file(root: Path, home: Path) -> Path:
    digest = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogateescape")).hexdigest()
    return home / "projects" / f"{digest[:32]}.json"


def _read_id(path: Path) -> str | None:
    """The valid id in a JSON file `{"id": …}`, None when the file is missing or unusable."""
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))["id"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return value if isinstance(value, str) and _ID.fullmatch(value) else None


def pending_project_id(root: Path, home: Path, *, create: bool = True) -> str | None:
    """The id a project without one (no project file, no commit) uses until the first
    write records it: a random id kept in `home`, never in the project. With `create`
    false, None when there is none yet."""
    path = _pending_file(root, home)
    existing = _read_id(path)
    if existing is not None or not create:
        return existing
    doc = {"id": secrets.token_hex(16), "root": str(root.resolve())}
    ensure_private_dir(path.parent)
    if not atomic_create(path, (json.dumps(doc, indent=2) + "\n").encode(), mode=0o600):
        winner = _read_id(path)
        if winner is not None:
            return winner
        # An unusable leftover (edited by hand): replace it.
        atomic_write(path, (json.dumps(doc, indent=2) + "\n").encode(), mode=0o600)
    return str(doc["id"])


def ensure_project_id(
    root: Path,
    *,
    root_commit: Callable[[Path], str | None] = git_root_commit,
    pending: str | None = None,
) -> str:
    """The project's id, writing `.memdir/project.json` first if it does not exist.

    Two processes opening a new project at once agree: the file is created
    exclusively, and the one that loses the race reads the winner's id. `root_commit`
    finds the git root commit that becomes the id of a repository; without one, the
    `pending` id used while reading (see `pending_project_id`) becomes the project's.
    """
    existing = load_project_id(root)
    if existing is not None:
        return existing
    commit = root_commit(root)
    doc = {
        "id": commit if commit else (pending or secrets.token_hex(16)),
        "source": "git-root-commit" if commit else "random",
        "createdAt": int(time.time() * 1000),
    }
    path = root / PROJECT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if atomic_create(path, (json.dumps(doc, indent=2) + "\n").encode()):
        return str(doc["id"])
    winner = load_project_id(root)
    if winner is None:
        raise InvalidInput(f"{path} vanished while it was being created; try again")
    return winner
