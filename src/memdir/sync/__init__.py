"""Sync (§7): the wire protocol, the three-way merge, the client and the scheduler."""
