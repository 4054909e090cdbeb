"""Files done safely, below every layer that writes one: atomic replacement (temp file,
fsync, rename, fsync of the directory), private (0600/0700) files and directories, and
`DirLock`, the cross-process lock of a directory. The note store, the state store, the
sync server, the grant store and the client-config installer all write through here."""

from memdir._lazy import lazy_names

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see memdir/__init__)
if TYPE_CHECKING:
    from memdir.files.atomic import atomic_write, ensure_private_dir, fsync_dir, write_private
    from memdir.files.lock import DirLock

__all__ = ["DirLock", "atomic_write", "ensure_private_dir", "fsync_dir", "write_private"]

# Imported on first use: a hook's process reaches memdir.files.sockets and nothing else.
_EXPORTS = {name: "memdir.files.atomic" for name in __all__ if name != "DirLock"}
_EXPORTS["DirLock"] = "memdir.files.lock"
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__)
