"""memdir's outbound HTTP rules: which endpoints may be called, retry timing, safe error text.

Shared by the embedding and the chat clients: remote endpoints must use HTTPS, plain
HTTP goes to loopback only (decided from the URL as written, nothing is resolved),
URLs carry no credentials, and an API key never appears in an error message.

`post_json` also bounds what one call may cost: the answer is streamed and refused as
soon as it passes the caller's size cap (an error answer is read to 64 KiB at most), and
the whole call — connecting, reading, every retry and every wait between them — ends by
one `Deadline`, with a message naming the endpoint, the deadline and the setting that
changes it.
"""

from __future__ import annotations

import email.utils
import ipaddress
import logging
import math
import os
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

# httpx is imported where a request is made: the config loader checks URLs with
# `is_loopback` on every start, which must not pay for the HTTP stack.

__all__ = [
    "Deadline",
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
#: How much of an error answer is read (for its message); the rest is left unread.
_ERROR_BYTES = 64 << 10
#: How much longer than the deadline one request's own timeouts run: the caller stops
#: waiting at the deadline, the abandoned request ends by itself soon after.
_GRACE = 0.5
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


@dataclass(frozen=True, slots=True)
class Deadline:
    """When a call must be over: `seconds` after the deadline was made, by `clock`.

    `setting` names the config key that changes `seconds` (None: none does); error
    messages say it, so that a user who needs longer knows what to set.
    """

    seconds: float
    setting: str | None = None
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    #: The `clock` reading at which the deadline passes.
    at: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        seconds = self.seconds
        if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"a deadline must be a positive number of seconds, not {seconds!r}")
        object.__setattr__(self, "at", self.clock() + seconds)

    @classmethod
    def start(
        cls,
        seconds: float,
        setting: str | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> Deadline:
        """A deadline `seconds` from now; ValueError unless `seconds` is positive and finite."""
        return cls(seconds, setting, clock)

    def remaining(self) -> float:
        """Seconds left (0 or less: passed)."""
        return self.at - self.clock()

    def describe(self) -> str:
        """`the 2 s deadline (llm.deadlineSeconds sets it)`, for messages."""
        where = f" ({self.setting} sets it)" if self.setting else ""
        return f"the {self.seconds:g} s deadline{where}"


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
    deadline: Deadline,
    max_bytes: int,
    check: Callable[[int, str], None] | None = None,
) -> httpx.Response:
    """POST `body` as JSON with a bearer key and bounded retries; the 2xx response, read.

    Retries only connection errors, timeouts and `RETRY_STATUSES` (429 honours
    Retry-After); redirects are refused. `check(status, detail)` sees every other
    error answer first and may raise to stop at once. The answer is streamed: one larger
    than `max_bytes` (declared or as it arrives) is refused once the cap is passed, and
    not retried. Everything, waits included, ends by `deadline`: a wait that would pass
    it is not started, and a request still running at it is abandoned.
    """
    import httpx

    headers = {"Accept-Encoding": "identity"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    attempt = 0
    last: str | None = None
    while True:
        wait: float | None = None
        remaining = deadline.remaining()
        if remaining <= 0:
            raise RequestFailed(_late(what, url, deadline, attempt, last, running=False))
        request = client.build_request(
            "POST", url, json=body, headers=headers, timeout=_bounded(client.timeout, remaining)
        )
        outcome = _run(client, request, max_bytes, remaining)
        if outcome is None:  # still running at the deadline: abandoned
            raise RequestFailed(_late(what, url, deadline, attempt + 1, last, running=True))
        if outcome.error is not None:
            exc = outcome.error
            if not isinstance(exc, httpx.HTTPError):
                raise exc
            retryable = isinstance(
                exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError
            )
            failure = f"{type(exc).__name__}: {exc}"
        elif outcome.too_large:
            raise RequestFailed(
                redact_key(
                    f"{what} request to {url}: the answer is larger than {_size(max_bytes)}, "
                    "the most memdir reads from this endpoint; it was refused without "
                    "reading the rest",
                    key,
                )
            )
        else:
            status = outcome.status
            response = httpx.Response(
                status, headers=outcome.headers, content=outcome.content, request=request
            )
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
                wait = retry_after(outcome.headers.get("retry-after"))
        # Raised here, outside any except clause, so no httpx exception is chained.
        failure = redact_key(failure, key)
        last = failure
        if not retryable or attempt >= max_retries:
            tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
            raise RequestFailed(f"{what} request to {url} failed ({tries}): {failure}")
        delay = wait if wait is not None else backoff(attempt)
        left = deadline.remaining()
        if delay >= left:
            asked = "the endpoint asked to wait" if wait is not None else "the next retry is due in"
            raise RequestFailed(
                f"{what} request to {url} stopped before {deadline.describe()}: {asked} "
                f"{delay:.1f} s and {max(left, 0.0):.1f} s are left "
                f"({attempt + 1} attempt{'s' if attempt else ''}; last: {failure})"
            )
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


def _late(
    what: str, url: httpx.URL, deadline: Deadline, attempts: int, last: str | None, *, running: bool
) -> str:
    """The message of a call that reached its deadline after `attempts` requests, the last
    one still `running` (or ended by `last`, the failure already redacted)."""
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    if running:
        how = f"{tries}, the last still unanswered"
        if last is not None:
            how += f"; before it: {last}"
    else:
        how = f"{tries}; last: {last}"
    return f"{what} request to {url} got no complete answer within {deadline.describe()} ({how})"


def _bounded(timeout: httpx.Timeout, remaining: float) -> httpx.Timeout:
    """The client's timeouts, none longer than `remaining` (plus a grace the caller
    does not wait for)."""
    import httpx

    cap = remaining + _GRACE

    def limit(value: float | None) -> float:
        return cap if value is None else min(value, cap)

    return httpx.Timeout(
        connect=limit(timeout.connect),
        read=limit(timeout.read),
        write=limit(timeout.write),
        pool=limit(timeout.pool),
    )


@dataclass
class _Outcome:
    """What one request came to: an answer read (within its cap), too large, or an error."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    content: bytes = b""
    too_large: bool = False
    error: Exception | None = None


def _run(
    client: httpx.Client, request: httpx.Request, max_bytes: int, seconds: float
) -> _Outcome | None:
    """`request` sent and its answer read in a worker thread; None when it is still
    running after `seconds` (it is told to stop, and its own timeouts end it soon)."""
    outcome = _Outcome()
    stop = threading.Event()
    worker = threading.Thread(
        target=_receive,
        args=(client, request, max_bytes, stop, outcome),
        name="memdir-http",
        daemon=True,
    )
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        stop.set()
        return None
    return outcome


def _receive(
    client: httpx.Client,
    request: httpx.Request,
    max_bytes: int,
    stop: threading.Event,
    out: _Outcome,
) -> None:
    """Send `request` and read its answer into `out`: at most `max_bytes` of a 2xx answer
    (more: `too_large`), at most `_ERROR_BYTES` of any other. Runs in the worker thread."""
    try:
        response = client.send(request, stream=True)
    except Exception as exc:  # handed to the caller's thread, which decides
        out.error = exc
        return
    try:
        ok = 200 <= response.status_code < 300
        limit = max_bytes if ok else _ERROR_BYTES
        out.status = response.status_code
        out.headers = {
            name: value
            for name, value in response.headers.items()
            if name.lower() in ("content-type", "retry-after")
        }
        declared = response.headers.get("content-length", "")
        if ok and declared.isdigit() and int(declared) > limit:
            out.too_large = True
            return
        parts: list[bytes] = []
        size = 0
        for piece in response.iter_bytes():
            if stop.is_set():
                return
            if size + len(piece) > limit:
                if ok:
                    out.too_large = True
                    return
                parts.append(piece[: limit - size])
                break
            parts.append(piece)
            size += len(piece)
        out.content = b"".join(parts)
    except Exception as exc:
        out.error = exc
    finally:
        response.close()


def _size(count: int) -> str:
    """`4 MiB`, `64 KiB` or `100 bytes`."""
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if count >= 1 << shift and count % (1 << shift) == 0:
            return f"{count >> shift} {unit}"
    return f"{count} bytes"
