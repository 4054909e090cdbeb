"""The unlock agent through real Unix sockets: agent processes started by `start_agent` and
in-thread `AgentServer`s with an injected clock (so no test waits out the idle limit)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memdir.crypto.agent import (
    DEFAULT_IDLE_SECONDS,
    AgentClient,
    AgentServer,
    AgentUnavailable,
    BlobChanged,
    runtime_dir,
    socket_path,
    start_agent,
)
from memdir.errors import InvalidInput, LimitExceeded, Refused

KEY = bytes(range(200, 232))  # 32 bytes no environment or argument would hold by chance


def _agent_pids(under: Path) -> list[int]:
    """Live (non-zombie) agent processes whose socket lies under `under`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        mine = b"memdir.crypto.agent" in argv and str(under).encode() in b" ".join(argv)
        if mine and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def _gone(pid: int) -> bool:
    """Whether the process has exited, every thread of it: its descriptors are all closed
    (a zombie awaiting its reaper counts as gone, a zombie leader with live threads not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        threads = len(list(Path(f"/proc/{pid}/task").iterdir()))
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X") and threads <= 1


def _wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


@pytest.fixture
def sockdir() -> Iterator[Path]:
    """A short private folder for sockets; every agent started under it dies at teardown."""
    path = Path(tempfile.mkdtemp(prefix="ma-", dir="/tmp"))
    try:
        yield path
    finally:
        try:
            for sock in path.rglob("*.sock"):
                with contextlib.suppress(AgentUnavailable):
                    AgentClient(sock, timeout=1.0).lock()
            for pid in _agent_pids(path):
                os.kill(pid, signal.SIGKILL)
            assert _wait_for(lambda: not _agent_pids(path)), "an agent outlived its test"
        finally:
            shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def agent(sockdir: Path) -> AgentClient:
    """A client of a freshly started agent process."""
    return start_agent(sockdir / "a.sock")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


Serve = Callable[..., tuple[AgentServer, AgentClient]]


@pytest.fixture
def serve(sockdir: Path) -> Iterator[Serve]:
    """Start in-thread AgentServers (socket in sockdir); each is shut down at teardown."""
    running: list[tuple[AgentServer, threading.Thread]] = []

    def start(
        *,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        max_blob_bytes: int = 1 << 30,
    ) -> tuple[AgentServer, AgentClient]:
        path = sockdir / f"t{len(running)}.sock"
        server = AgentServer(
            path, idle_seconds=idle_seconds, clock=clock, max_blob_bytes=max_blob_bytes
        )
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        running.append((server, thread))
        return server, AgentClient(path, timeout=2.0)

    yield start
    for server, thread in running:
        server.shutdown()
        thread.join(5)
        assert not thread.is_alive()


def _raw(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(2.0)
    sock.connect(str(path))
    return sock


def _frame(header: object, payload: bytes = b"") -> bytes:
    head = json.dumps(header).encode()
    return struct.pack(">II", len(head), len(payload)) + head + payload


def _declared(header: object, size: int) -> bytes:
    """A frame's prefix and header announcing a payload of size bytes, without the payload."""
    head = json.dumps(header).encode()
    return struct.pack(">II", len(head), size) + head


def _reply(sock: socket.socket) -> dict[str, object] | None:
    """The header of the next reply frame, or None when the agent closed the connection."""
    data = b""
    try:
        while len(data) < 8 or len(data) < 8 + struct.unpack(">II", data[:8])[0]:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            data += chunk
    except ConnectionResetError:
        return None
    head_len = struct.unpack(">II", data[:8])[0]
    reply: dict[str, object] = json.loads(data[8 : 8 + head_len])
    return reply


# --- where sockets live ---------------------------------------------------------------------


def test_runtime_dir_under_xdg_is_created_private(sockdir: Path) -> None:
    path = runtime_dir({"XDG_RUNTIME_DIR": str(sockdir)})
    assert path == sockdir / "memdir"
    assert path.stat().st_mode & 0o777 == 0o700
    assert runtime_dir({"XDG_RUNTIME_DIR": str(sockdir)}) == path


def test_runtime_dir_falls_back_to_tmp(sockdir: Path) -> None:
    fallback = Path(f"/tmp/memdir-{os.getuid()}")
    assert runtime_dir({}) == fallback
    assert fallback.stat().st_mode & 0o777 == 0o700
    assert runtime_dir({"XDG_RUNTIME_DIR": "relative/dir"}) == fallback
    sockdir.chmod(0o750)  # an XDG_RUNTIME_DIR open to the group is not used
    assert runtime_dir({"XDG_RUNTIME_DIR": str(sockdir)}) == fallback


