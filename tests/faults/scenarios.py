"""The write paths of the fault matrix: how each is prepared and what its new state is.

A scenario prepares a fresh project (`P/.git` makes it a project) and MEMDIR_HOME through
the Python API, names the CLI command to run, and recognises the command's complete
result among the note files (`new_state`); anything else but the files from before is a
torn or half-done write.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir import Memory
from memdir.core import normalize_body, parse_note

#: Temp files an interrupted atomic write may leave; the scan ignores them.
TEMP_NAME = re.compile(r"\..+\.tmp-[0-9a-f]{8}")
#: What else may sit beside the notes.
ALLOWED = frozenset({".gitignore", ".memdir.lock"})

# -- cases -------------------------------------------------------------------------------


@dataclass
class Case:
    """One prepared copy of a scenario: a project, a home and the command to run."""

    scenario: str
    root: Path
    project: Path
    home: Path
    argv: list[str]
    #: Note files before the command ("project/ID.md" or "user/ID.md" → bytes).
    before: dict[str, bytes]
    #: Anything the scenario needs to recognise the new state (ids, bytes).
    facts: dict[str, Any] = field(default_factory=dict)

    def command(self) -> list[str]:
        return [sys.executable, "-m", "memdir", "--project", str(self.project), *self.argv]


def note_dirs(case: Case) -> dict[str, Path]:
    return {"project": case.project / "MEMORY", "user": case.home / "memory" / "user"}


def note_files(case: Case) -> tuple[dict[str, bytes], list[str]]:
    """The note files of both scopes, and any unexpected file beside them."""
    files: dict[str, bytes] = {}
    strays: list[str] = []
    for scope, directory in note_dirs(case).items():
        if not directory.is_dir():
            continue
        for path in sorted(directory.iterdir()):
            name = path.name
            if name in ALLOWED or TEMP_NAME.fullmatch(name):
                continue
            if name.endswith(".md") and path.is_file():
                files[f"{scope}/{name}"] = path.read_bytes()
            else:
                strays.append(f"{scope}/{name}")
    return files, strays


def audit_entries(home: Path) -> list[dict[str, Any]]:
    """The audit log's complete lines (a torn last line is left out)."""
    path = home / "audit" / "audit.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_bytes().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def _is_note(data: bytes, note_id: str, summary: str, body: str) -> bool:
    try:
        note = parse_note(data, file_id=note_id)
    except Exception:
        return False
    return note.summary == summary and note.body == normalize_body(body)


class Scenario:
    """A write path: how to prepare it and what its new state is."""

    name = ""
    #: Search words whose note must be found after every case (derived index checks).
    search: tuple[tuple[str, str], ...] = ()
    #: Whether a killed run may leave part of a batch done (each note still whole).
    batch = False
    #: Whether the run is the first to use the local model (its cache not built yet).
    first_model_use = False

    def prepare(self, root: Path) -> Case:
        raise NotImplementedError

    def new_state(self, case: Case, files: dict[str, bytes]) -> str | None:
        """None when `files` are exactly the command's complete result; else what is off."""
        raise NotImplementedError

    def after_success(self, case: Case) -> list[str]:
        """Problems with state outside the note files once the command succeeded."""
        return []

    def partial(self, case: Case, files: dict[str, bytes]) -> str | None:
        """For a batch: None when every file is a whole old or new version."""
        return "not a batch"

    # helpers ------------------------------------------------------------------------

    @staticmethod
    def dirs(root: Path) -> tuple[Path, Path]:
        project, home = root / "P", root / "H"
        (project / ".git").mkdir(parents=True)
        home.mkdir()
        return project, home

    @staticmethod
    @contextmanager
    def memory(project: Path, home: Path) -> Iterator[Memory]:
        m = Memory.open(project, home=home)
        try:
            yield m
        finally:
            m.close()

    @staticmethod
    def unchanged(case: Case, files: dict[str, bytes], skip: Iterable[str]) -> str | None:
        skip = set(skip)
        for name, data in case.before.items():
            if name in skip:
                continue
            if files.get(name) != data:
                return f"{name} changed" if name in files else f"{name} vanished"
        return None


def _snapshot(case_project: Path, case_home: Path) -> dict[str, bytes]:
    fake = Case("", case_project.parent, case_project, case_home, [], {})
    return note_files(fake)[0]


