"""Storage backends of the sync server (directory, PostgreSQL, S3) behind one `Storage`."""

from memdir.server.storage.base import Storage, StoredKeyring, StoredObject, StoredTeam
from memdir.server.storage.directory import (
    DirectoryStorage,
    team_owner,
    validate_owner,
    validate_team,
)

__all__ = [
    "DirectoryStorage",
    "Storage",
    "StoredKeyring",
    "StoredObject",
    "StoredTeam",
    "team_owner",
    "validate_owner",
    "validate_team",
]
