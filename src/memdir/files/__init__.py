"""Files done safely, below every layer that writes one: atomic replacement (temp file,
fsync, rename, fsync of the directory), private (0600/0700) files and directories, and
`DirLock`, the cross-process lock of a directory. The note store, the state store, the
sync server, the grant store and the client-config installer all write through here."""

from memdir.files.atomic import atomic_write, ensure_private_dir, fsync_dir, write_private
from memdir.files.lock import DirLock

__all__ = ["DirLock", "atomic_write", "ensure_private_dir", "fsync_dir", "write_private"]
