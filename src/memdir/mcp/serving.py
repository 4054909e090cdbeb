"""`memdir mcp serve`: check the grant, answer the handshake, then load the MCP SDK.

Everything that can refuse to start (the config, the store, the grant file, the HTTP
address) is checked before the wire is touched, so a refusal still reaches the client as
a process that exits with its reason on stderr. Over stdio the first message is read next
and an `initialize` answered at once (`memdir.mcp.handshake`); only then is the SDK
imported and the server built (`memdir.mcp.server.run`), which takes most of a second.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

from memdir.clients.grants import GrantStore, read_grant_file
from memdir.errors import InvalidInput, Refused
from memdir.mcp.access import Gate
from memdir.mcp.handshake import StdioWire
from memdir.memory import Memory

__all__ = ["parse_http_address", "serve"]


def parse_http_address(address: str) -> tuple[str, int]:
    """`127.0.0.1:PORT` (or `[::1]:PORT`, `localhost:PORT`) → (host, port); loopback only."""
    host, sep, port_text = address.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise InvalidInput(f"--http needs HOST:PORT with a port from 1 to 65535, not {address!r}")
    host = host.strip("[]")
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise Refused(
                f"the MCP HTTP server binds loopback addresses only (127.0.0.1, ::1), not {host!r}"
            )
    return ("127.0.0.1" if host == "localhost" else host), int(port_text)


def serve(memory: Memory, *, grant_file: Path | None = None, http: str | None = None) -> None:
    """Run the MCP server until the client disconnects (stdio) or it is interrupted (HTTP).

    Without a grant, stdio runs with the config's `mcp.access`; `grant_file` narrows it.
    HTTP always requires a grant's bearer token and binds loopback only.
    """
    settings = memory.settings
    store = GrantStore(settings.home, lock_timeout=settings.lock_timeout)
    fixed = read_grant_file(grant_file) if grant_file is not None else None
    address = parse_http_address(http) if http is not None else None
    # Refuse to start on an unusable grant.
    grant = store.validate(fixed[1], fixed[0]) if fixed is not None else None
    gate = Gate(settings.mcp_access, store, fixed=fixed, require_bearer=address is not None)
    # Over HTTP any grant may come; a fixed grant's state access never changes. The store
    # itself is opened by the first state tool call, if any.
    offers_state = address is not None or (grant is not None and grant.state is not None)
    wire = StdioWire() if address is None else None
    try:
        if wire is not None:
            wire.greet()
        from memdir.mcp import server  # the MCP SDK: most of the start-up time
        from memdir.mcp.tools.state import StateStores

        states = StateStores(settings.home) if offers_state else None
        server.run(memory, gate, store, states=states, address=address, wire=wire)
    finally:
        if wire is not None:
            wire.release()
