"""CLI commands for the sync server: serve, user add/list/remove, admin-key, erase."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, fmt_ms
from memdir.core.vocab import StorageBackend, choices
from memdir.errors import InvalidInput, MemdirError, NotFound

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from memdir.server.accounts import Accounts
    from memdir.server.oauth import OAuthServer
    from memdir.server.ratelimit import Limiter
    from memdir.server.rules import SyncRules
    from memdir.server.storage.base import Storage

__all__ = ["server_group"]

P = ParamSpec("P")
R = TypeVar("R")

# The server stack (pydantic, FastAPI, uvicorn) is imported inside the commands: every
# other memdir command would pay for it at start-up.

_data_option = click.option(
    "--data",
    "data",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="The server's data directory: notes and accounts with the dir backend (with "
    "postgres or s3 the accounts live in the backend; an accounts.json here is copied in "
    "once).",
)
_backend_option = click.option(
    "--backend",
    type=click.Choice(choices(StorageBackend)),
    default=StorageBackend.DIR.value,
    envvar="MEMDIR_SERVER_BACKEND",
    show_envvar=True,
    show_default=True,
    help="Where notes are stored: the data directory, PostgreSQL (needs --dsn), or an "
    "S3-compatible object store (needs --s3-endpoint and --bucket).",
)
_dsn_option = click.option(
    "--dsn",
    envvar="MEMDIR_SERVER_DSN",
    default=None,
    show_envvar=True,
    help="PostgreSQL connection string for --backend postgres (never printed).",
)


def _s3_options(func: Callable[P, R]) -> Callable[P, R]:
    """--s3-endpoint, --bucket and --prefix for --backend s3. Its credentials come from the
    standard AWS environment variables or the shared credentials file, never from here."""
    func = click.option(
        "--prefix", default="", help="A key prefix in the bucket for --backend s3."
    )(func)
    func = click.option("--bucket", default=None, help="The bucket for --backend s3.")(func)
    return click.option(
        "--s3-endpoint",
        default=None,
        help="The S3-compatible endpoint URL for --backend s3 (credentials: AWS_ACCESS_KEY_ID "
        "and AWS_SECRET_ACCESS_KEY, or ~/.aws/credentials).",
    )(func)


_force_option = click.option(
    "--force", is_flag=True, help="Overwrite the output file if it exists."
)


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a server keeps its data: the data directory and the storage backend."""

    data: Path
    backend: str
    dsn: str | None
    s3_endpoint: str | None
    bucket: str | None
    prefix: str

    def storage(self) -> Storage:
        """The storage backend, opened."""
        from memdir.server.rules import S3Location, open_storage

        kind = StorageBackend(self.backend)
        s3 = (
            S3Location(self.s3_endpoint, self.bucket, self.prefix)
            if kind is StorageBackend.S3
            else None
        )
        return open_storage(kind, self.data, self.dsn, s3)

    @contextlib.contextmanager
    def accounts(self) -> Iterator[Accounts]:
        """The server's accounts: the data directory's file, or the backend's document."""
        from memdir.server.accounts import Accounts as FileAccounts
        from memdir.server.accounts import open_accounts

        if StorageBackend(self.backend) is StorageBackend.DIR:
            yield FileAccounts(self.data)
            return
        storage = self.storage()
        try:
            yield open_accounts(self.data, storage)
        finally:
            storage.close()


def _place_options(func: Callable[..., R]) -> Callable[..., R]:
    """--data, --backend, --dsn and the S3 options, handed to the command as `place`."""

    @functools.wraps(func)
    def command(
        *args: Any,
        data: Path,
        backend: str,
        dsn: str | None,
        s3_endpoint: str | None,
        bucket: str | None,
        prefix: str,
        **kwargs: Any,
    ) -> R:
        place = _Place(data, backend, dsn, s3_endpoint, bucket, prefix)
        return func(*args, place=place, **kwargs)

    return _data_option(_backend_option(_dsn_option(_s3_options(command))))


@click.group(name="server")
def server_group() -> None:
    """Run a memdir sync server and manage its accounts."""