def test_runtime_dir_refuses_an_open_folder(sockdir: Path) -> None:
    (sockdir / "memdir").mkdir()
    (sockdir / "memdir").chmod(0o770)
    with pytest.raises(Refused, match="group or others"):
        runtime_dir({"XDG_RUNTIME_DIR": str(sockdir)})


def test_runtime_dir_refuses_a_symlink(sockdir: Path) -> None:
    (sockdir / "elsewhere").mkdir(mode=0o700)
    (sockdir / "memdir").symlink_to(sockdir / "elsewhere")
    with pytest.raises(Refused, match="symbolic link"):
        runtime_dir({"XDG_RUNTIME_DIR": str(sockdir)})


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a folder away")
def test_runtime_dir_refuses_another_users_folder(sockdir: Path) -> None:
    (sockdir / "memdir").mkdir(mode=0o700)
    os.chown(sockdir / "memdir", 65534, 65534)
    with pytest.raises(Refused, match="belongs to uid 65534"):
        runtime_dir({"XDG_RUNTIME_DIR": str(sockdir)})


def test_socket_path_is_one_per_home(sockdir: Path, tmp_path: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(sockdir)}
    one, other = socket_path(tmp_path / "a", env), socket_path(tmp_path / "b", env)
    assert one.parent == other.parent == sockdir / "memdir"
    assert one != other and one == socket_path(tmp_path / "a" / ".." / "a", env)
    assert one.name.startswith("agent-") and len(one.name) == len("agent-") + 16 + len(".sock")


# --- starting, reusing, keys ----------------------------------------------------------------


def test_start_reuses_the_running_agent(sockdir: Path, tmp_path: Path) -> None:
    path = socket_path(tmp_path, {"XDG_RUNTIME_DIR": str(sockdir)})
    first = start_agent(path)
    assert start_agent(path).status().pid == first.status().pid
    assert path.stat().st_mode & 0o777 == 0o600 and path.is_socket()
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert _agent_pids(sockdir) == [first.status().pid]


def test_concurrent_starts_end_with_one_agent(sockdir: Path) -> None:
    path, barrier, pids = sockdir / "a.sock", threading.Barrier(4), []

    def run() -> None:
        barrier.wait()
        pids.append(start_agent(path).status().pid)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15)
    assert len(pids) == 4 and len(set(pids)) == 1
    assert _wait_for(lambda: _agent_pids(sockdir) == pids[:1]), _agent_pids(sockdir)


def test_keys_round_trip(agent: AgentClient) -> None:
    assert agent.get_key("store") is None
    agent.put_key("store", KEY)
    agent.put_key("other", b"\x00" * 32)
    assert agent.get_key("store") == KEY
    assert agent.get_key("unknown") is None
    agent.put_key("store", KEY[::-1])
    assert agent.get_key("store") == KEY[::-1]
    assert agent.status().key_ids == ("other", "store")


def test_bad_arguments_are_invalid_input(agent: AgentClient) -> None:
    for call in (
        lambda: agent.put_key("", KEY),
        lambda: agent.put_key("k", b""),
        lambda: agent.put_key("k", KEY, idle_seconds=0),
        lambda: agent.get_key("x" * 1000),
        lambda: agent.put_blob("b", b"x", expect=-1),
    ):
        with pytest.raises(InvalidInput):
            call()
    assert agent.running()


def test_many_round_trips_each_get_the_key(agent: AgentClient) -> None:
    # One connection per call: 200 in a row leak nothing and each answers (the time of a
    # round trip is a figure for bench/encryption.py, not a bar here).
    agent.put_key("store", KEY)
    assert all(agent.get_key("store") == KEY for _ in range(200))
    assert agent.status().key_ids == ("store",)


def test_the_key_is_in_no_argument_or_environment(
    agent: AgentClient, monkeypatch: pytest.MonkeyPatch, sockdir: Path
) -> None:
    monkeypatch.setenv("MEMDIR_PASSWORD", "hunter2-correct-horse")
    agent.lock()
    client = start_agent(sockdir / "a.sock")
    client.put_key("store", KEY)
    pid = client.status().pid
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    assert KEY not in cmdline and KEY.hex().encode() not in cmdline
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except PermissionError:  # not dumpable: only root may read it, which is the point
        return
    assert KEY not in environ and KEY.hex().encode() not in environ
    assert b"hunter2" not in environ


# --- blobs ----------------------------------------------------------------------------------


