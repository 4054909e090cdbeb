"""Storage backends of the sync server (directory, PostgreSQL) behind one `Storage` interface."""

from memdir.server.storage.base import Storage, StoredObject

__all__ = ["Storage", "StoredObject"]
