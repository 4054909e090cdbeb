"""Remote MCP (§12): `memdir server serve --mcp` for real, reached by the official MCP
SDK's client through its own OAuth client (dynamic registration, PKCE, the consent page,
`iss`), in both protocol eras; what lands is checked in the storage and on a member's
own machine through sync."""

from __future__ import annotations

import contextlib
import secrets
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client

from fault_proxy import FaultProxy
from mcp import Client
from memdir import Memory
from memdir.core import Note, render_note
from memdir.crypto.keys import subkeys
from memdir.crypto.seal import Kind, seal
from memdir.mcp.copies import WORKING_COPIES
from memdir.server.accounts import Accounts, open_accounts
from memdir.server.rules import S3Location, open_storage
from memdir.sync.client import SyncClient
from memdir.sync.protocol import (
    Change,
    CommitRequest,
    ScopeRef,
    SnapshotRequest,
    TeamChange,
    rev_of,
)
from memdir.sync.teamkeys import first_epoch
from oauth_client import Consent, consenting_client
from sync_server import MEMDIR_COMMAND, RunningServer, add_user, running_server

PROJECT = "remote-project-0001"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass
class Served:
    server: RunningServer
    data: Path
    tokens: dict[str, str]
    proxy: Any = None
    replicas: list[RunningServer] = field(default_factory=list)
    #: The address clients use (the proxy in front of the replicas), if not the server's.
    url_override: str | None = None

    @property
    def base(self) -> str:
        return self.url_override or self.server.url

    def sync_client(self, user: str) -> SyncClient:
        return SyncClient(self.base, self.tokens[user])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    data = tmp_path / "server"
    tokens = {name: add_user(data, name) for name in ("alice", "bob", "carol")}
    with running_server(data, extra_args=["--mcp"]) as server:
        yield Served(server, data, tokens)


def authorize(served: Served, user: str, **consent: Any) -> Consent:
    """An SDK OAuth client for `user` (its consent approved by the script)."""
    return consenting_client(served.base, served.tokens[user], **consent)


def mcp_client(served: Served, auth: Consent | str, mode: str = "auto") -> Client:
    """An MCP client over the server's `/mcp`: with the SDK's OAuth flow, or a raw token."""
    if isinstance(auth, str):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {auth}"}, timeout=60)
    else:
        http = httpx2.AsyncClient(auth=auth.provider, timeout=60)
    return Client(streamable_http_client(served.base + "/mcp", http_client=http), mode=mode)


async def call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    return bool(result.is_error), (text if result.is_error else result.structured_content)


def stored(served: Served, user: str, team: str | None = None) -> dict[str, str]:
    """The project's notes as the server stores them: id -> text."""
    with served.sync_client(user) as client:
        ref = ScopeRef(kind="project", project=PROJECT, team=team)
        snap = client.snapshot(SnapshotRequest(scope=ref))
    return {note_id: snap.objects[entry.rev] for note_id, entry in snap.notes.items()}


def access_token(consent: Consent) -> str:
    assert consent.storage.tokens is not None
    return consent.storage.tokens.access_token


def test_the_flow_then_tools_in_both_eras(served: Served, tmp_path: Path) -> None:
    """The SDK's OAuth client gets a token (registration, PKCE, consent, `iss`); a note
    written over remote MCP is stored, searchable in the other era, and reaches the
    account's own machine through sync."""
    consent = authorize(served, "alice", scopes=("read", "write"), project=PROJECT)

    async def main() -> str:
        async with mcp_client(served, consent) as client:
            assert client.protocol_version == "2026-07-28"
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"memory_write", "memory_search"} <= names and "memory_delete" not in names
            err, out = await call(
                client,
                "memory_write",
                {"summary": "The staging database restarts at 04:00 UTC", "scope": "project"},
            )
            assert not err, out
            note_id: str = out["id"]
        token = access_token(consent)
        async with mcp_client(served, token, mode="legacy") as client:
            assert client.protocol_version == "2025-11-25"
            err, out = await call(client, "memory_search", {"query": "staging database restart"})
            assert not err and out["hits"][0]["id"] == note_id, out
            err, out = await call(client, "memory_delete", {"id": note_id, "confirm": True})
            assert err and "does not carry the write and delete scopes" in out, out
        return note_id

    note_id = anyio.run(main)
    assert "04:00 UTC" in stored(served, "alice")[note_id]
    # The page showed who asks, and where the code goes back to.
    status, page = consent.pages[-1]
    assert status == 200 and "test agent" in page and "127.0.0.1" in page

    machine = tmp_path / "machine"
    (machine / "project" / ".memdir").mkdir(parents=True)
    (machine / "project" / ".memdir" / "project.json").write_text(f'{{"id": "{PROJECT}"}}')
    memory = Memory.open(machine / "project", machine / "home", embedder=None)
    try:
        memory.sync.login(served.base, served.tokens["alice"])
        memory.sync.run()
        assert memory.notes.read(note_id).summary == "The staging database restarts at 04:00 UTC"
    finally:
        memory.close()


