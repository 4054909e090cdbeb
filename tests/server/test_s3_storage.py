"""The S3 backend against a real S3-compatible server (SeaweedFS on loopback): credentials,
conditional writes, the object store failing or slowing down. The `Storage` contract
itself runs in test_storage_contract.py on every backend."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from fault_proxy import FaultProxy
from memdir.errors import Busy, InvalidInput, MemdirError
from memdir.server.storage.s3 import S3Storage
from memdir.sync.protocol import Entry, Manifest, rev_of

S3 = tuple[str, str, str]


def _manifest(version: int, note: str) -> Manifest:
    data = note.encode()
    entry = Entry(rev=rev_of(data), hash=rev_of(data), size=len(data), updated_at=version)
    return Manifest(version=version, notes={note: entry})


@pytest.fixture
def proxied(s3_bucket: S3) -> Iterator[tuple[S3Storage, FaultProxy]]:
    """A storage whose every request goes through a scriptable proxy to the object store."""
    endpoint, bucket, prefix = s3_bucket
    with FaultProxy(endpoint, keep_host=True) as proxy:
        storage = S3Storage(proxy.url, bucket, prefix=prefix)
        try:
            yield storage, proxy
        finally:
            storage.close()


def test_wrong_credentials_are_refused_at_open(
    s3_bucket: S3, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint, bucket, prefix = s3_bucket
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    with pytest.raises(Exception) as raised:
        S3Storage(endpoint, bucket, prefix=prefix)
    assert "not-the-secret" not in str(raised.value)


def test_no_credentials_is_a_clear_error_and_asks_no_metadata_service(
    s3_bucket: S3, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    endpoint, bucket, prefix = s3_bucket
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", f"{tmp_path}/none")
    monkeypatch.setenv("AWS_CONFIG_FILE", f"{tmp_path}/none")
    with pytest.raises(MemdirError, match="no S3 credentials"):
        S3Storage(endpoint, bucket, prefix=prefix)


def test_credentials_from_the_shared_credentials_file(
    s3_bucket: S3, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    import os
    from pathlib import Path

    endpoint, bucket, prefix = s3_bucket
    key, secret = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    path = Path(str(tmp_path)) / "credentials"
    path.write_text(f"[default]\naws_access_key_id = {key}\naws_secret_access_key = {secret}\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(path))
    storage = S3Storage(endpoint, bucket, prefix=prefix)
    try:
        assert storage.swap_manifest("alice", "user", 0, _manifest(1, "a"))
    finally:
        storage.close()


def test_a_bad_prefix_is_refused(s3_bucket: S3) -> None:
    endpoint, bucket, _ = s3_bucket
    for prefix in ("/abs", "a/../b"):
        with pytest.raises(InvalidInput):
            S3Storage(endpoint, bucket, prefix=prefix)


def test_a_revision_is_written_once_and_never_overwritten(
    proxied: tuple[S3Storage, FaultProxy],
) -> None:
    storage, proxy = proxied
    data = b"the first bytes"
    storage.put_objects("alice", "user", [("n", rev_of(data), data)])
    storage.put_objects("alice", "user", [("n", rev_of(data), data)])
    puts = [r for r in proxy.requests("/objects/n/") if r.method == "PUT"]
    assert len(puts) == 2 and all(r.status in (200, 412) for r in puts)
    assert [r.status for r in puts].count(200) == 1  # the second met If-None-Match: *
    assert storage.objects("alice", "user", {rev_of(data): "n"}) == {rev_of(data): data}


def test_transient_5xx_and_slow_answers_are_retried(proxied: tuple[S3Storage, FaultProxy]) -> None:
    storage, proxy = proxied
    proxy.script("manifest.json", "500", times=2)
    assert storage.swap_manifest("alice", "user", 0, _manifest(1, "a"))
    proxy.script("manifest.json", "delay", seconds=0.5, times=2)
    assert storage.manifest("alice", "user").version == 1
    assert storage.swap_manifest("alice", "user", 1, _manifest(2, "b"))
    assert proxy.pending() == 0


def test_a_store_that_keeps_failing_is_busy_and_changes_nothing(
    proxied: tuple[S3Storage, FaultProxy],
) -> None:
    storage, proxy = proxied
    assert storage.swap_manifest("alice", "user", 0, _manifest(1, "a"))
    proxy.script("manifest.json", "500", times=50)
    with pytest.raises(Busy, match="try again"):
        storage.swap_manifest("alice", "user", 1, _manifest(2, "b"))
    proxy.clear()
    assert storage.manifest("alice", "user") == _manifest(1, "a")


def test_an_answer_lost_after_the_swap_landed_still_reports_the_win(
    proxied: tuple[S3Storage, FaultProxy],
) -> None:
    storage, proxy = proxied
    assert storage.swap_manifest("alice", "user", 0, _manifest(1, "a"))
    # The PUT is applied, its answer lost; botocore retries, meets If-Match on the old ETag
    # (412), and the read-back finds this swap's own bytes.
    proxy.script("manifest.json", "drop", times=1, method="PUT")
    assert storage.swap_manifest("alice", "user", 1, _manifest(2, "b")) is True
    assert storage.manifest("alice", "user") == _manifest(2, "b")


def _race(storages: list[S3Storage], version: int) -> list[int]:
    """Every storage swaps from `version` at once; the indexes of those that won."""
    wins: list[int] = []
    barrier = threading.Barrier(len(storages))

    def race(i: int) -> None:
        barrier.wait()
        if storages[i].swap_manifest("bob", "user", version, _manifest(version + 1, f"m{i}")):
            wins.append(i)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(storages))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return wins


def test_machines_racing_through_separate_storages_never_both_win(s3_bucket: S3) -> None:
    endpoint, bucket, prefix = s3_bucket
    storages = [S3Storage(endpoint, bucket, prefix=prefix) for _ in range(6)]
    try:
        for version in range(4):
            wins = _race(storages, version)
            assert len(wins) == 1, wins
            assert storages[0].manifest("bob", "user") == _manifest(version + 1, f"m{wins[0]}")
    finally:
        for s in storages:
            s.close()
