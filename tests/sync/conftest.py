"""Fixtures for sync between machines against a real `memdir server serve` (§7).

A *machine* is its own MEMDIR_HOME plus its own git clone of one project, so every
machine sees the same project id (the root commit). The `world` fixture, parametrized
over the storage backends `dir` and `postgres`, gives a test a running server, an
account of its own on it, and machines on demand::

    def test_x(world: World) -> None:
        a, b = world.machine("a"), world.machine("b")
        a.note("hello", "body")
        world.sync(a, b)
        world.assert_converged(a, b)

Servers (see `server` and `ServerPool`): a PostgreSQL server serves one test, on a
fresh database; so does any server of a test marked `own_server` (it stops or kills
it) or `server_args(...)` (extra `serve` options, e.g. `"--tombstone-days", "1"`).
Other directory-backend tests share one server per module, each with its own
account, which keeps them independent. The rate limit is off unless a test sets one.
Every server's stderr is checked for tracebacks after each test.
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from memdir import Memory
from memdir.core import Note, parse_note
from memdir.files.atomic import atomic_write
from memdir.project import load_project_id
from memdir.server.rules import open_storage
from memdir.server.storage.base import Storage
from memdir.sync.protocol import Manifest, rev_of
from memdir.sync.replica import SyncRun
from memdir.sync.scope_pass import PassReport
from sync_server import RunningServer, add_user, auth_headers, running_server

BACKENDS = ("dir", "postgres")
SCOPES = ("project", "user")
_GIT = ["git", "-c", "user.name=memdir tests", "-c", "user.email=tests@memdir.invalid"]
_DAY_MS = 86_400_000


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "server_args(*args): extra `memdir server serve` options for the world fixture"
    )
    config.addinivalue_line(
        "markers", "own_server: the test stops or kills its server, so it gets one of its own"
    )


# -- the server ----------------------------------------------------------------------------


@dataclass
class Server:
    """One server data directory (and database) with a restartable server process."""

    data: Path
    backend: str
    dsn: str | None
    args: tuple[str, ...]
    tokens: dict[str, str] = field(default_factory=dict)
    running: RunningServer | None = None
    port: int | None = None
    #: What the server processes wrote on stderr so far.
    logs: str = ""
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    @property
    def url(self) -> str:
        assert self.port is not None, "the server was never started"
        return f"http://127.0.0.1:{self.port}"

    def add_user(self, name: str) -> str:
        self.tokens[name] = add_user(self.data, name, backend=self.backend, dsn=self.dsn)
        return self.tokens[name]

    def start(self) -> None:
        """Start the server; once it ran, always on the same port (so the origin stays)."""
        assert self.running is None, "already running"
        args = list(self.args)
        if self.port is not None:
            args += ["--port", str(self.port)]
        self._stack = contextlib.ExitStack()
        self.running = self._stack.enter_context(
            running_server(self.data, backend=self.backend, dsn=self.dsn, extra_args=args)
        )
        self.port = self.running.port

    def stop(self) -> None:
        """Stop the server gracefully (SIGTERM)."""
        if self.running is not None:
            self.running.stop()
            self.logs += self.running.stderr()
            self._stack.close()
            self.running = None

    def kill(self) -> None:
        """SIGKILL the server (a crash)."""
        if self.running is not None:
            self.running.kill()
            self.logs += self.running.stderr()
            self._stack.close()
            self.running = None

    @contextlib.contextmanager
    def storage(self) -> Iterator[Storage]:
        """The storage backend opened directly (alongside a running server)."""
        store = open_storage(self.backend, self.data, self.dsn)
        try:
            yield store
        finally:
            store.close()

    def snapshot(self, key: str, user: str = "alice") -> dict[str, Any]:
        """What the server answers a client that holds nothing (over HTTP)."""
        scope = {"kind": "user"} if key == "user" else {"kind": "project", "project": key[8:]}
        response = httpx.post(
            f"{self.url}/v1/memory/snapshot",
            json={"scope": scope, "have": []},
            headers=auth_headers(self.tokens[user]),
            timeout=30,
        )
        response.raise_for_status()
        doc: dict[str, Any] = response.json()
        return doc

    def manifest(self, key: str, user: str = "alice") -> Manifest:
        with self.storage() as store:
            return store.manifest(user, key)

    def age_tombstones(self, key: str, days: float, user: str = "alice") -> list[str]:
        """Move every tombstone of a scope `days` back in time, as if the days had passed.

        The server has no clock to fake, so the stored manifest is rewritten in place at
        the same version (time passing changes no version): the manifest file for the
        directory backend, the manifest row for PostgreSQL. Returns the tombstoned ids.
        """
        with self.storage() as store:
            current = store.manifest(user, key)
        shift = int(days * _DAY_MS)
        tombstones = {
            i: t.model_copy(update={"deleted_at": max(0, t.deleted_at - shift)})
            for i, t in current.tombstones.items()
        }
        aged = current.model_copy(update={"tombstones": tombstones})
        if self.backend == "dir":
            scope_dir = self.data / "users" / user
            scope_dir /= "memory" if key == "user" else f"projects/{key[8:]}/memory"
            atomic_write(scope_dir / "manifest.json", aged.model_dump_json().encode(), mode=0o600)
        else:
            import psycopg

            assert self.dsn is not None
            with psycopg.connect(self.dsn, autocommit=True) as conn:
                updated = conn.execute(
                    "UPDATE memdir_manifests SET body = %s::jsonb"
                    " WHERE user_id = %s AND scope = %s AND version = %s",
                    (aged.model_dump_json(exclude={"version"}), user, key, current.version),
                )
                assert updated.rowcount == 1
        assert self.manifest(key, user) == aged
        return sorted(tombstones)

    def check_intact(self, keys: Sequence[str], user: str = "alice") -> dict[str, bytes]:
        """Every stored object named by a manifest exists, matches its rev and parses.

        Returns note id -> bytes of the live notes of every scope in `keys`. For the
        directory backend every object file on disk is checked too (no torn file).
        """
        live: dict[str, bytes] = {}
        with self.storage() as store:
            for key in keys:
                manifest = store.manifest(user, key)
                wanted = {e.rev: i for i, e in manifest.notes.items()}
                found = store.objects(user, key, wanted)
                assert found.keys() == wanted.keys(), f"objects missing in {key}"
                for rev, data in found.items():
                    assert rev_of(data) == rev
                    note = parse_note(data, file_id=wanted[rev])
                    assert note.id == wanted[rev]
                    live[f"{key}:{note.id}"] = data
        if self.backend == "dir":
            for path in (self.data / "users").rglob("*"):
                if not path.is_file() or path.name.startswith("."):
                    continue  # a temp file a crash left behind is not an object
                if path.name == "manifest.json":
                    Manifest.model_validate_json(path.read_bytes())
                elif path.suffix == ".md" and path.parent.parent.name == "objects":
                    data = path.read_bytes()
                    assert rev_of(data) == path.stem, f"torn object {path}"
                    parse_note(data, file_id=path.parent.name)
        return live


# -- machines ------------------------------------------------------------------------------


@dataclass
class Machine:
    """One machine: a MEMDIR_HOME, a clone of the project, and a `Memory` on both."""

    name: str
    home: Path
    project: Path
    memory: Memory

    def __repr__(self) -> str:
        return f"Machine({self.name})"

    def sync(self, scope: str | None = None) -> SyncRun:
        return self.memory.sync.run(scope)

    def directory(self, scope: str) -> Path:
        return self.memory.stores.directory(scope)

    def files(self, scope: str) -> dict[str, bytes]:
        """Note id -> exact bytes of every note file of a scope on this machine."""
        directory = self.directory(scope)
        if not directory.is_dir():
            return {}
        return {
            p.stem: p.read_bytes()
            for p in directory.glob("*.md")
            if p.is_file() and not p.name.startswith(".")
        }

    def all_files(self) -> dict[str, dict[str, bytes]]:
        return {scope: self.files(scope) for scope in SCOPES}

    def note(
        self, summary: str, body: str = "", *, scope: str = "project", tags: Sequence[str] = ()
    ) -> str:
        """Create a note; its id."""
        return self.memory.remember(summary, body=body, scope=scope, tags=list(tags)).note.id

    def read(self, note_id: str, scope: str = "project") -> Note:
        found = self.memory.notes.list(scope=scope)
        for note in found:
            if note.id == note_id:
                return note
        raise AssertionError(f"{self.name} has no note {note_id} in {scope}")

    def has(self, note_id: str, scope: str = "project") -> bool:
        return note_id in self.files(scope)

    def edit(
        self,
        note_id: str,
        change: Callable[[str], str] | None = None,
        *,
        scope: str = "project",
        summary: str | None = None,
        tags: Sequence[str] | None = None,
    ) -> bytes:
        """Rewrite a note's body with `change` (and summary/tags); the new file bytes."""
        note = self.read(note_id, scope)
        body = change(note.body) if change is not None else None
        self.memory.remember(
            summary if summary is not None else note.summary,
            body=body,
            scope=scope,
            id=note_id,
            tags=list(tags) if tags is not None else None,
        )
        return self.files(scope)[note_id]

    def set_line(self, note_id: str, index: int, text: str, *, scope: str = "project") -> bytes:
        """Replace one line of a note's body."""

        def change(body: str) -> str:
            lines = body.split("\n")
            lines[index] = text
            return "\n".join(lines)

        return self.edit(note_id, change, scope=scope)

    def delete(self, note_id: str, scope: str = "project") -> None:
        self.memory.forget(note_id, scope=scope)

    def backups(self) -> list[tuple[str, str, bytes]]:
        """(note id, reason, bytes) of every backup on this machine."""
        return [
            (b.note_id or "", b.reason or "", b.path.read_bytes())
            for b in self.memory.backups(limit=None)
        ]

    def backed_up(self, data: bytes, reason_prefix: str = "sync") -> bool:
        """True when exactly these bytes are in this machine's backups with such a reason."""
        return any(
            d == data and reason.startswith(reason_prefix) for _, reason, d in self.backups()
        )

    def reopen(self) -> None:
        """Close and open the `Memory` again (as a new process would)."""
        self.memory.close()
        self.memory = Memory.open(self.project, home=self.home)


