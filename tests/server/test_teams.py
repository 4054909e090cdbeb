"""Teams on the sync server (§12): roles enforced by the server, the audit, bad input.

These run the rules over a real directory backend; `test_teams_http` below runs the
same checks through the HTTP app, and tests/sync/test_teams.py runs machines against a
real server process.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memdir.core import Note, render_note
from memdir.server.accounts import Accounts
from memdir.server.app import create_app
from memdir.server.ratelimit import RateLimiter
from memdir.server.rules import Rejection, SyncRules
from memdir.server.storage.directory import DirectoryStorage, team_owner
from memdir.sync.protocol import (
    PROTOCOL_HEADER,
    PROTOCOL_VERSION,
    Change,
    CommitRequest,
    Quotas,
    ScopeRef,
    SnapshotRequest,
    TeamChange,
    rev_of,
)

PROJECT = "proj-team-0001"
ACCOUNTS = ("olga", "adam", "eddy", "rita", "nina")


def scope(team: str | None = "acme") -> ScopeRef:
    return ScopeRef(kind="project", project=PROJECT, team=team)


def put(note_id: str, body: str = "body", base: str | None = None) -> Change:
    text = render_note(Note(id=note_id, summary=f"about {note_id}", body=body)).decode()
    return Change(id=note_id, op="put", base=base, rev=rev_of(text.encode()), text=text)


def commit(rules: SyncRules, user: str, *changes: Change, team: str | None = "acme") -> int:
    request = CommitRequest(scope=scope(team), changes=list(changes))
    return rules.commit(user, request).version


def snapshot_ids(rules: SyncRules, user: str, team: str | None = "acme") -> set[str]:
    return set(rules.snapshot(user, SnapshotRequest(scope=scope(team))).notes)


def change(rules: SyncRules, actor: str, action: str, member: str, role: str | None = None) -> None:
    head = rules.teams.show(actor, "acme").head
    request = TeamChange.model_validate(
        {"parent": head, "action": action, "member": member, "role": role}
    )
    rules.teams.change(actor, "acme", request)


@pytest.fixture
def storage(tmp_path: Path) -> DirectoryStorage:
    return DirectoryStorage(tmp_path / "server")


@pytest.fixture
def rules(storage: DirectoryStorage) -> SyncRules:
    """Team acme: olga owner, adam admin, eddy editor, rita reader; nina is no member."""
    service = SyncRules(storage, Quotas(), known_user=lambda name: name in ACCOUNTS)
    service.teams.create("olga", "acme")
    for member, role in (("adam", "admin"), ("eddy", "editor"), ("rita", "reader")):
        change(service, "olga", "add", member, role)
    return service


def refused(status: int, code: str) -> pytest.RaisesExc[Rejection]:
    return pytest.raises(Rejection, check=lambda e: (e.status, e.code) == (status, code))


def test_members_share_one_space_apart_from_their_own(rules: SyncRules) -> None:
    commit(rules, "eddy", put("deploys", "Deploys go out on Tuesdays"))
    commit(rules, "olga", put("oncall"))
    for member in ("olga", "adam", "eddy", "rita"):
        assert snapshot_ids(rules, member) == {"deploys", "oncall"}
    # the same project as one's own notes is another space, and so is user "acme"
    assert snapshot_ids(rules, "eddy", team=None) == set()
    assert rules.storage.manifest("acme", f"project/{PROJECT}").version == 0
    assert rules.storage.manifest(team_owner("acme"), f"project/{PROJECT}").version == 2


def test_a_readers_commit_is_refused_and_writes_nothing(rules: SyncRules) -> None:
    with refused(403, "forbidden"):
        commit(rules, "rita", put("sneaky"))
    assert rules.storage.manifest(team_owner("acme"), f"project/{PROJECT}").version == 0
    assert not (Path(rules.storage.root) / "teams" / "acme" / "projects").exists()  # type: ignore[attr-defined]


def test_no_member_reads_or_writes_and_is_not_told_the_team_exists(rules: SyncRules) -> None:
    commit(rules, "eddy", put("deploys"))
    for call in (
        lambda: snapshot_ids(rules, "nina"),
        lambda: commit(rules, "nina", put("x")),
        lambda: rules.teams.show("nina", "acme"),
        lambda: change(rules, "nina", "add", "nina", "editor"),
    ):
        with refused(404, "not_found"):
            call()
    with refused(404, "not_found"):
        rules.teams.show("nina", "no-such-team")


def test_a_removed_member_is_refused_from_then_on(rules: SyncRules) -> None:
    commit(rules, "eddy", put("deploys"))
    change(rules, "adam", "remove", "eddy")
    with refused(404, "not_found"):
        snapshot_ids(rules, "eddy")
    with refused(404, "not_found"):
        commit(rules, "eddy", put("after"))
    assert snapshot_ids(rules, "olga") == {"deploys"}


def test_a_replayed_or_stale_change_is_refused(rules: SyncRules) -> None:
    before = rules.teams.show("olga", "acme").head
    request = TeamChange(parent=before, action="add", member="nina", role="reader")
    rules.teams.change("olga", "acme", request)
    change(rules, "olga", "remove", "nina")
    with refused(409, "stale"):  # the same request again: nina is not added back
        rules.teams.change("olga", "acme", request)
    assert "nina" not in rules.teams.show("olga", "acme").members


def test_the_actor_is_the_token_never_the_body(rules: SyncRules) -> None:
    """A body naming another actor changes nothing: what adam may not do stays refused,
    and what adam may do is recorded as adam's."""
    head = rules.teams.show("adam", "acme").head
    body = {"parent": head, "action": "transfer", "member": "adam", "actor": "olga"}
    with refused(403, "forbidden"):  # only the owner transfers; adam is no owner
        rules.teams.change("adam", "acme", TeamChange.model_validate(body))
    body = {"parent": head, "action": "add", "member": "nina", "role": "reader"}
    doc = rules.teams.change("adam", "acme", TeamChange.model_validate(body | {"actor": "olga"}))
    assert doc.history[-1].actor == "adam" and doc.members["olga"] == "owner"