class RememberNew(Scenario):
    name = "remember (new)"
    summary = "Rollbacks need the feature flag switched off first"
    body = "Switch the flag off, then roll back.\nNever the other way round."
    search = (("flag", "rollbacks"),)

    def prepare(self, root: Path) -> Case:
        project, home = self.dirs(root)
        with self.memory(project, home) as m:
            m.remember("Deploys run from the release branch", body="Tag first, then deploy.")
        return Case(
            self.name,
            root,
            project,
            home,
            ["remember", self.summary, "--body", self.body, "--json"],
            _snapshot(project, home),
        )

    def new_state(self, case: Case, files: dict[str, bytes]) -> str | None:
        off = self.unchanged(case, files, ())
        if off:
            return off
        added = [n for n in files if n not in case.before]
        if len(added) != 1:
            return f"{len(added)} new note files: {added}"
        name = added[0]
        note_id = name.split("/", 1)[1][:-3]
        if not _is_note(files[name], note_id, self.summary, self.body):
            return f"{name} is not the complete new note: {files[name][:120]!r}"
        return None


class RememberUpdate(Scenario):
    name = "remember --id (replace)"
    note_id = "deploy-window"
    summary = "Deploys happen on Tuesdays and Thursdays only"
    body = "Not on Fridays.\n" + "The window is 10:00-16:00 UTC.\n" * 20

    def prepare(self, root: Path) -> Case:
        project, home = self.dirs(root)
        with self.memory(project, home) as m:
            m.remember("Deploys happen on Tuesdays", body="Old window.", id=self.note_id)
            m.remember("Staging is reset nightly", body="At 02:00 UTC.", id="staging-reset")
        argv = ["remember", self.summary, "--id", self.note_id, "--body", self.body, "--json"]
        return Case(self.name, root, project, home, argv, _snapshot(project, home))

    def new_state(self, case: Case, files: dict[str, bytes]) -> str | None:
        name = f"project/{self.note_id}.md"
        off = self.unchanged(case, files, (name,))
        if off:
            return off
        if set(files) != set(case.before):
            return f"note files {sorted(files)} instead of {sorted(case.before)}"
        if not _is_note(files[name], self.note_id, self.summary, self.body):
            return f"{name} is not the complete new version: {files[name][:120]!r}"
        return None


class Forget(Scenario):
    name = "forget"
    purge = False
    note_id = "old-vpn-settings"
    search = (("staging", "staging-reset"),)

    def prepare(self, root: Path) -> Case:
        project, home = self.dirs(root)
        with self.memory(project, home) as m:
            m.remember("The old VPN settings", body="Use the 2019 profile.", id=self.note_id)
            m.remember("The old VPN settings (still)", body="Or the 2020 one.", id=self.note_id)
            m.remember("Staging is reset nightly", body="At 02:00 UTC.", id="staging-reset")
        argv = ["forget", self.note_id, "--yes", "--json", *(["--purge"] if self.purge else [])]
        case = Case(self.name, root, project, home, argv, _snapshot(project, home))
        case.facts["old"] = case.before[f"project/{self.note_id}.md"]
        return case

    def new_state(self, case: Case, files: dict[str, bytes]) -> str | None:
        name = f"project/{self.note_id}.md"
        off = self.unchanged(case, files, (name,))
        if off:
            return off
        if set(files) != set(case.before) - {name}:
            return f"note files {sorted(files)}, expected all but {name}"
        return None

    def after_success(self, case: Case) -> list[str]:
        backups = case.home / "memory-backups"
        kept = [p for p in backups.glob("*.md")] if backups.is_dir() else []
        if not any(p.read_bytes() == case.facts["old"] for p in kept):
            return ["no backup holds the forgotten version"]
        return []


class Purge(Forget):
    name = "forget --purge"
    purge = True

    def after_success(self, case: Case) -> list[str]:
        traces = []
        for sub in ("memory-history", "memory-backups"):
            base = case.home / sub
            if not base.is_dir():
                continue
            for path in base.rglob("*"):
                if path.is_file() and (
                    b"VPN settings" in path.read_bytes() or self.note_id in path.name
                ):
                    traces.append(str(path.relative_to(case.home)))
        return [f"purge left traces: {traces}"] if traces else []


class Restore(Scenario):
    name = "backups restore"
    note_id = "old-vpn-settings"
    search = (("vpn", "old-vpn-settings"),)

    def prepare(self, root: Path) -> Case:
        project, home = self.dirs(root)
        with self.memory(project, home) as m:
            m.remember("The old VPN settings", body="Use the 2019 profile.", id=self.note_id)
            m.remember("Staging is reset nightly", body="At 02:00 UTC.", id="staging-reset")
            old = (project / "MEMORY" / f"{self.note_id}.md").read_bytes()
            backup = m.forget(self.note_id).backup
            assert backup is not None
        case = Case(
            self.name,
            root,
            project,
            home,
            ["backups", "restore", backup.id, "--json"],
            _snapshot(project, home),
        )
        case.facts["old"] = old
        return case

    def new_state(self, case: Case, files: dict[str, bytes]) -> str | None:
        name = f"project/{self.note_id}.md"
        off = self.unchanged(case, files, ())
        if off:
            return off
        if set(files) != set(case.before) | {name}:
            return f"note files {sorted(files)}, expected {name} back"
        if files[name] != case.facts["old"]:
            return f"{name} is not the backed-up bytes: {files[name][:120]!r}"
        return None


