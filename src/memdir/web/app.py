"""The memory page as one ASGI app: the guard (`memdir.web.security`) around a Starlette app
serving the page's static files from the package and the JSON API (`memdir.web.api`).

The guard wraps everything, Starlette's own error answers included, so no response leaves
without the security headers and no route runs before the Host, Origin, fetch-metadata
and token checks.
"""

from __future__ import annotations

import re
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from memdir.memory import Memory
from memdir.web.api import Api
from memdir.web.security import Guard

__all__ = ["STATIC", "build_app"]

#: The page's files, shipped in the package.
STATIC = Path(__file__).resolve().parent / "static"

#: The content type of each kind of file the page may have; any other file is not served.
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".txt": "text/plain; charset=utf-8",
}
_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,100}")


def static_file(relative: str, root: Path = STATIC) -> Path | None:
    """The file of the page at `relative` (a/b.js), or None: only plain names, no dot
    files, nothing outside `root`, no links, and only the kinds of file in `_TYPES`."""
    parts = relative.split("/")
    if not parts or len(parts) > 4 or not all(_SEGMENT.fullmatch(p) for p in parts):
        return None
    path = root.joinpath(*parts)
    if path.suffix.lower() not in _TYPES:
        return None
    try:
        if path.is_symlink() or not path.is_file():
            return None
        path.resolve().relative_to(root.resolve())
    except (OSError, ValueError):
        return None
    return path


def _page(root: Path) -> Route:
    async def serve(request: Request) -> Response:
        relative = request.path_params.get("path", "") or "index.html"
        relative = relative.removeprefix("static/")
        path = static_file(relative, root)
        if path is None:
            return _error(404, "not_found", "no such page")
        try:
            data = path.read_bytes()
        except OSError:
            return _error(404, "not_found", "no such page")
        return Response(data, media_type=_TYPES[path.suffix.lower()])

    return Route("/{path:path}", serve, methods=["GET"])


def _error(status: int, kind: str, message: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"kind": kind, "message": message, "hint": None}}, status_code=status
    )


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 404:
        return _error(404, "not_found", "no such page or API route")
    if status == 405:
        return _error(405, "invalid", "that method is not allowed here")
    return _error(status, "invalid" if status < 500 else "internal", "the request failed")


def build_app(memory: Memory, *, token: str, port: int, static: Path | None = None) -> ASGIApp:
    """The page's app for `memory`, answering on 127.0.0.1:`port` and localhost:`port`
    only; every /api/ request must carry `Authorization: Bearer <token>`. `static` is
    where the page's files are (default: the package's)."""
    api = Api(memory)
    app = Starlette(
        routes=[*api.routes(), _page(static or STATIC)],
        exception_handlers={HTTPException: _http_error},
    )
    app.state.api = api
    return Guard(app, token=token, port=port)
