"""The user's sync account on this machine: the on/off switch and the sign-in credentials.

Both live in `$MEMDIR_HOME/memory-sync/` (a 0700 directory). The switch is a file of
its own so it survives sign-outs and restarts (§7.1); the credentials file holds the
server URL, the account name and the bearer token, written with mode 0600. A token
is never accepted on the command line, never logged and never shown.
"""

from __future__ import annotations

import json
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import InvalidInput
from memdir.files.atomic import atomic_write, ensure_private_dir
from memdir.files.lock import DirLock

__all__ = ["Credentials", "SyncAccount", "check_token"]

#: A bearer token is printable ASCII without spaces (anything else could split a header).
_TOKEN = re.compile(r"[\x21-\x7e]{16,512}")
#: A team name (as `memdir.sync.protocol.check_team_name` checks it).
_TEAM = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def check_token(token: str) -> str:
    """The token with surrounding whitespace removed; InvalidInput when it is not usable."""
    token = token.strip()
    if not _TOKEN.fullmatch(token):
        raise InvalidInput(
            "that is not a sync token (expected 16–512 printable characters without spaces)"
        )
    return token


@dataclass(frozen=True, slots=True)
class Credentials:
    """Where and as whom this machine syncs."""

    server: str
    user: str
    token: str

    def __repr__(self) -> str:  # never show the token, even in a traceback
        return f"Credentials(server={self.server!r}, user={self.user!r}, token=<hidden>)"


class SyncAccount:
    """The switch and the credentials in one `memory-sync` directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._switch = root / "switch.json"
        self._credentials = root / "credentials.json"
        self._teams = root / "teams.json"

    @property
    def enabled(self) -> bool:
        """Whether cloud requests are allowed (on unless the user switched sync off)."""
        try:
            doc = json.loads(self._switch.read_bytes())
        except (OSError, ValueError):
            return True
        return not (isinstance(doc, dict) and doc.get("enabled") is False)

    def set_enabled(self, on: bool) -> None:
        """Persist the switch."""
        ensure_private_dir(self.root)
        atomic_write(self._switch, json.dumps({"enabled": on}).encode() + b"\n", mode=0o600)

    def credentials(self) -> Credentials | None:
        """The stored sign-in, None when signed out (or the file is unreadable)."""
        try:
            info = self._credentials.stat()
            doc = json.loads(self._credentials.read_bytes())
        except (OSError, ValueError):
            return None
        if stat.S_IMODE(info.st_mode) & 0o077:
            self._credentials.chmod(0o600)  # someone loosened it: tighten again
        if not isinstance(doc, dict):
            return None
        server, user, token = doc.get("server"), doc.get("user"), doc.get("token")
        if not all(isinstance(v, str) and v for v in (server, user, token)):
            return None
        return Credentials(str(server), str(user), str(token))

    def save(self, credentials: Credentials) -> None:
        """Store the sign-in (0600)."""
        ensure_private_dir(self.root)
        doc = {"server": credentials.server, "user": credentials.user, "token": credentials.token}
        atomic_write(self._credentials, json.dumps(doc).encode() + b"\n", mode=0o600)

    def _teams_doc(self) -> dict[str, object]:
        try:
            doc = json.loads(self._teams.read_bytes())
        except FileNotFoundError:
            return {"projects": {}}
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"{self._teams} cannot be read ({exc}); fix or remove it") from None
        return doc if isinstance(doc, dict) else {}

    def _team_links(self) -> dict[str, str]:
        doc = self._teams_doc()
        links = doc.get("projects")
        if not isinstance(links, dict):
            raise InvalidInput(f"{self._teams} is not a team links file; fix or remove it")
        for project, team in links.items():
            if not isinstance(team, str) or not _TEAM.fullmatch(team):
                raise InvalidInput(
                    f"{self._teams} links project {str(project)[:80]} to {str(team)[:80]!r}, "
                    "which is not a team name; fix or remove it"
                )
        return {str(k): str(v) for k, v in links.items()}

    def team_of(self, project_id: str) -> str | None:
        """The team whose shared notes this project's notes are (§12), None when its own."""
        return self._team_links().get(project_id)

    def link_team(self, project_id: str, team: str | None) -> None:
        """Share this project's notes with `team` from now on (None: stop; notes stay)."""
        ensure_private_dir(self.root)
        with DirLock(self.root / ".teams.lock", timeout=30.0, label="the team links"):
            links = self._team_links()
            if team is None:
                links.pop(project_id, None)
            else:
                links[project_id] = team
            self._write_teams(links, self._sealed_teams())

    def _sealed_teams(self) -> list[str]:
        sealed = self._teams_doc().get("encrypted", [])
        if not isinstance(sealed, list):
            raise InvalidInput(f"{self._teams} lists encrypted teams wrongly; fix it")
        return sorted({str(t) for t in sealed})

    def _write_teams(self, links: dict[str, str], sealed: list[str]) -> None:
        doc: dict[str, object] = {"projects": dict(sorted(links.items()))}
        if sealed:
            doc["encrypted"] = sealed
        atomic_write(self._teams, json.dumps(doc, indent=2).encode() + b"\n", mode=0o600)

    def team_encrypted(self, origin: str, team: str) -> bool:
        """Whether this machine has seen `team` on the server at `origin` end-to-end
        encrypted (§12): a server that later lists it plain is not believed."""
        return f"{origin} {team}" in self._sealed_teams()

    def mark_team_encrypted(self, origin: str, team: str) -> None:
        """Remember that `team` at `origin` is end-to-end encrypted (never forgotten)."""
        if self.team_encrypted(origin, team):
            return
        ensure_private_dir(self.root)
        with DirLock(self.root / ".teams.lock", timeout=30.0, label="the team links"):
            self._write_teams(self._team_links(), [*self._sealed_teams(), f"{origin} {team}"])

    def sign_out(self) -> bool:
        """Remove the stored sign-in; False when there was none."""
        try:
            self._credentials.unlink()
        except FileNotFoundError:
            return False
        return True