class Reindex(Scenario):
    name = "reindex"
    # A user's first reindex also builds the model's cache: those writes are faulted too.
    first_model_use = True
    search = (("rollbacks", "rollback-order"), ("tuesdays", "deploy-window"))

    def prepare(self, root: Path) -> Case:
        project, home = self.dirs(root)
        with self.memory(project, home) as m:
            m.remember("Rollbacks need the flag off", body="Flag first.", id="rollback-order")
            m.remember("Deploys happen on Tuesdays", body="10-16 UTC.", id="deploy-window")
            m.remember("Staging is reset nightly", body="At 02:00 UTC.", id="staging-reset")
        return Case(self.name, root, project, home, ["reindex", "--json"], _snapshot(project, home))

    def new_state(self, case: Case, files: dict[str, bytes]) -> str | None:
        if files != case.before:
            return f"reindex changed note files: {sorted(set(files) ^ set(case.before))}"
        return None


@dataclass
class SyncWorld:
    """A running sync server, the git origin every machine clones, and machine A's notes."""

    root: Path
    url: str
    token: str
    origin: Path
    files: dict[str, bytes]


_GIT = ["git", "-c", "user.name=memdir tests", "-c", "user.email=tests@memdir.invalid"]


def _clone(origin: Path, target: Path) -> None:
    subprocess.run(
        ["git", "clone", "-q", str(origin), str(target)], check=True, capture_output=True
    )


def make_sync_world(root: Path, url: str, token: str) -> SyncWorld:
    """Origin repository, machine A with three project notes, synced up to the server."""
    origin = root / "origin"
    origin.mkdir(parents=True)
    subprocess.run([*_GIT, "init", "-q", str(origin)], check=True)
    (origin / "README.md").write_text("a project that syncs its memory\n")
    subprocess.run([*_GIT, "-C", str(origin), "add", "README.md"], check=True)
    subprocess.run([*_GIT, "-C", str(origin), "commit", "-q", "-m", "init"], check=True)
    project, home = root / "A", root / "home-A"
    _clone(origin, project)
    home.mkdir()
    with Scenario.memory(project, home) as m:
        m.sync.login(url, token)
        m.remember("Rollbacks need the flag off", body="Flag first.\n" * 30, id="rollback-order")
        m.remember("Deploys happen on Tuesdays", body="10-16 UTC.", id="deploy-window")
        m.remember("Staging is reset nightly", body="At 02:00 UTC.", id="staging-reset")
        run = m.sync.run()
        assert not run.paused, run
    files = {f"project/{p.name}": p.read_bytes() for p in sorted((project / "MEMORY").glob("*.md"))}
    return SyncWorld(root, url, token, origin, files)


class SyncPull(Scenario):
    """Machine B's first `memdir sync`: it pulls machine A's three notes."""

    name = "sync (pull)"
    batch = True
    search = (("rollbacks", "rollback-order"),)

    def __init__(self, world: SyncWorld | None = None) -> None:
        self.world = world

    def prepare(self, root: Path) -> Case:
        assert self.world is not None, "the sync scenario needs a running server"
        root.mkdir(parents=True, exist_ok=True)
        project, home = root / "P", root / "H"
        _clone(self.world.origin, project)
        home.mkdir()
        with self.memory(project, home) as m:
            m.sync.login(self.world.url, self.world.token)
        return Case(self.name, root, project, home, ["sync", "--json"], _snapshot(project, home))

    def new_state(self, case: Case, files: dict[str, bytes]) -> str | None:
        assert self.world is not None
        want = {**case.before, **self.world.files}
        if files == want:
            return None
        return f"pulled {len(set(files) & set(self.world.files))}/{len(self.world.files)} notes"

    def partial(self, case: Case, files: dict[str, bytes]) -> str | None:
        """None when every file is a whole version from before or from the server."""
        assert self.world is not None
        for name, data in files.items():
            if data not in (case.before.get(name), self.world.files.get(name)):
                return f"{name} is neither before nor the server's version: {data[:120]!r}"
        return None


