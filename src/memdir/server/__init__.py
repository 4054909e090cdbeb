"""The sync server (§7.3): an ASGI app over a pluggable storage backend."""
