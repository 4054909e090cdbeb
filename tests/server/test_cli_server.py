"""`memdir server …`: accounts, admin key, erase and serve, with exit codes and --json."""

from __future__ import annotations

import json
import re
import socket
import stat
import sys
import types
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from memdir.cli.main import main
from memdir.errors import EXIT_CONFLICT, EXIT_ERROR, EXIT_NOT_FOUND, EXIT_REFUSED, EXIT_USAGE
from memdir.server.accounts import Accounts
from memdir.server.rules import SyncRules, redact_dsn
from memdir.server.storage.directory import DirectoryStorage
from memdir.sync.protocol import Quotas
from sync_server import auth_headers, running_server

Invoke = Callable[..., Result]


@pytest.fixture
def run(home: Path) -> Invoke:
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(
            main, list(args), input=input, env={"COLUMNS": "200"}, catch_exceptions=False
        )

    return invoke


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def test_user_add_writes_the_token_to_a_private_file_only(
    run: Invoke, data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "alice.token"
    result = run("server", "user", "add", "alice", "--data", str(data), "--token-out", str(out))
    assert result.exit_code == 0, result.output
    token = out.read_text().strip()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert token not in result.stdout + result.stderr
    assert token not in (data / "accounts.json").read_text()
    assert Accounts(data).authenticate(token) == "alice"
    assert "alice" in result.stdout


def test_user_add_json_and_conflicts(run: Invoke, data: Path, tmp_path: Path) -> None:
    out = tmp_path / "t1"
    args = ("server", "user", "add", "alice", "--data", str(data))
    result = run(*args, "--token-out", str(out), "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"user": "alice", "rotated": False, "token_file": str(out)}
    first = out.read_text().strip()

    again = run(*args, "--token-out", str(tmp_path / "t2"), "--json")
    assert again.exit_code == EXIT_CONFLICT
    assert json.loads(again.stdout)["error"]["type"] == "Conflict"
    assert not (tmp_path / "t2").exists()

    # The output file exists: refused before a token is issued, so the old one still works.
    refused = run(*args, "--token-out", str(out), "--rotate")
    assert refused.exit_code == EXIT_REFUSED
    assert Accounts(data).authenticate(first) == "alice"

    rotated = run(*args, "--token-out", str(out), "--rotate", "--force", "--json")
    assert rotated.exit_code == 0, rotated.output
    assert json.loads(rotated.stdout)["rotated"] is True
    second = out.read_text().strip()
    assert second != first
    assert Accounts(data).authenticate(second) == "alice"
    assert Accounts(data).authenticate(first) is None


def test_user_add_invalid_name_is_a_usage_error(run: Invoke, data: Path, tmp_path: Path) -> None:
    out = tmp_path / "t"
    result = run("server", "user", "add", "../x", "--data", str(data), "--token-out", str(out))
    assert result.exit_code == EXIT_USAGE
    assert not out.exists()


def test_user_list_and_remove(run: Invoke, data: Path) -> None:
    accounts = Accounts(data)
    token = accounts.add_user("bob")
    accounts.add_user("alice")
    listed = run("server", "user", "list", "--data", str(data), "--json")
    assert listed.exit_code == 0
    assert [u["name"] for u in json.loads(listed.stdout)] == ["alice", "bob"]
    assert "token" not in listed.stdout
    table = run("server", "user", "list", "--data", str(data))
    assert "alice" in table.stdout and "bob" in table.stdout

    removed = run("server", "user", "remove", "bob", "--data", str(data), "--json")
    assert removed.exit_code == 0
    assert json.loads(removed.stdout) == {"user": "bob", "removed": True}
    assert Accounts(data).authenticate(token) is None
    missing = run("server", "user", "remove", "bob", "--data", str(data))
    assert missing.exit_code == EXIT_NOT_FOUND
    empty = run("server", "user", "list", "--data", str(data / "none"))
    assert empty.exit_code == 0 and "no users" in empty.stdout


def test_admin_key(run: Invoke, data: Path, tmp_path: Path) -> None:
    out = tmp_path / "admin.key"
    result = run("server", "admin-key", "--data", str(data), "--key-out", str(out), "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"key_file": str(out)}
    key = out.read_text().strip()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert key not in result.stdout and Accounts(data).is_admin(key)
    again = run("server", "admin-key", "--data", str(data), "--key-out", str(out))
    assert again.exit_code == EXIT_REFUSED
    assert Accounts(data).is_admin(key)


def _seed(data: Path, user: str) -> SyncRules:
    from memdir.sync.protocol import Change, CommitRequest, ScopeRef, rev_of

    text = '---\n{"id":"a-note","summary":"s"}\n---\nbody\n'
    service = SyncRules(DirectoryStorage(data))
    change = Change(id="a-note", op="put", rev=rev_of(text.encode()), text=text)
    service.commit(user, CommitRequest(scope=ScopeRef(kind="user"), changes=[change]))
    return service


def test_erase(run: Invoke, data: Path) -> None:
    _seed(data, "alice")
    _seed(data, "bob")
    storage = DirectoryStorage(data)

    refused = run("server", "erase", "alice", "--data", str(data), "--json")
    assert refused.exit_code == EXIT_USAGE
    declined = run("server", "erase", "alice", "--data", str(data), input="n\n")
    assert declined.exit_code == EXIT_ERROR
    assert not storage.is_erased("alice")

    confirmed = run("server", "erase", "alice", "--data", str(data), input="y\n")
    assert confirmed.exit_code == 0, confirmed.output
    assert storage.is_erased("alice")
    assert not list((data / "users" / "alice").rglob("*.md"))

    result = run("server", "erase", "bob", "--data", str(data), "--yes", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"user": "bob", "erased": True}
    assert storage.is_erased("bob")
    bad = run("server", "erase", "../x", "--data", str(data), "--yes")
    assert bad.exit_code == EXIT_USAGE


def test_postgres_backend_needs_a_dsn(
    run: Invoke, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMDIR_SERVER_DSN", raising=False)
    result = run("server", "erase", "x", "--data", str(data), "--backend", "postgres", "--yes")
    assert result.exit_code == EXIT_USAGE
    assert "dsn" in result.stderr.lower()


def _fake_postgres(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    module = types.ModuleType("memdir.server.storage.postgres")

    def PostgresStorage(dsn: str) -> None:  # noqa: N802 - stands in for the class
        raise error

    module.PostgresStorage = PostgresStorage  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "memdir.server.storage.postgres", module)


def test_missing_psycopg_gives_the_install_hint(
    run: Invoke, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_postgres(monkeypatch, ModuleNotFoundError("No module named 'psycopg'", name="psycopg"))
    monkeypatch.setenv("MEMDIR_SERVER_DSN", "postgresql://u:pw@localhost/db")
    result = run("server", "erase", "x", "--data", str(data), "--backend", "postgres", "--yes")
    assert result.exit_code == EXIT_ERROR
    assert "pip install 'memdir[postgres]'" in result.stderr


def test_a_dsn_password_is_never_printed(
    run: Invoke, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dsn = "postgresql://memdir:hunter2secret@db.example:5432/memdir"
    _fake_postgres(monkeypatch, RuntimeError(f"connection to {dsn} failed"))
    for args in (
        ("server", "erase", "x", "--yes", "--dsn", dsn),
        ("server", "serve", "--port", "0", "--dsn", dsn),
    ):
        result = run(*args, "--data", str(data), "--backend", "postgres")
        assert result.exit_code == EXIT_ERROR
        assert "hunter2secret" not in result.stdout + result.stderr
        assert "db.example" in result.stderr


def test_redact_dsn() -> None:
    assert redact_dsn("postgresql://u:p%40ss@h/db") == "postgresql://u:***@h/db"
    assert redact_dsn("host=h password=secret dbname=x") == "host=h password=*** dbname=x"
    assert redact_dsn("host=h password='a b' dbname=x") == "host=h password=*** dbname=x"
    assert redact_dsn("postgresql://h/db") == "postgresql://h/db"


def test_serve_on_a_taken_port_fails_clearly(run: Invoke, data: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run("server", "serve", "--data", str(data), "--port", str(port))
    assert result.exit_code == EXIT_ERROR
    assert "cannot listen" in result.stderr


def test_serve_prints_the_ready_line_and_serves(data: Path, tmp_path: Path) -> None:
    token = Accounts(data).add_user("alice")
    with running_server(data, extra_args=["--max-notes", "42", "--tombstone-days", "7"]) as srv:
        assert re.fullmatch(
            r"memdir sync server listening on http://127\.0\.0\.1:\d+\n", srv.lines[0]
        )
        assert srv.port > 0
        response = httpx.get(f"{srv.url}/v1/memory/identity", headers=auth_headers(token))
        assert response.status_code == 200
        assert response.json()["quotas"] == Quotas(max_notes=42, tombstone_days=7).model_dump()
        assert srv.stop() == 0
        assert token not in srv.stderr()
        assert "plain HTTP" not in srv.stderr()


def test_serve_beyond_loopback_warns_once_that_a_tls_proxy_is_needed(
    run: Invoke, data: Path
) -> None:
    # 192.0.2.1 (TEST-NET-1) is no address of this machine: the bind fails after the
    # warning, so nothing ever listens beyond loopback here.
    result = run("server", "serve", "--data", str(data), "--host", "192.0.2.1", "--port", "0")
    assert result.exit_code == EXIT_ERROR
    warnings = [line for line in result.stderr.splitlines() if "plain HTTP" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning:"), result.stderr
    assert "TLS-terminating" in result.stderr and "192.0.2.1" in result.stderr
    assert "plain HTTP" not in result.stdout


@pytest.mark.parametrize(
    ("host", "warns"),
    [
        ("127.0.0.1", False),
        ("localhost", False),
        ("::1", False),
        ("[::1]", False),
        ("127.1.2.3", False),
        ("0.0.0.0", True),
        ("::", True),
        ("", True),
        ("sync.example.com", True),
    ],
)
def test_only_loopback_binds_go_without_the_warning(host: str, warns: bool) -> None:
    from memdir.server.app import plain_http_warning

    assert (plain_http_warning(host) is not None) == warns


def test_serve_json_ready_line(data: Path) -> None:
    with running_server(data, extra_args=["--json"]) as srv:
        doc = json.loads(srv.lines[0])
        assert doc["listening"] == srv.url
        assert doc["backend"] == "dir"
        assert doc["quotas"] == Quotas().model_dump()


def test_quota_option_help_matches_the_protocol_defaults() -> None:
    serve = main.commands["server"].commands["serve"]  # type: ignore[attr-defined]
    helps = {p.name: p.help or "" for p in serve.params}
    for name, value in Quotas().model_dump().items():
        assert f"[{value}]" in helps[name], name
