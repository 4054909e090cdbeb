"""A note file the user cannot read (another user's 0600 file in a shared project) is that
file's problem, not the index's: searches go on without it, with no warning that the index
"cannot be updated" — only the one line naming the file left out — and every readable
note, one written since included, is found.

The failure is real: the searches run in a child process that makes itself the unprivileged
user nobody (uid 65534), owner of the project and the machine-local state, while the
unreadable note is root's, mode 0600 (root itself reads any file). Root only, as CI runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.core import Note, render_note

NOBODY = 65534
pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="making a file unreadable to the searching user needs root (to run it as nobody)",
)

#: Runs as nobody (it drops root's rights itself): each argument is a JSON step,
#: ["write", id, summary, body], ["search", query] or ["findings"]; prints one JSON line
#: per search or findings step.
CHILD = r"""
import json, os, sys, time
from pathlib import Path
from typing import cast

from memdir.config import EmbedSettings
from memdir.core import Note, Scope, render_note
from memdir.retrieve import Retriever
from memdir.store.notedir import NoteDirectory
from memdir.store.notes import ScopeStore
from memdir.store.usage import UsageStats


class Store:
    def __init__(self, root):
        self.scope = Scope.PROJECT
        self.state_key = "project"
        self.directory = NoteDirectory(self.scope, root, lock_timeout=5, max_notes=10_000)

    def observe(self, note_id, data, note_hash):
        pass

    def get(self, note_id):
        item = self.directory.read(note_id)
        return item if isinstance(item, Note) else None


# Everything is imported first, then the process becomes nobody: the interpreter may live
# where nobody cannot reach it (root's home), so it cannot be started as nobody.
os.setgroups([])
os.setgid(65534)
os.setuid(65534)
notes, home = Path(sys.argv[1]), Path(sys.argv[2])
store = cast(ScopeStore, Store(notes))
warnings = []
r = Retriever(
    home, EmbedSettings(provider="none"), usage=UsageStats(home / "usage", lock_timeout=5),
    warn=warnings.append,
)
r.use_embedder(None)
for step in map(json.loads, sys.argv[3:]):
    if step[0] == "write":
        note = Note(id=step[1], summary=step[2], body=step[3], created_at=1, updated_at=1)
        path = notes / f"{step[1]}.md"
        path.write_bytes(render_note(note))
        at = time.time_ns() - 3600 * 1_000_000_000  # at rest: its stamp alone is trusted
        os.utime(path, ns=(at, at))
    elif step[0] == "search":
        found = {}
        for method in ("lexical", "vector", "hybrid"):
            hits = r.search([store], step[1], limit=20, mode="any", method=method)
            chunks = r.retrieve([store], step[1], limit=20, mode="any", method=method)
            if method != "vector":
                found[method] = {h.note_id: h.snippet for h in hits}
                found[method + " chunks"] = sorted({c.note_id for c in chunks})
        print(json.dumps({"found": found, "warnings": warnings}), flush=True)
        warnings.clear()
    else:
        problems = [[p.path.name, p.reason] for p in store.directory.scan().problems]
        print(json.dumps({"index": r.index_findings(store, deep=True), "files": problems}))
