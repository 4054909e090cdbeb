"""The sync API as an in-process httpx transport: the server's own working copies talk to
its rules without a socket.

The remote MCP endpoint (§12) keeps, per account and scope, a working copy of the notes
on the server: a `Memory` whose sync client reaches `SyncRules` through this transport,
so what it reads and writes passes the same checks (roles, quotas, the credential
guard, three-way merge) as any machine's sync. The account is fixed when the transport
is made: the token the client sends is not looked at.
"""

from __future__ import annotations

import json
import re

import httpx
from pydantic import BaseModel, ValidationError

from memdir.errors import InvalidInput
from memdir.server.rules import Rejection, SyncRules
from memdir.sync.protocol import (
    MAX_PROTOCOL,
    PROTOCOL_HEADER,
    QUOTA_HEADER,
    CommitRequest,
    ErrorBody,
    SnapshotRequest,
)

__all__ = ["rules_transport"]

_TEAM = re.compile(r"/v1/teams/([^/]+)")


def rules_transport(rules: SyncRules, user: str) -> httpx.MockTransport:
    """A transport answering the sync API for `user` from `rules`, in this process."""
    quotas = rules.quotas

    def answer(model: BaseModel, status: int = 200) -> httpx.Response:
        headers = {
            "content-type": "application/json",
            QUOTA_HEADER: quotas.header(),
            PROTOCOL_HEADER: str(MAX_PROTOCOL),
        }
        return httpx.Response(status, content=model.model_dump_json().encode(), headers=headers)

    def refusal(status: int, code: str, message: str, **extra: object) -> httpx.Response:
        body = ErrorBody.model_validate(
            {"error": code, "message": message, "quotas": quotas, **extra}
        )
        return answer(body, status)

    def handle(request: httpx.Request) -> httpx.Response:
        path, method = request.url.path, request.method
        try:
            if method == "GET" and path == "/v1/memory/identity":
                return answer(rules.identity(user))
            if method == "POST" and path == "/v1/memory/snapshot":
                return answer(
                    rules.snapshot(user, SnapshotRequest.model_validate_json(request.content))
                )
            if method == "POST" and path == "/v1/memory/commit":
                return answer(
                    rules.commit(user, CommitRequest.model_validate_json(request.content))
                )
            team = _TEAM.fullmatch(path)
            if method == "GET" and team is not None:
                history = request.url.params.get("history", "true") != "false"
                return answer(rules.teams.show(user, team.group(1), history=history))
        except Rejection as exc:
            return refusal(exc.status, exc.code, exc.message, ids=exc.ids, version=exc.version)
        except (ValidationError, json.JSONDecodeError, InvalidInput) as exc:
            return refusal(422, "invalid", str(exc).splitlines()[0])
        # The keyring and team changes are not for a working copy: it never seals notes
        # (an encrypted scope is not served remotely) and changes no team.
        return refusal(404, "not_found", f"{method} {path} is not served to working copies")

    return httpx.MockTransport(handle)