def test_tokens_refused_with_the_challenge(served: Served) -> None:
    """No token, a made-up one, a revoked one: 401 naming the resource metadata."""
    for headers in ({}, {"Authorization": "Bearer " + secrets.token_urlsafe(32)}):
        answer = httpx.post(served.base + "/mcp", json=INIT, headers={**ACCEPT, **headers})
        assert answer.status_code == 401, answer.text
        challenge = answer.headers["www-authenticate"]
        assert "/.well-known/oauth-protected-resource/mcp" in challenge
    metadata = httpx.get(served.base + "/.well-known/oauth-protected-resource/mcp").json()
    assert metadata["resource"] == served.base + "/mcp"
    assert metadata["authorization_servers"] == [served.base]

    consent = authorize(served, "alice", scopes=("read",))
    anyio.run(_list_tools, served, consent)
    token = access_token(consent)
    auth = {**ACCEPT, "Authorization": f"Bearer {token}"}
    assert httpx.post(served.base + "/mcp", json=INIT, headers=auth).status_code == 200
    assert consent.storage.client is not None
    revoked = httpx.post(
        served.base + "/revoke",
        data={"token": token, "client_id": consent.storage.client.client_id, "client_secret": ""},
    )
    assert revoked.status_code == 200, revoked.text
    answer = httpx.post(served.base + "/mcp", json=INIT, headers=auth)
    assert (
        answer.status_code == 401 and 'error="invalid_token"' in answer.headers["www-authenticate"]
    )


def test_a_removed_account_is_refused_at_once(served: Served) -> None:
    consent = authorize(served, "bob", scopes=("read",))
    anyio.run(_list_tools, served, consent, "bob")
    auth = {**ACCEPT, "Authorization": f"Bearer {access_token(consent)}"}
    Accounts(served.data).remove_user("bob")
    answer = httpx.post(served.base + "/mcp", json=INIT, headers=auth)
    assert answer.status_code == 401, answer.text


async def _list_tools(
    served: Served, consent: Consent, user: str = "alice", writes: bool = False
) -> None:
    async with mcp_client(served, consent) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "memory_search" in names and ("memory_write" in names) is writes
        if not writes:
            err, out = await call(client, "memory_read", {"id": "x", "scope": "project"})
            assert err and f"reaches the notes of account {user} only" in out, out


def _team(served: Served) -> None:
    """Team acme: bob owns it, alice edits, carol reads."""
    with served.sync_client("bob") as bob:
        doc = bob.create_team("acme")
        for member, role in (("alice", "editor"), ("carol", "reader")):
            change = TeamChange(parent=doc.head, action="add", member=member, role=role)
            doc = bob.change_team("acme", change)


def test_team_notes_roles_and_removal(served: Served) -> None:
    """An editor writes a team's notes over remote MCP, a reader reads them and cannot
    get write access, and a removed member is refused from the next call."""
    _team(served)
    alice = authorize(served, "alice", scopes=("read", "write"), project=PROJECT, team="acme")
    carol = authorize(served, "carol", scopes=("read",), project=PROJECT, team="acme")

    async def write_then_read() -> str:
        async with mcp_client(served, alice) as client:
            err, out = await call(
                client,
                "memory_write",
                {"summary": "Releases are cut on Thursdays", "scope": "project"},
            )
            assert not err, out
        async with mcp_client(served, carol) as client:
            err, found = await call(client, "memory_search", {"query": "when are releases cut"})
            assert not err and found["hits"][0]["id"] == out["id"], found
        return str(out["id"])

    note_id = anyio.run(write_then_read)
    assert "Thursdays" in stored(served, "bob", team="acme")[note_id]

    greedy = authorize(served, "carol", scopes=("read", "write"), project=PROJECT, team="acme")
    with pytest.raises(Exception):  # noqa: B017 - the consent refusal ends the SDK's flow
        anyio.run(_list_tools, served, greedy)
    assert greedy.pages[0][0] >= 400 and "reader" in greedy.pages[0][1]

    with served.sync_client("bob") as bob:
        doc = bob.team("acme")
        bob.change_team("acme", TeamChange(parent=doc.head, action="remove", member="alice"))

    async def removed() -> None:
        async with mcp_client(served, alice) as client:
            err, out = await call(client, "memory_search", {"query": "releases"})
            assert err and "team acme" in out and "nothing was read" in out, out

    anyio.run(removed)