r.close()
"""


class Shared:
    """A project and machine-local state owned by nobody, in a folder nobody can reach."""

    def __init__(self, base: Path) -> None:
        self.notes = base / "notes"
        self.home = base / "home"
        for folder in (base, self.notes, self.home):
            folder.mkdir(exist_ok=True)
            os.chown(folder, NOBODY, NOBODY)

    def as_nobody(self, *steps: list[str]) -> list[dict[str, object]]:
        """Run `steps` (see CHILD) in a new process as nobody; its JSON lines."""

        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR")}
        env["HOME"] = str(self.home)
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(self.notes), str(self.home)]
            + [json.dumps(step) for step in steps],
            cwd=self.home,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return [json.loads(line) for line in done.stdout.splitlines()]

    def root_note(self, note_id: str, summary: str, body: str, *, mode: int, at: int) -> Path:
        """A note file owned by root, of `mode`, last written at `at` (ns)."""
        path = self.notes / f"{note_id}.md"
        note = Note(id=note_id, summary=summary, body=body, created_at=1, updated_at=1)
        path.write_bytes(render_note(note))
        os.chown(path, 0, 0)
        path.chmod(mode)
        os.utime(path, ns=(at, at))
        return path


@pytest.fixture
def shared() -> Iterator[Shared]:
    # Not under pytest's tmp_path: its folders are root's own (0700), nobody cannot enter.
    base = Path(tempfile.mkdtemp(prefix="memdir-unreadable-"))
    base.chmod(0o755)
    try:
        shared = Shared(base)
        yield shared
    finally:
        shutil.rmtree(base, ignore_errors=True)


HOUR = 3600 * 1_000_000_000
WRITE_STAGING = ["write", "staging", "Deploys go through staging", "The staging cluster first."]
WRITE_HAND = ["write", "hand", "Deploys written by hand", "Edited in an editor."]
SEARCH = ["search", "deploys"]


def _found(answer: dict[str, object]) -> dict[str, object]:
    """The notes found by each method (all must agree), with the lexical snippets."""
    found = answer["found"]
    assert isinstance(found, dict)
    hybrid, lexical = found["hybrid"], found["lexical"]
    assert (
        set(hybrid) == set(lexical) == set(found["hybrid chunks"]) == set(found["lexical chunks"])
    )
    assert isinstance(lexical, dict)
    return lexical


def test_another_users_note_is_left_out_and_notes_written_since_are_found(
    shared: Shared,
) -> None:
    [first] = shared.as_nobody(WRITE_STAGING, SEARCH)
    assert set(_found(first)) == {"staging"}
    secret = shared.root_note(
        "secret",
        "Deploy keys of the team",
        "Root's own deploys.",
        mode=0o600,
        at=time.time_ns() - HOUR,
    )

    # The same process writes a note after searching: it is found at once, and the only
    # warning names the file left out (never "the index cannot be updated").
    before, after = shared.as_nobody(SEARCH, WRITE_HAND, SEARCH)
    assert set(_found(before)) == {"staging"}
    assert _only_skipped(before["warnings"])
    assert set(_found(after)) == {"staging", "hand"}
    assert after["warnings"] == []  # said once
    # And a later process too; the index is sound, the unreadable file is the store's to report.
    later, findings = shared.as_nobody(SEARCH, ["findings"])
    assert set(_found(later)) == {"staging", "hand"}
    assert _only_skipped(later["warnings"])
    assert findings["index"] == []
    assert findings["files"] == [["secret.md", "cannot read: Permission denied"]]

    # Readable again (a chmod leaves the file's stamp as it was): found on the next search.
    secret.chmod(0o644)
    [again] = shared.as_nobody(SEARCH)
    assert set(_found(again)) == {"staging", "hand", "secret"}
    assert again["warnings"] == []


def _only_skipped(warnings: list[str]) -> bool:
    """One warning, naming the unreadable file as left out."""
    return len(warnings) == 1 and "(secret.md)" in warnings[0] and "left out" in warnings[0]


@pytest.mark.parametrize("how", ["made unreadable", "rewritten unreadable"])
def test_a_note_indexed_then_made_unreadable_is_no_longer_served(shared: Shared, how: str) -> None:
    # Stamped ahead of the clock: indexed within its file system's clock tick of being
    # written (the racy window), so every refresh reads it again, however slow the test.
    at = time.time_ns() + HOUR if how == "made unreadable" else time.time_ns() - HOUR
    secret = shared.root_note(
        "secret", "Deploy keys of the team", "The old deploy keys.", mode=0o644, at=at
    )
    [first] = shared.as_nobody(WRITE_STAGING, SEARCH)
    assert _found(first) == {
        "staging": "The staging cluster first.",
        "secret": "The old deploy keys.",
    }

    if how == "made unreadable":
        secret.chmod(0o600)
    else:  # its owner changed it and closed it to others: the index holds an old text
        shared.root_note(
            "secret", "Deploy keys of the team", "The new deploy keys.", mode=0o600, at=at + 1000
        )
    before, after = shared.as_nobody(SEARCH, WRITE_HAND, SEARCH)
    assert set(_found(before)) == {"staging"}  # not the text it held when it could be read
    assert _only_skipped(before["warnings"])
    assert set(_found(after)) == {"staging", "hand"}
    assert after["warnings"] == []  # said once
    [findings] = shared.as_nobody(["findings"])
    assert findings["index"] == []
