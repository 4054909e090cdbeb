"""`memdir sync …` on the command line against a real server (§5 CLI, §7).

Machines are driven through the CLI in-process (click's runner) with their own
`--home` and `--project`; a second machine, where one is needed, uses the Python API.
The directory backend is enough here: the storage is covered by the other modules.
"""

from __future__ import annotations

import json
import os
import pty
import select
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memdir.cli.main import main
from memdir.sync.protocol import rev_of
from sync_server import MEMDIR_COMMAND

from .conftest import Machine, World

pytestmark = pytest.mark.parametrize("backend", ["dir"])

WRONG_TOKEN = "x" * 43


def memdir(
    machine: Machine, *args: str, input: str | None = None, env: dict[str, str | None] | None = None
) -> Result:
    """`memdir --project P --home H ARGS…` for one machine; stdout and stderr kept apart."""
    return CliRunner().invoke(
        main,
        ["--project", str(machine.project), "--home", str(machine.home), *args],
        input=input,
        env={"COLUMNS": "250", "MEMDIR_SYNC_TOKEN": None, "EDITOR": None, **(env or {})},
        catch_exceptions=False,
    )


def token_file(world: World, token: str, name: str = "token") -> Path:
    path = world.root / name
    path.write_text(token + "\n")
    path.chmod(0o600)
    return path


def login(world: World, machine: Machine) -> Result:
    path = token_file(world, world.token)
    result = memdir(
        machine, "sync", "login", "--server", world.server.url, "--token-file", str(path)
    )
    assert result.exit_code == 0, result.output + result.stderr
    return result


def output(result: Result) -> str:
    return result.stdout + result.stderr


# -- signing in --------------------------------------------------------------------------


def test_login_with_a_token_file_stores_it_private_and_never_shows_it(world: World) -> None:
    a = world.machine("a", signed_in=False)
    token = world.token
    result = login(world, a)
    assert f"signed in as {world.user} at {world.server.url}" in result.stdout
    assert token not in output(result)
    credentials = a.home / "memory-sync" / "credentials.json"
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert stat.S_IMODE(credentials.parent.stat().st_mode) == 0o700
    assert json.loads(credentials.read_text())["token"] == token

    status = memdir(a, "sync", "status", "--json")
    assert status.exit_code == 0
    doc = json.loads(status.stdout)
    assert doc["enabled"] is True and doc["user"] == world.user
    assert doc["server"] == world.server.url
    assert {s["scope"] for s in doc["scopes"]} == {"project", "user"}
    assert token not in status.stdout

    human = memdir(a, "sync", "status")
    assert human.exit_code == 0
    assert f"syncing as {world.user} at {world.server.url}" in human.stdout
    assert token not in human.stdout

    again = memdir(
        a, "sync", "login", "--server", world.server.url, "--token-file",
        str(token_file(world, token, "t2")), "--json",
    )  # fmt: skip
    assert again.exit_code == 0 and json.loads(again.stdout)["user"] == world.user
    assert token not in output(again)

    out = memdir(a, "sync", "logout")
    assert out.exit_code == 0 and "signed out" in out.stdout
    assert not credentials.exists()
    status = memdir(a, "sync", "status")
    assert "not signed in" in status.stdout
    refused = memdir(a, "sync")
    assert refused.exit_code == 4 and "not signed in" in refused.stderr


def test_login_with_the_token_in_the_environment(world: World) -> None:
    a = world.machine("a", signed_in=False)
    token = world.token
    result = memdir(
        a, "sync", "login", "--server", world.server.url, env={"MEMDIR_SYNC_TOKEN": token}
    )
    assert result.exit_code == 0, output(result)
    assert f"signed in as {world.user}" in result.stdout and token not in output(result)
    assert a.memory.sync.status().user == world.user


def test_login_prompts_for_the_token_without_echo_on_a_terminal(world: World) -> None:
    a = world.machine("a", signed_in=False)
    token = world.token
    command = [
        *MEMDIR_COMMAND,
        "--project", str(a.project), "--home", str(a.home),
        "sync", "login", "--server", world.server.url,
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "MEMDIR_SYNC_TOKEN"}
    master, slave = pty.openpty()
    process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    seen = b""

    def read_until(done: bytes | None, timeout: float = 60) -> None:
        nonlocal seen
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and (done is None or done not in seen):
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the child closed the terminal
                    return
                if not chunk:
                    return
                seen += chunk
            elif done is None and process.poll() is not None:
                return

    try:
        read_until(b"sync token")
        assert b"sync token" in seen, seen
        os.write(master, token.encode() + b"\n")
        process.wait(timeout=60)
        read_until(None, timeout=2)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    assert process.returncode == 0, seen
    assert f"signed in as {world.user}".encode() in seen
    assert token.encode() not in seen  # typed without echo, never printed
    assert a.memory.sync.status().user == world.user


