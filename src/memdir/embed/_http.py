"""An OpenAI-compatible HTTP embedding endpoint, held to the transport rules of SPEC §3.

The rules: HTTPS for remote hosts, plain HTTP only to a loopback host written literally
in the URL (``localhost``, 127.0.0.0/8, ``::1``; nothing is resolved); redirects are
refused; a request is retried at most `max_retries` times and only after a connection
error or timeout, HTTP 429 (honouring ``Retry-After`` up to 30 s) or HTTP 500, 502, 503
and 504. The API key is read from the environment variable named by `api_key_env` for
each request and is never stored, logged or put in an exception message. One batch's
request, retries and waits included, ends by `deadline` seconds (120 by default), and an
answer larger than 1 MiB plus 256 KiB per text is refused as soon as it passes that size
(`memdir.outbound.post_json`).
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import httpx
import numpy as np

from memdir.embed._base import (
    EmbedderInfo,
    EmbedderUnavailable,
    EmbeddingFailed,
    Matrix,
    Vector,
    check_texts,
    normalise_rows,
)
from memdir.outbound import Deadline, RequestFailed, api_key, endpoint, post_json
from memdir.outbound import detail as _detail

__all__ = ["HttpEmbedder"]

log = logging.getLogger(__name__)

# Upper case only, so that a key pasted where its variable's name belongs is refused
# before it could be echoed in a "variable not set" message.
_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,127}")
#: The largest answer read for a batch: a base plus room for one long vector per text
#: (a 3,072-dimension vector is about 60 KiB of JSON).
_MAX_BYTES_BASE = 1 << 20
_MAX_BYTES_PER_TEXT = 256 << 10
# Visible ASCII: a bearer token that h11 will not reject (with the value in its message).


class HttpEmbedder:
    """POST ``{base_url}/embeddings`` with ``{"model", "input": [...]}``, `batch_size` texts each.

    The vector size is learned from the first response unless `dimensions` is given,
    in which case every response is checked against it. `info` on an embedder that has
    not yet learned its size makes one small request (see `check`).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None,
        batch_size: int = 64,
        timeout: float = 30,
        max_retries: int = 3,
        dimensions: int | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        deadline: float = 120,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise EmbedderUnavailable("the embedding endpoint needs a model name")
        if api_key_env is not None and not _ENV_NAME.fullmatch(api_key_env):
            # Not echoed: the usual mistake is the key itself in place of the name.
            raise EmbedderUnavailable(
                "api_key_env must be the name of an environment variable holding the key "
                "(upper case, e.g. OPENAI_API_KEY), never the key itself"
            )
        if batch_size < 1:
            raise EmbedderUnavailable(f"batch_size must be at least 1, not {batch_size}")
        if not timeout > 0:
            raise EmbedderUnavailable(f"timeout must be positive, not {timeout}")
        if not (math.isfinite(deadline) and deadline > 0):
            raise EmbedderUnavailable(f"deadline must be positive, not {deadline}")
        if max_retries < 0:
            raise EmbedderUnavailable(f"max_retries must be 0 or more, not {max_retries}")
        if dimensions is not None and dimensions < 1:
            raise EmbedderUnavailable(f"dimensions must be at least 1, not {dimensions}")
        self._endpoint, loopback = _endpoint_for(base_url)
        self._model = model
        self._api_key_env = api_key_env
        self._batch_size = batch_size
        self._max_retries = max_retries
        self._dim = dimensions
        self._sleep = sleep
        self._deadline = float(deadline)
        # Proxy settings from the environment are ignored for loopback: they would send
        # plain HTTP (and the key) off the machine.
        self._client = httpx.Client(
            transport=transport,
            timeout=timeout,
            follow_redirects=False,
            trust_env=not loopback,
        )

    @property
    def info(self) -> EmbedderInfo:
        """Identity ``http:{model}@{model}@{host}/{dim}``; an unknown size is learned first."""
        if self._dim is None:
            self.check()
        assert self._dim is not None
        return EmbedderInfo(
            name=f"http:{self._model}",
            version=f"{self._model}@{self._endpoint.host}",
            dim=self._dim,
        )

    def check(self) -> EmbedderInfo:
        """Embed one short text: proves the endpoint works and learns the vector size."""
        self._request(["memdir embedder check"])
        return self.info

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        """One row per text, in order, `batch_size` texts per request.

        ``[]`` makes no request once the size is known (from `dimensions` or a response).
        """
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.info.dim), dtype=np.float32)
        parts = [
            self._request(items[start : start + self._batch_size])
            for start in range(0, len(items), self._batch_size)
        ]
        matrix: Matrix = np.concatenate(parts) if len(parts) > 1 else parts[0]
        return matrix

    def embed_query(self, text: str) -> Vector:
        """A search query (OpenAI-style endpoints embed queries and documents alike)."""
        if not isinstance(text, str):
            raise TypeError(f"a query must be str, not {type(text).__name__}")
        row: Vector = self._request([text])[0]
        return row

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def __enter__(self) -> HttpEmbedder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"HttpEmbedder(endpoint={str(self._endpoint)!r}, model={self._model!r}, "
            f"api_key_env={self._api_key_env!r})"
        )

    def _api_key(self) -> str | None:
        try:
            return api_key(self._api_key_env, "api_key_env")
        except ValueError as exc:
            raise EmbedderUnavailable(str(exc)) from None

    def _request(self, batch: list[str]) -> Matrix:
        """Embed one batch, retrying within the rules; the key never leaves this frame."""
        key = self._api_key()
        try:
            response = post_json(
                self._client,
                self._endpoint,
                {"model": self._model, "input": batch},
                key=key,
                what="embedding",
                redirect_hint="the base URL",
                max_retries=self._max_retries,
                sleep=self._sleep,
                deadline=Deadline.start(self._deadline),
                max_bytes=_MAX_BYTES_BASE + len(batch) * _MAX_BYTES_PER_TEXT,
            )
        except RequestFailed as exc:
            failure = str(exc)
        else:
            return self._parse(response, len(batch), key)
        # Raised outside the except clause: nothing is chained to it, not even as context.
        raise EmbeddingFailed(failure)

    def _parse(self, response: httpx.Response, expected: int, key: str | None) -> Matrix:
        """The response's vectors in input order, checked and normalised."""
        source = f"the embedding endpoint {self._endpoint}"
        try:
            payload: Any = response.json()
        except ValueError:  # JSONDecodeError and UnicodeDecodeError
            raise EmbeddingFailed(
                f"{source} returned malformed JSON (HTTP {response.status_code})"
            ) from None
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise EmbeddingFailed(f"{source} returned no 'data' list{_detail(response, key)}")
        if len(data) != expected:
            raise EmbeddingFailed(f"{source} returned {len(data)} embeddings for {expected} texts")
        rows: list[list[float] | None] = [None] * expected
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            if type(index) is not int or not 0 <= index < expected or rows[index] is not None:
                raise EmbeddingFailed(f"{source} returned a missing, bad or repeated index")
            vector = item.get("embedding")
            if not isinstance(vector, list) or not all(type(v) in (int, float) for v in vector):
                raise EmbeddingFailed(
                    f"{source} returned an embedding that is not a list of numbers"
                )
            rows[index] = vector
        sizes = {len(row) for row in rows if row is not None}
        if len(sizes) != 1 or 0 in sizes:
            raise EmbeddingFailed(f"{source} returned embeddings of differing or zero length")
        (dim,) = sizes
        if self._dim is not None and dim != self._dim:
            raise EmbeddingFailed(
                f"{source} returned {dim}-dimensional vectors, expected {self._dim}"
            )
        matrix = normalise_rows(np.array(rows, dtype=np.float64), source)
        self._dim = dim
        return matrix


def _endpoint_for(base_url: str) -> tuple[httpx.URL, bool]:
    """The embeddings URL under `base_url` and whether it is loopback, or a refusal."""
    try:
        return endpoint(base_url, "embeddings", what="embedding", key_setting="api_key_env")
    except ValueError as exc:
        raise EmbedderUnavailable(str(exc)) from None