def test_a_member_demoted_to_reader_after_consent_stores_nothing(served: Served) -> None:
    """The token says write, the team now says reader: the server refuses the write, the
    tool says it was not stored, and the storage holds nothing of it."""
    _team(served)
    alice = authorize(served, "alice", scopes=("read", "write"), project=PROJECT, team="acme")
    anyio.run(_list_tools, served, alice, "alice", True)
    with served.sync_client("bob") as bob:
        doc = bob.team("acme")
        change = TeamChange(parent=doc.head, action="set_role", member="alice", role="reader")
        bob.change_team("acme", change)

    async def write() -> None:
        async with mcp_client(served, alice) as client:
            err, out = await call(
                client, "memory_write", {"summary": "Written when demoted", "scope": "project"}
            )
            assert err and "not stored on the server" in out and "reader" in out, out

    anyio.run(write)
    assert stored(served, "bob", team="acme") == {}


def test_end_to_end_encrypted_notes_are_not_served(served: Served) -> None:
    keys = subkeys(secrets.token_bytes(32))
    ref = ScopeRef(kind="project", project=PROJECT)
    plain = render_note(Note(id="sealed-one", summary="A sealed note", body="unseen"))
    data = seal(keys, plain, kind=Kind.WIRE, context=f"{ref.key}/sealed-one")
    change = Change(id="sealed-one", op="put", rev=rev_of(data), text=data.decode())
    with served.sync_client("alice") as client:
        client.commit(CommitRequest(scope=ref, base_version=0, changes=[change]))
    consent = authorize(served, "alice", scopes=("read",), project=PROJECT)

    async def main() -> None:
        async with mcp_client(served, consent) as client:
            err, out = await call(client, "memory_search", {"query": "sealed"})
            assert err and "end-to-end encrypted" in out and "nothing was read" in out, out

    anyio.run(main)


def test_an_end_to_end_encrypted_teams_notes_are_not_served(served: Served) -> None:
    """A team made with keys (§12): the server holds no member key, so it reads nothing."""
    with served.sync_client("alice") as alice:
        alice.create_team("vault", first_epoch("vault", "alice", subkeys(secrets.token_bytes(32))))
    consent = authorize(served, "alice", scopes=("read",), project=PROJECT, team="vault")

    async def main() -> None:
        async with mcp_client(served, consent) as client:
            err, out = await call(client, "memory_search", {"query": "anything"})
            assert err and "end-to-end encrypted" in out and "nothing was read" in out, out

    anyio.run(main)


