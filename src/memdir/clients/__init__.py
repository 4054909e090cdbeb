"""Connecting agent clients to memdir: their config files and the grants they use.

What lives here is about the clients, not the server: `memdir.mcp` sits above this
package and is never imported from it (only `check` uses the MCP SDK, as a client):

- `specs`: the MCP clients memdir knows, where each keeps its config and how it starts
  servers;
- `install`: merge the entry that runs ``memdir mcp serve`` into a client's config file
  (`jsonc`: edit JSON with comments in place);
- `check`: start memdir the way a client's config says and report what would fail;
- `bundle`: the Claude Desktop bundle (``.mcpb``) and the MCP registry's ``server.json``;
- `grants`: the capability grants (bearer tokens) a client connects with, kept in
  ``$MEMDIR_HOME/mcp/grants.json`` under a lock.
"""