def test_an_erased_account_does_nothing_to_its_teams(rules: SyncRules) -> None:
    rules.erase("adam")
    with refused(410, "account_erased"):
        rules.teams.show("adam", "acme")
    with refused(410, "account_erased"):
        change(rules, "adam", "add", "nina", "admin")
    with refused(410, "account_erased"):
        rules.teams.create("adam", "other")
    with refused(404, "not_found"):  # nor can it be added anywhere again
        change(rules, "olga", "remove", "adam")
        change(rules, "olga", "add", "adam", "reader")
    assert "nina" not in rules.teams.show("olga", "acme").members


def test_leaving_a_team_shows_no_role(rules: SyncRules) -> None:
    head = rules.teams.show("eddy", "acme").head
    doc = rules.teams.change(
        "eddy", "acme", TeamChange(parent=head, action="remove", member="eddy")
    )
    assert doc.you is None and doc.members == {} and doc.history == []


def test_adding_an_unknown_account_or_taking_a_name_twice_is_refused(rules: SyncRules) -> None:
    with refused(404, "not_found"):
        change(rules, "olga", "add", "ghost", "editor")
    with refused(409, "conflict"):
        rules.teams.create("nina", "acme")
    assert rules.teams.show("olga", "acme").members["olga"] == "owner"


def test_the_history_is_the_audit_and_holds_no_content(rules: SyncRules) -> None:
    commit(rules, "eddy", put("secret-plan", "launch on friday"))
    change(rules, "olga", "transfer", "adam")
    change(rules, "adam", "revoke", "eddy")
    doc = rules.teams.show("adam", "acme")
    assert [(e.actor, e.action, e.member, e.role) for e in doc.history] == [
        ("olga", "create", "olga", "owner"),
        ("olga", "add", "adam", "admin"),
        ("olga", "add", "eddy", "editor"),
        ("olga", "add", "rita", "reader"),
        ("olga", "transfer", "adam", "owner"),
        ("adam", "revoke", "eddy", None),
    ]
    assert doc.members == {"adam": "owner", "olga": "admin", "rita": "reader"}
    assert doc.revoked == ["eddy"] and doc.you == "owner"
    stored = rules.storage.team("acme")
    assert stored is not None and b"friday" not in stored[1] and b"secret-plan" not in stored[1]


def test_sealed_texts_are_refused_in_a_team_scope(rules: SyncRules) -> None:
    sealed = "memdir-sealed 1 0123456789abcdef\n" + "QUJD" * 20 + "\n"
    change_ = Change(id="n1", op="put", rev=rev_of(sealed.encode()), text=sealed)
    with refused(422, "invalid"):
        commit(rules, "eddy", change_)


def test_a_damaged_policy_is_refused_not_trusted(
    rules: SyncRules, storage: DirectoryStorage
) -> None:
    found = storage.team("acme")
    assert found is not None
    doc = json.loads(found[1])
    doc["history"][3]["role"] = "admin"  # rita made an admin by hand
    assert storage.swap_team("acme", found[0], json.dumps(doc).encode())
    with refused(500, "internal"):
        commit(rules, "rita", put("x"))
    with refused(500, "internal"):
        rules.teams.show("olga", "acme")