@server_group.command()
@_place_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0: any free port; the ready line shows it).",
)
@click.option(
    "--rate-limit",
    type=click.IntRange(min=0),
    default=120,
    show_default=True,
    help="Requests per minute per account (0: no limit).",
)
@click.option(
    "--rate-burst",
    type=click.IntRange(min=1),
    default=30,
    show_default=True,
    help="Requests an account may make in a row before the rate limit applies.",
)
@click.option("--max-notes", type=click.IntRange(min=1), help="Live notes per scope [5000].")
@click.option("--max-changes", type=click.IntRange(min=1), help="Changes per commit [500].")
@click.option(
    "--max-body-bytes", type=click.IntRange(min=1), help="UTF-8 bytes per note body [131072]."
)
@click.option(
    "--max-response-bytes",
    type=click.IntRange(min=1),
    help="Bytes of note texts per snapshot response [16777216].",
)
@click.option(
    "--tombstone-days", type=click.IntRange(min=1), help="Days a deletion stays listed [90]."
)
@click.option(
    "--docs",
    is_flag=True,
    help="Also serve the API's description without a token (/openapi.json, /docs, /redoc).",
)
@click.option(
    "--mcp",
    "remote_mcp",
    is_flag=True,
    help="Also serve each account's and team's notes as remote MCP at /mcp, behind OAuth 2.1.",
)
@click.option(
    "--public-url",
    help="The https:// address clients reach this server at, through its TLS proxy (the "
    "OAuth issuer); default: the address it listens on, for loopback only.",
)
@click.option(
    "--oauth-allow-private-clients",
    is_flag=True,
    help="Fetch OAuth client metadata documents from loopback and private addresses too "
    "(testing; refused by default against server-side request forgery).",
)
@json_option
def serve(
    place: _Place,
    host: str,
    port: int,
    rate_limit: int,
    rate_burst: int,
    max_notes: int | None,
    max_changes: int | None,
    max_body_bytes: int | None,
    max_response_bytes: int | None,
    tombstone_days: int | None,
    docs: bool,
    remote_mcp: bool,
    public_url: str | None,
    oauth_allow_private_clients: bool,
    as_json: bool,
) -> None:
    """Serve the sync API until interrupted; prints one line when it is ready.

    The server speaks plain HTTP: beyond loopback, put a TLS-terminating proxy in front
    (a warning says so at start).
    """
    from memdir.files.atomic import ensure_private_dir
    from memdir.server.accounts import open_accounts
    from memdir.server.app import create_app, plain_http_warning
    from memdir.server.app import serve as run_server
    from memdir.server.ratelimit import BucketStore, RateLimiter, SharedRateLimiter
    from memdir.server.rules import SyncRules
    from memdir.sync.protocol import Quotas

    given = {
        "max_notes": max_notes,
        "max_changes": max_changes,
        "max_body_bytes": max_body_bytes,
        "max_response_bytes": max_response_bytes,
        "tombstone_days": tombstone_days,
    }
    quotas = Quotas.model_validate({k: v for k, v in given.items() if v is not None})
    warning = plain_http_warning(host)
    if warning is not None:
        click.echo(warning, err=True)
    public = _public_url(public_url, host) if remote_mcp else None
    ensure_private_dir(place.data)
    storage = place.storage()
    oauth: OAuthServer | None = None

    def ready(url: str) -> None:
        if oauth is not None and not public:
            oauth.base_url = url
        if as_json:  # one line, so a supervisor can read it like the plain one
            doc = {"listening": url, "backend": place.backend, "quotas": quotas.model_dump()}
            click.echo(json.dumps(doc))
        else:
            click.echo(f"memdir sync server listening on {url}")
        sys.stdout.flush()

    try:
        accounts = open_accounts(place.data, storage)
        rules = SyncRules(storage, quotas, known_user=accounts.exists)
        limiter: Limiter = RateLimiter(per_minute=rate_limit, burst=rate_burst)
        if isinstance(storage, BucketStore):  # PostgreSQL, S3: every replica shares them
            limiter = SharedRateLimiter(storage, per_minute=rate_limit, burst=rate_burst)
        routes: list[BaseRoute] = []
        lifespan = None
        if remote_mcp:
            oauth, routes, lifespan = _remote_mcp(
                place, storage, accounts, rules, limiter, oauth_allow_private_clients
            )
            if public:
                oauth.base_url = public
        app = create_app(rules, accounts, limiter, docs=docs, routes=routes, lifespan=lifespan)
        run_server(app, host, port, ready)
    finally:
        storage.close()


