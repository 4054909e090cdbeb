"""The JSON API of the memory page (docs/web.md): each route checks its input, makes its
`Memory` call in a worker thread (one at a time: a `Memory` is not shared safely between
threads) and answers JSON; a memdir error becomes `{"error": {"kind", "message"}}` with
the status of its kind.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memdir.core import Note, Scope, choices, parse_scope, validate_id
from memdir.core.vocab import DraftKind, KeepSide, SearchMethod, SearchMode
from memdir.errors import Conflict, InvalidInput, MemdirError, SyncFailed
from memdir.memory import Memory
from memdir.sync.comparison import PassReport
from memdir.web.payload import (
    error_body,
    finding_kinds_json,
    hit_json,
    jsonable,
    note_json,
    view_json,
)

__all__ = ["MAX_BODY_BYTES", "Api"]

_log = logging.getLogger(__name__)
T = TypeVar("T")

#: A request body larger than this is refused unread (a note is at most maxNoteBytes).
MAX_BODY_BYTES = 1 << 20
#: At most this many search hits per request.
MAX_LIMIT = 50
#: The reason on the backup of the version an edit on the page replaced.
EDIT_BACKUP_REASON = "edit on the memory page"


class _TooLarge(InvalidInput):
    """Raised when a request body is larger than MAX_BODY_BYTES."""


class Api:
    """The routes of one page, bound to its `Memory`."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._limiter = anyio.CapacityLimiter(1)
        #: Per scope: what this page's last sync pass pulled, and its error if it failed.
        self._last_pull: dict[str, dict[str, int]] = {}
        self._last_error: dict[str, dict[str, Any]] = {}

    def routes(self) -> list[Route]:
        """Every API route (all under /api/)."""
        r = Route
        return [
            r("/api/notes", self.list_notes, methods=["GET"]),
            r("/api/notes", self.create_note, methods=["POST"]),
            r("/api/search", self.search, methods=["GET"]),
            r("/api/changes", self.changes, methods=["GET"]),
            r("/api/notes/{id}", self.read_note, methods=["GET"]),
            r("/api/notes/{id}", self.save_note, methods=["PUT"]),
            r("/api/notes/{id}/history", self.history, methods=["GET"]),
            r("/api/notes/{id}/diff", self.diff, methods=["GET"]),
            r("/api/notes/{id}/forget", self.forget, methods=["POST"]),
            r("/api/tidy", self.tidy, methods=["GET"]),
            r("/api/tidy/dismiss", self.dismiss, methods=["POST"]),
            r("/api/tidy/merge", self.merge, methods=["POST"]),
            r("/api/tidy/apply", self.apply, methods=["POST"]),
            r("/api/supersede", self.supersede, methods=["POST"]),
            r("/api/backups", self.backups, methods=["GET"]),
            r("/api/backups/{id}/restore", self.restore, methods=["POST"]),
            r("/api/sync", self.sync_status, methods=["GET"]),
            r("/api/sync/switch", self.sync_switch, methods=["POST"]),
            r("/api/sync/now", self.sync_now, methods=["POST"]),
            r("/api/sync/conflicts", self.sync_conflicts, methods=["GET"]),
            r("/api/sync/draft", self.sync_draft, methods=["GET"]),
            r("/api/sync/resolve", self.sync_resolve, methods=["POST"]),
            r("/api/team", self.team, methods=["GET"]),
            r("/api/team/change", self.team_change, methods=["POST"]),
        ]

    async def _call(self, fn: Callable[[], Any], status: int = 200) -> Response:
        """Run `fn` (the route's Memory work) in a worker thread, one at a time; its result
        as JSON, or its failure as an error answer (never a traceback)."""
        try:
            return JSONResponse(
                await anyio.to_thread.run_sync(fn, limiter=self._limiter), status_code=status
            )
        except Exception as exc:
            return failure(exc)

    # -- notes --------------------------------------------------------------------------

    async def list_notes(self, request: Request) -> Response:
        q = request.query_params
        scope, type_, tag = q.get("scope") or None, q.get("type") or None, q.get("tag") or None

        def run() -> dict[str, Any]:
            notes = self.memory.notes.list(scope, type_, tag)
            return {"notes": [note_json(n) for n in notes]}

        return await self._call(run)

    async def search(self, request: Request) -> Response:
        q = request.query_params
        try:
            query = q.get("q", "")
            mode = _choice(q.get("mode") or SearchMode.ANY.value, SearchMode, "mode")
            method = _choice(q.get("method") or SearchMethod.HYBRID.value, SearchMethod, "method")
            limit = _int(q.get("limit"), "limit", 1, MAX_LIMIT, 20)
            scope = _scope(q.get("scope") or None)
            type_ = q.get("type") or None
            tags = q.getlist("tag") or None
        except InvalidInput as exc:
            return failure(exc)
        if not query.strip():
            return JSONResponse({"hits": [], "method": None, "warnings": []})

        def run() -> dict[str, Any]:
            before = len(self.memory.warnings)
            try:
                with self.memory.index.observing() as report:
                    hits = self.memory.search(
                        query, limit, mode, scope, method=method, type=type_, tags=tags
                    )
            finally:
                warnings = self.memory.warnings[before:]
                del self.memory.warnings[before:]
            used = report.method or SearchMethod.LEXICAL
            return {"hits": [hit_json(h) for h in hits], "method": used.value, "warnings": warnings}

        return await self._call(run)

    async def changes(self, request: Request) -> Response:
        def run() -> dict[str, Any]:
            # Size, mtime and inode of every note file, no file read: any write here, in
            # another tab or process, or in an editor changes it.
            digest = hashlib.sha256()
            for scope, stamps in self.memory.stores.file_stamps().items():
                digest.update(f"{scope.value}:{len(stamps)}\n".encode())
                for note_id in sorted(stamps):
                    digest.update(f"{note_id} {stamps[note_id]}\n".encode())
            return {"stamp": digest.hexdigest()[:32]}

        return await self._call(run)

    async def read_note(self, request: Request) -> Response:
        try:
            note_id = _id(request.path_params["id"])
            scope = _scope(request.query_params.get("scope") or None)
        except InvalidInput as exc:
            return failure(exc)
        return await self._call(lambda: self._view(note_id, scope))

    def _view(self, note_id: str, scope: Scope | None) -> dict[str, Any]:
        current = self.memory.notes.read_current(note_id, scope)
        # Every scope shown: a project note's [[link]] may name a user note (§1.4), and ids
        # are unique across scopes, so the note is found wherever it is.
        links = self.memory.notes.links(current.note.id)
        return view_json(current, links, list(links.superseded_by))

    async def create_note(self, request: Request) -> Response:
        try:
            data = await _body(request)
            summary = _str(data, "summary", required=True)
            body = _opt_str(data, "body")
            type_ = _opt_str(data, "type")
            tags = _opt_strs(data, "tags")
            scope = _scope(_opt_str(data, "scope"))
            supersedes = _opt_strs(data, "supersedes")
            private = _opt_bool(data, "private")
        except InvalidInput as exc:
            return failure(exc)

        def run() -> dict[str, Any]:
            result = self.memory.remember(
                summary, body, type_, tags, scope, supersedes=supersedes, private=private
            )
            return _written(result.note, result.revision, result.dangling_links, result)

        return await self._call(run, status=201)

    async def save_note(self, request: Request) -> Response:
        try:
            note_id = _id(request.path_params["id"])
            data = await _body(request)
            revision = _str(data, "revision", required=True)
            summary = _str(data, "summary", required=True)
            body = _opt_str(data, "body")
            type_ = _opt_str(data, "type")
            tags = _opt_strs(data, "tags")
            supersedes = _opt_strs(data, "supersedes")
            private = _opt_bool(data, "private")
            scope = _scope(_opt_str(data, "scope"))
        except InvalidInput as exc:
            return failure(exc)

        def run() -> dict[str, Any]:
            current = self.memory.notes.read_current(note_id, scope)
            if current.revision != revision:
                raise _Stale(self._view(current.note.id, current.scope))
            # One call: the same guard, limits and supersedes checks as every write, and
            # the revision checked again under the store's lock (never last-writer-wins).
            result = self.memory.remember(
                summary,
                body,
                type_,
                tags,
                current.scope,
                current.note.id,
                supersedes=supersedes,
                private=private,
                expect_revision=revision,
                backup_reason=EDIT_BACKUP_REASON,
            )
            return _written(result.note, result.revision, (), None)

        try:
            return JSONResponse(await anyio.to_thread.run_sync(run, limiter=self._limiter))
        except _Stale as stale:
            return _conflict(stale.error, stale.current)
        except Conflict as exc:  # changed between the check and the write: show it now
            try:
                view = await anyio.to_thread.run_sync(
                    lambda: self._view(note_id, scope), limiter=self._limiter
                )
            except Exception as again:
                return failure(again)
            return _conflict(exc, view)
        except Exception as exc:
            return failure(exc)

    async def history(self, request: Request) -> Response:
        try:
            note_id = _id(request.path_params["id"])
            scope = _scope(request.query_params.get("scope") or None)
        except InvalidInput as exc:
            return failure(exc)

        def run() -> dict[str, Any]:
            entries = self.memory.notes.history(note_id, scope=scope)
            return {
                "entries": [
                    {"revision": e.revision, "ts": e.ts, "event": e.event, "current": e.current}
                    for e in entries
                ]
            }

        return await self._call(run)

    async def diff(self, request: Request) -> Response:
        q = request.query_params
        try:
            note_id = _id(request.path_params["id"])
            scope = _scope(q.get("scope") or None)
            a, b = q.get("a") or None, q.get("b") or None
            for name, rev in (("a", a), ("b", b)):
                if rev is not None and not _is_hex(rev):
                    raise InvalidInput(f"{name}: a revision is hexadecimal, got {rev[:80]!r}")
        except InvalidInput as exc:
            return failure(exc)
        return await self._call(
            lambda: {"diff": self.memory.notes.diff(note_id, a, b, scope=scope)}
        )

    async def forget(self, request: Request) -> Response:
        try:
            note_id = _id(request.path_params["id"])
            data = await _body(request)
            confirm = _opt_bool(data, "confirm") or False
            purge = _opt_bool(data, "purge") or False
            scope = _scope(_opt_str(data, "scope"))
            expect = _str(data, "hash", required=True) if confirm else None
        except InvalidInput as exc:
            return failure(exc)
        if not confirm:
            return await self._call(
                lambda: jsonable(self.memory.upkeep.plan_forget(note_id, purge, scope=scope))
            )
        return await self._call(
            lambda: jsonable(self.memory.forget(note_id, purge, scope=scope, expect_hash=expect))
        )

    # -- tidy-up list -------------------------------------------------------------------

    async def tidy(self, request: Request) -> Response:
        q = request.query_params
        kinds = q.getlist("kind") or None
        try:
            scope = _scope(q.get("scope") or None)
        except InvalidInput as exc:
            return failure(exc)
        return await self._call(
            lambda: {
                "findings": jsonable(self.memory.tidy.findings(kinds, scope)),
                "kinds": finding_kinds_json(),
            }
        )

    async def dismiss(self, request: Request) -> Response:
        try:
            finding = _str(await _body(request), "id", required=True)
        except InvalidInput as exc:
            return failure(exc)

        def run() -> dict[str, Any]:
            result = self.memory.tidy.dismiss(finding)
            return {"changed": result.changed, "finding": jsonable(result.finding)}

        return await self._call(run)

    async def merge(self, request: Request) -> Response:
        try:
            data = await _body(request)
            ids = _opt_strs(data, "ids")
            if not ids or len(ids) < 2:
                raise InvalidInput("ids: a list of at least two note ids")
            summary = _opt_str(data, "summary")
            body = _opt_str(data, "body")
            scope = _scope(_opt_str(data, "scope"))
            draft = _choice(_opt_str(data, "draft") or DraftKind.CONCAT.value, DraftKind, "draft")
        except InvalidInput as exc:
            return failure(exc)

        def run() -> dict[str, Any]:
            plan = self.memory.merges.plan(
                ids, draft=draft, summary=summary, body=body, scope=scope
            )
            return {**plan.to_json(), "deletes": list(plan.deletes)}

        return await self._call(run)

    async def apply(self, request: Request) -> Response:
        from memdir import MergePlan

        try:
            plan = MergePlan.from_json((await _body(request)).get("plan"))
        except InvalidInput as exc:
            return failure(exc)
        return await self._call(lambda: jsonable(self.memory.merges.apply(plan)))

    async def supersede(self, request: Request) -> Response:
        try:
            data = await _body(request)
            old = _str(data, "old", required=True)
            by = _str(data, "by", required=True)
            scope = _scope(_opt_str(data, "scope"))
        except InvalidInput as exc:
            return failure(exc)
        return await self._call(
            lambda: jsonable(self.memory.notes.supersede(old, by=by, scope=scope))
        )

    # -- backups ------------------------------------------------------------------------

    async def backups(self, request: Request) -> Response:
        return await self._call(lambda: {"backups": jsonable(self.memory.backups(50))})

    async def restore(self, request: Request) -> Response:
        backup_id = request.path_params["id"]
        if len(backup_id) > 200 or not all(c.isalnum() or c in "-_" for c in backup_id):
            return failure(InvalidInput(f"not a backup id: {backup_id[:80]!r}"))
        return await self._call(lambda: jsonable(self.memory.backups.restore(backup_id)))

    # -- sync ---------------------------------------------------------------------------

    def _status(self) -> dict[str, Any]:
        status = jsonable(self.memory.sync.status())
        for entry in status["scopes"]:
            entry["last_pull"] = self._last_pull.get(entry["scope"])
            entry["error"] = self._last_error.get(entry["scope"])
        return dict(status)

    async def sync_status(self, request: Request) -> Response:
        return await self._call(self._status)

    async def sync_switch(self, request: Request) -> Response:
        try:
            on = _opt_bool(await _body(request), "on")
            if on is None:
                raise InvalidInput("on: true or false")
        except InvalidInput as exc:
            return failure(exc)

        def run() -> dict[str, Any]:
            self.memory.sync.switch(on)
            return self._status()

        return await self._call(run)

    async def sync_now(self, request: Request) -> Response:
        try:
            scope = _scope(_opt_str(await _body(request, empty_ok=True), "scope"))
        except InvalidInput as exc:
            return failure(exc)
        try:
            result = await anyio.to_thread.run_sync(
                lambda: self._sync_pass(scope), limiter=self._limiter
            )
        except _ScopesFailed as failed:
            status, body = error_body(failed.first)
            where, error = next(iter(failed.errors.items()))
            body["error"]["message"] = f"the {where} scope: {error['message']}"
            return JSONResponse({**body, "errors": failed.errors}, status_code=status)
        except Exception as exc:
            return failure(exc)
        return JSONResponse(result)

    def _sync_pass(self, scope: Scope | None) -> dict[str, Any]:
        """One pass per scope (so that an error says which scope failed); when every scope
        fails, the first error is the answer."""
        scopes = [scope] if scope is not None else list(self.memory.scopes)
        reports: builtins.list[PassReport] = []
        paused: dict[str, str] = {}
        errors: dict[str, dict[str, Any]] = {}
        first: MemdirError | None = None
        for one in scopes:
            before = self.memory.stores.file_stamps(one)[one]
            try:
                run = self.memory.sync.run(one)
            except (SyncFailed, Conflict) as exc:
                first = first or exc
                errors[one.value] = error_body(exc)[1]["error"]
                continue
            self._last_error.pop(one.value, None)
            paused.update(run.paused)
            for report in run.reports:
                reports.append(report)
                self._last_pull[report.scope] = {
                    "added": sum(1 for i in report.pulled if i not in before),
                    "changed": sum(1 for i in report.pulled if i in before) + len(report.merged),
                    "removed": len(report.deleted_here),
                }
        self._last_error.update(errors)
        if first is not None and len(errors) == len(scopes):
            raise _ScopesFailed(first, errors)
        return {
            "reports": jsonable(reports),
            "paused": paused,
            "conflicts": sum(len(r.conflicts) for r in reports),
            "errors": errors,
            "status": self._status(),
        }

    # -- the project's team (§12) ---------------------------------------------------------

    def _linked_team(self) -> str | None:
        found = [s.team for s in self.memory.sync.status().scopes if s.team]
        return found[0] if found else None

    def _team_view(self, change: Callable[[str], Any] | None = None) -> dict[str, Any]:
        team = self._linked_team()
        if team is None:
            return {"team": None}
        doc = change(team) if change is not None else self.memory.sync.team(team)
        view: dict[str, Any] = doc.model_dump(mode="json", exclude={"quotas", "keys"})
        view["history"] = view["history"][-20:]  # the latest changes; the CLI shows them all
        from memdir.sync.teamkeys import key_status

        status = key_status(doc)  # fingerprints only: no wrapped key reaches the page
        view["keys"] = None if status is None else status.as_json()
        return view

    async def team(self, request: Request) -> Response:
        return await self._call(self._team_view)

    async def team_change(self, request: Request) -> Response:
        try:
            data = await _body(request)
            action = _str(data, "action", required=True)
            member = _str(data, "member", required=True)
            role = _opt_str(data, "role")
        except InvalidInput as exc:
            return failure(exc)

        def change(team: str) -> Any:
            return self.memory.sync.team_change(team, action, member, role)

        return await self._call(lambda: self._team_view(change))

    async def sync_conflicts(self, request: Request) -> Response:
        return await self._call(lambda: {"conflicts": jsonable(self.memory.sync.conflicts())})

    async def sync_draft(self, request: Request) -> Response:
        try:
            note_id = _id(request.query_params.get("id", ""))
            scope = _scope(request.query_params.get("scope") or None)
        except InvalidInput as exc:
            return failure(exc)
        return await self._call(lambda: {"draft": self.memory.sync.draft(note_id, scope)})

    async def sync_resolve(self, request: Request) -> Response:
        try:
            data = await _body(request)
            note_id = _id(_str(data, "id", required=True))
            scope = _scope(_opt_str(data, "scope"))
            keep = _opt_str(data, "keep")
            text = _opt_str(data, "text")
            if (keep is None) == (text is None):
                raise InvalidInput('give exactly one of "keep" (local, server, both) or "text"')
            if keep is not None:
                keep = _choice(keep, KeepSide, "keep")
        except InvalidInput as exc:
            return failure(exc)
        return await self._call(
            lambda: jsonable(self.memory.sync.resolve(note_id, keep, text=text, scope=scope))
        )


