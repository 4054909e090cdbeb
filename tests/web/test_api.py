"""The memory page's JSON API (docs/web.md): each route's answer and its errors, through
httpx's ASGI transport and the real server, and `memdir ui` as a process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import AsgiPage, UiServer

from memdir import FindingKind, Memory
from memdir.web.api import MAX_BODY_BYTES

NOTE_KEYS = {
    *("id", "scope", "summary", "type", "tags", "created", "updated", "supersedes"),
    *("private", "revision"),
}


def error_of(answer: httpx.Response, status: int, kind: str) -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["error"]["kind"] == kind
    assert "Traceback" not in answer.text
    message: str = body["error"]["message"]
    return message


def make(page: AsgiPage, summary: str, **fields: Any) -> dict[str, Any]:
    answer = page.post("/api/notes", json={"summary": summary, **fields})
    assert answer.status_code == 201, answer.text
    out: dict[str, Any] = answer.json()
    return out


# -- notes -------------------------------------------------------------------------------


def test_create_list_and_filter(page: AsgiPage) -> None:
    first = make(page, "Deploys go through blue-green", body="see [[nothing-here]]", tags=["ops"])
    assert first.keys() >= NOTE_KEYS
    assert first["scope"] == "project" and first["revision"] and first["tags"] == ["ops"]
    assert first["dangling_links"] == ["nothing-here"]
    mine = make(page, "I like short answers", type="user", private=True)
    assert mine["scope"] == "user" and mine["private"] is True
    notes = page.get("/api/notes").json()["notes"]
    assert [n["id"] for n in notes] == [mine["id"], first["id"]]  # newest first, private shown
    assert all(n.keys() >= NOTE_KEYS for n in notes)
    assert [n["id"] for n in page.get("/api/notes?scope=user").json()["notes"]] == [mine["id"]]
    assert [n["id"] for n in page.get("/api/notes?tag=ops").json()["notes"]] == [first["id"]]
    assert [n["id"] for n in page.get("/api/notes?type=user").json()["notes"]] == [mine["id"]]
    error_of(page.get("/api/notes?scope=team"), 400, "invalid")
    error_of(page.get("/api/notes?type=nonsense"), 400, "invalid")


def test_create_refuses_wrong_input(page: AsgiPage) -> None:
    message = error_of(page.post("/api/notes", json={"body": "x"}), 400, "invalid")
    assert "summary" in message
    error_of(page.post("/api/notes", json={"summary": 5}), 400, "invalid")
    error_of(page.post("/api/notes", json={"summary": "x", "tags": "a,b"}), 400, "invalid")
    error_of(page.post("/api/notes", json={"summary": "x", "private": "yes"}), 400, "invalid")
    error_of(page.post("/api/notes", json=["summary"]), 400, "invalid")
    bad = page.post("/api/notes", content=b"{nope", headers={"Content-Type": "application/json"})
    assert "JSON" in error_of(bad, 400, "invalid")
    form = page.post("/api/notes", data={"summary": "x"})  # a form post is not JSON
    error_of(form, 400, "invalid")
    huge = page.post("/api/notes", json={"summary": "x", "body": "a" * (MAX_BODY_BYTES + 1)})
    error_of(huge, 413, "invalid")
    error_of(page.post("/api/notes", json={"summary": "x", "type": "boss"}), 400, "invalid")
    assert page.memory.notes.list() == []


def test_limits_are_refused(page: AsgiPage) -> None:
    too_big = page.memory.settings.max_note_bytes + 10
    answer = page.post("/api/notes", json={"summary": "big", "body": "word " * (too_big // 5)})
    error_of(answer, 422, "refused")


def test_note_view_links_backlinks_and_supersedes(page: AsgiPage) -> None:
    target = make(page, "Target note")
    source = make(page, "Source note", body=f"# Head\n\nsee [[{target['id']}]] and [[gone-note]]")
    newer = make(page, "Newer target", supersedes=[target["id"]])
    view = page.get(f"/api/notes/{source['id']}").json()
    assert view["body"].startswith("# Head")
    assert "<h1>Head</h1>" in view["html"]
    assert f'href="#/note/{target["id"]}" class="wikilink"' in view["html"]
    assert 'class="wikilink dangling"' in view["html"]
    assert view["links"] == [
        {"target": target["id"], "scope": "project", "summary": "Target note"},
        {"target": "gone-note", "scope": None, "summary": None},
    ]
    assert view["revision"] == source["revision"]
    back = page.get(f"/api/notes/{target['id']}").json()
    assert back["backlinks"] == [
        {"target": source["id"], "scope": "project", "summary": "Source note"}
    ]
    assert back["superseded_by"] == [newer["id"]]
    error_of(page.get("/api/notes/no-such-note"), 404, "not_found")
    error_of(page.get("/api/notes/Bad..Id"), 400, "invalid")
    error_of(page.get(f"/api/notes/{target['id']}?scope=team"), 400, "invalid")


def test_save_checks_the_revision_and_never_overwrites(page: AsgiPage) -> None:
    note = make(page, "Port is 8080", body="old body", tags=["net"])
    saved = page.put(
        f"/api/notes/{note['id']}",
        json={"revision": note["revision"], "summary": "Port is 8081", "body": "new body"},
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["summary"] == "Port is 8081"
    assert saved.json()["tags"] == ["net"]  # not given: kept
    assert saved.json()["revision"] != note["revision"]
    # A second tab still holds the first revision: refused, with the note as it is now.
    stale = page.put(
        f"/api/notes/{note['id']}",
        json={"revision": note["revision"], "summary": "Port is 9090", "body": "other tab"},
    )
    error_of(stale, 409, "conflict")
    current = stale.json()["current"]
    assert current["summary"] == "Port is 8081" and current["body"] == "new body"
    assert current["revision"] == saved.json()["revision"]
    assert page.memory.read(note["id"]).summary == "Port is 8081"
    # Edited on disk meanwhile: the same.
    path = page.memory.stores.directory("project") / f"{note['id']}.md"
    path.write_text(path.read_text().replace("new body", "edited in an editor"))
    on_disk = page.put(
        f"/api/notes/{note['id']}",
        json={"revision": current["revision"], "summary": "x", "body": "y"},
    )
    assert error_of(on_disk, 409, "conflict")
    assert "edited in an editor" in on_disk.json()["current"]["body"]
    backups = page.get("/api/backups").json()["backups"]
    assert any(b["reason"] == "edit on the memory page" for b in backups)


def test_save_errors(page: AsgiPage) -> None:
    note = make(page, "A note")
    other = make(page, "Another note", supersedes=[note["id"]])
    url = f"/api/notes/{note['id']}"
    rev = note["revision"]
    error_of(page.put(url, json={"summary": "x"}), 400, "invalid")  # no revision
    error_of(page.put(url, json={"revision": rev}), 400, "invalid")  # no summary
    error_of(page.put(url, json={"revision": rev, "summary": "x", "tags": 3}), 400, "invalid")
    error_of(
        page.put("/api/notes/not-a-note", json={"revision": rev, "summary": "x"}), 404, "not_found"
    )
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    refused = page.put(url, json={"revision": rev, "summary": "x", "body": f"token {secret}"})
    assert secret not in error_of(refused, 422, "refused")
    assert secret not in refused.text
    cycle = page.put(url, json={"revision": rev, "summary": "A note", "supersedes": [other["id"]]})
    error_of(cycle, 422, "refused")
    itself = page.put(url, json={"revision": rev, "summary": "A note", "supersedes": [note["id"]]})
    error_of(itself, 400, "invalid")
    unknown = page.put(url, json={"revision": rev, "summary": "A note", "supersedes": ["nope"]})
    error_of(unknown, 404, "not_found")
    assert page.memory.read(note["id"]).supersedes == ()


def test_history_and_diff(page: AsgiPage) -> None:
    note = make(page, "Timeout is 30 s", body="one")
    second = page.put(
        f"/api/notes/{note['id']}",
        json={"revision": note["revision"], "summary": "Timeout is 45 s", "body": "two"},
    ).json()
    entries = page.get(f"/api/notes/{note['id']}/history").json()["entries"]
    assert [e["revision"] for e in entries] == [note["revision"], second["revision"]]
    assert [e["current"] for e in entries] == [False, True]
    assert set(entries[0]) == {"revision", "ts", "event", "current"}
    diff = page.get(f"/api/notes/{note['id']}/diff").json()["diff"]
    assert "-summary: Timeout is 30 s" in diff and "+summary: Timeout is 45 s" in diff
    both = page.get(
        f"/api/notes/{note['id']}/diff?a={note['revision'][:12]}&b={second['revision']}"
    ).json()["diff"]
    assert both == diff
    error_of(page.get(f"/api/notes/{note['id']}/diff?a=zz"), 400, "invalid")
    error_of(page.get(f"/api/notes/{note['id']}/diff?a=abcdef"), 404, "not_found")
    error_of(page.get("/api/notes/no-such/history"), 404, "not_found")


def test_forget_plans_then_confirms(page: AsgiPage) -> None:
    note = make(page, "Short lived")
    url = f"/api/notes/{note['id']}/forget"
    plan = page.post(url, json={"confirm": False})
    assert plan.status_code == 200
    assert plan.json()["note"]["id"] == note["id"] and plan.json()["keeps_backup"] is True
    error_of(page.post(url, json={"confirm": True}), 400, "invalid")  # no hash
    error_of(page.post(url, json={"confirm": True, "hash": "0" * 64}), 409, "conflict")
    done = page.post(url, json={"confirm": True, "hash": plan.json()["note"]["hash"]})
    assert done.status_code == 200, done.text
    assert done.json()["note_id"] == note["id"] and done.json()["backup"]["id"]
    assert page.memory.notes.list() == []
    error_of(page.post(url, json={"confirm": False}), 404, "not_found")


def test_backups_and_restore(page: AsgiPage) -> None:
    note = make(page, "Keep me")
    plan = page.post(f"/api/notes/{note['id']}/forget", json={}).json()
    page.post(
        f"/api/notes/{note['id']}/forget", json={"confirm": True, "hash": plan["note"]["hash"]}
    )
    backups = page.get("/api/backups").json()["backups"]
    assert backups and backups[0]["note_id"] == note["id"] and backups[0]["reason"]
    restored = page.post(f"/api/backups/{backups[0]['id']}/restore")
    assert restored.status_code == 200, restored.text
    assert restored.json()["note"]["id"] == note["id"]
    assert [n.id for n in page.memory.notes.list()] == [note["id"]]
    error_of(page.post("/api/backups/20260101-nothing-abcd/restore"), 404, "not_found")
    assert page.post("/api/backups/..%2f..%2fx/restore").status_code in (400, 404, 405)
    error_of(page.post("/api/backups/a.b/restore"), 400, "invalid")


# -- search and changes --------------------------------------------------------------------


def test_search(page: AsgiPage) -> None:
    hit = make(page, "Deploys use blue-green switching", tags=["ops"])
    make(page, "Lunch is at noon")
    make(page, "A private deploy detail", private=True)
    found = page.get("/api/search?q=deploys").json()
    assert found["hits"][0]["id"] == hit["id"]
    # Private notes are never indexed, so never found.
    assert all("private" not in h["summary"] for h in found["hits"])
    lexical = page.get("/api/search?q=deploys&method=lexical").json()
    assert [h["id"] for h in lexical["hits"]] == [hit["id"]]
    assert set(found["hits"][0]) >= {"id", "scope", "summary", "snippet", "score", "superseded_by"}
    assert found["method"] in ("hybrid", "lexical") and found["warnings"] == []
    phrase = page.get("/api/search?q=blue-green+switching&mode=phrase&method=lexical").json()
    assert [h["id"] for h in phrase["hits"]] == [hit["id"]]
    assert page.get("/api/search?q=").json() == {"hits": [], "method": None, "warnings": []}
    assert page.get("/api/search?q=deploys&tag=nope").json()["hits"] == []
    assert len(page.get("/api/search?q=deploys+lunch&limit=1").json()["hits"]) == 1
    error_of(page.get("/api/search?q=x&mode=some"), 400, "invalid")
    error_of(page.get("/api/search?q=x&limit=0"), 400, "invalid")
    error_of(page.get("/api/search?q=x&limit=ten"), 400, "invalid")
    error_of(page.get("/api/search?q=x&method=magic"), 400, "invalid")


def test_changes_stamp_follows_every_change(page: AsgiPage) -> None:
    stamp = page.get("/api/changes").json()["stamp"]
    assert page.get("/api/changes").json()["stamp"] == stamp
    note = make(page, "First")
    after_write = page.get("/api/changes").json()["stamp"]
    assert after_write != stamp
    path = page.memory.stores.directory("project") / f"{note['id']}.md"
    time.sleep(0.01)
    path.write_text(path.read_text() + "\nedited on disk\n")
    after_edit = page.get("/api/changes").json()["stamp"]
    assert after_edit != after_write
    path.unlink()
    assert page.get("/api/changes").json()["stamp"] not in (after_edit, after_write)


# -- tidy-up list ------------------------------------------------------------------------------


def test_tidy_sends_every_finding_kind_with_its_label_and_actions(page: AsgiPage) -> None:
    """The page names findings and offers actions from what the server sends, so a kind
    memdir adds reaches the page without the page restating the vocabulary."""
    kinds = page.get("/api/tidy").json()["kinds"]
    assert list(kinds) == [k.value for k in FindingKind]
    assert kinds[FindingKind.SAME_TOPIC] == {
        "label": "Same topic",
        "merge": True,
        "supersede": False,
    }
    assert kinds[FindingKind.CONTRADICTION] == {
        "label": "Contradiction",
        "merge": True,
        "supersede": True,
    }
    assert kinds[FindingKind.BROKEN_LINK] == {
        "label": "Broken link",
        "merge": False,
        "supersede": False,
    }


def test_tidy_dismiss_merge_apply_and_supersede(page: AsgiPage) -> None:
    a = make(page, "The build cache lives in /var/cache/build", tags=["build", "cache"])
    b = make(page, "Build cache lives in /var/cache/build on CI", tags=["build", "cache"])
    c = make(page, "Broken link here", body="[[missing-one]]")
    findings = page.get("/api/tidy").json()["findings"]
    kinds = {f["kind"] for f in findings}
    assert "broken_link" in kinds
    broken = next(f for f in findings if f["kind"] == "broken_link")
    assert broken["notes"] == [c["id"]]
    dismissed = page.post("/api/tidy/dismiss", json={"id": broken["id"]}).json()
    assert dismissed["changed"] is True
    assert broken["id"] not in {f["id"] for f in page.get("/api/tidy").json()["findings"]}
    error_of(page.post("/api/tidy/dismiss", json={"id": "nope"}), 404, "not_found")
    error_of(page.post("/api/tidy/dismiss", json={}), 400, "invalid")
    error_of(page.get("/api/tidy?kind=weird"), 400, "invalid")

    plan = page.post("/api/tidy/merge", json={"ids": [a["id"], b["id"]], "summary": "Build cache"})
    assert plan.status_code == 200, plan.text
    planned = plan.json()
    assert planned["keep"] == a["id"] and planned["deletes"] == [b["id"]]
    assert planned["draft"]["summary"] == "Build cache"
    planned["draft"]["body"] = "Edited by hand before applying."
    applied = page.post("/api/tidy/apply", json={"plan": planned})
    assert applied.status_code == 200, applied.text
    assert applied.json()["kept"] == a["id"] and applied.json()["deleted"] == [b["id"]]
    assert page.memory.read(a["id"]).body == "Edited by hand before applying."
    stale = page.post("/api/tidy/apply", json={"plan": planned})  # the originals changed
    assert stale.status_code in (404, 409), stale.text
    error_of(page.post("/api/tidy/merge", json={"ids": [a["id"]]}), 400, "invalid")
    error_of(page.post("/api/tidy/apply", json={"plan": {"format": "x"}}), 400, "invalid")

    d = make(page, "Old decision")
    e = make(page, "New decision")
    done = page.post("/api/supersede", json={"old": d["id"], "by": e["id"]})
    assert done.status_code == 200, done.text
    assert done.json()["changed"] is True and done.json()["new"]["supersedes"] == [d["id"]]
    error_of(page.post("/api/supersede", json={"old": e["id"], "by": d["id"]}), 422, "refused")
    error_of(page.post("/api/supersede", json={"old": "nope", "by": e["id"]}), 404, "not_found")
    error_of(page.post("/api/supersede", json={"old": d["id"]}), 400, "invalid")


# -- sync ----------------------------------------------------------------------------------------


def test_sync_status_switch_and_errors(page: AsgiPage) -> None:
    status = page.get("/api/sync").json()
    assert status["server"] is None
    assert {s["scope"] for s in status["scopes"]} == {"project", "user"}
    assert all(s["last_pull"] is None and s["error"] is None for s in status["scopes"])
    assert page.post("/api/sync/switch", json={"on": False}).json()["enabled"] is False
    off = page.post("/api/sync/now")
    assert error_of(off, 422, "refused") and off.json()["error"]["hint"] == "sync-on"
    on = page.post("/api/sync/switch", json={"on": True}).json()
    assert on["enabled"] is True
    error_of(page.post("/api/sync/switch", json={"on": "yes"}), 400, "invalid")
    refused = page.post("/api/sync/now")  # signed out
    assert "sign" in error_of(refused, 422, "refused")
    assert refused.json()["error"]["hint"] == "sync-login"
    assert page.post("/api/sync/switch", json={"on": False}).json()["enabled"] is False
    assert page.get("/api/sync/conflicts").json() == {"conflicts": []}
    error_of(page.post("/api/sync/resolve", json={"id": "a-note"}), 400, "invalid")
    both = {"id": "a-note", "keep": "local", "text": "x"}
    error_of(page.post("/api/sync/resolve", json=both), 400, "invalid")
    error_of(page.post("/api/sync/resolve", json={"id": "a-note", "keep": "mine"}), 400, "invalid")
    gone = page.post("/api/sync/resolve", json={"id": "a-note", "keep": "local"})
    assert gone.status_code in (404, 422), gone.text
    error_of(page.get("/api/sync/draft?id=a-note"), 404, "not_found")


def test_sync_now_against_a_real_server(page: AsgiPage, tmp_path: Path) -> None:
    from sync_server import add_user, running_server

    data = tmp_path / "server-data"
    token = add_user(data, "alice")
    make(page, "Synced note")
    with running_server(data) as server:
        page.memory.sync.login(server.url, token)
        page.post("/api/sync/switch", json={"on": True})
        run = page.post("/api/sync/now")
        assert run.status_code == 200, run.text
        body = run.json()
        assert body["errors"] == {} and body["conflicts"] == 0
        assert {r["scope"] for r in body["reports"]} == {"project", "user"}
        status = page.get("/api/sync").json()
        assert status["server"] == server.url and status["user"] == "alice"
        assert all(s["last_sync"] for s in status["scopes"])
        assert all(
            s["last_pull"] == {"added": 0, "changed": 0, "removed": 0} for s in status["scopes"]
        )
    failed = page.post("/api/sync/now", json={"scope": "project"})  # the server is gone
    assert error_of(failed, 503, "unavailable").startswith("the project scope: ")
    assert set(failed.json()["errors"]) == {"project"}
    scopes = {s["scope"]: s for s in page.get("/api/sync").json()["scopes"]}
    assert scopes["project"]["error"]["kind"] == "unavailable"
    assert scopes["user"]["error"] is None


# -- the real server and the command -------------------------------------------------------------


def test_the_real_server_answers_the_api(ui_server: UiServer) -> None:
    with ui_server.client() as client:
        made = client.post("/api/notes", json={"summary": "Over loopback"})
        assert made.status_code == 201
        assert client.get("/api/notes").json()["notes"][0]["summary"] == "Over loopback"
        assert client.get(f"/api/notes/{made.json()['id']}").json()["html"] == ""
        assert client.get("/api/notes/nope").status_code == 404
    assert ui_server.url == f"{ui_server.base}/#token={ui_server.token}"
    assert ui_server.memory.notes.list()[0].summary == "Over loopback"


def test_memdir_ui_as_a_process(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    with Memory.open(project, home=home) as memory:
        memory.remember("Seen by the page")
    env = {**os.environ, "MEMDIR_HOME": str(home)}
    command = [sys.executable, "-c", "from memdir.cli.main import main; main()"]
    proc = subprocess.Popen(
        [*command, "--project", str(project), "ui", "--json", "--no-open", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = json.loads(line)["url"]
        assert url.startswith("http://127.0.0.1:") and "/#token=" in url
        base, token = url.split("/#token=")
        assert len(token) >= 43
        front = httpx.get(base + "/", timeout=10)
        assert front.status_code in (200, 404)  # the page's files may not be built yet
        assert front.headers["x-frame-options"] == "DENY"
        notes = httpx.get(
            base + "/api/notes", headers={"Authorization": f"Bearer {token}"}, timeout=10
        )
        assert [n["summary"] for n in notes.json()["notes"]] == ["Seen by the page"]
        assert httpx.get(base + "/api/notes", timeout=10).status_code == 401
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_memdir_ui_refuses_a_port_in_use(tmp_path: Path) -> None:
    import socket

    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    env = {**os.environ, "MEMDIR_HOME": str(tmp_path / "home")}
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "from memdir.cli.main import main; main()",
                "--project",
                str(tmp_path),
                "ui",
                "--no-open",
                "--port",
                str(port),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    finally:
        holder.close()
    assert done.returncode == 1
    assert f"port {port}" in done.stderr and "in use" in done.stderr
    assert "Traceback" not in done.stderr


def test_bind_refuses_another_host() -> None:
    from memdir.errors import InvalidInput
    from memdir.web.serve import bind

    with pytest.raises(InvalidInput, match=r"127\.0\.0\.1 only"):
        bind(0, "0.0.0.0")


def test_save_with_an_empty_type_clears_it_and_null_keeps_it(page: AsgiPage) -> None:
    note = make(page, "Deploys need a ticket", body="Always.", type="project")
    kept = page.put(
        f"/api/notes/{note['id']}",
        json={
            "revision": note["revision"],
            "summary": "Deploys need a ticket",
            "type": None,
            "body": "Always, even on Fridays.",
        },
    )
    assert kept.status_code == 200, kept.text
    assert kept.json()["type"] == "project"
    cleared = page.put(
        f"/api/notes/{note['id']}",
        json={"revision": kept.json()["revision"], "summary": "Deploys need a ticket", "type": ""},
    )
    assert cleared.status_code == 200, cleared.text
    assert cleared.json()["type"] is None
    assert page.memory.read(note["id"]).type is None


def test_a_non_ascii_digit_limit_is_an_invalid_json_answer(page: AsgiPage) -> None:
    r = page.request("GET", "/api/search", params={"q": "deploy", "limit": "²"})
    assert r.status_code == 400, (r.status_code, r.headers.get("content-type"), r.text)
    assert r.json()["error"]["kind"] == "invalid"


def test_a_link_to_a_note_of_the_other_scope_is_not_dangling(page: AsgiPage) -> None:
    user = page.memory.remember("Prefers tabs", "I indent with tabs.", scope="user")
    project = page.memory.remember("Editor setup", f"See [[{user.note.id}]].", scope="project")
    assert page.memory.notes.links(project.note.id).outgoing[0].scope is not None  # it resolves
    view = page.request("GET", f"/api/notes/{project.note.id}", params={"scope": "project"})
    assert view.status_code == 200, view.text
    data = view.json()
    assert "dangling" not in data["html"], data["html"]
    assert data["links"] == [
        {"target": user.note.id, "scope": "user", "summary": "Prefers tabs"}
    ], data["links"]
    back = page.request("GET", f"/api/notes/{user.note.id}", params={"scope": "user"}).json()
    assert [b["target"] for b in back["backlinks"]] == [project.note.id], back["backlinks"]
