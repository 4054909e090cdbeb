"""The one error the sync server's rules raise: a refusal carrying its HTTP status and code."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Rejection"]


class Rejection(Exception):
    """Raised when the rules refuse a request; `status` and `code` are the HTTP answer."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        ids: Iterable[str] = (),
        version: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.ids = sorted(ids)
        self.version = version