def test_login_with_the_token_piped_on_stdin(world: World) -> None:
    a = world.machine("a", signed_in=False)
    token = world.token
    result = memdir(
        a, "sync", "login", "--server", world.server.url, "--token-file", "-", input=token + "\n"
    )
    assert result.exit_code == 0, output(result)
    assert token not in output(result)


def test_a_wrong_token_is_refused_with_exit_4_and_nothing_is_stored(world: World) -> None:
    a = world.machine("a", signed_in=False)
    path = token_file(world, WRONG_TOKEN)
    result = memdir(a, "sync", "login", "--server", world.server.url, "--token-file", str(path))
    assert result.exit_code == 4
    assert "did not accept the token" in result.stderr
    assert WRONG_TOKEN not in output(result)
    assert not (a.home / "memory-sync" / "credentials.json").exists()
    as_json = memdir(
        a, "sync", "login", "--server", world.server.url, "--token-file", str(path), "--json"
    )
    assert as_json.exit_code == 4
    error = json.loads(as_json.stdout)["error"]
    assert error["exitCode"] == 4 and error["type"] == "SyncRefused"
    assert WRONG_TOKEN not in as_json.stdout
    # a server that is not there: exit 8
    down = memdir(a, "sync", "login", "--server", "http://127.0.0.1:9", "--token-file", str(path))
    assert down.exit_code == 8 and "cannot reach" in down.stderr


# -- passes ------------------------------------------------------------------------------


def test_sync_prints_what_moved_and_json_for_scripts(world: World) -> None:
    a = world.machine("a", signed_in=False)
    b = world.machine("b")
    login(world, a)
    p = a.note("Project note", "p")
    u = a.note("User note", "u", scope="user")
    result = memdir(a, "sync")
    assert result.exit_code == 0, output(result)
    assert "project: 1 uploaded" in result.stdout and "user: 1 uploaded" in result.stdout
    again = memdir(a, "sync")
    assert again.exit_code == 0
    assert "project: up to date" in again.stdout and "user: up to date" in again.stdout

    b.sync()
    b.set_line(p, 0, "p edited on b")
    b.sync()
    as_json = memdir(a, "sync", "--json")
    assert as_json.exit_code == 0
    doc = json.loads(as_json.stdout)
    reports = {r["scope"]: r for r in doc["reports"]}
    assert reports["project"]["pulled"] == [p] and reports["user"]["unchanged"] is True
    assert doc["paused"] == {}
    assert reports["project"]["requests"] >= 1

    only_user = json.loads(memdir(a, "sync", "--scope", "user", "--json").stdout)
    assert [r["scope"] for r in only_user["reports"]] == ["user"]
    assert u in b.files("user")


def test_switch_off_and_on_and_paused_scopes(world: World) -> None:
    a = world.machine("a", signed_in=False)
    login(world, a)
    a.note("Project note", "p")
    off = memdir(a, "sync", "off")
    assert off.exit_code == 0 and "sync is off" in off.stdout
    refused = memdir(a, "sync")
    assert refused.exit_code == 4 and "sync is off" in refused.stderr
    status = json.loads(memdir(a, "sync", "status", "--json").stdout)
    assert status["enabled"] is False
    assert "sync is off" in memdir(a, "sync", "status").stdout
    on = memdir(a, "sync", "on", "--json")
    assert on.exit_code == 0 and json.loads(on.stdout)["enabled"] is True
    assert memdir(a, "sync").exit_code == 0

    # signed in as another account, the scopes pause and say why
    bob = token_file(world, world.add_user("bob")[1], "bob")
    assert (
        memdir(a, "sync", "login", "--server", world.server.url, "--token-file", str(bob)).exit_code
        == 0
    )
    paused = memdir(a, "sync")
    assert "project: paused" in paused.stdout and "alice" in paused.stdout
    assert paused.exit_code == 4  # nothing synced for a paused scope: a script must notice
    status = memdir(a, "sync", "status")
    assert "paused:" in status.stdout
    scopes = json.loads(memdir(a, "sync", "status", "--json").stdout)["scopes"]
    assert all(f"{world.user} at {world.server.url}" in s["paused"] for s in scopes)


@pytest.mark.own_server
def test_exit_8_when_the_server_is_down(world: World) -> None:
    a = world.machine("a", signed_in=False)
    login(world, a)
    a.note("Project note", "p")
    world.server.stop()
    before = a.all_files()
    result = memdir(a, "sync")
    assert result.exit_code == 8
    assert "cannot reach the sync server" in result.stderr and "no note is lost" in result.stderr
    as_json = memdir(a, "sync", "--json")
    assert as_json.exit_code == 8
    assert json.loads(as_json.stdout)["error"]["exitCode"] == 8
    assert a.all_files() == before
    world.server.start()
    assert memdir(a, "sync").exit_code == 0


# -- conflicts ---------------------------------------------------------------------------


