"""The memory page (`memdir ui`, §5): a Starlette app on loopback, an adapter like the CLI and
MCP — each route validates, makes one `Memory` call and answers JSON; the page itself is
static files served from the package. See docs/web.md."""