class _ScopesFailed(Exception):
    """Raised when a sync pass failed in every scope it was to run (each error by scope)."""

    def __init__(self, first: MemdirError, errors: dict[str, dict[str, Any]]) -> None:
        super().__init__(str(first))
        self.first = first
        self.errors = errors


class _Stale(Exception):
    """Raised when a save names a revision the file is no longer at (with the note now)."""

    def __init__(self, current: dict[str, Any]) -> None:
        self.error = Conflict(
            f"note {current['id']} changed since it was opened; nothing was written (both "
            "versions are shown: yours, and the one on disk now)"
        )
        super().__init__(str(self.error))
        self.current = current


def _conflict(exc: BaseException, current: dict[str, Any]) -> Response:
    status, body = error_body(exc)
    return JSONResponse({**body, "current": current}, status_code=status)


def failure(exc: BaseException) -> Response:
    """The error answer of a failure (a bug is logged, its details stay out of the answer)."""
    if isinstance(exc, _TooLarge):
        _, body = error_body(exc)
        return JSONResponse(body, status_code=413)
    if not isinstance(exc, MemdirError):
        from memdir.errors import disk_error

        mapped = disk_error(exc)
        if mapped is None:
            _log.exception("memory page request failed", exc_info=exc)
        else:
            exc = mapped
    status, body = error_body(exc)
    return JSONResponse(body, status_code=status)


