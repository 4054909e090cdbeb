"""The consent page: the user signs in with their memdir sync token and approves or denies.

Server-rendered HTML, no script. The form carries the pending request's id and its
per-request CSRF secret, which must also come back in a ``SameSite=Strict`` cookie set
with the page; the page may not be framed and is never cached. Each approval attempt is
counted on the request before the token is checked (so replicas count together), and a
request that used up its attempts is dead. A wrong token shows the page again with an
error that does not say whether any account exists.
"""

from __future__ import annotations

import hmac
import html
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread
from mcp.server.auth.provider import construct_redirect_uri
from pydantic import TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from memdir.errors import MemdirError
from memdir.server.accounts import Accounts, token_digest
from memdir.server.oauth.clients import SCOPES, origin_of
from memdir.server.oauth.provider import MemdirProvider
from memdir.server.oauth.state import Entry, OAuthState, digest
from memdir.server.rejection import Rejection
from memdir.server.teams import TeamRules
from memdir.sync.protocol import ProjectId
from memdir.sync.teams import WRITERS

__all__ = ["MAX_ATTEMPTS", "ConsentPage", "close_scopes", "message"]

log = logging.getLogger(__name__)

#: Approval attempts a pending request allows before it is dead.
MAX_ATTEMPTS = 5
_PROJECT = TypeAdapter(ProjectId)
_DESCRIPTIONS = {
    "read": "read your notes",
    "write": "add and change notes",
    "delete": "delete notes",
}


def close_scopes(chosen: set[str]) -> list[str]:
    """The chosen scopes with the ones they need (delete needs write, write needs read),
    unknown ones left out, in `SCOPES` order."""
    wanted = set(chosen) & set(SCOPES)
    if "delete" in wanted:
        wanted.add("write")
    if "write" in wanted:
        wanted.add("read")
    return [s for s in SCOPES if s in wanted]


def cookie_name(request_id: str) -> str:
    """The CSRF cookie of one pending request (several may be open in one browser)."""
    return "memdir-consent-" + digest(request_id)[:16]


class _Retry(Exception):
    """The form is shown again with this message."""


class ConsentPage:
    """GET shows the consent form of a pending request, POST approves or denies it."""

    def __init__(
        self,
        state: OAuthState,
        provider: MemdirProvider,
        accounts: Accounts,
        teams: TeamRules,
        *,
        base: Callable[[], str],
        clock: Callable[[], float],
    ) -> None:
        self.state = state
        self.provider = provider
        self.accounts = accounts
        self.teams = teams
        self.base = base
        self.clock = clock

    async def handle(self, request: Request) -> Response:
        """The consent endpoint, GET or POST."""
        if request.method == "GET":
            request_id = request.query_params.get("request", "")
            pending = await self._pending(request_id)
            if pending is None:
                return message(400, "This authorization request is unknown, finished or expired.")
            return self._page(request_id, pending.fields, error=None, form={})
        form = {k: v for k, v in (await request.form()).multi_items() if isinstance(v, str)}
        scopes = [v for v in (await request.form()).getlist("scope") if isinstance(v, str)]
        request_id = form.get("request", "")
        pending = await self._pending(request_id)
        if pending is None:
            return message(400, "This authorization request is unknown, finished or expired.")
        secret = str(pending.fields["csrf"])
        sent = form.get("csrf", "")
        cookie = request.cookies.get(cookie_name(request_id), "")
        if not (hmac.compare_digest(sent, secret) and hmac.compare_digest(cookie, secret)):
            return message(
                403, "This form was not sent from the consent page it belongs to; refused."
            )
        if form.get("action") == "deny":
            return await self._deny(request_id, pending)
        if form.get("action") != "approve":
            return message(400, "Choose Approve or Deny.")
        return await self._approve(request_id, pending, form, scopes)

    async def _pending(self, request_id: str) -> Entry | None:
        if not request_id or len(request_id) > 100:
            return None
        found: Entry | None = await anyio.to_thread.run_sync(self.state.get, "request", request_id)
        if found is None or found.fields.get("done"):
            return None
        if float(found.fields["expires_at"]) <= self.clock():
            return None
        if int(found.fields["attempts"]) >= MAX_ATTEMPTS:
            return None
        return found

    async def _finish(self, request_id: str, pending: Entry) -> bool:
        done = {**pending.fields, "done": True}
        ok: bool = await anyio.to_thread.run_sync(
            self.state.replace, "request", request_id, pending, done
        )
        return ok

    def _redirect(self, fields: dict[str, Any], **params: str | None) -> Response:
        url = construct_redirect_uri(
            fields["redirect_uri"], **params, state=fields.get("state"), iss=self.base()
        )
        return RedirectResponse(url, status_code=303, headers=_HEADERS)

    async def _deny(self, request_id: str, pending: Entry) -> Response:
        if not await self._finish(request_id, pending):
            return message(409, "This authorization request was answered meanwhile.")
        return self._redirect(
            pending.fields, error="access_denied", error_description="the user denied the request"
        )

    async def _approve(
        self, request_id: str, pending: Entry, form: dict[str, str], chosen: list[str]
    ) -> Response:
        counted = {**pending.fields, "attempts": int(pending.fields["attempts"]) + 1}
        if not await anyio.to_thread.run_sync(
            self.state.replace, "request", request_id, pending, counted
        ):
            return message(409, "This authorization request changed meanwhile; reload the page.")
        pending = Entry(pending.name, pending.version + 1, counted)
        try:
            grant = await self._grant(pending.fields, form, chosen)
        except _Retry as exc:
            if counted["attempts"] >= MAX_ATTEMPTS:
                return message(
                    400,
                    "Too many attempts: this authorization request is closed. "
                    "Start again from your application.",
                )
            return self._page(request_id, counted, error=str(exc), form=form, status=400)
        if not await self._finish(request_id, pending):
            return message(409, "This authorization request was answered meanwhile.")
        code = await self.provider.approve(pending.fields, grant)
        log.info(
            "OAuth: %s approved client %s (%s)",
            grant["account"],
            pending.fields["client_id"],
            " ".join(grant["scopes"]),
        )
        return self._redirect(pending.fields, code=code)

    async def _grant(
        self, fields: dict[str, Any], form: dict[str, str], chosen: list[str]
    ) -> dict[str, Any]:
        """The grant the form asks for, or _Retry with what is wrong."""
        token = form.get("token", "").strip()
        account = (
            await anyio.to_thread.run_sync(self.accounts.authenticate, token) if token else None
        )
        if account is None:
            raise _Retry(
                "That token was not accepted. Paste the token `memdir server user add` gave you."
            )
        scopes = close_scopes(set(chosen) & set(fields["scopes"]))
        if not scopes:
            raise _Retry("Choose at least one permission (or Deny).")
        project = form.get("project", "").strip() or None
        team = form.get("team", "").strip() or None
        if project is not None:
            try:
                _PROJECT.validate_python(project)
            except ValidationError:
                raise _Retry(
                    "A project id is 8 to 128 letters, digits, '-' or '_', starting with a "
                    "letter or digit (see `memdir project`)."
                ) from None
        if team is not None:
            if project is None:
                raise _Retry("A team's notes are a project's: give the project id too.")
            try:
                shown = await anyio.to_thread.run_sync(
                    lambda: self.teams.show(account, team, history=False)
                )
            except (Rejection, MemdirError) as exc:
                raise _Retry(f"Team {team!r}: {getattr(exc, 'message', str(exc))}") from None
            if shown.you not in WRITERS and ({"write", "delete"} & set(scopes)):
                raise _Retry(
                    f"You are a {shown.you} of team {team!r}: readers cannot write or delete its "
                    "notes. Untick write and delete, or choose another team."
                )
        # The grant stands only while the account's token is this one (`MemdirProvider`).
        return {
            "account": account,
            "token_sha256": token_digest(token),
            "scopes": scopes,
            "project": project,
            "team": team,
        }

    def _page(
        self,
        request_id: str,
        fields: dict[str, Any],
        *,
        error: str | None,
        form: dict[str, str],
        status: int = 200,
    ) -> Response:
        e = html.escape
        client_id = str(fields["client_id"])
        if fields["from_document"]:
            source = f"metadata published at {e(urlsplit(client_id).hostname or client_id)}"
        else:
            source = "registered dynamically (unverified name)"
        name = e(fields.get("client_name") or client_id)
        redirect_host = e(urlsplit(str(fields["redirect_uri"])).netloc)
        boxes = "".join(
            f'<label><input type="checkbox" name="scope" value="{s}" checked> '
            f"<b>{s}</b>: {_DESCRIPTIONS[s]}</label><br>"
            for s in fields["scopes"]
        )
        problem = f'<p class="error" role="alert">{e(error)}</p>' if error else ""
        body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorize {name} — memdir</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font:16px system-ui,sans-serif;max-width:36em;margin:2em auto;padding:0 1em}}