def test_blob_generations_and_compare_and_swap(agent: AgentClient) -> None:
    assert agent.get_blob("index") is None
    assert agent.put_blob("index", b"one") == 1
    assert agent.put_blob("index", b"two", expect=1) == 2
    with pytest.raises(BlobChanged) as changed:
        agent.put_blob("index", b"stale", expect=1)
    assert changed.value.current == 2
    with pytest.raises(BlobChanged):
        agent.put_blob("index", b"new", expect=0)
    assert agent.get_blob("index") == (2, b"two")
    agent.drop_blob("index")
    assert agent.get_blob("index") is None
    assert agent.put_blob("index", b"again", expect=0) == 3  # a generation never recurs
    image = os.urandom(3 << 20)
    assert agent.put_blob("big", image) == 1
    assert agent.get_blob("big") == (1, image)
    status = agent.status()
    assert (status.blobs, status.blob_bytes) == (2, len(image) + 5)


def test_an_oversized_blob_is_refused_and_the_agent_goes_on(serve: Serve) -> None:
    _, client = serve(max_blob_bytes=1024)
    for size in (2048, 8 << 20):
        with pytest.raises(LimitExceeded, match="at most 1024"):
            client.put_blob("index", b"x" * size)
    assert client.put_blob("index", b"x" * 1024) == 1
    assert client.running()


# --- idle limit (injected clock) ------------------------------------------------------------


def test_idle_limit_with_an_injected_clock(serve: Serve) -> None:
    clock = Clock()
    server, client = serve(idle_seconds=900, clock=clock)
    client.put_key("store", KEY)
    clock.now += 600
    assert client.status().idle_left == pytest.approx(300)
    assert client.status().idle_left == pytest.approx(300)  # status is not use
    assert client.running() and not server.expired()  # nor is a ping
    assert client.get_key("store") == KEY
    assert client.status().idle_left == pytest.approx(900)  # get_key is
    for use in (client.touch, lambda: client.put_blob("b", b"x"), lambda: client.get_blob("b")):
        clock.now += 899
        use()
        assert client.status().idle_left == pytest.approx(900)
    clock.now += 900
    assert server.expired()
    assert _wait_for(lambda: not client.path.exists())
    with pytest.raises(AgentUnavailable):
        client.get_key("store")


def test_put_key_sets_the_idle_limit(serve: Serve) -> None:
    clock = Clock()
    server, client = serve(idle_seconds=900, clock=clock)
    client.put_key("store", KEY, idle_seconds=60)
    assert client.status().idle_seconds == 60
    clock.now += 59
    assert not server.expired()
    clock.now += 1
    assert server.expired()


def test_a_real_agent_locks_itself_when_idle(sockdir: Path) -> None:
    client = start_agent(sockdir / "a.sock", idle_seconds=0.5)
    client.put_key("store", KEY)
    pid = client.status().pid
    assert _wait_for(lambda: _gone(pid), 5)
    assert not client.path.exists() and not client.running()


# --- lock, signals, death -------------------------------------------------------------------


def test_lock_wipes_removes_the_socket_and_exits(agent: AgentClient) -> None:
    agent.put_key("store", KEY)
    agent.put_blob("index", b"image")
    pid = agent.status().pid
    assert agent.lock()
    assert not agent.path.exists()
    assert not agent.running()
    assert _wait_for(lambda: _gone(pid))
    assert not agent.lock()
    assert start_agent(agent.path).get_key("store") is None


def test_sigterm_wipes_and_removes_the_socket(agent: AgentClient) -> None:
    agent.put_key("store", KEY)
    pid = agent.status().pid
    os.kill(pid, signal.SIGTERM)
    assert _wait_for(lambda: _gone(pid))
    assert not agent.path.exists()
    with pytest.raises(AgentUnavailable, match="no socket"):
        agent.get_key("store")


def test_sigkill_then_a_fresh_agent(agent: AgentClient) -> None:
    agent.put_key("store", KEY)
    pid = agent.status().pid
    os.kill(pid, signal.SIGKILL)
    assert _wait_for(lambda: _gone(pid))
    assert agent.path.exists()  # nobody removed it: a stale socket
    with pytest.raises(AgentUnavailable, match="stale"):
        agent.get_key("store")
    assert not agent.running()
    fresh = start_agent(agent.path)
    assert fresh.status().pid != pid
    assert fresh.get_key("store") is None


def test_a_stale_socket_file_is_removed_on_start(sockdir: Path) -> None:
    path = sockdir / "a.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(path))  # bound, never listening, closed: a stale file
    assert path.exists()
    with pytest.raises(AgentUnavailable, match="stale"):
        AgentClient(path).get_key("store")
    client = start_agent(path)
    assert client.running() and path.stat().st_mode & 0o777 == 0o600