@pytest.fixture(params=["postgres", "s3"])
def replicated(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    """Three replicas of `serve --mcp` over one PostgreSQL database or one S3 bucket,
    behind a round-robin proxy whose address is their `--public-url`; accounts alice,
    bob and carol live in the backend."""
    backend: str = request.param
    dsn: str | None = None
    args: list[str] = []
    if backend == "postgres":
        dsn = request.getfixturevalue("pg_database_dsn")
        storage = open_storage("postgres", tmp_path, dsn)
    else:
        endpoint, bucket, prefix = request.getfixturevalue("s3_bucket")
        args = ["--s3-endpoint", endpoint, "--bucket", bucket, "--prefix", prefix]
        storage = open_storage("s3", tmp_path, s3=S3Location(endpoint, bucket, prefix))
    try:
        accounts = open_accounts(tmp_path / "admin", storage)
        tokens = {name: accounts.add_user(name) for name in ("alice", "bob", "carol")}
    finally:
        storage.close()
    with contextlib.ExitStack() as stack:
        proxy = stack.enter_context(FaultProxy("http://127.0.0.1:9"))
        public = ["--mcp", "--public-url", proxy.url, "--rate-limit", "0", *args]
        replicas = [
            stack.enter_context(
                running_server(
                    tmp_path / f"replica-{n}", backend=backend, dsn=dsn, extra_args=public
                )
            )
            for n in range(3)
        ]
        proxy.spread = [r.url for r in replicas]
        yield Served(replicas[0], tmp_path / "replica-0", tokens, proxy, replicas, proxy.url)


def test_three_replicas_serve_a_team_over_oauth_and_lose_nothing(replicated: Served) -> None:
    """The held-back run's shape: a team of three on three replicas; the consent, token
    and MCP calls spread over them; a reader refused write, a removed member refused; a
    replica killed while a remote write is in it, and every acknowledged write stored."""
    served, proxy = replicated, replicated.proxy
    _team(served)
    alice = consenting_client(
        proxy.url, served.tokens["alice"], scopes=("read", "write"), project=PROJECT, team="acme"
    )
    carol = consenting_client(
        proxy.url, served.tokens["carol"], scopes=("read",), project=PROJECT, team="acme"
    )
    url = proxy.url + "/mcp"
    acknowledged: list[str] = []

    def client_of(consent: Consent) -> Client:
        http = httpx2.AsyncClient(auth=consent.provider, timeout=60)
        return Client(streamable_http_client(url, http_client=http))

    async def writes(label: str, rounds: int, tolerate: bool = False) -> None:
        async with client_of(alice) as client:
            for n in range(rounds):
                summary = f"Team fact {label} number {n} holds"
                try:
                    err, out = await call(
                        client, "memory_write", {"summary": summary, "scope": "project"}
                    )
                except Exception:  # the replica died under this call: it may or may not land
                    if not tolerate:
                        raise
                    continue
                assert not err, out
                acknowledged.append(out["id"])

    async def reader() -> None:
        async with client_of(carol) as client:
            err, found = await call(client, "memory_search", {"query": "team fact number holds"})
            assert not err and found["hits"], found
            names = {t.name for t in (await client.list_tools()).tools}
            assert "memory_write" not in names

    anyio.run(writes, "before", 3)
    anyio.run(reader)

    victim = served.replicas[2]

    def kill_soon() -> None:
        threading.Timer(0.05, victim.kill).start()

    proxy.script("/mcp", "pass", before=kill_soon, to=victim.url)
    anyio.run(writes, "during", 3, True)
    victim.process.wait(timeout=30)
    proxy.spread = [r.url for r in served.replicas[:2]]  # the proxy's health check
    anyio.run(writes, "after", 3)

    stored_ids = set(stored(served, "bob", team="acme"))
    assert set(acknowledged) <= stored_ids, "an acknowledged remote write was lost"
    assert len(acknowledged) >= 8

    with served.sync_client("bob") as bob:
        doc = bob.team("acme")
        bob.change_team("acme", TeamChange(parent=doc.head, action="remove", member="alice"))

    async def removed() -> None:
        async with client_of(alice) as client:
            err, out = await call(client, "memory_search", {"query": "team fact"})
            assert err and "team acme" in out, out

    anyio.run(removed)


def test_a_burst_of_calls_is_served_and_the_sync_api_stays_up(tmp_path: Path) -> None:
    """120 calls at once on one token: every one is answered (the token check waits on
    the event loop, and calls into one working copy wait their turn there, so no worker
    thread waits on another), and the sync API answers meanwhile and after."""
    data = tmp_path / "server"
    token = add_user(data, "alice")
    with running_server(data, extra_args=["--mcp", "--rate-limit", "0"]) as server:
        served = Served(server, data, {"alice": token})
        consent = authorize(served, "alice", scopes=("read",))
        anyio.run(_list_tools, served, consent)
        answered: list[bool] = []

        async def one(client: Client, n: int) -> None:
            err, _ = await call(client, "memory_search", {"query": f"anything {n}"})
            answered.append(not err)

        async def burst() -> bool:
            async with mcp_client(served, access_token(consent)) as client:
                with anyio.move_on_after(120) as deadline:
                    async with anyio.create_task_group() as group:
                        for n in range(120):
                            group.start_soon(one, client, n)
                return deadline.cancelled_caught

        assert anyio.run(burst) is False
        assert answered == [True] * 120
        with served.sync_client("alice") as client:
            assert client.identity().user == "alice"


def test_erasing_an_account_removes_its_working_copies(served: Served) -> None:
    consent = authorize(served, "alice", scopes=("read", "write"), project=PROJECT)

    async def write() -> None:
        async with mcp_client(served, consent) as client:
            err, out = await call(
                client, "memory_write", {"summary": "The vault PIN hint is blue", "scope": "user"}
            )
            assert not err, out

    anyio.run(write)
    copies = served.data / WORKING_COPIES
    assert any("vault" in p.name for p in copies.rglob("*.md"))
    erased = subprocess.run(
        [*MEMDIR_COMMAND, "server", "erase", "alice", "--data", str(served.data), "--yes"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert erased.returncode == 0, erased.stderr
    assert not any(copies.rglob("*.md"))

    async def refused() -> None:
        async with mcp_client(served, consent) as client:
            err, out = await call(client, "memory_search", {"query": "vault"})
            assert err and "erased" in out, out

    anyio.run(refused)
    assert not any(copies.rglob("*.md"))
