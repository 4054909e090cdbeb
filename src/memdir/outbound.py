"""memdir's outbound HTTP rules: which endpoints may be called, retry timing, safe error text.

Shared by the embedding and the chat clients: remote endpoints must use HTTPS, plain
HTTP goes to loopback only (decided from the URL as written, nothing is resolved),
URLs carry no credentials, and an API key never appears in an error message.
"""

from __future__ import annotations

import email.utils
import ipaddress
import logging
import math
import os
import random
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

# httpx is imported where a request is made: the config loader checks URLs with
# `is_loopback` on every start, which must not pay for the HTTP stack.

__all__ = [
    "RequestFailed",
    "api_key",
    "backoff",
    "detail",
    "endpoint",
    "is_loopback",
    "post_json",
    "redact_key",
    "retry_after",
]

log = logging.getLogger(__name__)

#: Statuses worth another try: rate limiting and transient server errors.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_RETRY_AFTER_CAP = 30.0
_BACKOFF_BASE = 0.5
_BACKOFF_CAP = 8.0
_DETAIL_CHARS = 200
#: An API key is printable ASCII without spaces: anything else could split a header.
_TOKEN = re.compile(r"[\x21-\x7e]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def endpoint(base_url: str, suffix: str, *, what: str, key_setting: str) -> tuple[httpx.URL, bool]:
    """`base_url` + `/suffix` and whether it is loopback; ValueError saying what is wrong.

    httpx parses the URL here, so the host checked is the host httpx will connect to.
    """
    import httpx

    try:
        url = httpx.URL(base_url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise ValueError(f"the {what} endpoint URL is not valid: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"the {what} endpoint URL must start with https:// or http://")
    if url.userinfo:
        raise ValueError(
            f"the {what} endpoint URL must not carry credentials; name the variable holding "
            f"the key in {key_setting}"
        )
    if url.query or url.fragment:
        raise ValueError(f"the {what} endpoint URL must not have a query or fragment")
    loopback = is_loopback(url.host)
    if url.scheme == "http" and not loopback:
        raise ValueError(
            f"plain HTTP is allowed only to loopback (localhost, 127.0.0.0/8, ::1); "
            f"use https:// for {url.host}"
        )
    return url.copy_with(path=url.path.rstrip("/") + "/" + suffix), loopback


def is_loopback(host: str) -> bool:
    """Whether `host`, as written, is a loopback name or address (nothing is resolved)."""
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    # For IPv6 this is ::1 alone; IPv4-mapped forms are refused rather than unpacked.
    return address.is_loopback


def retry_after(value: str | None, *, cap: float = _RETRY_AFTER_CAP) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), up to `cap`."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), cap)


def backoff(attempt: int) -> float:
    """Exponential backoff with jitter: half the step fixed, half random."""
    step = min(_BACKOFF_CAP, _BACKOFF_BASE * 2.0**attempt)
    return step / 2 + random.uniform(0, step / 2)


def detail(response: httpx.Response, key: str | None) -> str:
    """A short, single-line excerpt of the server's error message, or nothing."""
    import httpx

    try:
        response.read()
        payload: Any = response.json()
    except (ValueError, httpx.HTTPError):
        payload = None
    message: Any = None
    if isinstance(payload, dict):
        error = payload.get("error", payload.get("message", payload.get("detail")))
        message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str):
        try:
            message = response.text
        except (ValueError, httpx.HTTPError):
            return ""
    text = _CONTROL.sub(" ", redact_key(message, key)).strip()
    if not text:
        return ""
    if len(text) > _DETAIL_CHARS:
        text = text[: _DETAIL_CHARS - 1] + "…"
    return f": {text}"


def redact_key(text: str, key: str | None) -> str:
    """`text` with every occurrence of the API key replaced."""
    return text.replace(key, "[REDACTED]") if key else text


def api_key(variable: str | None, setting: str) -> str | None:
    """The key held by the environment variable named `variable`; ValueError if unusable.

    The message names the variable and the setting that names it, never a value.
    """
    if variable is None:
        return None
    key = os.environ.get(variable)
    if not key:
        raise ValueError(f"the environment variable {variable} ({setting}) is not set")
    if not _TOKEN.fullmatch(key):
        raise ValueError(
            f"the environment variable {variable} does not hold a usable API key "
            "(spaces, line breaks or non-ASCII characters)"
        )
    return key


class RequestFailed(Exception):
    """A request failed after the bounded retries, or was answered with a redirect.

    Callers re-raise it as their own error outside their except clause: the message never
    holds the key, and no httpx exception (which holds the request headers) is chained.
    """


def post_json(
    client: httpx.Client,
    url: httpx.URL,
    body: dict[str, Any],
    *,
    key: str | None,
    what: str,
    redirect_hint: str,
    max_retries: int,
    sleep: Callable[[float], None],
    check: Callable[[int, str], None] | None = None,
) -> httpx.Response:
    """POST `body` as JSON with a bearer key and bounded retries; the 2xx response.

    Retries only connection errors, timeouts and `RETRY_STATUSES` (429 honours
    Retry-After); redirects are refused. `check(status, detail)` sees every other
    error answer first and may raise to stop at once.
    """
    import httpx

    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    attempt = 0
    while True:
        wait: float | None = None
        try:
            response = client.post(url, json=body, headers=headers)
        except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            failure, retryable = f"{type(exc).__name__}: {exc}", True
        except httpx.HTTPError as exc:
            failure, retryable = f"{type(exc).__name__}: {exc}", False
        else:
            status = response.status_code
            if 200 <= status < 300:
                return response
            if 300 <= status < 400:
                raise RequestFailed(
                    f"{url} answered HTTP {status}, a redirect; redirects are refused: "
                    f"set the endpoint's final address as {redirect_hint}"
                )
            info = detail(response, key)
            if check is not None:
                check(status, info)
            failure, retryable = f"HTTP {status}{info}", status in RETRY_STATUSES
            if status == 429:
                wait = retry_after(response.headers.get("Retry-After"))
        # Raised here, outside the except clauses, so no httpx exception is chained.
        failure = redact_key(failure, key)
        if not retryable or attempt >= max_retries:
            tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
            raise RequestFailed(f"{what} request to {url} failed ({tries}): {failure}")
        delay = wait if wait is not None else backoff(attempt)
        log.warning(
            "%s request to %s failed (%s); retry %d of %d in %.1f s",
            what,
            url,
            failure,
            attempt + 1,
            max_retries,
            delay,
        )
        sleep(delay)
        attempt += 1
