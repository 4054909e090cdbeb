"""What a query did that its hits do not say, and where index-building progress goes.

A caller that wants to know which method a search actually ran (hybrid, or lexical
because vectors are still being computed) or to watch the first index being built
wraps its `Memory` call::

    with observing(progress=show) as report:
        hits = memory.search("deploy")
    report.method          # SearchMethod.LEXICAL while vectors are behind

Both travel in context variables, so the `Memory` API keeps its signatures and a
call in another thread (or another request of an MCP server) is never mixed in.
`progress` receives ("index", done, total) while a scope's index is refreshed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from memdir.core.vocab import SearchMethod

__all__ = ["QueryReport", "current_progress", "observing", "record"]

Progress = Callable[[str, int, int], None]


@dataclass(slots=True)
class QueryReport:
    """What the queries of one `observing` block did (the last query wins)."""

    #: The method the query ran (None: no query ran in the block).
    method: SearchMethod | None = None
    #: Chunks with a vector and chunks in all, when vectors were behind (else None).
    vectors: tuple[int, int] | None = None


_REPORT: ContextVar[QueryReport | None] = ContextVar("memdir_query_report", default=None)
_PROGRESS: ContextVar[Progress | None] = ContextVar("memdir_index_progress", default=None)


@contextmanager
def observing(progress: Progress | None = None) -> Iterator[QueryReport]:
    """Collect what the queries in the block did; send index-building progress to `progress`."""
    report = QueryReport()
    token = _REPORT.set(report)
    progress_token = _PROGRESS.set(progress)
    try:
        yield report
    finally:
        _PROGRESS.reset(progress_token)
        _REPORT.reset(token)


_KEEP: tuple[int, int] | None = (-1, -1)


def record(method: SearchMethod, vectors: tuple[int, int] | None = _KEEP) -> None:
    """Note the method a query ran (and, if given, how far the vectors were) for an
    observer, if any."""
    report = _REPORT.get()
    if report is not None:
        report.method = method
        if vectors is not _KEEP:
            report.vectors = vectors


def current_progress() -> Progress | None:
    """The progress callback of the enclosing `observing` block, if any."""
    return _PROGRESS.get()