.error{{color:#a00;font-weight:bold}} input[type=text],input[type=password]{{width:100%}}
.muted{{color:#555}}</style></head><body>
<h1>Authorize {name}</h1>
<p><b>{name}</b> <span class="muted">({source})</span> asks to use your memdir memory
through <code>{e(self.base())}/mcp</code>. You will be sent back to <b>{redirect_host}</b>.</p>
{problem}
<form method="post" action="{e(self.base())}/oauth/consent">
<input type="hidden" name="request" value="{e(request_id)}">
<input type="hidden" name="csrf" value="{e(str(fields["csrf"]))}">
<fieldset><legend>Permissions</legend>{boxes}</fieldset>
<p><label>Your memdir sync token<br>
<input type="password" name="token" autocomplete="off" required></label></p>
<p><label>Project id (optional; empty: only your user notes)<br>
<input type="text" name="project" value="{e(form.get("project", ""))}"></label></p>
<p><label>Team (optional: the team whose shared notes the project is)<br>
<input type="text" name="team" value="{e(form.get("team", ""))}"></label></p>
<p><button type="submit" name="action" value="approve">Approve</button>
<button type="submit" name="action" value="deny" formnovalidate>Deny</button></p>
</form></body></html>"""
        response = HTMLResponse(body, status_code=status, headers=self._headers(fields))
        response.set_cookie(
            cookie_name(request_id),
            str(fields["csrf"]),
            max_age=600,
            path=(urlsplit(self.base()).path or "") + "/oauth/consent",
            secure=self.base().startswith("https://"),
            httponly=True,
            samesite="strict",
        )
        return response

    def _headers(self, fields: dict[str, Any]) -> dict[str, str]:
        # Browsers apply form-action to the redirect that follows the POST too.
        target = origin_of(str(fields["redirect_uri"]))
        return {
            **_HEADERS,
            "Content-Security-Policy": (
                "default-src 'none'; style-src 'unsafe-inline'; "
                f"form-action 'self' {target}; frame-ancestors 'none'; base-uri 'none'"
            ),
        }


_HEADERS = {
    "Cache-Control": "no-store",
    "Pragma": "no-cache",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


def message(status: int, text: str, extra: dict[str, str] | None = None) -> Response:
    """A page that only says `text` (with `extra` headers)."""
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>memdir</title>'
        f"</head><body><p>{html.escape(text)}</p></body></html>"
    )
    headers = {
        **_HEADERS,
        "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
        **(extra or {}),
    }
    return HTMLResponse(body, status_code=status, headers=headers)
