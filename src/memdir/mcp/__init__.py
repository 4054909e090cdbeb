"""MCP server: memdir tools for agents over stdio and streamable HTTP, with capability grants."""