EDITOR_SCRIPT = """
import sys
path = sys.argv[-1]  # click runs `$EDITOR FILE`
mode = sys.argv[1] if len(sys.argv) > 2 else "merge"
text = open(path, encoding="utf-8").read()
if mode == "merge":
    out, inside = [], False
    for line in text.split("\\n"):
        if line.startswith("<<<<<<< "):
            inside = True
            out.append("Postgres 16, SQLite in tests")
        elif line.startswith(">>>>>>> "):
            inside = False
        elif not inside:
            out.append(line)
    text = "\\n".join(out)
open(path, "w", encoding="utf-8").write(text)
"""


def test_conflicts_exit_5_and_every_resolution_from_the_cli(world: World) -> None:
    a = world.machine("a")
    b = world.machine("b", signed_in=False)
    login(world, b)
    ids = [a.note(f"Database choice {i}", "We use:\nPostgres 15\nfor everything") for i in range(4)]
    a.sync()
    assert memdir(b, "sync").exit_code == 0
    versions = {}
    for nid in ids:
        a.set_line(nid, 1, "Postgres 16")
        versions[nid] = (a.files("project")[nid], b.set_line(nid, 1, "SQLite"))
    a.sync()

    result = memdir(b, "sync")
    assert result.exit_code == 5, output(result)
    assert "4 conflicts" in result.stdout and "memdir sync conflicts" in result.stdout
    assert memdir(b, "sync", "--json").exit_code == 5

    human = memdir(b, "sync", "conflicts")
    assert human.exit_code == 0
    for nid in ids:
        assert nid in human.stdout
    assert "-Postgres 15" in human.stdout and "+SQLite" in human.stdout
    assert "+Postgres 16" in human.stdout
    full = memdir(b, "sync", "conflicts", "--full")
    assert "--- baseline ---" in full.stdout and "--- server ---" in full.stdout
    views = json.loads(memdir(b, "sync", "conflicts", "--json").stdout)
    assert {v["id"] for v in views} == set(ids)
    for view in views:
        server_version, local_version = versions[view["id"]]
        assert view["server"] == server_version.decode()
        assert view["local"] == local_version.decode()
        assert "Postgres 15" in view["baseline"]
        assert view["reasons"]

    local, server, both, edit = ids
    kept = memdir(b, "sync", "resolve", local, "--keep", "local")
    assert kept.exit_code == 0, output(kept)
    assert "kept local" in kept.stdout and "set aside in backup" in kept.stdout
    kept = memdir(b, "sync", "resolve", server, "--keep", "server", "--json")
    assert kept.exit_code == 0 and json.loads(kept.stdout)["kept"] == "server"
    assert b.files("project")[server] == versions[server][0]
    kept = memdir(b, "sync", "resolve", both, "--keep", "both")
    assert kept.exit_code == 0 and "is now note" in kept.stdout

    script = world.root / "editor.py"
    script.write_text(EDITOR_SCRIPT)
    unchanged = memdir(
        b, "sync", "resolve", edit, "--edit", env={"EDITOR": f"{sys.executable} {script} keep"}
    )
    assert unchanged.exit_code == 2 and "marker" in unchanged.stderr
    assert b.files("project")[edit] == versions[edit][1]
    edited = memdir(
        b, "sync", "resolve", edit, "--edit", env={"EDITOR": f"{sys.executable} {script}"}
    )
    assert edited.exit_code == 0, output(edited)
    assert "kept edited" in edited.stdout
    assert "Postgres 16, SQLite in tests" in b.read(edit).body
    assert memdir(b, "sync", "conflicts").stdout.strip() == "no sync conflicts"

    assert memdir(b, "sync").exit_code == 0
    a.sync()
    world.settle(a)
    files = world.assert_converged(a, b)["project"]
    assert files[local] == versions[local][1]
    assert rev_of(files[server]) == rev_of(versions[server][0])
    assert len(files) == 5


def test_usage_errors_exit_2(world: World) -> None:
    a = world.machine("a", signed_in=False)
    login(world, a)
    cases = [
        ("sync", "resolve", "some-note"),
        ("sync", "resolve", "some-note", "--keep", "local", "--edit"),
        ("sync", "resolve", "some-note", "--keep", "mine"),
        ("sync", "resolve"),
        ("sync", "login"),
        ("sync", "login", "--server", world.server.url, "--token-file", "/nonexistent/token"),
        ("sync", "--scope", "everything"),
        ("sync", "nonsense"),
    ]
    for args in cases:
        result = memdir(a, *args)
        assert result.exit_code == 2, (args, output(result))
    short = token_file(world, "short", "short")
    result = memdir(a, "sync", "login", "--server", world.server.url, "--token-file", str(short))
    assert result.exit_code == 2 and "not a sync token" in result.stderr
    missing = memdir(a, "sync", "resolve", "no-such-note", "--keep", "local")
    assert missing.exit_code == 3