@dataclass
class World:
    """A server, a project repository, and the machines made so far."""

    root: Path
    server: Server
    origin: Path
    #: This test's account on the server (its own, even when the server is shared).
    user: str = "alice"
    machines: dict[str, Machine] = field(default_factory=dict)

    @property
    def token(self) -> str:
        """The bearer token of `user`."""
        return self.server.tokens[self.user]

    def add_user(self, base: str) -> tuple[str, str]:
        """Another account for this test (`base` plus this test's suffix); name and token."""
        name = base + self.user.removeprefix("alice")
        return name, self.server.add_user(name)

    def manifest(self, key: str, user: str | None = None) -> Manifest:
        """The stored manifest of a scope of this test's account (or `user`'s)."""
        return self.server.manifest(key, user or self.user)

    def snapshot(self, key: str) -> dict[str, Any]:
        """What the server answers this test's account holding nothing."""
        return self.server.snapshot(key, self.user)

    def age_tombstones(self, key: str, days: float) -> list[str]:
        """Let `days` pass for the tombstones of a scope (see `Server.age_tombstones`)."""
        return self.server.age_tombstones(key, days, self.user)

    def check_intact(self, keys: Sequence[str]) -> dict[str, bytes]:
        """See `Server.check_intact`, for this test's account."""
        return self.server.check_intact(keys, self.user)

    @property
    def project_id(self) -> str:
        any_machine = next(iter(self.machines.values()))
        project_id = load_project_id(any_machine.project)
        assert project_id is not None
        return project_id

    def key(self, scope: str) -> str:
        """The server's storage key of a scope."""
        return "user" if scope == "user" else f"project/{self.project_id}"

    def machine(
        self,
        name: str,
        *,
        signed_in: bool = True,
        project_files: dict[str, bytes] | None = None,
        url: str | None = None,
    ) -> Machine:
        """A new machine (own home, own clone), signed in as this test's account at `url`."""
        home = self.root / f"home-{name}"
        project = self.root / f"checkout-{name}"
        subprocess.run(
            ["git", "clone", "-q", str(self.origin), str(project)],
            check=True,
            capture_output=True,
        )
        if project_files:
            memory_dir = project / "MEMORY"
            memory_dir.mkdir(exist_ok=True)
            for note_id, data in project_files.items():
                (memory_dir / f"{note_id}.md").write_bytes(data)
        home.mkdir()
        # Sync needs no vectors: computing them would only slow every write down.
        (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
        memory = Memory.open(project, home=home)
        machine = Machine(name, home, project, memory)
        self.machines[name] = machine
        if signed_in:
            memory.sync.login(url or self.server.url, self.token)
        return machine

    def sync(self, *machines: Machine, rounds: int = 1) -> list[SyncRun]:
        """Sync each machine in turn, `rounds` times; the runs."""
        runs = []
        for _ in range(rounds):
            for machine in machines:
                runs.append(machine.sync())
        return runs

    def settle(self, *machines: Machine) -> None:
        """Sync every machine until nothing moves anywhere (at most four rounds)."""
        for _ in range(4):
            moved = False
            for machine in machines:
                run = machine.sync()
                assert not run.paused, run.paused
                assert not any(r.conflicts for r in run.reports), run
                moved = moved or any(r.changed for r in run.reports)
            if not moved:
                return
        raise AssertionError("the machines did not settle after four rounds")

    def assert_converged(self, *machines: Machine) -> dict[str, dict[str, bytes]]:
        """Every machine holds exactly the same note files, and so does the server."""
        first = machines[0].all_files()
        for other in machines[1:]:
            theirs = other.all_files()
            for scope in SCOPES:
                assert theirs[scope].keys() == first[scope].keys(), (other, scope)
                for note_id, data in first[scope].items():
                    assert theirs[scope][note_id] == data, (other, scope, note_id)
        live = self.check_intact([self.key(s) for s in SCOPES])
        on_server = {k: v for k, v in live.items()}
        here = {f"{self.key(s)}:{i}": d for s in SCOPES for i, d in first[s].items()}
        assert here == on_server
        return first

    def close(self) -> None:
        for machine in self.machines.values():
            machine.memory.close()


def _git_project(path: Path) -> Path:
    path.mkdir()
    subprocess.run([*_GIT, "init", "-q", str(path)], check=True)
    (path / "README.md").write_text("a project that syncs its memory\n")
    subprocess.run([*_GIT, "-C", str(path), "add", "README.md"], check=True)
    subprocess.run([*_GIT, "-C", str(path), "commit", "-q", "-m", "init"], check=True)
    return path


class ServerPool:
    """Servers for the tests, each used by one test only, started ahead of time.

    Starting `memdir server serve` takes most of a second (imports), so while a test
    runs, the server the next test wants starts in the background; a used server is
    stopped (and its database dropped) in the background too. Each server has its own
    data directory and, for PostgreSQL, its own fresh database (made like the
    `pg_database_dsn` fixture does, ahead of time), so tests stay independent.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.admin_dsn: str | None = None
        self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="server-pool")
        self._spares: dict[tuple[str, tuple[str, ...]], Future[Server]] = {}
        self._pending: list[Future[None]] = []

    def _database(self) -> str:
        import psycopg
        from psycopg import conninfo, sql

        assert self.admin_dsn is not None
        name = f"memdir_sync_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return conninfo.make_conninfo(self.admin_dsn, dbname=name)

    def _drop(self, dsn: str) -> None:
        import psycopg
        from psycopg import conninfo, sql

        assert self.admin_dsn is not None
        name = conninfo.conninfo_to_dict(dsn)["dbname"]
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(str(name)))
            )

    def _make(self, backend: str, args: tuple[str, ...]) -> Server:
        data = Path(tempfile.mkdtemp(prefix=f"{backend}-", dir=self.root))
        dsn = self._database() if backend == "postgres" else None
        srv = Server(data, backend, dsn, args)
        srv.add_user("alice")
        srv.start()
        return srv

    def take(self, backend: str, args: tuple[str, ...]) -> Server:
        """A running server of its own, with the account alice."""
        spare = self._spares.pop((backend, args), None)
        return spare.result() if spare is not None else self._make(backend, args)

    def prepare(self, backend: str, args: tuple[str, ...]) -> None:
        """Start a server for a coming test in the background."""
        key = (backend, args)
        if key not in self._spares and (backend != "postgres" or self.admin_dsn is not None):
            self._spares[key] = self._executor.submit(self._make, backend, args)

    def _dispose(self, srv: Server) -> None:
        srv.stop()
        if srv.dsn is not None:
            self._drop(srv.dsn)
        shutil.rmtree(srv.data, ignore_errors=True)

    def give_back(self, srv: Server) -> None:
        """Stop a used server (and drop its database) in the background."""
        self._pending.append(self._executor.submit(self._dispose, srv))

    def drain(self, backend: str | None = None) -> None:
        """Stop the spare servers (of `backend`, or all) and wait for every disposal."""
        for key in [k for k in self._spares if backend is None or k[0] == backend]:
            with contextlib.suppress(Exception):
                spare = self._spares.pop(key).result()
                self._pending.append(self._executor.submit(self._dispose, spare))
        for pending in self._pending:
            with contextlib.suppress(Exception):
                pending.result()
        self._pending.clear()

    def close(self) -> None:
        self.drain()
        self._executor.shutdown(wait=True)


@pytest.fixture(scope="session")
def server_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerPool]:
    """The session's `ServerPool`."""
    pool = ServerPool(tmp_path_factory.mktemp("sync-servers"))
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="session")
def pool_postgres(server_pool: ServerPool, postgres_dsn: str) -> Iterator[str]:
    """Lets the pool make databases; drops them all before the PostgreSQL cluster stops."""
    server_pool.admin_dsn = postgres_dsn
    try:
        yield postgres_dsn
    finally:
        server_pool.drain("postgres")
        server_pool.admin_dsn = None


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The server's storage backend."""
    return str(request.param)