class TidyMerge(Scenario):
    """`tidy merge`: the kept note rewritten, a second note deleted and a third relinked in
    one batch. A failed merge leaves every file as it was; a kill may leave the merged and
    relinked notes written before the removal (a duplicate), never a lost note."""

    name = "tidy merge"
    batch = True
    keep, gone, linker = "pnpm-a", "pnpm-b", "ci-setup"
    search = (("frozen", "ci-setup"),)

    def prepare(self, root: Path) -> Case:
        project, home = self.dirs(root)
        with self.memory(project, home) as m:
            m.remember("Use pnpm for installs", body="pnpm only, never npm.", id=self.keep)
            m.remember("Installs use pnpm", body="Pin pnpm 9 in CI.", id=self.gone)
            m.remember("CI setup", body=f"Frozen lockfile; see [[{self.gone}]].", id=self.linker)
        argv = ["tidy", "merge", self.keep, self.gone, "--yes", "--json"]
        return Case(self.name, root, project, home, argv, _snapshot(project, home))

    def _merged(self, data: bytes) -> bool:
        try:
            note = parse_note(data, file_id=self.keep)
        except Exception:
            return False
        return "pnpm only, never npm." in note.body and "Pin pnpm 9 in CI." in note.body

    def _relinked(self, data: bytes) -> bool:
        try:
            note = parse_note(data, file_id=self.linker)
        except Exception:
            return False
        return note.body == f"Frozen lockfile; see [[{self.keep}]]."

    def new_state(self, case: Case, files: dict[str, bytes]) -> str | None:
        keep, gone, linker = (f"project/{i}.md" for i in (self.keep, self.gone, self.linker))
        off = self.unchanged(case, files, (keep, gone, linker))
        if off:
            return off
        if gone in files:
            return f"{gone} is still there"
        if keep not in files or not self._merged(files[keep]):
            return f"{keep} is not the merged note"
        if linker not in files or not self._relinked(files[linker]):
            return f"{linker} does not link to {self.keep}"
        return None

    def partial(self, case: Case, files: dict[str, bytes]) -> str | None:
        """None when every file is whole (its old or its merge version) and nothing is lost."""
        keep, gone, linker = (f"project/{i}.md" for i in (self.keep, self.gone, self.linker))
        for name, data in files.items():
            if data == case.before.get(name):
                continue
            if (name == keep and self._merged(data)) or (name == linker and self._relinked(data)):
                continue
            return f"{name} is neither its old nor its merged version: {data[:120]!r}"
        if gone not in files and not (keep in files and self._merged(files[keep])):
            return f"{gone} is gone but its text is in no note"
        return None


class Import(Scenario):
    """`import` of a small mcp-memory graph: three notes in one batch, one linking another.
    A failure leaves the files as they were; a kill leaves whole notes only."""

    name = "import"
    batch = True
    search = (("blue", "ci-setup"),)
    entities = (
        ("Blue cluster", "deploys need a ticket"),
        ("Rollbacks", "use the previous image tag"),
        ("Release train", "leaves every Tuesday"),
    )

    def prepare(self, root: Path) -> Case:
        project, home = self.dirs(root)
        with self.memory(project, home) as m:
            m.remember("CI setup", body="The blue cluster runs CI.", id="ci-setup")
        source = root / "memory.jsonl"
        lines = [
            json.dumps({"type": "entity", "name": n, "entityType": "topic", "observations": [o]})
            for n, o in self.entities
        ]
        lines.append(
            json.dumps(
                {
                    "type": "relation",
                    "from": "Rollbacks",
                    "to": "Blue cluster",
                    "relationType": "applies_to",
                }
            )
        )
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
        argv = ["import", str(source), "--from", "mcp-memory", "--json"]
        return Case(self.name, root, project, home, argv, _snapshot(project, home))

    def _whole(self, data: bytes) -> bool:
        try:
            note = parse_note(data)
        except Exception:
            return False
        return any(o in note.body for _, o in self.entities)

    def new_state(self, case: Case, files: dict[str, bytes]) -> str | None:
        off = self.unchanged(case, files, ())
        if off:
            return off
        added = [n for n in files if n not in case.before]
        if len(added) != len(self.entities) or not all(self._whole(files[n]) for n in added):
            return f"{len(added)} imported notes: {added}"
        return None

    def partial(self, case: Case, files: dict[str, bytes]) -> str | None:
        off = self.unchanged(case, files, ())
        if off:
            return off
        for name in files:
            if name not in case.before and not self._whole(files[name]):
                return f"{name} is not a whole imported note: {files[name][:120]!r}"
        return None


def scenarios(world: SyncWorld | None = None) -> list[Scenario]:
    return [
        RememberNew(),
        RememberUpdate(),
        Forget(),
        Purge(),
        Restore(),
        Reindex(),
        TidyMerge(),
        Import(),
        SyncPull(world),
    ]
