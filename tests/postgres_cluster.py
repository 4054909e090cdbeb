"""A throwaway PostgreSQL cluster for the tests and CI: initdb in a temp dir, loopback only.

From Python: `cluster = start_cluster()`, then `cluster.dsn`, and `cluster.stop()`.
From a shell (CI)::

    python tests/postgres_cluster.py start --env-file F   # writes MEMDIR_TEST_PG_DSN=... to F
    python tests/postgres_cluster.py stop --env-file F    # stops it and removes its files

The server binaries are found on PATH, else under /usr/lib/postgresql/<version>/bin
(Debian), newest version first; `PG_BINDIR` overrides both. initdb and postgres refuse
to run as root, so as root they run as the `postgres` OS user. The cluster listens on
127.0.0.1 only, on a free port, with its unix socket in its own directory, trusts
loopback connections and runs with fsync off: it is for tests only.
"""

from __future__ import annotations

import argparse
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cluster", "ClusterUnavailable", "find_bindir", "start_cluster", "stop_cluster"]

DSN_VAR = "MEMDIR_TEST_PG_DSN"
DIR_VAR = "MEMDIR_TEST_PG_DIR"
_SUPERUSER = "postgres"


class ClusterUnavailable(RuntimeError):
    """Raised when no cluster can be started here; the message says why."""


@dataclass(frozen=True)
class Cluster:
    """A running throwaway cluster."""

    dsn: str
    root: Path
    bindir: Path
    port: int

    @property
    def data_dir(self) -> Path:
        """The cluster's data directory."""
        return self.root / "data"

    def stop(self) -> None:
        """Stop the server and remove every file of the cluster."""
        stop_cluster(self.root, self.bindir)


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", path.parent.name))


def find_bindir() -> Path:
    """The directory holding initdb, pg_ctl and postgres."""
    override = os.environ.get("PG_BINDIR")
    if override:
        if not (Path(override) / "initdb").is_file():
            raise ClusterUnavailable(f"PG_BINDIR={override} holds no initdb")
        return Path(override)
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).resolve().parent
    candidates = sorted(
        (p.parent for p in Path("/usr/lib/postgresql").glob("*/bin/initdb") if p.is_file()),
        key=lambda bindir: _version_key(bindir),
        reverse=True,
    )
    if not candidates:
        raise ClusterUnavailable(
            "no PostgreSQL server binaries (initdb) on PATH or under /usr/lib/postgresql/*/bin"
            " (Debian: apt-get install postgresql)"
        )
    return candidates[0]


def _as_server_user(argv: list[str]) -> list[str]:
    """`argv` run as the postgres OS user when we are root (initdb refuses root)."""
    if os.geteuid() != 0:
        return argv
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", _SUPERUSER, "--", *argv]
    return ["su", _SUPERUSER, "-s", "/bin/sh", "-c", " ".join(_quote(a) for a in argv)]


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


def _run(argv: list[str], cwd: Path, what: str) -> None:
    result = subprocess.run(
        _as_server_user(argv), cwd=cwd, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()[-2000:]
        raise ClusterUnavailable(f"{what} failed (exit {result.returncode}): {output}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _owned_by_server_user(path: Path) -> None:
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam(_SUPERUSER)
        except KeyError:
            raise ClusterUnavailable(
                "running as root, and there is no `postgres` OS user to run initdb and postgres as"
            ) from None
        os.chown(path, entry.pw_uid, entry.pw_gid)


def start_cluster(*, attempts: int = 3) -> Cluster:
    """initdb a new cluster in a temp dir and start it; raises `ClusterUnavailable`."""
    bindir = find_bindir()
    root = Path(tempfile.mkdtemp(prefix="memdir-pg-"))
    try:
        root.chmod(0o700)
        _owned_by_server_user(root)
        data = root / "data"
        _run(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                _SUPERUSER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            root,
            "initdb",
        )
        last_error: ClusterUnavailable | None = None
        for _ in range(attempts):
            port = _free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {port} -k {root}"
                " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
                " -c max_connections=300 -c shared_buffers=32MB"
            )
            try:
                _run(
                    [
                        str(bindir / "pg_ctl"),
                        "start",
                        "-D",
                        str(data),
                        "-l",
                        str(root / "server.log"),
                        "-w",
                        "-t",
                        "60",
                        "-o",
                        options,
                    ],
                    root,
                    "pg_ctl start",
                )
            except ClusterUnavailable as error:
                # Most likely the port was taken between choosing and binding it.
                log = root / "server.log"
                tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
                last_error = ClusterUnavailable(f"{error}\n{tail}")
                continue
            dsn = f"postgresql://{_SUPERUSER}@127.0.0.1:{port}/postgres"
            return Cluster(dsn=dsn, root=root, bindir=bindir, port=port)
        assert last_error is not None
        raise last_error
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def stop_cluster(root: Path, bindir: Path | None = None) -> None:
    """Stop the cluster under `root` (if running) and remove its files."""
    data = root / "data"
    if (data / "postmaster.pid").exists():
        bindir = bindir or find_bindir()
        _run(
            [str(bindir / "pg_ctl"), "stop", "-D", str(data), "-m", "fast", "-w", "-t", "60"],
            root,
            "pg_ctl stop",
        )
    shutil.rmtree(root, ignore_errors=True)


def _read_env_file(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip()
    return values


def main(argv: list[str] | None = None) -> int:
    """`start --env-file F` or `stop --env-file F`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["start", "stop"])
    parser.add_argument("--env-file", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.command == "start":
        try:
            cluster = start_cluster()
        except ClusterUnavailable as error:
            print(f"postgres_cluster: {error}", file=sys.stderr)
            return 1
        args.env_file.write_text(f"{DSN_VAR}={cluster.dsn}\n{DIR_VAR}={cluster.root}\n")
        print(f"postgres_cluster: started on 127.0.0.1:{cluster.port} in {cluster.root}")
        return 0
    if not args.env_file.exists():
        print(f"postgres_cluster: {args.env_file} does not exist; nothing to stop")
        return 0
    root = _read_env_file(args.env_file).get(DIR_VAR)
    if not root:
        print(f"postgres_cluster: no {DIR_VAR} in {args.env_file}", file=sys.stderr)
        return 1
    try:
        stop_cluster(Path(root))
    except ClusterUnavailable as error:
        print(f"postgres_cluster: {error}", file=sys.stderr)
        return 1
    print(f"postgres_cluster: stopped and removed {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