def _written(
    note: Note, revision: str, dangling: tuple[str, ...], result: Any | None
) -> dict[str, Any]:
    out = note_json(note, revision, with_hash=True)
    out["dangling_links"] = list(dangling)
    if result is not None:
        out["new_note"] = result.created
        out["likely_duplicate"] = result.likely_duplicate
        out["duplicate_of"] = result.duplicate_of
        out["nearest"] = [
            {"id": n.note_id, "summary": n.summary, "score": n.score} for n in result.nearest
        ]
    return out


# -- input checks ------------------------------------------------------------------------


async def _body(request: Request, *, empty_ok: bool = False) -> dict[str, Any]:
    """The request's JSON object (at most MAX_BODY_BYTES), or InvalidInput saying why not."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
        raise _TooLarge(f"the request body is larger than {MAX_BODY_BYTES} bytes")
    chunks: builtins.list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _TooLarge(f"the request body is larger than {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip() and empty_ok:
        return {}
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise InvalidInput("the request body must be JSON (Content-Type: application/json)")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise InvalidInput("the request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise InvalidInput("the request body must be a JSON object")
    return data


def _str(data: Mapping[str, Any], key: str, *, required: bool = False) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise InvalidInput(f"{key}: {'required, ' if required else ''}expected a string")
    return value


def _opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{key}: expected a string or null")
    return value


def _opt_strs(data: Mapping[str, Any], key: str) -> builtins.list[str] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"{key}: expected a list of strings or null")
    if len(value) > 200:
        raise InvalidInput(f"{key}: at most 200 items")
    return value


def _opt_bool(data: Mapping[str, Any], key: str) -> bool | None:
    value = data.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise InvalidInput(f"{key}: expected true or false")


def _int(raw: str | None, key: str, low: int, high: int, default: int) -> int:
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        raise InvalidInput(f"{key}: expected an integer from {low} to {high}")
    return int(raw)


def _choice(raw: str, vocabulary: Any, key: str) -> str:
    names = choices(vocabulary)
    if raw not in names:
        raise InvalidInput(f"{key}: expected one of {', '.join(names)}")
    return raw


def _scope(raw: str | None) -> Scope | None:
    return parse_scope(raw)


def _id(raw: str) -> str:
    validate_id(raw)
    return raw


def _is_hex(text: str) -> bool:
    return 0 < len(text) <= 128 and all(c in "0123456789abcdef" for c in text.lower())
