"""`memdir server serve --backend s3` against a real S3-compatible server (SeaweedFS on
loopback): the API over it, machines racing for one scope, the server killed mid-commit,
and the object store failing under it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from fault_proxy import FaultProxy
from memdir import Memory
from memdir.core import Note, render_note
from memdir.sync.protocol import rev_of
from sync_server import RunningServer, add_user, admin_key, auth_headers, running_server

S3 = tuple[str, str, str]
USER_SCOPE = {"kind": "user"}


def _put(note_id: str, body: str, base: str | None = None) -> dict[str, Any]:
    text = render_note(Note(id=note_id, summary=f"about {note_id}", body=body)).decode()
    return {"id": note_id, "op": "put", "base": base, "rev": rev_of(text.encode()), "text": text}


@contextmanager
def _server(data: Path, endpoint: str, bucket: str, prefix: str) -> Iterator[RunningServer]:
    args = ["--s3-endpoint", endpoint, "--bucket", bucket, "--prefix", prefix, "--rate-limit", "0"]
    with running_server(data, backend="s3", extra_args=args) as server:
        yield server


def test_the_s3_backend_over_http(tmp_path: Path, s3_bucket: S3) -> None:
    token, key = add_user(tmp_path, "alice"), admin_key(tmp_path)
    change = _put("s3-note", "stored in the object store")
    with _server(tmp_path, *s3_bucket) as running:
        # The bucket's first writes can take seconds on a loaded machine: not httpx's 5 s.
        client = httpx.Client(base_url=running.url, headers=auth_headers(token), timeout=60)
        with client:
            done = client.post("/v1/memory/commit", json={"scope": USER_SCOPE, "changes": [change]})
            assert done.status_code == 200, done.text
            snap = client.post("/v1/memory/snapshot", json={"scope": USER_SCOPE}).json()
            assert snap["objects"] == {change["rev"]: change["text"]}
            erased = client.post(
                "/v1/admin/erase", json={"user": "alice"}, headers=auth_headers(key)
            )
            assert erased.status_code == 200, erased.text
            assert client.get("/v1/memory/identity").status_code == 410
        assert "AWS_SECRET" not in running.stderr() and "secret" not in running.stderr().lower()
    assert not (tmp_path / "users").exists()  # notes went to the bucket, not the data dir


def test_the_s3_backend_needs_its_options(tmp_path: Path, s3_bucket: S3) -> None:
    with pytest.raises(RuntimeError, match="--s3-endpoint"), running_server(tmp_path, backend="s3"):
        pass
    endpoint, _bucket, prefix = s3_bucket
    args = ["--s3-endpoint", endpoint, "--bucket", "no-such-bucket-here", "--prefix", prefix]
    refused = pytest.raises(RuntimeError, match=r"cannot open the S3 storage|did not open")
    with refused, running_server(tmp_path, backend="s3", extra_args=args):
        pass


def test_machines_syncing_one_account_at_once_converge(tmp_path: Path, s3_bucket: S3) -> None:
    token = add_user(tmp_path / "server", "alice")
    with _server(tmp_path / "server", *s3_bucket) as running:
        machines = []
        for i in range(4):
            home = tmp_path / f"m{i}"
            m = Memory.open(None, home=home, embedder=None)
            m.sync.login(running.url, token)
            machines.append(m)
        try:
            errors: list[BaseException] = []

            def work(i: int) -> None:
                try:
                    for n in range(3):
                        machines[i].remember(
                            f"note {i}-{n}", body=f"from machine {i}", scope="user"
                        )
                        machines[i].sync.run()
                except BaseException as exc:
                    errors.append(exc)

            threads = [threading.Thread(target=work, args=(i,)) for i in range(len(machines))]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=300)
            assert not errors, errors
            for _ in range(2):  # everyone pulls what the others pushed last
                for m in machines:
                    m.sync.run()
            wanted = {f"note {i}-{n}" for i in range(4) for n in range(3)}
            for m in machines:
                assert {n.summary for n in m.notes.list()} == wanted
        finally:
            for m in machines:
                m.close()


def test_a_server_killed_mid_commit_leaves_the_last_manifest(tmp_path: Path, s3_bucket: S3) -> None:
    endpoint, bucket, prefix = s3_bucket
    data = tmp_path / "server"
    token = add_user(data, "alice")
    first = [_put(f"first-{i}", "one") for i in range(3)]
    batch = [_put(f"note-{i}", f"body {i}") for i in range(60)]
    with FaultProxy(endpoint, keep_host=True) as proxy:
        with _server(data, proxy.url, bucket, prefix) as running:
            client = httpx.Client(base_url=running.url, headers=auth_headers(token), timeout=60)
            with client:
                ok = client.post("/v1/memory/commit", json={"scope": USER_SCOPE, "changes": first})
                assert ok.status_code == 200, ok.text
                # The 20th revision of the next commit kills the server before it is stored.
                proxy.script("/objects/note-", "pass", times=20)
                proxy.script("/objects/note-", "refuse", before=running.kill)
                with pytest.raises(httpx.HTTPError):
                    client.post(
                        "/v1/memory/commit",
                        json={"scope": USER_SCOPE, "changes": batch},
                        timeout=60,
                    )
            assert running.process.wait(timeout=30) != 0  # killed by the hook
        proxy.clear()
        with (
            _server(data, proxy.url, bucket, prefix) as again,
            httpx.Client(base_url=again.url, headers=auth_headers(token), timeout=60) as client,
        ):
            snap = client.post("/v1/memory/snapshot", json={"scope": USER_SCOPE}).json()
            assert sorted(snap["notes"]) == sorted(c["id"] for c in first)
            assert set(snap["objects"]) == {c["rev"] for c in first}
            retry = client.post("/v1/memory/commit", json={"scope": USER_SCOPE, "changes": batch})
            assert retry.status_code == 200, retry.text
            snap = client.post("/v1/memory/snapshot", json={"scope": USER_SCOPE}).json()
            assert len(snap["notes"]) == len(first) + len(batch)
            assert set(snap["objects"]) == {c["rev"] for c in first + batch}


def test_an_object_store_failing_under_the_server_is_a_503_then_heals(
    tmp_path: Path, s3_bucket: S3
) -> None:
    endpoint, bucket, prefix = s3_bucket
    token = add_user(tmp_path, "alice")
    with (
        FaultProxy(endpoint, keep_host=True) as proxy,
        _server(tmp_path, proxy.url, bucket, prefix) as running,
    ):
        with httpx.Client(base_url=running.url, headers=auth_headers(token), timeout=60) as client:
            proxy.script("manifest.json", "500", times=100)
            failed = client.post("/v1/memory/snapshot", json={"scope": USER_SCOPE})
            assert failed.status_code == 503, failed.text
            assert failed.headers.get("Retry-After")
            assert failed.json()["error"] == "busy"
            proxy.clear()
            proxy.script("manifest.json", "delay", seconds=0.3, times=4)
            done = client.post(
                "/v1/memory/commit", json={"scope": USER_SCOPE, "changes": [_put("n", "x")]}
            )
            assert done.status_code == 200, done.text
        assert "Traceback" not in running.stderr()