def _public_url(given: str | None, host: str) -> str:
    """The OAuth issuer's base URL: `--public-url` (https, or http on loopback), or for a
    loopback server its own address (filled in once the port is known: "")."""
    from memdir.outbound import endpoint

    if given is None:
        from memdir.outbound import is_loopback

        if not is_loopback(host):
            raise click.UsageError(
                "--mcp beyond loopback needs --public-url https://… (the address clients "
                "reach through the TLS proxy; OAuth tokens are bound to it)"
            )
        return ""
    try:
        url, _ = endpoint(given, "", what="public", key_setting="--public-url")
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--public-url") from None
    if url.path.strip("/"):
        raise click.BadParameter(
            "give the server's root address, without a path", param_hint="--public-url"
        )
    return str(url).rstrip("/")


def _remote_mcp(
    place: _Place,
    storage: Storage,
    accounts: Accounts,
    rules: SyncRules,
    limiter: Limiter,
    allow_private_clients: bool,
) -> tuple[OAuthServer, list[BaseRoute], Callable[[], AbstractAsyncContextManager[Any]]]:
    """The OAuth server, the routes of it and of `/mcp`, and the MCP session manager's
    lifespan, for `serve --mcp`."""
    from starlette.routing import Route

    from memdir.mcp.copies import WORKING_COPIES, sweep
    from memdir.mcp.remote import Mirrors, RemoteEndpoint
    from memdir.server.inprocess import rules_transport
    from memdir.server.oauth import OAuthServer

    oauth = OAuthServer(
        storage=storage,
        data_dir=place.data,
        accounts=accounts,
        teams=rules.teams,
        allow_private_clients=allow_private_clients,
        # Per client address (behind a proxy: one bucket for all, as the proxy's address).
        limit=limiter.check,
        limit_blocks=limiter.blocking,
    )
    copies = place.data / WORKING_COPIES
    # Copies of accounts erased or removed since (through any replica) go first; a
    # backend down at start leaves them to the next start (each is refused when used).
    try:
        sweep(copies, [account.name for account in accounts.users()], storage.is_erased)
    except MemdirError as exc:
        click.echo(f"memdir: the working copies were not swept: {exc}", err=True)
    mirrors = Mirrors(copies, lambda user: rules_transport(rules, user))
    endpoint = RemoteEndpoint(oauth, mirrors, limit=limiter.check, limit_blocks=limiter.blocking)
    return oauth, [*oauth.routes(), Route("/mcp", endpoint=endpoint)], endpoint.lifespan


@server_group.group(name="user")
def user_group() -> None:
    """Add, list and remove the server's accounts."""


@user_group.command(name="add")
@click.argument("name")
@_place_options
@click.option(
    "--token-out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Write the account's bearer token to this file, mode 0600 (it is never printed).",
)
@click.option("--rotate", is_flag=True, help="The user exists: issue a new token instead.")
@_force_option
@json_option
def user_add(
    name: str,
    place: _Place,
    token_out: Path,
    rotate: bool,
    force: bool,
    as_json: bool,
) -> None:
    """Add an account (or rotate its token); the token goes to --token-out only."""
    from memdir.files.atomic import check_private_target
    from memdir.server.accounts import write_secret

    check_private_target(token_out, force=force)
    with place.accounts() as accounts:
        token = accounts.add_user(name, rotate=rotate)
    write_secret(token_out, token, force=force)
    if as_json:
        emit_json({"user": name, "rotated": rotate, "token_file": str(token_out)})
        return
    verb = "issued a new token for" if rotate else "added user"
    console.print(f"{verb} {name}; token written to {token_out} (mode 0600)", markup=False)


