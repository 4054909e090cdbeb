"""§8.2 through the real CLI and the stdio MCP server, each in a subprocess of its own.

Every command runs as ``python -m memdir --project P …`` with MEMDIR_HOME, a private
XDG_RUNTIME_DIR (the unlock agent's socket) and a fresh TMPDIR per process; stdin is not a
terminal. After each test the password (and the recovery key where one was printed) must
not be found in any command's output, in any file under the home, the project, the runtime
dir or the TMPDIRs, nor in the command line or environment of the CLI or agent processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from faults.harness import KILLED, strace_problem
from mcp import Client, StdioServerParameters
from memdir import Memory
from memdir.crypto.agent import AgentClient, AgentUnavailable, socket_path, start_agent
from memdir.crypto.seal import is_sealed
from memdir.errors import EXIT_REFUSED, EXIT_USAGE, Locked, Refused, WrongPassword
from memdir.store.sealing import MARKER

from .conftest import SECRET_WORDS, plaintext_hits

PASSWORD = "tangerine-Xylo-8317-harbour"
NEW_PASSWORD = "pelican-Quartz-2046-meadow"
THIRD_PASSWORD = "obsidian-Lark-5190-orchard"
WRONG_PASSWORD = "walrus-Umber-6624-thimble"
PASSWORDS = (PASSWORD, NEW_PASSWORD, THIRD_PASSWORD, WRONG_PASSWORD)
RECOVERY = re.compile(r"MDRK(?:-[A-Z2-7]{4}){13}")
TIMEOUT = 120
NO_EMBEDDER = '[embed]\nprovider = "none"\n'
LOCKED_WORDS = ("locked", "memdir unlock")
QUOKKA, MARMALADE, ZANZIBAR, FJORD = SECRET_WORDS


@dataclass
class Session:
    """A project, a home, a runtime dir and the processes run on them (their output kept)."""

    root: Path
    project: Path
    home: Path
    runtime: Path
    tmp: Path
    secrets: Path
    outputs: list[str] = field(default_factory=list)
    #: Values that must be found in no output and no file (the passwords).
    hidden: set[str] = field(default_factory=lambda: set(PASSWORDS))
    #: Recovery keys printed: each in the one output that showed it, and in no file.
    recovery: set[str] = field(default_factory=set)

    @property
    def socket(self) -> Path:
        return socket_path(self.home, {"XDG_RUNTIME_DIR": str(self.runtime)})

    def secret_file(self, name: str, value: str) -> Path:
        path = self.secrets / name
        path.write_text(value + "\n", encoding="utf-8")
        return path

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("MEMDIR_") and k not in ("EDITOR", "VISUAL")
        }
        env.update(
            MEMDIR_HOME=str(self.home),
            XDG_RUNTIME_DIR=str(self.runtime),
            TMPDIR=tempfile.mkdtemp(prefix="t-", dir=self.tmp),
            COLUMNS="250",
            PYTHONDONTWRITEBYTECODE="1",
        )
        env.update(extra)
        return env

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "memdir", "--project", str(self.project), *args]

    def run(
        self, *args: str, input: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            self.argv(*args),
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env or self.env(),
            timeout=TIMEOUT,
        )
        self.outputs.append(proc.stdout + proc.stderr)
        return proc

    def ok(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        proc = self.run(*args, input=input)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    def json(self, *args: str, input: str | None = None) -> Any:
        return json.loads(self.ok(*args, "--json", input=input).stdout)

    def encrypt(self) -> str:
        """Encrypt with PASSWORD (from a file); the recovery key."""
        doc = self.json("encrypt", "--password-file", str(self.secret_file("pw", PASSWORD)))
        key: str = doc["recovery_key"]
        self.recovery.add(key)
        return key

    def unlock(self, password: str = PASSWORD) -> None:
        self.ok("unlock", "--password-stdin", input=password + "\n")

    def lock(self) -> None:
        self.ok("lock")

    def roots(self) -> tuple[Path, ...]:
        return (self.home, self.project, self.runtime, self.tmp)


@pytest.fixture
def session(tmp_path: Path, runtime: Path) -> Iterator[Session]:
    home, project, tmp, secrets = (tmp_path / n for n in ("home", "project", "tmp", "secrets"))
    for path in (home, project / ".git", tmp, secrets):
        path.mkdir(parents=True)
    (home / "config.toml").write_text(NO_EMBEDDER, encoding="utf-8")
    s = Session(tmp_path, project, home, runtime, tmp, secrets)
    yield s
    leaks = [(v, out[-300:]) for out in s.outputs for v in s.hidden if v in out]
    assert not leaks, f"a password in a command's output: {leaks}"
    shown = {k: sum(k in out for out in s.outputs) for k in s.recovery}
    assert all(n <= 1 for n in shown.values()), f"a recovery key shown again: {shown}"
    assert _files_holding(s.hidden | s.recovery, *s.roots()) == []


def _files_holding(values: set[str], *roots: Path) -> list[str]:
    needles = [v.encode() for v in values]
    found: list[str] = []
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                path = Path(dirpath) / name
                try:
                    data = path.read_bytes()
                except OSError:
                    continue
                found.extend(f"{path}: {n.decode()}" for n in needles if n in data)
    return found


def _seed_cli(s: Session) -> None:
    """Notes in both scopes with distinctive words in titles, bodies and tags (neutral ids:
    an id is a file name, readable by design), an edit and a forget."""
    s.ok(
        "remember",
        f"Deploy {QUOKKA} checklist",
        "--body",
        f"The {MARMALADE} protocol uses port 7431.",
        "--tags",
        f"{ZANZIBAR},deploy",
        "--id",
        "deploy",
    )
    s.ok(
        "remember",
        f"Deploy {QUOKKA} checklist",
        "--body",
        f"The {MARMALADE} protocol uses port 7432 since March.",
        "--tags",
        f"{ZANZIBAR},deploy",
        "--id",
        "deploy",
    )
    s.ok("remember", "Theme", "--body", f"Prefers {FJORD} colours.", "--scope", "user")
    s.ok("remember", f"Old {ZANZIBAR} plan", "--body", "dropped", "--id", "old-plan")
    s.ok("forget", "old-plan", "--yes")


def _notes(*dirs: Path) -> list[Path]:
    return [p for d in dirs if d.is_dir() for p in d.glob("*.md")]


def _note_dirs(s: Session) -> tuple[Path, Path]:
    return s.project / "MEMORY", s.home / "memory" / "user"


# -- encrypt, status, lock, unlock, passwd, decrypt ----------------------------------------


def test_encrypt_from_stdin_prints_the_recovery_key_once_and_status_tells(
    session: Session,
) -> None:
    s = session
    _seed_cli(s)
    out = s.ok("encrypt", "--password-stdin", input=PASSWORD + "\n").stdout
    keys = RECOVERY.findall(out)
    assert len(keys) == 1, out
    s.recovery.add(keys[0])
    assert "shown only now" in out and "encrypted project, user: 2 notes" in out
    assert all(is_sealed(p.read_bytes()) for p in _notes(*_note_dirs(s)))

    status = s.json("encrypt", "--status")
    assert status["keyring"] and status["unlocked"]
    assert {x["scope"]: x["state"] for x in status["scopes"]} == {
        "project": "encrypted",
        "user": "encrypted",
    }
    text = s.ok("encrypt", "--status").stdout
    assert "unlocked" in text and "encrypted" in text
    assert "locked" in s.ok("lock").stdout
    assert s.json("encrypt", "--status")["unlocked"] is False
    assert ": locked" in s.ok("encrypt", "--status").stdout
    assert "was not unlocked" in s.ok("lock").stdout
    s.unlock()
    assert MARMALADE in s.json("read", "deploy")["body"]


def test_encrypt_from_a_file_gives_the_recovery_key_in_json_only(session: Session) -> None:
    s = session
    _seed_cli(s)
    proc = s.ok("encrypt", "--password-file", str(s.secret_file("pw", PASSWORD)), "--json")
    doc = json.loads(proc.stdout)
    assert RECOVERY.fullmatch(doc["recovery_key"]), doc
    s.recovery.add(doc["recovery_key"])
    assert proc.stdout.count(doc["recovery_key"]) == 1 and doc["recovery_key"] not in proc.stderr
    assert (doc["notes"], doc["backups"]) == (2, 1) and doc["objects"] >= 4
    assert doc["plain"] == []  # no agent state store yet
    again = s.json("encrypt", "--password-file", str(s.secrets / "pw"))
    assert again["recovery_key"] is None and again["notes"] == 0


def test_encrypt_names_the_agent_state_store_it_leaves_plain(session: Session) -> None:
    s = session
    _seed_cli(s)
    s.ok("state", "task", "add", "Ship the heliotrope release")
    state = s.home / "state" / "state.sqlite3"
    doc = s.json("encrypt", "--password-file", str(s.secret_file("pw", PASSWORD)))
    s.recovery.add(doc["recovery_key"])
    assert doc["plain"] == [str(state)]
    text = s.ok("encrypt", "--password-file", str(s.secrets / "pw")).stdout
    assert f"not encrypted: {state}" in text and "What stays plain" in text
    # documented, not hidden: the title is still readable in the SQLite file
    assert b"heliotrope" in state.read_bytes() or any(
        b"heliotrope" in p.read_bytes() for p in state.parent.glob("state.sqlite3*")
    )


def test_unlock_with_the_recovery_key(session: Session) -> None:
    s = session
    _seed_cli(s)
    recovery = s.encrypt()
    s.lock()
    s.ok("unlock", "--recovery", "--password-stdin", input=recovery + "\n")
    assert MARMALADE in s.json("read", "deploy")["body"]
    s.lock()
    s.ok("unlock", "--recovery", "--password-file", str(s.secret_file("rk", recovery)))
    assert s.json("encrypt", "--status")["unlocked"] is True
    s.lock()
    wrong = "MDRK-" + "-".join(["AAAA"] * 13)
    proc = s.run("unlock", "--recovery", "--password-stdin", input=wrong + "\n")
    assert proc.returncode == EXIT_REFUSED and "recovery key does not open" in proc.stderr


def _locked_commands(s: Session) -> list[list[str]]:
    return [
        ["list"],
        ["read", "deploy"],
        ["search", MARMALADE],
        ["retrieve", MARMALADE],
        ["history", "deploy"],
        ["diff", "deploy"],
        ["links", "deploy"],
        ["remember", "While locked", "--body", "nothing", "--id", "while-locked"],
        ["forget", "deploy", "--yes"],
        ["index"],
        ["tidy"],
        ["doctor"],
        ["doctor", "--deep"],
        ["reindex"],
        ["supersede", "deploy", "--by", "theme"],
        ["export", str(s.root / "out.tar.gz")],
    ]


def test_every_note_command_on_a_locked_store_exits_4_and_names_unlock(
    session: Session,
) -> None:
    s = session
    _seed_cli(s)
    s.encrypt()
    backup = s.json("backups")[0]["id"]
    s.lock()
    commands = [*_locked_commands(s), ["backups", "restore", backup]]

    def one(args: list[str]) -> list[str]:
        problems = []
        proc = s.run(*args)
        if proc.returncode != EXIT_REFUSED or "Traceback" in proc.stderr:
            problems.append(f"{args}: exit {proc.returncode}: {proc.stderr[-400:]}")
        elif not all(w in proc.stderr for w in LOCKED_WORDS):
            problems.append(f"{args}: the message does not say locked / unlock: {proc.stderr}")
        proc = s.run(*args, "--json")
        if "No such option" in proc.stderr:
            return problems
        try:
            error = json.loads(proc.stdout)["error"]
        except (ValueError, KeyError):
            return [*problems, f"{args} --json: no error object: {proc.stdout}{proc.stderr}"]
        if (proc.returncode, error["type"], error["exitCode"]) != (4, "Locked", 4):
            problems.append(f"{args} --json: exit {proc.returncode}: {error}")
        elif "memdir unlock" not in error.get("hint", "") or "locked" not in error["message"]:
            problems.append(f"{args} --json: no unlock hint: {error}")
        return problems

    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for found in pool.map(one, commands) for p in found]
    assert problems == []
    assert issubclass(Locked, Refused)  # the JSON type is a `refused` kind of error
    assert not (s.project / "MEMORY" / "while-locked.md").exists()
    assert (s.project / "MEMORY" / "deploy.md").exists()
    assert not (s.root / "out.tar.gz").exists()


def test_backups_on_a_locked_store_lists_metadata_only(session: Session) -> None:
    s = session
    _seed_cli(s)
    s.encrypt()
    s.lock()
    proc = s.ok("backups")  # the sidecars are plain metadata by design (docs/encryption.md)
    assert "old-plan" in proc.stdout
    assert not any(w in proc.stdout.lower() for w in SECRET_WORDS)


def test_recall_on_a_locked_store_says_it_is_locked(session: Session) -> None:
    s = session
    _seed_cli(s)
    s.encrypt()
    s.lock()
    proc = s.run("recall", f"what about the {MARMALADE} protocol")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == EXIT_REFUSED
    assert all(w in proc.stderr for w in LOCKED_WORDS), proc.stderr


def test_a_wrong_password_exits_4_and_says_so(session: Session) -> None:
    s = session
    _seed_cli(s)
    s.encrypt()
    s.lock()
    proc = s.run("unlock", "--password-stdin", input=WRONG_PASSWORD + "\n")
    assert proc.returncode == EXIT_REFUSED
    assert "password does not open" in proc.stderr and "Traceback" not in proc.stderr
    wrong = s.secret_file("wrong", WRONG_PASSWORD)
    doc = json.loads(s.run("unlock", "--password-file", str(wrong), "--json").stdout)
    assert doc["error"]["type"] == "WrongPassword" and doc["error"]["exitCode"] == 4
    for args in (["encrypt"], ["decrypt"]):
        proc = s.run(*args, "--password-file", str(wrong))
        assert proc.returncode == EXIT_REFUSED and "password does not open" in proc.stderr
    assert all(is_sealed(p.read_bytes()) for p in _notes(*_note_dirs(s)))
    assert s.json("encrypt", "--status")["unlocked"] is False


def test_a_wrong_password_is_not_in_the_exception(session: Session) -> None:
    s = session
    _seed_cli(s)
    s.encrypt()
    s.lock()
    with Memory.open(s.project, home=s.home, embedder=None) as m:
        with pytest.raises(WrongPassword) as raised:
            m.crypto.unlock(WRONG_PASSWORD.encode())
        with pytest.raises(WrongPassword) as raised_old:
            m.crypto.passwd(b"x", old_password=WRONG_PASSWORD.encode())
    for info in (raised, raised_old):
        text = f"{info.value!s} {info.value!r} {info.getrepr(style='long')}"
        assert WRONG_PASSWORD not in text
        assert all(WRONG_PASSWORD.encode() != a for a in info.value.args)


def test_passwd_from_stdin_two_lines_and_from_files(session: Session) -> None:
    s = session
    _seed_cli(s)
    recovery = s.encrypt()
    note = s.project / "MEMORY" / "deploy.md"
    before = note.read_bytes()
    s.ok("passwd", "--password-stdin", input=f"{PASSWORD}\n{NEW_PASSWORD}\n")
    assert note.read_bytes() == before
    s.lock()
    assert s.run("unlock", "--password-stdin", input=PASSWORD + "\n").returncode == 4
    s.unlock(NEW_PASSWORD)
    proc = s.run("passwd", "--password-stdin", input=NEW_PASSWORD + "\n")
    assert proc.returncode == EXIT_USAGE and "no password on line 2" in proc.stderr

    old, new = s.secret_file("old", NEW_PASSWORD), s.secret_file("new", THIRD_PASSWORD)
    doc = s.json("passwd", "--password-file", str(old), "--new-password-file", str(new))
    assert doc == {"changed": True}
    s.lock()
    s.ok("unlock", "--password-file", str(new))
    s.ok("passwd", "--recovery", "--password-stdin", input=f"{recovery}\n{PASSWORD}\n")
    s.lock()
    s.unlock(PASSWORD)
    assert MARMALADE in s.json("read", "deploy")["body"]


def test_decrypt_gives_back_plain_files(session: Session) -> None:
    s = session
    _seed_cli(s)
    plain = {p.name: p.read_bytes() for p in _notes(*_note_dirs(s))}
    s.encrypt()
    s.lock()
    doc = s.json("decrypt", "--password-file", str(s.secrets / "pw"))
    assert (doc["notes"], doc["backups"]) == (2, 1)
    assert {p.name: p.read_bytes() for p in _notes(*_note_dirs(s))} == plain
    stored = _notes(s.home / "memory-backups") + list((s.home / "memory-history").rglob("*.md"))
    assert stored and not any(is_sealed(p.read_bytes()) for p in stored)
    assert not (s.project / "MEMORY" / MARKER).exists()
    assert s.json("encrypt", "--status")["scopes"][0]["state"] == "plain"
    s.lock()
    assert [h["note_id"] for h in s.json("search", MARMALADE)] == ["deploy"]
    assert s.ok("doctor", "--deep").returncode == 0


# -- where passwords may never be -----------------------------------------------------------


@pytest.mark.parametrize("command", ["encrypt", "decrypt", "passwd", "unlock"])
def test_there_is_no_password_option(session: Session, command: str) -> None:
    for form in (["--password", PASSWORD], [f"--password={PASSWORD}"]):
        proc = session.run(command, *form)
        assert proc.returncode == EXIT_USAGE
        assert "No such option" in proc.stderr
    assert not (session.home / "crypto").exists()


@pytest.mark.parametrize("command", ["encrypt", "unlock", "decrypt", "passwd"])
def test_a_password_in_the_environment_is_ignored(session: Session, command: str) -> None:
    s = session
    if command != "encrypt":
        _seed_cli(s)
        s.encrypt()
        s.lock()
    names = ("MEMDIR_PASSWORD", "MEMDIR_PASSPHRASE", "MEMDIR_ENCRYPTION_PASSWORD", "PASSWORD")
    env = s.env(**dict.fromkeys(names, PASSWORD))
    started = time.monotonic()
    proc = subprocess.Popen(
        s.argv(command),
        stdin=subprocess.PIPE,  # a pipe kept open: not a terminal, and never at EOF
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    s.outputs.append(out + err)
    assert proc.returncode == EXIT_USAGE, (out, err, time.monotonic() - started)
    assert "no password given" in err and "--password-file" in err and "--password-stdin" in err
    if command == "encrypt":
        assert not (s.home / "crypto" / "keyring.json").exists()
    else:
        assert s.json("encrypt", "--status")["unlocked"] is False


def _proc_text(pid: int, name: str) -> str | None:
    try:
        return (Path("/proc") / str(pid) / name).read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return None


def _ps() -> str:
    found = shutil.which("ps")
    if found is None:
        return ""
    return subprocess.run([found, "-eww", "-o", "args"], capture_output=True, text=True).stdout


def test_the_password_is_never_on_a_command_line_or_in_an_environment(
    session: Session,
) -> None:
    s = session
    _seed_cli(s)
    pw = s.secret_file("pw", PASSWORD)
    seen: list[str] = []
    # The CLI process, watched while it runs (stretching the password takes a while).
    for args, stdin in (
        (["encrypt", "--password-stdin"], PASSWORD + "\n"),
        (["lock"], None),
        (["unlock", "--password-stdin"], PASSWORD + "\n"),
        (["passwd", "--password-stdin"], f"{PASSWORD}\n{NEW_PASSWORD}\n"),
        (["passwd", "--password-file", str(pw), "--new-password-file", str(pw)], None),
        (["unlock", "--password-stdin"], WRONG_PASSWORD + "\n"),
    ):
        proc = subprocess.Popen(
            s.argv(*args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=s.env(),
        )
        holder: dict[str, str] = {}

        def talk(
            p: subprocess.Popen[str] = proc, data: str | None = stdin, got: dict[str, str] = holder
        ) -> None:
            got["out"], got["err"] = p.communicate(data, timeout=TIMEOUT)

        talker = threading.Thread(target=talk)
        talker.start()
        while talker.is_alive():
            for name in ("cmdline", "environ"):
                text = _proc_text(proc.pid, name)
                if text:
                    seen.append(f"cli {args[0]} {name}: {text}")
            seen.append(_ps())
            time.sleep(0.005)
        talker.join()
        s.outputs.append(holder["out"] + holder["err"])
        if args[0] == "encrypt":
            s.recovery.update(RECOVERY.findall(holder["out"]))
    s.unlock(NEW_PASSWORD)
    agent = AgentClient(s.socket).status().pid
    cmdline = _proc_text(agent, "cmdline")
    assert cmdline is not None and "memdir.crypto.agent" in cmdline, cmdline
    # Its environ is unreadable to other processes but root (it is not dumpable): fine too.
    seen.extend(f"agent {name}: {_proc_text(agent, name)}" for name in ("cmdline", "environ"))
    seen.append(_ps())
    leaks = [line[:300] for line in seen for v in s.hidden if v in line]
    assert leaks == []


def test_an_agent_started_from_an_environment_holding_a_password_does_not_inherit_it(
    session: Session,
) -> None:
    s = session
    _seed_cli(s)
    s.encrypt()
    s.lock()
    env = s.env(MEMDIR_PASSWORD=PASSWORD, SOME_TOKEN=PASSWORD)
    proc = subprocess.run(
        s.argv("unlock", "--password-file", str(s.secrets / "pw")),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr
    s.outputs.append(proc.stdout + proc.stderr)
    agent = AgentClient(s.socket).status().pid
    environ = _proc_text(agent, "environ")
    if environ is None:
        pytest.skip("the agent's /proc environ is unreadable here (not root)")
    assert PASSWORD not in environ and "MEMDIR_PASSWORD" not in environ


def test_export_of_an_encrypted_store_writes_plain_notes(session: Session) -> None:
    """Documented behaviour (docs/encryption.md: exports are copies the user makes): an
    unlocked encrypted store exports readable Markdown, with no prompt or warning."""
    s = session
    _seed_cli(s)
    s.encrypt()
    out = s.root / "export.tar.gz"
    proc = s.ok("export", str(out))
    assert "exported 2 notes" in proc.stdout
    with tarfile.open(out) as archive:
        texts = [
            archive.extractfile(m).read()  # type: ignore[union-attr]
            for m in archive.getmembers()
            if m.isfile()
        ]
    assert any(MARMALADE.encode() in t for t in texts)


# -- killed while encrypting ----------------------------------------------------------------

_STRACE_PROBLEM = strace_problem()
_STRACE_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}


def _seed_many(project: Path, home: Path) -> None:
    with Memory.open(project, home=home, embedder=None) as m:
        for i in range(60):
            m.remember(
                f"Note {i} {QUOKKA}",
                body=f"Body {i}: the {MARMALADE} figure is {i * 7}.",
                tags=(ZANZIBAR, f"t{i % 4}"),
                id=f"n{i:02d}",
                scope="user" if i % 5 == 0 else None,
            )
        for i in range(0, 60, 6):
            m.remember(f"Note {i} {QUOKKA}, edited", body=f"{FJORD} {i}", id=f"n{i:02d}")
        for i in (3, 13, 23, 33):
            m.forget(f"n{i:02d}")


@dataclass(frozen=True)
class _Content:
    notes: dict[str, tuple[str, str, tuple[str, ...]]]
    history: dict[str, int]
    backups: frozenset[str]


def _content(project: Path, home: Path) -> _Content:
    with Memory.open(project, home=home, embedder=None) as m:
        notes = {}
        history = {}
        for listed in m.notes.list():
            note = m.read(listed.id)
            notes[note.id] = (note.summary, note.body, tuple(note.tags))
            history[note.id] = len(m.notes.history(note.id))
        return _Content(notes, history, frozenset(b.id for b in m.backups()))


def _renames(trace: Path) -> list[tuple[str, str]]:
    """The traced command's renames: (the syscall's name, the destination path)."""
    out = []
    for line in trace.read_text(errors="replace").splitlines():
        call = re.match(r"^\d+ +(rename\w*)\(", line)
        paths = re.findall(r'"([^"]+)"', line)
        if call and paths:
            out.append((call.group(1), paths[-1]))
    return out


def _targets(renames: list[tuple[str, str]]) -> list[int]:
    """First, last, the scopes' markers and the first history object and backup of each
    scope, and a few spread between."""
    n = len(renames)
    chosen = {1, 2, 3, n // 4, n // 2, (3 * n) // 4, n - 1, n}
    chosen.update(i for i, (_, path) in enumerate(renames, 1) if path.endswith(MARKER))
    for kind in ("memory-history", "memory-backups", "/user/n", "/user/objects"):
        first = next((i for i, (_, path) in enumerate(renames, 1) if kind in path), None)
        if first is not None:
            chosen.add(first)
    return sorted(i for i in chosen if 1 <= i <= n)


def _all_sealed(project: Path, home: Path) -> list[str]:
    files = [
        *_notes(project / "MEMORY", home / "memory" / "user"),
        *_notes(home / "memory-backups"),
        *(home / "memory-history").rglob("objects/*/*.md"),
    ]
    assert len(files) > 60
    return [str(p) for p in files if not is_sealed(p.read_bytes())]


def _lock_agent(sock: Path) -> None:
    with contextlib.suppress(AgentUnavailable):
        AgentClient(sock).lock()
    for _ in range(200):
        if not AgentClient(sock).running():
            return
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.skipif(_STRACE_PROBLEM is not None, reason=f"no strace: {_STRACE_PROBLEM}")
def test_killed_while_encrypting_leaves_whole_files_and_a_rerun_finishes(
    session: Session,
) -> None:
    s = session
    pw = str(s.secret_file("pw", PASSWORD))
    # The kill points are independent: they are shared out among workers, each with a
    # store of its own (a store's backups name its project's path, so a copy cannot move)
    # seeded the same way, its own counting run and the same rule choosing the kill points
    # among its renames. Worker 0 is the session itself; the others share its runtime dir
    # (an agent per home), outputs and recovery keys, so its checks of the outputs cover
    # every run, and their files get its check for passwords and recovery keys below.
    workers = [s, *(_worker_session(s, k) for k in range(1, _KILL_WORKERS))]
    with ThreadPoolExecutor(max_workers=_KILL_WORKERS) as pool:
        done = list(
            pool.map(lambda k: _kill_while_encrypting(workers[k], pw, k), range(_KILL_WORKERS))
        )
    # Every worker's store made the same renames, so the same kill points were chosen in
    # each and the shares add up to the whole selection.
    chosen = {tuple((i, renames[i - 1][0]) for i in _targets(renames)) for renames, _ in done}
    assert len(chosen) == 1, chosen
    assert [p for _, problems in done for p in problems] == []
    assert _files_holding(s.hidden | s.recovery, *(r for w in workers[1:] for r in w.roots())) == []


#: Workers running kill points at once: a traced command spends much of its run stopped
#: while strace handles its calls, so one worker more than the two cores keeps them busy.
_KILL_WORKERS = 3


def _worker_session(s: Session, k: int) -> Session:
    """A session of its own for worker `k`, beside `s`'s dirs (a plaintext check in one
    session must not see another's store), that shares `s`'s runtime dir, secrets,
    outputs, hidden values and recovery keys."""
    root = s.root / f"w{k}"
    w = Session(
        root,
        root / "project",
        root / "home",
        s.runtime,
        root / "tmp",
        s.secrets,
        outputs=s.outputs,
        hidden=s.hidden,
        recovery=s.recovery,
    )
    for path in (w.home, w.project / ".git", w.tmp):
        path.mkdir(parents=True)
    (w.home / "config.toml").write_text(NO_EMBEDDER, encoding="utf-8")
    return w


def _kill_while_encrypting(s: Session, pw: str, k: int) -> tuple[list[tuple[str, str]], list[str]]:
    """Seed `s`, count the renames of an `encrypt`, then run share `k` of the kill points
    (every `_KILL_WORKERS`th of them), each on a fresh copy; the renames and problems."""
    _seed_many(s.project, s.home)
    original = _content(s.project, s.home)
    assert len(original.notes) == 56 and len(original.backups) == 4
    pristine = s.root / "pristine"
    for what in ("home", "project"):
        shutil.copytree(s.root / what, pristine / what, symlinks=True)
    encrypt = s.argv("encrypt", "--password-file", pw)
    trace = s.root / "trace"

    def fresh() -> None:
        _lock_agent(s.socket)
        for what in ("home", "project"):
            shutil.rmtree(s.root / what)
            shutil.copytree(pristine / what, s.root / what, symlinks=True)
        # Started here, not by the traced command: strace -f would wait for the agent.
        start_agent(s.socket, idle_seconds=600)

    def traced(*extra: str) -> subprocess.CompletedProcess[str]:
        argv = ["strace", "-f", "-qq", "-o", str(trace), *extra, *encrypt]
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=s.env(**_STRACE_ENV),
            timeout=TIMEOUT,
        )
        s.outputs.append(proc.stdout + proc.stderr)
        return proc

    fresh()
    counted = traced("-e", "trace=rename,renameat,renameat2")
    assert counted.returncode == 0, counted.stderr
    renames = _renames(trace)
    assert len(renames) > 100 and "keyring" in renames[0][1], renames[:3]
    for line in RECOVERY.findall(counted.stdout):
        s.recovery.add(line)
    problems: list[str] = []
    for when in _targets(renames)[k::_KILL_WORKERS]:
        call, path = renames[when - 1]
        label = f"kill at {call} #{when} ({Path(path).name})"
        fresh()
        proc = traced("-e", f"trace={call}", "-e", f"inject={call}:signal=SIGKILL:when={when}")
        s.recovery.update(RECOVERY.findall(proc.stdout))
        if proc.returncode not in KILLED:
            problems.append(f"{label}: not killed (exit {proc.returncode}): {proc.stderr[-300:]}")
            continue
        problems.extend(f"{label}: {p}" for p in _after_kill(s, original, pw))
    _lock_agent(s.socket)
    return renames, problems


def _after_kill(s: Session, original: _Content, pw: str) -> list[str]:
    problems: list[str] = []
    for path in _notes(*_note_dirs(s)):
        data = path.read_bytes()
        if not (is_sealed(data) or data.startswith(b"---\n")):
            problems.append(f"{path.name} is neither sealed nor a plain note: {data[:40]!r}")
    keyring = (s.home / "crypto" / "keyring.json").exists()
    _lock_agent(s.socket)
    if keyring:
        s.ok("unlock", "--password-file", pw)
    try:
        if _content(s.project, s.home) != original:
            problems.append("the killed store does not read as the original")
    except Exception as exc:  # a failure here is what the test is for: report it
        problems.append(f"the killed store does not read: {type(exc).__name__}: {exc}")
    proc = s.run("encrypt", "--password-file", pw, "--json")
    if proc.returncode != 0:
        return [*problems, f"the rerun failed (exit {proc.returncode}): {proc.stderr[-300:]}"]
    key = json.loads(proc.stdout)["recovery_key"]
    if key is not None:
        s.recovery.add(key)
    if (key is None) != keyring:
        problems.append(f"the rerun's recovery key {'(none)' if key is None else '(new)'}")
    unsealed = _all_sealed(s.project, s.home)
    if unsealed:
        problems.append(f"left unsealed after the rerun: {unsealed[:5]}")
    doctor = s.run("doctor", "--deep", "--json")
    if doctor.returncode != 0:
        problems.append(f"doctor --deep after the rerun: {doctor.stdout[-400:]}")
    if _content(s.project, s.home) != original:
        problems.append("the store after the rerun does not read as the original")
    hits = plaintext_hits(*s.roots())
    if hits:
        problems.append(f"plaintext left after the rerun: {hits}")
    return problems


# -- a whole session, and the MCP server ----------------------------------------------------


def _mcp_params(s: Session, errlog: Path) -> StdioServerParameters:
    env = s.env(ERRLOG=str(errlog))
    return StdioServerParameters(
        command="/bin/sh",
        args=["-c", 'exec "$0" "$@" 2>>"$ERRLOG"', *s.argv("mcp", "serve")],
        env={k: env[k] for k in ("MEMDIR_HOME", "XDG_RUNTIME_DIR", "TMPDIR", "ERRLOG", "PATH")},
    )


async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    return bool(result.is_error), (text if result.is_error else result.structured_content)


def test_a_full_session_leaves_no_plaintext(session: Session) -> None:
    s = session
    (s.home / "config.toml").unlink()  # the default embedder: vectors in the agent too
    _seed_cli(s)
    s.encrypt()
    doc = s.json("remember", "Gateway", "--body", f"The {QUOKKA} gateway sits behind {FJORD}.")
    gateway = doc["note"]["id"]
    s.ok("remember", f"Temp {FJORD} note", "--body", MARMALADE, "--tags", QUOKKA, "--id", "temp")
    assert {n["id"] for n in s.json("list")} >= {"deploy", gateway, "temp"}
    s.ok("list")
    assert {h["note_id"] for h in s.json("search", MARMALADE)} >= {"deploy", "temp"}
    s.ok("search", QUOKKA)
    assert MARMALADE in s.json("read", "deploy")["body"]
    s.ok("read", "deploy")
    assert len(s.json("history", "deploy")) == 2
    assert "7431" in s.ok("diff", "deploy").stdout
    s.ok("recall", f"how does the {MARMALADE} protocol deploy")
    s.ok("retrieve", ZANZIBAR)
    s.ok("index")
    s.ok("forget", "temp", "--yes")
    backup = next(b["id"] for b in s.json("backups") if b["note_id"] == "temp")
    s.ok("backups")
    s.ok("backups", "restore", backup)
    s.ok("tidy")
    s.ok("doctor", "--deep")
    s.ok("reindex")
    errlog = s.root / "mcp.err"

    async def mcp_session() -> None:
        async with Client(_mcp_params(s, errlog)) as client:
            err, out = await _call(client, "memory_search", {"query": MARMALADE})
            assert not err and out["hits"], out
            err, out = await _call(
                client,
                "memory_write",
                {"summary": "Staging rollout", "body": f"Use {ZANZIBAR}.", "tags": [FJORD]},
            )
            assert not err, out
            err, out = await _call(client, "memory_search", {"query": ZANZIBAR})
            assert not err and out["hits"], out

    anyio.run(mcp_session)
    assert "Traceback" not in errlog.read_text(), errlog.read_text()
    s.lock()
    assert all(is_sealed(p.read_bytes()) for p in _notes(*_note_dirs(s)))
    assert plaintext_hits(*s.roots()) == []


def test_the_mcp_server_on_a_locked_store_says_so_and_works_after_unlock(
    session: Session,
) -> None:
    s = session
    _seed_cli(s)
    s.encrypt()
    s.lock()
    errlog = s.root / "mcp.err"

    async def locked(client: Client) -> None:
        # A process keeps a fetched key up to 2 s (docs/encryption.md): a lock reaches a
        # running server within that, so wait for it (generously) before the checks.
        deadline = time.monotonic() + 60
        while not (await _call(client, "memory_read", {"id": "deploy"}))[0]:
            assert time.monotonic() < deadline, "the server still reads notes after a lock"
            await anyio.sleep(0.2)
        for name, args in (
            ("memory_search", {"query": MARMALADE}),
            ("memory_read", {"id": "deploy"}),
            ("memory_write", {"summary": "While locked", "body": "x"}),
            ("memory_history", {"id": "deploy"}),
        ):
            err, text = await _call(client, name, args)
            assert err, (name, text)
            assert text.startswith("refused:") and "locked" in text, text
            assert "ask the user" in text and "`memdir unlock`" in text, text
            assert "Traceback" not in text

    async def unlocked(client: Client) -> None:
        err, out = await _call(client, "memory_search", {"query": MARMALADE})
        assert not err and [h["id"] for h in out["hits"]] == ["deploy"], out
        err, out = await _call(client, "memory_read", {"id": "deploy"})
        assert not err and MARMALADE in out["body"]

    async def main() -> None:
        async with Client(_mcp_params(s, errlog)) as client:
            await locked(client)
            await anyio.to_thread.run_sync(s.unlock)
            await unlocked(client)
            await anyio.to_thread.run_sync(s.lock)
            await locked(client)
            await anyio.to_thread.run_sync(s.unlock)
            await unlocked(client)

    anyio.run(main)
    assert "Traceback" not in errlog.read_text(), errlog.read_text()
    assert not (s.project / "MEMORY" / "while-locked.md").exists()


def _gone(pid: int) -> bool:
    status = _proc_text(pid, "status")
    # A zombie nobody reaps (PID 1 in a container may not) has ended all the same.
    return status is None or re.search(r"^State:\s+Z", status, re.MULTILINE) is not None


def _wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        time.sleep(0.05)
    return False


def test_the_agent_ends_with_lock_and_after_the_idle_limit(session: Session) -> None:
    s = session
    _seed_cli(s)
    s.encrypt()
    pid = AgentClient(s.socket).status().pid
    s.lock()
    assert _wait_gone(pid), "the agent still runs after `memdir lock`"
    assert not s.socket.exists()
    status = s.json("unlock", "--password-file", str(s.secrets / "pw"), "--idle", "1")
    assert status["unlocked"] and status["idle_left"] <= 1
    pid = AgentClient(s.socket).status().pid
    assert _wait_gone(pid), "the agent still runs after its idle limit"
    proc = s.run("read", "deploy")
    assert proc.returncode == EXIT_REFUSED and "memdir unlock" in proc.stderr
