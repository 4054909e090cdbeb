"""CLI commands about finding notes: search, retrieve, reindex."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, print_columns, progress_bar
from memdir.core.vocab import Scope, SearchMethod, SearchMode, choices

if TYPE_CHECKING:
    from memdir import Memory

__all__ = ["reindex", "retrieve", "search"]

_SCOPES = click.Choice(choices(Scope))
_MODES = click.Choice(choices(SearchMode))
_METHODS = click.Choice(choices(SearchMethod))


def _memory() -> Memory:
    memory: Memory = click.get_current_context().obj.memory()
    return memory


def _query_options(func: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(
        [
            click.option(
                "--mode",
                type=_MODES,
                default=SearchMode.ANY.value,
                show_default=True,
                help="Match any word, all words, or the exact phrase.",
            ),
            click.option(
                "--limit",
                type=click.IntRange(1, 1000),
                default=10,
                show_default=True,
                help="At most this many results.",
            ),
            click.option("--scope", type=_SCOPES, default=None, help="Search only this scope."),
            click.option(
                "--method",
                type=_METHODS,
                default=SearchMethod.HYBRID.value,
                show_default=True,
                help="Ranking: hybrid (words and meaning), lexical or vector.",
            ),
        ]
    ):
        func = option(func)
    return func


@click.command()
@click.argument("query")
@_query_options
@json_option
def search(
    query: str, mode: str, limit: int, scope: str | None, method: str, as_json: bool
) -> None:
    """Find notes by words and meaning; one line per note with its best snippet."""
    hits = _memory().search(query, limit=limit, mode=mode, scope=scope, method=method)
    if as_json:
        emit_json(hits)
        return
    if not hits:
        console.print("no matching notes")
        return
    if hits[0].weak:
        console.print("no good match: the closest notes may not be what you are looking for")
    # Ids whole (never wrapped: they are copied into the next command); text shrinks.
    rows = []
    for h in hits:
        summary = h.summary + (f" (superseded by {h.superseded_by})" if h.superseded_by else "")
        rows.append((f"{h.score:.3f}", h.note_id, summary, h.snippet))
    print_columns(("score", "id", "summary", "snippet"), rows, flexible=(2, 3))


@click.command()
@click.argument("query")
@_query_options
@json_option
def retrieve(
    query: str, mode: str, limit: int, scope: str | None, method: str, as_json: bool
) -> None:
    """Find chunks of notes, with revision, chunk hash and byte offsets in the file."""
    chunks = _memory().index.retrieve(query, limit=limit, mode=mode, scope=scope, method=method)
    if as_json:
        emit_json(chunks)
        return
    if not chunks:
        console.print("no matching chunks")
        return
    if chunks[0].weak:
        console.print("no good match: the closest passages may not be what you are looking for")
    for c in chunks:
        console.print(
            f"[bold]{c.note_id}[/] score {c.score:.3f} · bytes {c.start}–{c.end} · "
            f"rev {c.revision[:12]} · {escape(c.source)}"
        )
        console.print(c.text, markup=False)
        console.print()


@click.command()
@json_option
def reindex(as_json: bool) -> None:
    """Rebuild the search index from the note files (and embed every chunk)."""
    memory = _memory()
    with progress_bar(not as_json) as progress:
        stats = memory.index.reindex(progress=progress)
    if as_json:
        emit_json(stats)
        return
    embedder = stats.embedder or "none (lexical search only)"
    console.print(
        f"indexed {stats.notes} notes in {stats.chunks} chunks; embedded {stats.embedded} "
        f"new chunks with {embedder} in {stats.seconds:.1f} s"
    )