@user_group.command(name="list")
@_place_options
@json_option
def user_list(
    place: _Place,
    as_json: bool,
) -> None:
    """List the accounts (names and when they were made; tokens are never stored)."""
    with place.accounts() as store:
        accounts = store.users()
    if as_json:
        emit_json([a.public() for a in accounts])
        return
    if not accounts:
        console.print("no users")
        return
    from rich.table import Table

    table = Table()
    table.add_column("user")
    table.add_column("created")
    for account in accounts:
        table.add_row(account.name, fmt_ms(account.created_at))
    console.print(table)


@user_group.command(name="remove")
@click.argument("name")
@_place_options
@json_option
def user_remove(
    name: str,
    place: _Place,
    as_json: bool,
) -> None:
    """Remove an account: its token stops working (its notes stay; see `server erase`)."""
    with place.accounts() as accounts:
        accounts.remove_user(name)
    if as_json:
        emit_json({"user": name, "removed": True})
        return
    console.print(f"removed user {name}; its notes stay until `memdir server erase {name}`")


@server_group.command(name="admin-key")
@_place_options
@click.option(
    "--key-out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Write the admin key to this file, mode 0600 (it is never printed).",
)
@_force_option
@json_option
def admin_key(
    place: _Place,
    key_out: Path,
    force: bool,
    as_json: bool,
) -> None:
    """Issue the admin key (for POST /v1/admin/erase); any previous key stops working."""
    from memdir.files.atomic import check_private_target
    from memdir.server.accounts import write_secret

    check_private_target(key_out, force=force)
    with place.accounts() as accounts:
        key = accounts.set_admin_key()
    write_secret(key_out, key, force=force)
    if as_json:
        emit_json({"key_file": str(key_out)})
        return
    console.print(f"admin key written to {key_out} (mode 0600)", markup=False)


@server_group.command(name="team")
@click.argument("name")
@_place_options
@json_option
def team_audit(
    name: str,
    place: _Place,
    as_json: bool,
) -> None:
    """Show team NAME as the server keeps it: members, revocations and every membership
    change (who, what, when; never content), checked entry by entry."""
    from memdir.cli.team import print_team
    from memdir.server.rejection import Rejection
    from memdir.server.rules import SyncRules

    storage = place.storage()
    try:
        state = SyncRules(storage).teams.audit(name)
    except Rejection as exc:
        raise (NotFound if exc.status == 404 else MemdirError)(exc.message) from None
    finally:
        storage.close()
    if as_json:
        history = [e.model_dump(mode="json") for e in state.history]
        members = dict(sorted(state.members.items()))
        emit_json(
            {"team": name, "members": members, "revoked": sorted(state.revoked), "history": history}
        )
        return
    print_team(f"team {name} (owner: {state.owner})", state.members, state.revoked, state.history)


@server_group.command()
@click.argument("user")
@_place_options
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
def erase(
    user: str,
    place: _Place,
    yes: bool,
    as_json: bool,
) -> None:
    """Erase an account's notes for good; the server refuses the account from then on."""
    from memdir.mcp.copies import WORKING_COPIES, forget_account
    from memdir.server.rules import SyncRules
    from memdir.server.storage.directory import validate_user

    validate_user(user)
    if not yes:
        if as_json:
            raise InvalidInput("erasing cannot be undone; pass --yes to confirm")
        click.confirm(f"Erase every note of {user} on this server for good?", abort=True)
    storage = place.storage()
    try:
        result = SyncRules(storage).erase(user)
    finally:
        storage.close()
    # And the remote MCP endpoint's working copies of it here (other replicas' data
    # directories lose theirs at their next start, or at the account's next call).
    forget_account(place.data / WORKING_COPIES, user)
    if as_json:
        emit_json({"user": result.user, "erased": result.erased})
        return
    console.print(f"erased {user}; the server refuses this account from now on", markup=False)
