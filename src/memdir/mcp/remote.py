"""Remote MCP (§12): each account's and team's notes over streamable HTTP, behind OAuth.

`memdir server serve --mcp` mounts this endpoint at `/mcp` on the sync server. Every
request carries an OAuth access token (`memdir.server.oauth`); the endpoint answers a
missing, expired, revoked or foreign one with 401 and the `WWW-Authenticate` challenge
that points the client at the protected resource metadata. The token decides the
access (its `read` / `write` / `delete` scopes become the access levels of a grant) and
the place: the account's own notes and, when the user chose one on the consent page, a
project's notes (kept in a team's space when the team shares them).

The notes a request reaches live in a working copy on the server: a `Memory` in the
server's data directory that syncs with the storage backend through the sync rules
themselves (`memdir.server.inprocess`), so a remote write passes the same checks as any
machine's (the reader's refusal, quotas, the credential guard) and lands in storage
before the tool answers. The copy is derived and rebuildable: it is brought up to date
before every call, and when anything it holds could not be stored (the backend is down,
a change was held or conflicted) it is thrown away and the caller told what was not
stored; the next call builds it again from storage. Several replicas each keep their
own copies, and sessions are not kept at all (stateless streamable HTTP), so any replica
answers any request. An end-to-end encrypted scope is not served: the server has no key
to read it, and says so.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.to_thread
import httpx
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from memdir.core import AccessLevel
from memdir.errors import Locked, MemdirError, Refused, describe
from memdir.mcp.access import CURRENT, Access, Place, bearer_token
from memdir.mcp.copies import account_directory, digest
from memdir.mcp.registry import Source
from memdir.memory import Memory
from memdir.project import ensure_project_id

__all__ = ["Grant", "Mirrors", "RemoteEndpoint", "RemoteGate", "Verifier", "access_of"]

_log = logging.getLogger(__name__)

#: Where a working copy's sync client "signs in": its transport answers every request in
#: this process, so neither the address nor the token ever reaches a network.
_SERVER = "https://working-copy.memdir.invalid"
_TOKEN = "working-copy-of-the-server-itself"


class Grant(Protocol):
    """What a valid OAuth access token gives (`memdir.server.oauth.OAuthGrant`)."""

    @property
    def account(self) -> str: ...
    @property
    def scopes(self) -> frozenset[str]: ...
    @property
    def project(self) -> str | None: ...
    @property
    def team(self) -> str | None: ...
    @property
    def client_id(self) -> str: ...


class Verifier(Protocol):
    """The OAuth server as the endpoint sees it."""

    async def verify(self, token: str) -> Grant | None:
        """The grant of a valid access token for this resource, else None."""
        ...

    def challenge(self, error: str | None = None, description: str | None = None) -> str:
        """The `WWW-Authenticate` value of a 401 on the endpoint."""
        ...


def access_of(grant: Grant) -> Access:
    """The MCP access an OAuth grant gives: read, write (read_write), delete (with the
    delete right), over the account's notes and, with a project, that project's too."""
    scopes = grant.scopes
    write = "write" in scopes
    level = AccessLevel.READ
    if write:
        level = AccessLevel.READ_WRITE_DELETE if "delete" in scopes else AccessLevel.READ_WRITE
    return Access(
        level,
        "both" if grant.project is not None else "user",
        can_delete=write and "delete" in scopes,
        place=Place(grant.account, grant.project, grant.team),
        client=grant.client_id,
    )


_EXPIRED = (
    "the OAuth access token is expired or was revoked; the client must authorize again "
    "(nothing was read or written)"
)


#: Why an end-to-end encrypted scope is not served.
_SEALED = (
    "{} holds end-to-end encrypted notes: the server has no key to read them, so they are "
    "not served over remote MCP (they are read on the user's own machines, where the key "
    "is); nothing was read or written"
)


class RemoteGate:
    """Resolves each MCP request's access from its OAuth token, checked again at every
    call (a token revoked mid-session is refused from its next call on)."""

    def __init__(self, verifier: Verifier) -> None:
        self.verifier = verifier

    async def resolve_async(self, headers: Mapping[str, str] | None) -> Access:
        """On the event loop: the verifier's own storage reads take worker threads, so a
        worker thread must never wait here for them (a burst of calls would take every
        thread and wait forever)."""
        token = bearer_token(headers)
        if token is None:
            raise Refused("this MCP endpoint needs an OAuth access token (Authorization: Bearer)")
        grant = await self.verifier.verify(token)
        if grant is None:
            raise Refused(_EXPIRED)
        return access_of(grant)

    def resolve(self, headers: Mapping[str, str] | None) -> Access:
        raise RuntimeError("the remote gate resolves on the event loop: use resolve_async")


class Mirrors(Source):
    """The server's working copies, one per place, under `root`; at most `keep` open."""

    def __init__(
        self,
        root: Path,
        transport_for: Callable[[str], httpx.BaseTransport],
        *,
        keep: int = 16,
        embedder: Any = None,
    ) -> None:
        from memdir.memory.searching import CONFIGURED

        self.root = root
        self._transport_for = transport_for
        self._keep = keep
        self._embedder = CONFIGURED if embedder is None else embedder
        self._open: OrderedDict[Place, Memory] = OrderedDict()
        #: One call at a time per place (and no eviction while one runs).
        self._places: dict[Place, threading.Lock] = {}
        self._turns: dict[Place, anyio.Lock] = {}
        self._guard = threading.Lock()

    def close(self) -> None:
        """Close every open working copy."""
        with self._guard:
            copies = list(self._open.items())
            self._open.clear()
        for place, memory in copies:
            with self._place_lock(place):
                memory.close()

    def directory(self, place: Place) -> Path:
        """The working copy's directory, under its account's (digests: no name reaches a path)."""
        key = "\0".join((place.account, place.project or "", place.team or ""))
        return account_directory(self.root, place.account) / digest(key)

    @contextmanager
    def opened(self) -> Iterator[Memory]:
        """The working copy of the current request's place, brought up to date first and
        its changes stored after; one call at a time per place."""
        access = CURRENT.get()
        if access is None or access.place is None:
            raise Refused("no remote access was resolved for this call")
        place = access.place
        with self._place_lock(place):
            try:
                memory = self._memory(place)
            except MemdirError as exc:
                self._drop(place)
                _log.warning("working copy of %s not built: %s", place.describe(), describe(exc))
                raise Refused(
                    f"the notes of {place.describe()} cannot be read from the server's storage "
                    f"now ({_why(exc)}); nothing was read or written"
                ) from None
            self._sync(place, memory, before=True)
            try:
                yield memory
            except BaseException:
                self._settle(place, memory)
                raise
            self._sync(place, memory, before=False)

    def turn(self) -> AbstractAsyncContextManager[object]:
        """The current request's place's turn: one call into a working copy at a time,
        waited for on the event loop (a worker thread is taken only when it is its turn)."""
        access = CURRENT.get()
        if access is None or access.place is None:
            return nullcontext()
        with self._guard:
            return self._turns.setdefault(access.place, anyio.Lock())

    def _place_lock(self, place: Place) -> threading.Lock:
        with self._guard:
            return self._places.setdefault(place, threading.Lock())

    def _memory(self, place: Place) -> Memory:
        """The place's open memory, built or opened first (called under its place lock)."""
        with self._guard:
            memory = self._open.get(place)
            if memory is not None and (self.directory(place) / "ready").exists():
                self._open.move_to_end(place)
                return memory
        if memory is not None:  # removed under it (`memdir server erase`): built again
            self._drop(place)
        memory = self._build(place)
        with self._guard:
            self._open[place] = memory
            idle = [p for p in self._open if p != place][: max(0, len(self._open) - self._keep)]
        for old in idle:  # the least recently used, unless a call is using it now
            lock = self._place_lock(old)
            if lock.acquire(blocking=False):
                try:
                    with self._guard:
                        evicted = self._open.pop(old, None)
                    if evicted is not None:
                        evicted.close()
                finally:
                    lock.release()
        return memory

    def _build(self, place: Place) -> Memory:
        directory = self.directory(place)
        ready = directory / "ready"
        project = directory / "project"
        if not ready.exists():
            shutil.rmtree(directory, ignore_errors=True)  # a half-built copy: start again
            (directory / "home").mkdir(parents=True)
            if place.project is not None:
                project.mkdir()
                ensure_project_id(project, root_commit=lambda _: None, pending=place.project)
        memory = Memory.open(
            project if place.project is not None else None,
            directory / "home",
            embedder=self._embedder,
            sync_transport=self._transport_for(place.account),
        )
        if not ready.exists():
            try:
                memory.sync.login(_SERVER, _TOKEN)
                if place.team is not None:
                    memory.sync.team_link(place.team)
            except BaseException:
                memory.close()
                raise
            ready.touch()
        return memory

    def _sync(self, place: Place, memory: Memory, *, before: bool) -> None:
        """One sync pass of the copy; anything it could not store drops the copy."""
        try:
            run = memory.sync.run()
        except Locked:
            self._drop(place)
            raise Refused(_SEALED.format(place.describe())) from None
        except MemdirError as exc:
            self._drop(place)
            # Said as the storage's failure: the copy's own sync client and its made-up
            # address are no business of the caller's (the log has the details).
            _log.warning("working copy of %s: %s", place.describe(), describe(exc))
            why = _why(exc)
            if before:
                raise Refused(
                    f"the notes of {place.describe()} cannot be read from the server's storage "
                    f"now ({why}); nothing was read or written"
                ) from None
            raise Refused(
                f"the change may not have been stored ({why}): the server's working copy was "
                "reset to what its storage holds, so read the note again and make the change "
                "again if it is missing"
            ) from None
        if run.locked:
            self._drop(place)
            raise Refused(_SEALED.format(place.describe()))
        pushed = sorted(note for report in run.reports for note in report.pushed)
        stored = f"stored: {', '.join(pushed)}" if pushed else "nothing was stored"
        if run.paused:
            self._drop(place)
            reasons = "; ".join(run.paused.values())
            done = "nothing was read or written" if before else stored
            raise Refused(f"{place.describe()} is not served now: {reasons}; {done}")
        unstored = {note: why for report in run.reports for note, why in report.held.items()} | {
            note: "conflicts with a change made meanwhile"
            for r in run.reports
            for note in r.conflicts
        }
        if unstored:
            self._drop(place)
            listed = "; ".join(f"{note}: {why}" for note, why in sorted(unstored.items()))
            raise Refused(f"not stored on the server: {listed}; {stored}")

    def _settle(self, place: Place, memory: Memory) -> None:
        """After a call that failed: store what it changed, or drop the copy."""
        try:
            self._sync(place, memory, before=False)
        except MemdirError:
            _log.warning("a failed call's working copy of %s was dropped", place.describe())

    def _drop(self, place: Place) -> None:
        """Close and remove the place's copy; the next call builds it again from storage."""
        with self._guard:
            memory = self._open.pop(place, None)
        if memory is not None:
            memory.close()
        shutil.rmtree(self.directory(place), ignore_errors=True)