def test_a_file_that_is_not_a_socket_is_refused(sockdir: Path) -> None:
    (sockdir / "a.sock").write_text("not a socket")
    with pytest.raises(Refused, match="not a socket"):
        start_agent(sockdir / "a.sock")


# --- hostile or broken peers ----------------------------------------------------------------

BAD_FRAMES = {
    "garbage": b"hello, agent! this is not a frame at all",
    "huge header": struct.pack(">II", 1 << 30, 0),
    "empty header": struct.pack(">II", 0, 0),
    "not json": struct.pack(">II", 4, 0) + b"\xff\xfe{]",
    "not an object": _frame([1, 2, 3]),
    "oversized key": _declared({"op": "put_key", "id": "k"}, 1 << 20),
    "oversized blob": _declared({"op": "put_blob", "name": "b"}, 0xFFFFFFFF),
    "truncated": _frame({"op": "put_key", "id": "k"}, KEY)[:-5],
    "unknown op": _frame({"op": "format-disk"}),
    "no op": _frame({"id": "k"}),
    "bad id": _frame({"op": "get_key", "id": 7}),
    "empty key": _frame({"op": "put_key", "id": "k"}),
    "bad expect": _frame({"op": "put_blob", "name": "b", "expect": "1"}, b"x"),
    "bad idle": _frame({"op": "put_key", "id": "k", "idle": -1}, KEY),
}


@pytest.mark.parametrize("frame", BAD_FRAMES.values(), ids=BAD_FRAMES.keys())
def test_bad_frames_do_not_kill_the_agent(agent: AgentClient, frame: bytes) -> None:
    agent.put_key("store", KEY)
    with _raw(agent.path) as sock:
        sock.sendall(frame)
        sock.shutdown(socket.SHUT_WR)
        reply = _reply(sock)
    assert reply is None or reply["ok"] is False
    assert agent.get_key("store") == KEY
    assert agent.status().key_ids == ("store",)


def test_a_silent_client_does_not_block_others(serve: Serve) -> None:
    _, client = serve()
    client.put_key("store", KEY)
    with _raw(client.path) as silent, _raw(client.path) as halfway:
        halfway.sendall(_frame({"op": "get_key", "id": "store"})[:6])
        # Served while the other two hang (a blocked agent would time the client out).
        assert client.get_key("store") == KEY
        assert silent.fileno() >= 0


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another uid")
def test_another_uid_is_turned_away(serve: Serve, sockdir: Path) -> None:
    _, client = serve()
    client.put_key("store", KEY)
    sockdir.chmod(0o755)
    client.path.chmod(0o666)  # only SO_PEERCRED stands between the socket and uid 65534
    frame = _frame({"op": "get_key", "id": "store"})
    read, write = os.pipe()
    if (pid := os.fork()) == 0:  # the child: become nobody, then connect and ask
        try:
            os.setgid(65534)
            os.setuid(65534)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(3)
                sock.connect(str(client.path))
                with contextlib.suppress(OSError):
                    sock.sendall(frame)
                    os.write(write, b"answer:" + sock.recv(4096))
                os.write(write, b"done")
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        seen = pipe.read()
    os.waitpid(pid, 0)
    assert seen in (b"answer:done", b"done"), seen  # connected, then got nothing at all
    assert client.get_key("store") == KEY


# --- a broken agent, seen from the client ---------------------------------------------------


def _fake_agent(path: Path, answer: Callable[[socket.socket], None]) -> threading.Thread:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def run() -> None:
        with listener:
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                answer(conn)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (lambda conn: conn.sendall(b"garbage that is no frame"), "garbage"),
        (lambda conn: conn.sendall(_frame({"ok": True, "found": True}, KEY)[:-8]), "mid-reply"),
        (lambda conn: None, "without answering"),
        (lambda conn: time.sleep(1.0), "did not answer"),
        (lambda conn: conn.sendall(_frame({"ok": False, "error": "odd"})), "refused"),
    ],
    ids=["garbage", "truncated", "closed", "silent", "error"],
)
def test_a_broken_agent_is_unavailable(
    sockdir: Path, answer: Callable[[socket.socket], None], message: str
) -> None:
    thread = _fake_agent(sockdir / "f.sock", answer)
    with pytest.raises(AgentUnavailable, match=message) as raised:
        AgentClient(sockdir / "f.sock", timeout=0.3).get_key("store")
    assert KEY.hex() not in str(raised.value)
    thread.join(5)


def test_no_socket_is_unavailable(sockdir: Path) -> None:
    client = AgentClient(sockdir / "none.sock")
    assert not client.running() and not client.lock()
    with pytest.raises(AgentUnavailable, match="no socket"):
        client.status()