def test_teams_http(tmp_path: Path) -> None:
    """The same rules through the app: routes, status codes, error bodies."""
    data = tmp_path / "data"
    accounts = Accounts(data)
    tokens = {name: accounts.add_user(name) for name in ("olga", "rita", "nina")}
    storage = DirectoryStorage(data)
    rules = SyncRules(storage, Quotas(), known_user=accounts.exists)
    app = create_app(rules, accounts, RateLimiter(0))

    def headers(user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {tokens[user]}", PROTOCOL_HEADER: str(PROTOCOL_VERSION)}

    with TestClient(app) as http:
        made = http.post("/v1/teams", json={"team": "acme"}, headers=headers("olga"))
        assert made.status_code == 200 and made.json()["you"] == "owner"
        head = made.json()["head"]
        body = {"parent": head, "action": "add", "member": "rita", "role": "reader"}
        added = http.post("/v1/teams/acme/changes", json=body, headers=headers("olga"))
        assert added.status_code == 200, added.text
        assert added.json()["members"] == {"olga": "owner", "rita": "reader"}
        again = http.post("/v1/teams/acme/changes", json=body, headers=headers("olga"))
        assert again.status_code == 409 and again.json()["error"] == "stale"
        request = {"scope": scope().model_dump(), "changes": [put("x").model_dump()]}
        denied = http.post("/v1/memory/commit", json=request, headers=headers("rita"))
        assert denied.status_code == 403 and "reader" in denied.json()["message"]
        hidden = http.get("/v1/teams/acme", headers=headers("nina"))
        assert hidden.status_code == 404 and hidden.json()["error"] == "not_found"
        for name in ("A", "%2e%2e", "x" * 65):
            bad = http.get(f"/v1/teams/{name}", headers=headers("olga"))
            assert bad.status_code == 422 and bad.json()["error"] == "invalid", name
        roles = http.get("/v1/teams/acme?history=false", headers=headers("rita"))
        assert roles.json()["history"] == [] and roles.json()["you"] == "reader"
        anonymous = http.get("/v1/teams/acme", headers={PROTOCOL_HEADER: "1"})
        assert anonymous.status_code == 401
        taken = http.post("/v1/teams", json={"team": "acme"}, headers=headers("nina"))
        assert taken.status_code == 409 and taken.json()["error"] == "conflict"
        wrong = http.post("/v1/teams", json={"team": "Acme!"}, headers=headers("nina"))
        assert wrong.status_code == 422


def test_the_operator_reads_the_audit_from_the_storage(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from memdir.cli.main import main

    data = tmp_path / "data"
    rules = SyncRules(DirectoryStorage(data), Quotas())
    rules.teams.create("olga", "acme")
    change(rules, "olga", "add", "rita", "reader")
    shown = CliRunner().invoke(main, ["server", "team", "acme", "--data", str(data), "--json"])
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.stdout)
    assert doc["members"] == {"olga": "owner", "rita": "reader"}
    assert [e["action"] for e in doc["history"]] == ["create", "add"]
    plain = CliRunner().invoke(main, ["server", "team", "acme", "--data", str(data)])
    assert "rita" in plain.stdout and "history:" in plain.stdout
    missing = CliRunner().invoke(main, ["server", "team", "nope", "--data", str(data)])
    assert missing.exit_code != 0 and "no team" in missing.output
    assert "Traceback" not in missing.output


def test_a_storage_outage_at_the_gate_is_a_503_with_retry_after(tmp_path: Path) -> None:
    """The accounts live in a backend that is down: a clear 503, not a 500 or a hang."""
    from memdir.errors import MemdirError

    class Down:
        def server_document(self, name: str) -> None:
            raise MemdirError("cannot connect to PostgreSQL at db:5432/memdir: refused")

        server_document_stamp = server_document

        def swap_server_document(self, name: str, expected: int, doc: bytes) -> bool:
            raise MemdirError("cannot connect")

    accounts = Accounts(tmp_path, store=Down())
    app = create_app(SyncRules(DirectoryStorage(tmp_path), Quotas()), accounts, RateLimiter(0))
    headers = {"Authorization": "Bearer " + "x" * 43, PROTOCOL_HEADER: str(PROTOCOL_VERSION)}
    with TestClient(app) as http:
        answer = http.get("/v1/memory/identity", headers=headers)
    assert answer.status_code == 503 and answer.headers["Retry-After"] == "5"
    assert answer.json()["error"] == "busy"