DEFAULT_ARGS = ("--rate-limit", "0")


def _server_args(item: pytest.Item) -> tuple[str, ...]:
    marker = item.get_closest_marker("server_args")
    extra = tuple(str(a) for a in marker.args) if marker else ()
    return (*DEFAULT_ARGS, *extra)


def _backend_of(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    backend = callspec.params.get("backend") if callspec is not None else None
    return None if backend is None else str(backend)


def _own_server(item: pytest.Item, backend: str) -> bool:
    """PostgreSQL, server options, or a test that stops the server: a server of its own."""
    return (
        backend != "dir"
        or item.get_closest_marker("server_args") is not None
        or item.get_closest_marker("own_server") is not None
    )


def _next_server(request: pytest.FixtureRequest) -> tuple[str, tuple[str, ...]] | None:
    """Backend and options of the next server to start for the tests still to run."""
    items = request.session.items
    try:
        later = items[items.index(request.node) + 1 :]
    except ValueError:
        return None
    for item in later:
        if "server" not in getattr(item, "fixturenames", ()):
            continue
        backend = _backend_of(item)
        if backend is None:
            return None
        if _own_server(item, backend) or item.path != request.node.path:
            return backend, _server_args(item)
    return None


@pytest.fixture(scope="module")
def shared_server(server_pool: ServerPool) -> Iterator[Server]:
    """One directory-backend server for the tests of a module that do not stop it."""
    srv = server_pool.take("dir", DEFAULT_ARGS)
    try:
        yield srv
    finally:
        server_pool.give_back(srv)


@pytest.fixture
def server(
    backend: str, server_pool: ServerPool, request: pytest.FixtureRequest
) -> Iterator[Server]:
    """A running server with the account `alice` (backend from `backend`).

    PostgreSQL servers, servers with `@pytest.mark.server_args(...)` options and those
    of tests marked `own_server` (they stop or kill it) serve one test alone, on a fresh
    database; the others share one directory-backend server per module, where each test
    has an account of its own (see `world`). The rate limit is off. The server the next
    test wants starts in the background meanwhile.
    """
    own = _own_server(request.node, backend)
    if backend == "postgres":
        request.getfixturevalue("pool_postgres")
    if own:
        srv = server_pool.take(backend, _server_args(request.node))
    else:
        srv = request.getfixturevalue("shared_server")
    coming = _next_server(request)
    if coming is not None:
        server_pool.prepare(*coming)
    seen = len(srv.running.stderr()) if srv.running is not None else 0
    try:
        yield srv
    finally:
        logs = srv.logs + (srv.running.stderr() if srv.running is not None else "")
        if own:
            server_pool.give_back(srv)
    assert "Traceback" not in logs[seen:], f"the server failed:\n{logs[seen:]}"


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[Callable[[], Server]]:
    """Start more servers (directory backend, account `alice`), each on its own origin."""
    made: list[Server] = []

    def make() -> Server:
        srv = Server(tmp_path / f"extra-server-{len(made)}", "dir", None, ("--rate-limit", "0"))
        srv.data.mkdir()
        srv.add_user("alice")
        made.append(srv)
        srv.start()
        return srv

    try:
        yield make
    finally:
        for srv in made:
            srv.stop()


_ACCOUNTS = itertools.count(1)


@pytest.fixture
def world(server: Server, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[World]:
    """The server, this test's account on it, a git project to clone, and machines."""
    user = "alice"
    if not _own_server(request.node, server.backend):
        user = f"alice-{next(_ACCOUNTS):04d}"  # a shared server: an account of its own
        server.add_user(user)
    w = World(tmp_path, server, _git_project(tmp_path / "origin"), user)
    try:
        yield w
    finally:
        w.close()


@pytest.fixture
def two(world: World) -> tuple[Machine, Machine]:
    """Machines `a` and `b`, both signed in as alice."""
    return world.machine("a"), world.machine("b")


@dataclass
class Pair:
    """Two machines' `Memory` (user notes only), signed in to one dir-backend server."""

    a: Memory
    b: Memory
    url: str


@pytest.fixture
def pair(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Pair]:
    """A fresh server (`server_args` marker honoured) and two signed-in machines."""
    data = tmp_path / "srv"
    data.mkdir()
    token = add_user(data, "alice")
    with running_server(data, extra_args=_server_args(request.node)) as running:
        a = Memory.open(None, home=tmp_path / "a")
        b = Memory.open(None, home=tmp_path / "b")
        try:
            a.sync.login(running.url, token)
            b.sync.login(running.url, token)
            yield Pair(a, b, running.url)
        finally:
            a.close()
            b.close()


def report(run: SyncRun, scope: str = "project") -> PassReport:
    """The pass report of one scope in a run."""
    found = [r for r in run.reports if r.scope == scope]
    assert len(found) == 1, run
    return found[0]


def lines(n: int, prefix: str = "line") -> str:
    """A body of `n` distinct lines."""
    return "\n".join(f"{prefix} {i}" for i in range(n))