def _why(exc: MemdirError) -> str:
    """The storage failure in the caller's terms (the working copy's own sync client is
    no business of the caller's: the log has its words)."""
    if "erased" in describe(exc):
        return "the account was erased"
    return "the storage backend did not answer"


class RemoteEndpoint:
    """The ASGI app of `/mcp`: the OAuth check, then memdir's MCP server, stateless."""

    def __init__(
        self,
        verifier: Verifier,
        mirrors: Mirrors,
        *,
        limit: Callable[[str], float] | None = None,
        limit_blocks: bool = False,
    ) -> None:
        from memdir.mcp.server import build_server

        self.verifier = verifier
        self.mirrors = mirrors
        #: The account's rate limit, shared with its sync requests: seconds to wait, or 0.
        self.limit = limit
        self.limit_blocks = limit_blocks
        self.server = build_server(mirrors, RemoteGate(verifier))
        # Reached through a TLS proxy under the operator's own name: the bearer token, not
        # the Host header, keeps other sites' pages out (DNS rebinding needs no token).
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self.app = self.server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, transport_security=security
        )

    def lifespan(self) -> AbstractAsyncContextManager[Any]:
        """Runs the MCP session manager; the host app enters it in its own lifespan."""
        return self.app.router.lifespan_context(self.app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        token = bearer_token(headers)
        grant = await self.verifier.verify(token) if token is not None else None
        if grant is None:
            error, text = (None, "an OAuth access token is required")
            if token is not None:
                error, text = "invalid_token", _EXPIRED
            await _unauthorized(send, self.verifier.challenge(error, text if error else None), text)
            return
        if self.limit is not None:
            limit = self.limit
            wait = (
                await anyio.to_thread.run_sync(limit, grant.account)
                if self.limit_blocks
                else limit(grant.account)
            )
            if wait > 0:
                await _answer(
                    send,
                    429,
                    {
                        "error": "rate_limited",
                        "error_description": "too many requests; retry later",
                    },
                    [(b"retry-after", str(max(1, math.ceil(wait))).encode())],
                )
                return
        await self.app(scope, receive, send)


async def _unauthorized(send: Send, challenge: str, text: str) -> None:
    body = {"error": "invalid_token", "error_description": text}
    await _answer(send, 401, body, [(b"www-authenticate", challenge.encode("latin-1"))])


async def _answer(
    send: Send, status: int, body: dict[str, str], headers: list[tuple[bytes, bytes]]
) -> None:
    headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store"), *headers]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})
