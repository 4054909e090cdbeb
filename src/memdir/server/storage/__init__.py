"""Storage backends of the sync server (directory, PostgreSQL) behind one `Storage` interface."""

from memdir.server.storage.base import Storage, StoredObject
from memdir.server.storage.directory import DirectoryStorage

__all__ = ["DirectoryStorage", "Storage", "StoredObject"]
